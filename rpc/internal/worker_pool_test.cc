// WorkerPool: growth while tasks block, retirement to the minimum when idle.

#include "rpc/internal/worker_pool.h"

#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <atomic>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "absl/time/time.h"
#include "gtest/gtest.h"
#include "transport/io/event_loop.h"
#include "transport/testing/thread_probe.h"

namespace rpc {
namespace internal {
namespace {

// Only a hang reaches this bound.
constexpr absl::Duration kHangGuard = absl::Seconds(30);

// Counts tasks that started; waits for a number of them.
class Started {
 public:
  void Add() {
    absl::MutexLock lock(&mu_);
    ++n_;
  }
  bool WaitFor(int n) {
    absl::MutexLock lock(&mu_);
    auto reached = [this, n]()
                       ABSL_SHARED_LOCKS_REQUIRED(mu_) { return n_ >= n; };
    return mu_.AwaitWithTimeout(absl::Condition(&reached), kHangGuard);
  }

 private:
  absl::Mutex mu_;
  int n_ ABSL_GUARDED_BY(mu_) = 0;
};

// `n` tasks that block until `release`; returns when all of them run.
void BlockTasks(WorkerPool* pool, int n, absl::Notification* release,
                Started* started) {
  for (int i = 0; i < n; ++i) {
    pool->Submit([release, started] {
      started->Add();
      release->WaitForNotification();
    });
  }
  ASSERT_TRUE(started->WaitFor(n));
}

TEST(WorkerPoolTest, BurstGrowsThenRetiresToTheMinimum) {
  WorkerPool pool(2, 64, absl::Milliseconds(20));
  EXPECT_EQ(pool.num_threads(), 2);
  absl::Notification release;
  Started started;
  BlockTasks(&pool, 40, &release, &started);
  EXPECT_EQ(pool.num_threads(), 40);
  release.Notify();
  ASSERT_TRUE(pool.WaitIdle(kHangGuard));
  ASSERT_TRUE(pool.WaitForThreadsAtMost(2, kHangGuard));
  EXPECT_EQ(pool.num_threads(), 2);

  // The pool still works and grows again.
  absl::Notification release2;
  Started started2;
  BlockTasks(&pool, 10, &release2, &started2);
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
    Started started;
    BlockTasks(&pool, 4, &release, &started);
    for (int i = 0; i < 10; ++i) pool.Submit([&] { ++done; });
    release.Notify();
    ASSERT_TRUE(pool.WaitIdle(kHangGuard));
    ASSERT_TRUE(pool.WaitForThreadsAtMost(1, kHangGuard));
  }
  EXPECT_EQ(done.load(), 10);
}

// At max_threads, a task waits (the ticket says so) and may be taken back
// unrun; the others run in order once a thread is free.
TEST(WorkerPoolTest, AtTheLimitTasksWaitAndCanBeTakenBack) {
  WorkerPool pool(1, 2);
  absl::Notification release;
  Started started;
  BlockTasks(&pool, 2, &release, &started);
  std::atomic<int> ran_a{0};
  std::atomic<int> ran_b{0};
  const WorkerPool::Ticket a = pool.Submit([&] { ++ran_a; });
  const WorkerPool::Ticket b = pool.Submit([&] { ++ran_b; });
  EXPECT_TRUE(a.waits);
  EXPECT_TRUE(b.waits);
  EXPECT_FALSE(a.rejected);
  EXPECT_NE(a.id, b.id);
  EXPECT_TRUE(pool.Cancel(a.id));
  EXPECT_FALSE(pool.Cancel(a.id));  // already gone
  release.Notify();
  ASSERT_TRUE(pool.WaitIdle(kHangGuard));
  EXPECT_EQ(ran_a.load(), 0);
  EXPECT_EQ(ran_b.load(), 1);
  EXPECT_FALSE(pool.Cancel(b.id));  // it ran
  EXPECT_EQ(pool.num_threads(), 2);
}

// Waiting tasks start in the order they were submitted (the header: FIFO),
// also with one taken back from the middle. One thread, so the start order
// is the queue's order.
TEST(WorkerPoolTest, WaitingTasksStartInSubmissionOrder) {
  WorkerPool pool(1, 1);
  absl::Notification release;
  Started started;
  BlockTasks(&pool, 1, &release, &started);
  constexpr int kTasks = 8;
  absl::Mutex mu;
  std::vector<int> order;
  std::vector<WorkerPool::Ticket> tickets;
  for (int i = 0; i < kTasks; ++i) {
    tickets.push_back(pool.Submit([&, i] {
      absl::MutexLock lock(&mu);
      order.push_back(i);
    }));
    EXPECT_TRUE(tickets.back().waits) << i;
  }
  EXPECT_TRUE(pool.Cancel(tickets[3].id));
  release.Notify();
  ASSERT_TRUE(pool.WaitIdle(kHangGuard));
  absl::MutexLock lock(&mu);
  EXPECT_EQ(order, (std::vector<int>{0, 1, 2, 4, 5, 6, 7}));
}

// With a free thread (or room to add one) a task does not wait.
TEST(WorkerPoolTest, BelowTheLimitTasksDoNotWait) {
  WorkerPool pool(1, 2);
  absl::Notification release;
  Started started;
  const WorkerPool::Ticket first = pool.Submit([&] {
    started.Add();
    release.WaitForNotification();
  });
  EXPECT_FALSE(first.waits);
  ASSERT_TRUE(started.WaitFor(1));
  const WorkerPool::Ticket second = pool.Submit([] {});  // a thread is added
  EXPECT_FALSE(second.waits);
  release.Notify();
  ASSERT_TRUE(pool.WaitIdle(kHangGuard));
}

// max_waiting bounds the tasks waiting for a busy thread; Shutdown runs what
// is queued and refuses later tasks.
TEST(WorkerPoolTest, WaitingBoundAndShutdownRefuse) {
  WorkerPool pool(1, 1, WorkerPool::kDefaultIdleTime, /*max_waiting=*/2);
  absl::Notification release;
  Started started;
  BlockTasks(&pool, 1, &release, &started);
  std::atomic<int> ran{0};
  EXPECT_FALSE(pool.Submit([&] { ++ran; }).rejected);
  EXPECT_FALSE(pool.Submit([&] { ++ran; }).rejected);
  const WorkerPool::Ticket third = pool.Submit([&] { ++ran; });
  EXPECT_TRUE(third.rejected);
  EXPECT_FALSE(third.stopped);  // refused by the bound, not the shutdown
  EXPECT_EQ(third.id, 0u);
  release.Notify();
  pool.Shutdown();
  EXPECT_EQ(ran.load(), 2);
  const WorkerPool::Ticket late = pool.Submit([&] { ++ran; });
  EXPECT_TRUE(late.rejected);
  EXPECT_TRUE(late.stopped);
  pool.Shutdown();  // idempotent
  EXPECT_EQ(ran.load(), 2);
}

// OnStart runs on the worker just before a waiting task, and is dropped
// unrun with a task taken back; it is refused for a task already started.
TEST(WorkerPoolTest, OnStartRunsBeforeAWaitingTaskOrIsDroppedWithIt) {
  WorkerPool pool(1, 1);
  absl::Notification release;
  Started started;
  BlockTasks(&pool, 1, &release, &started);
  std::atomic<int> order{0};
  std::atomic<int> task_saw{-1};
  std::atomic<int> dropped_hook_ran{0};
  const WorkerPool::Ticket a = pool.Submit([&] { task_saw = order.load(); });
  const WorkerPool::Ticket b = pool.Submit([] {});
  ASSERT_TRUE(a.waits);
  EXPECT_TRUE(pool.OnStart(a.id, [&] { ++order; }));
  EXPECT_TRUE(pool.OnStart(b.id, [&] { ++dropped_hook_ran; }));
  EXPECT_TRUE(pool.Cancel(b.id));
  release.Notify();
  ASSERT_TRUE(pool.WaitIdle(kHangGuard));
  EXPECT_EQ(task_saw.load(), 1);  // the hook ran first
  EXPECT_EQ(dropped_hook_ran.load(), 0);
  EXPECT_FALSE(pool.OnStart(a.id, [] {}));  // it ran
}

// ---- Leader/follower (set_co_poll) ----

using ::transport::testing::kNoThreadSyscall;
using ::transport::testing::ThreadId;
using ::transport::testing::ThreadSyscallReadable;
using ::transport::testing::WaitAsleepInEpoll;

// A loop thread watching an eventfd whose handler submits a task to the
// pool, and a pool of one worker (up to `max`) that co-polls: its first task
// comes from the loop, so the worker's next idle wait co-polls that loop.
struct LeaderFollower {
  std::unique_ptr<transport::EventLoopThread> thread;  // Outlives the pool.
  std::unique_ptr<WorkerPool> pool;
  transport::EventLoop* loop = nullptr;
  int fd = -1;
  pid_t loop_tid = 0;
  pid_t worker_tid = 0;
  std::thread::id worker_id;
  std::thread::id handler_ran_on;
  std::thread::id task_ran_on;
  absl::Notification task_ran;
  // If set, the event's handler runs this instead of submitting its task.
  std::function<void()> on_event;

