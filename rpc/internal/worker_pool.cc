#include "rpc/internal/worker_pool.h"

#include <functional>
#include <memory>
#include <utility>

namespace rpc {
namespace internal {
namespace {

// On a worker while it co-polls: its pool, and the slot a task it submits
// itself (the handler of the request it read) is claimed into.
thread_local WorkerPool* t_copolling_pool = nullptr;
thread_local absl::AnyInvocable<void()>* t_claim = nullptr;

}  // namespace

WorkerPool::WorkerPool(int min_threads, int max_threads,
                       absl::Duration idle_time, size_t max_waiting)
    : min_threads_(min_threads),
      max_threads_(max_threads < min_threads ? min_threads : max_threads),
      idle_time_(idle_time),
      max_waiting_(max_waiting) {
  transport::MutexLock lock(&mu_);
  for (int i = 0; i < min_threads; ++i) AddThreadLocked();
}

WorkerPool::~WorkerPool() { Shutdown(); }

void WorkerPool::set_co_poll(bool on) {
  transport::MutexLock lock(&mu_);
  co_poll_ = on;
}

void WorkerPool::set_copoll_timeout_hook_for_test(std::function<void()> hook) {
  transport::MutexLock lock(&mu_);
  copoll_timeout_hook_ =
      hook ? std::make_shared<std::function<void()>>(std::move(hook)) : nullptr;
}

uint64_t WorkerPool::copoll_kicks() {
  transport::MutexLock lock(&mu_);
  return copoll_kicks_;
}

void WorkerPool::Shutdown() {
  ThreadList threads;
  transport::EventLoop* kick = nullptr;
  {
    transport::MutexLock lock(&mu_);
    stop_ = true;
    threads.swap(threads_);
    work_cv_.SignalAll();
    state_cv_.SignalAll();
    kick = copoll_loop_;
    if (kick != nullptr) copoll_kick_.store(true);
  }
  // The loops outlive Shutdown (the file comment).
  if (kick != nullptr) kick->Post([] {});
  for (std::thread& t : threads) t.join();
  JoinRetired();
}

void WorkerPool::AddThreadLocked() {
  ++idle_;
  // The thread finds its own entry (to retire it) through the iterator, set
  // before it can take mu_.
  auto it = threads_.emplace(threads_.end());
  *it = std::thread([this, it] { Work(it); });
}

void WorkerPool::JoinRetired() {
  std::vector<std::thread> retired;
  {
    transport::MutexLock lock(&mu_);
    retired.swap(retired_);
  }
  for (std::thread& t : retired) t.join();
}

WorkerPool::Ticket WorkerPool::Submit(absl::AnyInvocable<void()> task) {
  Ticket ticket;
  bool join = false;
  bool signal = false;
  transport::EventLoop* kick = nullptr;
  if (t_copolling_pool == this && !*t_claim) {
    // The co-polling worker read this task's request: it runs it itself,
    // unless a task queued meanwhile (from another thread, in the same round)
    // counts on it as its idle thread: then the normal path below grows the
    // pool or says the task waits.
    transport::MutexLock lock(&mu_);
    if (!stop_ && queue_.size() < static_cast<size_t>(idle_)) {
      ticket.id = next_id_++;
      *t_claim = std::move(task);
      --idle_;
      ++running_;
      ++submits_;
      return ticket;
    }
  }
  {
    transport::MutexLock lock(&mu_);
    const bool can_grow = static_cast<int>(threads_.size()) < max_threads_;
    // Tasks already queued beyond the idle threads that will take them.
    const size_t waiting =
        queue_.size() > static_cast<size_t>(idle_) ? queue_.size() - idle_ : 0;
    if (stop_ || (!can_grow && max_waiting_ > 0 && waiting >= max_waiting_)) {
      ticket.rejected = true;
      ticket.stopped = stop_;
    } else {
      ticket.id = next_id_++;
      const bool quiet = queue_.size() + running_ <= 1;
      ++submits_;
      queue_.push_back(Queued{ticket.id, std::move(task), nullptr,
                              transport::EventLoop::Current(), quiet});
      signal = WakeOneLocked();
      // The co-polling worker (counted idle) sleeps in epoll_wait, not on
      // mu_: end its co-poll when the task needs it, i.e. when the other idle
      // workers (idle_ - 1, one of them just signalled) are fewer than the
      // tasks queued (unless this is its own thread, which takes it next
      // anyway). A kick whenever it co-polls woke it and the loop thread for
      // nothing on every call another worker took (with num_loops > 1: each
      // call of the other loops).
      if (copoll_loop_ != nullptr && t_copolling_pool != this &&
          !copoll_kick_.load() && queue_.size() >= static_cast<size_t>(idle_)) {
        copoll_kick_.store(true);
        kick = copoll_loop_;
        ++copoll_kicks_;
      }
      if (idle_ < static_cast<int>(queue_.size())) {
        if (can_grow) {
          AddThreadLocked();
        } else {
          ticket.waits = true;
        }
      }
    }
    join = !retired_.empty();
  }
  // After the unlock: a worker woken while we hold mu_ would only block on
  // it again (std::condition_variable does not hand the waiter over to the
  // mutex), one more context switch per task.
  if (signal) work_cv_.Signal();
  // A task posted wakes the co-poller (the loop's eventfd): it yields. The
  // loop lives until after Shutdown.
  if (kick != nullptr) kick->Post([] {});
  if (join) JoinRetired();
  return ticket;
}

bool WorkerPool::Cancel(TaskId id) {
  absl::AnyInvocable<void()> task;  // destroyed outside the lock
  transport::MutexLock lock(&mu_);
  for (auto it = queue_.begin(); it != queue_.end(); ++it) {
    if (it->id != id) continue;
    task = std::move(it->task);
    queue_.erase(it);
    state_cv_.SignalAll();  // WaitIdle
    return true;
  }
  return false;
}

bool WorkerPool::OnStart(TaskId id, absl::AnyInvocable<void()> on_start) {
  {
    transport::MutexLock lock(&mu_);
    for (Queued& queued : queue_) {
      if (queued.id != id) continue;
      queued.on_start = std::move(on_start);
      return true;
    }
  }
  return false;  // on_start is destroyed outside the lock
}

bool WorkerPool::WaitIdle(absl::Duration timeout) {
  const absl::Time deadline = absl::Now() + timeout;
  transport::MutexLock lock(&mu_);
  while (!(queue_.empty() && running_ == 0)) {
    if (state_cv_.WaitWithDeadline(&mu_, deadline)) {
      return queue_.empty() && running_ == 0;
    }
  }
  return true;
}

int WorkerPool::num_threads() {
  transport::MutexLock lock(&mu_);
  return static_cast<int>(threads_.size());
}

bool WorkerPool::WaitForThreadsAtMost(int n, absl::Duration timeout) {
  const absl::Time deadline = absl::Now() + timeout;
  transport::MutexLock lock(&mu_);
  while (static_cast<int>(threads_.size()) > n) {
    if (state_cv_.WaitWithDeadline(&mu_, deadline)) {
      return static_cast<int>(threads_.size()) <= n;
    }
  }
  return true;
}

bool WorkerPool::WakeOneLocked() {
  if (wake_pending_ || waiting_ == 0 || queue_.empty()) return false;
  wake_pending_ = true;
  return true;
}

bool WorkerPool::WaitReadyLocked(absl::Duration timeout) {
  if (!queue_.empty() || stop_) return true;
  const absl::Time deadline = absl::Now() + timeout;
  while (queue_.empty() && !stop_) {
    ++waiting_;
    const bool timed_out = work_cv_.WaitWithDeadline(&mu_, deadline);
    --waiting_;
    // Woken (or timed out, or spuriously): whoever signalled is answered; a
    // later Submit may signal again.
    wake_pending_ = false;
    if (timed_out) break;
  }
  return !queue_.empty() || stop_;
}

void WorkerPool::Work(ThreadList::iterator self) {
  transport::MutexLock lock(&mu_);
  transport::EventLoop* hint = nullptr;  // The loop of the last task.
  // The last task this thread ran ran alone (the header, "Leader/follower").
  bool alone = false;
  for (;;) {
    if (co_poll_ && alone && !stop_ && queue_.empty() &&
        copoll_loop_ == nullptr && hint != nullptr) {
      // Leader/follower (the file comment): wait for the next request by
      // polling the loop of the last one.
      copoll_loop_ = hint;
      copoll_kick_.store(false);
      const uint64_t round_start = submits_;
      const std::shared_ptr<std::function<void()>> timeout_hook =
          copoll_timeout_hook_;
      absl::AnyInvocable<void()> claim;
      t_copolling_pool = this;
      t_claim = &claim;
      mu_.Unlock();
      const transport::EventLoop::CoPollResult r = hint->CoPollUntil(
          [&] { return static_cast<bool>(claim) || copoll_kick_.load(); },
          absl::Now() + idle_time_);
      t_copolling_pool = nullptr;
      t_claim = nullptr;
      if (timeout_hook != nullptr && !claim &&
          r == transport::EventLoop::CoPollResult::kTimedOut) {
        (*timeout_hook)();
      }
      mu_.Lock();
      copoll_loop_ = nullptr;
      if (claim) {
        // Counted running by Submit. Alone if the round submitted no other
        // task (a batch read at once goes to the queue's workers).
        alone = submits_ - round_start == 1;
        mu_.Unlock();
        claim();
        claim = nullptr;
        mu_.Lock();
        --running_;
        ++idle_;
        state_cv_.SignalAll();  // WaitIdle
        continue;
      }
      if (r == transport::EventLoop::CoPollResult::kTimedOut) {
        // Not while a task is queued: one submitted after the timeout,
        // before we took mu_, counted on this thread as idle (copoll_loop_
        // was set), so it added no thread, set no Ticket::waits and only
        // posted a kick nobody reads; retiring would leave it to the busy
        // workers. The top of the loop takes it.
        if (queue_.empty() &&
            static_cast<int>(threads_.size()) > min_threads_) {
          --idle_;
          retired_.push_back(std::move(*self));
          threads_.erase(self);
          state_cv_.SignalAll();  // WaitForThreadsAtMost
          return;
        }
        continue;
      }
      // Kicked (a task is queued, or Shutdown), the loop thread took its
      // loop back, or the loop was awake (not polled): wait on the queue.
      // Not retried: 20 retries 50 us apart were 9.6k timed futex waits in
      // a 2 s run at 32 in flight (co-polling whenever idle), and with this
      // rule 8 retries with sched_yield() between them raised that run's
      // server context switches from 0.24-0.29 to 0.37-0.46 per call.
    }
    if (!WaitReadyLocked(idle_time_) &&
        static_cast<int>(threads_.size()) > min_threads_) {
      // Idle for idle_time_ above the minimum: retire. Whoever submits next
      // (or the destructor) joins this thread.
      --idle_;
      retired_.push_back(std::move(*self));
      threads_.erase(self);
      state_cv_.SignalAll();  // WaitForThreadsAtMost
      return;
    }
    if (queue_.empty()) {
      if (stop_) return;
      continue;  // timed out at the minimum: keep waiting
    }
    if (queue_.front().loop != nullptr) hint = queue_.front().loop;
    // Quiet, and no call queued behind it: sequential calls.
    alone = queue_.front().quiet && queue_.size() == 1;
    absl::AnyInvocable<void()> task = std::move(queue_.front().task);
    absl::AnyInvocable<void()> on_start = std::move(queue_.front().on_start);
    queue_.pop_front();
    --idle_;
    ++running_;
    // More queued: the next sleeping worker takes them (the chain).
    const bool wake = WakeOneLocked();
    mu_.Unlock();
    if (wake) work_cv_.Signal();
    if (on_start) {
      on_start();
      on_start = nullptr;
    }
    task();
    task = nullptr;
    mu_.Lock();
    --running_;
    ++idle_;
    state_cv_.SignalAll();  // WaitIdle
  }
}

}  // namespace internal
}  // namespace rpc
