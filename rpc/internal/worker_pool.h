// WorkerPool: the threads that run synchronous handlers. It starts with
// `min_threads` and adds a thread (up to `max_threads`) whenever a task is
// queued while none is idle, so a handler that blocks (a streaming call that
// waits for its client) does not starve new calls. A thread above
// `min_threads` that has found no task for `idle_time` retires (grpc++'s sync
// server likewise lets its extra threads exit), so a burst does not leave its
// threads behind. Queued tasks start in FIFO order; a task claimed by a
// co-polling worker (below) never queues, so it may start ahead of tasks
// queued before it.
//
// Beyond `max_threads`. When every thread is busy and none may be added, a
// task waits in the queue (Submit says so: Ticket::waits) until a thread is
// free; whoever submitted it may take it back while it waits (Cancel), which
// is how the server gives up on a call that found no worker before its
// deadline, or was cancelled while it waited. `max_waiting` (0: no bound)
// limits the tasks waiting that way: Submit refuses more (Ticket::rejected).
// Shutdown (and the destructor) runs what is queued, then joins; a task
// submitted after it is refused.
//
// Leader/follower (set_co_poll; on in the server unless
// ServerBuilder::SetWorkerLeaderFollower(false): rpc/README.md, "Threading
// model"). A worker whose last task ran alone co-polls
// (EventLoop::CoPollUntil) the loop that submitted it, at most one worker at
// a time: the request that loop's socket brings is read on that worker, and
// the task it submits there (the handler) is claimed by that worker and run
// as soon as the co-poll returns: no hand-off, no wake-up of the loop thread
// nor of another worker. A task ran alone when at most one other was queued
// or running at its submission and none was queued behind it when it
// started (a claimed one: when no other task was submitted to the pool, by
// any thread, during its co-poll round): sequential calls. Calls that come
// in batches (many in flight) go through the queue as before: there a
// co-poller holding the loop's run lock turned the other workers' inline
// writes into posts that woke the loop and kicked the co-poller out (twice
// the context switches per call at 32 in flight). A task submitted by any
// other thread while the only idle worker co-polls (more precisely: while
// the tasks queued outnumber the other idle workers) kicks it out (a task
// posted to its loop); a task another idle worker takes leaves the co-poll
// alone. A co-poll that times out retires its worker (above the minimum)
// only if no task is queued. A co-poll the loop declines (it is awake) is
// not retried: the worker waits for a task. The loops must outlive Shutdown.

#ifndef RPC_INTERNAL_WORKER_POOL_H_
#define RPC_INTERNAL_WORKER_POOL_H_

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <list>
#include <memory>
#include <thread>
#include <vector>

#include "absl/functional/any_invocable.h"
#include "absl/time/time.h"
#include "transport/io/event_loop.h"
#include "transport/io/mutex.h"

namespace rpc {
namespace internal {

class WorkerPool {
 public:
  static constexpr absl::Duration kDefaultIdleTime = absl::Seconds(10);

  WorkerPool(int min_threads, int max_threads,
             absl::Duration idle_time = kDefaultIdleTime,
             size_t max_waiting = 0);
  ~WorkerPool();
  WorkerPool(const WorkerPool&) = delete;
  WorkerPool& operator=(const WorkerPool&) = delete;

  using TaskId = uint64_t;
  struct Ticket {
    TaskId id = 0;  // for Cancel; 0 when rejected
    // Every thread was busy and the pool at max_threads: the task waits for
    // a running one to finish.
    bool waits = false;
    // Not queued (the task was destroyed): max_waiting tasks already wait,
    // or the pool is shut down (then `stopped` too).
    bool rejected = false;
    bool stopped = false;
  };

