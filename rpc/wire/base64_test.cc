#include "rpc/wire/base64.h"

#include <random>
#include <string>

#include "gtest/gtest.h"

namespace rpc {
namespace {

struct Vector {
  const char* plain;
  const char* padded;
  const char* unpadded;
};

// RFC 4648 section 10.
constexpr Vector kRfc4648Vectors[] = {
    {"", "", ""},
    {"f", "Zg==", "Zg"},
    {"fo", "Zm8=", "Zm8"},
    {"foo", "Zm9v", "Zm9v"},
    {"foob", "Zm9vYg==", "Zm9vYg"},
    {"fooba", "Zm9vYmE=", "Zm9vYmE"},
    {"foobar", "Zm9vYmFy", "Zm9vYmFy"},
};

TEST(Base64Test, Rfc4648Section10) {
  for (const Vector& v : kRfc4648Vectors) {
    EXPECT_EQ(Base64Encode(v.plain, /*padded=*/true), v.padded);
    EXPECT_EQ(Base64Encode(v.plain), v.unpadded);
    std::string out;
    EXPECT_TRUE(Base64Decode(v.padded, &out)) << v.padded;
    EXPECT_EQ(out, v.plain);
    EXPECT_TRUE(Base64Decode(v.unpadded, &out)) << v.unpadded;
    EXPECT_EQ(out, v.plain);
  }
}

TEST(Base64Test, WholeAlphabet) {
  std::string all;
  for (int i = 0; i < 256; ++i) all.push_back(static_cast<char>(i));
  const std::string enc = Base64Encode(all);
  EXPECT_EQ(enc.substr(0, 8), "AAECAwQF");
  EXPECT_EQ(enc.substr(enc.size() - 6), "/P3+/w");
  std::string out;
  ASSERT_TRUE(Base64Decode(enc, &out));
  EXPECT_EQ(out, all);
  EXPECT_EQ(Base64Encode("\xfb\xff\xbf"), "+/+/");
}

TEST(Base64Test, RejectsInvalid) {
  for (const char* bad : {
           "Z",             // one character of a group encodes nothing
           "Zm9vY",         // ditto after a whole group
           "Zm9vYg=",       // partial padding
           "Zg===",         // too much padding
           "====",          // padding only
           "=",             //
           "Zg=a",          // data after padding
           "Zm=9",          // padding in the middle
           "Zm9vYg==Zm9v",  // padding then more groups
           "Zm9v Yg",       // whitespace (absl would skip it)
           "Zm9v\nYmFy",    //
           " Zm9v",         //
           "Zm9vYg-_",      // URL-safe alphabet
           "Zm9v!mFy",      //
           "Zm9vYmF\x80",   //
       }) {
    std::string out = "keep";
    EXPECT_FALSE(Base64DecodeAppend(bad, &out)) << bad;
    EXPECT_EQ(out, "keep") << bad;
  }
}

TEST(Base64Test, NonCanonicalTrailingBitsAccepted) {
  // "Zh" sets bits below the final octet; most decoders ignore them.
  std::string out;
  EXPECT_TRUE(Base64Decode("Zh", &out));
  EXPECT_EQ(out, "f");
  EXPECT_TRUE(Base64Decode("Zm9=", &out));
  EXPECT_EQ(out, "fo");
}

TEST(Base64Test, AppendKeepsPrefix) {
  std::string out = "x:";
  EXPECT_TRUE(Base64DecodeAppend("Zm9v", &out));
  EXPECT_EQ(out, "x:foo");
  Base64EncodeAppend("foo", &out);
  EXPECT_EQ(out, "x:fooZm9v");
}

TEST(Base64Test, RandomRoundTrip) {
  std::mt19937 rng(3);
  for (int i = 0; i < 3000; ++i) {
    std::string s(rng() % 70, '\0');
    for (char& c : s) c = static_cast<char>(rng());
    for (bool padded : {false, true}) {
      const std::string enc = Base64Encode(s, padded);
      ASSERT_EQ(enc.size(), Base64EncodedLength(s.size(), padded));
      if (padded) {
        ASSERT_EQ(enc.size() % 4, 0u);
      } else {
        ASSERT_EQ(enc.find('='), std::string::npos);
      }
      std::string out;
      ASSERT_TRUE(Base64Decode(enc, &out));
      ASSERT_EQ(out, s);
    }
  }
}

}  // namespace
}  // namespace rpc
