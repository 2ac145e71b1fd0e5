#include "transport/connection/connection_error.h"

namespace transport {

std::string_view Name(ConnectionErrorReason reason) {
  switch (reason) {
    case ConnectionErrorReason::kNone:
      return "none";
    case ConnectionErrorReason::kBadFrame:
      return "bad_frame";
    case ConnectionErrorReason::kBadSetting:
      return "bad_setting";
    case ConnectionErrorReason::kHpackError:
      return "hpack_error";
    case ConnectionErrorReason::kHpackBomb:
      return "hpack_bomb";
    case ConnectionErrorReason::kHeaderBlockTooLarge:
      return "header_block_too_large";
    case ConnectionErrorReason::kContinuationFlood:
      return "continuation_flood";
    case ConnectionErrorReason::kHeaderBlockTimeout:
      return "header_block_timeout";
    case ConnectionErrorReason::kDataOnIdleStream:
      return "data_on_idle_stream";
    case ConnectionErrorReason::kHeadersOnIdleStream:
      return "headers_on_idle_stream";
    case ConnectionErrorReason::kRstStreamOnIdleStream:
      return "rst_stream_on_idle_stream";
    case ConnectionErrorReason::kWindowUpdateOnIdleStream:
      return "window_update_on_idle_stream";
    case ConnectionErrorReason::kHeadersOnClosedStream:
      return "headers_on_closed_stream";
    case ConnectionErrorReason::kStreamIdNotIncreasing:
      return "stream_id_not_increasing";
    case ConnectionErrorReason::kServerInitiatedStream:
      return "server_initiated_stream";
    case ConnectionErrorReason::kPushPromise:
      return "push_promise";
    case ConnectionErrorReason::kEnablePush:
      return "enable_push";
    case ConnectionErrorReason::kConnectionWindowExceeded:
      return "connection_window_exceeded";
    case ConnectionErrorReason::kConnectionWindowOverflow:
      return "connection_window_overflow";
    case ConnectionErrorReason::kInitialWindowOverflow:
      return "initial_window_overflow";
    case ConnectionErrorReason::kSettingsTimeout:
      return "settings_timeout";
    case ConnectionErrorReason::kRstStreamFlood:
      return "rst_stream_flood";
    case ConnectionErrorReason::kStreamErrorFlood:
      return "stream_error_flood";
    case ConnectionErrorReason::kSettingsFlood:
      return "settings_flood";
    case ConnectionErrorReason::kPingFlood:
      return "ping_flood";
    case ConnectionErrorReason::kEmptyDataFlood:
      return "empty_data_flood";
    case ConnectionErrorReason::kWindowUpdateFlood:
      return "window_update_flood";
    case ConnectionErrorReason::kPriorityFlood:
      return "priority_flood";
    case ConnectionErrorReason::kUnknownFrameFlood:
      return "unknown_frame_flood";
    case ConnectionErrorReason::kSettingsAckFlood:
      return "settings_ack_flood";
    case ConnectionErrorReason::kUnreadReplies:
      return "unread_replies";
    case ConnectionErrorReason::kTransportClosed:
      return "transport_closed";
    case ConnectionErrorReason::kApplicationGoAway:
      return "application_goaway";
  }
  return "unknown";
}

std::string_view Name(StreamErrorReason reason) {
  switch (reason) {
    case StreamErrorReason::kNone:
      return "none";
    case StreamErrorReason::kBadFrame:
      return "bad_frame";
    case StreamErrorReason::kBadField:
      return "bad_field";
    case StreamErrorReason::kHeaderRule:
      return "header_rule";
    case StreamErrorReason::kContentLength:
      return "content_length";
    case StreamErrorReason::kDataBeforeHeaders:
      return "data_before_headers";
    case StreamErrorReason::kTrailersWithoutEndStream:
      return "trailers_without_end_stream";
    case StreamErrorReason::kInformationalEndStream:
      return "informational_end_stream";
    case StreamErrorReason::kHeaderListTooLarge:
      return "header_list_too_large";
    case StreamErrorReason::kStreamClosed:
      return "stream_closed";
    case StreamErrorReason::kStreamWindowExceeded:
      return "stream_window_exceeded";
    case StreamErrorReason::kStreamWindowOverflow:
      return "stream_window_overflow";
    case StreamErrorReason::kMaxConcurrentStreams:
      return "max_concurrent_streams";
  }
  return "unknown";
}

namespace {

// "name", or "name: detail".
std::string WithDetail(std::string_view name, std::string_view detail) {
  std::string out(name);
  if (!detail.empty()) {
    out += ": ";
    out += detail;
  }
  return out;
}

}  // namespace

std::string StreamError::ToString() const {
  return WithDetail(Name(reason), detail);
}

std::string ConnectionError::DebugData() const {
  return WithDetail(Name(reason_), detail_);
}

std::string ConnectionError::ToString() const {
  if (ok()) return "ok";
  std::string out = "connection error ";
  out += Http2ErrorCodeName(code_);
  if (!IsKnownHttp2ErrorCode(code_)) {
    out += "(" + std::to_string(static_cast<uint32_t>(code_)) + ")";
  }
  out += ": ";
  out += DebugData();
  return out;
}

std::ostream& operator<<(std::ostream& os, ConnectionErrorReason reason) {
  return os << Name(reason);
}

std::ostream& operator<<(std::ostream& os, StreamErrorReason reason) {
  return os << Name(reason);
}

std::ostream& operator<<(std::ostream& os, const ConnectionError& error) {
  return os << error.ToString();
}

}  // namespace transport
