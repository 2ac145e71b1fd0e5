#include "hpack/varint.h"

#include <cstdint>
#include <string>
#include <vector>

#include "gtest/gtest.h"

namespace hpack {
namespace {

std::vector<uint8_t> Encode(uint64_t value, int prefix_bits,
                            uint8_t high_bits = 0) {
  std::vector<uint8_t> out(kMaxVarintEncodedLength, 0xcc);
  out.resize(EncodeVarint(value, prefix_bits, high_bits, out.data()));
  return out;
}

VarintStatus Decode(const std::vector<uint8_t>& in, int prefix_bits,
                    uint32_t* value, size_t* consumed) {
  const uint8_t* p = in.data();
  const VarintStatus s =
      DecodeVarint(prefix_bits, &p, in.data() + in.size(), value);
  *consumed = static_cast<size_t>(p - in.data());
  return s;
}

// RFC 7541 C.1.1: 10 with a 5-bit prefix.
TEST(VarintTest, C1_1_Encode10With5BitPrefix) {
  EXPECT_EQ(Encode(10, 5), std::vector<uint8_t>({0x0a}));
}

// RFC 7541 C.1.2: 1337 with a 5-bit prefix.
TEST(VarintTest, C1_2_Encode1337With5BitPrefix) {
  EXPECT_EQ(Encode(1337, 5), std::vector<uint8_t>({0x1f, 0x9a, 0x0a}));
  uint32_t v = 0;
  size_t n = 0;
  ASSERT_EQ(Decode({0x1f, 0x9a, 0x0a}, 5, &v, &n), VarintStatus::kOk);
  EXPECT_EQ(v, 1337u);
  EXPECT_EQ(n, 3u);
}

// RFC 7541 C.1.3: 42 starting at an octet boundary (8-bit prefix).
TEST(VarintTest, C1_3_Encode42With8BitPrefix) {
  EXPECT_EQ(Encode(42, 8), std::vector<uint8_t>({0x2a}));
}

TEST(VarintTest, HighBitsAreWrittenAndIgnored) {
  EXPECT_EQ(Encode(10, 5, 0xe0), std::vector<uint8_t>({0xea}));
  EXPECT_EQ(Encode(31, 5, 0x20), std::vector<uint8_t>({0x3f, 0x00}));
  uint32_t v = 0;
  size_t n = 0;
  ASSERT_EQ(Decode({0xea}, 5, &v, &n), VarintStatus::kOk);
  EXPECT_EQ(v, 10u);
  ASSERT_EQ(Decode({0xff, 0x00}, 4, &v, &n), VarintStatus::kOk);
  EXPECT_EQ(v, 15u);
}

TEST(VarintTest, RoundTripsAtEveryPrefixAndBoundary) {
  std::vector<uint64_t> values = {
      0,        1,          126,        127,       128,   254,
      255,      256,        1337,       16383,     16384, (1u << 21) - 1,
      1u << 21, 0x7fffffff, 0xfffffffe, 0xffffffff};
  for (int prefix = 1; prefix <= 8; ++prefix) {
    const uint64_t max_prefix = (1u << prefix) - 1;
    for (uint64_t extra : {max_prefix - 1, max_prefix, max_prefix + 1,
                           max_prefix + 127, max_prefix + 128}) {
      values.push_back(extra);
    }
    for (uint64_t value : values) {
      if (value > kMaxVarintValue) continue;
      const std::vector<uint8_t> wire = Encode(value, prefix);
      EXPECT_EQ(wire.size(), VarintLength(value, prefix))
          << value << " " << prefix;
      uint32_t decoded = 0;
      size_t consumed = 0;
      ASSERT_EQ(Decode(wire, prefix, &decoded, &consumed), VarintStatus::kOk)
          << value << " " << prefix;
      EXPECT_EQ(decoded, value);
      EXPECT_EQ(consumed, wire.size());
    }
  }
}

TEST(VarintTest, DecodeStopsAtTheIntegersEnd) {
  uint32_t v = 0;
  size_t n = 0;
  ASSERT_EQ(Decode({0x1f, 0x9a, 0x0a, 0x55, 0x66}, 5, &v, &n),
            VarintStatus::kOk);
  EXPECT_EQ(v, 1337u);
  EXPECT_EQ(n, 3u);
}

TEST(VarintTest, MaxValueDecodesAndOneMoreOverflows) {
  for (int prefix = 1; prefix <= 8; ++prefix) {
    uint32_t v = 0;
    size_t n = 0;
    ASSERT_EQ(Decode(Encode(0xffffffffu, prefix), prefix, &v, &n),
              VarintStatus::kOk);
    EXPECT_EQ(v, 0xffffffffu);
    EXPECT_EQ(Decode(Encode(0x100000000ull, prefix), prefix, &v, &n),
              VarintStatus::kOverflow)
        << prefix;
    EXPECT_EQ(Decode(Encode(0xffffffffffull, prefix), prefix, &v, &n),
              VarintStatus::kOverflow)
        << prefix;
  }
}

TEST(VarintTest, TooManyContinuationOctetsOverflowEvenIfZero) {
  uint32_t v = 0;
  size_t n = 0;
  // 31 + 0, padded with zero groups: five continuation octets are accepted...
  ASSERT_EQ(Decode({0x1f, 0x80, 0x80, 0x80, 0x80, 0x00}, 5, &v, &n),
            VarintStatus::kOk);
  EXPECT_EQ(v, 31u);
  // ...a sixth is not, whether or not more input follows.
  EXPECT_EQ(Decode({0x1f, 0x80, 0x80, 0x80, 0x80, 0x80, 0x00}, 5, &v, &n),
            VarintStatus::kOverflow);
  EXPECT_EQ(Decode({0x1f, 0x80, 0x80, 0x80, 0x80, 0x80}, 5, &v, &n),
            VarintStatus::kOverflow);
}

TEST(VarintTest, TruncatedInputLeavesCursorAndValueAlone) {
  const std::vector<std::vector<uint8_t>> cases = {
      {}, {0x1f}, {0x1f, 0x9a}, {0x1f, 0xff, 0xff, 0xff}, {0xff, 0x80}};
  for (const auto& in : cases) {
    uint32_t v = 12345;
    size_t n = 99;
    EXPECT_EQ(Decode(in, 5, &v, &n), VarintStatus::kTruncated) << in.size();
    EXPECT_EQ(v, 12345u);
    EXPECT_EQ(n, 0u);
  }
}

TEST(VarintTest, EncodedLengthBoundHolds) {
  for (int prefix = 1; prefix <= 8; ++prefix) {
    EXPECT_LE(VarintLength(~uint64_t{0}, prefix), kMaxVarintEncodedLength);
    EXPECT_EQ(Encode(~uint64_t{0}, prefix).size(),
              VarintLength(~uint64_t{0}, prefix));
  }
}

}  // namespace
}  // namespace hpack
