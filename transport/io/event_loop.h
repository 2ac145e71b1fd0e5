// EventLoop: one edge-triggered epoll loop per thread, with timers, a
// cross-thread task queue and end-of-iteration hooks.
//
// The threading model (ARCHITECTURE.md: one loop per core owns its
// connections):
//
//   * A loop belongs to the thread that runs it (Run, RunOnce, RunUntil). Its
//     file descriptors, timers, and everything built on them (endpoints,
//     listeners, TLS sessions, HTTP/2 connections) are touched only on that
//     thread, so nothing on the hot path takes a lock.
//   * From any thread: Post, RunInLoop, RunInlineOrPost, CoPollUntil, Stop,
//     IsInLoopThread, SetBusyPoll. Post is the way work crosses threads: a
//     mutex-protected vector, swapped once per iteration, plus an eventfd that
//     wakes a sleeping loop. RunInlineOrPost saves that wake-up when the loop
//     is asleep: the calling thread becomes the loop thread for one task
//     (below).
//
// The run lock. A loop driven by Run() (an EventLoopThread's) holds its run
// lock while it runs an iteration and releases it only around a sleeping
// epoll_wait. RunInlineOrPost takes the lock when it is free and the loop
// sleeps with nothing to do (no events returned yet, nothing posted or
// deferred), and then runs, on the calling thread, its own task and the
// deferred work that task produced (the flush), exactly as the loop would;
// IsInLoopThread() is true for that thread meanwhile. Anything else (tasks
// other threads posted, a loop that already has events) makes it post:
// other threads' work never runs on an inline runner, which may be a blocking
// caller holding a user lock, and tasks keep their posting order. It wakes
// the loop only when it armed a timer earlier than the loop's sleep, and then
// at the timer's deadline (a timerfd, the alarm, in the epoll set), not now:
// a call's deadline timer is usually cancelled long before. Tasks it posts
// wake the loop as any Post does. So never two threads run the loop at once.
// A thread that runs a loop (Run(), or inline) never runs another loop's task
// inline (Current() names one loop). Layers above keep user code off inline
// runners: what a task finds that completes other calls (a write error, a
// close) or a user callback is posted (RunningInline()). A loop driven
// by RunOnce/RunUntil never releases its lock: there RunInlineOrPost posts.
//
// The co-poller (CoPollUntil). A thread that waits for what the loop's work
// produces (a blocking call's status) takes the run lock under the same idle
// test and calls epoll_wait on the loop's epoll fd itself, running the I/O
// handlers it gets and their deferred work as an inline runner
// (RunningInline() true). The loop thread stays in its own epoll_wait: the
// kernel wakes one waiter per event, the one that started waiting last
// (exclusive and LIFO: two threads asleep in epoll_wait on one epoll fd, one
// eventfd write, 2,000 times on kernel 6.18: always exactly the later
// waiter), so the co-poller gets the events and the loop thread no wake-up.
// It never runs timers or posted tasks: the wake eventfd (posts, Stop) or the
// alarm (a timer due) makes it release the lock and Wake() the loop. A loop
// thread that wakes by itself (its own events, its sleep's timeout) and finds
// the lock taken sets yield_requested_ and, when copolling_, writes the
// eventfd (it is no waiter then: the edge reaches the co-poller, which checks
// the request before every epoll_wait), then blocks on the lock: never stuck
// behind a co-poller. Watchers unwatched while co-polling are freed at the
// end of a loop-thread iteration only (its epoll_wait may hold events for
// them). Manual-clock loops and loops not driven by Run() never co-poll.
//
// Busy-poll (SetBusyPoll, opt-in): after an iteration that found work, Run()
// polls (epoll_wait with timeout 0, holding the run lock) instead of sleeping,
// until `budget` passed without work; then it sleeps as usual. An idle loop
// therefore spins at most `budget` after its last work. A poll that found
// nothing yields the CPU (sched_yield) to any thread runnable there.
//   * Loop thread only: Watch, Modify, Unwatch, RunAfter, RunAt, Cancel,
//     Defer, Now. Debug builds assert it.
//
// One iteration (RunOnce):
//   1. epoll_wait, sleeping at most until the earliest timer (or the given
//      bound; never when tasks or deferred work are pending);
//   2. the cached time Now() is refreshed once;
//   3. I/O handlers run, in the order the kernel reported their events;
//   4. timers due at Now() run, earliest first (equal deadlines: in the order
//      they were added); a timer added while timers run waits for the next
//      iteration, even with a zero delay;
//   5. tasks posted from any thread run, in posting order;
//   6. Defer()red work runs last: the place where a connection flushes
//      everything one iteration produced with a single writev.
//
// Every fd is watched edge-triggered (EPOLLET is always added): a handler must
// consume until EAGAIN or remember that it did not.
//
// Example:
//   auto loop = EventLoop::Create();
//   (*loop)->RunAfter(absl::Milliseconds(5), [&] { (*loop)->Stop(); });
//   (*loop)->Run();

