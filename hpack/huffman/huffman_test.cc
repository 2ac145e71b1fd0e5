#include "hpack/huffman/huffman.h"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <string_view>
#include <tuple>
#include <utility>
#include <vector>

#include "gtest/gtest.h"
#include "hpack/huffman/huffman_code_table.h"
#include "hpack/huffman/huffman_decode_table.h"

namespace hpack {
namespace {

using huffman_internal::kEosSymbol;
using huffman_internal::kHuffmanCodes;
using huffman_internal::kNumSymbols;
using Status = HuffmanDecodeStatus;

std::string FromHex(std::string_view hex) {
  std::string out;
  int nibbles = 0;
  unsigned value = 0;
  for (char c : hex) {
    if (c == ' ') continue;
    value =
        value * 16 + static_cast<unsigned>(c <= '9' ? c - '0' : c - 'a' + 10);
    if (++nibbles % 2 == 0) {
      out.push_back(static_cast<char>(value));
      value = 0;
    }
  }
  return out;
}

std::string ToHex(std::string_view bytes) {
  static const char kDigits[] = "0123456789abcdef";
  std::string out;
  for (unsigned char c : bytes) {
    out.push_back(kDigits[c >> 4]);
    out.push_back(kDigits[c & 15]);
  }
  return out;
}

// The slow reference: walks the input one bit at a time, looking the bits read
// so far up in a map of every (length, code) of kHuffmanCodes, with its own
// padding and EOS rules.
struct ReferenceResult {
  Status status;
  std::string out;
  bool operator==(const ReferenceResult& o) const {
    return status == o.status && (status != Status::kOk || out == o.out);
  }
};

ReferenceResult ReferenceDecode(std::string_view in) {
  static const auto* const kCodes = [] {
    auto* m = new std::map<std::pair<uint32_t, uint32_t>, int>;
    for (int s = 0; s < kNumSymbols; ++s) {
      (*m)[{kHuffmanCodes[s].length, kHuffmanCodes[s].code}] = s;
    }
    return m;
  }();
  ReferenceResult r{Status::kOk, ""};
  uint32_t code = 0;
  uint32_t len = 0;
  for (unsigned char byte : in) {
    for (int bit = 7; bit >= 0; --bit) {
      code = (code << 1) | ((byte >> bit) & 1);
      ++len;
      auto it = kCodes->find({len, code});
      if (it == kCodes->end()) continue;
      if (it->second == kEosSymbol) return {Status::kEosInData, ""};
      r.out.push_back(static_cast<char>(it->second));
      code = 0;
      len = 0;
    }
  }
  if (len > 7) return {Status::kPaddingTooLong, ""};
  if (code != (1u << len) - 1) return {Status::kPaddingNotOnes, ""};
  return r;
}

// The fast decoder with exact-size heap buffers, so that ASan sees any read
// past the input or write past HuffmanMaxDecodedLength(in.size()).
ReferenceResult FastDecode(std::string_view in) {
  std::unique_ptr<uint8_t[]> src(new uint8_t[in.size()]);
  if (!in.empty()) std::memcpy(src.get(), in.data(), in.size());
  const size_t max_len = HuffmanMaxDecodedLength(in.size());
  std::unique_ptr<uint8_t[]> dst(new uint8_t[max_len]);
  size_t n = 12345;
  const Status s = HuffmanDecode(src.get(), in.size(), dst.get(), &n);
  if (s != Status::kOk) {
    EXPECT_EQ(n, 12345u) << "out_len set on error";
    return {s, ""};
  }
  EXPECT_LE(n, max_len);
  return {s, std::string(reinterpret_cast<const char*>(dst.get()), n)};
}

std::string Encode(std::string_view in) {
  const size_t len = HuffmanEncodedLength(in);
  std::unique_ptr<uint8_t[]> buf(
      new uint8_t[len]);  // Exact size: ASan checks the bound.
  const size_t n = HuffmanEncode(in, buf.get());
  EXPECT_EQ(n, len);
  return std::string(reinterpret_cast<const char*>(buf.get()), n);
}

// Checks fast == reference on `in`, and returns the fast decoder's result.
ReferenceResult DecodeBoth(std::string_view in) {
  const ReferenceResult fast = FastDecode(in);
  const ReferenceResult ref = ReferenceDecode(in);
  EXPECT_EQ(fast.status, ref.status)
      << ToHex(in) << ": fast " << HuffmanDecodeStatusName(fast.status)
      << ", reference " << HuffmanDecodeStatusName(ref.status);
  if (fast.status == Status::kOk && ref.status == Status::kOk) {
    EXPECT_EQ(fast.out, ref.out) << ToHex(in);
  }
  return fast;
}

// Appends bits, most significant first; Finish() pads with 1 bits like an
// encoder.
class BitWriter {
 public:
  void Append(uint32_t code, int len) {
    for (int i = len - 1; i >= 0; --i) bits_.push_back((code >> i) & 1);
  }
  void AppendSymbol(int sym) {
    Append(kHuffmanCodes[sym].code, kHuffmanCodes[sym].length);
  }
  void AppendOnes(int n) { Append((1u << n) - 1, n); }
  void AppendBits(const BitWriter& w) {
    bits_.insert(bits_.end(), w.bits_.begin(), w.bits_.end());
  }
  // Keeps the first n bits.
  void Truncate(size_t n) {
    if (n < bits_.size()) bits_.resize(n);
  }
  size_t size() const { return bits_.size(); }
  // Bits as octets; a partial last octet is completed with `fill` bits.
  std::string Octets(int fill) const {
    std::string out;
    for (size_t i = 0; i < bits_.size(); i += 8) {
      unsigned byte = 0;
      for (size_t j = i; j < i + 8; ++j)
        byte = (byte << 1) | (j < bits_.size() ? bits_[j] : fill);
      out.push_back(static_cast<char>(byte));
    }
    return out;
  }

