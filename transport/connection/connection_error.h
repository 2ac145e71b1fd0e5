// Why a Connection failed, or why it reset a stream: a named reason for every
// error the Connection finds (RFC 9113 5.4), with a short stable name.
//
//   ConnectionError: the connection error (GOAWAY), its code, its
//                    ConnectionErrorReason and an optional detail (a stream
//                    id, a size, the frame decoder's or HPACK decoder's name).
//   StreamError:     a stream error we found (RST_STREAM), its code and its
//                    StreamErrorReason, with the header rule / HPACK / frame
//                    rule behind it.
//
// The names go on the wire: the GOAWAY we send carries DebugData() ("name", or
// "name: detail"), in the style of gRPC's "too_many_pings". They reach
// ConnectionListener::OnConnectionError / OnStreamFailed and the status of the
// calls that die with them. Reasons are enums and details are built only when
// an error happens: nothing here costs the paths that do not fail.

#ifndef TRANSPORT_CONNECTION_CONNECTION_ERROR_H_
#define TRANSPORT_CONNECTION_CONNECTION_ERROR_H_

#include <cstdint>
#include <ostream>
#include <string>
#include <string_view>
#include <utility>

#include "transport/frame/http2_error.h"

namespace transport {

// One value per cause of a connection error. The comment gives the code we
// send and the RFC 9113 section (or the limit in ConnectionOptions).
// clang-format off
enum class ConnectionErrorReason : uint8_t {
  kNone = 0,                  // No error.

  // ---- Found by the codecs ----
  kBadFrame,                  // The frame decoder's code, 4-6; detail: its
                              // FrameDecodeErrorName.
  kBadSetting,                // 6.5.2 (PROTOCOL / FLOW_CONTROL_ERROR); detail:
                              // which setting.
  kHpackError,                // COMPRESSION_ERROR, 4.3; detail: the HPACK
                              // decoder's DecodeErrorName.

  // ---- Header blocks (ENHANCE_YOUR_CALM) ----
  kHpackBomb,                 // kHpackBombFactor.
  kHeaderBlockTooLarge,       // max_header_block_bytes.
  kContinuationFlood,         // max_continuation_frames.
  kHeaderBlockTimeout,        // header_block_timeout_ns.

  // ---- Stream states and identifiers (PROTOCOL_ERROR unless noted) ----
  kDataOnIdleStream,          // 5.1.
  kHeadersOnIdleStream,       // 5.1: a HEADERS on an id of ours not yet used.
  kRstStreamOnIdleStream,     // 6.4.
  kWindowUpdateOnIdleStream,  // 5.1.
  kHeadersOnClosedStream,     // STREAM_CLOSED, 5.1.
  kStreamIdNotIncreasing,     // 5.1.1: a new stream id not above the last.
  kServerInitiatedStream,     // 8.4: push is disabled (client).
  kPushPromise,               // 8.4: we never enable push.
  kEnablePush,                // 6.5.2: a server sent ENABLE_PUSH 1.

  // ---- Flow control (FLOW_CONTROL_ERROR, 6.9) ----
  kConnectionWindowExceeded,  // DATA beyond the connection's receive window.
  kConnectionWindowOverflow,  // 6.9.1: the send window above 2^31-1.
  kInitialWindowOverflow,     // 6.9.2: INITIAL_WINDOW_SIZE overflows a stream.

  // ---- Settings (SETTINGS_TIMEOUT, 6.5.3) ----
  kSettingsTimeout,           // settings_timeout_ns.

  // ---- Flood budgets (ENHANCE_YOUR_CALM; ConnectionOptions) ----
  kRstStreamFlood,            // stream_resets: RST_STREAM received (server).
  kStreamErrorFlood,          // stream_resets: stream errors the peer caused.
  kSettingsFlood,             // settings_frames.
  kPingFlood,                 // pings.
  kEmptyDataFlood,            // empty_data_frames.
  kWindowUpdateFlood,         // window_updates.
  kPriorityFlood,             // other_frames: PRIORITY.
  kUnknownFrameFlood,         // other_frames: unknown frame types.
  kSettingsAckFlood,          // other_frames: unsolicited SETTINGS ACK.
  kUnreadReplies,             // max_queued_replies.

