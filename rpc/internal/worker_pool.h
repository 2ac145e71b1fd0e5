// WorkerPool: the threads that run synchronous handlers. It starts with
// `min_threads` and adds a thread (up to `max_threads`) whenever a task is
// queued while none is idle, so a handler that blocks (a streaming call that
// waits for its client) does not starve new calls; threads never retire.
// Tasks run in FIFO order. The destructor runs what is queued, then joins.

#ifndef RPC_INTERNAL_WORKER_POOL_H_
#define RPC_INTERNAL_WORKER_POOL_H_

#include <deque>
#include <functional>
#include <thread>
#include <vector>

#include "absl/functional/any_invocable.h"
#include "absl/synchronization/mutex.h"

namespace rpc {
namespace internal {

class WorkerPool {
 public:
  WorkerPool(int min_threads, int max_threads);
  ~WorkerPool();
  WorkerPool(const WorkerPool&) = delete;
  WorkerPool& operator=(const WorkerPool&) = delete;

  // Any thread.
  void Submit(absl::AnyInvocable<void()> task);
  // Blocks until no task is queued or running, or `timeout` passed; returns
  // whether it became idle.
  bool WaitIdle(absl::Duration timeout);

 private:
  void Work();
  void AddThreadLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  const int max_threads_;
  absl::Mutex mu_;
  std::deque<absl::AnyInvocable<void()>> queue_ ABSL_GUARDED_BY(mu_);
  std::vector<std::thread> threads_ ABSL_GUARDED_BY(mu_);
  int idle_ ABSL_GUARDED_BY(mu_) = 0;
  int running_ ABSL_GUARDED_BY(mu_) = 0;
  bool stop_ ABSL_GUARDED_BY(mu_) = false;
};

}  // namespace internal
}  // namespace rpc

#endif  // RPC_INTERNAL_WORKER_POOL_H_
