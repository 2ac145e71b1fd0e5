#include "rpc/internal/worker_pool.h"

#include <utility>

namespace rpc {
namespace internal {

WorkerPool::WorkerPool(int min_threads, int max_threads,
                       absl::Duration idle_time, size_t max_waiting)
    : min_threads_(min_threads),
      max_threads_(max_threads < min_threads ? min_threads : max_threads),
      idle_time_(idle_time),
      max_waiting_(max_waiting) {
  absl::MutexLock lock(&mu_);
  for (int i = 0; i < min_threads; ++i) AddThreadLocked();
}

WorkerPool::~WorkerPool() { Shutdown(); }

void WorkerPool::Shutdown() {
  ThreadList threads;
  {
    absl::MutexLock lock(&mu_);
    stop_ = true;
    threads.swap(threads_);
  }
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
    absl::MutexLock lock(&mu_);
    retired.swap(retired_);
  }
  for (std::thread& t : retired) t.join();
}

WorkerPool::Ticket WorkerPool::Submit(absl::AnyInvocable<void()> task) {
  Ticket ticket;
  bool join = false;
  {
    absl::MutexLock lock(&mu_);
    const bool can_grow = static_cast<int>(threads_.size()) < max_threads_;
    // Tasks already queued beyond the idle threads that will take them.
    const size_t waiting =
        queue_.size() > static_cast<size_t>(idle_) ? queue_.size() - idle_ : 0;
    if (stop_ || (!can_grow && max_waiting_ > 0 && waiting >= max_waiting_)) {
      ticket.rejected = true;
      ticket.stopped = stop_;
    } else {
      ticket.id = next_id_++;
      queue_.push_back(Queued{ticket.id, std::move(task), nullptr});
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
  if (join) JoinRetired();
  return ticket;
}

bool WorkerPool::Cancel(TaskId id) {
  absl::AnyInvocable<void()> task;  // destroyed outside the lock
  absl::MutexLock lock(&mu_);
  for (auto it = queue_.begin(); it != queue_.end(); ++it) {
    if (it->id != id) continue;
    task = std::move(it->task);
    queue_.erase(it);
    return true;
  }
  return false;
}

bool WorkerPool::OnStart(TaskId id, absl::AnyInvocable<void()> on_start) {
  {
    absl::MutexLock lock(&mu_);
    for (Queued& queued : queue_) {
      if (queued.id != id) continue;
      queued.on_start = std::move(on_start);
      return true;
    }
  }
  return false;  // on_start is destroyed outside the lock
}

bool WorkerPool::WaitIdle(absl::Duration timeout) {
  absl::MutexLock lock(&mu_);
  auto idle = [this]() ABSL_SHARED_LOCKS_REQUIRED(mu_) {
    return queue_.empty() && running_ == 0;
  };
  return mu_.AwaitWithTimeout(absl::Condition(&idle), timeout);
}

int WorkerPool::num_threads() {
  absl::MutexLock lock(&mu_);
  return static_cast<int>(threads_.size());
}

bool WorkerPool::WaitForThreadsAtMost(int n, absl::Duration timeout) {
  absl::MutexLock lock(&mu_);
  auto few = [this, n]() ABSL_SHARED_LOCKS_REQUIRED(mu_) {
    return static_cast<int>(threads_.size()) <= n;
  };
  return mu_.AwaitWithTimeout(absl::Condition(&few), timeout);
}

void WorkerPool::Work(ThreadList::iterator self) {
  absl::MutexLock lock(&mu_);
  auto ready = [this]() ABSL_SHARED_LOCKS_REQUIRED(mu_) {
    return !queue_.empty() || stop_;
  };
  for (;;) {
    if (!mu_.AwaitWithTimeout(absl::Condition(&ready), idle_time_) &&
        static_cast<int>(threads_.size()) > min_threads_) {
      // Idle for idle_time_ above the minimum: retire. Whoever submits next
      // (or the destructor) joins this thread.
      --idle_;
      retired_.push_back(std::move(*self));
      threads_.erase(self);
      return;
    }
    if (queue_.empty()) {
      if (stop_) return;
      continue;  // timed out at the minimum: keep waiting
    }
    absl::AnyInvocable<void()> task = std::move(queue_.front().task);
    absl::AnyInvocable<void()> on_start = std::move(queue_.front().on_start);
    queue_.pop_front();
    --idle_;
    ++running_;
    mu_.Unlock();
    if (on_start) {
      on_start();
      on_start = nullptr;
    }
    task();
    task = nullptr;
    mu_.Lock();
    --running_;
    ++idle_;
  }
}

}  // namespace internal
}  // namespace rpc
