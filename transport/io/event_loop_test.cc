#include "transport/io/event_loop.h"

#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <memory>
#include <random>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "absl/synchronization/notification.h"
#include "absl/time/time.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "transport/testing/thread_probe.h"
#include "transport/testing/wait_until.h"

namespace transport {
namespace {

using ::testing::ElementsAre;

constexpr absl::Duration kWait = absl::Seconds(10);

std::unique_ptr<EventLoop> NewLoop() {
  auto loop = EventLoop::Create();
  EXPECT_TRUE(loop.ok()) << loop.status();
  return *std::move(loop);
}

TEST(EventLoopTest, ManualClockMovesOnlyWhenAdvanced) {
  auto created = EventLoop::CreateWithManualClock();
  ASSERT_TRUE(created.ok()) << created.status();
  EventLoop& loop = **created;
  EXPECT_TRUE(loop.manual_clock());
  const EventLoop::Clock::time_point start = loop.Now();
  std::vector<int> fired;
  loop.RunAfter(absl::Milliseconds(10), [&] { fired.push_back(10); });
  loop.RunAfter(absl::Seconds(5), [&] { fired.push_back(5000); });
  // Never sleeps for a timer, and the clock stands still however long the
  // iterations take.
  for (int i = 0; i < 5; ++i) loop.RunOnce(absl::InfiniteDuration());
  EXPECT_TRUE(fired.empty());
  EXPECT_EQ(loop.Now(), start);
  loop.AdvanceClock(absl::Milliseconds(9));
  loop.RunOnce(absl::ZeroDuration());
  EXPECT_TRUE(fired.empty());
  loop.AdvanceClock(absl::Milliseconds(1));
  loop.RunOnce(absl::ZeroDuration());
  EXPECT_THAT(fired, ElementsAre(10));
  EXPECT_EQ(loop.Now() - start, std::chrono::milliseconds(10));
  // Timers are set from the manual time, also outside an iteration.
  loop.RunAfter(absl::Milliseconds(1), [&] { fired.push_back(1); });
  loop.AdvanceClock(absl::Milliseconds(1));
  loop.RunOnce(absl::ZeroDuration());
  EXPECT_THAT(fired, ElementsAre(10, 1));
}

TEST(EventLoopTest, TimersFireInDeadlineOrder) {
  auto loop = NewLoop();
  std::vector<int> order;
  loop->RunAfter(absl::Milliseconds(30), [&] { order.push_back(3); });
  loop->RunAfter(absl::Milliseconds(10), [&] { order.push_back(1); });
  loop->RunAfter(absl::Milliseconds(20), [&] { order.push_back(2); });
  ASSERT_TRUE(loop->RunUntil([&] { return order.size() == 3; }, kWait));
  EXPECT_THAT(order, ElementsAre(1, 2, 3));
}

TEST(EventLoopTest, EqualDeadlinesFireInInsertionOrder) {
  auto loop = NewLoop();
  std::vector<int> order;
  const EventLoop::Clock::time_point when =
      EventLoop::Clock::now() + std::chrono::milliseconds(5);
  for (int i = 0; i < 10; ++i)
    loop->RunAt(when, [&, i] { order.push_back(i); });
  ASSERT_TRUE(loop->RunUntil([&] { return order.size() == 10; }, kWait));
  EXPECT_THAT(order, ElementsAre(0, 1, 2, 3, 4, 5, 6, 7, 8, 9));
}

TEST(EventLoopTest, TimerDoesNotFireEarly) {
  auto loop = NewLoop();
  const auto start = EventLoop::Clock::now();
  EventLoop::Clock::time_point fired;
  bool done = false;
  loop->RunAfter(absl::Milliseconds(50), [&] {
    fired = EventLoop::Clock::now();
    done = true;
  });
  ASSERT_TRUE(loop->RunUntil([&] { return done; }, kWait));
  EXPECT_GE(fired - start, std::chrono::milliseconds(50));
}

// Now() is read once per iteration; a timer armed late in a long iteration
// must count its delay from when it was armed, not from the iteration's start
// (a backoff armed under load would come out short by the iteration's
// length). Only lower bounds: safe however slow the machine is.
TEST(EventLoopTest, TimerArmedLateInAnIterationDoesNotFireEarly) {
  auto loop = NewLoop();
  constexpr auto kDelay = std::chrono::milliseconds(20);
  EventLoop::Clock::time_point armed;
  EventLoop::Clock::time_point fired;
  bool done = false;
  loop->Post([&] {
    // Stand in for an iteration busy with other work: stay until the cached
    // time is older than twice the delay.
    while (EventLoop::Clock::now() - loop->Now() < 2 * kDelay) {
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    armed = EventLoop::Clock::now();
    loop->RunAfter(absl::FromChrono(kDelay), [&] {
      fired = EventLoop::Clock::now();
      done = true;
    });
  });
  ASSERT_TRUE(loop->RunUntil([&] { return done; }, kWait));
  EXPECT_GE(absl::FromChrono(fired - armed), absl::FromChrono(kDelay));
}

TEST(EventLoopTest, ManualClockTimerArmedAfterAdvanceInAnIteration) {
  auto created = EventLoop::CreateWithManualClock();
  ASSERT_TRUE(created.ok()) << created.status();
  EventLoop& loop = **created;
  bool fired = false;
  loop.Post([&] {
    // Now() stays put for the rest of the iteration; the timer counts from
    // the advanced clock.
    loop.AdvanceClock(absl::Milliseconds(5));
    loop.RunAfter(absl::Milliseconds(2), [&] { fired = true; });
  });
  loop.RunOnce(absl::ZeroDuration());
  loop.AdvanceClock(absl::Milliseconds(1));
  loop.RunOnce(absl::ZeroDuration());
  EXPECT_FALSE(fired);
  loop.AdvanceClock(absl::Milliseconds(1));
  loop.RunOnce(absl::ZeroDuration());
  EXPECT_TRUE(fired);
}

TEST(EventLoopTest, CancelPreventsFiring) {
  auto loop = NewLoop();
  std::vector<int> fired;
  EventLoop::TimerId a =
      loop->RunAfter(absl::Milliseconds(5), [&] { fired.push_back(1); });
  loop->RunAfter(absl::Milliseconds(10), [&] { fired.push_back(2); });
  EXPECT_TRUE(loop->Cancel(a));
  EXPECT_FALSE(loop->Cancel(a));  // already cancelled
  EXPECT_FALSE(loop->Cancel(EventLoop::kInvalidTimer));
  ASSERT_TRUE(loop->RunUntil([&] { return !fired.empty(); }, kWait));
  loop->RunOnce(absl::Milliseconds(20));
  EXPECT_THAT(fired, ElementsAre(2));
  EXPECT_EQ(loop->pending_timers(), 0u);
}

TEST(EventLoopTest, CancelDestroysTaskAtOnce) {
  auto loop = NewLoop();
  auto token = std::make_shared<int>(0);
  std::weak_ptr<int> weak = token;
  EventLoop::TimerId id =
      loop->RunAfter(absl::Hours(1), [token = std::move(token)] {});
  EXPECT_FALSE(weak.expired());
  EXPECT_TRUE(loop->Cancel(id));
  EXPECT_TRUE(weak.expired());
}

TEST(EventLoopTest, TimerCanCancelAnotherDueInSameIteration) {
  auto loop = NewLoop();
  const auto when = EventLoop::Clock::now();
  bool second_fired = false;
  EventLoop::TimerId second = EventLoop::kInvalidTimer;
  loop->RunAt(when, [&] { EXPECT_TRUE(loop->Cancel(second)); });
  second = loop->RunAt(when, [&] { second_fired = true; });
  loop->RunOnce(absl::ZeroDuration());
  loop->RunOnce(absl::ZeroDuration());
  EXPECT_FALSE(second_fired);
}

TEST(EventLoopTest, ZeroDelayRearmDoesNotStarveTheIteration) {
  auto loop = NewLoop();
  int runs = 0;
  std::function<void()> rearm = [&] {
    ++runs;
    loop->RunAfter(absl::ZeroDuration(), rearm);
  };
  loop->RunAfter(absl::ZeroDuration(), rearm);
  loop->RunOnce(absl::ZeroDuration());
  EXPECT_EQ(runs, 1);  // the re-armed timer waits for the next iteration
  loop->RunOnce(absl::ZeroDuration());
  EXPECT_EQ(runs, 2);
  // Break the cycle so the pending timer is dropped with the loop.
  rearm = [] {};
}

TEST(EventLoopTest, ManyTimersRandomDelaysFireSortedAndCancelledNever) {
  auto loop = NewLoop();
  std::mt19937 rng(42);
  std::uniform_int_distribution<int> delay_ms(0, 50);
  constexpr int kTimers = 10000;
  std::vector<EventLoop::Clock::time_point> deadlines;
  std::vector<EventLoop::TimerId> ids;
  std::vector<int> fired;
  const auto base = EventLoop::Clock::now();
  for (int i = 0; i < kTimers; ++i) {
    const auto when = base + std::chrono::milliseconds(delay_ms(rng));
    deadlines.push_back(when);
    ids.push_back(loop->RunAt(when, [&fired, i] { fired.push_back(i); }));
  }
  // Cancel every third one.
  std::set<int> cancelled;
  for (int i = 0; i < kTimers; i += 3) {
    ASSERT_TRUE(loop->Cancel(ids[i]));
    cancelled.insert(i);
  }
  const size_t expected = kTimers - cancelled.size();
  ASSERT_TRUE(loop->RunUntil([&] { return fired.size() == expected; }, kWait));
  for (size_t k = 1; k < fired.size(); ++k) {
    const int a = fired[k - 1], b = fired[k];
    ASSERT_TRUE(deadlines[a] < deadlines[b] ||
                (deadlines[a] == deadlines[b] && a < b))
        << "timer " << a << " fired before " << b;
  }
  for (int i : fired) ASSERT_EQ(cancelled.count(i), 0u);
  EXPECT_EQ(loop->pending_timers(), 0u);
}

TEST(EventLoopTest, PostFromAnotherThreadWakesTheLoop) {
  auto loop = NewLoop();
  std::atomic<bool> ran{false};
  std::thread::id ran_on;
  std::thread poster([&] {
    loop->Post([&] {
      ran_on = std::this_thread::get_id();
      ran = true;
    });
  });
  // The loop sleeps without a timer: only the eventfd can wake it.
  const auto start = EventLoop::Clock::now();
  while (!ran && EventLoop::Clock::now() - start < std::chrono::seconds(10)) {
    loop->RunOnce(absl::InfiniteDuration());
  }
  poster.join();
  EXPECT_TRUE(ran);
  EXPECT_EQ(ran_on, std::this_thread::get_id());
}

TEST(EventLoopTest, PostedTasksRunInOrderAcrossManyThreads) {
  auto loop = NewLoop();
  constexpr int kThreads = 4;
  constexpr int kPerThread = 5000;
  std::vector<std::vector<int>> seen(kThreads);
  std::atomic<int> total{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < kPerThread; ++i) {
        loop->Post([&, t, i] {
          seen[t].push_back(i);
          total.fetch_add(1);
        });
      }
    });
  }
  ASSERT_TRUE(loop->RunUntil(
      [&] { return total.load() == kThreads * kPerThread; }, kWait));
  for (auto& t : threads) t.join();
  for (int t = 0; t < kThreads; ++t) {
    ASSERT_EQ(seen[t].size(), static_cast<size_t>(kPerThread));
    for (int i = 0; i < kPerThread; ++i) ASSERT_EQ(seen[t][i], i);
  }
}