  // ---- Not found in the peer's frames (no GOAWAY of ours says them) ----
  kTransportClosed,           // OnTransportClosed (CANCEL).
  kApplicationGoAway,         // GoAway() with an error code; detail: its
                              // debug data.
};
// clang-format on
// The last value (for tests that go through every reason).
inline constexpr ConnectionErrorReason kLastConnectionErrorReason =
    ConnectionErrorReason::kApplicationGoAway;

// The reason's stable snake_case name: "none", "bad_frame", ...,
// "rst_stream_flood", ...; "unknown" for a value out of range.
std::string_view Name(ConnectionErrorReason reason);

// One value per cause of a stream error we found (RST_STREAM, OnStreamReset
// with remote = false). PROTOCOL_ERROR unless noted.
// clang-format off
enum class StreamErrorReason : uint8_t {
  kNone = 0,                  // No error.
  kBadFrame,                  // The frame decoder's stream errors (PRIORITY,
                              // WINDOW_UPDATE 0); detail: FrameDecodeErrorName.
  kBadField,                  // 8.2.1, an HPACK field error that is not a
                              // connection error; detail: DecodeErrorName.
  kHeaderRule,                // 8.2-8.3; detail: HeaderRuleErrorName.
  kContentLength,             // 8.1.1: DATA does not add up to content-length.
  kDataBeforeHeaders,         // 8.1: DATA before the (final) headers.
  kTrailersWithoutEndStream,  // 8.1.
  kInformationalEndStream,    // 8.1: a 1xx response with END_STREAM.
  kHeaderListTooLarge,        // Over our limit and not answered.
  kStreamClosed,              // STREAM_CLOSED, 5.1: after the peer's
                              // END_STREAM.
  kStreamWindowExceeded,      // FLOW_CONTROL_ERROR, 6.9.1.
  kStreamWindowOverflow,      // FLOW_CONTROL_ERROR, 6.9.1: above 2^31-1.
  kMaxConcurrentStreams,      // REFUSED_STREAM, 5.1.2.
};
// clang-format on
inline constexpr StreamErrorReason kLastStreamErrorReason =
    StreamErrorReason::kMaxConcurrentStreams;

// "none", "bad_frame", ...: a stable snake_case name for every value.
std::string_view Name(StreamErrorReason reason);

// A stream error: the code sent in RST_STREAM and why. `detail` is the name
// of the header rule, HPACK or frame rule behind kHeaderRule, kBadField and
// kBadFrame (static storage), else empty.
struct StreamError {
  Http2ErrorCode code = Http2ErrorCode::kNoError;
  StreamErrorReason reason = StreamErrorReason::kNone;
  std::string_view detail;

  // "header_rule: bad_status", "stream_closed", ...
  std::string ToString() const;
};

// A connection error (or how the connection ended): ok() until one happens.
class ConnectionError {
 public:
  ConnectionError() = default;
  ConnectionError(Http2ErrorCode code, ConnectionErrorReason reason,
                  std::string detail = std::string())
      : code_(code), reason_(reason), detail_(std::move(detail)) {}

  bool ok() const { return reason_ == ConnectionErrorReason::kNone; }
  // The code of our GOAWAY (kCancel for kTransportClosed).
  Http2ErrorCode code() const { return code_; }
  ConnectionErrorReason reason() const { return reason_; }
  // A stream id, a size, a codec's error name; often empty.
  const std::string& detail() const { return detail_; }

  // What our GOAWAY carries: "ping_flood", "hpack_error: index_zero".
  std::string DebugData() const;
  // "ok", or "connection error ENHANCE_YOUR_CALM: ping_flood".
  std::string ToString() const;

  friend bool operator==(const ConnectionError& a, const ConnectionError& b) {
    return a.code_ == b.code_ && a.reason_ == b.reason_ &&
           a.detail_ == b.detail_;
  }
  friend bool operator!=(const ConnectionError& a, const ConnectionError& b) {
    return !(a == b);
  }

 private:
  Http2ErrorCode code_ = Http2ErrorCode::kNoError;
  ConnectionErrorReason reason_ = ConnectionErrorReason::kNone;
  std::string detail_;
};

std::ostream& operator<<(std::ostream& os, ConnectionErrorReason reason);
std::ostream& operator<<(std::ostream& os, StreamErrorReason reason);
std::ostream& operator<<(std::ostream& os, const ConnectionError& error);

}  // namespace transport

#endif  // TRANSPORT_CONNECTION_CONNECTION_ERROR_H_
