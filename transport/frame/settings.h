// HTTP/2 SETTINGS parameters (RFC 9113 section 6.5): identifiers, the
// received-value rules of section 6.5.2, the parameter set with its protocol
// defaults, and a zero-copy view of a SETTINGS frame's entries.
//
// Validation here covers what a single value can get wrong. Rules that depend
// on the role or on the connection's state stay with the Connection: a client
// must treat SETTINGS_ENABLE_PUSH = 1 from a server as PROTOCOL_ERROR; a new
// INITIAL_WINDOW_SIZE that overflows an open stream's window is a
// FLOW_CONTROL_ERROR; our own values take effect only once the peer
// acknowledges them.

#ifndef TRANSPORT_FRAME_SETTINGS_H_
#define TRANSPORT_FRAME_SETTINGS_H_

#include <cstddef>
#include <cstdint>
#include <iterator>
#include <ostream>
#include <vector>

#include "transport/frame/frame_wire.h"
#include "transport/frame/http2_error.h"

namespace transport {

// RFC 9113 section 6.5.2. Other identifiers are unknown and ignored
// (section 6.5.2: "An endpoint that receives a SETTINGS frame with any unknown
// or unsupported identifier MUST ignore that setting").
enum class SettingId : uint16_t {
  kHeaderTableSize = 0x1,
  kEnablePush = 0x2,
  kMaxConcurrentStreams = 0x3,
  kInitialWindowSize = 0x4,
  kMaxFrameSize = 0x5,
  kMaxHeaderListSize = 0x6,
};

// "HEADER_TABLE_SIZE", ..., "MAX_HEADER_LIST_SIZE"; "UNKNOWN" otherwise.
const char* SettingIdName(uint16_t id);

// One SETTINGS entry; `id` is raw so unknown identifiers survive a round trip.
struct Setting {
  uint16_t id = 0;
  uint32_t value = 0;

  Setting() = default;
  Setting(uint16_t id, uint32_t value) : id(id), value(value) {}
  Setting(SettingId id, uint32_t value)
      : id(static_cast<uint16_t>(id)), value(value) {}

  friend bool operator==(const Setting& a, const Setting& b) {
    return a.id == b.id && a.value == b.value;
  }
  friend bool operator!=(const Setting& a, const Setting& b) {
    return !(a == b);
  }
};
std::ostream& operator<<(std::ostream& os, const Setting& s);

// Limits of RFC 9113.
inline constexpr uint32_t kDefaultHeaderTableSize = 4096;
inline constexpr uint32_t kDefaultInitialWindowSize = 65535;
inline constexpr uint32_t kMaxWindowSize = 0x7fffffff;  // 2^31 - 1
// 2^14: the initial SETTINGS_MAX_FRAME_SIZE, also the smallest allowed.
inline constexpr uint32_t kDefaultMaxFrameSize = 16384;
inline constexpr uint32_t kMaxAllowedFrameSize = 0xffffff;  // 2^24 - 1
inline constexpr uint32_t kSettingUnlimited = 0xffffffff;

// Checks a received value against RFC 9113 section 6.5.2. Returns ok, or a
// connection error:
//  * ENABLE_PUSH other than 0 or 1: PROTOCOL_ERROR;
//  * INITIAL_WINDOW_SIZE above 2^31-1: FLOW_CONTROL_ERROR;
//  * MAX_FRAME_SIZE outside [2^14, 2^24-1]: PROTOCOL_ERROR.
// Every value of the other and of unknown identifiers is valid.
Http2Error ValidateSetting(uint16_t id, uint32_t value);

// True exactly when ValidateSetting(id, value) is ok: the one definition of the
// rule, inline for the decoder's per-entry loop.
inline bool IsValidSetting(uint16_t id, uint32_t value) {
  switch (static_cast<SettingId>(id)) {
    case SettingId::kEnablePush:
      return value <= 1;
    case SettingId::kInitialWindowSize:
      return value <= kMaxWindowSize;
    case SettingId::kMaxFrameSize:
      return value >= kDefaultMaxFrameSize && value <= kMaxAllowedFrameSize;
    default:
      return true;
  }
}

// The entries of a SETTINGS frame payload, read in place (a 16-bit and a 32-bit
// big-endian load per 6-octet entry). Valid while the payload is (the decoder's
// view lasts for the duration of the OnSettings callback).
class SettingsView {
 public:
  static constexpr size_t kEntrySize = 6;

