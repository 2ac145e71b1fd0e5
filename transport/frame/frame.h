// HTTP/2 frames (RFC 9113 section 4 and 6): types, flags, the 9-octet frame
// header, and one plain struct per frame type.
//
// The structs are what tests and tools compare (operator==, printable); the hot
// path does not build them: FrameDecoder hands fields and views straight to a
// FrameListener, and the frame writers take fields. FrameCollector
// (frame_collector.h) turns decoder callbacks into these structs, WriteFrame
// (frame_writer.h) turns them into bytes.

#ifndef TRANSPORT_FRAME_FRAME_H_
#define TRANSPORT_FRAME_FRAME_H_

#include <cstddef>
#include <cstdint>
#include <optional>
#include <ostream>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "transport/frame/frame_wire.h"
#include "transport/frame/http2_error.h"
#include "transport/frame/settings.h"
#include "transport/slice/slice.h"

namespace transport {

inline constexpr size_t kFrameHeaderSize = 9;
// RFC 9113 section 3.4: what a client sends first, before its SETTINGS frame.
inline constexpr std::string_view kClientPreface(
    "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n", 24);
// Stream identifiers, last-stream-id, promised stream id, window increments and
// stream dependencies are 31 bits; the top bit is reserved (ignored on receipt,
// 0 when sent).
inline constexpr uint32_t kStreamIdMask = 0x7fffffff;

enum class FrameType : uint8_t {
  kData = 0x0,
  kHeaders = 0x1,
  kPriority = 0x2,
  kRstStream = 0x3,
  kSettings = 0x4,
  kPushPromise = 0x5,
  kPing = 0x6,
  kGoAway = 0x7,
  kWindowUpdate = 0x8,
  kContinuation = 0x9,
};
// Types above this are unknown: ignored on receipt (RFC 9113 section 5.5).
inline constexpr uint8_t kLastKnownFrameType = 0x9;

// "DATA", "HEADERS", ..., "CONTINUATION"; "UNKNOWN" for other values.
const char* FrameTypeName(uint8_t type);

// Flags (RFC 9113 section 6), and the frame types that define them. Flags a
// frame type does not define are ignored on receipt.
//   END_STREAM   DATA, HEADERS
//   ACK          SETTINGS, PING
//   END_HEADERS  HEADERS, PUSH_PROMISE, CONTINUATION
//   PADDED       DATA, HEADERS, PUSH_PROMISE
//   PRIORITY     HEADERS
inline constexpr uint8_t kFlagEndStream = 0x01;
inline constexpr uint8_t kFlagAck = 0x01;
inline constexpr uint8_t kFlagEndHeaders = 0x04;
inline constexpr uint8_t kFlagPadded = 0x08;
inline constexpr uint8_t kFlagPriority = 0x20;

struct FrameHeader {
  uint32_t length = 0;  // 24 bits: payload octets, padding included.
  uint8_t type = 0;     // Raw, so unknown types are representable.
  uint8_t flags = 0;
  uint32_t stream_id = 0;  // Reserved bit cleared.

  bool has_flags(uint8_t f) const { return (flags & f) == f; }
  bool is(FrameType t) const { return type == static_cast<uint8_t>(t); }

