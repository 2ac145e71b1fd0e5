// RFC 9113 section 8.2.1 field validity, and ASCII lowercasing of field names.
//
// Both checks are defined by one 256-entry flag table run over the string,
// OR-ing the flags of every octet into an accumulator that is tested once at
// the end (no per-character branch). Faster routes to the same answers, held
// equal to the table by the tests: with SSE2, values of 4 octets or more in
// 16 lanes per step (compares for NUL/CR/LF; under 16 octets, overlapping
// loads fill the lanes), and names of 4 octets or more made only of 'a'..'z',
// '0'..'9' and '-' (nearly all) the same way, every other name through the
// table; without SSE2, values 8 octets per step (word tests), names by the
// table.
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

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

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
  for (size_t i = 0; i < n; ++i) {
    acc |= kCharTable.flags[static_cast<uint8_t>(p[i])];
  }
  return acc;
}

// The definition of a valid value, straight from the table: one lookup per
// octet. IsValidFieldValue is a faster route to the same answer (the tests
// hold them equal on every octet at every position of many lengths).
inline bool IsValidFieldValueByTable(std::string_view value) {
  if (value.empty()) return true;
  const uint8_t body = AccumulateFlags(value.data(), value.size());
  const uint8_t edges = kCharTable.flags[static_cast<uint8_t>(value.front())] |
                        kCharTable.flags[static_cast<uint8_t>(value.back())];
  return ((body & kNotValueChar) | (edges & kEdgeSpace)) == 0;
}

inline constexpr uint64_t kOnes = 0x0101010101010101ull;
inline constexpr uint64_t kHighBits = 0x8080808080808080ull;

inline uint64_t LoadWord(const char* p) {
  uint64_t w;
  std::memcpy(&w, p, sizeof(w));
  return w;
}

// Nonzero iff some octet of `w` is NUL, CR or LF: the kNotValueChar octets,
// 8 at a time. (x - kOnes) & ~x & kHighBits is nonzero iff some octet of x is
// 0 (the lowest zero octet always sets its bit 7; borrows only add false bits
// above it, which do not change "any").
inline uint64_t NotValueOctets(uint64_t w) {
  const uint64_t cr = w ^ ('\r' * kOnes);
  const uint64_t lf = w ^ ('\n' * kOnes);
  return ((w - kOnes) & ~w) | ((cr - kOnes) & ~cr) | ((lf - kOnes) & ~lf);
}
static_assert(kNotValueChar == 2, "NotValueOctets tests exactly NUL, CR, LF");

#if defined(__SSE2__)
// 1 bits for the octets of `w` that are 'a'..'z', '0'..'9' or '-': the octets
// of nearly every name (a subset of the valid ones). Octets >= 0x80 are
// negative in the signed compares, so they never match.
inline int CommonNameOctets16(__m128i w) {
  const auto in = [w](char lo, char hi) {
    return _mm_and_si128(_mm_cmpgt_epi8(w, _mm_set1_epi8(lo - 1)),
                         _mm_cmplt_epi8(w, _mm_set1_epi8(hi + 1)));
  };
  return _mm_movemask_epi8(
      _mm_or_si128(_mm_or_si128(in('a', 'z'), in('0', '9')),
                   _mm_cmpeq_epi8(w, _mm_set1_epi8('-'))));
}

// The octets of p[0, n) (4 <= n < 16) in 16 lanes, read from exactly that
// range: two overlapping 8-octet loads, or under 8 two overlapping 4-octet
// loads, twice. Every lane holds one of the n octets and each octet is in
// some lane.
inline __m128i LoadShort16(const char* p, size_t n) {
  uint64_t head;
  uint64_t tail;
  if (n >= 8) {
    std::memcpy(&head, p, 8);
    std::memcpy(&tail, p + n - 8, 8);
  } else {
    uint32_t a;
    uint32_t b;
    std::memcpy(&a, p, 4);
    std::memcpy(&b, p + n - 4, 4);
    head = uint64_t{a} | (uint64_t{b} << 32);
    tail = head;
  }
  return _mm_set_epi64x(static_cast<long long>(tail),
                        static_cast<long long>(head));
}

// True if every octet of p[0, n) (n >= 4) is 'a'..'z', '0'..'9' or '-':
// 16 octets per step, the last 16 overlapping; under 16, LoadShort16.
inline bool AllCommonNameOctets(const char* p, size_t n) {
  if (n >= 16) {
    int ok = CommonNameOctets16(
        _mm_loadu_si128(reinterpret_cast<const __m128i*>(p + n - 16)));
    for (size_t i = 0; i + 16 < n; i += 16) {
      ok &= CommonNameOctets16(
          _mm_loadu_si128(reinterpret_cast<const __m128i*>(p + i)));
    }
    return ok == 0xffff;
  }
  return CommonNameOctets16(LoadShort16(p, n)) == 0xffff;
}