#ifndef TRANSPORT_IO_EVENT_LOOP_H_
#define TRANSPORT_IO_EVENT_LOOP_H_

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/functional/any_invocable.h"
#include "absl/functional/function_ref.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"

struct epoll_event;

namespace transport {

class EventLoop {
 public:
  using Clock = std::chrono::steady_clock;
  using Task = absl::AnyInvocable<void()>;
  // Receives the epoll event mask (EPOLLIN, EPOLLOUT, EPOLLERR, EPOLLHUP,
  // EPOLLRDHUP...).
  using IoHandler = absl::AnyInvocable<void(uint32_t events)>;
  // Never reused within one loop. 0 is never a valid id.
  using TimerId = uint64_t;
  static constexpr TimerId kInvalidTimer = 0;

  // Creates the epoll instance and the wake-up eventfd. The loop belongs to
  // the calling thread until another thread runs it.
  static absl::StatusOr<std::unique_ptr<EventLoop>> Create();
  // A loop whose clock stands still until AdvanceClock moves it: Now(), timer
  // deadlines and everything timed from them (a Connection's timers, rpc
  // deadlines taken from grpc-timeout) become deterministic. RunOnce never
  // sleeps for a timer on such a loop (it still waits for I/O and posted
  // tasks). For tests and fuzzers, usually with MemoryEndpoint
  // (memory_endpoint.h) in place of sockets.
  static absl::StatusOr<std::unique_ptr<EventLoop>> CreateWithManualClock();

  // Destroys unfired timers, unrun tasks and watch handlers without running
  // them. Objects that watch fds on this loop and are owned elsewhere must be
  // destroyed first. Call on the loop thread, or after it stopped.
  ~EventLoop();

  EventLoop(const EventLoop&) = delete;
  EventLoop& operator=(const EventLoop&) = delete;

  // ---- Any thread ----