TEST(EventLoopTest, RunInLoopIsInlineOnTheLoopThread) {
  auto loop = NewLoop();
  bool ran = false;
  loop->RunInLoop([&] { ran = true; });
  EXPECT_TRUE(ran);  // the creating thread owns the loop until another runs it
}

TEST(EventLoopTest, StopFromAnotherThreadEndsRun) {
  auto loop = NewLoop();
  absl::Notification running;
  loop->Post([&] { running.Notify(); });
  std::thread stopper([&] {
    ASSERT_TRUE(running.WaitForNotificationWithTimeout(kWait));
    loop->Stop();
  });
  loop->Run();  // returns only because of Stop
  stopper.join();
  // Run again: the stop request was consumed.
  bool ran = false;
  loop->Post([&] {
    ran = true;
    loop->Stop();
  });
  loop->Run();
  EXPECT_TRUE(ran);
}

TEST(EventLoopTest, WatchReportsEdgesAndUnwatchStopsThem) {
  auto loop = NewLoop();
  int efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
  ASSERT_GE(efd, 0);
  int calls = 0;
  ASSERT_TRUE(loop->Watch(efd, EPOLLIN,
                          [&](uint32_t events) {
                            EXPECT_TRUE(events & EPOLLIN);
                            ++calls;
                          })
                  .ok());
  EXPECT_EQ(loop->Watch(efd, EPOLLIN, [](uint32_t) {}).code(),
            absl::StatusCode::kAlreadyExists);
  uint64_t one = 1;
  ASSERT_EQ(write(efd, &one, sizeof(one)), 8);
  ASSERT_TRUE(loop->RunUntil([&] { return calls == 1; }, kWait));
  // Edge-triggered: not reported again while nothing changes.
  loop->RunOnce(absl::Milliseconds(10));
  EXPECT_EQ(calls, 1);
  ASSERT_EQ(write(efd, &one, sizeof(one)), 8);
  ASSERT_TRUE(loop->RunUntil([&] { return calls == 2; }, kWait));
  ASSERT_TRUE(loop->Unwatch(efd).ok());
  EXPECT_EQ(loop->Unwatch(efd).code(), absl::StatusCode::kNotFound);
  ASSERT_EQ(write(efd, &one, sizeof(one)), 8);
  loop->RunOnce(absl::Milliseconds(10));
  EXPECT_EQ(calls, 2);
  close(efd);
}

