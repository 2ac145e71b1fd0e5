// Huffman decoding: HuffmanDecode and HuffmanDecodeStatusName.
//
// A string of 8 octets or more starts in the fast loop. It keeps the next
// input bits left-aligned in a 64-bit buffer and refills it branch-free with
// one unaligned big-endian 64-bit load (at least 56 valid bits after each
// refill). It makes kSteps lookups in kDecodeTable per refill, each consuming
// up to kLookupBits bits and emitting up to kMaxSymbolsPerEntry octets with
// one 16-bit store, and leaves at least kLookupBits valid bits, so that the
// next first lookup's index is taken before the refill and the refill runs
// beside that lookup's table load. Only the first lookup of an iteration
// checks for a long code (length 0): a long code in a later lookup reads
// length 0, which consumes and emits nothing, so it waits for the next
// iteration. The critical path is one 1-octet table load and two shifts per
// lookup; the refill and the symbols' load and store are off it.
//
// The loop stops once fewer than 8 octets are left to load (p > end - 8):
// after that iteration's lookups and one more, or right after a long code
// that its first lookup decoded; for a string of 8-14 octets, after the first
// iteration. It leaves 12-114 bits: the 1-7 octets not yet loaded and 4-58
// unconsumed bits of the buffer. While more than 56 are left, a window of the
// 57-64 bits from the next unconsumed one (8 octets loaded at its octet)
// takes only its unchecked lookups, or one exact long code when its first
// lookup meets one (at least 5 bits either way). The last window holds the at
// most 56 bits left: the string's last 8 octets shifted left by the bits
// already consumed, with 1s below.
//
// A string shorter than 8 octets skips all that and is one last window
// (DecodeShort: LoadShort, with 1s below). A last window makes
// valid / kLookupBits unchecked lookups, then table lookups while an entry's
// bits are all real input, and otherwise one exact code at a time with
// DecodeCanonical (DecodeLastWindowExactly) to tell a last symbol from
// padding.

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>

#include "hpack/huffman/huffman.h"
#include "hpack/huffman/huffman_code_table.h"
#include "hpack/huffman/huffman_decode_table.h"

