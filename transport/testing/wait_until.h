// WaitUntil: polls a condition until it holds, with an overall bound that
// only a hang reaches. For tests that wait on an event (a handler entered, a
// query arrived) instead of sleeping for a time they hope is enough.
//
//   ASSERT_TRUE(transport::testing::WaitUntil([&] { return entered == 4; }));
//
// ProcessCpu: the CPU time the process used so far (user + system, all
// threads), for tests that bound the CPU spent over an interval (a loop that
// must sleep when idle) instead of a time. (ThreadCount: thread_probe.h.)
// OpenFdCount: the process's open fds now (/proc/self/fd), for tests that
// see one closed.

#ifndef TRANSPORT_TESTING_WAIT_UNTIL_H_
#define TRANSPORT_TESTING_WAIT_UNTIL_H_

#include <dirent.h>
#include <sys/resource.h>

#include <functional>

#include "absl/time/clock.h"
#include "absl/time/time.h"

namespace transport {
namespace testing {

// True once `done()` returned true; false when `timeout` passed first.
// `done` is called from this thread every millisecond or so.
inline bool WaitUntil(const std::function<bool()>& done,
                      absl::Duration timeout = absl::Seconds(20)) {
  const absl::Time limit = absl::Now() + timeout;
  while (!done()) {
    if (absl::Now() > limit) return false;
    absl::SleepFor(absl::Milliseconds(1));
  }
  return true;
}

inline absl::Duration ProcessCpu() {
  rusage ru{};
  getrusage(RUSAGE_SELF, &ru);
  return absl::DurationFromTimeval(ru.ru_utime) +
         absl::DurationFromTimeval(ru.ru_stime);
}

// -1 where /proc/self/fd cannot be listed. The directory's own fd, open
// while it is read, is not counted.
inline int OpenFdCount() {
  DIR* dir = opendir("/proc/self/fd");
  if (dir == nullptr) return -1;
  int n = 0;
  while (dirent* e = readdir(dir)) {
    if (e->d_name[0] != '.') ++n;
  }
  closedir(dir);
  return n - 1;
}

}  // namespace testing
}  // namespace transport

#endif  // TRANSPORT_TESTING_WAIT_UNTIL_H_