TEST(EventLoopTest, ModifyChangesInterest) {
  auto loop = NewLoop();
  int efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
  ASSERT_GE(efd, 0);
  uint32_t last = 0;
  int calls = 0;
  // An eventfd is always writable: EPOLLOUT is reported once when asked for.
  ASSERT_TRUE(loop->Watch(efd, EPOLLIN,
                          [&](uint32_t e) {
                            last = e;
                            ++calls;
                          })
                  .ok());
  loop->RunOnce(absl::Milliseconds(5));
  EXPECT_EQ(calls, 0);
  ASSERT_TRUE(loop->Modify(efd, EPOLLIN | EPOLLOUT).ok());
  ASSERT_TRUE(loop->RunUntil([&] { return calls == 1; }, kWait));
  EXPECT_TRUE(last & EPOLLOUT);
  EXPECT_EQ(loop->Modify(12345, EPOLLIN).code(), absl::StatusCode::kNotFound);
  ASSERT_TRUE(loop->Unwatch(efd).ok());
  close(efd);
}

TEST(EventLoopTest, UnwatchInsideHandlerSuppressesPendingEventsOfOthers) {
  auto loop = NewLoop();
  int a = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
  int b = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
  int calls = 0;
  // Whichever runs first unwatches both; the other must not run although its
  // event was collected in the same epoll_wait.
  auto handler = [&](uint32_t) {
    ++calls;
    loop->Unwatch(a).IgnoreError();
    loop->Unwatch(b).IgnoreError();
  };
  ASSERT_TRUE(loop->Watch(a, EPOLLIN, handler).ok());
  ASSERT_TRUE(loop->Watch(b, EPOLLIN, handler).ok());
  uint64_t one = 1;
  ASSERT_EQ(write(a, &one, 8), 8);
  ASSERT_EQ(write(b, &one, 8), 8);
  ASSERT_TRUE(loop->RunUntil([&] { return calls > 0; }, kWait));
  loop->RunOnce(absl::Milliseconds(5));
  EXPECT_EQ(calls, 1);
  close(a);
  close(b);
}

TEST(EventLoopTest, DeferRunsAfterEverythingElseInTheIteration) {
  auto loop = NewLoop();
  std::vector<std::string> order;
  loop->RunAfter(absl::ZeroDuration(), [&] {
    order.push_back("timer");
    loop->Defer([&] {
      order.push_back("deferred");
      loop->Defer([&] { order.push_back("deferred from deferred"); });
    });
    loop->Post([&] { order.push_back("posted"); });
  });
  ASSERT_TRUE(loop->RunUntil([&] { return order.size() == 4; }, kWait));
  EXPECT_THAT(order, ElementsAre("timer", "posted", "deferred",
                                 "deferred from deferred"));
}

TEST(EventLoopTest, RunUntilIsBounded) {
  auto loop = NewLoop();
  const auto start = EventLoop::Clock::now();
  EXPECT_FALSE(loop->RunUntil([] { return false; }, absl::Milliseconds(30)));
  const auto took = EventLoop::Clock::now() - start;
  EXPECT_GE(took, std::chrono::milliseconds(30));
  EXPECT_LT(took, std::chrono::seconds(5));
}

TEST(EventLoopTest, DestructionDropsPendingWork) {
  auto token = std::make_shared<int>(0);
  std::weak_ptr<int> weak = token;
  {
    auto loop = NewLoop();
    loop->RunAfter(absl::Hours(1), [token] {});
    loop->Post([token] {});
    loop->Defer([token] {});
    token.reset();
    EXPECT_FALSE(weak.expired());
  }
  EXPECT_TRUE(weak.expired());
}