namespace hpack {
namespace {

using huffman_internal::DecodeCanonical;
using huffman_internal::kDecodeTable;
using huffman_internal::kEosSymbol;
using huffman_internal::kLookupBits;
using huffman_internal::kMaxCodeLength;
using huffman_internal::kMaxSymbolsPerEntry;
using huffman_internal::kMinCodeLength;

// Lookups per refill in the fast loop. A refill leaves at least 56 bits, and
// the lookups after it leave at least kLookupBits of them for the next
// iteration's first lookup, which is made before that iteration's refill.
constexpr int kSteps = (56 - kLookupBits) / kLookupBits;
static_assert(kSteps >= 1 && (kSteps + 1) * kLookupBits < 64,
              "summed entries' bits must not carry");
static_assert(56 >= kMaxCodeLength, "a long code after a refill");
// The output bound needs no check in an unchecked lookup (one made with at
// least kLookupBits input bits left, as every lookup of the fast loop is):
// after s symbols from at least 5s bits, with R >= kLookupBits input bits left
// of the 8 * len,
//   out_end - (out + s) = floor(8 * len / 5) - s >= (8 * len - 5s - 4) / 5
//                       >= (R - 4) / 5 >= 9 / 5,
// which is more than 1: at least 2 octets of room for the entry's 2-octet
// store. (out_end is out + HuffmanMaxDecodedLength(len).)
static_assert(kLookupBits - 4 > kMinCodeLength && kMaxSymbolsPerEntry <= 2,
              "an unchecked lookup's 2-octet store must stay inside out_end");

inline uint64_t LoadBigEndian64(const uint8_t* p) {
  uint64_t v;
  std::memcpy(&v, p, sizeof(v));
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
  v = __builtin_bswap64(v);
#endif
  return v;
}

inline uint32_t LoadBigEndian32(const uint8_t* p) {
  uint32_t v;
  std::memcpy(&v, p, sizeof(v));
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
  v = __builtin_bswap32(v);
#endif
  return v;
}

// Stores both symbol octets of an entry, the first symbol first (the second is
// junk when the entry has one symbol).
inline void StoreSymbols(uint8_t* p, uint16_t symbols) {
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
  symbols = __builtin_bswap16(symbols);
#endif
  std::memcpy(p, &symbols, sizeof(symbols));
}

inline unsigned EntryBits(unsigned length) { return length & 63; }
inline unsigned EntrySymbols(unsigned length) { return length >> 6; }

// Refills *bits to 56-63 valid bits from the 8 octets at *p, the octet where
// its *avail valid bits end, and moves *p past the octets now counted.
inline void Refill(uint64_t* bits, const uint8_t** p, unsigned* avail) {
  *bits |= LoadBigEndian64(*p) >> *avail;
  *p += (63 - *avail) >> 3;
  *avail |= 56;
}

// One unchecked lookup: emits the entry's symbols and consumes its bits from
// *bits; adds the raw entry to *entries (see the fast loop).
__attribute__((always_inline)) inline void DecodeStep(uint64_t* bits,
                                                      uint8_t** o,
                                                      unsigned* entries) {
  const uint64_t index = *bits >> (64 - kLookupBits);
  const unsigned e = kDecodeTable.length[index];
  *entries += e;
  StoreSymbols(*o, kDecodeTable.symbols[index]);
  *o += EntrySymbols(e);
  *bits <<= EntryBits(e);
}

// The `len` (1..7) octets of a short string, big-endian in the high octets of
// the result, and 1 bits below them. Reads only [in, in + len).
inline uint64_t LoadShort(const uint8_t* in, size_t len) {
  const unsigned shift = static_cast<unsigned>(8 - len) * 8;  // 8..56
  const uint64_t fill = (uint64_t{1} << shift) - 1;           // 1s below
  const uint8_t* const end = in + len;
  uint64_t w;
  if (len >= 4) {
    // Two overlapping 4-octet loads; the overlap ORs equal bits.
    w = (uint64_t{LoadBigEndian32(in)} << 32) |
        (uint64_t{LoadBigEndian32(end - 4)} << shift);
  } else {
    // 1-3 octets: the first, middle and last (some may coincide).
    w = (uint64_t{in[0]} << 56) |
        (uint64_t{in[len >> 1]} << (56 - 8 * (len >> 1))) |
        (uint64_t{end[-1]} << shift);
  }
  return w | fill;
}

// The first valid / kLookupBits lookups of a window, taken unchecked as in
// the fast loop: each entry's bits are input, and a long code reads length 0,
// which consumes and emits nothing (DecodeChecked's caller takes it). Each has
// at least kLookupBits input bits left, so its 2-octet store stays inside the
// output (see the static_assert above).
__attribute__((always_inline)) inline void DecodeUnchecked(uint64_t* w,
                                                           unsigned* valid,
                                                           uint8_t** o) {
  unsigned n = *valid / kLookupBits;  // 0..4
  if (n == 0) return;
  unsigned entries = 0;  // Summed as in the fast loop.
  do {
    DecodeStep(w, o, &entries);
  } while (--n > 0);
  *valid -= EntryBits(entries);
}

// One lookup of the `valid` input bits at the top of *w, used only when all
// the entry's bits are input (used <= valid), which makes it exact; returns
// false, doing nothing, otherwise. When at least 8 bits of 1s follow the
// input, as in a last window, and since no code of at most kLookupBits is all
// 1s (it would be a prefix of EOS), that fails for well-formed input only for
// a long code (used == 0), at the padding, and now and then for a two-symbol
// entry at the very end.
__attribute__((always_inline)) inline bool DecodeChecked(uint64_t* w,
                                                         unsigned* valid,
                                                         uint8_t** o) {
  const uint64_t index = *w >> (64 - kLookupBits);
  const unsigned e = kDecodeTable.length[index];
  const unsigned used = EntryBits(e);
  if (used - 1 >= *valid) return false;
  // All the entry's 1-2 symbols are real, so both stores are inside the
  // output with no bound to check: the first symbol at o[0], the last at
  // o[n - 1] (the same octet when n == 1). Storing both octets of a
  // one-symbol entry could pass the end of the output by one.
  static_assert(kLookupBits < 16 && kMaxSymbolsPerEntry <= 2,
                "(e >> 4) & 8 is 8 for two symbols, else 0");
  const unsigned symbols = kDecodeTable.symbols[index];
  (*o)[0] = static_cast<uint8_t>(symbols);
  *o += EntrySymbols(e);
  (*o)[-1] = static_cast<uint8_t>(symbols >> ((e >> 4) & 8));
  *w <<= used;
  *valid -= used;
  return true;
}

// True at the well-formed end of a last window: at most 7 bits left, all 1s
// (with the 1s below them, the top octet is all 1s).
inline bool OnlyPaddingLeft(uint64_t w, unsigned valid) {
  return valid <= 7 && (w >> 56) == 0xff;
}

// DecodeLastWindow's arguments and result (below), from a lookup that was
// not exact and not at the padding: a long code, a two-symbol entry whose
// second code passes the end, or bad input. Out of line so that the common
// path keeps fewer registers (5 fewer pushes and pops on a short string).
__attribute__((noinline)) HuffmanDecodeStatus DecodeLastWindowExactly(
    uint64_t w, unsigned valid, uint8_t* o, uint8_t* out, size_t* out_len) {
  do {
    // Decode one code exactly.
    int code_len = 0;
    const int sym = DecodeCanonical(static_cast<uint32_t>(w >> 32),
                                    kMinCodeLength, &code_len);
    if (static_cast<unsigned>(code_len) > valid) {
      // The last `valid` bits are no complete code: they are padding, and
      // not all 1s when at most 7 (OnlyPaddingLeft was false).
      return valid > 7 ? HuffmanDecodeStatus::kPaddingTooLong
                       : HuffmanDecodeStatus::kPaddingNotOnes;
    }
    if (sym == kEosSymbol) return HuffmanDecodeStatus::kEosInData;
    *o++ = static_cast<uint8_t>(sym);
    w <<= code_len;
    valid -= code_len;
    while (DecodeChecked(&w, &valid, &o)) {
    }
  } while (!OnlyPaddingLeft(w, valid));
  *out_len = static_cast<size_t>(o - out);
  return HuffmanDecodeStatus::kOk;
}

// Decodes the last window of a string: `w` holds its last `valid` (at most
// 56) input bits from the first unconsumed one, first in bit 63, with at least
// 8 bits of 1s below them. Symbols go to `o`; on kOk sets *out_len to the
// octets from `out`.
__attribute__((always_inline)) inline HuffmanDecodeStatus DecodeLastWindow(
    uint64_t w, unsigned valid, uint8_t* o, uint8_t* out, size_t* out_len) {
  DecodeUnchecked(&w, &valid, &o);
  while (DecodeChecked(&w, &valid, &o)) {
  }
  if (!OnlyPaddingLeft(w, valid)) {
    return DecodeLastWindowExactly(w, valid, o, out, out_len);
  }
  *out_len = static_cast<size_t>(o - out);
  return HuffmanDecodeStatus::kOk;
}

// HuffmanDecode of a string shorter than 8 octets: one last window. Kept out
// of line so that the short strings, most of a header block's, do not pay for
// the fast loop's registers.
__attribute__((noinline)) HuffmanDecodeStatus DecodeShort(const uint8_t* in,
                                                          size_t len,
                                                          uint8_t* out,
                                                          size_t* out_len) {
  if (len == 0) {
    *out_len = 0;
    return HuffmanDecodeStatus::kOk;
  }
  return DecodeLastWindow(LoadShort(in, len), static_cast<unsigned>(len) * 8,
                          out, out, out_len);
}

}  // namespace

const char* HuffmanDecodeStatusName(HuffmanDecodeStatus s) {
  switch (s) {
    case HuffmanDecodeStatus::kOk:
      return "kOk";
    case HuffmanDecodeStatus::kEosInData:
      return "kEosInData";
    case HuffmanDecodeStatus::kPaddingTooLong:
      return "kPaddingTooLong";
    case HuffmanDecodeStatus::kPaddingNotOnes:
      return "kPaddingNotOnes";
  }
  return "unknown HuffmanDecodeStatus";
}

HuffmanDecodeStatus HuffmanDecode(const uint8_t* in, size_t len, uint8_t* out,
                                  size_t* out_len) {
  if (len < 8) return DecodeShort(in, len, out, out_len);
  const uint8_t* const end = in + len;
  // The last position of a refill's 8-octet load (len >= 8 here).
  const uint8_t* const last_load = end - 8;
  uint8_t* o = out;
  // Input bits, first bit in bit 63. The top `avail` bits are the input from
  // the current position on; bits below them are either later input or 0.
  uint64_t bits = LoadBigEndian64(in);
  unsigned avail = 56;
  const uint8_t* p = in + 7;  // Next octet not yet counted in `avail`.

  // Each iteration's first lookup is made from at least kLookupBits valid
  // bits left by the one before, and the refill comes after its index: the
  // refill (one unaligned 64-bit load at p, whose address was known an
  // iteration ahead, shifted below the valid bits and ORed in) joins the chain
  // at that lookup's shift, beside its table load, instead of before it. The
  // chain from one lookup to the next is one 1-octet load and two shifts.
  // 64-bit, so that the loop-carried index needs no zero extension.
  uint64_t index = bits >> (64 - kLookupBits);
  for (;;) {
    const unsigned e = kDecodeTable.length[index];
    if (__builtin_expect(e == 0, 0)) {
      // A code longer than kLookupBits; all of it is among the >= 56 bits.
      int code_len = 0;
      const int sym = DecodeCanonical(static_cast<uint32_t>(bits >> 32),
                                      kLookupBits + 1, &code_len);
      if (sym == kEosSymbol) return HuffmanDecodeStatus::kEosInData;
      *o++ = static_cast<uint8_t>(sym);
      bits <<= code_len;
      avail -= code_len;
      if (p > last_load) break;
      Refill(&bits, &p, &avail);
      index = bits >> (64 - kLookupBits);
      continue;
    }
    // The raw entries are summed and the bit count taken once: the bits
    // fields total at most (kSteps + 1) * kLookupBits = 52 < 64 (the fourth
    // lookup below included), so they never carry into the symbol counts.
    unsigned entries = e;
    StoreSymbols(o, kDecodeTable.symbols[index]);
    o += EntrySymbols(e);
    bits <<= EntryBits(e);
    // A long code met in a later lookup reads length 0, which consumes and
    // emits nothing: the next iteration's first lookup takes it.
    for (int k = 1; k < kSteps; ++k) DecodeStep(&bits, &o, &entries);
    if (p > last_load) {
      // No refill follows: one more lookup from the >= kLookupBits bits
      // left (kSteps + 1 entries still sum below 64).
      DecodeStep(&bits, &o, &entries);
      avail -= EntryBits(entries);
      break;
    }
    avail -= EntryBits(entries);
    index = bits >> (64 - kLookupBits);
    Refill(&bits, &p, &avail);
  }

  // Tail: 12-114 bits left, the 1-7 octets past p and `avail` (4-58) bits of
  // `bits`. Windows that are not the last take 57-64 bits from the next
  // unconsumed one, each loaded at once, until at most 56 are left; the last
  // window holds those, with 1 bits below the input.
  size_t bit_pos = static_cast<size_t>(p - in) * 8 - avail;
  for (;;) {
    // The last window: the `rest` (at most 56) input bits left are the low
    // bits of the string's last 8 octets (len >= 8), moved to the top, with
    // 1s below them.
    const size_t rest = len * 8 - bit_pos;
    if (rest <= 56) {
      // Not reached: the fast loop leaves at least 12 bits and a window that
      // is not the last at least 5; but the shift below needs rest > 0.
      if (rest == 0) {
        *out_len = static_cast<size_t>(o - out);
        return HuffmanDecodeStatus::kOk;
      }
      return DecodeLastWindow(
          (LoadBigEndian64(last_load) << (64 - rest)) | (~uint64_t{0} >> rest),
          static_cast<unsigned>(rest), o, out, out_len);
    }
    const uint8_t* const q = in + (bit_pos >> 3);
    const unsigned skip = bit_pos & 7;
    // A window that is not the last: 64 - skip (at least 57) input bits from
    // bit_pos on, first bit in bit 63. Its unchecked lookups move bit_pos
    // on; the next window may be the last. They consume nothing only at a
    // long code, which fits in the window and is decoded exactly.
    uint64_t w = LoadBigEndian64(q) << skip;
    unsigned valid = 64 - skip;
    const unsigned window_bits = valid;
    DecodeUnchecked(&w, &valid, &o);
    if (valid == window_bits) {
      int code_len = 0;
      const int sym = DecodeCanonical(static_cast<uint32_t>(w >> 32),
                                      kLookupBits + 1, &code_len);
      if (sym == kEosSymbol) return HuffmanDecodeStatus::kEosInData;
      *o++ = static_cast<uint8_t>(sym);
      valid -= code_len;
    }
    bit_pos += window_bits - valid;
  }
}

HuffmanDecodeStatus HuffmanDecode(std::string_view in, std::string* out) {
  const auto* src = reinterpret_cast<const uint8_t*>(in.data());
  const size_t old_size = out->size();
  const size_t max_len = HuffmanMaxDecodedLength(in.size());
  size_t n = 0;
  if (out->capacity() - old_size < max_len && max_len <= 1024) {
    // Not enough spare capacity for the worst case: decode on the stack, so
    // that appending allocates only if the octets really decoded do not fit.
    uint8_t buf[1024];
    const HuffmanDecodeStatus s = HuffmanDecode(src, in.size(), buf, &n);
    if (s == HuffmanDecodeStatus::kOk) {
      out->append(reinterpret_cast<const char*>(buf), n);
    }
    return s;
  }
  out->resize(old_size + max_len);
  const HuffmanDecodeStatus s = HuffmanDecode(
      src, in.size(), reinterpret_cast<uint8_t*>(&(*out)[old_size]), &n);
  out->resize(s == HuffmanDecodeStatus::kOk ? old_size + n : old_size);
  return s;
}

}  // namespace hpack
