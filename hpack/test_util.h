// Test helpers (testonly): hex conversion and header list construction.

#ifndef HPACK_TEST_UTIL_H_
#define HPACK_TEST_UTIL_H_

#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "hpack/header_list.h"
#include "hpack/varint.h"

namespace hpack {
namespace testing {

// "82 86 8441" -> the octets 0x82 0x86 0x84 0x41. Spaces are ignored; anything
// else that is not a hex digit aborts (a typo in a test vector must not pass
// silently).
inline std::string HexToBytes(std::string_view hex) {
  std::string digits;
  for (char c : hex) {
    if (c == ' ' || c == '\n') continue;
    const bool ok = (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') ||
                    (c >= 'A' && c <= 'F');
    if (!ok) std::abort();
    digits.push_back(c);
  }
  if (digits.size() % 2 != 0) std::abort();
  std::string out;
  for (size_t i = 0; i < digits.size(); i += 2) {
    out.push_back(
        static_cast<char>(std::stoi(digits.substr(i, 2), nullptr, 16)));
  }
  return out;
}

inline std::string BytesToHex(std::string_view bytes) {
  static const char kDigits[] = "0123456789abcdef";
  std::string out;
  for (unsigned char c : bytes) {
    out.push_back(kDigits[c >> 4]);
    out.push_back(kDigits[c & 15]);
  }
  return out;
}

using Fields = std::vector<std::pair<std::string, std::string>>;

// The list's (name, value) pairs, for EXPECT_EQ with readable failure output.
inline Fields ToFields(const HeaderList& list) {
  Fields out;
  for (const HeaderField f : list)
    out.emplace_back(std::string(f.name), std::string(f.value));
  return out;
}

// HeaderFields viewing `fields` (which must outlive the result).
inline std::vector<HeaderField> ToHeaderFields(const Fields& fields) {
  std::vector<HeaderField> out;
  for (const auto& [name, value] : fields)
    out.push_back(HeaderField{name, value});
  return out;
}

// Wire pieces for decoder tests: an RFC 7541 integer with `high_bits` in the
// first octet, a raw (not Huffman) string literal, and a literal field with
// incremental indexing and a literal name.
inline std::string Varint(uint64_t value, int prefix_bits, uint8_t high_bits) {
  uint8_t out[kMaxVarintEncodedLength];
  return std::string(reinterpret_cast<char*>(out),
                     EncodeVarint(value, prefix_bits, high_bits, out));
}
inline std::string Str(const std::string& s) {
  return Varint(s.size(), 7, 0) + s;
}
inline std::string LiteralIndexed(const std::string& name,
                                  const std::string& value) {
  return "\x40" + Str(name) + Str(value);
}

}  // namespace testing
}  // namespace hpack

#endif  // HPACK_TEST_UTIL_H_