TEST(EventLoopThreadTest, RunsTasksOnItsOwnThread) {
  auto t = EventLoopThread::Start("test-loop");
  ASSERT_TRUE(t.ok()) << t.status();
  EventLoop* loop = (*t)->loop();
  EXPECT_FALSE(loop->IsInLoopThread());
  absl::Notification done;
  bool in_loop = false;
  std::thread::id id;
  loop->Post([&] {
    in_loop = loop->IsInLoopThread();
    id = std::this_thread::get_id();
    done.Notify();
  });
  ASSERT_TRUE(done.WaitForNotificationWithTimeout(kWait));
  EXPECT_TRUE(in_loop);
  EXPECT_NE(id, std::this_thread::get_id());
  // Timers work on the thread too.
  absl::Notification timer;
  loop->Post(
      [&] { loop->RunAfter(absl::Milliseconds(5), [&] { timer.Notify(); }); });
  ASSERT_TRUE(timer.WaitForNotificationWithTimeout(kWait));
}

// Runs `task` inline on `loop` (an EventLoopThread's), retrying while the
// loop is busy; false if it never slept within kWait.
bool RunInline(EventLoop* loop, absl::AnyInvocable<void()> task) {
  auto shared = std::make_shared<absl::AnyInvocable<void()>>(std::move(task));
  auto ran = std::make_shared<std::atomic<bool>>(false);
  const absl::Time deadline = absl::Now() + kWait;
  while (absl::Now() < deadline) {
    // A posted attempt (the loop was busy) is a no-op once one ran inline.
    if (loop->RunInlineOrPost([shared, ran] {
          if (!ran->exchange(true)) (*shared)();
        })) {
      return true;
    }
    absl::SleepFor(absl::Milliseconds(1));
    if (ran->load()) return false;  // Ran on the loop thread.
  }
  return false;
}

TEST(EventLoopInlineTest, RunsOnTheCallerAsTheLoopThreadWhileTheLoopSleeps) {
  auto t = EventLoopThread::Start("test-loop");
  ASSERT_TRUE(t.ok()) << t.status();
  EventLoop* loop = (*t)->loop();
  std::thread::id ran_on;
  bool in_loop = false;
  std::vector<int> order;
  bool ok = false;
  for (int attempt = 0; attempt < 100 && !ok; ++attempt) {
    order.clear();
    ok = RunInline(loop, [&] {
      ran_on = std::this_thread::get_id();
      in_loop = loop->IsInLoopThread();
      // Deferred work (a connection's flush) runs before the call returns.
      loop->Defer([&] { order.push_back(2); });
      order.push_back(1);
    });
  }
  ASSERT_TRUE(ok) << "the loop never slept";
  EXPECT_EQ(ran_on, std::this_thread::get_id());
  EXPECT_TRUE(in_loop);
  EXPECT_THAT(order, ElementsAre(1, 2));
  EXPECT_FALSE(loop->IsInLoopThread());
  // The loop thread is the loop's again.
  absl::Notification done;
  std::thread::id loop_id;
  loop->Post([&] {
    loop_id = std::this_thread::get_id();
    EXPECT_TRUE(loop->IsInLoopThread());
    done.Notify();
  });
  ASSERT_TRUE(done.WaitForNotificationWithTimeout(kWait));
  EXPECT_NE(loop_id, std::this_thread::get_id());
}

TEST(EventLoopInlineTest, ATimerArmedInlineWakesTheSleepingLoop) {
  // The loop sleeps with no timer (epoll_wait without timeout): a timer
  // armed by an inline task must still fire.
  auto t = EventLoopThread::Start("test-loop");
  ASSERT_TRUE(t.ok()) << t.status();
  EventLoop* loop = (*t)->loop();
  absl::Notification fired;
  bool ok = false;
  for (int attempt = 0; attempt < 100 && !ok; ++attempt) {
    // An attempt that ran on the loop thread (it was awake) arms a timer
    // too: only the one armed inline counts (and notifies once).
    ok = RunInline(loop, [&] {
      loop->RunAfter(absl::Milliseconds(1),
                     [&, armed_inline = EventLoop::RunningInline()] {
                       if (armed_inline) fired.Notify();
                     });
    });
  }
  ASSERT_TRUE(ok) << "the loop never slept";
  EXPECT_TRUE(fired.WaitForNotificationWithTimeout(kWait));
}

TEST(EventLoopInlineTest, ALoopDrivenByRunOncePosts) {
  auto loop = NewLoop();
  bool ran = false;
  std::thread other(
      [&] { EXPECT_FALSE(loop->RunInlineOrPost([&] { ran = true; })); });
  other.join();
  EXPECT_FALSE(ran);
  loop->RunOnce(absl::ZeroDuration());
  EXPECT_TRUE(ran);
}

TEST(EventLoopInlineTest, OnTheLoopThreadItPosts) {
  auto t = EventLoopThread::Start("test-loop");
  ASSERT_TRUE(t.ok()) << t.status();
  EventLoop* loop = (*t)->loop();
  absl::Notification done;
  std::vector<int> order;
  loop->Post([&] {
    EXPECT_FALSE(loop->RunInlineOrPost([&] {
      order.push_back(2);
      done.Notify();
    }));
    order.push_back(1);
  });
  ASSERT_TRUE(done.WaitForNotificationWithTimeout(kWait));
  EXPECT_THAT(order, ElementsAre(1, 2));
}

