// Holds the fast path (Negotiator's table) equal to the parser
// (accept_encoding.h), the one definition of the rules.

#include "rpc/compression/negotiator.h"

#include <algorithm>
#include <cctype>
#include <optional>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include "gtest/gtest.h"
#include "rpc/compression/accept_encoding.h"
#include "rpc/compression/encoding.h"

namespace rpc::compression {
namespace {

std::string ToUpper(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::toupper(c));
  return out;
}

std::string Name(std::optional<Encoding> e) {
  return e.has_value() ? std::string(EncodingName(*e)) : "(none: 406)";
}

// Every server configuration: each ordered selection of the four encodings
// (identity, when not selected, is appended last by Preference).
std::vector<Preference> AllPreferences() {
  std::vector<Preference> out;
  std::vector<Encoding> all(kAllEncodings.begin(), kAllEncodings.end());
  for (unsigned mask = 0; mask < (1u << kNumEncodings); ++mask) {
    std::vector<Encoding> chosen;
    for (Encoding e : all) {
      if (mask & (1u << static_cast<unsigned>(e))) chosen.push_back(e);
    }
    std::sort(chosen.begin(), chosen.end());
    do {
      Preference p = {};
      switch (chosen.size()) {
        case 0:
          p = Preference{};
          break;
        case 1:
          p = Preference{chosen[0]};
          break;
        case 2:
          p = Preference{chosen[0], chosen[1]};
          break;
        case 3:
          p = Preference{chosen[0], chosen[1], chosen[2]};
          break;
        default:
          p = Preference{chosen[0], chosen[1], chosen[2], chosen[3]};
          break;
      }
      out.push_back(p);
    } while (std::next_permutation(chosen.begin(), chosen.end()));
  }
  return out;
}

TEST(NegotiatorTest, TableValuesTakeTheFastPathAndSpellingVariantsDoNot) {
  for (std::string_view value : kFastPathValues) {
    EXPECT_TRUE(Negotiator::InFastPath(value)) << value;
    EXPECT_FALSE(Negotiator::InFastPath(ToUpper(value))) << value;
    EXPECT_FALSE(Negotiator::InFastPath(std::string(value) + " ")) << value;
    EXPECT_FALSE(Negotiator::InFastPath(std::string(value) + "\t")) << value;
    EXPECT_FALSE(Negotiator::InFastPath(" " + std::string(value))) << value;
    EXPECT_FALSE(Negotiator::InFastPath(value.substr(0, value.size() - 1)))
        << value;
  }
  EXPECT_FALSE(Negotiator::InFastPath(""));
  EXPECT_FALSE(Negotiator::InFastPath("gzip;q=0.8, deflate;q=0.5, br"));
  EXPECT_FALSE(Negotiator::InFastPath(std::string(200, 'g')));
}

// The test the issue names: for every table value, the fast answer equals
// what the parser returns for the same value uppercased and with trailing
// whitespace (spellings the table never matches).
TEST(NegotiatorTest, FastAnswersEqualTheParserOnOtherSpellings) {
  for (const Preference& p : AllPreferences()) {
    const Negotiator negotiator(p);
    for (std::string_view value : kFastPathValues) {
      const std::optional<Encoding> fast = negotiator.Negotiate(value);
      const std::string upper = ToUpper(value);
      const std::string trailing = std::string(value) + " \t ";
      ASSERT_FALSE(Negotiator::InFastPath(upper));
      ASSERT_FALSE(Negotiator::InFastPath(trailing));
      EXPECT_EQ(fast, Negotiate(upper, p)) << value;
      EXPECT_EQ(fast, Negotiate(trailing, p)) << value;
      EXPECT_EQ(fast, negotiator.Negotiate(upper)) << value;
      EXPECT_EQ(fast, Negotiate(value, p)) << value;
    }
  }
}

TEST(NegotiatorTest, DefaultTableBuiltAtCompileTime) {
  // kDefaultNegotiator is constexpr: its answers came from the parser during
  // compilation. Spelled out here as documentation of the defaults.
  struct Case {
    std::string_view value;
    Encoding want;
  };
  const Case cases[] = {
      {"identity, deflate, gzip", Encoding::kGzip},
      {"identity,deflate,gzip", Encoding::kGzip},
      {"identity,gzip", Encoding::kGzip},
      {"gzip", Encoding::kGzip},
      {"identity", Encoding::kIdentity},
      {"gzip, deflate, br, zstd", Encoding::kZstd},
      {"gzip, deflate, br", Encoding::kGzip},
      {"gzip, deflate", Encoding::kGzip},
      {"deflate, gzip, br, zstd", Encoding::kZstd},
      {"deflate, gzip", Encoding::kGzip},
      {"gzip,deflate", Encoding::kGzip},
  };
  ASSERT_EQ(std::size(cases), kNumFastPathValues);
  for (const Case& c : cases) {
    ASSERT_TRUE(Negotiator::InFastPath(c.value)) << c.value;
    EXPECT_EQ(Name(kDefaultNegotiator.Negotiate(c.value)), Name(c.want))
        << c.value;
  }
  EXPECT_TRUE(kDefaultNegotiator.preference() == kDefaultPreference);
}

TEST(NegotiatorTest, NoHeaderAndEmptyValue) {
  EXPECT_EQ(kDefaultNegotiator.Negotiate(std::nullopt), Encoding::kIdentity);
  EXPECT_EQ(kDefaultNegotiator.Negotiate(std::string_view()),
            Encoding::kIdentity);
  EXPECT_EQ(Negotiator(Preference{Encoding::kGzip}).Negotiate(std::nullopt),
            Encoding::kIdentity);
}

TEST(NegotiatorTest, OtherValuesTakeTheParser) {
  const char* values[] = {"gzip;q=0.8, deflate;q=0.5, br",
                          "*;q=0",
                          "identity;q=0",
                          "br",
                          "*",
                          "gzip;q=0"};
  for (const Preference& p : AllPreferences()) {
    const Negotiator negotiator(p);
    for (const char* v : values) {
      EXPECT_EQ(negotiator.Negotiate(v), Negotiate(v, p)) << v;
    }
  }
  EXPECT_EQ(kDefaultNegotiator.Negotiate("*;q=0"), std::nullopt);
}

// A value that differs from a table value in one octet lands in that value's
// slot (same length, often the same first octet) and must fail the compare.
TEST(NegotiatorTest, EveryOneOctetChangeMissesTheTable) {
  for (std::string_view value : kFastPathValues) {
    for (size_t i = 0; i < value.size(); ++i) {
      for (int bit = 0; bit < 8; ++bit) {
        std::string changed(value);
        changed[i] = static_cast<char>(changed[i] ^ (1 << bit));
        const bool is_table_value =
            std::find(std::begin(kFastPathValues), std::end(kFastPathValues),
                      changed) != std::end(kFastPathValues);
        EXPECT_EQ(Negotiator::InFastPath(changed), is_table_value)
            << value << " octet " << i;
        EXPECT_EQ(kDefaultNegotiator.Negotiate(changed),
                  Negotiate(changed, kDefaultPreference));
      }
    }
  }
}

// Random lists: codings known and unknown, in random case, with valid,
// malformed and extra parameters, random whitespace and empty elements; some
// are table values verbatim or with one octet changed. The Negotiator must
// agree with the parser on every one, for several configurations.
class RandomValues {
 public:
  explicit RandomValues(uint32_t seed) : rng_(seed) {}