  friend bool operator==(const FrameHeader& a, const FrameHeader& b) {
    return a.length == b.length && a.type == b.type && a.flags == b.flags &&
           a.stream_id == b.stream_id;
  }
  friend bool operator!=(const FrameHeader& a, const FrameHeader& b) {
    return !(a == b);
  }
};
std::ostream& operator<<(std::ostream& os, const FrameHeader& h);

// Parses the 9 octets at `p`. Two definitions of one function, held equal by
// frame_test: the general one reads octet by octet; the fast one (used when all
// 9 octets are in one buffer) does one 64-bit big-endian load for octets 0-7
// and shifts, plus octet 8.
inline FrameHeader ParseFrameHeader(const uint8_t* p) {
  FrameHeader h;
  h.length = (uint32_t{p[0]} << 16) | (uint32_t{p[1]} << 8) | p[2];
  h.type = p[3];
  h.flags = p[4];
  h.stream_id = ((uint32_t{p[5]} << 24) | (uint32_t{p[6]} << 16) |
                 (uint32_t{p[7]} << 8) | p[8]) &
                kStreamIdMask;
  return h;
}
inline FrameHeader ParseFrameHeaderFast(const uint8_t* p) {
  const uint64_t w = wire::LoadBE64(p);
  FrameHeader h;
  h.length = static_cast<uint32_t>(w >> 40);
  h.type = static_cast<uint8_t>(w >> 32);
  h.flags = static_cast<uint8_t>(w >> 24);
  h.stream_id = static_cast<uint32_t>((w << 8) | p[8]) & kStreamIdMask;
  return h;
}
// Writes the 9 octets of `h` at `out` (length < 2^24; the reserved bit is sent
// as 0).
inline void SerializeFrameHeader(const FrameHeader& h, uint8_t* out) {
  const uint64_t w = (uint64_t{h.length} << 40) | (uint64_t{h.type} << 32) |
                     (uint64_t{h.flags} << 24) |
                     ((h.stream_id & kStreamIdMask) >> 8);
  wire::StoreBE64(out, w);
  out[8] = static_cast<uint8_t>(h.stream_id);
}

// The priority fields of HEADERS (with the PRIORITY flag) and of PRIORITY
// frames. The priority scheme is deprecated (RFC 9113 section 5.3.2): parsed,
// checked, not acted on.
struct PriorityFields {
  uint32_t stream_dependency = 0;  // 31 bits.
  bool exclusive = false;
  // As on the wire: the weight minus one (15 is the default, 16).
  uint8_t weight = 15;