// 0xff in the lanes of `w` that are NUL, CR or LF, 0 in the others.
inline __m128i NotValueMask(__m128i w) {
  return _mm_or_si128(_mm_cmpeq_epi8(w, _mm_setzero_si128()),
                      _mm_or_si128(_mm_cmpeq_epi8(w, _mm_set1_epi8('\r')),
                                   _mm_cmpeq_epi8(w, _mm_set1_epi8('\n'))));
}

// Nonzero iff some octet of p[0, n) (n >= 16) is NUL, CR or LF: 16 octets per
// step, the last 16 overlapping the loop's when n is not a multiple of 16.
inline int NotValueOctets16(const char* p, size_t n) {
  const auto bad = [](const char* q) {
    return NotValueMask(_mm_loadu_si128(reinterpret_cast<const __m128i*>(q)));
  };
  __m128i acc = bad(p + n - 16);
  for (size_t i = 0; i + 16 < n; i += 16) acc = _mm_or_si128(acc, bad(p + i));
  return _mm_movemask_epi8(acc);
}

#endif

// The definition of a valid name, straight from the table: one lookup per
// octet. IsValidFieldName is a faster route to the same answer (held equal by
// the tests).
inline bool IsValidFieldNameByTable(std::string_view name) {
  const size_t skip = (!name.empty() && name[0] == ':') ? 1 : 0;
  if (name.size() == skip) return false;
  return (AccumulateFlags(name.data() + skip, name.size() - skip) &
          kNotNameChar) == 0;
}

}  // namespace field_validation_internal

// True if `name` is a valid HTTP/2 field name (see above). The empty name and a
// lone ":" are invalid. With SSE2 (x86-64), a name of 4 octets or more (after
// the ':') made only of 'a'..'z', '0'..'9' and '-' is accepted with 16-octet
// compares (about 15 instructions instead of 6 per octet); any other name
// goes through the table.
inline bool IsValidFieldName(std::string_view name) {
  namespace fv = field_validation_internal;
#if defined(__SSE2__)
  const size_t skip = (!name.empty() && name[0] == ':') ? 1 : 0;
  if (name.size() - skip >= 4 &&
      fv::AllCommonNameOctets(name.data() + skip, name.size() - skip)) {
    return true;
  }
#endif
  return fv::IsValidFieldNameByTable(name);
}

// True if `value` is a valid HTTP/2 field value (see above). The empty value is
// valid. From 4 octets on, checked in 16 lanes per step with SSE2 (x86-64:
// about 12 instructions for a value under 16 octets), else 8 octets per step
// (overlapping words at the end). Always inline: the decoder's loop keeps its
// state in registers around it (a call cost it about 15 Ir per literal).
__attribute__((always_inline)) inline bool IsValidFieldValue(
    std::string_view value) {
  namespace fv = field_validation_internal;
  const char* p = value.data();
  const size_t n = value.size();
  if (n < 4) return fv::IsValidFieldValueByTable(value);
  uint64_t bad;
#if defined(__SSE2__)
  const int lanes =
      n >= 16 ? fv::NotValueOctets16(p, n)
              : _mm_movemask_epi8(fv::NotValueMask(fv::LoadShort16(p, n)));
  bad = lanes != 0 ? fv::kHighBits : 0;
#else
  if (n < 8) {
    // Two overlapping 4-octet loads cover the n octets.
    uint32_t a;
    uint32_t b;
    std::memcpy(&a, p, 4);
    std::memcpy(&b, p + n - 4, 4);
    bad = fv::NotValueOctets(uint64_t{a} | (uint64_t{b} << 32));
  } else {
    bad = 0;
    size_t i = 0;
    for (; i + 8 < n; i += 8) bad |= fv::NotValueOctets(fv::LoadWord(p + i));
    // The last 8 octets (overlapping the loop's when n is not a multiple of 8).
    bad |= fv::NotValueOctets(fv::LoadWord(p + n - 8));
  }
#endif
  const uint8_t edges = fv::kCharTable.flags[static_cast<uint8_t>(p[0])] |
                        fv::kCharTable.flags[static_cast<uint8_t>(p[n - 1])];
  return ((bad & fv::kHighBits) | (edges & fv::kEdgeSpace)) == 0;
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