  // Queues `task` to run on the loop thread in a later iteration, and wakes
  // the loop. Tasks run in posting order. Tasks still queued when the loop is
  // destroyed are destroyed without running.
  void Post(Task task);
  // Runs `task` now when called on the loop thread, else Post()s it.
  void RunInLoop(Task task);
  // From a thread other than the loop's: runs `task` now on the calling
  // thread, as the loop thread (the file comment, "The run lock"), when the
  // loop sleeps in Run() with nothing posted or deferred; else Post()s it
  // (behind the earlier posts: order is kept). Also posts when called from a
  // thread that runs some loop (its Run(), or a task inline: no nesting).
  // The task must not block; the caller must hold no lock that loop work
  // takes. Returns true when it ran inline.
  bool RunInlineOrPost(Task task);
  // What CoPollUntil did.
  enum class CoPollResult {
    kNotPolled,  // The loop is not asleep in Run() (or this thread runs a
                 // loop, or the clock is manual): wait as before.
    kDone,       // done() became true.
    kYielded,    // The loop thread has work (posted tasks, a timer, events
                 // it got itself, Stop): it runs it; done() was false.
    kTimedOut,   // `deadline` passed; done() was false.
  };
  // The co-poller. From a thread that runs no loop, waiting for something
  // the loop's work produces (a blocking call's status): while the loop
  // sleeps in Run() with nothing to do, polls its epoll set on the calling
  // thread, holding the run lock, and runs the I/O handlers it gets and the
  // deferred work they produce there, as RunInlineOrPost runs its task
  // (IsInLoopThread() and RunningInline() are true meanwhile), until `done()`
  // (checked before every poll, with the run lock held: it must only read a
  // flag) or `deadline`. It never runs timers or posted tasks: when those
  // are due, or the loop thread woke for events of its own, it releases the
  // loop to its thread (kYielded). Busy-poll loops (SetBusyPoll): it polls
  // without sleeping for up to the budget after the last events. The file
  // comment, "The run lock", says why the loop thread is never stuck behind
  // it.
  CoPollResult CoPollUntil(absl::FunctionRef<bool()> done, absl::Time deadline);
  // Run() polls instead of sleeping for up to `budget` after its last
  // iteration with work (the file comment); zero (the default) turns it off.
  void SetBusyPoll(absl::Duration budget);
  absl::Duration busy_poll() const {
    return absl::Nanoseconds(busy_poll_ns_.load(std::memory_order_relaxed));
  }
  // Makes Run() return after the current iteration. Run() clears the request
  // when it returns, so the loop can be run again. A Stop() before Run()
  // makes that Run() return after one iteration.
  void Stop();
  // The loop the calling thread runs (Run(), or a task inline), else null.
  // Never two loops: a loop's thread does not run another loop's task inline.
  static EventLoop* Current();
  // True on a thread that runs a task inline (RunInlineOrPost): a blocking
  // caller or a sync handler, which may hold user locks. What completes
  // other calls (a connection's close, user callbacks and reactions) must
  // not run there: post it to Current() instead (it runs on the loop's own
  // thread).
  static bool RunningInline();
  // Iterations the loop's own thread ran (Run, RunOnce): for tests (a
  // co-poller's events wake no iteration).
  uint64_t iterations() const {
    return iterations_.load(std::memory_order_relaxed);
  }
  // I/O handlers the calling thread ran as a co-poller (CoPollUntil), on
  // any loop, since it started: for tests (that a blocking caller did
  // co-poll, and read what came meanwhile).
  static uint64_t CoPolledEventsOnThisThread();
  bool IsInLoopThread() const {
    return owner_.load(std::memory_order_relaxed) == std::this_thread::get_id();
  }

  // ---- Loop thread ----

  // Runs iterations until Stop().
  void Run();
  // Runs one iteration, sleeping in epoll_wait at most `max_wait` (zero:
  // poll). Returns the number of callbacks run (I/O handlers, timers, tasks,
  // deferred work).
  int RunOnce(absl::Duration max_wait);
  // Runs iterations until `done()` is true (checked before the first and
  // after every iteration) or `timeout` passed. Returns done(). The bounded
  // wait for tests and for shutdown paths.
  bool RunUntil(absl::FunctionRef<bool()> done, absl::Duration timeout);

  // Starts watching `fd` for `events` (EPOLLIN, EPOLLOUT, EPOLLRDHUP; EPOLLET
  // is added, EPOLLERR/EPOLLHUP are always reported). `handler` runs on
  // every reported event until Unwatch. The fd stays owned by the caller.
  // Errors: AlreadyExists if `fd` is watched; the errno of epoll_ctl.
  absl::Status Watch(int fd, uint32_t events, IoHandler handler);
  // Changes the event set of a watched fd (same rules as Watch). No-op when
  // unchanged. Errors: NotFound; the errno of epoll_ctl.
  absl::Status Modify(int fd, uint32_t events);
  // Stops watching `fd`; its handler is not called again, not even for events
  // already collected in this iteration. Safe from inside the fd's own
  // handler (the handler object is destroyed at the end of the iteration).
  // Call before closing the fd. Errors: NotFound.
  absl::Status Unwatch(int fd);
  bool IsWatched(int fd) const { return watchers_.contains(fd); }

