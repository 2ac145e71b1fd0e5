#include "rpc/compression/accept_encoding.h"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "gtest/gtest.h"
#include "rpc/compression/encoding.h"

namespace rpc::compression {
namespace {

constexpr int16_t kNo = AcceptEncoding::kNotListed;

// Weights in the order identity, deflate, gzip, zstd, then "*".
AcceptEncoding Weights(int16_t identity, int16_t deflate, int16_t gzip,
                       int16_t zstd, int16_t star = kNo) {
  AcceptEncoding a;
  a.weight = {identity, deflate, gzip, zstd};
  a.star = star;
  return a;
}

void ExpectParse(std::string_view value, const AcceptEncoding& expected) {
  const AcceptEncoding got = ParseAcceptEncoding(value);
  EXPECT_TRUE(got == expected)
      << "value: \"" << value << "\"\n  got: " << DebugString(got)
      << "\n want: " << DebugString(expected);
}

std::optional<Encoding> N(std::string_view value,
                          const Preference& p = kDefaultPreference) {
  return Negotiate(value, p);
}

// The parser runs at compile time (Negotiator's default table needs it).
static_assert(Negotiate("identity, deflate, gzip", kDefaultPreference) ==
              Encoding::kGzip);
static_assert(Negotiate("gzip, deflate, br, zstd", kDefaultPreference) ==
              Encoding::kZstd);
static_assert(!Negotiate("*;q=0", kDefaultPreference).has_value());

TEST(QValueTest, Rfc9110_12_4_2_Grammar) {
  using accept_encoding_internal::ParseQValue;
  EXPECT_EQ(ParseQValue("0"), 0);
  EXPECT_EQ(ParseQValue("1"), 1000);
  EXPECT_EQ(ParseQValue("0."), 0);
  EXPECT_EQ(ParseQValue("1."), 1000);
  EXPECT_EQ(ParseQValue("0.5"), 500);
  EXPECT_EQ(ParseQValue("0.05"), 50);
  EXPECT_EQ(ParseQValue("0.123"), 123);
  EXPECT_EQ(ParseQValue("0.001"), 1);
  EXPECT_EQ(ParseQValue("0.000"), 0);
  EXPECT_EQ(ParseQValue("1.0"), 1000);
  EXPECT_EQ(ParseQValue("1.000"), 1000);
  // Not qvalues.
  for (std::string_view bad :
       {"", ".5", "1.5", "1.001", "0.1234", "1.0000", "2", "00", "01", "-0",
        "0,5", "0.5a", "abc", "\"0.5\"", "+1", "0.-1", " 0.5", "1e0"}) {
    EXPECT_EQ(ParseQValue(bad), -1) << bad;
  }
}

TEST(ParseTest, Rfc9110_12_5_3_Examples) {
  // Accept-Encoding: compress, gzip
  ExpectParse("compress, gzip", Weights(kNo, kNo, 1000, kNo));
  // Accept-Encoding:
  ExpectParse("", Weights(kNo, kNo, kNo, kNo));
  // Accept-Encoding: *
  ExpectParse("*", Weights(kNo, kNo, kNo, kNo, 1000));
  // Accept-Encoding: compress;q=0.5, gzip;q=1.0
  ExpectParse("compress;q=0.5, gzip;q=1.0", Weights(kNo, kNo, 1000, kNo));
  // Accept-Encoding: gzip;q=1.0, identity; q=0.5, *;q=0
  ExpectParse("gzip;q=1.0, identity; q=0.5, *;q=0",
              Weights(500, kNo, 1000, kNo, 0));
}

TEST(ParseTest, Rfc9110_12_5_3_ExampleAnswers) {
  EXPECT_EQ(N("compress, gzip"), Encoding::kGzip);
  EXPECT_EQ(N(""), Encoding::kIdentity);  // "does not want any content coding"
  EXPECT_EQ(N("*"), Encoding::kZstd);     // the server's first choice
  EXPECT_EQ(N("compress;q=0.5, gzip;q=1.0"), Encoding::kGzip);
  EXPECT_EQ(N("gzip;q=1.0, identity; q=0.5, *;q=0"), Encoding::kGzip);
  EXPECT_EQ(N("gzip;q=1.0, identity; q=0.5, *;q=0", {Encoding::kZstd}),
            Encoding::kIdentity);
}

TEST(ParseTest, Rfc9110_5_6_1_ListsWithOwsAndEmptyElements) {
  const AcceptEncoding gzip_deflate = Weights(kNo, 1000, 1000, kNo);
  ExpectParse("gzip,deflate", gzip_deflate);
  ExpectParse("gzip, deflate", gzip_deflate);
  ExpectParse(" \tgzip \t,\t deflate\t ", gzip_deflate);
  ExpectParse(",gzip,,deflate,", gzip_deflate);
  ExpectParse(", ,gzip , , deflate, ,", gzip_deflate);
  ExpectParse(",", Weights(kNo, kNo, kNo, kNo));
  ExpectParse("  ", Weights(kNo, kNo, kNo, kNo));
  ExpectParse(" , ,, ", Weights(kNo, kNo, kNo, kNo));
}

TEST(ParseTest, CodingsAreCaseInsensitive) {
  ExpectParse("GZIP, Deflate, zStD, IDENTITY", Weights(1000, 1000, 1000, 1000));
  ExpectParse("X-GZIP", Weights(kNo, kNo, 1000, kNo));
}

TEST(ParseTest, Rfc9110_8_4_1_3_XGzipIsGzip) {
  ExpectParse("x-gzip", Weights(kNo, kNo, 1000, kNo));
  ExpectParse("x-gzip;q=0.3, gzip;q=0.2", Weights(kNo, kNo, 300, kNo));
}

TEST(ParseTest, UnknownCodingsAreIgnored) {
  ExpectParse("br, compress, snappy, gzip2, gz, zstd-dict, 7z",
              Weights(kNo, kNo, kNo, kNo));
  ExpectParse("br;q=1, gzip;q=0.1", Weights(kNo, kNo, 100, kNo));
  // Not tokens: no coding we know.
  ExpectParse("gz ip, \"gzip\", gzip/1, ;q=1", Weights(kNo, kNo, kNo, kNo));
}

TEST(ParseTest, Weights) {
  ExpectParse("gzip;q=0.5", Weights(kNo, kNo, 500, kNo));
  ExpectParse("gzip; q=0.5", Weights(kNo, kNo, 500, kNo));
  ExpectParse("gzip ;q=0.5", Weights(kNo, kNo, 500, kNo));
  ExpectParse("gzip\t;\tq=0.5", Weights(kNo, kNo, 500, kNo));
  ExpectParse("gzip;Q=0.5", Weights(kNo, kNo, 500, kNo));    // names: any case
  ExpectParse("gzip;q = 0.5", Weights(kNo, kNo, 500, kNo));  // BWS tolerated
  ExpectParse("gzip;q=0", Weights(kNo, kNo, 0, kNo));
  ExpectParse("gzip;q=0.000", Weights(kNo, kNo, 0, kNo));
  ExpectParse("gzip;q=1.000", Weights(kNo, kNo, 1000, kNo));
  ExpectParse("identity;q=0.001", Weights(1, kNo, kNo, kNo));
}

TEST(ParseTest, MalformedWeightIsIgnoredAndTheCodingKeepsWeightOne) {
  for (std::string_view value :
       {"gzip;q=abc", "gzip;q=1.5", "gzip;q=0.1234", "gzip;q=", "gzip;q",
        "gzip;q=.5", "gzip;q=\"0.5\"", "gzip;q=-1", "gzip;q=0.5x", "gzip;;",
        "gzip;", "gzip;=0.5", "gzip;qq=0.5"}) {
    ExpectParse(value, Weights(kNo, kNo, 1000, kNo));
  }
  // A malformed q=0 lookalike is not an exclusion: the coding is accepted.
  ExpectParse("gzip;q=0.0000", Weights(kNo, kNo, 1000, kNo));
}

TEST(ParseTest, FirstValidWeightCountsOtherParametersIgnored) {
  ExpectParse("gzip;level=9;q=0.3", Weights(kNo, kNo, 300, kNo));
  ExpectParse("gzip;q=bad;q=0.3", Weights(kNo, kNo, 300, kNo));
  ExpectParse("gzip;q=0.3;q=0.9", Weights(kNo, kNo, 300, kNo));
  ExpectParse("gzip;foo", Weights(kNo, kNo, 1000, kNo));
}

TEST(ParseTest, QuotedStringsHideCommasAndSemicolons) {
  ExpectParse("gzip;foo=\"a,b;q=0\";q=0.2, deflate",
              Weights(kNo, 1000, 200, kNo));
  ExpectParse("gzip;foo=\"a\\\"b,c\", zstd", Weights(kNo, kNo, 1000, 1000));
  // Unterminated: the rest of the value is inside the string.
  ExpectParse("gzip;foo=\"a, zstd", Weights(kNo, kNo, 1000, kNo));
}

TEST(ParseTest, RepeatedCodingGetsItsHighestWeight) {
  ExpectParse("gzip;q=0, gzip;q=0.5", Weights(kNo, kNo, 500, kNo));
  ExpectParse("gzip;q=0.5, gzip;q=0", Weights(kNo, kNo, 500, kNo));
  ExpectParse("*;q=0.1, *;q=0.2", Weights(kNo, kNo, kNo, kNo, 200));
}

TEST(NegotiateTest, HighestWeightWinsTiesGoToServerOrder) {
  EXPECT_EQ(N("gzip;q=0.8, deflate;q=0.5, br"), Encoding::kGzip);
  EXPECT_EQ(N("gzip;q=0.5, deflate;q=0.8"), Encoding::kDeflate);
  EXPECT_EQ(N("deflate, gzip"), Encoding::kGzip);  // default: zstd, gzip, ...
  EXPECT_EQ(N("deflate, gzip", {Encoding::kDeflate, Encoding::kGzip}),
            Encoding::kDeflate);
  EXPECT_EQ(N("gzip, deflate, br, zstd"), Encoding::kZstd);
  EXPECT_EQ(N("gzip, deflate, br, zstd", {Encoding::kGzip}), Encoding::kGzip);
  EXPECT_EQ(N("identity, deflate, gzip"), Encoding::kGzip);
  EXPECT_EQ(N("zstd;q=0.999, gzip"), Encoding::kGzip);
}

TEST(NegotiateTest, OnlyWhatTheServerSupports) {
  EXPECT_EQ(N("zstd", {Encoding::kGzip}), Encoding::kIdentity);
  EXPECT_EQ(N("br"), Encoding::kIdentity);
  EXPECT_EQ(N("gzip", {}), Encoding::kIdentity);
}

TEST(NegotiateTest, IdentityIsAcceptableByDefaultButRanksLast) {
  EXPECT_EQ(N("gzip;q=0.001"), Encoding::kGzip);
  EXPECT_EQ(N("gzip;q=0"), Encoding::kIdentity);
  EXPECT_EQ(N("identity"), Encoding::kIdentity);
  // Listed explicitly, identity competes on weight.
  EXPECT_EQ(N("identity;q=0.5, gzip;q=0.4"), Encoding::kIdentity);
  EXPECT_EQ(N("identity, gzip"), Encoding::kGzip);  // tie: server order
}

TEST(NegotiateTest, Rfc9110_12_5_3_IdentityExcluded) {
  EXPECT_EQ(N("identity;q=0"), std::nullopt);
  EXPECT_EQ(N("*;q=0"), std::nullopt);
  EXPECT_EQ(N("br, identity;q=0"), std::nullopt);
  EXPECT_EQ(N("gzip;q=0, *;q=0"), std::nullopt);
  EXPECT_EQ(N("*;q=0, identity"), Encoding::kIdentity);
  EXPECT_EQ(N("*;q=0, gzip"), Encoding::kGzip);
  EXPECT_EQ(N("identity;q=0, gzip"), Encoding::kGzip);
  EXPECT_EQ(N("identity;q=0, gzip", {Encoding::kZstd}), std::nullopt);
}

TEST(NegotiateTest, StarMatchesCodingsNotListed) {
  EXPECT_EQ(N("*"), Encoding::kZstd);
  EXPECT_EQ(N("*", {Encoding::kGzip}), Encoding::kGzip);
  EXPECT_EQ(N("zstd;q=0, *"), Encoding::kGzip);
  EXPECT_EQ(N("zstd;q=0, gzip;q=0, *"), Encoding::kDeflate);
  EXPECT_EQ(N("*;q=0.5, gzip"), Encoding::kGzip);
  EXPECT_EQ(N("*;q=0.5, gzip;q=0.4"), Encoding::kZstd);  // via "*"
  // "*" covers identity too: equal to the others, identity ranks last.
  EXPECT_EQ(N("*;q=0.5, zstd;q=0, gzip;q=0, deflate;q=0"), Encoding::kIdentity);
}

TEST(NegotiateTest, NoHeaderMeansIdentity) {
  EXPECT_EQ(Negotiate(std::nullopt, kDefaultPreference), Encoding::kIdentity);
  EXPECT_EQ(Negotiate(std::nullopt, Preference{}), Encoding::kIdentity);
}

TEST(PreferenceTest, IdentityLastUnlessPlacedAndDuplicatesDropped) {
  constexpr Preference p = {Encoding::kGzip, Encoding::kGzip,
                            Encoding::kDeflate};
  static_assert(p.size() == 3);
  EXPECT_EQ(p[0], Encoding::kGzip);
  EXPECT_EQ(p[1], Encoding::kDeflate);
  EXPECT_EQ(p[2], Encoding::kIdentity);
  EXPECT_EQ(p.set(), (EncodingSet{Encoding::kGzip, Encoding::kDeflate,
                                  Encoding::kIdentity}));
  EXPECT_EQ(Preference{}.size(), 1u);
  // identity placed first wins ties.
  EXPECT_EQ(N("gzip, identity", {Encoding::kIdentity, Encoding::kGzip}),
            Encoding::kIdentity);
  EXPECT_EQ(N("gzip", {Encoding::kIdentity, Encoding::kGzip}),
            Encoding::kGzip);  // identity only by default: below gzip
  EXPECT_TRUE(kDefaultPreference ==
              (Preference{Encoding::kZstd, Encoding::kGzip, Encoding::kDeflate,
                          Encoding::kIdentity}));
}

TEST(GrpcAcceptEncodingTest, EverySetRoundTripsThroughTheParser) {
  for (unsigned bits = 0; bits < (1u << kNumEncodings); ++bits) {
    const EncodingSet set = EncodingSet::FromBits(static_cast<uint8_t>(bits));
    const AcceptEncoding parsed =
        ParseAcceptEncoding(GrpcAcceptEncodingValue(set));
    for (Encoding e : kAllEncodings) {
      EXPECT_EQ(parsed.weight[static_cast<size_t>(e)],
                set.Contains(e) ? 1000 : kNo)
          << GrpcAcceptEncodingValue(set);
    }
    EXPECT_EQ(parsed.star, kNo);
  }
}

}  // namespace
}  // namespace rpc::compression
