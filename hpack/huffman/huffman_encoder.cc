// Huffman encoding: HuffmanEncodedLength, HuffmanEncode and
// HuffmanEncodeBounded.
//
// The encoder keeps the pending bits right-aligned in a 64-bit accumulator.
// It appends the codes of a group of 4 symbols (at most 57 bits for any text),
// then stores the pending bits, left-aligned, as one big-endian 64-bit word at
// the current output octet and advances by the whole octets completed, keeping
// the 0-7 bits of the unfinished octet. A group whose codes are longer stores
// after each symbol (7 + 30 bits always fit). There is no data-dependent branch
// for text. The 64-bit store writes up to 8 octets ahead of the output
// position; the fast loop runs only while that stays inside the output, and a
// byte-at-a-time tail finishes the last symbols.

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

using huffman_internal::HuffmanCode;
using huffman_internal::kHuffmanCodes;
using huffman_internal::kMinCodeLength;

constexpr std::array<uint8_t, 256> BuildCodeLengths() {
  std::array<uint8_t, 256> lengths{};
  for (int s = 0; s < 256; ++s) {
    lengths[s] = static_cast<uint8_t>(kHuffmanCodes[s].length);
  }
  return lengths;
}

// Bit length of each octet's code, dense (256 octets) for HuffmanEncodedLength.
constexpr std::array<uint8_t, 256> kCodeLengths = BuildCodeLengths();

inline void StoreBigEndian64(uint8_t* p, uint64_t v) {
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
  v = __builtin_bswap64(v);
#endif
  std::memcpy(p, &v, sizeof(v));
}

// A group of kGroup symbols shares one 64-bit store when their codes total at
// most 64 - 7 bits (always, for text); otherwise each symbol gets its own
// store.
constexpr size_t kGroup = 4;
constexpr unsigned kMaxGroupBits = 64 - 7;
// While this many symbols (the current group included) are left, at least 64
// more bits of encoding follow the octet of every store the group makes, so
// those stores stay inside an output of HuffmanEncodedLength(in) octets.
constexpr size_t kFastTailSymbols = kGroup - 1 + 13;
static_assert(13 * kMinCodeLength >= 64, "the fast store would overrun");
// Output octets a group may need before its last store: up to 4 octets
// completed per symbol (7 + 30 bits), plus the 8 of the store.
constexpr size_t kGroupOutSlack = (kGroup - 1) * 4 + 8;

inline void AppendCode(HuffmanCode c, uint64_t* acc, unsigned* pending) {
  *acc = (*acc << c.length) | c.code;
  *pending += c.length;
}

// Stores the pending bits, left-aligned, at out + *pos, and moves past the
// whole octets.
inline void Flush(uint64_t acc, unsigned* pending, uint8_t* out, size_t* pos) {
  StoreBigEndian64(out + *pos, acc << (64 - *pending));
  *pos += *pending >> 3;
  *pending &= 7;
}

// Encodes src[0, kGroup) with one store (or one per symbol for long codes);
// writes out[*pos, *pos + kGroupOutSlack). Returns false, having done nothing,
// for a long-code group when kChecked and *pos + kGroupOutSlack would pass
// out + limit.
template <bool kChecked = false>
__attribute__((always_inline)) inline bool EncodeGroup(
    const uint8_t* src, uint64_t* acc, unsigned* pending, uint8_t* out,
    size_t* pos, size_t limit = 0) {
  const HuffmanCode c0 = kHuffmanCodes[src[0]];
  const HuffmanCode c1 = kHuffmanCodes[src[1]];
  const HuffmanCode c2 = kHuffmanCodes[src[2]];
  const HuffmanCode c3 = kHuffmanCodes[src[3]];
  const unsigned len01 = c0.length + c1.length;
  const unsigned len23 = c2.length + c3.length;
  if (len01 + len23 <= kMaxGroupBits) {
    // Combine in a tree so the shifts do not all wait on each other.
    const uint64_t bits01 = (uint64_t{c0.code} << c1.length) | c1.code;
    const uint64_t bits23 = (uint64_t{c2.code} << c3.length) | c3.code;
    *acc = (*acc << (len01 + len23)) | (bits01 << len23) | bits23;
    *pending += len01 + len23;
    Flush(*acc, pending, out, pos);
    return true;
  }
  if (kChecked && limit - *pos < kGroupOutSlack) return false;
  for (const HuffmanCode c : {c0, c1, c2, c3}) {
    AppendCode(c, acc, pending);
    Flush(*acc, pending, out, pos);
  }
  return true;
}

