#include "rpc/compression/encoding.h"

#include <string_view>

#include "gtest/gtest.h"

namespace rpc::compression {
namespace {

TEST(EncodingTest, NamesRoundTrip) {
  for (Encoding e : kAllEncodings) {
    EXPECT_EQ(ParseEncodingName(EncodingName(e)), e) << EncodingName(e);
  }
  EXPECT_EQ(EncodingName(Encoding::kIdentity), "identity");
  EXPECT_EQ(EncodingName(Encoding::kDeflate), "deflate");
  EXPECT_EQ(EncodingName(Encoding::kGzip), "gzip");
  EXPECT_EQ(EncodingName(Encoding::kZstd), "zstd");
}

TEST(EncodingTest, ParseEncodingNameIgnoresCaseOnly) {
  EXPECT_EQ(ParseEncodingName("GZIP"), Encoding::kGzip);
  EXPECT_EQ(ParseEncodingName("Deflate"), Encoding::kDeflate);
  EXPECT_EQ(ParseEncodingName("ZStd"), Encoding::kZstd);
  EXPECT_EQ(ParseEncodingName(""), std::nullopt);
  EXPECT_EQ(ParseEncodingName(" gzip"), std::nullopt);
  EXPECT_EQ(ParseEncodingName("gzip "), std::nullopt);
  EXPECT_EQ(ParseEncodingName("gzi"), std::nullopt);
  EXPECT_EQ(ParseEncodingName("gzipp"), std::nullopt);
  EXPECT_EQ(ParseEncodingName("br"), std::nullopt);
  EXPECT_EQ(ParseEncodingName("x-gzip"), std::nullopt);  // accept-encoding only
}

TEST(EncodingTest, GrpcEncodingTrimsWhitespace) {
  EXPECT_EQ(ParseGrpcEncoding("gzip"), Encoding::kGzip);
  EXPECT_EQ(ParseGrpcEncoding(" \tgzip \t"), Encoding::kGzip);
  EXPECT_EQ(ParseGrpcEncoding("identity"), Encoding::kIdentity);
  EXPECT_EQ(ParseGrpcEncoding("snappy"), std::nullopt);
  EXPECT_EQ(ParseGrpcEncoding(""), std::nullopt);
  EXPECT_EQ(ParseGrpcEncoding("gzip, deflate"), std::nullopt);  // one coding
  static_assert(ParseGrpcEncoding("zstd") == Encoding::kZstd);
}

TEST(EncodingSetTest, Operations) {
  constexpr EncodingSet s = {Encoding::kGzip, Encoding::kZstd};
  static_assert(s.Contains(Encoding::kGzip) && s.Contains(Encoding::kZstd));
  static_assert(!s.Contains(Encoding::kIdentity));
  EXPECT_EQ(s.size(), 2u);
  EXPECT_FALSE(s.empty());
  EXPECT_TRUE(EncodingSet().empty());
  EXPECT_EQ(s.With(Encoding::kDeflate).size(), 3u);
  EXPECT_EQ(s.Without(Encoding::kGzip), EncodingSet{Encoding::kZstd});
  EXPECT_EQ(s.Without(Encoding::kDeflate), s);
  EXPECT_EQ(EncodingSet::All().size(), kNumEncodings);
  EXPECT_EQ(EncodingSet::FromBits(0xff), EncodingSet::All());
  EXPECT_NE(s, EncodingSet::All());
}

TEST(EncodingSetTest, GrpcAcceptEncodingValue) {
  EXPECT_EQ(GrpcAcceptEncodingValue({}), "");
  EXPECT_EQ(GrpcAcceptEncodingValue({Encoding::kGzip}), "gzip");
  // What gRPC C++ 1.51 sends (captured from Debian's libgrpc++), so a peer's
  // HPACK table and fast path see the same octets.
  EXPECT_EQ(GrpcAcceptEncodingValue(
                {Encoding::kGzip, Encoding::kIdentity, Encoding::kDeflate}),
            "identity, deflate, gzip");
  EXPECT_EQ(GrpcAcceptEncodingValue(EncodingSet::All()),
            "identity, deflate, gzip, zstd");
  EXPECT_EQ(GrpcAcceptEncodingValue({Encoding::kZstd, Encoding::kIdentity}),
            "identity, zstd");
}

}  // namespace
}  // namespace rpc::compression