  friend bool operator==(const PriorityFields& a, const PriorityFields& b) {
    return a.stream_dependency == b.stream_dependency &&
           a.exclusive == b.exclusive && a.weight == b.weight;
  }
  friend bool operator!=(const PriorityFields& a, const PriorityFields& b) {
    return !(a == b);
  }
};
inline constexpr size_t kPriorityFieldsSize = 5;

// One struct per frame type. `pad_length` set means the PADDED flag with that
// many octets of padding (the decoder strips padding; the collector reports how
// much there was).

struct DataFrame {
  uint32_t stream_id = 0;
  bool end_stream = false;
  SliceBuffer payload;
  std::optional<uint8_t> pad_length;
};

struct HeadersFrame {
  uint32_t stream_id = 0;
  bool end_stream = false;
  bool end_headers = true;
  std::optional<PriorityFields> priority;
  std::string fragment;  // Header block fragment (HPACK octets).
  std::optional<uint8_t> pad_length;
};

struct PriorityFrame {
  uint32_t stream_id = 0;
  PriorityFields priority;
};

struct RstStreamFrame {
  uint32_t stream_id = 0;
  Http2ErrorCode error_code = Http2ErrorCode::kNoError;
};

struct SettingsFrame {
  bool ack = false;
  std::vector<Setting> settings;
};

struct PushPromiseFrame {
  uint32_t stream_id = 0;
  uint32_t promised_stream_id = 0;
  bool end_headers = true;
  std::string fragment;
  std::optional<uint8_t> pad_length;
};

struct PingFrame {
  bool ack = false;
  uint64_t opaque_data = 0;  // The 8 octets, big-endian.
};

struct GoAwayFrame {
  uint32_t last_stream_id = 0;
  Http2ErrorCode error_code = Http2ErrorCode::kNoError;
  std::string debug_data;
};

struct WindowUpdateFrame {
  uint32_t stream_id = 0;
  uint32_t increment = 0;
};

struct ContinuationFrame {
  uint32_t stream_id = 0;
  bool end_headers = true;
  std::string fragment;
};

// A frame of a type this codec does not know. Its payload is skipped unread;
// the writer sends `length` zero octets.
struct UnknownFrame {
  uint8_t type = 0xff;
  uint8_t flags = 0;
  uint32_t stream_id = 0;
  uint32_t length = 0;
};

using Frame =
    std::variant<DataFrame, HeadersFrame, PriorityFrame, RstStreamFrame,
                 SettingsFrame, PushPromiseFrame, PingFrame, GoAwayFrame,
                 WindowUpdateFrame, ContinuationFrame, UnknownFrame>;

bool operator==(const DataFrame& a, const DataFrame& b);
bool operator==(const HeadersFrame& a, const HeadersFrame& b);
bool operator==(const PriorityFrame& a, const PriorityFrame& b);
bool operator==(const RstStreamFrame& a, const RstStreamFrame& b);
bool operator==(const SettingsFrame& a, const SettingsFrame& b);
bool operator==(const PushPromiseFrame& a, const PushPromiseFrame& b);
bool operator==(const PingFrame& a, const PingFrame& b);
bool operator==(const GoAwayFrame& a, const GoAwayFrame& b);
bool operator==(const WindowUpdateFrame& a, const WindowUpdateFrame& b);
bool operator==(const ContinuationFrame& a, const ContinuationFrame& b);
bool operator==(const UnknownFrame& a, const UnknownFrame& b);
inline bool operator!=(const DataFrame& a, const DataFrame& b) {
  return !(a == b);
}
inline bool operator!=(const HeadersFrame& a, const HeadersFrame& b) {
  return !(a == b);
}
inline bool operator!=(const PriorityFrame& a, const PriorityFrame& b) {
  return !(a == b);
}
inline bool operator!=(const RstStreamFrame& a, const RstStreamFrame& b) {
  return !(a == b);
}
inline bool operator!=(const SettingsFrame& a, const SettingsFrame& b) {
  return !(a == b);
}
inline bool operator!=(const PushPromiseFrame& a, const PushPromiseFrame& b) {
  return !(a == b);
}
inline bool operator!=(const PingFrame& a, const PingFrame& b) {
  return !(a == b);
}
inline bool operator!=(const GoAwayFrame& a, const GoAwayFrame& b) {
  return !(a == b);
}
inline bool operator!=(const WindowUpdateFrame& a, const WindowUpdateFrame& b) {
  return !(a == b);
}
inline bool operator!=(const ContinuationFrame& a, const ContinuationFrame& b) {
  return !(a == b);
}
inline bool operator!=(const UnknownFrame& a, const UnknownFrame& b) {
  return !(a == b);
}

// One line per frame, e.g. `DATA stream=1 end_stream payload="hi"` (bytes
// escaped, long payloads cut), for test failures and logs.
std::string FrameToString(const Frame& frame);
std::ostream& operator<<(std::ostream& os, const Frame& frame);
std::ostream& operator<<(std::ostream& os, const DataFrame& frame);
std::ostream& operator<<(std::ostream& os, const HeadersFrame& frame);
std::ostream& operator<<(std::ostream& os, const PriorityFrame& frame);
std::ostream& operator<<(std::ostream& os, const RstStreamFrame& frame);
std::ostream& operator<<(std::ostream& os, const SettingsFrame& frame);
std::ostream& operator<<(std::ostream& os, const PushPromiseFrame& frame);
std::ostream& operator<<(std::ostream& os, const PingFrame& frame);
std::ostream& operator<<(std::ostream& os, const GoAwayFrame& frame);
std::ostream& operator<<(std::ostream& os, const WindowUpdateFrame& frame);
std::ostream& operator<<(std::ostream& os, const ContinuationFrame& frame);
std::ostream& operator<<(std::ostream& os, const UnknownFrame& frame);

}  // namespace transport

#endif  // TRANSPORT_FRAME_FRAME_H_