inline void StoreBigEndian32(uint8_t* p, uint32_t v) {
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
  v = __builtin_bswap32(v);
#endif
  std::memcpy(p, &v, sizeof(v));
}

// The last octet: the unfinished octet's `pending` (1-7) bits, then 1 bits
// (the most significant bits of EOS).
inline uint8_t LastOctet(uint64_t acc, unsigned pending) {
  return static_cast<uint8_t>((acc << (8 - pending)) | (0xffu >> pending));
}

// Encodes `in` into out[0, max_len). Returns the octets written, or 0 when the
// encoding needs more than max_len octets. Writes nothing at or past out +
// max_len, and (when max_len is unbounded) nothing past the encoded length.
size_t Encode(std::string_view in, uint8_t* out, size_t max_len) {
  const auto* src = reinterpret_cast<const uint8_t*>(in.data());
  const size_t n = in.size();
  // The low `pending` bits of `acc` are output not yet stored for good.
  uint64_t acc = 0;
  unsigned pending = 0;  // 0-7 between stores.
  size_t pos = 0;        // Output octets complete; pos <= max_len throughout.
  size_t i = 0;

  if (n >= kFastTailSymbols) {
    const size_t fast_end = n - kFastTailSymbols + 1;
    while (i < fast_end && max_len - pos >= kGroupOutSlack) {
      EncodeGroup(src + i, &acc, &pending, out, &pos);
      i += kGroup;
    }
  }
  // Tail: 32 bits at a time, each store only of complete octets, so nothing
  // is written past the encoding. `pending` stays below 32 between symbols,
  // so acc never holds more than 31 + 30 bits.
  for (; i < n; ++i) {
    AppendCode(kHuffmanCodes[src[i]], &acc, &pending);
    if (pending >= 32) {
      if (max_len - pos < 4) return 0;
      pending -= 32;
      StoreBigEndian32(out + pos, static_cast<uint32_t>(acc >> pending));
      pos += 4;
    }
  }
  // The last 0-31 bits: whole octets, then the padded one.
  const size_t last = (pending + 7) >> 3;
  if (max_len - pos < last) return 0;
  for (; pending >= 8; pending -= 8) {
    out[pos++] = static_cast<uint8_t>(acc >> (pending - 8));
  }
  if (pending > 0) out[pos++] = LastOctet(acc, pending);
  return pos;
}

// Like Encode, but out[max_len, max_len + kHuffmanEncodeSlack) may be written
// too (junk), so the 8-octet stores run to the end of the string: no tail
// loop. The bound is checked once per group: a store at pos <= max_len ends
// by max_len + 8.
size_t EncodeWithSlack(std::string_view in, uint8_t* out, size_t max_len) {
  static_assert(kHuffmanEncodeSlack >= 8, "one 8-octet store past max_len");
  const auto* src = reinterpret_cast<const uint8_t*>(in.data());
  const size_t n = in.size();
  uint64_t acc = 0;
  unsigned pending = 0;
  size_t pos = 0;
  size_t i = 0;
  // A text group makes one 8-octet store at pos: inside the slack while
  // pos <= max_len. A group of long codes stores after each symbol, up to
  // kGroupOutSlack octets from pos: EncodeGroup checks that against the end
  // of the slack, and otherwise the loop below takes its symbols one by one.
  const size_t limit = max_len + kHuffmanEncodeSlack;
  for (; i + kGroup <= n; i += kGroup) {
    if (pos > max_len) return 0;
    if (!EncodeGroup<true>(src + i, &acc, &pending, out, &pos, limit)) break;
  }
  for (; i < n; ++i) {
    if (pos > max_len) return 0;
    AppendCode(kHuffmanCodes[src[i]], &acc, &pending);
    Flush(acc, &pending, out, &pos);
  }
  if (pending > 0) {
    if (pos >= max_len) return 0;
    out[pos++] = LastOctet(acc, pending);
  }
  return pos <= max_len ? pos : 0;
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
