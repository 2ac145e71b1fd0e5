// Huffman encoding: HuffmanEncodedLength, HuffmanEncode and
// HuffmanEncodeBounded.
//
// The encoder keeps the pending bits left-aligned in a 64-bit accumulator (the
// first pending bit in bit 63). Each code is kept left-aligned too
// (kLeftCodes), so appending one is `acc |= code >> used; used += length`:
// one shift that hangs off the running bit count, and the only chain from one
// symbol to the next is that add. A group of 4 symbols is appended this way
// when the pending bits then fit in 63 (always, for text), and the
// accumulator is stored as one big-endian 64-bit word at the current output
// octet; the position moves past the whole octets done and the 0-7 bits of
// the unfinished octet stay. A group that does not fit takes one symbol with
// its own store (7 + 30 bits always fit). The 64-bit store writes up to 8
// octets ahead of the output position; the fast loop runs only while that
// stays inside the output, and a tail with 4-octet stores finishes the last
// symbols.

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string_view>

#include "hpack/huffman/huffman.h"
#include "hpack/huffman/huffman_code_table.h"

namespace hpack {
namespace {

using huffman_internal::kHuffmanCodes;
using huffman_internal::kMinCodeLength;

constexpr std::array<uint8_t, 256> BuildCodeLengths() {
  std::array<uint8_t, 256> lengths{};
  for (int s = 0; s < 256; ++s) {
    lengths[s] = static_cast<uint8_t>(kHuffmanCodes[s].length);
  }
  return lengths;
}

constexpr std::array<uint64_t, 256> BuildLeftCodes() {
  std::array<uint64_t, 256> codes{};
  for (int s = 0; s < 256; ++s) {
    codes[s] = uint64_t{kHuffmanCodes[s].code}
               << (64 - kHuffmanCodes[s].length);
  }
  return codes;
}

// Bit length of each octet's code, dense (256 octets): HuffmanEncodedLength
// and the encoder's bit count.
constexpr std::array<uint8_t, 256> kCodeLengths = BuildCodeLengths();
// Each octet's code left-aligned: code << (64 - length).
constexpr std::array<uint64_t, 256> kLeftCodes = BuildLeftCodes();

inline void StoreBigEndian64(uint8_t* p, uint64_t v) {
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
  v = __builtin_bswap64(v);
#endif
  std::memcpy(p, &v, sizeof(v));
}

inline void StoreBigEndian32(uint8_t* p, uint32_t v) {
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
  v = __builtin_bswap32(v);
#endif
  std::memcpy(p, &v, sizeof(v));
}

constexpr size_t kGroup = 4;
// While this many symbols are left (the current group or symbol included), at
// least 65 bits of encoding follow the octet of the next store, so its 8
// octets stay inside an output of HuffmanEncodedLength(in) octets.
constexpr size_t kFastTailSymbols = 13;
static_assert(kFastTailSymbols * kMinCodeLength > 64,
              "the fast store would overrun");

// Stores the pending bits `a` (`u` of them, at most 63) at *o, moves *o past
// the whole octets and keeps the rest in *acc and *used.
__attribute__((always_inline)) inline void Flush(uint64_t a, unsigned u,
                                                 uint64_t* acc, unsigned* used,
                                                 uint8_t** o) {
  StoreBigEndian64(*o, a);
  *o += u >> 3;
  *acc = a << (u & 56);
  *used = u & 7;
}

// Appends src[0, kGroup) and stores 8 octets at *o when the pending bits then
// fit in 63 (*used <= 7 on entry); otherwise does nothing and returns false.
__attribute__((always_inline)) inline bool EncodeGroup(const uint8_t* src,
                                                       uint64_t* acc,
                                                       unsigned* used,
                                                       uint8_t** o) {
  const unsigned u0 = *used;
  const unsigned u1 = u0 + kCodeLengths[src[0]];
  const unsigned u2 = u1 + kCodeLengths[src[1]];
  const unsigned u3 = u2 + kCodeLengths[src[2]];
  const unsigned u4 = u3 + kCodeLengths[src[3]];
  if (u4 > 63) return false;
  // The four shifts depend only on the bit counts, not on each other.
  const uint64_t a = *acc |
                     ((kLeftCodes[src[0]] >> u0) | (kLeftCodes[src[1]] >> u1)) |
                     ((kLeftCodes[src[2]] >> u2) | (kLeftCodes[src[3]] >> u3));
  Flush(a, u4, acc, used, o);
  return true;
}

// Appends one symbol and stores 8 octets at *o (*used <= 7 on entry, and
// 7 + 30 bits fit).
__attribute__((always_inline)) inline void EncodeOne(uint8_t sym, uint64_t* acc,
                                                     unsigned* used,
                                                     uint8_t** o) {
  Flush(*acc | (kLeftCodes[sym] >> *used), *used + kCodeLengths[sym], acc, used,
        o);
}

// Encodes `in` into out[0, max_len). Returns the octets written, or 0 when the
// encoding needs more than max_len octets. Writes nothing at or past out +
// max_len, and (when max_len is unbounded) nothing past the encoded length.
size_t Encode(std::string_view in, uint8_t* out, size_t max_len) {
  const auto* src = reinterpret_cast<const uint8_t*>(in.data());
  const size_t n = in.size();
  // The top `used` bits of `acc` are output not yet stored for good; the bits
  // below them are 0.
  uint64_t acc = 0;
  unsigned used = 0;  // 0-7 between stores.
  size_t pos = 0;     // Output octets complete; pos <= max_len throughout.
  size_t i = 0;

  // Each store writes out[pos, pos + 8): inside the encoding while
  // kFastTailSymbols symbols are left, and inside max_len by the check.
  // The encoding never takes more than 4 octets per symbol (30-bit codes), so
  // this keeps `out + max_len` a real pointer when max_len is unbounded.
  max_len = std::min(max_len, 4 * n);
  if (n >= kFastTailSymbols && max_len >= 8) {
    const uint8_t* p = src;
    const uint8_t* const p_end = src + (n - kFastTailSymbols);
    uint8_t* o = out;
    uint8_t* const o_end = out + (max_len - 8);
    while (p <= p_end && o <= o_end) {
      if (EncodeGroup(p, &acc, &used, &o)) {
        p += kGroup;
      } else {
        EncodeOne(*p++, &acc, &used, &o);
      }
    }
    i = static_cast<size_t>(p - src);
    pos = static_cast<size_t>(o - out);
  }
  // Tail: 32 bits at a time, each store only of complete octets, so nothing
  // is written past the encoding. `used` stays below 32 between symbols, so
  // acc never holds more than 31 + 30 bits.
  for (; i < n; ++i) {
    acc |= kLeftCodes[src[i]] >> used;
    used += kCodeLengths[src[i]];
    if (used >= 32) {
      if (max_len - pos < 4) return 0;
      StoreBigEndian32(out + pos, static_cast<uint32_t>(acc >> 32));
      pos += 4;
      acc <<= 32;
      used -= 32;
    }
  }
  // The last 0-31 bits: whole octets, then the padded one.
  const size_t last = (used + 7) >> 3;
  if (max_len - pos < last) return 0;
  acc |= ~uint64_t{0} >> used;  // Padding: the top bits of EOS, all 1s.
  for (size_t k = 0; k < last; ++k) {
    out[pos++] = static_cast<uint8_t>(acc >> (56 - 8 * k));
  }
  return pos;
}

// Like Encode, but out[max_len, max_len + kHuffmanEncodeSlack) may be written
// too (junk), so the 8-octet stores run to the end of the string: no tail
// loop. Every store is at pos <= max_len (checked before it), so it ends by
// max_len + 8.
size_t EncodeWithSlack(std::string_view in, uint8_t* out, size_t max_len) {
  static_assert(kHuffmanEncodeSlack >= 8, "one 8-octet store past max_len");
  const auto* src = reinterpret_cast<const uint8_t*>(in.data());
  const size_t n = in.size();
  const uint8_t* const end = src + n;
  uint8_t* const o_max = out + max_len;
  uint64_t acc = 0;
  unsigned used = 0;
  const uint8_t* p = src;
  uint8_t* o = out;
  if (n >= kGroup) {
    const uint8_t* const group_end = end - kGroup;
    while (p <= group_end) {
      if (o > o_max) return 0;
      if (EncodeGroup(p, &acc, &used, &o)) {
        p += kGroup;
      } else {
        EncodeOne(*p++, &acc, &used, &o);
      }
    }
  }
  // The last 0-3 symbols are appended without a store while the pending
  // bits fit in 63 (always, for text), then one store ends the string: its
  // whole octets, and the unfinished one padded with 1s.
  for (; p < end; ++p) {
    const unsigned u = used + kCodeLengths[*p];
    if (u > 63) {
      if (o > o_max) return 0;
      Flush(acc, used, &acc, &used, &o);
    }
    acc |= kLeftCodes[*p] >> used;
    used += kCodeLengths[*p];
  }
  if (o > o_max) return 0;
  StoreBigEndian64(o, acc | (~uint64_t{0} >> used));  // used <= 63
  o += (used + 7) >> 3;
  return o <= o_max ? static_cast<size_t>(o - out) : 0;
}

}  // namespace

size_t HuffmanEncodedLength(std::string_view in) {
  const auto* p = reinterpret_cast<const uint8_t*>(in.data());
  const size_t n = in.size();
  // Four independent sums so the adds do not wait on each other.
  size_t b0 = 0, b1 = 0, b2 = 0, b3 = 0;
  size_t i = 0;
  for (; i + 4 <= n; i += 4) {
    b0 += kCodeLengths[p[i]];
    b1 += kCodeLengths[p[i + 1]];
    b2 += kCodeLengths[p[i + 2]];
    b3 += kCodeLengths[p[i + 3]];
  }
  for (; i < n; ++i) b0 += kCodeLengths[p[i]];
  return (b0 + b1 + b2 + b3 + 7) >> 3;
}

size_t HuffmanEncode(std::string_view in, uint8_t* out) {
  return Encode(in, out, std::numeric_limits<size_t>::max());
}

size_t HuffmanEncodeBounded(std::string_view in, uint8_t* out, size_t max_len) {
  return Encode(in, out, max_len);
}

size_t HuffmanEncodeBoundedWithSlack(std::string_view in, uint8_t* out,
                                     size_t max_len) {
  return EncodeWithSlack(in, out, max_len);
}

}  // namespace hpack
