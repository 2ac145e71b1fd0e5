#include "transport/io/event_loop.h"

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/timerfd.h>
#include <unistd.h>

#include <algorithm>
#include <cassert>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/notification.h"

namespace transport {
namespace {

constexpr size_t kInitialEvents = 64;
constexpr size_t kMaxEvents = 4096;
// A co-poller's own event array (CoPollUntil): events beyond it stay ready,
// and epoll wakes the loop thread for them.
constexpr int kCoPollEvents = 32;
// Rebuild the timer heap when cancelled entries outnumber live ones by this.
constexpr size_t kCompactSlack = 64;

// The loop whose task this thread runs inline (RunInlineOrPost), if any.
thread_local EventLoop* t_inline_loop = nullptr;
// The loop this thread runs in Run(), if any.
thread_local EventLoop* t_run_loop = nullptr;
// I/O handlers this thread ran as a co-poller (CoPolledEventsOnThisThread).
thread_local uint64_t t_co_polled_events = 0;

}  // namespace

absl::StatusOr<std::unique_ptr<EventLoop>> EventLoop::Create() {
  return CreateLoop(/*manual_clock=*/false);
}

absl::StatusOr<std::unique_ptr<EventLoop>> EventLoop::CreateWithManualClock() {
  return CreateLoop(/*manual_clock=*/true);
}

absl::StatusOr<std::unique_ptr<EventLoop>> EventLoop::CreateLoop(
    bool manual_clock) {
  int epoll_fd = epoll_create1(EPOLL_CLOEXEC);
  if (epoll_fd < 0) return absl::ErrnoToStatus(errno, "epoll_create1");
  int wake_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
  if (wake_fd < 0) {
    int err = errno;
    close(epoll_fd);
    return absl::ErrnoToStatus(err, "eventfd");
  }
  std::unique_ptr<EventLoop> loop(
      new EventLoop(epoll_fd, wake_fd, manual_clock));
  epoll_event ev{};
  ev.events = EPOLLIN | EPOLLET;
  ev.data.ptr = loop->wake_watcher_.get();
  if (epoll_ctl(epoll_fd, EPOLL_CTL_ADD, wake_fd, &ev) != 0) {
    return absl::ErrnoToStatus(errno, "epoll_ctl(ADD, eventfd)");
  }
  // The alarm: an inline runner's timer wakes the sleeping loop at its
  // deadline (steady_clock is CLOCK_MONOTONIC), not at once.
  loop->alarm_fd_ = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
  if (loop->alarm_fd_ < 0) return absl::ErrnoToStatus(errno, "timerfd_create");
  ev.data.ptr = loop->alarm_watcher_.get();
  if (epoll_ctl(epoll_fd, EPOLL_CTL_ADD, loop->alarm_fd_, &ev) != 0) {
    return absl::ErrnoToStatus(errno, "epoll_ctl(ADD, timerfd)");
  }
  return loop;
}

EventLoop::EventLoop(int epoll_fd, int wake_fd, bool manual_clock)
    : epoll_fd_(epoll_fd),
      wake_fd_(wake_fd),
      manual_clock_(manual_clock),
      // A fixed start: runs of a fuzzer see the same times.
      manual_now_(Clock::time_point(std::chrono::hours(1))),
      owner_(std::this_thread::get_id()),
      now_(ReadClock()),
      events_(kInitialEvents) {
  wake_watcher_ = std::make_unique<Watcher>(
      Watcher{wake_fd, EPOLLIN, true, [this](uint32_t) { DrainWakeFd(); }});
  alarm_watcher_ = std::make_unique<Watcher>(Watcher{-1, EPOLLIN, true, {}});
}

EventLoop::~EventLoop() {
  // Destructors below may call loop-thread methods (Unwatch, Cancel); the
  // destroying thread is the loop's thread from now on.
  BindToCurrentThread();
  // Handlers, timers and tasks may own objects whose destructors call back
  // into the loop (Unwatch, Cancel): destroy them while the loop is intact,
  // each container moved out first so such calls find nothing.
  auto watchers = std::move(watchers_);
  watchers_.clear();
  watchers.clear();
  retired_watchers_.clear();
  auto timers = std::move(timers_);
  timers_.clear();
  timers.clear();
  timer_heap_.clear();
  std::vector<Task> posted;
  {
    absl::MutexLock lock(&mu_);
    posted.swap(posted_);
  }
  posted.clear();
  auto deferred = std::move(deferred_);
  deferred_.clear();
  deferred.clear();
  close(wake_fd_);
  if (alarm_fd_ >= 0) close(alarm_fd_);
  close(epoll_fd_);
}

void EventLoop::Post(Task task) {
  bool was_empty;
  {
    absl::MutexLock lock(&mu_);
    was_empty = posted_.empty();
    posted_.push_back(std::move(task));
  }
  // A non-empty queue already has a wake-up pending (or the loop is about to
  // swap it): one eventfd write per batch.
  if (was_empty) Wake();
}

void EventLoop::RunInLoop(Task task) {
  if (IsInLoopThread()) {
    task();
  } else {
    Post(std::move(task));
  }
}

bool EventLoop::RunInlineOrPost(Task task) {
  // No nesting: a thread that runs some loop (Run(), or a task inline) never
  // takes another loop's run lock, so Current() names one loop.
  if (Current() != nullptr || IsInLoopThread() || !run_mu_.TryLock()) {
    Post(std::move(task));
    return false;
  }
  // Not in Run()'s sleep (RunOnce/RunUntil driven, or between iterations),
  // or awake already with events to handle (it waits for this lock): post.
  // Work posted by others or deferred runs on the loop's thread, never here
  // (it may complete other calls, run user callbacks): post behind it, which
  // keeps the order too.
  bool idle =
      sleeping_ && asleep_.load(std::memory_order_acquire) && deferred_.empty();
  if (idle) {
    absl::MutexLock lock(&mu_);
    idle = posted_.empty();
  }
  if (!idle) {
    run_mu_.Unlock();
    Post(std::move(task));
    return false;
  }
  // The loop thread sleeps in epoll_wait and cannot take the lock before we
  // release it: run as it would.
  const std::thread::id loop_thread = owner_.load(std::memory_order_relaxed);
  BindToCurrentThread();
  t_inline_loop = this;
  now_ = ReadClock();
  in_iteration_ = true;
  task();
  RunDeferred();
  in_iteration_ = false;
  const bool wake = ArmAlarmForEarlierTimer();
  t_inline_loop = nullptr;
  owner_.store(loop_thread, std::memory_order_relaxed);
  // Before the unlock: once released, the loop may be stopped and destroyed.
  if (wake) Wake();
  run_mu_.Unlock();
  return true;
}

bool EventLoop::ArmAlarmForEarlierTimer() {
  run_mu_.AssertHeld();
  DropCancelledTop();
  // A timer due before the loop's sleep ends must wake it at its deadline:
  // the alarm does, with no wake-up now (a call's deadline timer is usually
  // cancelled long before). Only ever moved earlier while the loop sleeps.
  if (!timer_heap_.empty() && timer_heap_.front().deadline < sleep_until_ &&
      timer_heap_.front().deadline < alarm_deadline_) {
    if (manual_clock_ || !SetAlarm(timer_heap_.front().deadline)) {
      return true;
    }
  }
  return false;
}

EventLoop::CoPollResult EventLoop::CoPollUntil(absl::FunctionRef<bool()> done,
                                               absl::Time deadline) {
  if (manual_clock_ || Current() != nullptr || IsInLoopThread() ||
      !run_mu_.TryLock()) {
    return CoPollResult::kNotPolled;
  }
  // Published before the idle test (seq_cst, as the loop thread's
  // yield_requested_ store and copolling_ load in WaitReleased): either the
  // loop thread sees us and kicks, or we see its request and yield.
  copolling_.store(true);
  // RunInlineOrPost's idle test: the loop sleeps in Run() with nothing to do.
  bool idle = sleeping_ && asleep_.load(std::memory_order_acquire) &&
              deferred_.empty() && !yield_requested_.load();
  if (idle) {
    absl::MutexLock lock(&mu_);
    idle = posted_.empty();
  }
  if (!idle) {
    copolling_.store(false);
    run_mu_.Unlock();
    return CoPollResult::kNotPolled;
  }
  const std::thread::id loop_thread = owner_.load(std::memory_order_relaxed);
  BindToCurrentThread();
  t_inline_loop = this;
  const int64_t busy_poll_ns = busy_poll_ns_.load(std::memory_order_relaxed);
  Clock::time_point last_work = Clock::now();
  epoll_event events[kCoPollEvents];
  CoPollResult result = CoPollResult::kYielded;
  bool wake = false;  // The loop thread has work: kick it on the way out.
  for (;;) {
    if (done()) {
      result = CoPollResult::kDone;
      break;
    }
    absl::Duration left = absl::InfiniteDuration();
    if (deadline != absl::InfiniteFuture()) {
      left = deadline - absl::Now();
      if (left <= absl::ZeroDuration()) {
        result = CoPollResult::kTimedOut;
        break;
      }
    }
    // The loop thread is awake and waits for the run lock.
    if (yield_requested_.load()) break;
    int timeout_ms = -1;
    if (busy_poll_ns > 0 &&
        Clock::now() - last_work < std::chrono::nanoseconds(busy_poll_ns)) {
      timeout_ms = 0;  // Busy-poll, as Run() would after work.
    } else if (left != absl::InfiniteDuration()) {
      timeout_ms = static_cast<int>(std::min<int64_t>(
          absl::ToInt64Milliseconds(absl::Ceil(left, absl::Milliseconds(1))),
          24 * 3600 * 1000));
    }
    const int n = epoll_wait(epoll_fd_, events, kCoPollEvents, timeout_ms);
    if (timeout_ms == 0 && n == 0) sched_yield();  // As Run()'s spin.
    now_ = ReadClock();
    in_iteration_ = true;
    int handled = 0;
    for (int i = 0; i < n; ++i) {
      Watcher* w = static_cast<Watcher*>(events[i].data.ptr);
      if (w == wake_watcher_.get()) {
        // Posted tasks, Stop, or the loop thread's kick: the loop thread's
        // work. Not drained: the kick on the way out makes a new edge.
        wake = true;
        continue;
      }
      if (w == alarm_watcher_.get()) {
        uint64_t expirations;
        while (read(alarm_fd_, &expirations, sizeof(expirations)) < 0 &&
               errno == EINTR) {
        }
        wake = true;  // A timer is due: the loop thread runs it.
        continue;
      }
      // Unwatched earlier in this round. Unwatched watchers are freed only
      // at the end of a loop-thread iteration (retired_watchers_), never
      // here: the loop thread's own epoll_wait may have returned events that
      // point at them.
      if (!w->active) continue;
      w->handler(events[i].events);
      ++handled;
    }
    t_co_polled_events += handled;
    RunDeferred();
    in_iteration_ = false;
    if (ArmAlarmForEarlierTimer()) wake = true;
    if (handled > 0) last_work = Clock::now();
    if (wake) break;
    {
      absl::MutexLock lock(&mu_);
      if (!posted_.empty()) {
        // A handler posted (work for the loop's own thread): it runs there.
        wake = true;
        break;
      }
    }
  }
  t_inline_loop = nullptr;
  owner_.store(loop_thread, std::memory_order_relaxed);
  copolling_.store(false);
  // A loop thread that asked us to yield is awake already. Before the
  // unlock: once released, the loop may be stopped and destroyed.
  if (wake && !yield_requested_.load()) Wake();
  run_mu_.Unlock();
  return result;
}

bool EventLoop::SetAlarm(Clock::time_point deadline) {
  const auto ns = std::chrono::duration_cast<std::chrono::nanoseconds>(
                      deadline.time_since_epoch())
                      .count();
  itimerspec spec{};
  // Zero would disarm: a deadline at the clock's origin is long past anyway.
  spec.it_value.tv_sec =
      static_cast<time_t>(std::max<int64_t>(ns, 1) / 1000000000);
  spec.it_value.tv_nsec =
      static_cast<long>(std::max<int64_t>(ns, 1) % 1000000000);
  if (timerfd_settime(alarm_fd_, TFD_TIMER_ABSTIME, &spec, nullptr) != 0) {
    return false;
  }
  alarm_deadline_ = deadline;
  return true;
}

void EventLoop::SetBusyPoll(absl::Duration budget) {
  busy_poll_ns_.store(
      budget <= absl::ZeroDuration() ? 0 : absl::ToInt64Nanoseconds(budget),
      std::memory_order_relaxed);
}

void EventLoop::Stop() {
  stop_requested_.store(true, std::memory_order_release);
  Wake();
}

void EventLoop::Wake() {
  uint64_t one = 1;
  // EAGAIN means the counter is saturated: a wake-up is pending anyway.
  while (write(wake_fd_, &one, sizeof(one)) < 0 && errno == EINTR) {
  }
}

void EventLoop::DrainWakeFd() {
  uint64_t value;
  while (read(wake_fd_, &value, sizeof(value)) < 0 && errno == EINTR) {
  }
}

EventLoop::Clock::time_point EventLoop::ReadClock() const {
  return manual_clock_ ? manual_now_ : Clock::now();
}

void EventLoop::AdvanceClock(absl::Duration d) {
  assert(manual_clock_ && IsInLoopThread());
  if (d > absl::ZeroDuration()) {
    manual_now_ += std::chrono::duration_cast<Clock::duration>(
        absl::ToChronoNanoseconds(d));
  }
  if (!in_iteration_) now_ = manual_now_;
}

void EventLoop::BindToCurrentThread() {
  owner_.store(std::this_thread::get_id(), std::memory_order_relaxed);
}

EventLoop* EventLoop::Current() {
  return t_inline_loop != nullptr ? t_inline_loop : t_run_loop;
}

bool EventLoop::RunningInline() { return t_inline_loop != nullptr; }

uint64_t EventLoop::CoPolledEventsOnThisThread() { return t_co_polled_events; }

void EventLoop::Run() {
  absl::MutexLock lock(&run_mu_);
  BindToCurrentThread();
  EventLoop* const outer = t_run_loop;
  t_run_loop = this;
  while (!stop_requested_.load(std::memory_order_acquire)) {
    RunIteration(absl::InfiniteDuration(), /*release_run_lock=*/true);
  }
  t_run_loop = outer;
  stop_requested_.store(false, std::memory_order_relaxed);
}

bool EventLoop::RunUntil(absl::FunctionRef<bool()> done,
                         absl::Duration timeout) {
  BindToCurrentThread();
  const Clock::time_point deadline =
      Clock::now() + absl::ToChronoNanoseconds(timeout);
  while (!done()) {
    const Clock::time_point now = Clock::now();
    if (now >= deadline) return false;
    RunOnce(absl::FromChrono(deadline - now));
  }
  return true;
}

int EventLoop::ComputeTimeoutMs(absl::Duration max_wait) {
  {
    absl::MutexLock lock(&mu_);
    if (!posted_.empty()) return 0;
  }
  if (!deferred_.empty()) return 0;
  absl::Duration wait = max_wait;
  DropCancelledTop();
  if (!timer_heap_.empty()) {
    // Measure against the real clock: Now() may be stale by the time spent
    // in handlers. A manual clock does not move while we sleep.
    const absl::Duration until =
        manual_clock_
            ? absl::ZeroDuration()
            : absl::FromChrono(timer_heap_.front().deadline - Clock::now());
    wait = std::min(wait, until);
  }
  if (wait <= absl::ZeroDuration()) return 0;
  if (wait == absl::InfiniteDuration()) return -1;
  // Round up: waking before the deadline would only spin.
  const int64_t ms =
      absl::ToInt64Milliseconds(absl::Ceil(wait, absl::Milliseconds(1)));
  return static_cast<int>(std::min<int64_t>(ms, 24 * 3600 * 1000));
}

int EventLoop::RunOnce(absl::Duration max_wait) {
  return RunIteration(max_wait, /*release_run_lock=*/false);
}

int EventLoop::WaitReleased(int timeout_ms) {
  // Held by Run() (run_mu_ is not visible to the analysis through it).
  run_mu_.AssertHeld();
  sleep_until_ = timeout_ms < 0
                     ? Clock::time_point::max()
                     : Clock::now() + std::chrono::milliseconds(timeout_ms);
  sleeping_ = true;
  asleep_.store(true, std::memory_order_release);
  run_mu_.Unlock();
  const int n = epoll_wait(epoll_fd_, events_.data(),
                           static_cast<int>(events_.size()), timeout_ms);
  const int err = errno;
  // At once, before the lock: an inline runner that takes it now (a TryLock
  // ignores waiters) must not barge ahead of a loop that has events.
  asleep_.store(false, std::memory_order_release);
  if (!run_mu_.TryLock()) {
    // An inline runner (short) or a co-poller (CoPollUntil, maybe asleep in
    // epoll_wait with the lock) holds it. Ask it to yield, and kick it out of
    // epoll_wait: we are out of ours, so the eventfd's edge goes to it. It
    // checks the request before every epoll_wait (the seq_cst pair with
    // copolling_: either we see it there, or it sees our request).
    yield_requested_.store(true);
    if (copolling_.load()) Wake();
    run_mu_.Lock();
  }
  yield_requested_.store(false, std::memory_order_relaxed);
  sleeping_ = false;
  // The loop recomputes its sleep from its timers from now on: an alarm
  // still armed only fires once, harmlessly.
  alarm_deadline_ = Clock::time_point::max();
  // An inline runner may have held the loop meanwhile.
  BindToCurrentThread();
  errno = err;
  return n;
}

int EventLoop::RunIteration(absl::Duration max_wait, bool release_run_lock) {
  BindToCurrentThread();
  iterations_.fetch_add(1, std::memory_order_relaxed);
  int timeout_ms = ComputeTimeoutMs(max_wait);
  const int64_t busy_poll_ns = busy_poll_ns_.load(std::memory_order_relaxed);
  bool spinning = false;
  if (timeout_ms != 0 && busy_poll_ns > 0 && !manual_clock_ &&
      last_work_ != Clock::time_point::min() &&
      Clock::now() - last_work_ < std::chrono::nanoseconds(busy_poll_ns)) {
    timeout_ms = 0;  // Busy-poll: work came recently, more may follow.
    spinning = true;
  }
  int n;
  if (release_run_lock && timeout_ms != 0) {
    n = WaitReleased(timeout_ms);
  } else {
    n = epoll_wait(epoll_fd_, events_.data(), static_cast<int>(events_.size()),
                   timeout_ms);
  }
  // A spin that found nothing gives way to a runnable thread on this CPU
  // (the worker running the handler this loop handed over, a caller): a
  // spinning loop that kept its CPU until preempted delayed the very work it
  // waits for (busy-poll on 2 CPUs: 0.60x grpc++'s calls/s).
  if (spinning && n == 0) sched_yield();
  now_ = ReadClock();
  in_iteration_ = true;
  int callbacks = 0;
  if (n < 0) {
    // Only EINTR is expected; anything else is a bug in our fd handling.
    assert(errno == EINTR);
    n = 0;
  }
  for (int i = 0; i < n; ++i) {
    Watcher* w = static_cast<Watcher*>(events_[i].data.ptr);
    if (w == wake_watcher_.get()) {
      DrainWakeFd();
      continue;
    }
    if (w == alarm_watcher_.get()) {
      uint64_t expirations;
      while (read(alarm_fd_, &expirations, sizeof(expirations)) < 0 &&
             errno == EINTR) {
      }
      continue;
    }
    if (!w->active) continue;  // unwatched earlier in this iteration
    w->handler(events_[i].events);
    ++callbacks;
  }
  if (static_cast<size_t>(n) == events_.size() && events_.size() < kMaxEvents) {
    events_.resize(events_.size() * 2);
  }
  callbacks += RunTimers();
  callbacks += RunPostedTasks();
  callbacks += RunDeferred();
  retired_watchers_.clear();
  in_iteration_ = false;
  if (callbacks > 0 && busy_poll_ns > 0) last_work_ = Clock::now();
  return callbacks;
}

absl::Status EventLoop::Watch(int fd, uint32_t events, IoHandler handler) {
  assert(IsInLoopThread());
  auto [it, inserted] = watchers_.try_emplace(fd);
  if (!inserted) {
    return absl::AlreadyExistsError(absl::StrCat("fd ", fd, " is watched"));
  }
  it->second = std::make_unique<Watcher>(
      Watcher{fd, events | EPOLLET, true, std::move(handler)});
  epoll_event ev{};
  ev.events = events | EPOLLET;
  ev.data.ptr = it->second.get();
  if (epoll_ctl(epoll_fd_, EPOLL_CTL_ADD, fd, &ev) != 0) {
    int err = errno;
    watchers_.erase(it);
    return absl::ErrnoToStatus(err,
                               absl::StrCat("epoll_ctl(ADD, fd ", fd, ")"));
  }
  return absl::OkStatus();
}

absl::Status EventLoop::Modify(int fd, uint32_t events) {
  assert(IsInLoopThread());
  auto it = watchers_.find(fd);
  if (it == watchers_.end()) {
    return absl::NotFoundError(absl::StrCat("fd ", fd, " is not watched"));
  }
  Watcher* w = it->second.get();
  events |= EPOLLET;
  if (w->events == events) return absl::OkStatus();
  epoll_event ev{};
  ev.events = events;
  ev.data.ptr = w;
  if (epoll_ctl(epoll_fd_, EPOLL_CTL_MOD, fd, &ev) != 0) {
    return absl::ErrnoToStatus(errno,
                               absl::StrCat("epoll_ctl(MOD, fd ", fd, ")"));
  }
  w->events = events;
  return absl::OkStatus();
}

absl::Status EventLoop::Unwatch(int fd) {
  assert(IsInLoopThread());
  auto it = watchers_.find(fd);
  if (it == watchers_.end()) {
    return absl::NotFoundError(absl::StrCat("fd ", fd, " is not watched"));
  }
  std::unique_ptr<Watcher> w = std::move(it->second);
  watchers_.erase(it);
  w->active = false;
  // ENOENT/EBADF: the fd was already closed, which removed it from the set.
  epoll_ctl(epoll_fd_, EPOLL_CTL_DEL, fd, nullptr);
  // The handler may be running right now (Unwatch from inside it), and events
  // collected in this iteration may still point at `w`: free it later.
  retired_watchers_.push_back(std::move(w));
  return absl::OkStatus();
}

EventLoop::TimerId EventLoop::RunAfter(absl::Duration delay, Task task) {
  if (delay < absl::ZeroDuration()) delay = absl::ZeroDuration();
  // Count from the clock, not from Now(): the cached time is stale by
  // whatever this iteration has run so far (or arbitrarily old outside an
  // iteration), and a deadline taken from it would fire early by as much. A
  // steady_clock read is a vDSO call; a manual clock reads manual_now_.
  const Clock::time_point base = ReadClock();
  // Beyond a century counts as never (and keeps the addition from
  // overflowing).
  const Clock::time_point deadline =
      delay >= absl::Hours(24 * 365 * 100)
          ? Clock::time_point::max()
          : base + std::chrono::duration_cast<Clock::duration>(
                       absl::ToChronoNanoseconds(delay));
  return RunAt(deadline, std::move(task));
}

EventLoop::TimerId EventLoop::RunAt(Clock::time_point deadline, Task task) {
  assert(IsInLoopThread());
  const TimerId id = next_timer_id_++;
  timers_.emplace(id, std::move(task));
  timer_heap_.push_back(TimerEntry{deadline, id});
  std::push_heap(timer_heap_.begin(), timer_heap_.end(), TimerLater());
  return id;
}

bool EventLoop::Cancel(TimerId id) {
  assert(IsInLoopThread());
  auto it = timers_.find(id);
  if (it == timers_.end()) return false;
  // Move the task out before destroying it: its destructor may re-enter.
  Task task = std::move(it->second);
  timers_.erase(it);
  if (timer_heap_.size() > 2 * timers_.size() + kCompactSlack) {
    CompactTimerHeap();
  }
  return true;
}

void EventLoop::DropCancelledTop() {
  while (!timer_heap_.empty() && !timers_.contains(timer_heap_.front().id)) {
    std::pop_heap(timer_heap_.begin(), timer_heap_.end(), TimerLater());
    timer_heap_.pop_back();
  }
}

void EventLoop::CompactTimerHeap() {
  timer_heap_.erase(std::remove_if(timer_heap_.begin(), timer_heap_.end(),
                                   [this](const TimerEntry& e) {
                                     return !timers_.contains(e.id);
                                   }),
                    timer_heap_.end());
  std::make_heap(timer_heap_.begin(), timer_heap_.end(), TimerLater());
}

int EventLoop::RunTimers() {
  int ran = 0;
  // Timers added by these callbacks get ids >= limit and wait for the next
  // iteration, so a zero-delay timer that re-arms itself cannot starve I/O.
  const TimerId limit = next_timer_id_;
  std::vector<TimerEntry> later;
  while (!timer_heap_.empty() && timer_heap_.front().deadline <= now_) {
    const TimerEntry top = timer_heap_.front();
    std::pop_heap(timer_heap_.begin(), timer_heap_.end(), TimerLater());
    timer_heap_.pop_back();
    if (top.id >= limit) {
      later.push_back(top);
      continue;
    }
    auto it = timers_.find(top.id);
    if (it == timers_.end()) continue;  // cancelled
    Task task = std::move(it->second);
    timers_.erase(it);
    task();
    ++ran;
  }
  for (const TimerEntry& e : later) {
    timer_heap_.push_back(e);
    std::push_heap(timer_heap_.begin(), timer_heap_.end(), TimerLater());
  }
  return ran;
}

int EventLoop::RunPostedTasks() {
  {
    absl::MutexLock lock(&mu_);
    if (posted_.empty()) return 0;
    running_tasks_.swap(posted_);
  }
  // Swap back an empty vector with capacity, so steady state allocates
  // nothing. A task may Post() again: it lands in posted_ for next time.
  std::vector<Task> tasks = std::move(running_tasks_);
  running_tasks_.clear();
  for (Task& task : tasks) task();
  const int ran = static_cast<int>(tasks.size());
  tasks.clear();
  running_tasks_ = std::move(tasks);
  return ran;
}

void EventLoop::Defer(Task task) {
  assert(IsInLoopThread());
  deferred_.push_back(std::move(task));
}

int EventLoop::RunDeferred() {
  int ran = 0;
  // Deferred work may defer more (a flush that closes a connection that
  // defers its cleanup): keep going until the phase is empty.
  while (!deferred_.empty()) {
    std::vector<Task> batch;
    batch.swap(deferred_);
    for (Task& task : batch) {
      task();
      ++ran;
    }
  }
  return ran;
}

// ---- EventLoopThread ----

absl::StatusOr<std::unique_ptr<EventLoopThread>> EventLoopThread::Start(
    const std::string& name, int cpu) {
  std::unique_ptr<EventLoopThread> t(new EventLoopThread());
  absl::Notification created;
  absl::Status status;
  EventLoopThread* self = t.get();
  t->thread_ = std::thread([self, &created, &status, name, cpu] {
    pthread_setname_np(pthread_self(), name.substr(0, 15).c_str());
    if (cpu >= 0) {
      cpu_set_t set;
      CPU_ZERO(&set);
      CPU_SET(cpu, &set);
      int err = pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
      if (err != 0) {
        status = absl::ErrnoToStatus(err, absl::StrCat("pin to cpu ", cpu));
        created.Notify();
        return;
      }
    }
    auto loop = EventLoop::Create();
    if (!loop.ok()) {
      status = loop.status();
      created.Notify();
      return;
    }
    self->loop_ = *std::move(loop);
    EventLoop* l = self->loop_.get();
    created.Notify();  // `status` and `created` may be gone after this
    l->Run();
  });
  created.WaitForNotification();
  if (!status.ok()) {
    t->thread_.join();
    return status;
  }
  return t;
}

EventLoopThread::~EventLoopThread() {
  if (loop_ != nullptr) loop_->Stop();
  if (thread_.joinable()) thread_.join();
  // The loop is destroyed here, on the joining thread, after its own thread
  // ended: nothing else can touch it any more.
}

absl::StatusOr<std::unique_ptr<EventLoopGroup>> EventLoopGroup::Create(
    const Options& options) {
  int n = options.num_threads;
  if (n <= 0)
    n = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  const int cpus =
      static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  std::unique_ptr<EventLoopGroup> group(new EventLoopGroup());
  for (int i = 0; i < n; ++i) {
    auto t = EventLoopThread::Start(absl::StrCat(options.name_prefix, i),
                                    options.pin_threads ? i % cpus : -1);
    if (!t.ok()) return t.status();
    (*t)->loop()->SetBusyPoll(options.busy_poll);
    group->threads_.push_back(*std::move(t));
  }
  return group;
}

EventLoop* EventLoopGroup::Next() {
  const size_t i = next_.fetch_add(1, std::memory_order_relaxed);
  return threads_[i % threads_.size()]->loop();
}

}  // namespace transport