  bool Start(int max_threads, int min_threads = 1,
             absl::Duration idle_time = absl::Hours(1)) {
    auto t = transport::EventLoopThread::Start("test-loop");
    if (!t.ok()) return false;
    thread = *std::move(t);
    loop = thread->loop();
    pool = std::make_unique<WorkerPool>(min_threads, max_threads, idle_time);
    pool->set_co_poll(true);
    fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    absl::Notification first;
    loop->Post([&] {
      loop_tid = ThreadId();
      EXPECT_TRUE(loop->Watch(fd, EPOLLIN,
                              [this](uint32_t) {
                                uint64_t v;
                                while (read(fd, &v, sizeof(v)) > 0) {
                                }
                                handler_ran_on = std::this_thread::get_id();
                                if (on_event) {
                                  on_event();
                                  return;
                                }
                                pool->Submit([this] {
                                  task_ran_on = std::this_thread::get_id();
                                  task_ran.Notify();
                                });
                              })
                      .ok());
      pool->Submit([&] {
        worker_tid = ThreadId();
        worker_id = std::this_thread::get_id();
        first.Notify();
      });
    });
    if (!first.WaitForNotificationWithTimeout(kHangGuard)) return false;
    // The worker co-polls once the loop sleeps; a worker that found it
    // awake too long waits for its next task: give it one from the loop.
    for (int attempt = 0; attempt < 100; ++attempt) {
      if (WaitAsleepInEpoll(loop_tid, kHangGuard) &&
          WaitAsleepInEpoll(worker_tid, absl::Milliseconds(100))) {
        return true;
      }
      absl::Notification again;
      loop->Post([&] { pool->Submit([&] { again.Notify(); }); });
      if (!again.WaitForNotificationWithTimeout(kHangGuard)) return false;
    }
    return false;
  }
  ~LeaderFollower() {
    pool.reset();  // Before the loop.
    if (loop != nullptr) {
      absl::Notification done;
      loop->Post([&] {
        (void)loop->Unwatch(fd);
        done.Notify();
      });
      done.WaitForNotificationWithTimeout(kHangGuard);
    }
    thread.reset();
    if (fd >= 0) close(fd);
  }
};

TEST(WorkerPoolLeaderFollowerTest, TheWorkerRunsTheTaskOfTheEventItRead) {
  if (!ThreadSyscallReadable()) GTEST_SKIP() << kNoThreadSyscall;
  LeaderFollower lf;
  ASSERT_TRUE(lf.Start(/*max_threads=*/4));
  const uint64_t iterations = lf.loop->iterations();
  uint64_t one = 1;
  ASSERT_EQ(write(lf.fd, &one, sizeof(one)), 8);
  ASSERT_TRUE(lf.task_ran.WaitForNotificationWithTimeout(kHangGuard));
  // The idle worker got the event (it co-polls the loop), and the task its
  // handler submitted ran on it: no hand-off, and no loop-thread wake-up.
  EXPECT_EQ(lf.handler_ran_on, lf.worker_id);
  EXPECT_EQ(lf.task_ran_on, lf.worker_id);
  EXPECT_EQ(lf.loop->iterations(), iterations);
  EXPECT_EQ(lf.pool->num_threads(), 1);
}

TEST(WorkerPoolLeaderFollowerTest, ATaskFromAnotherThreadEndsTheCoPoll) {
  // The only worker co-polls (idle for an hour): a task submitted from here
  // must still run, long before that.
  if (!ThreadSyscallReadable()) GTEST_SKIP() << kNoThreadSyscall;
  LeaderFollower lf;
  ASSERT_TRUE(lf.Start(/*max_threads=*/1));
  absl::Notification ran;
  std::thread::id ran_on;
  lf.pool->Submit([&] {
    ran_on = std::this_thread::get_id();
    ran.Notify();
  });
  ASSERT_TRUE(ran.WaitForNotificationWithTimeout(kHangGuard));
  EXPECT_EQ(ran_on, lf.worker_id);
}

TEST(WorkerPoolLeaderFollowerTest, AClaimLeavesNoTaskQueuedWithoutAThread) {
  // The only worker co-polls; another thread queues task B (counting on
  // that idle worker, so no thread is added), then, in the same co-poll
  // round, the worker reads a request and submits its task A. Claiming A
  // would leave B queued behind it with no thread and no Ticket::waits: A
  // runs until B has run, so that would hang.
  if (!ThreadSyscallReadable()) GTEST_SKIP() << kNoThreadSyscall;
  LeaderFollower lf;
  ASSERT_TRUE(lf.Start(/*max_threads=*/2));
  absl::Notification b_ran, a_saw_b;
  WorkerPool::Ticket b_ticket, a_ticket;
  lf.on_event = [&] {
    std::thread other(
        [&] { b_ticket = lf.pool->Submit([&] { b_ran.Notify(); }); });
    other.join();
    a_ticket = lf.pool->Submit([&] {
      if (b_ran.WaitForNotificationWithTimeout(kHangGuard)) a_saw_b.Notify();
      lf.task_ran.Notify();
    });
  };
  uint64_t one = 1;
  ASSERT_EQ(write(lf.fd, &one, sizeof(one)), 8);
  ASSERT_TRUE(lf.task_ran.WaitForNotificationWithTimeout(2 * kHangGuard));
  EXPECT_EQ(lf.handler_ran_on, lf.worker_id);  // the co-poller read it
  EXPECT_TRUE(a_saw_b.HasBeenNotified());
  EXPECT_FALSE(b_ticket.waits);
  EXPECT_FALSE(a_ticket.waits);
  EXPECT_EQ(lf.pool->num_threads(), 2);  // A got a thread of its own
}

TEST(WorkerPoolLeaderFollowerTest, ABatchDoesNotLead) {
  // Tasks that come in a batch (three from one loop task, the last with two
  // others queued or running) go through the queue, and the worker that ran
  // them does not co-poll afterwards: the next event is the loop thread's.
  // A co-poller that leads into batches read them while other workers ran
  // handlers, whose inline writes then posted and kicked it out.
  if (!ThreadSyscallReadable()) GTEST_SKIP() << kNoThreadSyscall;
  LeaderFollower lf;
  ASSERT_TRUE(lf.Start(/*max_threads=*/1));  // the worker co-polls
  std::thread::id loop_id;
  absl::Notification submitted, release, all_ran;
  std::atomic<int> ran{0};
  lf.loop->Post([&] {
    loop_id = std::this_thread::get_id();
    lf.pool->Submit([&] {
      release.WaitForNotificationWithTimeout(kHangGuard);
      ++ran;
    });
    for (int i = 0; i < 2; ++i) {
      lf.pool->Submit([&] {
        if (++ran == 3) all_ran.Notify();
      });
    }
    submitted.Notify();
  });
  ASSERT_TRUE(submitted.WaitForNotificationWithTimeout(kHangGuard));
  release.Notify();
  ASSERT_TRUE(all_ran.WaitForNotificationWithTimeout(kHangGuard));
  ASSERT_TRUE(lf.pool->WaitIdle(kHangGuard));
  // The worker settles: asleep, and not in epoll_wait (20 reads in a row,
  // bounded). One that co-polls now never does.
  int settled = 0;
  for (int i = 0; i < 10000 && settled < 20; ++i) {
    settled = transport::testing::Asleep(lf.worker_tid) &&
                      !transport::testing::AsleepInEpoll(lf.worker_tid)
                  ? settled + 1
                  : 0;
    std::this_thread::yield();
  }
  ASSERT_EQ(settled, 20);
  absl::Notification read;
  lf.on_event = [&] { read.Notify(); };
  uint64_t one = 1;
  ASSERT_EQ(write(lf.fd, &one, sizeof(one)), 8);
  ASSERT_TRUE(read.WaitForNotificationWithTimeout(kHangGuard));
  EXPECT_EQ(lf.handler_ran_on, loop_id);
}

TEST(WorkerPoolLeaderFollowerTest, ATaskForAnotherIdleWorkerDoesNotKick) {
  // Two workers: one co-polls, the other sleeps on the queue. A task from
  // another thread goes to the sleeper and leaves the co-poll alone (a kick
  // would wake the co-poller and the loop thread for nothing); a second
  // task, while the first still runs, needs the co-poller and kicks it.
  if (!ThreadSyscallReadable()) GTEST_SKIP() << kNoThreadSyscall;
  // Declared before the pool, which is joined first.
  absl::Notification first_started, release, second_ran;
  std::thread::id first_ran_on, second_ran_on;
  LeaderFollower lf;
  ASSERT_TRUE(lf.Start(/*max_threads=*/2, /*min_threads=*/2));
  const uint64_t kicks = lf.pool->copoll_kicks();
  lf.pool->Submit([&] {
    first_ran_on = std::this_thread::get_id();
    first_started.Notify();
    release.WaitForNotificationWithTimeout(kHangGuard);
  });
  ASSERT_TRUE(first_started.WaitForNotificationWithTimeout(kHangGuard));
  EXPECT_NE(first_ran_on, lf.worker_id);
  EXPECT_EQ(lf.pool->copoll_kicks(), kicks);
  lf.pool->Submit([&] {
    second_ran_on = std::this_thread::get_id();
    second_ran.Notify();
  });
  ASSERT_TRUE(second_ran.WaitForNotificationWithTimeout(kHangGuard));
  EXPECT_EQ(second_ran_on, lf.worker_id);
  EXPECT_EQ(lf.pool->copoll_kicks(), kicks + 1);
  release.Notify();
}

TEST(WorkerPoolLeaderFollowerTest, ATaskQueuedAsTheCoPollTimesOutRuns) {
  // Worker A runs a task that blocks; worker B (above the minimum) ran a
  // task alone and co-polls until its idle time passes. After that co-poll
  // timed out, before B takes the pool's lock again (the test hook), the
  // loop thread submits task C: C counts on B as idle (copoll_loop_ is
  // still set), so it adds no thread, gets no Ticket::waits and only posts
  // a kick B never reads. B must run C, not retire and leave it behind A.
  if (!ThreadSyscallReadable()) GTEST_SKIP() << kNoThreadSyscall;
  // Declared before the pool, which is joined first (a co-poller may still
  // hold the hook).
  absl::Notification a_started, release, c_ran;
  std::atomic<bool> fired{false};
  WorkerPool::Ticket c_ticket;
  LeaderFollower lf;
  ASSERT_TRUE(lf.Start(/*max_threads=*/2, /*min_threads=*/1,
                       /*idle_time=*/absl::Milliseconds(20)));
  lf.loop->Post([&] {
    lf.pool->Submit([&] {
      a_started.Notify();
      release.WaitForNotificationWithTimeout(2 * kHangGuard);
    });
  });
  ASSERT_TRUE(a_started.WaitForNotificationWithTimeout(kHangGuard));
  // Only B co-polls from here (A's worker is busy).
  lf.pool->set_copoll_timeout_hook_for_test([&] {
    if (fired.exchange(true)) return;
    absl::Notification submitted;
    lf.loop->Post([&] {
      c_ticket = lf.pool->Submit([&] { c_ran.Notify(); });
      submitted.Notify();
    });
    EXPECT_TRUE(submitted.WaitForNotificationWithTimeout(kHangGuard));
  });
  // B co-polls only if the loop sleeps when it tries; one that found it
  // awake retires from the queue's wait instead: try again (bounded).
  for (int attempt = 0; attempt < 100 && !fired.load(); ++attempt) {
    absl::Notification b_ran;
    lf.loop->Post([&] { lf.pool->Submit([&] { b_ran.Notify(); }); });
    ASSERT_TRUE(b_ran.WaitForNotificationWithTimeout(kHangGuard));
    ASSERT_TRUE(lf.pool->WaitForThreadsAtMost(1, kHangGuard));
  }
  ASSERT_TRUE(fired.load());
  EXPECT_FALSE(c_ticket.waits);
  EXPECT_TRUE(c_ran.WaitForNotificationWithTimeout(kHangGuard));
  lf.pool->set_copoll_timeout_hook_for_test(nullptr);
  release.Notify();
}

TEST(WorkerPoolLeaderFollowerTest, ShutdownEndsTheCoPoll) {
  if (!ThreadSyscallReadable()) GTEST_SKIP() << kNoThreadSyscall;
  LeaderFollower lf;
  ASSERT_TRUE(lf.Start(/*max_threads=*/1));
  absl::Notification shut;
  std::thread shutter([&] {
    lf.pool->Shutdown();
    shut.Notify();
  });
  EXPECT_TRUE(shut.WaitForNotificationWithTimeout(kHangGuard));
  shutter.join();
}

}  // namespace
}  // namespace internal
}  // namespace rpc
