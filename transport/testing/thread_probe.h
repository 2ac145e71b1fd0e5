// What the process's threads are doing, read from /proc/self/task, for tests
// that must wait until a thread sleeps in epoll_wait before they make the
// event it should get (a co-poller, a loop thread), or that count threads.
//
// /proc/self/task/TID/syscall is missing on kernels built without
// CONFIG_HAVE_ARCH_TRACEHOOK and unreadable in some containers (gVisor,
// ptrace restrictions): a test that needs it checks ThreadSyscallReadable()
// first and skips, instead of failing or waiting out its bound:
//
//   if (!transport::testing::ThreadSyscallReadable()) {
//     GTEST_SKIP() << transport::testing::kNoThreadSyscall;
//   }
//   ASSERT_TRUE(transport::testing::WaitAsleepInEpoll(loop_tid));
//
// ThreadNames and ThreadCount return nullopt / -1 where /proc/self/task
// cannot be listed; those tests skip too.

#ifndef TRANSPORT_TESTING_THREAD_PROBE_H_
#define TRANSPORT_TESTING_THREAD_PROBE_H_

#include <sys/types.h>

#include <optional>
#include <string>
#include <vector>

#include "absl/time/time.h"

namespace transport {
namespace testing {

// The skip reason for tests that need ThreadSyscallReadable().
inline constexpr char kNoThreadSyscall[] =
    "/proc/self/task/TID/syscall is missing or unreadable here";

// The calling thread's kernel id (gettid).
pid_t ThreadId();

// Whether /proc/self/task/TID/syscall can be read on this machine (checked
// once, on a thread of this process that sleeps in a known system call).
bool ThreadSyscallReadable();

// Whether thread `tid` of this process sleeps (state S) in epoll_wait,
// epoll_pwait or epoll_pwait2 (whichever this architecture has: aarch64 has
// no epoll_wait, glibc's epoll_wait is epoll_pwait there). False when the
// files cannot be read.
bool AsleepInEpoll(pid_t tid);

// Whether thread `tid` of this process sleeps (state S: blocked in any
// system call, a futex for a condition variable). False when its stat file
// cannot be read.
bool Asleep(pid_t tid);

// True once AsleepInEpoll(tid); false after `bound` (a hang, or a kernel
// without the syscall file: check ThreadSyscallReadable() first).
bool WaitAsleepInEpoll(pid_t tid, absl::Duration bound = absl::Seconds(30));

// The names (/proc/self/task/TID/comm, at most 15 characters) of the
// process's threads now; nullopt when /proc/self/task cannot be listed.
std::optional<std::vector<std::string>> ThreadNames();

// The process's threads now; -1 when /proc/self/task cannot be listed.
int ThreadCount();

}  // namespace testing
}  // namespace transport

#endif  // TRANSPORT_TESTING_THREAD_PROBE_H_