TEST(EventLoopInlineTest, TasksOtherThreadsPostedNeverRunOnTheInlineRunner) {
  // An inline runner may be a blocking caller holding a user lock: work
  // posted by others (other calls' callbacks) stays on the loop's thread,
  // and the runner's own task then posts behind it (order kept).
  auto t = EventLoopThread::Start("test-loop");
  ASSERT_TRUE(t.ok()) << t.status();
  EventLoop* loop = (*t)->loop();
  for (int i = 0; i < 200; ++i) {
    // The loop sleeps (an inline run just succeeded, nothing woke it since).
    bool ok = false;
    for (int attempt = 0; attempt < 100 && !ok; ++attempt) {
      ok = RunInline(loop, [] {});
    }
    ASSERT_TRUE(ok) << "the loop never slept";
    std::atomic<bool> posted_ran_here{false};
    std::vector<int> order;  // Loop only.
    absl::Notification done;
    const std::thread::id caller = std::this_thread::get_id();
    loop->Post([&] {
      posted_ran_here = std::this_thread::get_id() == caller;
      order.push_back(1);
    });
    loop->RunInlineOrPost([&] {
      order.push_back(2);
      done.Notify();
    });
    ASSERT_TRUE(done.WaitForNotificationWithTimeout(kWait));
    ASSERT_FALSE(posted_ran_here.load()) << "iteration " << i;
    ASSERT_THAT(order, ElementsAre(1, 2));
  }
}

TEST(EventLoopInlineTest, ALoopThreadNeverRunsAnotherLoopInline) {
  // A loop's own thread that ran another loop's task inline would be in two
  // loops at once (IsInLoopThread true for both, Current() one of them).
  auto t1 = EventLoopThread::Start("test-loop-1");
  auto t2 = EventLoopThread::Start("test-loop-2");
  ASSERT_TRUE(t1.ok() && t2.ok());
  EventLoop* loop1 = (*t1)->loop();
  EventLoop* loop2 = (*t2)->loop();
  for (int i = 0; i < 20; ++i) {
    bool ok = false;
    for (int attempt = 0; attempt < 100 && !ok; ++attempt) {
      ok = RunInline(loop2, [] {});
    }
    ASSERT_TRUE(ok) << "the loop never slept";
    absl::Notification done;
    absl::Notification returned;
    std::atomic<bool> inline_ran{false};
    std::atomic<bool> current_ok{false};
    loop1->Post([&] {
      inline_ran = loop2->RunInlineOrPost([&] {
        current_ok = EventLoop::Current() == loop2 && !loop1->IsInLoopThread();
        done.Notify();
      });
      returned.Notify();
    });
    ASSERT_TRUE(done.WaitForNotificationWithTimeout(kWait));
    ASSERT_TRUE(returned.WaitForNotificationWithTimeout(kWait));
    ASSERT_FALSE(inline_ran.load());
    ASSERT_TRUE(current_ok.load());
  }
}

TEST(EventLoopInlineTest, NeverTwoRunnersAndPostsKeepTheirOrder) {
  // Four threads mix Post and RunInlineOrPost, while the loop also serves
  // an fd and a timer: every callback checks that nothing else of the loop
  // runs, and each thread's tasks run in the order it submitted them.
  auto t = EventLoopThread::Start("test-loop");
  ASSERT_TRUE(t.ok()) << t.status();
  EventLoop* loop = (*t)->loop();
  std::atomic<int> running{0};
  std::atomic<int> overlaps{0};
  auto enter = [&] {
    if (running.fetch_add(1) != 0) overlaps.fetch_add(1);
  };
  auto leave = [&] { running.fetch_sub(1); };
  const int efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
  ASSERT_GE(efd, 0);
  std::atomic<int> fd_events{0};
  absl::Notification watched;
  int timer_runs = 0;  // Loop only.
  std::function<void()> arm = [&] {
    loop->RunAfter(absl::Milliseconds(1), [&] {
      enter();
      ++timer_runs;
      leave();
      arm();
    });
  };
  loop->Post([&] {
    ASSERT_TRUE(loop->Watch(efd, EPOLLIN,
                            [&](uint32_t) {
                              enter();
                              uint64_t v;
                              while (read(efd, &v, sizeof(v)) > 0) {
                              }
                              fd_events.fetch_add(1);
                              leave();
                            })
                    .ok());
    arm();
    watched.Notify();
  });
  ASSERT_TRUE(watched.WaitForNotificationWithTimeout(kWait));
  constexpr int kThreads = 4;
  constexpr int kTasks = 3000;
  std::vector<std::vector<int>> seen(kThreads);  // Loop (or inline) only.
  std::atomic<int> inline_runs{0};
  std::atomic<int> left{kThreads * kTasks};
  std::vector<std::thread> threads;
  for (int i = 0; i < kThreads; ++i) {
    threads.emplace_back([&, i] {
      for (int k = 0; k < kTasks; ++k) {
        auto task = [&, i, k] {
          enter();
          EXPECT_TRUE(loop->IsInLoopThread());
          seen[i].push_back(k);
          leave();
          left.fetch_sub(1);
        };
        if (k % 3 == 0) {
          loop->Post(task);
        } else if (loop->RunInlineOrPost(task)) {
          inline_runs.fetch_add(1);
        }
        if (k % 50 == 0) {
          uint64_t one = 1;
          EXPECT_EQ(write(efd, &one, sizeof(one)), 8);
        }
      }
    });
  }
  for (auto& th : threads) th.join();
  const absl::Time deadline = absl::Now() + kWait;
  while (left.load() > 0 && absl::Now() < deadline) {
    absl::SleepFor(absl::Milliseconds(1));
  }
  ASSERT_EQ(left.load(), 0);
  absl::Notification stopped;
  loop->Post([&] {
    ASSERT_TRUE(loop->Unwatch(efd).ok());
    arm = [] {};
    stopped.Notify();
  });
  ASSERT_TRUE(stopped.WaitForNotificationWithTimeout(kWait));
  close(efd);
  EXPECT_EQ(overlaps.load(), 0);
  for (int i = 0; i < kThreads; ++i) {
    ASSERT_EQ(seen[i].size(), static_cast<size_t>(kTasks));
    for (int k = 0; k < kTasks; ++k) ASSERT_EQ(seen[i][k], k) << i;
  }
  EXPECT_GT(fd_events.load(), 0);
  // Not asserted (scheduling decides): how many ran on the callers.
  std::printf("inline runs: %d of %d\n", inline_runs.load(),
              kThreads * kTasks * 2 / 3);
}

