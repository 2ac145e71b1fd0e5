// Proves @com_google_absl is wired: StatusOr, strings, containers, time and a
// Mutex actually link and behave.
#include <string>
#include <thread>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "absl/time/time.h"
#include "gtest/gtest.h"

namespace {

absl::StatusOr<int> ParsePort(absl::string_view text) {
  int port = 0;
  if (!absl::SimpleAtoi(text, &port) || port < 0 || port > 65535) {
    return absl::InvalidArgumentError(absl::StrCat("bad port: ", text));
  }
  return port;
}

TEST(AbslTest, StatusOrCarriesValueOrError) {
  absl::StatusOr<int> ok = ParsePort("8080");
  ASSERT_TRUE(ok.ok());
  EXPECT_EQ(*ok, 8080);

  absl::StatusOr<int> bad = ParsePort("http");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(bad.status().message(), "bad port: http");
}

TEST(AbslTest, FlatHashMapAndSplit) {
  absl::flat_hash_map<std::string, int> counts;
  for (absl::string_view word : absl::StrSplit("a,b,a,c,a", ','))
    ++counts[word];
  EXPECT_EQ(counts["a"], 3);
  EXPECT_EQ(counts.size(), 3u);
}

TEST(AbslTest, MutexAndNotificationAcrossThreads) {
  absl::Mutex mu;
  int value = 0;
  absl::Notification done;
  std::thread t([&] {
    absl::MutexLock lock(&mu);
    value = 42;
    done.Notify();
  });
  ASSERT_TRUE(done.WaitForNotificationWithTimeout(absl::Seconds(10)));
  t.join();
  absl::MutexLock lock(&mu);
  EXPECT_EQ(value, 42);
}

TEST(AbslTest, DurationFormatting) {
  EXPECT_EQ(absl::FormatDuration(absl::Milliseconds(1500)), "1.5s");
}

}  // namespace
