// WorkerPool: the threads that run synchronous handlers. It starts with
// `min_threads` and adds a thread (up to `max_threads`) whenever a task is
// queued while none is idle, so a handler that blocks (a streaming call that
// waits for its client) does not starve new calls. A thread above
// `min_threads` that has found no task for `idle_time` retires (grpc++'s sync
// server likewise lets its extra threads exit), so a burst does not leave its
// threads behind. Tasks run in FIFO order. The destructor runs what is queued,
// then joins.

#ifndef RPC_INTERNAL_WORKER_POOL_H_
#define RPC_INTERNAL_WORKER_POOL_H_

#include <deque>
#include <functional>
#include <list>
#include <thread>
#include <vector>

#include "absl/functional/any_invocable.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"

namespace rpc {
namespace internal {

class WorkerPool {
 public:
  static constexpr absl::Duration kDefaultIdleTime = absl::Seconds(10);

  WorkerPool(int min_threads, int max_threads,
             absl::Duration idle_time = kDefaultIdleTime);
  ~WorkerPool();
  WorkerPool(const WorkerPool&) = delete;
  WorkerPool& operator=(const WorkerPool&) = delete;

  // Any thread.
  void Submit(absl::AnyInvocable<void()> task);
  // Blocks until no task is queued or running, or `timeout` passed; returns
  // whether it became idle.
  bool WaitIdle(absl::Duration timeout);
  // Threads started and not retired.
  int num_threads();
  // Blocks until at most `n` threads are left, or `timeout` passed; returns
  // whether that happened. For tests.
  bool WaitForThreadsAtMost(int n, absl::Duration timeout);

 private:
  using ThreadList = std::list<std::thread>;
  void Work(ThreadList::iterator self);
  void AddThreadLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Joins the threads that retired (they have left Work or are about to).
  void JoinRetired();

  const int min_threads_;
  const int max_threads_;
  const absl::Duration idle_time_;
  absl::Mutex mu_;
  std::deque<absl::AnyInvocable<void()>> queue_ ABSL_GUARDED_BY(mu_);
  ThreadList threads_ ABSL_GUARDED_BY(mu_);
  std::vector<std::thread> retired_ ABSL_GUARDED_BY(mu_);
  int idle_ ABSL_GUARDED_BY(mu_) = 0;
  int running_ ABSL_GUARDED_BY(mu_) = 0;
  bool stop_ ABSL_GUARDED_BY(mu_) = false;
};

}  // namespace internal
}  // namespace rpc

#endif  // RPC_INTERNAL_WORKER_POOL_H_
