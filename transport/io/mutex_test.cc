#include "transport/io/mutex.h"

#include <thread>

#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "gtest/gtest.h"

namespace transport {
namespace {

constexpr absl::Duration kWait = absl::Seconds(10);

TEST(MutexTest, LockExcludesOtherThreads) {
  Mutex mu;
  int counter = 0;
  auto add = [&] {
    for (int i = 0; i < 100000; ++i) {
      MutexLock lock(&mu);
      mu.AssertHeld();
      ++counter;
    }
  };
  std::thread a(add), b(add);
  a.join();
  b.join();
  MutexLock lock(&mu);
  EXPECT_EQ(counter, 200000);
}

TEST(MutexTest, TryLockFailsWhileHeldAndSucceedsWhenFree) {
  Mutex mu;
  mu.Lock();
  bool got = true;
  std::thread([&] { got = mu.TryLock(); }).join();
  EXPECT_FALSE(got);
  mu.Unlock();
  std::thread([&] {
    got = mu.TryLock();
    if (got) mu.Unlock();
  }).join();
  EXPECT_TRUE(got);
  ASSERT_TRUE(mu.TryLock());
  mu.AssertHeld();
  mu.Unlock();
}

TEST(CondVarTest, SignalWakesAWaiter) {
  Mutex mu;
  CondVar cv;
  bool ready = false;
  bool woke = false;
  std::thread waiter([&] {
    MutexLock lock(&mu);
    const absl::Time deadline = absl::Now() + kWait;
    while (!ready && !cv.WaitWithDeadline(&mu, deadline)) {
    }
    mu.AssertHeld();
    woke = ready;
  });
  {
    MutexLock lock(&mu);
    ready = true;
  }
  cv.Signal();
  waiter.join();
  EXPECT_TRUE(woke);
}

TEST(CondVarTest, SignalAllWakesEveryWaiter) {
  Mutex mu;
  CondVar cv;
  bool go = false;
  int woken = 0;
  std::thread waiters[4];
  for (auto& t : waiters) {
    t = std::thread([&] {
      MutexLock lock(&mu);
      const absl::Time deadline = absl::Now() + kWait;
      while (!go) {
        if (cv.WaitWithDeadline(&mu, deadline)) break;
      }
      if (go) ++woken;
    });
  }
  {
    MutexLock lock(&mu);
    go = true;
  }
  cv.SignalAll();
  for (auto& t : waiters) t.join();
  EXPECT_EQ(woken, 4);
}

TEST(CondVarTest, PlainWaitReturnsOnSignal) {
  Mutex mu;
  CondVar cv;
  bool ready = false;
  std::thread signaller([&] {
    MutexLock lock(&mu);
    ready = true;
    cv.Signal();
  });
  {
    MutexLock lock(&mu);
    while (!ready) cv.Wait(&mu);
    mu.AssertHeld();
  }
  signaller.join();
  EXPECT_TRUE(ready);
}

TEST(CondVarTest, DeadlineWaitTimesOutWithNoSignal) {
  Mutex mu;
  CondVar cv;
  MutexLock lock(&mu);
  const absl::Time deadline = absl::Now() + absl::Milliseconds(20);
  bool timed_out = false;
  // Spurious wake-ups return false before the deadline: loop as a caller does.
  while (!timed_out) timed_out = cv.WaitWithDeadline(&mu, deadline);
  mu.AssertHeld();
  EXPECT_GE(absl::Now(), deadline);
}

TEST(CondVarTest, PastDeadlineAndZeroTimeoutReturnTimedOutAtOnce) {
  Mutex mu;
  CondVar cv;
  MutexLock lock(&mu);
  EXPECT_TRUE(cv.WaitWithDeadline(&mu, absl::Now() - absl::Seconds(1)));
  EXPECT_TRUE(cv.WaitWithDeadline(&mu, absl::InfinitePast()));
  EXPECT_TRUE(cv.WaitWithTimeout(&mu, absl::ZeroDuration()));
  mu.AssertHeld();
}

TEST(CondVarTest, DeadlineWaitSignalledBeforeTheDeadlineDoesNotTimeOut) {
  Mutex mu;
  CondVar cv;
  bool ready = false;
  bool timed_out = false;
  std::thread waiter([&] {
    MutexLock lock(&mu);
    const absl::Time deadline = absl::Now() + kWait;
    while (!ready && !timed_out) {
      timed_out = cv.WaitWithDeadline(&mu, deadline);
    }
  });
  {
    MutexLock lock(&mu);
    ready = true;
  }
  cv.SignalAll();
  waiter.join();
  EXPECT_FALSE(timed_out);
}

TEST(CondVarTest, TimeoutWaitSignalledDoesNotTimeOut) {
  Mutex mu;
  CondVar cv;
  bool ready = false;
  bool timed_out = false;
  std::thread waiter([&] {
    MutexLock lock(&mu);
    while (!ready && !timed_out) timed_out = cv.WaitWithTimeout(&mu, kWait);
  });
  {
    MutexLock lock(&mu);
    ready = true;
  }
  cv.Signal();
  waiter.join();
  EXPECT_FALSE(timed_out);
}

}  // namespace
}  // namespace transport
