// Backoff: the sequence of gRPC's connection-backoff.md with a fixed random
// source.

#include "rpc/internal/backoff.h"

#include <vector>

#include "gtest/gtest.h"

namespace rpc {
namespace internal {
namespace {

double Ms(absl::Duration d) { return absl::ToDoubleMilliseconds(d); }

TEST(BackoffTest, DefaultsAreGrpcs) {
  BackoffOptions o;
  EXPECT_EQ(o.initial_backoff, absl::Seconds(1));
  EXPECT_EQ(o.multiplier, 1.6);
  EXPECT_EQ(o.jitter, 0.2);
  EXPECT_EQ(o.max_backoff, absl::Seconds(120));
  EXPECT_EQ(o.min_connect_timeout, absl::Seconds(20));
}

TEST(BackoffTest, NoJitterSequence) {
  // uniform() == 0.5 is a jitter of zero.
  Backoff b(BackoffOptions(), [] { return 0.5; });
  const std::vector<double> want = {
      1000,           1600,      2560,       4096,        6553.6,
      10485.76,       16777.216, 26843.5456, 42949.67296, 68719.476736,
      109951.1627776, 120000,    120000};
  for (double w : want) EXPECT_NEAR(Ms(b.NextAttemptDelay()), w, 0.01);
}

TEST(BackoffTest, JitterBounds) {
  // The first delay has no jitter; later ones move by at most 20% either
  // way, around the unjittered backoff (which itself grows without jitter).
  Backoff low(BackoffOptions(), [] { return 0.0; });
  Backoff high(BackoffOptions(), [] { return 0.999999999; });
  EXPECT_NEAR(Ms(low.NextAttemptDelay()), 1000, 0.01);
  EXPECT_NEAR(Ms(high.NextAttemptDelay()), 1000, 0.01);
  EXPECT_NEAR(Ms(low.NextAttemptDelay()), 1600 * 0.8, 0.01);
  EXPECT_NEAR(Ms(high.NextAttemptDelay()), 1600 * 1.2, 0.01);
  EXPECT_NEAR(Ms(low.NextAttemptDelay()), 2560 * 0.8, 0.01);
  EXPECT_NEAR(Ms(high.NextAttemptDelay()), 2560 * 1.2, 0.01);
}

TEST(BackoffTest, SeededSequenceStaysInTheBand) {
  // A deterministic generator: every delay within +-20% of the unjittered
  // one, and not all equal to it.
  uint32_t x = 12345;
  Backoff b(BackoffOptions(), [&x] {
    x = x * 1103515245u + 12345u;
    return (x >> 8) / static_cast<double>(1u << 24);
  });
  double base = 1000;
  EXPECT_NEAR(Ms(b.NextAttemptDelay()), base, 0.01);
  int off = 0;
  for (int i = 0; i < 30; ++i) {
    base = std::min(base * 1.6, 120000.0);
    const double d = Ms(b.NextAttemptDelay());
    EXPECT_GE(d, base * 0.8 - 0.01);
    EXPECT_LE(d, base * 1.2 + 0.01);
    if (std::abs(d - base) > 1) ++off;
  }
  EXPECT_GT(off, 20);
}

TEST(BackoffTest, ResetStartsOver) {
  Backoff b(BackoffOptions(), [] { return 0.5; });
  b.NextAttemptDelay();
  b.NextAttemptDelay();
  b.NextAttemptDelay();
  b.Reset();
  EXPECT_NEAR(Ms(b.NextAttemptDelay()), 1000, 0.01);
  EXPECT_NEAR(Ms(b.NextAttemptDelay()), 1600, 0.01);
}

TEST(BackoffTest, ConnectTimeoutIsAtLeastTheMinimum) {
  Backoff b(BackoffOptions(), [] { return 0.5; });
  EXPECT_EQ(b.ConnectTimeout(absl::Seconds(1)), absl::Seconds(20));
  EXPECT_EQ(b.ConnectTimeout(absl::Seconds(100)), absl::Seconds(100));
}

TEST(BackoffTest, CustomOptions) {
  BackoffOptions o;
  o.initial_backoff = absl::Milliseconds(10);
  o.multiplier = 2;
  o.jitter = 0;
  o.max_backoff = absl::Milliseconds(50);
  Backoff b(o);  // The default generator; no jitter makes it exact.
  for (double w : {10.0, 20.0, 40.0, 50.0, 50.0}) {
    EXPECT_NEAR(Ms(b.NextAttemptDelay()), w, 0.001);
  }
}

}  // namespace
}  // namespace internal
}  // namespace rpc
