#include "rpc/internal/worker_pool.h"

#include <utility>

namespace rpc {
namespace internal {

WorkerPool::WorkerPool(int min_threads, int max_threads)
    : max_threads_(max_threads < min_threads ? min_threads : max_threads) {
  absl::MutexLock lock(&mu_);
  for (int i = 0; i < min_threads; ++i) AddThreadLocked();
}

WorkerPool::~WorkerPool() {
  std::vector<std::thread> threads;
  {
    absl::MutexLock lock(&mu_);
    stop_ = true;
    threads.swap(threads_);
  }
  for (std::thread& t : threads) t.join();
}

void WorkerPool::AddThreadLocked() {
  ++idle_;
  threads_.emplace_back([this] { Work(); });
}

void WorkerPool::Submit(absl::AnyInvocable<void()> task) {
  absl::MutexLock lock(&mu_);
  queue_.push_back(std::move(task));
  if (idle_ < static_cast<int>(queue_.size()) &&
      static_cast<int>(threads_.size()) < max_threads_) {
    AddThreadLocked();
  }
}

bool WorkerPool::WaitIdle(absl::Duration timeout) {
  absl::MutexLock lock(&mu_);
  auto idle = [this]() ABSL_SHARED_LOCKS_REQUIRED(mu_) {
    return queue_.empty() && running_ == 0;
  };
  return mu_.AwaitWithTimeout(absl::Condition(&idle), timeout);
}

void WorkerPool::Work() {
  absl::MutexLock lock(&mu_);
  for (;;) {
    auto ready = [this]() ABSL_SHARED_LOCKS_REQUIRED(mu_) {
      return !queue_.empty() || stop_;
    };
    mu_.Await(absl::Condition(&ready));
    if (queue_.empty()) return;  // stop_
    absl::AnyInvocable<void()> task = std::move(queue_.front());
    queue_.pop_front();
    --idle_;
    ++running_;
    mu_.Unlock();
    task();
    task = nullptr;
    mu_.Lock();
    --running_;
    ++idle_;
  }
}

}  // namespace internal
}  // namespace rpc