  SettingsView() = default;
  // `payload` holds count * 6 octets.
  SettingsView(const uint8_t* payload, size_t count)
      : data_(payload), count_(count) {}

  size_t size() const { return count_; }
  bool empty() const { return count_ == 0; }
  Setting operator[](size_t i) const {
    const uint8_t* p = data_ + i * kEntrySize;
    return Setting(wire::LoadBE16(p), wire::LoadBE32(p + 2));
  }

  class const_iterator {
   public:
    using iterator_category = std::forward_iterator_tag;
    using value_type = Setting;
    using difference_type = std::ptrdiff_t;
    using pointer = void;
    using reference = Setting;

    explicit const_iterator(const uint8_t* p) : p_(p) {}
    Setting operator*() const {
      return Setting(wire::LoadBE16(p_), wire::LoadBE32(p_ + 2));
    }
    const_iterator& operator++() {
      p_ += kEntrySize;
      return *this;
    }
    bool operator==(const const_iterator& o) const { return p_ == o.p_; }
    bool operator!=(const const_iterator& o) const { return p_ != o.p_; }

   private:
    const uint8_t* p_;
  };
  const_iterator begin() const { return const_iterator(data_); }
  const_iterator end() const {
    return const_iterator(data_ + count_ * kEntrySize);
  }

  std::vector<Setting> ToVector() const {
    return std::vector<Setting>(begin(), end());
  }

 private:
  const uint8_t* data_ = nullptr;
  size_t count_ = 0;
};

// One endpoint's parameters, starting at the protocol defaults (RFC 9113
// section 6.5.2). kSettingUnlimited stands for "no limit" (the initial value of
// MAX_CONCURRENT_STREAMS and MAX_HEADER_LIST_SIZE).
struct Http2Settings {
  uint32_t header_table_size = kDefaultHeaderTableSize;
  bool enable_push = true;
  uint32_t max_concurrent_streams = kSettingUnlimited;
  uint32_t initial_window_size = kDefaultInitialWindowSize;
  uint32_t max_frame_size = kDefaultMaxFrameSize;
  uint32_t max_header_list_size = kSettingUnlimited;

  // Validates (ValidateSetting) and applies one entry; unknown identifiers are
  // ignored. On error nothing changes.
  Http2Error Apply(const Setting& setting);
  // Applies entries in order (RFC 9113 section 6.5.3: "processed in the order
  // in which they appear"); stops at the first invalid one (the entries before
  // it stay applied; the error is a connection error anyway).
  template <typename Range>
  Http2Error ApplyAll(const Range& settings) {
    for (const Setting& s : settings) {
      Http2Error e = Apply(s);
      if (!e.ok()) return e;
    }
    return Http2Error::Ok();
  }

  // Stores the value of `id` in *value; false (and nothing stored) for unknown
  // ids.
  bool Get(uint16_t id, uint32_t* value) const;

  // The entries to send so that a peer starting from `base` ends up with these
  // parameters, in identifier order. DiffFrom() starts from the defaults.
  std::vector<Setting> DiffFrom(const Http2Settings& base) const;
  std::vector<Setting> DiffFrom() const;

  friend bool operator==(const Http2Settings& a, const Http2Settings& b);
  friend bool operator!=(const Http2Settings& a, const Http2Settings& b) {
    return !(a == b);
  }
};

}  // namespace transport

#endif  // TRANSPORT_FRAME_SETTINGS_H_
