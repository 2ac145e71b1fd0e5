// RFC 9113 section 8.2.1 field validity, and ASCII lowercasing of field names.
//
// Both checks run one 256-entry flag table over the string, OR-ing the flags of
// every octet into an accumulator that is tested once at the end: no
// per-character branch, so the loop is a load and an OR per octet whatever the
// input.
//
// Names: one or more lowercase token characters (RFC 9110 section 5.6.2 tchar,
// minus 'A'-'Z'), optionally preceded by a single ':' (a pseudo-header, RFC
// 9113 section 8.3). This rejects everything RFC 9113 8.2.1 forbids (0x00-0x20,
// 'A'-'Z', 0x7f-0xff, and ':' past the first octet) plus the separators HTTP
// never allows in a name ("(),/;<=>?@[\]{}).
//
// Values: no NUL, CR or LF anywhere, and no SP or HTAB as the first or last
// octet. Other octets, including obs-text (0x80-0xff) and other controls, are
// accepted, as RFC 9113 requires of every implementation and no more.

#ifndef HPACK_FIELD_VALIDATION_H_
#define HPACK_FIELD_VALIDATION_H_

#include <cstdint>
#include <string>
#include <string_view>

namespace hpack {

// Validation outcome of one field, as stored in dynamic table entries
// (DynamicTable flags) by the decoder: 0 when valid, else which part failed.
enum FieldValidity : uint8_t {
  kFieldValid = 0,
  kFieldNameInvalid = 1,
  kFieldValueInvalid = 2,
};

namespace field_validation_internal {

enum CharFlags : uint8_t {
  kNotNameChar = 1,   // Not allowed in a (lowercase) field name.
  kNotValueChar = 2,  // NUL, CR, LF: never allowed in a field value.
  kEdgeSpace = 4,     // SP, HTAB: not allowed first or last in a value.
  kUpper = 8,         // 'A'..'Z'.
};

constexpr bool IsLowerTchar(unsigned c) {
  if (c >= 'a' && c <= 'z') return true;
  if (c >= '0' && c <= '9') return true;
  switch (c) {
    case '!':
    case '#':
    case '$':
    case '%':
    case '&':
    case '\'':
    case '*':
    case '+':
    case '-':
    case '.':
    case '^':
    case '_':
    case '`':
    case '|':
    case '~':
      return true;
    default:
      return false;
  }
}

struct CharTable {
  uint8_t flags[256];
};

constexpr CharTable BuildCharTable() {
  CharTable t{};
  for (unsigned c = 0; c < 256; ++c) {
    uint8_t f = 0;
    if (!IsLowerTchar(c)) f |= kNotNameChar;
    if (c == 0 || c == '\r' || c == '\n') f |= kNotValueChar;
    if (c == ' ' || c == '\t') f |= kEdgeSpace;
    if (c >= 'A' && c <= 'Z') f |= kUpper;
    t.flags[c] = f;
  }
  return t;
}

inline constexpr CharTable kCharTable = BuildCharTable();

inline uint8_t AccumulateFlags(const char* p, size_t n) {
  uint8_t acc = 0;
  for (size_t i = 0; i < n; ++i)
    acc |= kCharTable.flags[static_cast<uint8_t>(p[i])];
  return acc;
}

}  // namespace field_validation_internal

// True if `name` is a valid HTTP/2 field name (see above). The empty name and a
// lone ":" are invalid.
inline bool IsValidFieldName(std::string_view name) {
  namespace fv = field_validation_internal;
  const size_t skip = (!name.empty() && name[0] == ':') ? 1 : 0;
  if (name.size() == skip) return false;
  return (fv::AccumulateFlags(name.data() + skip, name.size() - skip) &
          fv::kNotNameChar) == 0;
}

// True if `value` is a valid HTTP/2 field value (see above). The empty value is
// valid.
inline bool IsValidFieldValue(std::string_view value) {
  namespace fv = field_validation_internal;
  if (value.empty()) return true;
  const uint8_t body = fv::AccumulateFlags(value.data(), value.size());
  const uint8_t edges =
      fv::kCharTable.flags[static_cast<uint8_t>(value.front())] |
      fv::kCharTable.flags[static_cast<uint8_t>(value.back())];
  return ((body & fv::kNotValueChar) | (edges & fv::kEdgeSpace)) == 0;
}

// kFieldValid, or the FieldValidity bits of the parts that are invalid.
inline uint8_t ValidateField(std::string_view name, std::string_view value) {
  return (IsValidFieldName(name) ? 0 : kFieldNameInvalid) |
         (IsValidFieldValue(value) ? 0 : kFieldValueInvalid);
}

// True if `s` contains an octet in 'A'..'Z'. Scans 8 octets per step.
bool HasUpperAscii(std::string_view s);

// `in` with 'A'..'Z' mapped to 'a'..'z' and every other octet unchanged. When
// `in` has no uppercase octet (the common case) returns `in` itself: no copy,
// *storage untouched. Otherwise writes the lowercased copy to *storage (reusing
// its capacity) and returns a view of it, valid until *storage changes.
std::string_view ToLowerAscii(std::string_view in, std::string* storage);

// Lowercases *s in place.
void ToLowerAsciiInPlace(std::string* s);

}  // namespace hpack

#endif  // HPACK_FIELD_VALIDATION_H_