using ::transport::testing::ProcessCpu;

// ---- The co-poller (CoPollUntil) ----

// The kernel facts the co-poller relies on, checked on this machine's kernel
// (6.18) with two threads sleeping in epoll_wait on one epoll fd and one
// eventfd write, 2,000 times: exactly one waiter wakes (exclusive), always the
// one that started waiting last (LIFO). The tests below wait until the thread
// that should get an event sleeps in epoll_wait before they make it.

using ::transport::testing::WaitUntil;

using ::transport::testing::kNoThreadSyscall;
using ::transport::testing::ThreadId;
using ::transport::testing::ThreadSyscallReadable;

// True once thread `tid` of this process sleeps in epoll_wait; false after
// kWait. Tests that call it skip first where the kernel does not show it
// (ThreadSyscallReadable).
bool WaitInEpollWait(pid_t tid) {
  return ::transport::testing::WaitAsleepInEpoll(tid, kWait);
}

// A loop run by Run() on its own thread, and an eventfd it watches.
struct CoPollFixture {
  std::unique_ptr<EventLoopThread> thread;
  EventLoop* loop = nullptr;
  pid_t loop_tid = 0;
  std::thread::id loop_id;
  int fd = -1;
  std::atomic<int> events{0};
  std::thread::id handler_ran_on;
  std::function<void()> on_event;  // Runs in the handler.

  bool Start() {
    auto t = EventLoopThread::Start("test-loop");
    if (!t.ok()) return false;
    thread = *std::move(t);
    loop = thread->loop();
    fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    absl::Notification done;
    loop->Post([&] {
      loop_tid = ThreadId();
      loop_id = std::this_thread::get_id();
      EXPECT_TRUE(loop->Watch(fd, EPOLLIN,
                              [this](uint32_t) {
                                uint64_t v;
                                while (read(fd, &v, sizeof(v)) > 0) {
                                }
                                handler_ran_on = std::this_thread::get_id();
                                if (on_event) on_event();
                                events.fetch_add(1);
                              })
                      .ok());
      done.Notify();
    });
    return done.WaitForNotificationWithTimeout(kWait) &&
           WaitInEpollWait(loop_tid);
  }
  void Signal() const {
    uint64_t one = 1;
    EXPECT_EQ(write(fd, &one, sizeof(one)), 8);
  }
  ~CoPollFixture() {
    if (loop != nullptr) {
      absl::Notification done;
      loop->Post([&] {
        (void)loop->Unwatch(fd);
        done.Notify();
      });
      done.WaitForNotificationWithTimeout(kWait);
    }
    thread.reset();
    if (fd >= 0) close(fd);
  }
};

// Runs `action` on another thread once the calling thread sleeps in
// epoll_wait (the co-poller's).
std::thread WhenPolling(std::function<void()> action) {
  const pid_t me = ThreadId();
  return std::thread([me, action = std::move(action)] {
    EXPECT_TRUE(WaitInEpollWait(me));
    action();
  });
}

TEST(EventLoopCoPollTest, TheCoPollerGetsTheEventAndTheLoopThreadSleeps) {
  if (!ThreadSyscallReadable()) GTEST_SKIP() << kNoThreadSyscall;
  CoPollFixture f;
  ASSERT_TRUE(f.Start());
  const uint64_t iterations = f.loop->iterations();
  const uint64_t co_polled = EventLoop::CoPolledEventsOnThisThread();
  std::thread signaller = WhenPolling([&] { f.Signal(); });
  const EventLoop::CoPollResult r = f.loop->CoPollUntil(
      [&] { return f.events.load() > 0; }, absl::Now() + kWait);
  signaller.join();
  EXPECT_EQ(r, EventLoop::CoPollResult::kDone);
  EXPECT_EQ(f.handler_ran_on, std::this_thread::get_id());
  EXPECT_EQ(EventLoop::CoPolledEventsOnThisThread(), co_polled + 1);
  // No wake-up of the loop thread: it is still in the iteration it slept in.
  EXPECT_EQ(f.loop->iterations(), iterations);
  EXPECT_FALSE(f.loop->IsInLoopThread());
  EXPECT_EQ(EventLoop::Current(), nullptr);
  // The loop is its thread's again.
  f.Signal();
  ASSERT_TRUE(WaitUntil([&] { return f.events.load() == 2; }, kWait));
  EXPECT_EQ(f.handler_ran_on, f.loop_id);
}

TEST(EventLoopCoPollTest, TheHandlerRunsAsTheLoopInline) {
  if (!ThreadSyscallReadable()) GTEST_SKIP() << kNoThreadSyscall;
  CoPollFixture f;
  ASSERT_TRUE(f.Start());
  bool in_loop = false, inline_runner = false, deferred = false;
  f.on_event = [&] {
    in_loop = f.loop->IsInLoopThread();
    inline_runner = EventLoop::RunningInline();
    f.loop->Defer([&] { deferred = true; });
  };
  std::thread signaller = WhenPolling([&] { f.Signal(); });
  // Deferred work the handler made runs before done() is checked again.
  EXPECT_EQ(f.loop->CoPollUntil([&] { return deferred; }, absl::Now() + kWait),
            EventLoop::CoPollResult::kDone);
  signaller.join();
  EXPECT_TRUE(in_loop);
  EXPECT_TRUE(inline_runner);
  EXPECT_FALSE(EventLoop::RunningInline());
}

