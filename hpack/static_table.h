// RFC 7541 Appendix A: the 61-entry static table, with O(1) lookup by name and
// by name+value.
//
// Lookup by name is one probe (usually) of a 128-slot open-addressing table
// built at compile time from HashString(name); lookup by name+value then
// compares the value against the few entries that share the name (Appendix A
// lists them next to each other: :method, :path, :scheme, :status). Callers
// that already hashed the name pass the hash in, so the encoder hashes each
// name once for both tables.

#ifndef HPACK_STATIC_TABLE_H_
#define HPACK_STATIC_TABLE_H_

#include <array>
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "hpack/string_hash.h"

namespace hpack {

struct StaticEntry {
  std::string_view name;
  std::string_view value;
};

namespace static_table_internal {

inline constexpr size_t kStaticTableSize = 61;

// kStaticEntries[0] is unused: HPACK indexes start at 1.
inline constexpr StaticEntry kStaticEntries[kStaticTableSize + 1] = {
    {"", ""},
    {":authority", ""},
    {":method", "GET"},
    {":method", "POST"},
    {":path", "/"},
    {":path", "/index.html"},
    {":scheme", "http"},
    {":scheme", "https"},
    {":status", "200"},
    {":status", "204"},
    {":status", "206"},
    {":status", "304"},
    {":status", "400"},
    {":status", "404"},
    {":status", "500"},
    {"accept-charset", ""},
    {"accept-encoding", "gzip, deflate"},
    {"accept-language", ""},
    {"accept-ranges", ""},
    {"accept", ""},
    {"access-control-allow-origin", ""},
    {"age", ""},
    {"allow", ""},
    {"authorization", ""},
    {"cache-control", ""},
    {"content-disposition", ""},
    {"content-encoding", ""},
    {"content-language", ""},
    {"content-length", ""},
    {"content-location", ""},
    {"content-range", ""},
    {"content-type", ""},
    {"cookie", ""},
    {"date", ""},
    {"etag", ""},
    {"expect", ""},
    {"expires", ""},
    {"from", ""},
    {"host", ""},
    {"if-match", ""},
    {"if-modified-since", ""},
    {"if-none-match", ""},
    {"if-range", ""},
    {"if-unmodified-since", ""},
    {"last-modified", ""},
    {"link", ""},
    {"location", ""},
    {"max-forwards", ""},
    {"proxy-authenticate", ""},
    {"proxy-authorization", ""},
    {"range", ""},
    {"referer", ""},
    {"refresh", ""},
    {"retry-after", ""},
    {"server", ""},
    {"set-cookie", ""},
    {"strict-transport-security", ""},
    {"transfer-encoding", ""},
    {"user-agent", ""},
    {"vary", ""},
    {"via", ""},
    {"www-authenticate", ""},
};

// For the first index of each name: how many consecutive entries share that
// name.
constexpr std::array<uint8_t, kStaticTableSize + 1> BuildRunLengths() {
  std::array<uint8_t, kStaticTableSize + 1> runs{};
  for (size_t i = 1; i <= kStaticTableSize; ++i) {
    size_t j = i;
    while (j <= kStaticTableSize &&
           kStaticEntries[j].name == kStaticEntries[i].name) {
      ++j;
    }
    runs[i] = static_cast<uint8_t>(j - i);
  }
  return runs;
}

inline constexpr std::array<uint8_t, kStaticTableSize + 1> kRunLengths =
    BuildRunLengths();

}  // namespace static_table_internal

class StaticTable {
 public:
  static constexpr size_t kSize = static_table_internal::kStaticTableSize;

  // Indexes the encoder's never-index policy needs (RFC 7541 Appendix A).
  static constexpr size_t kAuthorizationIndex = 23;
  static constexpr size_t kCookieIndex = 32;
  static constexpr size_t kProxyAuthorizationIndex = 49;

  // Entry `index`; requires 1 <= index <= kSize (unchecked).
  static const StaticEntry& Get(size_t index) {
    return static_table_internal::kStaticEntries[index];
  }

  // RFC 7541 section 4.1 size of entry `index`: name + value + 32.
  static size_t EntrySize(size_t index) {
    return Get(index).name.size() + Get(index).value.size() + 32;
  }

  // The lowest index whose name equals `name`, or 0 if there is none.
  static size_t FindName(std::string_view name) {
    return FindName(name, HashString(name));
  }
  // Same, with name_hash == HashString(name) already computed.
  static size_t FindName(std::string_view name, uint64_t name_hash);

  // Given name_index == FindName(name) != 0, the index of the entry equal to
  // (name, value), or 0 if there is none.
  static size_t FindValue(size_t name_index, std::string_view value) {
    const size_t end =
        name_index + static_table_internal::kRunLengths[name_index];
    for (size_t i = name_index; i < end; ++i) {
      if (Get(i).value == value) return i;
    }
    return 0;
  }

  // The index of the entry equal to (name, value), or 0 if there is none.
  static size_t FindField(std::string_view name, std::string_view value) {
    const size_t i = FindName(name);
    return i == 0 ? 0 : FindValue(i, value);
  }
};

}  // namespace hpack

#endif  // HPACK_STATIC_TABLE_H_
