#include "hpack/field_validation.h"

#include <cstring>

namespace hpack {
namespace {

constexpr uint64_t kOnes = 0x0101010101010101ull;
constexpr uint64_t kHighBits = 0x8080808080808080ull;

// 0x80 in each octet of `w` that is 'A'..'Z', 0 elsewhere. Octets >= 0x80 never
// match; clearing bit 7 first keeps each octet's additions from carrying into
// its neighbour.
inline uint64_t UpperMask(uint64_t w) {
  const uint64_t low7 = w & ~kHighBits;
  // Bit 7 of an octet set iff it is >= 'A', and iff it is > 'Z'.
  const uint64_t ge_a = low7 + (0x80 - 'A') * kOnes;
  const uint64_t gt_z = low7 + (0x80 - 'Z' - 1) * kOnes;
  return ge_a & ~gt_z & ~w & kHighBits;
}

inline uint64_t Load(const char* p) {
  uint64_t w;
  std::memcpy(&w, p, 8);
  return w;
}

inline bool IsUpper(char c) { return c >= 'A' && c <= 'Z'; }

void LowerInPlace(char* p, size_t n) {
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    uint64_t w = Load(p + i);
    w |= UpperMask(w) >> 2;  // 0x80 >> 2 == 0x20, the ASCII case bit.
    std::memcpy(p + i, &w, 8);
  }
  for (; i < n; ++i) {
    if (IsUpper(p[i])) p[i] = static_cast<char>(p[i] | 0x20);
  }
}

}  // namespace

bool HasUpperAscii(std::string_view s) {
  const char* p = s.data();
  const size_t n = s.size();
  uint64_t acc = 0;
  size_t i = 0;
  for (; i + 8 <= n; i += 8) acc |= UpperMask(Load(p + i));
  if (i < n) {
    uint64_t tail = 0;  // Zero octets are not uppercase.
    std::memcpy(&tail, p + i, n - i);
    acc |= UpperMask(tail);
  }
  return acc != 0;
}

std::string_view ToLowerAscii(std::string_view in, std::string* storage) {
  if (!HasUpperAscii(in)) return in;
  storage->assign(in.data(), in.size());
  LowerInPlace(storage->data(), storage->size());
  return *storage;
}

void ToLowerAsciiInPlace(std::string* s) { LowerInPlace(s->data(), s->size()); }

}  // namespace hpack