 private:
  std::vector<int> bits_;
};

// ---- The table is the RFC's
// -------------------------------------------------------------

TEST(HuffmanTable, MatchesRfc7541AppendixBSamples) {
  struct Row {
    int sym;
    uint32_t code;
    uint32_t len;
  };
  const Row kRows[] = {
      {'0', 0x0, 5},
      {'a', 0x3, 5},
      {'t', 0x9, 5},
      {' ', 0x14, 6},
      {':', 0x5c, 7},
      {'&', 0xf8, 8},
      {'!', 0x3f8, 10},
      {'\'', 0x7fa, 11},
      {'#', 0xffa, 12},
      {0, 0x1ff8, 13},
      {'^', 0x3ffc, 14},
      {'<', 0x7ffc, 15},
      {'\\', 0x7fff0, 19},
      {128, 0xfffe6, 20},
      {153, 0x1fffdc, 21},
      {129, 0x3fffd2, 22},
      {1, 0x7fffd8, 23},
      {9, 0xffffea, 24},
      {199, 0x1ffffec, 25},
      {255, 0x3ffffee, 26},
      {203, 0x7ffffde, 27},
      {127, 0xffffffc, 28},
      {10, 0x3ffffffc, 30},
      {22, 0x3ffffffe, 30},
      {kEosSymbol, 0x3fffffff, 30},
  };
  for (const Row& row : kRows) {
    EXPECT_EQ(kHuffmanCodes[row.sym].code, row.code) << row.sym;
    EXPECT_EQ(kHuffmanCodes[row.sym].length, row.len) << row.sym;
  }
}

TEST(HuffmanTable, IsACompletePrefixCode) {
  // Kraft: sum of 2^-len over all codes is exactly 1 (scaled by 2^30).
  uint64_t kraft = 0;
  for (int s = 0; s < kNumSymbols; ++s) {
    ASSERT_GE(kHuffmanCodes[s].length, 5u);
    ASSERT_LE(kHuffmanCodes[s].length, 30u);
    ASSERT_EQ(kHuffmanCodes[s].code >> kHuffmanCodes[s].length, 0u) << s;
    kraft += uint64_t{1} << (30 - kHuffmanCodes[s].length);
  }
  EXPECT_EQ(kraft, uint64_t{1} << 30);
  // Prefix-free: no code is a prefix of another.
  for (int a = 0; a < kNumSymbols; ++a) {
    for (int b = 0; b < kNumSymbols; ++b) {
      const auto& ca = kHuffmanCodes[a];
      const auto& cb = kHuffmanCodes[b];
      if (a == b || ca.length > cb.length) continue;
      EXPECT_NE(cb.code >> (cb.length - ca.length), ca.code)
          << a << " prefixes " << b;
    }
  }
  EXPECT_TRUE(huffman_internal::kCanonicalCode.valid);
}

TEST(HuffmanTable, EveryDecodeTableEntryMatchesTheReference) {
  using huffman_internal::kDecodeTable;
  using huffman_internal::kLookupBits;
  for (uint32_t i = 0; i < (1u << kLookupBits); ++i) {
    const uint32_t used = kDecodeTable.length[i] & 63;
    const uint32_t n = kDecodeTable.length[i] >> 6;
    ASSERT_LE(used, static_cast<uint32_t>(kLookupBits));
    ASSERT_EQ(used == 0, n == 0) << i;
    // The `used` bits of the index, padded with ones, decode to exactly the
    // entry's symbols.
    BitWriter w;
    w.Append(i >> (kLookupBits - used), static_cast<int>(used));
    const ReferenceResult ref = ReferenceDecode(w.Octets(1));
    ASSERT_EQ(ref.status, Status::kOk) << i;
    ASSERT_EQ(ref.out.size(), n) << i;
    for (uint32_t k = 0; k < n; ++k) {
      EXPECT_EQ(static_cast<uint8_t>(ref.out[k]),
                (kDecodeTable.symbols[i] >> (8 * k)) & 0xff)
          << i;
    }
  }
}

// ---- RFC 7541 Appendix C examples
// -------------------------------------------------------

struct Example {
  const char* text;
  const char* hex;
};

void CheckExamples(const std::vector<Example>& examples) {
  for (const Example& ex : examples) {
    const std::string encoded = FromHex(ex.hex);
    EXPECT_EQ(ToHex(Encode(ex.text)), ToHex(encoded)) << ex.text;
    EXPECT_EQ(HuffmanEncodedLength(ex.text), encoded.size()) << ex.text;
    const ReferenceResult r = DecodeBoth(encoded);
    EXPECT_EQ(r.status, Status::kOk) << ex.text;
    EXPECT_EQ(r.out, ex.text);
  }
}

TEST(HuffmanRfcExamples, C4_RequestExamplesWithHuffmanCoding) {
  CheckExamples({
      {"www.example.com", "f1e3 c2e5 f23a 6ba0 ab90 f4ff"},  // C.4.1
      {"no-cache", "a8eb 1064 9cbf"},                        // C.4.2
      {"custom-key", "25a8 49e9 5ba9 7d7f"},                 // C.4.3
      {"custom-value", "25a8 49e9 5bb8 e8b4 bf"},            // C.4.3
  });
}

TEST(HuffmanRfcExamples, C6_ResponseExamplesWithHuffmanCoding) {
  CheckExamples({
      {"302", "6402"},              // C.6.1
      {"private", "aec3 771a 4b"},  // C.6.1
      {"Mon, 21 Oct 2013 20:13:21 GMT",
       "d07a be94 1054 d444 a820 0595 040b 8166 e082 a62d 1bff"},  // C.6.1
      {"https://www.example.com",
       "9d29 ad17 1863 c78f 0b97 c8e9 ae82 ae43 d3"},  // C.6.1
      {"307", "640e ff"},                              // C.6.2
      {"Mon, 21 Oct 2013 20:13:22 GMT",
       "d07a be94 1054 d444 a820 0595 040b 8166 e084 a62d 1bff"},  // C.6.3
      {"gzip", "9bd9 ab"},                                         // C.6.3
      {"foo=ASDJKHQKBZXOQWEOPIUAXQWEOIU; max-age=3600; version=1",
       "94e7 821d d7f2 e6c7 b335 dfdf cd5b 3960 d5af 2708 7f36 72c1 ab27 0fb5 "
       "291f 9587 "
       "3160 65c0 03ed 4ee5 b106 3d50 07"},  // C.6.3
  });
}

// ---- Decoding: padding, EOS, empty
// ------------------------------------------------------

TEST(HuffmanDecode, EmptyInputIsEmptyString) {
  size_t n = 99;
  EXPECT_EQ(HuffmanDecode(nullptr, 0, nullptr, &n), Status::kOk);
  EXPECT_EQ(n, 0u);
  std::string s = "keep";
  EXPECT_EQ(HuffmanDecode(std::string_view(), &s), Status::kOk);
  EXPECT_EQ(s, "keep");
  EXPECT_EQ(DecodeBoth("").status, Status::kOk);
}

TEST(HuffmanDecode, PaddingOfZeroToSevenOnesIsAccepted) {
  // For each padding length k, find a short string whose code bits end k bits
  // before an octet boundary, and check both an encoder's output and hand-built
  // bits.
  const int kSyms[] = {'a', 'b', 'X', '!',
                       '#', 0,   '\\'};  // Lengths 5, 6, 8, 10, 12, 13, 19.
  bool seen[8] = {};
  for (int s1 : kSyms) {
    for (int s2 : kSyms) {
      BitWriter w;
      w.AppendSymbol(s1);
      w.AppendSymbol(s2);
      const int pad = static_cast<int>((8 - w.size() % 8) % 8);
      seen[pad] = true;
      const std::string text = {static_cast<char>(s1), static_cast<char>(s2)};
      const std::string octets = w.Octets(1);
      EXPECT_EQ(octets, Encode(text));
      const ReferenceResult r = DecodeBoth(octets);
      EXPECT_EQ(r.status, Status::kOk) << pad;
      EXPECT_EQ(r.out, text);
    }
  }
  for (int pad = 0; pad < 8; ++pad) EXPECT_TRUE(seen[pad]) << pad;
}

TEST(HuffmanDecode, EightOrMorePaddingBitsAreTooLong) {
  EXPECT_EQ(DecodeBoth("\xff").status, Status::kPaddingTooLong);
  EXPECT_EQ(DecodeBoth("\xff\xff").status, Status::kPaddingTooLong);
  EXPECT_EQ(DecodeBoth("\xff\xff\xff").status,
            Status::kPaddingTooLong);  // 24 ones.
  for (int ones = 8; ones < 30; ++ones) {
    for (int prefix : {0, 1, 3, 20}) {
      BitWriter w;
      for (int i = 0; i < prefix; ++i) w.AppendSymbol('e');
      w.AppendOnes(ones);
      if (w.size() % 8 != 0)
        continue;  // Exact octets: all the trailing ones are padding.
      EXPECT_EQ(DecodeBoth(w.Octets(1)).status, Status::kPaddingTooLong)
          << ones;
    }
  }
  // 'a' then a whole octet of ones: 3 + 8 = 11 padding bits.
  BitWriter w;
  w.AppendSymbol('a');
  w.AppendOnes(11);
  EXPECT_EQ(DecodeBoth(w.Octets(1)).status, Status::kPaddingTooLong);
}

TEST(HuffmanDecode, PaddingWithAZeroBitIsRejected) {
  EXPECT_EQ(DecodeBoth(FromHex("18")).status,
            Status::kPaddingNotOnes);  // 'a' then 000.
  EXPECT_EQ(DecodeBoth(FromHex("00")).status,
            Status::kPaddingNotOnes);  // '0' then 000.
  // www.example.com with its last padding bit cleared.
  EXPECT_EQ(DecodeBoth(FromHex("f1e3c2e5f23a6ba0ab90f4fe")).status,
            Status::kPaddingNotOnes);
  for (int pad = 1; pad <= 7; ++pad) {
    for (int zero_at = 0; zero_at < pad; ++zero_at) {
      BitWriter w;
      w.AppendSymbol('e');
      while ((w.size() + pad) % 8 != 0) w.AppendSymbol('e');
      for (int i = 0; i < pad; ++i) w.Append(i == zero_at ? 0 : 1, 1);
      const ReferenceResult r = DecodeBoth(w.Octets(1));
      // Some zero-padded tails are a complete code ('0' is 00000); all the rest
      // must fail.
      if (r.status == Status::kOk) continue;
      EXPECT_EQ(r.status, Status::kPaddingNotOnes) << pad << " " << zero_at;
    }
  }
}

TEST(HuffmanDecode, EosInDataIsRejected) {
  EXPECT_EQ(DecodeBoth("\xff\xff\xff\xff").status,
            Status::kEosInData);  // EOS + 2 ones.
  BitWriter only_eos;
  only_eos.AppendSymbol(kEosSymbol);
  EXPECT_EQ(DecodeBoth(only_eos.Octets(1)).status, Status::kEosInData);
  // EOS after, between and before symbols, at every alignment, long strings
  // included.
  for (int before = 0; before < 40; ++before) {
    BitWriter w;
    for (int i = 0; i < before; ++i) w.AppendSymbol(i % 2 ? 'e' : 'Z');
    w.AppendSymbol(kEosSymbol);
    for (int i = 0; i < before % 5; ++i) w.AppendSymbol('x');
    EXPECT_EQ(DecodeBoth(w.Octets(1)).status, Status::kEosInData) << before;
  }
  // EOS is found even where the padding would also be wrong after it.
  BitWriter w;
  w.AppendSymbol('a');
  w.AppendSymbol(kEosSymbol);
  EXPECT_EQ(DecodeBoth(w.Octets(0)).status, Status::kEosInData);
}

TEST(HuffmanDecode, MaxDecodedLengthIsReached) {
  // '0' has the shortest code, 5 bits: 8 of them fill exactly 5 octets.
  const std::string zeros(800, '0');
  const std::string encoded = Encode(zeros);
  ASSERT_EQ(encoded.size(), 500u);
  EXPECT_EQ(HuffmanMaxDecodedLength(encoded.size()), zeros.size());
  EXPECT_EQ(DecodeBoth(encoded).out, zeros);
  for (size_t n = 0; n < 100; ++n) {
    const std::string s(n, 'e');
    EXPECT_EQ(DecodeBoth(Encode(s)).out, s);
  }
}

// Output nearly full at every length: strings of mostly 5-bit codes (which
// reach HuffmanMaxDecodedLength) with some 6- to 8-bit and long codes, so the
// fast loop, the unchecked lookups at the start of each tail window and the
// checked ones all meet the output bound (exact-size buffers for ASan).
TEST(HuffmanDecode, DenseStringsOfEveryLengthMatchTheReference) {
  std::mt19937 rng(23);
  const char kFive[] = "012aceiost";
  const char kMore[] =
      "%-./3456789=A_bdfghlmnpru:BCDEFGHIJKLMNOPQRSTUVWYjkqvwxyz&*,;XZ";
  for (int iter = 0; iter < 3000; ++iter) {
    std::string s(iter % 150, '\0');
    const uint32_t rare = 2 + iter % 13;
    for (char& c : s) {
      const uint32_t r = rng();
      c = r % rare == 0 ? kMore[(r >> 8) % (sizeof(kMore) - 1)]
          : r % 97 == 1 ? static_cast<char>(r >> 8)
                        : kFive[(r >> 8) % (sizeof(kFive) - 1)];
    }
    EXPECT_EQ(DecodeBoth(Encode(s)).out, s);
  }
}

// Every octet (long codes included) at every symbol position of header text
// up to 48, followed by 0-23 more symbols: each lookup of the fast loop's
// groups, the first lookup after a refill, the extra lookup before the loop
// ends and the tail windows all meet every code, at many bit alignments.
TEST(HuffmanDecode, EveryOctetAtEveryPositionMatchesTheReference) {
  const std::string text =
      "Mozilla/5.0 (X11; Linux x86_64) text/html,application/xml;q=0.9 "
      "gzip, deflate, br";
  constexpr size_t kMaxBefore = 48;
  constexpr size_t kMaxAfter = 23;
  // Long enough that substr never cuts the symbols after the octet.
  ASSERT_GE(text.size(), kMaxBefore + kMaxAfter);
  for (int c = 0; c < 256; ++c) {
    for (size_t before = 0; before <= kMaxBefore; ++before) {
      std::string s = text.substr(0, before);
      s.push_back(static_cast<char>(c));
      s += text.substr(before, (before * 7 + c) % (kMaxAfter + 1));
      ASSERT_EQ(DecodeBoth(Encode(s)).out, s) << c << " " << before;
    }
  }
}

// ---- The fast loop's exit and the tail windows
// ---------------------------------------------------------------

// The bit where HuffmanDecode's fast loop hands the rest of a string of at
// least 8 octets to its tail windows, or kEosInFastLoop when the loop itself
// returns kEosInData; *after_long_code is set when the loop ends right after
// decoding a long code. A model of the loop's bookkeeping in huffman_decoder.cc
// (kSteps lookups per refill, the first checked for a long code; a refill
// counts (63 - avail) / 8 more octets; no refill once fewer than 8 octets are
// left to load, and then one more lookup), used only to aim the cases of the
// test below at the hand-over: what they decode is checked against the
// reference.
constexpr size_t kEosInFastLoop = ~size_t{0};

size_t FastLoopHandover(std::string_view in, bool* after_long_code) {
  using huffman_internal::DecodeCanonical;
  using huffman_internal::kDecodeTable;
  using huffman_internal::kLookupBits;
  constexpr int kSteps = (56 - kLookupBits) / kLookupBits;
  // 32 bits from bit `pos`, 0s past the end. Every lookup the loop makes has
  // its entry's bits (and a long code all its bits) inside the input.
  const auto window = [in](size_t pos) {
    uint64_t w = 0;
    for (size_t i = pos / 8; i < pos / 8 + 5; ++i) {
      w = (w << 8) | (i < in.size() ? static_cast<unsigned char>(in[i]) : 0);
    }
    return static_cast<uint32_t>(w >> (8 - pos % 8));
  };
  // The bits one table lookup at `pos` consumes: 0 at a long code.
  const auto lookup = [&](size_t pos) -> size_t {
    return kDecodeTable.length[window(pos) >> (32 - kLookupBits)] & 63;
  };
  *after_long_code = false;
  size_t pos = 0;      // Bits consumed.
  size_t counted = 7;  // Octets counted in the bit buffer (p - in).
  for (;;) {
    const bool last = counted + 8 > in.size();  // p > end - 8: no refill.
    if (lookup(pos) == 0) {
      int code_len = 0;
      if (DecodeCanonical(window(pos), kLookupBits + 1, &code_len) ==
          kEosSymbol) {
        return kEosInFastLoop;
      }
      pos += static_cast<size_t>(code_len);
      if (last) {
        *after_long_code = true;
        return pos;
      }
    } else {
      for (int k = 0; k < kSteps; ++k) pos += lookup(pos);
      if (last) return pos + lookup(pos);
    }
    counted += (63 - (8 * counted - pos)) / 8;
  }
}

// A string's codes as the fast loop's lookups take them: one table entry (one
// or two codes), a long code decoded by an iteration's first lookup, or
// nothing (first == 0: a later lookup met a long code, which the next
// iteration's first lookup decodes). Code lengths in bits.
struct LoopStep {
  size_t first;
  size_t second;  // 0: one code.
};

// The steps to a hand-over bit, and the shortest first code of the tail that
// joins no entry before the hand-over (14, a long code, when the last lookup
// met one and left it).
struct HandoverPath {
  std::vector<LoopStep> steps;
  size_t min_next;
};

// For each bit where the fast loop can hand over on a string of `len` octets
// (8-24), paths of code lengths that make FastLoopHandover return it: the
// loop's states (bits consumed, octets counted, lookup of the iteration, long
// code met and left, shortest next code), searched breadth-first, one path
// per hand-over and min_next.
std::map<size_t, std::map<size_t, HandoverPath>> HandoverPaths(size_t len) {
  using huffman_internal::kLookupBits;
  constexpr int kSteps = (56 - kLookupBits) / kLookupBits;
  constexpr size_t kLookup = kLookupBits;
  std::vector<size_t> short_lengths;
  std::vector<size_t> long_lengths;
  for (int s = 0; s < 256; ++s) {
    const size_t n = kHuffmanCodes[s].length;
    std::vector<size_t>& v = n <= kLookup ? short_lengths : long_lengths;
    if (std::find(v.begin(), v.end(), n) == v.end()) v.push_back(n);
  }
  std::vector<std::pair<LoopStep, size_t>> entries;  // With min_next.
  for (size_t a : short_lengths) {
    // One code: the next must not fit in the entry's other bits.
    entries.push_back({{a, 0}, kLookup + 1 - a});
    for (size_t b : short_lengths) {
      if (a + b <= kLookup) entries.push_back({{a, b}, 0});
    }
  }
  struct State {
    size_t pos;      // Bits consumed.
    size_t counted;  // Octets counted in the bit buffer.
    int k;           // The iteration's next lookup.
    bool pending;    // A later lookup met a long code, the next first one.
    size_t min_next;
    bool operator<(const State& o) const {
      return std::tie(pos, counted, k, pending, min_next) <
             std::tie(o.pos, o.counted, o.k, o.pending, o.min_next);
    }
  };
  const State start = {0, 7, 0, false, 0};
  std::map<State, std::pair<State, LoopStep>> parent = {{start, {start, {}}}};
  std::vector<State> queue = {start};
  std::map<size_t, std::map<size_t, HandoverPath>> out;
  for (size_t i = 0; i < queue.size(); ++i) {
    const State s = queue[i];
    const bool last = s.counted + 8 > len;  // No refill after this iteration.
    const auto go = [&](State next, LoopStep step, bool iteration_ends) {
      if (next.pos > len * 8) return;
      if (iteration_ends && last) {
        const size_t need = next.pending ? 14 : next.min_next;
        if (out[next.pos].count(need) != 0) return;
        std::vector<LoopStep> steps = {step};
        for (State at = s; at < start || start < at;) {
          const auto& [from, to_at] = parent.at(at);
          steps.push_back(to_at);
          at = from;
        }
        out[next.pos][need] = {{steps.rbegin(), steps.rend()}, need};
        return;
      }
      if (iteration_ends) {  // The refill.
        next.k = 0;
        next.counted += (63 - (8 * next.counted - next.pos)) / 8;
      }
      if (parent.count(next) == 0) {
        parent[next] = {s, step};
        queue.push_back(next);
      }
    };
    if (s.k == 0) {
      // The first lookup: a long code (maybe the one met before) ends the
      // iteration.
      for (size_t n : long_lengths) {
        go({s.pos + n, s.counted, 0, false, 0}, {n, 0}, true);
      }
      if (s.pending) continue;
    } else {
      // A long code: this and the iteration's later lookups consume nothing.
      go({s.pos, s.counted, 0, true, 0}, {0, 0}, true);
    }
    const int lookups = last ? kSteps + 1 : kSteps;
    for (const auto& [step, min_next] : entries) {
      if (step.first < s.min_next) continue;  // It would join the entry before.
      go({s.pos + step.first + step.second, s.counted, s.k + 1, false,
          min_next},
         step, s.k + 1 == lookups);
    }
  }
  return out;
}

// What the tail of a case holds, from the fast loop's hand-over to the end.
enum class Tail {
  kValid,           // codes (long ones among them), 0-7 bits of 1s
  kLongCodeFirst,   // a 14-30 bit code right at the hand-over, then kValid's
  kEosFirst,        // EOS right at the hand-over (kEosInData)
  kEosLater,        // codes, EOS, maybe codes, 1s (kEosInData)
  kPaddingTooLong,  // codes, then 8-29 bits of 1s
  kPaddingNotOnes,  // codes, then 1-7 bits with a 0 among them
  kTruncatedCode,   // codes, then the first bits of a code
};
constexpr Tail kTails[] = {Tail::kValid,          Tail::kLongCodeFirst,
                           Tail::kEosFirst,       Tail::kEosLater,
                           Tail::kPaddingTooLong, Tail::kPaddingNotOnes,
                           Tail::kTruncatedCode};

// Random symbols for the cases: codes of at most kLookupBits bits (one table
// lookup) and longer ones (14-30 bits: octets 1-31 and 127-255, and
// < \ ^ ` { }).
class CodePicker {
 public:
  CodePicker() {
    for (int s = 0; s < 256; ++s) {
      const size_t len = kHuffmanCodes[s].length;
      (len <= huffman_internal::kLookupBits ? short_ : long_).push_back(s);
      by_length_[len].push_back(s);
    }
  }
  int Long(std::mt19937& rng) const { return long_[rng() % long_.size()]; }
  // A long code with probability 1 / long_one_in, else a short one.
  int Any(std::mt19937& rng, uint32_t long_one_in) const {
    return rng() % long_one_in == 0 ? Long(rng) : short_[rng() % short_.size()];
  }
  // Appends random codes of a path's lengths.
  void AppendPath(BitWriter* w, const std::vector<LoopStep>& steps,
                  std::mt19937& rng) const {
    for (const LoopStep& step : steps) {
      for (size_t n : {step.first, step.second}) {
        if (n == 0) continue;
        const std::vector<int>& pool = by_length_.at(n);
        w->AppendSymbol(pool[rng() % pool.size()]);
      }
    }
  }

