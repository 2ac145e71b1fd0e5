#include "transport/frame/http2_error.h"

namespace transport {

const char* Http2ErrorCodeName(Http2ErrorCode code) {
  switch (code) {
    case Http2ErrorCode::kNoError:
      return "NO_ERROR";
    case Http2ErrorCode::kProtocolError:
      return "PROTOCOL_ERROR";
    case Http2ErrorCode::kInternalError:
      return "INTERNAL_ERROR";
    case Http2ErrorCode::kFlowControlError:
      return "FLOW_CONTROL_ERROR";
    case Http2ErrorCode::kSettingsTimeout:
      return "SETTINGS_TIMEOUT";
    case Http2ErrorCode::kStreamClosed:
      return "STREAM_CLOSED";
    case Http2ErrorCode::kFrameSizeError:
      return "FRAME_SIZE_ERROR";
    case Http2ErrorCode::kRefusedStream:
      return "REFUSED_STREAM";
    case Http2ErrorCode::kCancel:
      return "CANCEL";
    case Http2ErrorCode::kCompressionError:
      return "COMPRESSION_ERROR";
    case Http2ErrorCode::kConnectError:
      return "CONNECT_ERROR";
    case Http2ErrorCode::kEnhanceYourCalm:
      return "ENHANCE_YOUR_CALM";
    case Http2ErrorCode::kInadequateSecurity:
      return "INADEQUATE_SECURITY";
    case Http2ErrorCode::kHttp11Required:
      return "HTTP_1_1_REQUIRED";
  }
  return "UNKNOWN";
}

const std::string& Http2Error::message() const {
  static const std::string* const kEmpty = new std::string();
  return rep_ ? rep_->message : *kEmpty;
}

std::string Http2Error::ToString() const {
  std::string out;
  switch (scope()) {
    case Scope::kOk:
      return "ok";
    case Scope::kStream:
      out = "stream " + std::to_string(rep_->stream_id) + " error ";
      break;
    case Scope::kConnection:
      out = "connection error ";
      break;
  }
  out += Http2ErrorCodeName(rep_->code);
  if (!IsKnownHttp2ErrorCode(rep_->code)) {
    out += "(" + std::to_string(static_cast<uint32_t>(rep_->code)) + ")";
  }
  if (!rep_->message.empty()) {
    out += ": ";
    out += rep_->message;
  }
  return out;
}

std::ostream& operator<<(std::ostream& os, Http2ErrorCode code) {
  os << Http2ErrorCodeName(code);
  if (!IsKnownHttp2ErrorCode(code))
    os << "(" << static_cast<uint32_t>(code) << ")";
  return os;
}

std::ostream& operator<<(std::ostream& os, const Http2Error& error) {
  return os << error.ToString();
}

}  // namespace transport