  // Any thread.
  Ticket Submit(absl::AnyInvocable<void()> task);
  // Takes back a task no thread has started yet (it is destroyed, unrun);
  // false when a thread took it (it runs or ran) or the id is unknown. Any
  // thread; also after Shutdown.
  bool Cancel(TaskId id);
  // Runs `on_start` on the worker thread just before the queued task `id`
  // starts (a task cancelled instead destroys it unrun); false, and
  // `on_start` destroyed, when a thread already took the task or the id is
  // unknown. The server cancels a waiting call's give-up timer this way.
  bool OnStart(TaskId id, absl::AnyInvocable<void()> on_start);
  // Turns leader/follower on or off (the file comment). Off by default.
  void set_co_poll(bool on);
  // For tests: `hook` runs on a co-polling worker whose co-poll timed out,
  // after it left the loop and before it takes the pool's lock again (where
  // it decides to retire); null removes it.
  void set_copoll_timeout_hook_for_test(std::function<void()> hook);
  // Kicks Submit posted to end a co-poll (not Shutdown's). For tests.
  uint64_t copoll_kicks();
  // Runs what is queued, joins every thread, and refuses later tasks.
  // Idempotent; the object stays usable for Cancel and the accessors.
  void Shutdown();
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
  // Waits on work_cv_ until a task is queued or stop_, or `timeout` passed;
  // returns whether one of the two holds.
  // Signals one sleeping worker for the queued tasks unless one is on its
  // way already; true if the caller must call work_cv_.Signal() (after
  // releasing mu_).
  bool WakeOneLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  bool WaitReadyLocked(absl::Duration timeout)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Joins the threads that retired (they have left Work or are about to).
  void JoinRetired();

  const int min_threads_;
  const int max_threads_;
  const absl::Duration idle_time_;
  const size_t max_waiting_;
  struct Queued {
    TaskId id;
    absl::AnyInvocable<void()> task;
    absl::AnyInvocable<void()> on_start;
    // EventLoop::Current() of the submitter: what its worker co-polls next.
    transport::EventLoop* loop;
    // At most one other task was queued or running when it was submitted.
    bool quiet;
  };
  transport::Mutex mu_;
  // A task queued or stop_ set (workers wait on it).
  transport::CondVar work_cv_;
  // A task ended or was cancelled, a thread retired, Shutdown (WaitIdle and
  // WaitForThreadsAtMost wait on it).
  transport::CondVar state_cv_;
  std::deque<Queued> queue_ ABSL_GUARDED_BY(mu_);
  TaskId next_id_ ABSL_GUARDED_BY(mu_) = 1;
  ThreadList threads_ ABSL_GUARDED_BY(mu_);
  std::vector<std::thread> retired_ ABSL_GUARDED_BY(mu_);
  int idle_ ABSL_GUARDED_BY(mu_) = 0;
  int running_ ABSL_GUARDED_BY(mu_) = 0;
  // Workers asleep on work_cv_, and whether one was signalled and has not
  // woken yet. One wake-up at a time, chained: a woken worker that leaves
  // tasks queued wakes the next (WakeOneLocked). A Signal per task woke a
  // worker for each request of a batch the loop read at once, each to run one
  // task: 3.9 context switches per call at 32 in flight, against 0.2 with
  // absl::Mutex's conditional waits, which wake one waiter at a time.
  int waiting_ ABSL_GUARDED_BY(mu_) = 0;
  bool wake_pending_ ABSL_GUARDED_BY(mu_) = false;
  bool stop_ ABSL_GUARDED_BY(mu_) = false;
  bool co_poll_ ABSL_GUARDED_BY(mu_) = false;
  // Tasks submitted so far, from any thread (claimed ones too).
  uint64_t submits_ ABSL_GUARDED_BY(mu_) = 0;
  uint64_t copoll_kicks_ ABSL_GUARDED_BY(mu_) = 0;
  // set_copoll_timeout_hook_for_test's; a co-poller copies the pointer
  // before it leaves mu_.
  std::shared_ptr<std::function<void()>> copoll_timeout_hook_
      ABSL_GUARDED_BY(mu_);
  // The loop the co-polling worker polls (null: none does).
  transport::EventLoop* copoll_loop_ ABSL_GUARDED_BY(mu_) = nullptr;
  // Set to end the co-poll (a task queued, Shutdown).
  std::atomic<bool> copoll_kick_{false};
};

}  // namespace internal
}  // namespace rpc

#endif  // RPC_INTERNAL_WORKER_POOL_H_
