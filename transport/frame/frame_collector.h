// FrameCollector: a FrameListener that turns the decoder's callbacks back into
// Frame structs, in order, and checks the callback order FrameListener
// documents. For tests, fuzzers and tools; the hot path never builds Frame
// structs.
//
//   FrameCollector collector;
//   FrameDecoder decoder(&collector);
//   ASSERT_TRUE(decoder.Decode(bytes).ok());
//   EXPECT_EQ(collector.frames(), (std::vector<Frame>{PingFrame{false, 7}}));
//   EXPECT_TRUE(collector.violations().empty());
//
// DATA payloads are kept as the Slices the decoder handed over (no copy), so a
// test can check where they point. Padding lengths are recovered from the frame
// length.

#ifndef TRANSPORT_FRAME_FRAME_COLLECTOR_H_
#define TRANSPORT_FRAME_FRAME_COLLECTOR_H_

#include <cstdint>
#include <optional>
#include <ostream>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "transport/frame/frame.h"
#include "transport/frame/frame_decoder.h"
#include "transport/frame/http2_error.h"
#include "transport/slice/slice.h"

namespace transport {

struct StreamErrorEvent {
  Http2Error error;
  FrameDecodeError reason = FrameDecodeError::kOk;

  friend bool operator==(const StreamErrorEvent& a, const StreamErrorEvent& b) {
    return a.error == b.error && a.reason == b.reason;
  }
  friend bool operator!=(const StreamErrorEvent& a, const StreamErrorEvent& b) {
    return !(a == b);
  }
};

// What the collector records, in callback order: a frame header (only when
// record_headers), a complete frame, or a stream error.
using FrameEvent = std::variant<FrameHeader, Frame, StreamErrorEvent>;
std::ostream& operator<<(std::ostream& os, const FrameEvent& event);

class FrameCollector : public FrameListener {
 public:
  // record_headers: also record an OnFrameHeader event before each frame.
  explicit FrameCollector(bool record_headers = false)
      : record_headers_(record_headers) {}

  const std::vector<FrameEvent>& events() const { return events_; }
  // The complete frames only (no headers, no stream errors).
  std::vector<Frame> frames() const;
  // A DATA frame started but not ended (input stopped mid-frame), or nullptr.
  const DataFrame* pending_data() const {
    return in_data_ ? &pending_data_ : nullptr;
  }
  // Number of OnData calls so far.
  size_t data_pieces() const { return data_pieces_; }
  // Breaches of the documented callback order, one line each; empty when all is
  // well.
  const std::vector<std::string>& violations() const { return violations_; }
  // Every event, one per line (and the pending DATA frame), for test failure
  // output.
  std::string ToString() const;

  void Clear();

  // FrameListener.
  void OnFrameHeader(const FrameHeader& header) override;
  void OnDataStart(const FrameHeader& header) override;
  void OnData(uint32_t stream_id, Slice piece) override;
  void OnDataEnd(uint32_t stream_id, bool end_stream) override;
  void OnHeaders(const FrameHeader& header, const PriorityFields* priority,
                 std::string_view fragment) override;
  void OnPriority(uint32_t stream_id, const PriorityFields& priority) override;
  void OnRstStream(uint32_t stream_id, Http2ErrorCode code) override;
  void OnSettings(SettingsView settings) override;
  void OnSettingsAck() override;
  void OnPushPromise(const FrameHeader& header, uint32_t promised_stream_id,
                     std::string_view fragment) override;
  void OnPing(uint64_t opaque_data, bool ack) override;
  void OnGoAway(uint32_t last_stream_id, Http2ErrorCode code,
                std::string_view debug_data) override;
  void OnWindowUpdate(uint32_t stream_id, uint32_t increment) override;
  void OnContinuation(const FrameHeader& header,
                      std::string_view fragment) override;
  void OnUnknownFrame(const FrameHeader& header) override;
  void OnStreamError(const Http2Error& error, FrameDecodeError reason) override;

 private:
  // Checks that a frame of `type` follows its OnFrameHeader and ends it.
  void ExpectFrame(FrameType type, uint32_t stream_id);
  void ExpectFrameType(uint8_t type, uint32_t stream_id);
  void Violation(std::string what);
  void Add(Frame frame) { events_.emplace_back(std::move(frame)); }

  const bool record_headers_;
  std::vector<FrameEvent> events_;
  std::vector<std::string> violations_;
  // The header of the frame whose callbacks are due (OnFrameHeader seen).
  std::optional<FrameHeader> current_;
  bool in_data_ = false;
  DataFrame pending_data_;
  FrameHeader data_header_;
  size_t data_pieces_ = 0;
};

}  // namespace transport

#endif  // TRANSPORT_FRAME_FRAME_COLLECTOR_H_
