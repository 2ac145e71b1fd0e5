// Huffman decoding: HuffmanDecode and HuffmanDecodeStatusName.
//
// The fast loop keeps the next input bits left-aligned in a 64-bit buffer and
// refills it branch-free with one unaligned big-endian 64-bit load (at least 56
// valid bits after each refill). It makes kSteps lookups in kDecodeTable per
// refill, each consuming up to kLookupBits bits and emitting up to
// kMaxSymbolsPerEntry octets with one 16-bit store, and leaves at least
// kLookupBits valid bits, so that the next first lookup's index is taken
// before the refill and the refill runs beside that lookup's table load. Only
// the first lookup of an iteration checks for a long code (length 0): a long
// code in a later lookup reads length 0, which consumes and emits nothing, so
// it waits for the next iteration. The critical path is one 1-octet table
// load and two shifts per lookup; the refill and the symbols' load and store
// are off it.
//
// The last input octets (fewer than 8) go through a window loop: one load of
// all of them (LoadLastOctets), table lookups while an entry's bits are all
// real input, and otherwise one exact code with DecodeCanonical to tell a
// last symbol from padding.

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
  const unsigned index = static_cast<unsigned>(*bits >> (64 - kLookupBits));
  const unsigned e = kDecodeTable.length[index];
  *entries += e;
  StoreSymbols(*o, kDecodeTable.symbols[index]);
  *o += EntrySymbols(e);
  *bits <<= EntryBits(e);
}