TEST(EventLoopCoPollTest, APostedTaskRunsOnTheLoopThread) {
  if (!ThreadSyscallReadable()) GTEST_SKIP() << kNoThreadSyscall;
  CoPollFixture f;
  ASSERT_TRUE(f.Start());
  std::atomic<bool> ran{false};
  std::thread::id ran_on;
  std::thread poster = WhenPolling([&] {
    f.loop->Post([&] {
      ran_on = std::this_thread::get_id();
      ran.store(true);
    });
  });
  const EventLoop::CoPollResult r =
      f.loop->CoPollUntil([&] { return ran.load(); }, absl::Now() + kWait);
  poster.join();
  EXPECT_EQ(r, EventLoop::CoPollResult::kYielded);
  ASSERT_TRUE(WaitUntil([&] { return ran.load(); }, kWait));
  EXPECT_EQ(ran_on, f.loop_id);
}

TEST(EventLoopCoPollTest, ATimerArmedWhileCoPollingFiresOnTheLoopThread) {
  if (!ThreadSyscallReadable()) GTEST_SKIP() << kNoThreadSyscall;
  CoPollFixture f;
  ASSERT_TRUE(f.Start());
  std::atomic<bool> fired{false};
  std::thread::id fired_on;
  // Armed by the handler on the co-poller; the loop thread sleeps without a
  // timeout: the alarm reaches the co-poller, which hands the loop back.
  f.on_event = [&] {
    f.loop->RunAfter(absl::Milliseconds(1), [&] {
      fired_on = std::this_thread::get_id();
      fired.store(true);
    });
  };
  std::thread signaller = WhenPolling([&] { f.Signal(); });
  const EventLoop::CoPollResult r =
      f.loop->CoPollUntil([&] { return fired.load(); }, absl::Now() + kWait);
  signaller.join();
  EXPECT_EQ(r, EventLoop::CoPollResult::kYielded);
  ASSERT_TRUE(WaitUntil([&] { return fired.load(); }, kWait));
  EXPECT_EQ(fired_on, f.loop_id);
}

TEST(EventLoopCoPollTest, ALoopThreadThatWakesIsNotStuckBehindTheCoPoller) {
  if (!ThreadSyscallReadable()) GTEST_SKIP() << kNoThreadSyscall;
  CoPollFixture f;
  ASSERT_TRUE(f.Start());
  std::atomic<bool> fired{false};
  std::thread::id fired_on;
  // A timer of the loop thread's own (its epoll_wait times out for it, no
  // fd): it wakes while the co-poller sleeps in epoll_wait with the run lock
  // and no deadline of its own before kWait.
  absl::Notification armed;
  f.loop->Post([&] {
    f.loop->RunAfter(absl::Milliseconds(50), [&] {
      fired_on = std::this_thread::get_id();
      fired.store(true);
    });
    armed.Notify();
  });
  ASSERT_TRUE(armed.WaitForNotificationWithTimeout(kWait));
  ASSERT_TRUE(WaitInEpollWait(f.loop_tid));
  EventLoop::CoPollResult r = EventLoop::CoPollResult::kNotPolled;
  while (r == EventLoop::CoPollResult::kNotPolled && !fired.load()) {
    r = f.loop->CoPollUntil([&] { return fired.load(); }, absl::Now() + kWait);
  }
  // Yielded at the loop thread's request, long before kWait.
  EXPECT_NE(r, EventLoop::CoPollResult::kTimedOut);
  ASSERT_TRUE(WaitUntil([&] { return fired.load(); }, kWait));
  EXPECT_EQ(fired_on, f.loop_id);
}

TEST(EventLoopCoPollTest, StopWhileCoPolling) {
  if (!ThreadSyscallReadable()) GTEST_SKIP() << kNoThreadSyscall;
  auto loop = NewLoop();
  pid_t loop_tid = 0;
  std::thread runner([&] {
    loop_tid = ThreadId();
    loop->Run();
  });
  ASSERT_TRUE(WaitUntil([&] { return loop_tid != 0; }, kWait));
  ASSERT_TRUE(WaitInEpollWait(loop_tid));
  std::thread stopper = WhenPolling([&] { loop->Stop(); });
  const EventLoop::CoPollResult r =
      loop->CoPollUntil([] { return false; }, absl::Now() + kWait);
  stopper.join();
  EXPECT_EQ(r, EventLoop::CoPollResult::kYielded);
  runner.join();  // Run() returned: the loop thread got the Stop.
}

TEST(EventLoopCoPollTest, ALoopDrivenByRunUntilNeverCoPolls) {
  auto loop = NewLoop();
  std::atomic<bool> running{false}, stop{false};
  std::thread runner([&] {
    loop->Post([&] { running.store(true); });
    loop->RunUntil([&] { return stop.load(); }, kWait);
  });
  ASSERT_TRUE(WaitUntil([&] { return running.load(); }, kWait));
  for (int i = 0; i < 100; ++i) {
    EXPECT_EQ(loop->CoPollUntil([] { return false; }, absl::Now() + kWait),
              EventLoop::CoPollResult::kNotPolled);
  }
  stop.store(true);
  loop->Post([] {});
  runner.join();
}

TEST(EventLoopCoPollTest, OnTheLoopThreadItDoesNotPoll) {
  if (!ThreadSyscallReadable()) GTEST_SKIP() << kNoThreadSyscall;
  CoPollFixture f;
  ASSERT_TRUE(f.Start());
  absl::Notification done;
  f.loop->Post([&] {
    EXPECT_EQ(f.loop->CoPollUntil([] { return false; }, absl::Now() + kWait),
              EventLoop::CoPollResult::kNotPolled);
    done.Notify();
  });
  ASSERT_TRUE(done.WaitForNotificationWithTimeout(kWait));
}

