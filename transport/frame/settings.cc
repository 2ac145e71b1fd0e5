#include "transport/frame/settings.h"

namespace transport {

const char* SettingIdName(uint16_t id) {
  switch (static_cast<SettingId>(id)) {
    case SettingId::kHeaderTableSize:
      return "HEADER_TABLE_SIZE";
    case SettingId::kEnablePush:
      return "ENABLE_PUSH";
    case SettingId::kMaxConcurrentStreams:
      return "MAX_CONCURRENT_STREAMS";
    case SettingId::kInitialWindowSize:
      return "INITIAL_WINDOW_SIZE";
    case SettingId::kMaxFrameSize:
      return "MAX_FRAME_SIZE";
    case SettingId::kMaxHeaderListSize:
      return "MAX_HEADER_LIST_SIZE";
  }
  return "UNKNOWN";
}

std::ostream& operator<<(std::ostream& os, const Setting& s) {
  return os << SettingIdName(s.id) << "(" << s.id << ")=" << s.value;
}

Http2Error ValidateSetting(uint16_t id, uint32_t value) {
  if (IsValidSetting(id, value)) return Http2Error::Ok();
  switch (static_cast<SettingId>(id)) {
    case SettingId::kEnablePush:
      return Http2Error::Connection(Http2ErrorCode::kProtocolError,
                                    "SETTINGS_ENABLE_PUSH must be 0 or 1");
    case SettingId::kInitialWindowSize:
      return Http2Error::Connection(
          Http2ErrorCode::kFlowControlError,
          "SETTINGS_INITIAL_WINDOW_SIZE above 2^31-1");
    default:
      return Http2Error::Connection(
          Http2ErrorCode::kProtocolError,
          "SETTINGS_MAX_FRAME_SIZE outside [2^14, 2^24-1]");
  }
}

Http2Error Http2Settings::Apply(const Setting& setting) {
  if (!IsValidSetting(setting.id, setting.value)) {
    return ValidateSetting(setting.id, setting.value);
  }
  switch (static_cast<SettingId>(setting.id)) {
    case SettingId::kHeaderTableSize:
      header_table_size = setting.value;
      break;
    case SettingId::kEnablePush:
      enable_push = setting.value != 0;
      break;
    case SettingId::kMaxConcurrentStreams:
      max_concurrent_streams = setting.value;
      break;
    case SettingId::kInitialWindowSize:
      initial_window_size = setting.value;
      break;
    case SettingId::kMaxFrameSize:
      max_frame_size = setting.value;
      break;
    case SettingId::kMaxHeaderListSize:
      max_header_list_size = setting.value;
      break;
  }
  return Http2Error::Ok();
}

bool Http2Settings::Get(uint16_t id, uint32_t* value) const {
  switch (static_cast<SettingId>(id)) {
    case SettingId::kHeaderTableSize:
      *value = header_table_size;
      return true;
    case SettingId::kEnablePush:
      *value = enable_push ? 1 : 0;
      return true;
    case SettingId::kMaxConcurrentStreams:
      *value = max_concurrent_streams;
      return true;
    case SettingId::kInitialWindowSize:
      *value = initial_window_size;
      return true;
    case SettingId::kMaxFrameSize:
      *value = max_frame_size;
      return true;
    case SettingId::kMaxHeaderListSize:
      *value = max_header_list_size;
      return true;
  }
  return false;
}

std::vector<Setting> Http2Settings::DiffFrom(const Http2Settings& base) const {
  std::vector<Setting> out;
  for (uint16_t id = 1; id <= 6; ++id) {
    uint32_t mine = 0;
    uint32_t theirs = 0;
    Get(id, &mine);
    base.Get(id, &theirs);
    if (mine != theirs) out.emplace_back(id, mine);
  }
  return out;
}

std::vector<Setting> Http2Settings::DiffFrom() const {
  return DiffFrom(Http2Settings());
}

bool operator==(const Http2Settings& a, const Http2Settings& b) {
  return a.header_table_size == b.header_table_size &&
         a.enable_push == b.enable_push &&
         a.max_concurrent_streams == b.max_concurrent_streams &&
         a.initial_window_size == b.initial_window_size &&
         a.max_frame_size == b.max_frame_size &&
         a.max_header_list_size == b.max_header_list_size;
}

}  // namespace transport
