// HTTP/2 error codes (RFC 9113 section 7) and Http2Error, an error that knows
// when it is made whether it ends a stream (RST_STREAM) or the whole connection
// (GOAWAY).
//
// clang-format off
//   Http2Error e =
//       Http2Error::Stream(5, Http2ErrorCode::kProtocolError, "why");
//   if (e.is_stream_error()) {
//     ... RST_STREAM on e.stream_id() with e.code() ...
//   } else if (e.is_connection_error()) {
//     ... GOAWAY(e.code(), e.message()) and close ...
//   }
// clang-format on
//
// An Http2Error in the ok state carries nothing; making and copying one costs a
// few stores (the message is an empty std::string).

#ifndef TRANSPORT_FRAME_HTTP2_ERROR_H_
#define TRANSPORT_FRAME_HTTP2_ERROR_H_

#include <cstdint>
#include <memory>
#include <ostream>
#include <string>
#include <utility>

namespace transport {

// The error codes of RFC 9113 section 7. Codes arrive from the peer in
// RST_STREAM and GOAWAY frames as any 32-bit value; the enum holds unknown
// values too (an unknown code "MUST NOT trigger any special behavior", the
// receiver may treat it as kInternalError).
enum class Http2ErrorCode : uint32_t {
  kNoError = 0x0,
  kProtocolError = 0x1,
  kInternalError = 0x2,
  kFlowControlError = 0x3,
  kSettingsTimeout = 0x4,
  kStreamClosed = 0x5,
  kFrameSizeError = 0x6,
  kRefusedStream = 0x7,
  kCancel = 0x8,
  kCompressionError = 0x9,
  kConnectError = 0xa,
  kEnhanceYourCalm = 0xb,
  kInadequateSecurity = 0xc,
  kHttp11Required = 0xd,
};

// The RFC's name: "NO_ERROR", "PROTOCOL_ERROR", ..., "HTTP_1_1_REQUIRED";
// "UNKNOWN" for a value the RFC does not define.
const char* Http2ErrorCodeName(Http2ErrorCode code);

// True for the 14 codes RFC 9113 defines.
constexpr bool IsKnownHttp2ErrorCode(Http2ErrorCode code) {
  return static_cast<uint32_t>(code) <=
         static_cast<uint32_t>(Http2ErrorCode::kHttp11Required);
}

class [[nodiscard]] Http2Error {
 public:
  enum class Scope : uint8_t {
    // No error.
    kOk,
    // Ends one stream (RFC 9113 section 5.4.2): RST_STREAM, then go on.
    kStream,
    // Ends the connection (RFC 9113 section 5.4.1): GOAWAY.
    kConnection,
  };

  // No error.
  Http2Error() = default;
  static Http2Error Ok() { return Http2Error(); }
  // A stream error on `stream_id` (non-zero).
  static Http2Error Stream(uint32_t stream_id, Http2ErrorCode code,
                           std::string message) {
    return Http2Error(Scope::kStream, code, stream_id, std::move(message));
  }
  // A connection error.
  static Http2Error Connection(Http2ErrorCode code, std::string message) {
    return Http2Error(Scope::kConnection, code, 0, std::move(message));
  }

  Http2Error(const Http2Error& other)
      : rep_(other.rep_ ? std::make_unique<Rep>(*other.rep_) : nullptr) {}
  Http2Error& operator=(const Http2Error& other) {
    if (this != &other) {
      rep_ = other.rep_ ? std::make_unique<Rep>(*other.rep_) : nullptr;
    }
    return *this;
  }
  Http2Error(Http2Error&&) noexcept = default;
  Http2Error& operator=(Http2Error&&) noexcept = default;

  bool ok() const { return rep_ == nullptr; }
  bool is_stream_error() const { return scope() == Scope::kStream; }
  bool is_connection_error() const { return scope() == Scope::kConnection; }
  Scope scope() const { return rep_ ? rep_->scope : Scope::kOk; }
  // kNoError when ok().
  Http2ErrorCode code() const {
    return rep_ ? rep_->code : Http2ErrorCode::kNoError;
  }
  // The stream a stream error ends; 0 otherwise.
  uint32_t stream_id() const { return rep_ ? rep_->stream_id : 0; }
  // Empty when ok().
  const std::string& message() const;

  // "ok", "stream 5 error PROTOCOL_ERROR: why" or "connection error
  // FRAME_SIZE_ERROR: why".
  std::string ToString() const;

  friend bool operator==(const Http2Error& a, const Http2Error& b) {
    return a.scope() == b.scope() && a.code() == b.code() &&
           a.stream_id() == b.stream_id() && a.message() == b.message();
  }
  friend bool operator!=(const Http2Error& a, const Http2Error& b) {
    return !(a == b);
  }

 private:
  // Only errors allocate: ok is a null pointer, so returning ok costs what
  // returning a pointer does.
  struct Rep {
    Scope scope;
    Http2ErrorCode code;
    uint32_t stream_id;
    std::string message;
  };

  Http2Error(Scope scope, Http2ErrorCode code, uint32_t stream_id,
             std::string message)
      : rep_(std::make_unique<Rep>(
            Rep{scope, code, stream_id, std::move(message)})) {}

  std::unique_ptr<Rep> rep_;
};

std::ostream& operator<<(std::ostream& os, Http2ErrorCode code);
std::ostream& operator<<(std::ostream& os, const Http2Error& error);

}  // namespace transport

#endif  // TRANSPORT_FRAME_HTTP2_ERROR_H_
