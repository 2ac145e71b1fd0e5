// Frame writers: each appends one frame, header and payload, to a SliceBuffer
// (the connection's output chain, later written with one writev).
//
// Copies. Frame headers and control payloads are written straight into the
// spare room of the output's current block (SliceBuffer::AppendUninitialized:
// no temporary). DATA payloads are appended as Slices: the message bytes are
// never copied. A header block (the HPACK encoder's string_view, valid only
// until its next call) is copied once, each chunk right behind its HEADERS /
// PUSH_PROMISE / CONTINUATION frame header; splitting takes views of the block,
// never a second copy.
//
// Limits are the caller's: stream ids < 2^31, increments in [1, 2^31-1],
// payloads no longer than the peer's SETTINGS_MAX_FRAME_SIZE (the writers that
// take `max_frame_size` split to fit it). The writers do not validate; they
// exist to write valid frames fast (and, for tests, frames with padding or of
// unknown types).

#ifndef TRANSPORT_FRAME_FRAME_WRITER_H_
#define TRANSPORT_FRAME_FRAME_WRITER_H_

#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <optional>
#include <string_view>
#include <vector>

#include "transport/frame/frame.h"
#include "transport/frame/http2_error.h"
#include "transport/frame/settings.h"
#include "transport/slice/slice.h"

namespace transport {

// Appends a 9-octet frame header.
void WriteFrameHeader(const FrameHeader& header, SliceBuffer* out);

// One DATA frame carrying `payload` (moved in as slices, no copy); the caller
// keeps payload.size() within the peer's max frame size and the flow-control
// windows.
void WriteData(uint32_t stream_id, SliceBuffer&& payload, bool end_stream,
               SliceBuffer* out);
void WriteData(uint32_t stream_id, Slice payload, bool end_stream,
               SliceBuffer* out);
// Takes the first `length` octets of *payload (length <= payload->size()) and
// writes them as DATA frames of at most `max_frame_size` octets each,
// END_STREAM on the last if `end_stream` (length 0 with end_stream: one empty
// DATA frame with END_STREAM; without: nothing). No copy, except for
// frames of at most kDataCopyThreshold octets: those are copied behind their
// frame header, since a separate piece costs more (refcounts, one more iovec
// for writev, one more segment for the kernel to copy) than the memcpy.
inline constexpr size_t kDataCopyThreshold = 256;
void WriteDataFrames(uint32_t stream_id, SliceBuffer* payload, size_t length,
                     uint32_t max_frame_size, bool end_stream,
                     SliceBuffer* out);
// DATA with the PADDED flag and `pad_length` zero octets of padding (tests, and
// senders that hide message sizes); payload.size() + pad_length + 1 must fit a
// frame.
void WritePaddedData(uint32_t stream_id, const SliceBuffer& payload,
                     uint8_t pad_length, bool end_stream, SliceBuffer* out);

// A complete header block as HEADERS followed by as many CONTINUATION frames as
// needed so that no payload exceeds `max_frame_size` (the peer's
// SETTINGS_MAX_FRAME_SIZE). END_STREAM goes on the HEADERS frame, END_HEADERS
// on the last frame.
void WriteHeaders(uint32_t stream_id, std::string_view block, bool end_stream,
                  uint32_t max_frame_size, SliceBuffer* out);
// The same with the optional PRIORITY fields and padding on the HEADERS frame
// (their 1 + 5 + pad_length octets count against max_frame_size; they must
// leave room).
void WriteHeaders(uint32_t stream_id, std::string_view block, bool end_stream,
                  uint32_t max_frame_size, const PriorityFields* priority,
                  std::optional<uint8_t> pad_length, SliceBuffer* out);
// PUSH_PROMISE (+ CONTINUATION) for a complete header block. A server of ours
// never pushes; this exists for tests and peers.
void WritePushPromise(uint32_t stream_id, uint32_t promised_stream_id,
                      std::string_view block, uint32_t max_frame_size,
                      std::optional<uint8_t> pad_length, SliceBuffer* out);
// A single CONTINUATION frame (tests; WriteHeaders writes them itself).
void WriteContinuation(uint32_t stream_id, std::string_view fragment,
                       bool end_headers, SliceBuffer* out);

void WritePriority(uint32_t stream_id, const PriorityFields& priority,
                   SliceBuffer* out);
void WriteRstStream(uint32_t stream_id, Http2ErrorCode code, SliceBuffer* out);
void WriteSettings(const Setting* settings, size_t count, SliceBuffer* out);
inline void WriteSettings(const std::vector<Setting>& settings,
                          SliceBuffer* out) {
  WriteSettings(settings.data(), settings.size(), out);
}
inline void WriteSettings(std::initializer_list<Setting> settings,
                          SliceBuffer* out) {
  WriteSettings(settings.begin(), settings.size(), out);
}
void WriteSettingsAck(SliceBuffer* out);
void WritePing(uint64_t opaque_data, bool ack, SliceBuffer* out);
void WriteGoAway(uint32_t last_stream_id, Http2ErrorCode code,
                 std::string_view debug_data, SliceBuffer* out);
void WriteWindowUpdate(uint32_t stream_id, uint32_t increment,
                       SliceBuffer* out);
// A frame of any type with `length` zero octets of payload (tests).
void WriteUnknownFrame(uint8_t type, uint8_t flags, uint32_t stream_id,
                       uint32_t length, SliceBuffer* out);

// Exactly the frame the struct describes, one frame, no splitting: HEADERS and
// PUSH_PROMISE fragments are written as given, with END_HEADERS as the struct
// says.
void WriteFrame(const Frame& frame, SliceBuffer* out);

}  // namespace transport

#endif  // TRANSPORT_FRAME_FRAME_WRITER_H_
