#include "examples/content_coding.h"

#include <string>

#include "gtest/gtest.h"
#include "rpc/compression/accept_encoding.h"
#include "rpc/compression/codec.h"

namespace examples {
namespace {

using rpc::compression::Decompressor;
using rpc::compression::Negotiator;
using rpc::compression::Preference;

constexpr std::string_view kText = "text/plain; charset=utf-8";

TEST(ChooseCodingTest, SmallFilesAreNotNegotiated) {
  const CodingOptions options;
  const CodingDecision d = ChooseCoding(options, "gzip", 1023, kText);
  EXPECT_EQ(d.encoding, Encoding::kIdentity);
  EXPECT_FALSE(d.vary);
  EXPECT_FALSE(d.not_acceptable);
  // Even when identity is excluded: not negotiated, sent as it is.
  EXPECT_FALSE(ChooseCoding(options, "identity;q=0", 10, kText).not_acceptable);
}

TEST(ChooseCodingTest, ThresholdAndCap) {
  CodingOptions options;
  options.min_bytes = 100;
  options.max_bytes = 1000;
  EXPECT_EQ(ChooseCoding(options, "gzip", 100, kText).encoding,
            Encoding::kGzip);
  EXPECT_EQ(ChooseCoding(options, "gzip", 1000, kText).encoding,
            Encoding::kGzip);
  const CodingDecision big = ChooseCoding(options, "gzip", 1001, kText);
  EXPECT_EQ(big.encoding, Encoding::kIdentity);
  EXPECT_FALSE(big.vary);
}

TEST(ChooseCodingTest, CompressedTypesAreNotNegotiated) {
  const CodingOptions options;
  EXPECT_FALSE(ChooseCoding(options, "gzip", 5000, "image/png").vary);
  EXPECT_FALSE(ChooseCoding(options, "gzip", 5000, "application/pdf").vary);
  EXPECT_EQ(ChooseCoding(options, "gzip", 5000, "image/svg+xml").encoding,
            Encoding::kGzip);
  EXPECT_EQ(ChooseCoding(options, "gzip", 5000, "text/css").encoding,
            Encoding::kGzip);
}

TEST(ChooseCodingTest, DefaultNegotiator) {
  const CodingOptions options;
  auto choose = [&](std::optional<std::string_view> v) {
    return ChooseCoding(options, v, 4096, kText);
  };
  EXPECT_EQ(choose(std::nullopt).encoding, Encoding::kIdentity);
  EXPECT_TRUE(choose(std::nullopt).vary);
  EXPECT_EQ(choose("identity").encoding, Encoding::kIdentity);
  EXPECT_EQ(choose("").encoding, Encoding::kIdentity);
  EXPECT_EQ(choose("gzip").encoding, Encoding::kGzip);
  EXPECT_EQ(choose("gzip, deflate, br, zstd").encoding, Encoding::kZstd);
  EXPECT_EQ(choose("deflate, gzip, br, zstd").encoding, Encoding::kZstd);
  EXPECT_EQ(choose("gzip, deflate, br").encoding, Encoding::kGzip);
  EXPECT_EQ(choose("gzip;q=0, deflate").encoding, Encoding::kDeflate);
  EXPECT_EQ(choose("gzip;q=0").encoding, Encoding::kIdentity);
  EXPECT_EQ(choose("zstd;q=0.5, gzip").encoding, Encoding::kGzip);
  EXPECT_TRUE(choose("identity;q=0").not_acceptable);
  EXPECT_TRUE(choose("*;q=0").not_acceptable);
  EXPECT_FALSE(choose("*;q=0, gzip").not_acceptable);
  EXPECT_EQ(choose("*;q=0, gzip").encoding, Encoding::kGzip);
}

TEST(ChooseCodingTest, CustomNegotiator) {
  const Negotiator gzip_first(Preference{Encoding::kGzip, Encoding::kZstd});
  CodingOptions options;
  options.negotiator = &gzip_first;
  EXPECT_EQ(
      ChooseCoding(options, "gzip, deflate, br, zstd", 4096, kText).encoding,
      Encoding::kGzip);
  EXPECT_EQ(ChooseCoding(options, "zstd", 4096, kText).encoding,
            Encoding::kZstd);
  // deflate is not configured.
  EXPECT_EQ(ChooseCoding(options, "deflate", 4096, kText).encoding,
            Encoding::kIdentity);
}

std::string Compressible(size_t n) {
  std::string s;
  while (s.size() < n) s += "the quick brown fox jumps over the lazy dog. ";
  s.resize(n);
  return s;
}

TEST(EncodedVariantsTest, CompressesOncePerEncoding) {
  const std::string body = Compressible(64 << 10);
  EncodedVariants variants;
  for (Encoding e : {Encoding::kGzip, Encoding::kZstd, Encoding::kDeflate}) {
    EXPECT_FALSE(variants.computed(e));
    const transport::Slice* first = variants.Get(e, body);
    ASSERT_NE(first, nullptr);
    EXPECT_TRUE(variants.computed(e));
    EXPECT_LT(first->size(), body.size() / 10);
    // Cached: the same slice, no recompression (the argument is ignored).
    EXPECT_EQ(variants.Get(e, ""), first);
    Decompressor d(e);
    std::string out;
    ASSERT_TRUE(d.Decompress(first->view(), body.size(), &out).ok());
    EXPECT_EQ(out, body);
  }
  EXPECT_EQ(variants.compressions(), 3);
}

TEST(EncodedVariantsTest, IncompressibleIsIdentity) {
  std::string noise(4096, '\0');
  uint32_t x = 12345;
  for (char& c : noise) {
    x = x * 1103515245 + 12345;
    c = static_cast<char>(x >> 24);
  }
  EncodedVariants variants;
  EXPECT_EQ(variants.Get(Encoding::kGzip, noise), nullptr);
  EXPECT_TRUE(variants.computed(Encoding::kGzip));
  EXPECT_EQ(variants.Get(Encoding::kGzip, noise), nullptr);
  EXPECT_EQ(variants.compressions(), 1);
  EXPECT_EQ(variants.Get(Encoding::kIdentity, noise), nullptr);
}

}  // namespace
}  // namespace examples
