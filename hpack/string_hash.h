// Fast 64-bit string hashing and equality for the HPACK encoder's table
// lookups.
//
// One function, usable both at compile time (the static table's name index is
// built from it) and at run time (the encoder hashes each field's name and
// value once and reuses the hashes for the static table, the dynamic table's
// name index and its name+value index).
//
// Not a cryptographic or DoS-resistant hash: every lookup that matches a hash
// also compares the bytes, so a collision only costs compression, never
// correctness. The decoder does not hash at all.

#ifndef HPACK_STRING_HASH_H_
#define HPACK_STRING_HASH_H_

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string_view>

namespace hpack {
namespace hash_internal {

static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__,
              "the byte-assembled loads below assume a little-endian target");

inline constexpr uint64_t kK0 = 0xa0761d6478bd642full;
inline constexpr uint64_t kK1 = 0xe7037ed1a0b428dbull;
inline constexpr uint64_t kK2 = 0x8ebc6af09c88c6e3ull;

// 64x64 -> 128-bit multiply, folded: one `mul` instruction on x86-64 and arm64.
constexpr uint64_t Mix(uint64_t a, uint64_t b) {
  const unsigned __int128 r = static_cast<unsigned __int128>(a) * b;
  return static_cast<uint64_t>(r) ^ static_cast<uint64_t>(r >> 64);
}

// Byte-assembled little-endian loads: constexpr-friendly, and compiled to
// single loads.
constexpr uint64_t Load32(const char* p) {
  return static_cast<uint64_t>(static_cast<uint8_t>(p[0])) |
         static_cast<uint64_t>(static_cast<uint8_t>(p[1])) << 8 |
         static_cast<uint64_t>(static_cast<uint8_t>(p[2])) << 16 |
         static_cast<uint64_t>(static_cast<uint8_t>(p[3])) << 24;
}

constexpr uint64_t Load64(const char* p) {
  return Load32(p) | Load32(p + 4) << 32;
}

}  // namespace hash_internal

// Hash of an arbitrary byte string. Reads every byte exactly within [s.data(),
// s.data() + s.size()); strings of up to 16 octets take two loads and two
// multiplies.
constexpr uint64_t HashString(std::string_view s) {
  using hash_internal::kK0;
  using hash_internal::kK1;
  using hash_internal::Load32;
  using hash_internal::Load64;
  using hash_internal::Mix;
  const char* p = s.data();
  const size_t n = s.size();
  uint64_t seed = kK0 ^ n;
  uint64_t a = 0;
  uint64_t b = 0;
  if (n <= 16) {
    if (n >= 8) {
      a = Load64(p);
      b = Load64(p + n - 8);
    } else if (n >= 4) {
      a = Load32(p);
      b = Load32(p + n - 4);
    } else if (n > 0) {
      a = static_cast<uint64_t>(static_cast<uint8_t>(p[0])) << 16 |
          static_cast<uint64_t>(static_cast<uint8_t>(p[n >> 1])) << 8 |
          static_cast<uint64_t>(static_cast<uint8_t>(p[n - 1]));
    }
  } else {
    size_t left = n;
    while (left > 16) {
      seed = Mix(Load64(p) ^ kK1, Load64(p + 8) ^ seed);
      p += 16;
      left -= 16;
    }
    a = Load64(p + left - 16);
    b = Load64(p + left - 8);
  }
  return Mix(kK1 ^ n, Mix(a ^ kK1, b ^ seed));
}

// a == b, inline: up to 16 octets by two overlapping loads per side, up to 48
// by 16 octets a step and the last 16 again, longer by memcmp. The encoder's
// answer cache is mostly these compares; inline, EncodeGrpcSteadyState went
// from 803 to 767 Ir (memcmp's call and dispatch cost more than the loop for
// header-sized strings), and past 48 octets memcmp is cheaper again
// (EncodeRequestSteadyState 1,622 Ir with the loop at every length, 1,534).
__attribute__((always_inline)) inline bool BytesEqual(std::string_view a,
                                                      std::string_view b) {
  using hash_internal::Load32;
  using hash_internal::Load64;
  const size_t n = a.size();
  if (n != b.size()) return false;
  const char* p = a.data();
  const char* q = b.data();
  if (n >= 8) {
    if (n > 16) {
      if (n > 48) return std::memcmp(p, q, n) == 0;
      uint64_t diff = 0;
      for (size_t i = 0; i + 16 < n; i += 16) {
        diff |= (Load64(p + i) ^ Load64(q + i)) |
                (Load64(p + i + 8) ^ Load64(q + i + 8));
      }
      return (diff | (Load64(p + n - 16) ^ Load64(q + n - 16)) |
              (Load64(p + n - 8) ^ Load64(q + n - 8))) == 0;
    }
    return ((Load64(p) ^ Load64(q)) |
            (Load64(p + n - 8) ^ Load64(q + n - 8))) == 0;
  }
  if (n >= 4) {
    return ((Load32(p) ^ Load32(q)) |
            (Load32(p + n - 4) ^ Load32(q + n - 4))) == 0;
  }
  if (n == 0) return true;
  return (p[0] == q[0]) & (p[n >> 1] == q[n >> 1]) & (p[n - 1] == q[n - 1]);
}

// Hash of a (name, value) pair from the two strings' hashes.
constexpr uint64_t HashField(uint64_t name_hash, uint64_t value_hash) {
  return hash_internal::Mix(name_hash ^ hash_internal::kK2,
                            value_hash ^ hash_internal::kK0);
}

}  // namespace hpack

#endif  // HPACK_STRING_HASH_H_