  // Appends codes of exactly `bits` bits, 1 / long_one_in of them long, the
  // first at least min_first bits long. False when no codes make `bits` (1-4
  // or 9: no code is shorter than 5 bits, none is 9 and two are at least 10).
  static bool Fillable(size_t bits) {
    return bits == 0 || (bits >= 5 && bits != 9);
  }
  bool Fill(BitWriter* w, size_t bits, std::mt19937& rng, uint32_t long_one_in,
            size_t min_first = 0) const {
    if (!Fillable(bits) || (bits > 0 && bits < min_first)) return false;
    for (int tries = 0; bits > 0; ++tries) {
      if (tries > 1000) return false;
      const int s = Any(rng, tries > 100 ? 2 : long_one_in);
      const size_t len = kHuffmanCodes[s].length;
      if (len < min_first || len > bits || !Fillable(bits - len)) continue;
      min_first = 0;
      w->AppendSymbol(s);
      bits -= len;
    }
    return true;
  }

 private:
  std::vector<int> short_;
  std::vector<int> long_;
  std::map<size_t, std::vector<int>> by_length_;
};

// Appends to `w` (the bits before the hand-over) a tail of `kind` that ends
// the string at exactly `len` octets, its codes starting with one of at least
// min_first bits. False when the random choices do not fit; *intact is false
// when only the first bits of the tail's first code fit (a truncated long
// code or EOS).
bool AppendTail(BitWriter* w, size_t len, Tail kind, size_t min_first,
                const CodePicker& codes, std::mt19937& rng, bool* intact) {
  const size_t rest = len * 8 - w->size();
  BitWriter head;  // What comes first.
  BitWriter end;   // The last bits, after the codes in between.
  // 0-7 bits of 1s (valid padding) end the kinds that set no other end; how
  // many is chosen below, so that codes can fill the bits in between.
  const bool pad = kind == Tail::kValid || kind == Tail::kLongCodeFirst ||
                   kind == Tail::kEosFirst || kind == Tail::kEosLater;
  switch (kind) {
    case Tail::kValid:
      break;
    case Tail::kLongCodeFirst:
      head.AppendSymbol(codes.Long(rng));
      break;
    case Tail::kEosFirst:
      head.AppendSymbol(kEosSymbol);
      break;
    case Tail::kEosLater:
      end.AppendSymbol(kEosSymbol);
      if (rng() % 2 == 0) codes.Fill(&end, 5 + rng() % 20, rng, 4);
      break;
    case Tail::kPaddingTooLong:
      end.AppendOnes(static_cast<int>(8 + rng() % 22));
      break;
    case Tail::kPaddingNotOnes: {
      const int n = static_cast<int>(1 + rng() % 7);
      const uint32_t zero = uint32_t{1} << (rng() % n);  // At least this 0.
      end.Append(rng() & ((1u << n) - 1) & ~zero, n);
      break;
    }
    case Tail::kTruncatedCode: {
      const int s = codes.Any(rng, 2);
      const int n = static_cast<int>(1 + rng() % (kHuffmanCodes[s].length - 1));
      end.Append(kHuffmanCodes[s].code >> (kHuffmanCodes[s].length - n), n);
      break;
    }
  }
  BitWriter middle;
  if (head.size() + end.size() > rest) {
    // What comes first does not fit before the end of the string: its first
    // bits make a truncated code.
    if (head.size() < rest) return false;
    *intact = false;
    end = BitWriter();
  } else {
    *intact = true;
    size_t middle_bits = rest - head.size() - end.size();
    if (pad) {
      int ones[8];
      int n = 0;
      for (int k = 0; k < 8 && static_cast<size_t>(k) <= middle_bits; ++k) {
        if (CodePicker::Fillable(middle_bits - k)) ones[n++] = k;
      }
      if (n == 0) return false;
      const int k = ones[rng() % n];
      end.AppendOnes(k);
      middle_bits -= k;
    }
    if (!codes.Fill(&middle, middle_bits, rng, 3, min_first)) return false;
  }
  w->AppendBits(head);
  w->AppendBits(middle);
  w->AppendBits(end);
  w->Truncate(len * 8);
  return true;
}

// The fast loop's exit and the last window: for every string length of 8-24
// octets (1-5 iterations of the loop) and every bit at which the loop can
// hand over (HandoverPaths, FastLoopHandover), tails of every kind: a long
// code or EOS right at the hand-over, long codes in the tail windows, EOS
// later, padding too long and not all 1s, truncated codes. The paths also end
// the loop right after a long code, and at a long code met by a later lookup.
// Each case against the reference.
TEST(HuffmanDecode, FastLoopExitAndLastWindowMatchTheReference) {
  const CodePicker codes;
  std::mt19937 rng(20261203);
  constexpr int kCasesPerKind = 3;  // At each hand-over.
  std::string missing;              // len/hand-over/kind without a case.
  for (size_t len = 8; len <= 24; ++len) {
    const auto paths = HandoverPaths(len);
    int after_long_code = 0;  // Cases handed over right after a long code.
    int eos_in_last_iteration = 0;
    for (const auto& [handover, by_min_next] : paths) {
      // The tail windows get 12-114 bits (huffman_decoder.cc).
      ASSERT_GE(len * 8 - handover, 12u) << len;
      ASSERT_LE(len * 8 - handover, 114u) << len;
      for (const auto& [min_next, path] : by_min_next) {
        // EOS for the path's last long code, which an iteration's first
        // lookup decodes: the loop returns kEosInData itself (in its last
        // iteration, when the long code ends the path).
        const auto long_step =
            std::find_if(path.steps.rbegin(), path.steps.rend(),
                         [](const LoopStep& s) { return s.first > 13; });
        if (long_step == path.steps.rend()) continue;
        BitWriter w;
        codes.AppendPath(
            &w, std::vector<LoopStep>(path.steps.begin(), long_step.base() - 1),
            rng);
        w.AppendSymbol(kEosSymbol);
        bool intact = false;
        if (w.size() > len * 8 ||
            !AppendTail(&w, len, Tail::kValid, 0, codes, rng, &intact)) {
          continue;
        }
        const std::string s = w.Octets(1);
        bool unused = false;
        ASSERT_EQ(FastLoopHandover(s, &unused), kEosInFastLoop) << ToHex(s);
        ASSERT_EQ(DecodeBoth(s).status, Status::kEosInData) << ToHex(s);
        if (long_step == path.steps.rbegin()) ++eos_in_last_iteration;
      }
      for (Tail kind : kTails) {
        // The path that leaves the tail's first code the most lengths.
        const HandoverPath& path = by_min_next.begin()->second;
        const bool long_first =
            kind == Tail::kLongCodeFirst || kind == Tail::kEosFirst;
        if (path.min_next > 13 && !long_first) continue;  // None leaves one.
        if (kind == Tail::kEosLater &&
            len * 8 - handover < std::max<size_t>(path.min_next, 5) + 30) {
          continue;  // No room for a code and EOS.
        }
        int cases = 0;
        for (int attempt = 0; attempt < 200 && cases < kCasesPerKind;
             ++attempt) {
          BitWriter w;
          codes.AppendPath(&w, path.steps, rng);
          ASSERT_EQ(w.size(), handover);
          bool intact = false;
          if (!AppendTail(&w, len, kind, path.min_next, codes, rng, &intact)) {
            continue;
          }
          const std::string s = w.Octets(1);
          ASSERT_EQ(s.size(), len);
          bool ends_after_long_code = false;
          const size_t h = FastLoopHandover(s, &ends_after_long_code);
          if (long_first) {
            // A code longer than a lookup joins no entry before it: the
            // hand-over stays, or the loop returns at EOS.
            ASSERT_TRUE(h == handover || h == kEosInFastLoop) << ToHex(s);
          }
          const ReferenceResult r = DecodeBoth(s);
          if (HasFailure()) return;
          if (intact && (kind == Tail::kEosFirst || kind == Tail::kEosLater)) {
            ASSERT_EQ(r.status, Status::kEosInData) << ToHex(s);
          }
          if (intact && kind == Tail::kPaddingTooLong) {
            ASSERT_EQ(r.status, Status::kPaddingTooLong) << ToHex(s);
          }
          if (h != handover) continue;  // The tail's codes moved it.
          ++cases;
          if (ends_after_long_code) ++after_long_code;
        }
        if (cases < kCasesPerKind) {
          missing += " " + std::to_string(len) + "/" +
                     std::to_string(handover) + "/" +
                     std::to_string(static_cast<int>(kind));
        }
      }
    }
    EXPECT_GT(after_long_code, 0) << len;
    EXPECT_GT(eos_in_last_iteration, 0) << len;
  }
  EXPECT_EQ(missing, "");
}

TEST(HuffmanDecode, AllOneAndTwoOctetInputsMatchTheReference) {
  for (int a = 0; a < 256; ++a) {
    DecodeBoth(std::string(1, static_cast<char>(a)));
    for (int b = 0; b < 256; ++b) {
      DecodeBoth(std::string{static_cast<char>(a), static_cast<char>(b)});
    }
  }
}

TEST(HuffmanDecode, RandomGarbageMatchesTheReference) {
  std::mt19937 rng(7541);
  for (int iter = 0; iter < 40000; ++iter) {
    const size_t len = rng() % 48;
    // Mostly 0xff-heavy octets, where long codes, EOS and bad padding live.
    const int mode = static_cast<int>(rng() % 3);
    std::string s(len, '\0');
    for (char& c : s) {
      const uint32_t r = rng();
      c = static_cast<char>(
          mode == 0 ? r : (mode == 1 ? (r | 0xf0) : (r % 7 ? 0xff : r)));
    }
    DecodeBoth(s);
  }
}

TEST(HuffmanDecode, ValidStringsWithCorruptedTailsMatchTheReference) {
  std::mt19937 rng(1);
  for (int iter = 0; iter < 5000; ++iter) {
    std::string text(rng() % 64, '\0');
    for (char& c : text)
      c = static_cast<char>(rng() % 4 ? 32 + rng() % 95 : rng());
    std::string encoded = Encode(text);
    EXPECT_EQ(DecodeBoth(encoded).out, text);
    if (encoded.empty()) continue;
    encoded.back() = static_cast<char>(encoded.back() ^ (1u << (rng() % 8)));
    DecodeBoth(encoded);
    encoded.push_back(static_cast<char>(rng()));
    DecodeBoth(encoded);
  }
}

// ---- Round trips
// ------------------------------------------------------------------------

TEST(HuffmanRoundTrip, EveryOctetAlone) {
  for (int c = 0; c < 256; ++c) {
    const std::string s(1, static_cast<char>(c));
    const std::string encoded = Encode(s);
    EXPECT_EQ(encoded.size(), (kHuffmanCodes[c].length + 7) / 8);
    EXPECT_EQ(DecodeBoth(encoded).out, s) << c;
  }
}

TEST(HuffmanRoundTrip, RandomStringsOfAllOctets) {
  std::mt19937 rng(42);
  std::string all;
  for (int c = 0; c < 256; ++c) all.push_back(static_cast<char>(c));
  EXPECT_EQ(DecodeBoth(Encode(all)).out, all);
  for (int iter = 0; iter < 3000; ++iter) {
    std::string s(rng() % 300, '\0');
    for (char& c : s) c = static_cast<char>(rng());
    const ReferenceResult r = DecodeBoth(Encode(s));
    EXPECT_EQ(r.status, Status::kOk);
    EXPECT_EQ(r.out, s);
  }
}

TEST(HuffmanRoundTrip, HeaderLikeText) {
  const char* kValues[] = {
      "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) "
      "Chrome/120.0.0.0 Safari/537.36",
      "/api/v1/users/12345/profile?include=settings,preferences&format=json",
      "session_id=a8f5f167f44f4964e6c998dee827110c; "
      "_ga=GA1.2.1234567890.1600000000",
      "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8",
      "application/grpc+proto",
      "grpc-timeout",
      "{\"a\":[1,2,3]}<>^`|~\\",
  };
  std::string all;
  for (const char* v : kValues) {
    all += v;
    EXPECT_EQ(DecodeBoth(Encode(v)).out, v);
  }
  // Every prefix and suffix, to put each symbol at every alignment and tail
  // position.
  for (size_t i = 0; i <= all.size(); ++i) {
    EXPECT_EQ(DecodeBoth(Encode(all.substr(0, i))).out, all.substr(0, i));
    EXPECT_EQ(DecodeBoth(Encode(all.substr(i))).out, all.substr(i));
  }
}

// ---- Encoding lengths and bounds
// --------------------------------------------------------

// The encoders against a bit-by-bit reference (BitWriter): every octet alone
// and in pairs, and random strings of every kind of code length, through
// HuffmanEncode, HuffmanEncodeBounded and HuffmanEncodeBoundedWithSlack
// (exact-size heap buffers for ASan).
std::string ReferenceEncode(std::string_view in) {
  BitWriter w;
  for (unsigned char c : in) w.AppendSymbol(c);
  return w.Octets(1);
}

void CheckEncodersMatchTheReference(std::string_view s) {
  const std::string expected = ReferenceEncode(s);
  ASSERT_EQ(Encode(s), expected) << ToHex(s);
  const size_t len = expected.size();
  std::unique_ptr<uint8_t[]> bounded(new uint8_t[len]);
  ASSERT_EQ(HuffmanEncodeBounded(s, bounded.get(), len), len);
  ASSERT_EQ(std::memcmp(bounded.get(), expected.data(), len), 0) << ToHex(s);
  std::unique_ptr<uint8_t[]> slack(new uint8_t[len + kHuffmanEncodeSlack]);
  ASSERT_EQ(HuffmanEncodeBoundedWithSlack(s, slack.get(), len), len);
  ASSERT_EQ(std::memcmp(slack.get(), expected.data(), len), 0) << ToHex(s);
}

TEST(HuffmanEncode, EveryOctetAndPairMatchesTheReference) {
  for (int a = 0; a < 256; ++a) {
    const char one[1] = {static_cast<char>(a)};
    CheckEncodersMatchTheReference(std::string_view(one, 1));
    for (int b = 0; b < 256; ++b) {
      const char two[2] = {static_cast<char>(a), static_cast<char>(b)};
      CheckEncodersMatchTheReference(std::string_view(two, 2));
    }
  }
}

TEST(HuffmanEncode, RandomStringsMatchTheReference) {
  std::mt19937 rng(17);
  for (int iter = 0; iter < 6000; ++iter) {
    std::string s(rng() % 120, '\0');
    const int mode = iter % 5;
    for (char& c : s) {
      const uint32_t r = rng();
      c = static_cast<char>(mode == 0   ? 'a' + r % 26
                            : mode == 1 ? r
                            : mode == 2 ? (r % 5 ? 0xff : r)  // 26-30 bit codes
                            : mode == 3 ? (r % 3 ? 'e' : r)   // mostly text
                                        : 32 + r % 95);
    }
    CheckEncodersMatchTheReference(s);
  }
}

TEST(HuffmanEncode, LengthMatchesOctetsWritten) {
  std::mt19937 rng(3);
  EXPECT_EQ(HuffmanEncodedLength(""), 0u);
  uint8_t unused = 0xaa;
  EXPECT_EQ(HuffmanEncode("", &unused), 0u);
  EXPECT_EQ(unused, 0xaa);
  for (int iter = 0; iter < 3000; ++iter) {
    std::string s(rng() % 200, '\0');
    for (char& c : s)
      c = static_cast<char>(iter % 2 ? rng() : 'a' + rng() % 26);
    uint64_t bits = 0;
    for (unsigned char c : s) bits += kHuffmanCodes[c].length;
    EXPECT_EQ(HuffmanEncodedLength(s), (bits + 7) / 8);
    // Encode writes exactly that many octets: check with a canary after them.
    std::vector<uint8_t> buf(HuffmanEncodedLength(s) + 16, 0x5a);
    EXPECT_EQ(HuffmanEncode(s, buf.data()), HuffmanEncodedLength(s));
    for (size_t i = HuffmanEncodedLength(s); i < buf.size(); ++i)
      ASSERT_EQ(buf[i], 0x5a);
  }
}

TEST(HuffmanEncode,
     BoundedReturnsZeroExactlyWhenTooLongAndNeverWritesPastTheBound) {
  std::mt19937 rng(5);
  for (int iter = 0; iter < 2000; ++iter) {
    std::string s(rng() % 80, '\0');
    for (char& c : s)
      c = static_cast<char>(iter % 3 ? 'a' + rng() % 26 : rng());
    const size_t len = HuffmanEncodedLength(s);
    const std::string expected = Encode(s);
    for (size_t max_len :
         {size_t{0}, size_t{1}, len > 0 ? len - 1 : 0, len, len + 1,
          s.empty() ? 0 : s.size() - 1, static_cast<size_t>(rng() % 100)}) {
      // Canary after the bound.
      std::vector<uint8_t> buf(max_len + 16, 0x5a);
      const size_t n = HuffmanEncodeBounded(s, buf.data(), max_len);
      for (size_t i = max_len; i < buf.size(); ++i)
        ASSERT_EQ(buf[i], 0x5a) << max_len;
      if (len > max_len) {
        EXPECT_EQ(n, 0u);
      } else {
        EXPECT_EQ(n, len);
        EXPECT_EQ(std::string(reinterpret_cast<const char*>(buf.data()), n),
                  expected);
      }
      // Exact-size heap buffer: ASan reports any write at or past out +
      // max_len.
      std::unique_ptr<uint8_t[]> exact(new uint8_t[max_len]);
      EXPECT_EQ(HuffmanEncodeBounded(s, exact.get(), max_len),
                len > max_len ? 0 : len);
    }
  }
}

// The slack variant is a faster route to HuffmanEncodeBounded's answer: the
// same return value and octets, writing at most kHuffmanEncodeSlack octets
// past max_len (exact-size heap buffers let ASan check the bound).
TEST(HuffmanEncode, BoundedWithSlackEqualsBounded) {
  std::mt19937 rng(11);
  for (int iter = 0; iter < 4000; ++iter) {
    std::string s(rng() % 90, '\0');
    const int mode = iter % 4;
    for (char& c : s) {
      const uint32_t r = rng();
      c = static_cast<char>(mode == 0   ? 'a' + r % 26
                            : mode == 1 ? r
                            : mode == 2 ? (r % 5 ? 0xff : r)  // 26-30 bit codes
                                        : 32 + r % 95);
    }
    const size_t len = HuffmanEncodedLength(s);
    for (size_t max_len = 0; max_len <= len + 2; ++max_len) {
      std::vector<uint8_t> bounded(max_len + 1);
      const size_t expected = HuffmanEncodeBounded(s, bounded.data(), max_len);
      std::unique_ptr<uint8_t[]> slack(
          new uint8_t[max_len + kHuffmanEncodeSlack]);
      const size_t n = HuffmanEncodeBoundedWithSlack(s, slack.get(), max_len);
      ASSERT_EQ(n, expected) << ToHex(s) << " max_len " << max_len;
      ASSERT_EQ(std::memcmp(slack.get(), bounded.data(), n), 0) << ToHex(s);
    }
  }
}

TEST(HuffmanEncode, BoundedForEncodeFirstFillTheLengthInAfter) {
  const std::string compressible = "www.example.com";
  uint8_t buf[64];
  EXPECT_EQ(HuffmanEncodeBounded(compressible, buf, compressible.size() - 1),
            12u);
  EXPECT_EQ(ToHex(std::string(reinterpret_cast<char*>(buf), 12)),
            "f1e3c2e5f23a6ba0ab90f4ff");
  const std::string incompressible =
      "\x01\x02\x03\x04\x05\x06\x07\x08\x09\x0a\x0b\x0c\x0d";
  EXPECT_EQ(
      HuffmanEncodeBounded(incompressible, buf, incompressible.size() - 1), 0u);
}

// ---- The std::string overload
// -----------------------------------------------------------

TEST(HuffmanDecodeString, AppendsAndRestoresOnError) {
  std::string out = "prefix:";
  EXPECT_EQ(HuffmanDecode(FromHex("f1e3c2e5f23a6ba0ab90f4ff"), &out),
            Status::kOk);
  EXPECT_EQ(out, "prefix:www.example.com");
  EXPECT_EQ(HuffmanDecode(FromHex("ffffffff"), &out), Status::kEosInData);
  EXPECT_EQ(out, "prefix:www.example.com");
  const std::string long_text(5000,
                              'Q');  // Large enough to skip the stack buffer.
  EXPECT_EQ(HuffmanDecode(Encode(long_text), &out), Status::kOk);
  EXPECT_EQ(out, "prefix:www.example.com" + long_text);
  std::string bad = Encode(long_text);
  bad.back() = 0;
  std::string out2 = "x";
  EXPECT_EQ(HuffmanDecode(bad, &out2), Status::kPaddingNotOnes);
  EXPECT_EQ(out2, "x");
}

TEST(HuffmanDecodeString, ReusesCapacity) {
  const std::string text(3000, 'z');
  const std::string encoded = Encode(text);
  std::string out;
  out.reserve(HuffmanMaxDecodedLength(encoded.size()));
  const char* data = out.data();
  EXPECT_EQ(HuffmanDecode(encoded, &out), Status::kOk);
  EXPECT_EQ(out, text);
  EXPECT_EQ(out.data(), data);
  // Short input: the decoded octets fit in the spare capacity though the bound
  // does not.
  std::string small;
  small.reserve(100);
  const char* small_data = small.data();
  const std::string encoded_small =
      Encode(std::string(90, 'z'));  // 7 bits each.
  ASSERT_GT(HuffmanMaxDecodedLength(encoded_small.size()), small.capacity());
  EXPECT_EQ(HuffmanDecode(encoded_small, &small), Status::kOk);
  EXPECT_EQ(small, std::string(90, 'z'));
  EXPECT_EQ(small.data(), small_data);
}

TEST(HuffmanDecodeStatus, EveryValueHasAName) {
  EXPECT_STREQ(HuffmanDecodeStatusName(Status::kOk), "kOk");
  EXPECT_STREQ(HuffmanDecodeStatusName(Status::kEosInData), "kEosInData");
  EXPECT_STREQ(HuffmanDecodeStatusName(Status::kPaddingTooLong),
               "kPaddingTooLong");
  EXPECT_STREQ(HuffmanDecodeStatusName(Status::kPaddingNotOnes),
               "kPaddingNotOnes");
}

}  // namespace
}  // namespace hpack
