// WorkerPool: growth while tasks block, retirement to the minimum when idle.

#include "rpc/internal/worker_pool.h"

#include <atomic>

#include "absl/synchronization/notification.h"
#include "gtest/gtest.h"

namespace rpc {
namespace internal {
namespace {

// Only a hang reaches this bound.
constexpr absl::Duration kHangGuard = absl::Seconds(30);

// `n` tasks that block until `release`; returns when all of them run.
void BlockTasks(WorkerPool* pool, int n, absl::Notification* release,
                std::atomic<int>* running) {
  for (int i = 0; i < n; ++i) {
    pool->Submit([release, running] {
      ++*running;
      release->WaitForNotification();
    });
  }
  // Polls a counter that only grows; bounded by the guard.
  const absl::Time limit = absl::Now() + kHangGuard;
  while (running->load() < n && absl::Now() < limit) {
    absl::SleepFor(absl::Milliseconds(1));
  }
  ASSERT_EQ(running->load(), n);
}

TEST(WorkerPoolTest, BurstGrowsThenRetiresToTheMinimum) {
  WorkerPool pool(2, 64, absl::Milliseconds(20));
  EXPECT_EQ(pool.num_threads(), 2);
  absl::Notification release;
  std::atomic<int> running{0};
  BlockTasks(&pool, 40, &release, &running);
  EXPECT_EQ(pool.num_threads(), 40);
  release.Notify();
  ASSERT_TRUE(pool.WaitIdle(kHangGuard));
  ASSERT_TRUE(pool.WaitForThreadsAtMost(2, kHangGuard));
  EXPECT_EQ(pool.num_threads(), 2);

  // The pool still works and grows again.
  absl::Notification release2;
  std::atomic<int> running2{0};
  BlockTasks(&pool, 10, &release2, &running2);
  EXPECT_EQ(pool.num_threads(), 10);
  release2.Notify();
  ASSERT_TRUE(pool.WaitForThreadsAtMost(2, kHangGuard));
}

TEST(WorkerPoolTest, NeverBelowTheMinimum) {
  WorkerPool pool(3, 8, absl::Milliseconds(1));
  // Retirement would have happened many times over by now if it ignored the
  // minimum; the pool must still hold 3 threads that run tasks.
  std::atomic<int> done{0};
  for (int round = 0; round < 20; ++round) {
    absl::Notification ran;
    pool.Submit([&] {
      ++done;
      ran.Notify();
    });
    ASSERT_TRUE(ran.WaitForNotificationWithTimeout(kHangGuard));
    EXPECT_GE(pool.num_threads(), 3);
  }
  EXPECT_EQ(done.load(), 20);
  ASSERT_TRUE(pool.WaitForThreadsAtMost(3, kHangGuard));
  EXPECT_EQ(pool.num_threads(), 3);
}

TEST(WorkerPoolTest, DestructorRunsQueuedTasksAndJoinsRetired) {
  std::atomic<int> done{0};
  {
    WorkerPool pool(1, 4, absl::Milliseconds(1));
    absl::Notification release;
    std::atomic<int> running{0};
    BlockTasks(&pool, 4, &release, &running);
    for (int i = 0; i < 10; ++i) pool.Submit([&] { ++done; });
    release.Notify();
    ASSERT_TRUE(pool.WaitIdle(kHangGuard));
    ASSERT_TRUE(pool.WaitForThreadsAtMost(1, kHangGuard));
  }
  EXPECT_EQ(done.load(), 10);
}

}  // namespace
}  // namespace internal
}  // namespace rpc