  // Runs `task` once, in the timer phase of the first iteration that starts
  // at least `delay` after this call (negative counts as zero). The delay
  // counts from the clock read now, not from Now(), which lags by the time
  // this iteration already ran: a timer never fires early. O(log n).
  TimerId RunAfter(absl::Duration delay, Task task);
  TimerId RunAt(Clock::time_point deadline, Task task);
  // Cancels a pending timer: returns true if it had not fired yet. The task
  // is destroyed now. O(1) (the heap entry is dropped lazily).
  bool Cancel(TimerId id);
  size_t pending_timers() const { return timers_.size(); }

  // Runs `task` at the end of the current iteration, after all I/O, timers
  // and tasks (or at the end of the next iteration when called outside one).
  // Work deferred from deferred work runs in the same phase.
  void Defer(Task task);

  // The monotonic time, read once per iteration (after epoll_wait): it lags
  // the clock by the time the iteration has run so far.
  Clock::time_point Now() const { return now_; }
  // Manual clock only (CreateWithManualClock): moves the clock forward by
  // `d`; timers now due run in the next iteration.
  void AdvanceClock(absl::Duration d);
  bool manual_clock() const { return manual_clock_; }

 private:
  struct Watcher {
    int fd;
    uint32_t events;
    bool active;
    IoHandler handler;
  };
  struct TimerEntry {
    Clock::time_point deadline;
    TimerId id;  // also the tie-breaker: lower ids were added first
  };
  struct TimerLater {
    bool operator()(const TimerEntry& a, const TimerEntry& b) const {
      return a.deadline != b.deadline ? a.deadline > b.deadline : a.id > b.id;
    }
  };

  static absl::StatusOr<std::unique_ptr<EventLoop>> CreateLoop(
      bool manual_clock);
  EventLoop(int epoll_fd, int wake_fd, bool manual_clock);
  // The real clock, or the manual one.
  Clock::time_point ReadClock() const;
  void BindToCurrentThread();
  void Wake();
  void DrainWakeFd();
  // RunOnce's work; `release_run_lock`: Run()'s iterations, which release the
  // run lock around a sleeping epoll_wait.
  int RunIteration(absl::Duration max_wait, bool release_run_lock);
  // epoll_wait, releasing the run lock while it sleeps.
  int WaitReleased(int timeout_ms);
  // Inline runner or co-poller, run lock held: arms the alarm for the
  // earliest timer when it is due before the loop's sleep ends; true when
  // the loop must be woken instead (no timerfd, manual clock).
  bool ArmAlarmForEarlierTimer();
  // Arms the alarm (a timerfd in the epoll set) for `deadline`; false when
  // the timerfd would not.
  bool SetAlarm(Clock::time_point deadline);
  // epoll_wait timeout in milliseconds for a sleep of at most `max_wait`.
  int ComputeTimeoutMs(absl::Duration max_wait);
  int RunTimers();
  int RunPostedTasks();
  int RunDeferred();
  void DropCancelledTop();
  void CompactTimerHeap();

  const int epoll_fd_;
  const int wake_fd_;
  const bool manual_clock_;
  Clock::time_point manual_now_;  // Loop thread; with manual_clock_ only.
  std::atomic<std::thread::id> owner_;
  std::atomic<bool> stop_requested_{false};
  std::atomic<uint64_t> iterations_{0};

  // Loop-thread state.
  Clock::time_point now_;
  bool in_iteration_ = false;
  absl::flat_hash_map<int, std::unique_ptr<Watcher>> watchers_;
  std::unique_ptr<Watcher> wake_watcher_;
  std::vector<std::unique_ptr<Watcher>> retired_watchers_;
  std::vector<struct epoll_event> events_;
  std::vector<TimerEntry> timer_heap_;
  absl::flat_hash_map<TimerId, Task> timers_;
  TimerId next_timer_id_ = 1;
  std::vector<Task> deferred_;
  std::vector<Task> running_tasks_;  // reused buffer for the swap

