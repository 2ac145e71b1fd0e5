// Test helpers for the frame layer: a sequence of frames of every type and
// shape, and decoding of a byte string fed in pieces (the split-point tests and
// the fuzzer compare the outcomes of different splits).

#ifndef TRANSPORT_TESTING_FRAME_TEST_UTIL_H_
#define TRANSPORT_TESTING_FRAME_TEST_UTIL_H_

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "transport/frame/frame.h"
#include "transport/frame/frame_collector.h"
#include "transport/frame/frame_decoder.h"
#include "transport/frame/http2_error.h"

namespace transport {
namespace testing {

// Valid in this order (a header block is followed by its CONTINUATIONs): every
// frame type, with and without padding, priority, ACK, END_STREAM, END_HEADERS;
// unknown setting ids, error codes and frame types; a PRIORITY on itself and a
// zero stream WINDOW_UPDATE (stream errors, decoding goes on). Starts with
// SETTINGS.
std::vector<Frame> SampleFrames();

// The frames, written with WriteFrame, as one string.
std::string Serialize(const std::vector<Frame>& frames);

// Everything a decode observably produced.
struct DecodeOutcome {
  std::vector<FrameEvent> events;  // Frame headers included.
  std::string pending;  // The unfinished DATA frame, if any, printed.
  Http2Error error;     // The last Decode's result.
  FrameDecodeError reason = FrameDecodeError::kOk;
  std::vector<std::string> violations;

  std::string ToString() const;
  friend bool operator==(const DecodeOutcome& a, const DecodeOutcome& b) {
    return a.events == b.events && a.pending == b.pending &&
           a.error == b.error && a.reason == b.reason &&
           a.violations == b.violations;
  }
};

// Copies `bytes` into one block and decodes it as Slices of that block cut at
// `splits` (ascending offsets; duplicates give empty pieces, which are fed
// too).
DecodeOutcome DecodeInPieces(
    std::string_view bytes, const std::vector<size_t>& splits,
    const FrameDecoder::Options& options = FrameDecoder::Options());

}  // namespace testing
}  // namespace transport

#endif  // TRANSPORT_TESTING_FRAME_TEST_UTIL_H_