// The `left` (1..7) octets before `end`, big-endian in the high octets of the
// result, and 1 bits below them. Reads only [end - left, end) when the string
// [begin, end) is shorter than 8 octets, else the 8 octets before `end` (all
// inside the string) in one load.
inline uint64_t LoadLastOctets(const uint8_t* begin, const uint8_t* end,
                               size_t left) {
  const unsigned shift = static_cast<unsigned>(8 - left) * 8;  // 0..56
  // 1s below the input; shifting twice keeps the count below 64.
  const uint64_t fill = (~uint64_t{0} >> 1) >> (63 - shift);
  if (end - begin >= 8) return (LoadBigEndian64(end - 8) << shift) | fill;
  const uint8_t* const q = end - left;
  uint64_t w;
  if (left >= 4) {
    // Two overlapping 4-octet loads; the overlap ORs equal bits.
    w = (uint64_t{LoadBigEndian32(q)} << 32) |
        (uint64_t{LoadBigEndian32(end - 4)} << shift);
  } else {
    // 1-3 octets: the first, middle and last (some may coincide).
    w = (uint64_t{q[0]} << 56) |
        (uint64_t{q[left >> 1]} << (56 - 8 * (left >> 1))) |
        (uint64_t{q[left - 1]} << (56 - 8 * (left - 1)));
  }
  return w | fill;
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
  const uint8_t* p = in;  // Next octet not yet counted in `avail`.
  const uint8_t* const end = in + len;
  uint8_t* o = out;
  uint8_t* const out_end = out + HuffmanMaxDecodedLength(len);
  // Input bits, first bit in bit 63. The top `avail` bits are the input from
  // the current position on; bits below them are either later input or 0.
  uint64_t bits = 0;
  unsigned avail = 0;

  // Each iteration's first lookup is made from at least kLookupBits valid
  // bits left by the one before, and the refill comes after its index: the
  // refill (one unaligned 64-bit load at p, whose address was known an
  // iteration ahead, shifted below the valid bits and ORed in) joins the chain
  // at that lookup's shift, beside its table load, instead of before it. The
  // chain from one lookup to the next is one 1-octet load and two shifts.
  if (len >= 8) {
    bits = LoadBigEndian64(p);
    p += 7;
    avail = 56;
    unsigned index = static_cast<unsigned>(bits >> (64 - kLookupBits));
    for (;;) {
      const unsigned e = kDecodeTable.length[index];
      if (e == 0) {
        // A code longer than kLookupBits; all of it is among the >= 56 bits.
        int code_len = 0;
        const int sym = DecodeCanonical(static_cast<uint32_t>(bits >> 32),
                                        kLookupBits + 1, &code_len);
        if (sym == kEosSymbol) return HuffmanDecodeStatus::kEosInData;
        *o++ = static_cast<uint8_t>(sym);
        bits <<= code_len;
        avail -= code_len;
        if (end - p < 8) break;
        Refill(&bits, &p, &avail);
        index = static_cast<unsigned>(bits >> (64 - kLookupBits));
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
      if (end - p < 8) {
        // No refill follows: one more lookup from the >= kLookupBits bits
        // left (kSteps + 1 entries still sum below 64).
        DecodeStep(&bits, &o, &entries);
        avail -= EntryBits(entries);
        break;
      }
      avail -= EntryBits(entries);
      index = static_cast<unsigned>(bits >> (64 - kLookupBits));
      Refill(&bits, &p, &avail);
    }
  }

  // Tail: fewer than 8 octets past p (or the output nearly full). It decodes
  // windows of up to 64 input bits starting at the next unconsumed bit, each
  // loaded at once (LoadWindow); the last window holds everything left, with
  // 1 bits below the input.
  size_t bit_pos = static_cast<size_t>(p - in) * 8 - avail;
  for (;;) {
    const uint8_t* const q = in + (bit_pos >> 3);
    const unsigned skip = bit_pos & 7;
    const size_t left = static_cast<size_t>(end - q);
    const bool last = left < 8;
    // `w` holds `valid` input bits from bit_pos on, first bit in bit 63. In
    // the last window the bits below them are 1s: see the loop below.
    uint64_t w;
    unsigned valid;
    if (last) {
      if (left == 0) break;  // Only when len == 0 or every bit is consumed.
      w = (LoadLastOctets(in, end, left) << skip) | ((uint64_t{1} << skip) - 1);
      valid = static_cast<unsigned>(left) * 8 - skip;
    } else {
      w = LoadBigEndian64(q) << skip;
      valid = 64 - skip;
    }
    const unsigned window_bits = valid;
    // The first valid / kLookupBits lookups of a window are taken unchecked,
    // as in the fast loop: each entry's bits are input, and a long code reads
    // length 0, which consumes and emits nothing (the checked loop below takes
    // it). Each has at least kLookupBits input bits left, so its 2-octet
    // store needs no output check.
    unsigned unchecked = valid / kLookupBits;  // 0..4
    if (unchecked > 0) {
      unsigned entries = 0;  // Summed as in the fast loop.
      do {
        DecodeStep(&w, &o, &entries);
      } while (--unchecked > 0);
      valid -= EntryBits(entries);
    }
    for (;;) {
      const unsigned index = static_cast<unsigned>(w >> (64 - kLookupBits));
      const unsigned e = kDecodeTable.length[index];
      const unsigned used = EntryBits(e);
      // An entry is used only when all its bits are input (used <= valid),
      // which makes it exact. In the last window at least 8 bits of 1s
      // follow the input, and no code of at most kLookupBits is all 1s (it
      // would be a prefix of EOS), so for well-formed input the test fails
      // only for a long code (used == 0), at the padding, and now and then
      // for a two-symbol entry at the very end; those, and bad input, go to
      // the exact path below.
      if (used - 1 < valid) {
        const uint16_t symbols = kDecodeTable.symbols[index];
        // Every symbol takes at least 5 input bits, so real symbols never
        // pass out_end; only the junk second octet of a one-symbol entry
        // could, at out_end - 1.
        if (out_end - o >= 2) {
          StoreSymbols(o, symbols);
        } else {
          *o = static_cast<uint8_t>(symbols);
        }
        o += EntrySymbols(e);
        w <<= used;
        valid -= used;
        continue;
      }
      // Well-formed end of the string: only padding (1s, at most 7 bits) is
      // left.
      if (last && valid <= 7 && (~w & ~(~uint64_t{0} >> valid)) == 0) {
        *out_len = static_cast<size_t>(o - out);
        return HuffmanDecodeStatus::kOk;
      }
      // Decode one code exactly.
      int code_len = 0;
      const int sym = DecodeCanonical(static_cast<uint32_t>(w >> 32),
                                      kMinCodeLength, &code_len);
      if (static_cast<unsigned>(code_len) <= valid) {
        if (sym == kEosSymbol) return HuffmanDecodeStatus::kEosInData;
        *o++ = static_cast<uint8_t>(sym);
        w <<= code_len;
        valid -= code_len;
        continue;
      }
      if (!last) break;  // The code continues past this window: reload.
      // The last `valid` bits are no complete code: they are padding.
      if (valid > 7) return HuffmanDecodeStatus::kPaddingTooLong;
      if ((w >> (64 - valid)) != (uint64_t{1} << valid) - 1) {
        return HuffmanDecodeStatus::kPaddingNotOnes;
      }
      *out_len = static_cast<size_t>(o - out);
      return HuffmanDecodeStatus::kOk;
    }
    bit_pos += window_bits - valid;
  }
  *out_len = static_cast<size_t>(o - out);
  return HuffmanDecodeStatus::kOk;
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
