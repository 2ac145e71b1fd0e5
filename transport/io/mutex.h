#ifndef TRANSPORT_IO_MUTEX_H_
#define TRANSPORT_IO_MUTEX_H_

// transport::Mutex, MutexLock and CondVar: a plain mutex and condition variable
// for the per-call hot path, over std::mutex and std::condition_variable.
//
// Why not absl::Mutex: Debian's Abseil is built without NDEBUG, so every
// absl::Mutex Lock/Unlock runs its deadlock-detection bookkeeping and every
// destroyed Mutex unregisters itself from the detector (about 350
// instructions), and the library must not switch that process-wide setting off
// behind its users' backs. These wrappers cost what std::mutex costs.
//
// - The thread-safety annotations stay meaningful: Mutex is ABSL_LOCKABLE, so
//   ABSL_GUARDED_BY(mu_) and ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) work with it as
//   with absl::Mutex.
// - AssertHeld checks (in a build without NDEBUG) that the calling thread holds
//   the mutex; with NDEBUG it does nothing and the mutex keeps no owner.
// - Not recursive, no reader locks, no Await/LockWhen: wait on a CondVar in a
//   loop over the condition instead.
// - CondVar waits may wake spuriously, as absl's do: always wait in a loop.
//   Deadlines are absl::Time, converted once to the steady clock, so a wall
//   clock step neither ends a wait early nor stretches it.

#include <chrono>
#include <condition_variable>
#include <mutex>

#ifndef NDEBUG
#include <atomic>
#include <cassert>
#include <thread>
#endif

#include "absl/base/thread_annotations.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"

namespace transport {

class CondVar;

class ABSL_LOCKABLE Mutex {
 public:
  Mutex() = default;
  Mutex(const Mutex&) = delete;
  Mutex& operator=(const Mutex&) = delete;

  void Lock() ABSL_EXCLUSIVE_LOCK_FUNCTION() {
    mu_.lock();
    SetOwner();
  }
  void Unlock() ABSL_UNLOCK_FUNCTION() {
    ClearOwner();
    mu_.unlock();
  }
  // Takes the mutex if it is free; never waits.
  bool TryLock() ABSL_EXCLUSIVE_TRYLOCK_FUNCTION(true) {
    if (!mu_.try_lock()) return false;
    SetOwner();
    return true;
  }
  void AssertHeld() const ABSL_ASSERT_EXCLUSIVE_LOCK() {
#ifndef NDEBUG
    assert(owner_.load(std::memory_order_relaxed) ==
           std::this_thread::get_id());
#endif
  }

 private:
  friend class CondVar;

#ifndef NDEBUG
  void SetOwner() {
    owner_.store(std::this_thread::get_id(), std::memory_order_relaxed);
  }
  void ClearOwner() {
    owner_.store(std::thread::id(), std::memory_order_relaxed);
  }
  std::atomic<std::thread::id> owner_{};
#else
  void SetOwner() {}
  void ClearOwner() {}
#endif
  std::mutex mu_;
};

// Holds `mu` for its scope.
class ABSL_SCOPED_LOCKABLE MutexLock {
 public:
  explicit MutexLock(Mutex* mu) ABSL_EXCLUSIVE_LOCK_FUNCTION(mu) : mu_(mu) {
    mu_->Lock();
  }
  ~MutexLock() ABSL_UNLOCK_FUNCTION() { mu_->Unlock(); }
  MutexLock(const MutexLock&) = delete;
  MutexLock& operator=(const MutexLock&) = delete;

 private:
  Mutex* const mu_;
};

class CondVar {
 public:
  CondVar() = default;
  CondVar(const CondVar&) = delete;
  CondVar& operator=(const CondVar&) = delete;

  // Releases `mu` (held by the caller), waits for a Signal, SignalAll or a
  // spurious wake-up, and takes `mu` again before it returns.
  void Wait(Mutex* mu) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu) {
    std::unique_lock<std::mutex> lock(mu->mu_, std::adopt_lock);
    mu->ClearOwner();
    cv_.wait(lock);
    mu->SetOwner();
    lock.release();
  }
  // As Wait, but also returns when `deadline` has passed. Returns true if the
  // deadline passed (the caller still checks its condition: it may have become
  // true meanwhile), false on a signal or a spurious wake-up. An infinite
  // deadline waits as Wait.
  bool WaitWithDeadline(Mutex* mu, absl::Time deadline)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu) {
    if (deadline == absl::InfiniteFuture()) {
      Wait(mu);
      return false;
    }
    return WaitWithTimeout(mu, deadline - absl::Now());
  }
  // As WaitWithDeadline, with the deadline `timeout` from now.
  bool WaitWithTimeout(Mutex* mu, absl::Duration timeout)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu) {
    if (timeout == absl::InfiniteDuration()) {
      Wait(mu);
      return false;
    }
    if (timeout <= absl::ZeroDuration()) return true;
    const auto until =
        std::chrono::steady_clock::now() + absl::ToChronoNanoseconds(timeout);
    std::unique_lock<std::mutex> lock(mu->mu_, std::adopt_lock);
    mu->ClearOwner();
    const bool timed_out =
        cv_.wait_until(lock, until) == std::cv_status::timeout;
    mu->SetOwner();
    lock.release();
    return timed_out;
  }
  // Wakes one waiter / every waiter; the caller may or may not hold the mutex.
  void Signal() { cv_.notify_one(); }
  void SignalAll() { cv_.notify_all(); }

 private:
  std::condition_variable cv_;
};

}  // namespace transport

#endif  // TRANSPORT_IO_MUTEX_H_
