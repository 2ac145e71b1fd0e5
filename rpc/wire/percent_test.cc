#include "rpc/wire/percent.h"

#include <random>
#include <string>

#include "gtest/gtest.h"

namespace rpc {
namespace {

TEST(PercentTest, PlainAsciiUntouched) {
  const std::string plain = "Hello, world! ~{}[]|\\\"'`^ 0123456789 zZ";
  EXPECT_FALSE(NeedsPercentEncoding(plain));
  EXPECT_EQ(PercentEncode(plain), plain);
  std::string storage = "unchanged";
  const std::string_view v = PercentEncodeIfNeeded(plain, &storage);
  EXPECT_EQ(v.data(), plain.data());  // the input itself
  EXPECT_EQ(storage, "unchanged");
  EXPECT_EQ(PercentEncode(""), "");
}

TEST(PercentTest, EncodesControlHighAndPercent) {
  EXPECT_EQ(PercentEncode("100%"), "100%25");
  EXPECT_EQ(PercentEncode("a\nb\tc\r"), "a%0Ab%09c%0D");
  EXPECT_EQ(PercentEncode(std::string("\0\x1f\x7f", 3)), "%00%1F%7F");
  // UTF-8 octets are escaped one by one (upper-case hex).
  EXPECT_EQ(PercentEncode("\xe2\x82\xac 5"), "%E2%82%AC 5");
  // The interop test "special_status_message" text.
  EXPECT_EQ(
      PercentEncode("\t\ntest with whitespace\r\nand Unicode BMP \xe2\x98\xba"
                    " and non-BMP \xf0\x9f\x98\x88\t\n"),
      "%09%0Atest with whitespace%0D%0Aand Unicode BMP %E2%98%BA and "
      "non-BMP %F0%9F%98%88%09%0A");
  std::string storage;
  EXPECT_EQ(PercentEncodeIfNeeded("x%y", &storage), "x%25y");
  EXPECT_EQ(storage, "x%25y");
}

TEST(PercentTest, EveryOctet) {
  for (int c = 0; c < 256; ++c) {
    const std::string in(1, static_cast<char>(c));
    const bool plain = c >= 0x20 && c <= 0x7e && c != '%';
    EXPECT_EQ(NeedsPercentEncoding(in), !plain) << c;
    const std::string enc = PercentEncode(in);
    if (plain) {
      EXPECT_EQ(enc, in);
    } else {
      char want[4];
      snprintf(want, sizeof(want), "%%%02X", c);
      EXPECT_EQ(enc, want);
    }
    EXPECT_EQ(PercentDecode(enc), in);
  }
}

TEST(PercentTest, DecodeValid) {
  EXPECT_EQ(PercentDecode("100%25"), "100%");
  EXPECT_EQ(PercentDecode("%e2%82%ac"), "\xe2\x82\xac");  // lower-case too
  EXPECT_EQ(PercentDecode("%E2%82%AC"), "\xe2\x82\xac");
  EXPECT_EQ(PercentDecode("no escapes"), "no escapes");
  std::string storage = "unchanged";
  const std::string_view in = "no escapes";
  EXPECT_EQ(PercentDecodeIfNeeded(in, &storage).data(), in.data());
  EXPECT_EQ(storage, "unchanged");
}

TEST(PercentTest, DecodeInvalidPassesThrough) {
  // "implementations MUST NOT error or throw away the message": broken
  // sequences stay as they are, valid ones around them decode.
  EXPECT_EQ(PercentDecode("%"), "%");
  EXPECT_EQ(PercentDecode("%4"), "%4");
  EXPECT_EQ(PercentDecode("a%"), "a%");
  EXPECT_EQ(PercentDecode("%G0"), "%G0");
  EXPECT_EQ(PercentDecode("%0G"), "%0G");
  EXPECT_EQ(PercentDecode("%%41"), "%A");
  EXPECT_EQ(PercentDecode("50% off %41"), "50% off A");
  EXPECT_EQ(PercentDecode("%41%4"), "A%4");
  // Octets a peer should have escaped are kept.
  EXPECT_EQ(PercentDecode("tab\there %41"), "tab\there A");
}

TEST(PercentTest, StrictDecodeRefusesBadEscapes) {
  EXPECT_EQ(PercentDecodeStrict("a%20b%2f"), "a b/");
  EXPECT_EQ(PercentDecodeStrict("plain"), "plain");
  EXPECT_EQ(PercentDecodeStrict("%25"), "%");
  for (const char* bad : {"%", "a%2", "%zz", "%2g", "ok%20then%"}) {
    EXPECT_EQ(PercentDecodeStrict(bad), std::nullopt) << bad;
  }
}

TEST(PercentTest, RandomRoundTrip) {
  std::mt19937 rng(7);
  for (int i = 0; i < 2000; ++i) {
    std::string s(rng() % 40, '\0');
    for (char& c : s) c = static_cast<char>(rng() % 256);
    const std::string enc = PercentEncode(s);
    for (char c : enc) {
      ASSERT_TRUE(c >= 0x20 && c <= 0x7e);
    }
    ASSERT_EQ(PercentDecode(enc), s);
    std::string storage;
    ASSERT_EQ(PercentEncodeIfNeeded(s, &storage), enc);
  }
}

}  // namespace
}  // namespace rpc