TEST(EventLoopCoPollTest, UnwatchWhileCoPollingFreesNothingInUse) {
  // Two fds whose handlers each unwatch and close the other: whichever runs
  // first (on the co-poller) removes the other, whose event may be in the
  // same epoll_wait's array (asan: no use after free).
  if (!ThreadSyscallReadable()) GTEST_SKIP() << kNoThreadSyscall;
  CoPollFixture f;
  ASSERT_TRUE(f.Start());
  int other = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
  std::atomic<int> ran{0};
  absl::Notification watched;
  f.on_event = [&] {
    if (other >= 0 && f.loop->Unwatch(other).ok()) {
      close(other);
      other = -1;
    }
  };
  f.loop->Post([&] {
    EXPECT_TRUE(f.loop
                    ->Watch(other, EPOLLIN,
                            [&](uint32_t) {
                              ran.fetch_add(1);
                              EXPECT_TRUE(f.loop->Unwatch(f.fd).ok());
                            })
                    .ok());
    watched.Notify();
  });
  ASSERT_TRUE(watched.WaitForNotificationWithTimeout(kWait));
  ASSERT_TRUE(WaitInEpollWait(f.loop_tid));
  const int other_fd = other;
  std::thread signaller = WhenPolling([&] {
    uint64_t one = 1;
    EXPECT_EQ(write(other_fd, &one, sizeof(one)), 8);
    f.Signal();
  });
  const EventLoop::CoPollResult r = f.loop->CoPollUntil(
      [&] { return ran.load() + f.events.load() > 0; }, absl::Now() + kWait);
  signaller.join();
  // kYielded when the loop thread, woken by the second write, took both
  // events before the co-poller ran (then it ran the handlers).
  EXPECT_TRUE(r == EventLoop::CoPollResult::kDone ||
              r == EventLoop::CoPollResult::kYielded);
  ASSERT_TRUE(
      WaitUntil([&] { return ran.load() + f.events.load() > 0; }, kWait));
  // The loop thread frees the retired watcher in its next iteration.
  absl::Notification later;
  f.loop->Post([&] { later.Notify(); });
  ASSERT_TRUE(later.WaitForNotificationWithTimeout(kWait));
  // Exactly one of the two ran, the other was unwatched before its turn (or
  // before its event came).
  EXPECT_EQ(ran.load() + f.events.load(), 1);
  if (other >= 0) {
    absl::Notification unwatched;
    f.loop->Post([&] {
      (void)f.loop->Unwatch(other);
      unwatched.Notify();
    });
    ASSERT_TRUE(unwatched.WaitForNotificationWithTimeout(kWait));
    close(other);
  }
}

TEST(EventLoopBusyPollTest, RunsWorkAndSleepsWhenIdle) {
  auto t = EventLoopThread::Start("test-loop");
  ASSERT_TRUE(t.ok()) << t.status();
  EventLoop* loop = (*t)->loop();
  loop->SetBusyPoll(absl::Milliseconds(20));
  EXPECT_EQ(loop->busy_poll(), absl::Milliseconds(20));
  // Work, posted and timed, runs as without busy-poll.
  for (int i = 0; i < 100; ++i) {
    absl::Notification done;
    loop->Post(
        [&] { loop->RunAfter(absl::ZeroDuration(), [&] { done.Notify(); }); });
    ASSERT_TRUE(done.WaitForNotificationWithTimeout(kWait));
  }
  // Idle: the loop spins at most 20 ms after its last work, then sleeps.
  // Generous bound: a loop that kept spinning would use about the whole
  // interval (less on a loaded machine, hence the interval's length).
  absl::SleepFor(absl::Milliseconds(50));
  const absl::Duration before = ProcessCpu();
  absl::SleepFor(absl::Milliseconds(500));
  const absl::Duration used = ProcessCpu() - before;
  EXPECT_LT(used, absl::Milliseconds(100)) << "CPU burnt while idle";
  // And it still wakes for new work.
  absl::Notification done;
  loop->Post([&] { done.Notify(); });
  EXPECT_TRUE(done.WaitForNotificationWithTimeout(kWait));
}

TEST(EventLoopGroupTest, RoundRobinOverDistinctThreads) {
  EventLoopGroup::Options options;
  options.num_threads = 3;
  auto group = EventLoopGroup::Create(options);
  ASSERT_TRUE(group.ok()) << group.status();
  ASSERT_EQ((*group)->size(), 3u);
  std::vector<EventLoop*> picked;
  for (int i = 0; i < 6; ++i) picked.push_back((*group)->Next());
  EXPECT_EQ(picked[0], picked[3]);
  EXPECT_EQ(picked[1], picked[4]);
  EXPECT_NE(picked[0], picked[1]);
  EXPECT_NE(picked[1], picked[2]);
  // Each loop runs on its own thread.
  std::set<std::thread::id> ids;
  std::atomic<int> done{0};
  absl::Mutex mu;
  for (size_t i = 0; i < 3; ++i) {
    (*group)->loop(i)->Post([&] {
      absl::MutexLock lock(&mu);
      ids.insert(std::this_thread::get_id());
      done.fetch_add(1);
    });
  }
  absl::MutexLock lock(&mu);
  ASSERT_TRUE(mu.AwaitWithTimeout(
      absl::Condition(
          +[](std::atomic<int>* d) { return d->load() == 3; }, &done),
      kWait));
  EXPECT_EQ(ids.size(), 3u);
}

TEST(EventLoopGroupTest, BusyPollIsSetOnEveryLoop) {
  EventLoopGroup::Options options;
  options.num_threads = 2;
  options.busy_poll = absl::Microseconds(50);
  auto group = EventLoopGroup::Create(options);
  ASSERT_TRUE(group.ok()) << group.status();
  for (size_t i = 0; i < 2; ++i) {
    EXPECT_EQ((*group)->loop(i)->busy_poll(), absl::Microseconds(50));
  }
}

TEST(EventLoopGroupTest, DefaultIsOneLoopPerCore) {
  auto group = EventLoopGroup::Create(EventLoopGroup::Options());
  ASSERT_TRUE(group.ok()) << group.status();
  EXPECT_EQ((*group)->size(),
            std::max(1u, std::thread::hardware_concurrency()));
}

}  // namespace
}  // namespace transport
