#include "rpc/wire/timeout.h"

#include <random>

#include "gtest/gtest.h"

namespace rpc {
namespace {

TEST(TimeoutTest, EncodeFinestUnitThatFits) {
  EXPECT_EQ(EncodeTimeout(absl::Nanoseconds(1)), "1n");
  EXPECT_EQ(EncodeTimeout(absl::Nanoseconds(99999999)), "99999999n");
  EXPECT_EQ(EncodeTimeout(absl::Milliseconds(100)), "100000u");
  EXPECT_EQ(EncodeTimeout(absl::Seconds(1)), "1000000u");
  EXPECT_EQ(EncodeTimeout(absl::Microseconds(99999999)), "99999999u");
  EXPECT_EQ(EncodeTimeout(absl::Seconds(100)), "100000m");
  EXPECT_EQ(EncodeTimeout(absl::Milliseconds(99999999)), "99999999m");
  EXPECT_EQ(EncodeTimeout(absl::Hours(28)), "100800S");
  EXPECT_EQ(EncodeTimeout(absl::Seconds(99999999)), "99999999S");
  EXPECT_EQ(EncodeTimeout(absl::Seconds(100000000)), "1666667M");
  EXPECT_EQ(EncodeTimeout(absl::Minutes(99999999)), "99999999M");
  EXPECT_EQ(EncodeTimeout(absl::Minutes(100000000)), "1666667H");
  EXPECT_EQ(EncodeTimeout(absl::Hours(99999999)), "99999999H");
}

TEST(TimeoutTest, EncodeRoundsUp) {
  // Never shorter than asked.
  EXPECT_EQ(EncodeTimeout(absl::Nanoseconds(100000001)), "100001u");
  EXPECT_EQ(EncodeTimeout(absl::Seconds(100) + absl::Nanoseconds(1)),
            "100001m");
  // absl::Duration resolves quarter nanoseconds.
  EXPECT_EQ(EncodeTimeout(absl::Nanoseconds(1) / 4), "1n");
  EXPECT_EQ(EncodeTimeout(absl::Nanoseconds(5) + absl::Nanoseconds(1) / 4),
            "6n");
}

TEST(TimeoutTest, EncodeEdges) {
  EXPECT_EQ(EncodeTimeout(absl::ZeroDuration()), "1n");
  EXPECT_EQ(EncodeTimeout(absl::Seconds(-5)), "1n");
  EXPECT_EQ(EncodeTimeout(-absl::InfiniteDuration()), "1n");
  EXPECT_EQ(EncodeTimeout(absl::Hours(100000000)), "99999999H");
  EXPECT_EQ(EncodeTimeout(absl::InfiniteDuration()), "99999999H");
  char buf[kMaxTimeoutLength];
  EXPECT_EQ(EncodeTimeout(absl::Hours(99999999), buf), kMaxTimeoutLength);
}

TEST(TimeoutTest, ParseEveryUnit) {
  EXPECT_EQ(*ParseTimeout("1H"), absl::Hours(1));
  EXPECT_EQ(*ParseTimeout("2M"), absl::Minutes(2));
  EXPECT_EQ(*ParseTimeout("3S"), absl::Seconds(3));
  EXPECT_EQ(*ParseTimeout("4m"), absl::Milliseconds(4));
  EXPECT_EQ(*ParseTimeout("5u"), absl::Microseconds(5));
  EXPECT_EQ(*ParseTimeout("6n"), absl::Nanoseconds(6));
  EXPECT_EQ(*ParseTimeout("99999999H"), absl::Hours(99999999));
  EXPECT_EQ(*ParseTimeout("00000001S"), absl::Seconds(1));
  EXPECT_EQ(*ParseTimeout("0n"), absl::ZeroDuration());
}

TEST(TimeoutTest, ParseStrict) {
  for (const char* bad :
       {"", "S", "1", "10", "123456789S", "1s", "1h", "1x", " 1S", "1S ", "1 S",
        "-1S", "+1S", "1.5S", "1SS", "0x1S", "1Sx", "\xd9\xa1S"}) {
    const auto r = ParseTimeout(bad);
    EXPECT_FALSE(r.ok()) << bad;
    if (!r.ok()) {
      EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument);
    }
  }
}

TEST(TimeoutTest, RoundTripNeverShortens) {
  std::mt19937_64 rng(11);
  for (int i = 0; i < 20000; ++i) {
    // Log-uniform over ns .. years.
    const int64_t scale = int64_t{1} << (rng() % 62);
    const absl::Duration d = absl::Nanoseconds(
        static_cast<int64_t>(rng() % static_cast<uint64_t>(scale) + 1));
    const std::string enc = EncodeTimeout(d);
    ASSERT_LE(enc.size(), kMaxTimeoutLength);
    const auto back = ParseTimeout(enc);
    ASSERT_TRUE(back.ok()) << enc;
    ASSERT_GE(*back, d) << enc;
    // At most one unit of the encoding longer: the value has at least 6
    // digits (relative error < 1e-5), exact below 100 ms.
    if (d < absl::Milliseconds(100)) {
      ASSERT_EQ(*back, d);
    } else {
      ASSERT_LE(absl::FDivDuration(*back - d, d), 1.01e-5) << enc;
    }
  }
}

}  // namespace
}  // namespace rpc