  std::string Next() {
    const int kind = Pick(10);
    if (kind == 0)
      return std::string(kFastPathValues[Pick(kNumFastPathValues)]);
    if (kind == 1) {
      std::string v(kFastPathValues[Pick(kNumFastPathValues)]);
      v[Pick(v.size())] = Char();
      return v;
    }
    std::string out;
    const int elements = Pick(6);
    for (int i = 0; i < elements; ++i) {
      if (i != 0) out += Ows() + "," + Ows();
      if (Pick(12) == 0) continue;  // empty element
      out += RandomCase(kCodings[Pick(std::size(kCodings))]);
      const int params = Pick(4) == 0 ? 2 : Pick(2);
      for (int j = 0; j < params; ++j) {
        out += Ows() + ";" + Ows();
        out += kParams[Pick(std::size(kParams))];
      }
    }
    if (Pick(4) == 0) out = Ows() + out + Ows();
    return out;
  }

 private:
  static constexpr std::string_view kCodings[] = {
      "gzip",   "deflate", "zstd", "identity", "*",    "br",      "compress",
      "x-gzip", "gzip2",   "",     "snappy",   "GZIP", "\"gzip\""};
  static constexpr std::string_view kParams[] = {
      "q=0",          "q=1",     "q=0.5",    "q=0.123", "Q=0.7",
      "q=1.000",      "q=0.001", "q=0.000",  "q=0.",    "q=1.",
      "q=abc",        "q=1.5",   "q=0.1234", "q=",      "q=.5",
      "q=\"0.5\"",    "level=1", "q = 0.3",  "q",       "foo=\"a,b\"",
      "foo=\"x;q=0\""};

  size_t Pick(size_t n) {
    return std::uniform_int_distribution<size_t>(0, n - 1)(rng_);
  }
  char Char() { return " ,;=*qgzipdeflate01.\t\""[Pick(22)]; }
  std::string Ows() {
    static constexpr std::string_view kOws[] = {"",   "",   "",   " ",
                                                "\t", "  ", " \t"};
    return std::string(kOws[Pick(std::size(kOws))]);
  }
  std::string RandomCase(std::string_view s) {
    std::string out(s);
    if (Pick(3) == 0) {
      for (char& c : out) {
        if (Pick(2)) c = static_cast<char>(std::toupper(c));
      }
    }
    return out;
  }

  std::mt19937 rng_;
};

TEST(NegotiatorTest, PropertyFastPathEqualsParserOnRandomLists) {
  const Preference preferences[] = {
      kDefaultPreference,
      {Encoding::kGzip},
      {Encoding::kDeflate, Encoding::kGzip},
      {Encoding::kIdentity, Encoding::kZstd},
      {},
  };
  RandomValues random(20261130);
  int fast = 0;
  int none = 0;
  constexpr int kValues = 20000;
  for (int i = 0; i < kValues; ++i) {
    const std::string value = random.Next();
    fast += Negotiator::InFastPath(value);
    for (const Preference& p : preferences) {
      const Negotiator negotiator(p);
      const std::optional<Encoding> want = Negotiate(value, p);
      none += !want.has_value();
      ASSERT_EQ(Name(negotiator.Negotiate(value)), Name(want))
          << "value: \"" << value << "\"";
    }
    ASSERT_EQ(Name(kDefaultNegotiator.Negotiate(value)),
              Name(Negotiate(value, kDefaultPreference)))
        << "value: \"" << value << "\"";
  }
  // The generator reaches both paths and the 406 answer.
  EXPECT_GT(fast, kValues / 20);
  EXPECT_GT(none, 100);
}

}  // namespace
}  // namespace rpc::compression
