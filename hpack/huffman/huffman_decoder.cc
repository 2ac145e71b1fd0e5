// Huffman decoding: HuffmanDecode and HuffmanDecodeStatusName.
//
// The fast loop keeps the next input bits left-aligned in a 64-bit buffer and
// refills it branch-free with one unaligned big-endian 64-bit load (at least 56
// valid bits after each refill). It then makes kSteps lookups in kDecodeTable,
// each consuming up to kLookupBits bits and emitting up to kMaxSymbolsPerEntry
// octets with one 16-bit store. Only the first lookup after a refill checks for
// a long code (length 0): a long code in a later lookup reads length 0, which
// consumes and emits nothing, so it waits for the next refill. The critical
// path is one 1-octet table load and two shifts per lookup; the symbols' load
// and store are off it.
//
// The last few input octets go through a careful loop that loads octet by
// octet, uses the table only when the entry's bits are all real input, and
// otherwise decodes one code with DecodeCanonical to tell a last symbol from
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
using huffman_internal::kMaxSymbolsPerEntry;
using huffman_internal::kMinCodeLength;

// Lookups per refill: each consumes at most kLookupBits of the >= 56 bits
// loaded.
constexpr int kSteps = 56 / kLookupBits;
// Output octets one fast iteration may touch past its start: each lookup stores
// 2 octets and advances by at most kMaxSymbolsPerEntry; a long code writes one
// octet.
constexpr size_t kFastOutSlack = (kSteps - 1) * kMaxSymbolsPerEntry + 2;

inline uint64_t LoadBigEndian64(const uint8_t* p) {
  uint64_t v;
  std::memcpy(&v, p, sizeof(v));
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
  v = __builtin_bswap64(v);
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

  while (end - p >= 8 && static_cast<size_t>(out_end - o) >= kFastOutSlack) {
    // Refill to 56-63 bits: `bits` ends at octet p, and so does the input
    // counted in it.
    bits |= LoadBigEndian64(p) >> avail;
    p += (63 - avail) >> 3;
    avail |= 56;

    unsigned index = static_cast<unsigned>(bits >> (64 - kLookupBits));
    unsigned e = kDecodeTable.length[index];
    if (e == 0) {
      // A code longer than kLookupBits; all of it is among the >= 56 bits.
      int code_len = 0;
      const int sym = DecodeCanonical(static_cast<uint32_t>(bits >> 32),
                                      kLookupBits + 1, &code_len);
      if (sym == kEosSymbol) return HuffmanDecodeStatus::kEosInData;
      *o++ = static_cast<uint8_t>(sym);
      bits <<= code_len;
      avail -= code_len;
      continue;
    }
    for (int step = 0;;) {
      StoreSymbols(o, kDecodeTable.symbols[index]);
      o += EntrySymbols(e);
      bits <<= EntryBits(e);
      avail -= EntryBits(e);
      if (++step == kSteps) break;
      index = static_cast<unsigned>(bits >> (64 - kLookupBits));
      e = kDecodeTable.length[index];
    }
  }

  // Tail: from here `bits` holds exactly `avail` input bits and zeros below
  // them.
  bits = avail == 0 ? 0 : bits & (~uint64_t{0} << (64 - avail));
  for (;;) {
    while (avail <= 56 && p < end) {
      bits |= static_cast<uint64_t>(*p++) << (56 - avail);
      avail += 8;
    }
    if (avail == 0) break;
    const unsigned index = static_cast<unsigned>(bits >> (64 - kLookupBits));
    const unsigned e = kDecodeTable.length[index];
    const unsigned used = EntryBits(e);
    if (used != 0 && used <= avail) {
      for (unsigned k = 0; k < EntrySymbols(e); ++k) {
        *o++ = static_cast<uint8_t>(kDecodeTable.symbols[index] >> (8 * k));
      }
      bits <<= used;
      avail -= used;
      continue;
    }
    // The entry is a long code or reads zeros past the input: decode one code
    // exactly.
    int code_len = 0;
    const int sym = DecodeCanonical(static_cast<uint32_t>(bits >> 32),
                                    kMinCodeLength, &code_len);
    if (static_cast<unsigned>(code_len) <= avail) {
      if (sym == kEosSymbol) return HuffmanDecodeStatus::kEosInData;
      *o++ = static_cast<uint8_t>(sym);
      bits <<= code_len;
      avail -= code_len;
      continue;
    }
    // The last `avail` bits are no complete code: they are padding.
    if (avail > 7) return HuffmanDecodeStatus::kPaddingTooLong;
    if ((bits >> (64 - avail)) != (1u << avail) - 1) {
      return HuffmanDecodeStatus::kPaddingNotOnes;
    }
    break;
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
    if (s == HuffmanDecodeStatus::kOk)
      out->append(reinterpret_cast<const char*>(buf), n);
    return s;
  }
  out->resize(old_size + max_len);
  const HuffmanDecodeStatus s = HuffmanDecode(
      src, in.size(), reinterpret_cast<uint8_t*>(&(*out)[old_size]), &n);
  out->resize(s == HuffmanDecodeStatus::kOk ? old_size + n : old_size);
  return s;
}

}  // namespace hpack