  // Held by the thread running the loop (Run(): all but its sleeps; an
  // inline runner: its task).
  absl::Mutex run_mu_;
  // Run() sleeps in epoll_wait until sleep_until_ (max: no timer).
  bool sleeping_ ABSL_GUARDED_BY(run_mu_) = false;
  // Run() is inside epoll_wait: cleared as soon as it returns, before Run()
  // retakes the run lock (sleeping_ is cleared only then).
  std::atomic<bool> asleep_{false};
  // A co-poller holds the run lock (CoPollUntil); the loop thread, awake
  // and waiting for the run lock, asks whoever holds it to yield. Both
  // seq_cst (a Dekker pair: the file comment).
  std::atomic<bool> copolling_{false};
  std::atomic<bool> yield_requested_{false};
  Clock::time_point sleep_until_ ABSL_GUARDED_BY(run_mu_);
  // The alarm is armed for this (max: not since the loop last woke).
  Clock::time_point alarm_deadline_ ABSL_GUARDED_BY(run_mu_) =
      Clock::time_point::max();
  int alarm_fd_ = -1;
  std::unique_ptr<Watcher> alarm_watcher_;
  std::atomic<int64_t> busy_poll_ns_{0};
  // Loop thread: the end of the last iteration that ran a callback.
  Clock::time_point last_work_ = Clock::time_point::min();

  // Written by any thread.
  absl::Mutex mu_;
  std::vector<Task> posted_ ABSL_GUARDED_BY(mu_);
};

// One EventLoop running on its own thread. The loop is created on that thread
// and runs until the EventLoopThread is destroyed (Stop + join). Its loop() is
// reachable from any thread, but (as for any loop) only Post/RunInLoop/Stop
// may be called on it from other threads.
class EventLoopThread {
 public:
  // Starts the thread and waits until its loop exists. `name` is the thread
  // name (at most 15 characters are kept); `cpu` >= 0 pins the thread to that
  // CPU.
  static absl::StatusOr<std::unique_ptr<EventLoopThread>> Start(
      const std::string& name, int cpu = -1);
  ~EventLoopThread();

  EventLoopThread(const EventLoopThread&) = delete;
  EventLoopThread& operator=(const EventLoopThread&) = delete;

  EventLoop* loop() const { return loop_.get(); }

 private:
  EventLoopThread() = default;

  std::unique_ptr<EventLoop> loop_;
  std::thread thread_;
};

// N loops on N threads (one per core by default), with round-robin choice of
// a loop for each new connection. Create/destroy from one thread; Next(),
// loop(i) and size() from any thread.
class EventLoopGroup {
 public:
  struct Options {
    // 0: one per available core (std::thread::hardware_concurrency()).
    int num_threads = 0;
    // Pin thread i to CPU i (modulo the number of CPUs).
    bool pin_threads = false;
    std::string name_prefix = "h2-loop-";
    // EventLoop::SetBusyPoll on every loop (zero: off).
    absl::Duration busy_poll = absl::ZeroDuration();
  };

  static absl::StatusOr<std::unique_ptr<EventLoopGroup>> Create(
      const Options& options);
  // Stops and joins every thread.
  ~EventLoopGroup() = default;

  size_t size() const { return threads_.size(); }
  EventLoop* loop(size_t i) const { return threads_[i]->loop(); }
  // The next loop in round-robin order. Lock-free.
  EventLoop* Next();

 private:
  EventLoopGroup() = default;

  std::vector<std::unique_ptr<EventLoopThread>> threads_;
  std::atomic<size_t> next_{0};
};

}  // namespace transport

#endif  // TRANSPORT_IO_EVENT_LOOP_H_
