// Decoding tables derived at compile time from kHuffmanCodes
// (huffman_code_table.h). Nothing here is typed by hand: a typo in the code
// table fails the static_asserts below.
//
// Internal to hpack/huffman: include huffman.h instead.

#ifndef HPACK_HUFFMAN_HUFFMAN_DECODE_TABLE_H_
#define HPACK_HUFFMAN_HUFFMAN_DECODE_TABLE_H_

#include <cstdint>

#include "hpack/huffman/huffman_code_table.h"

namespace hpack {
namespace huffman_internal {

// The RFC code is canonical: the codes of each length are consecutive integers,
// and the first code of length L+1 is (last code of length L + 1) << 1. So a
// symbol is found from a 32-bit window (next input bits, most significant
// first) by comparing the window with one limit per length, with no tree.
struct CanonicalCode {
  // limit[L]: one past the largest window whose first code is at most L bits
  // long. Windows are 32-bit values held in 64 bits so that
  // limit[kMaxCodeLength] can be 2^32.
  uint64_t limit[kMaxCodeLength + 1];
  // The code with value v and length L has rank v + rank_base[L] in canonical
  // order.
  int32_t rank_base[kMaxCodeLength + 1];
  uint16_t symbol_by_rank[kNumSymbols];
  // True when kHuffmanCodes is a complete, canonical prefix code (Kraft sum
  // exactly 1).
  bool valid;
};

constexpr CanonicalCode BuildCanonicalCode() {
  CanonicalCode c{};
  uint32_t count[kMaxCodeLength + 1] = {};
  for (int s = 0; s < kNumSymbols; ++s) {
    const HuffmanCode code = kHuffmanCodes[s];
    if (code.length < kMinCodeLength || code.length > kMaxCodeLength ||
        (code.code >> code.length) != 0) {
      return c;  // valid == false
    }
    ++count[code.length];
  }
  uint32_t first_code[kMaxCodeLength + 1] = {};
  uint32_t first = 0;
  int32_t rank = 0;
  for (int len = 1; len <= kMaxCodeLength; ++len) {
    first_code[len] = first;
    c.rank_base[len] = rank - static_cast<int32_t>(first);
    c.limit[len] = static_cast<uint64_t>(first + count[len]) << (32 - len);
    rank += static_cast<int32_t>(count[len]);
    first = (first + count[len]) << 1;
  }
  bool placed[kNumSymbols] = {};
  for (int s = 0; s < kNumSymbols; ++s) {
    const HuffmanCode code = kHuffmanCodes[s];
    const uint32_t len = code.length;
    if (code.code < first_code[len] ||
        code.code - first_code[len] >= count[len]) {
      return c;  // Not canonical.
    }
    const int32_t r = static_cast<int32_t>(code.code) + c.rank_base[len];
    if (placed[r]) return c;  // Two symbols share a code.
    placed[r] = true;
    c.symbol_by_rank[r] = static_cast<uint16_t>(s);
  }
  // Complete: the codes of every length together cover every 32-bit window.
  c.valid = c.limit[kMaxCodeLength] == (uint64_t{1} << 32);
  return c;
}

inline constexpr CanonicalCode kCanonicalCode = BuildCanonicalCode();
static_assert(kCanonicalCode.valid,
              "kHuffmanCodes is not the complete canonical code of RFC 7541");

// Returns the symbol whose code starts `window` (most significant bit first)
// and sets *len to its length. `min_len` lets callers skip lengths they know to
// be too short.
constexpr int DecodeCanonical(uint32_t window, int min_len, int* len) {
  int l = min_len;
  while (window >= kCanonicalCode.limit[l]) ++l;  // Stops at kMaxCodeLength.
  *len = l;
  return kCanonicalCode
      .symbol_by_rank[static_cast<int32_t>(window >> (32 - l)) +
                      kCanonicalCode.rank_base[l]];
}

// The fast decoder's tables, indexed by the next kLookupBits input bits. For
// each index they hold the answer of DecodeCanonical for as many whole codes as
// fit in those bits (up to kMaxSymbolsPerEntry), split in two arrays so that
// the decoder's critical path (look up, shift the bit buffer, look up again)
// loads one octet:
//   length[i]   bits 0-5: bits consumed (0 when the first code is longer than
//               kLookupBits); bits 6-7: number of symbols (0..2)
//   symbols[i]  the symbols, the first in the low octet
// length[i] == 0 sends the decoder to DecodeCanonical for one long code. 2^13
// entries of 1 + 2 octets are 24 KiB, which stays in a 32 KiB L1 next to the
// data being decoded.
inline constexpr int kLookupBits = 13;
inline constexpr int kMaxSymbolsPerEntry = kLookupBits / kMinCodeLength;
static_assert(kMaxSymbolsPerEntry >= 1 && kMaxSymbolsPerEntry <= 2,
              "the symbols of an entry must fit in 16 bits");
static_assert(kLookupBits < 64 && kLookupBits < kMaxCodeLength,
              "EOS must not fit");

struct DecodeTable {
  uint8_t length[1 << kLookupBits];
  uint16_t symbols[1 << kLookupBits];
};

constexpr DecodeTable BuildDecodeTable() {
  DecodeTable t{};
  for (uint32_t i = 0; i < (uint32_t{1} << kLookupBits); ++i) {
    const uint32_t window = i << (32 - kLookupBits);
    uint32_t used = 0;
    uint32_t n = 0;
    uint32_t symbols = 0;
    while (n < kMaxSymbolsPerEntry) {
      int len = 0;
      const int sym = DecodeCanonical(window << used, kMinCodeLength, &len);
      if (used + static_cast<uint32_t>(len) > kLookupBits) break;
      symbols |= static_cast<uint32_t>(sym) << (8 * n);
      used += static_cast<uint32_t>(len);
      ++n;
    }
    t.length[i] = static_cast<uint8_t>(used | (n << 6));
    t.symbols[i] = static_cast<uint16_t>(symbols);
  }
  return t;
}

inline constexpr DecodeTable kDecodeTable = BuildDecodeTable();

}  // namespace huffman_internal
}  // namespace hpack

#endif  // HPACK_HUFFMAN_HUFFMAN_DECODE_TABLE_H_
