// Cross-checks the Huffman codec against a real peer, nghttp2: its HPACK
// inflater reads our encodings, and our decoder reads what its deflater
// Huffman-encodes. This checks all 256 codes of the typed-in table against an
// independent implementation.

#include <nghttp2/nghttp2.h>

#include <cstddef>
#include <cstdint>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include "gtest/gtest.h"
#include "hpack/huffman/huffman.h"

namespace hpack {
namespace {

// HPACK integer with an N-bit prefix (RFC 7541 Section 5.1), prefix bits ORed
// into `first`.
void AppendInteger(std::string* out, uint8_t first, int prefix_bits,
                   size_t value) {
  const size_t max_prefix = (size_t{1} << prefix_bits) - 1;
  if (value < max_prefix) {
    out->push_back(static_cast<char>(first | value));
    return;
  }
  out->push_back(static_cast<char>(first | max_prefix));
  value -= max_prefix;
  while (value >= 128) {
    out->push_back(static_cast<char>(0x80 | (value & 0x7f)));
    value >>= 7;
  }
  out->push_back(static_cast<char>(value));
}

// Reads an HPACK integer; returns false if the input ends first.
bool ReadInteger(std::string_view* in, int prefix_bits, size_t* value) {
  if (in->empty()) return false;
  const size_t max_prefix = (size_t{1} << prefix_bits) - 1;
  *value = static_cast<uint8_t>(in->front()) & max_prefix;
  in->remove_prefix(1);
  if (*value < max_prefix) return true;
  for (int shift = 0; !in->empty() && shift < 56; shift += 7) {
    const uint8_t b = static_cast<uint8_t>(in->front());
    in->remove_prefix(1);
    *value += static_cast<size_t>(b & 0x7f) << shift;
    if ((b & 0x80) == 0) return true;
  }
  return false;
}

// Inflates one literal field "x: <Huffman-coded value>" with nghttp2; returns
// its value.
std::string NghttpInflateHuffmanValue(std::string_view value) {
  std::string block;
  block.push_back(0x00);  // Literal without indexing, new name.
  block += "\x01x";       // Name "x", raw.
  std::string encoded(HuffmanEncodedLength(value), '\0');
  HuffmanEncode(value, reinterpret_cast<uint8_t*>(&encoded[0]));
  AppendInteger(&block, 0x80, 7, encoded.size());  // H = 1.
  block += encoded;

  nghttp2_hd_inflater* inflater = nullptr;
  EXPECT_EQ(nghttp2_hd_inflate_new(&inflater), 0);
  std::string result = "<no field>";
  const auto* in = reinterpret_cast<const uint8_t*>(block.data());
  size_t left = block.size();
  for (int guard = 0; guard < 10; ++guard) {
    nghttp2_nv nv;
    int flags = 0;
    const ssize_t used =
        nghttp2_hd_inflate_hd2(inflater, &nv, &flags, in, left, 1);
    if (used < 0) {
      result = "<nghttp2 error>";
      break;
    }
    in += used;
    left -= static_cast<size_t>(used);
    if (flags & NGHTTP2_HD_INFLATE_EMIT) {
      result.assign(reinterpret_cast<const char*>(nv.value), nv.valuelen);
    }
    if (flags & NGHTTP2_HD_INFLATE_FINAL) break;
  }
  nghttp2_hd_inflate_del(inflater);
  return result;
}

// Deflates "x-huffman-test: value" with nghttp2 and returns the value's string
// literal (H bit and octets) from the block.
bool NghttpDeflateValue(std::string_view value, bool* huffman,
                        std::string* octets) {
  static const char kName[] = "x-huffman-test";
  nghttp2_nv nv = {reinterpret_cast<uint8_t*>(const_cast<char*>(kName)),
                   reinterpret_cast<uint8_t*>(const_cast<char*>(value.data())),
                   sizeof(kName) - 1, value.size(), NGHTTP2_NV_FLAG_NO_INDEX};
  nghttp2_hd_deflater* deflater = nullptr;
  EXPECT_EQ(nghttp2_hd_deflate_new(&deflater, 4096), 0);
  std::string block(nghttp2_hd_deflate_bound(deflater, &nv, 1), '\0');
  const ssize_t n = nghttp2_hd_deflate_hd(
      deflater, reinterpret_cast<uint8_t*>(&block[0]), block.size(), &nv, 1);
  nghttp2_hd_deflate_del(deflater);
  if (n <= 0) return false;
  block.resize(static_cast<size_t>(n));
  // 0001xxxx: literal never indexed, new name (index 0).
  std::string_view in = block;
  if (in.empty() || static_cast<uint8_t>(in[0]) != 0x10) return false;
  in.remove_prefix(1);
  size_t len = 0;
  if (!ReadInteger(&in, 7, &len) || in.size() < len) return false;  // The name.
  in.remove_prefix(len);
  if (in.empty()) return false;
  *huffman = (static_cast<uint8_t>(in[0]) & 0x80) != 0;
  if (!ReadInteger(&in, 7, &len) || in.size() != len) return false;
  octets->assign(in.data(), len);
  return true;
}

TEST(HuffmanNghttp2, NghttpInflatesEveryOctetWeEncode) {
  for (int c = 0; c < 256; ++c) {
    for (size_t n : {1, 2, 3, 7, 8, 9}) {
      const std::string value(n, static_cast<char>(c));
      EXPECT_EQ(NghttpInflateHuffmanValue(value), value) << c << " x" << n;
    }
  }
}

TEST(HuffmanNghttp2, NghttpInflatesRandomStringsWeEncode) {
  std::mt19937 rng(2);
  for (int iter = 0; iter < 500; ++iter) {
    std::string value(rng() % 200, '\0');
    for (char& c : value)
      c = static_cast<char>(iter % 2 ? rng() : 32 + rng() % 95);
    EXPECT_EQ(NghttpInflateHuffmanValue(value), value);
  }
}

TEST(HuffmanNghttp2, WeDecodeWhatNghttpDeflates) {
  std::mt19937 rng(3);
  int huffman_seen = 0;
  for (int iter = 0; iter < 1000; ++iter) {
    std::string value(1 + rng() % 120, '\0');
    // Mostly header-like text, so that nghttp2 picks Huffman; some other
    // printable and binary octets for the long codes.
    static const char kCommon[] =
        "abcdefghijklmnopqrstuvwxyz0123456789-_./=:;, ";
    for (char& c : value) {
      const uint32_t r = rng() % 16;
      c = static_cast<char>(r < 13 ? kCommon[rng() % (sizeof(kCommon) - 1)]
                                   : (r < 15 ? 32 + rng() % 95 : rng()));
    }
    bool huffman = false;
    std::string octets;
    ASSERT_TRUE(NghttpDeflateValue(value, &huffman, &octets));
    if (!huffman) {
      EXPECT_EQ(octets, value);
      continue;
    }
    ++huffman_seen;
    EXPECT_EQ(octets.size(), HuffmanEncodedLength(value));
    std::string decoded;
    ASSERT_EQ(HuffmanDecode(octets, &decoded), HuffmanDecodeStatus::kOk);
    EXPECT_EQ(decoded, value);
  }
  EXPECT_GT(huffman_seen, 500);
}

}  // namespace
}  // namespace hpack
