#include "transport/testing/thread_probe.h"

#include <dirent.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "absl/synchronization/notification.h"
#include "absl/time/clock.h"

namespace transport {
namespace testing {
namespace {

// The first line of `path` (at most `max` bytes), or "" when it cannot be
// read.
std::string FirstLine(const std::string& path, int max) {
  std::string line;
  if (FILE* f = std::fopen(path.c_str(), "r")) {
    std::vector<char> buf(max + 1, '\0');
    if (std::fgets(buf.data(), max + 1, f) != nullptr) line = buf.data();
    std::fclose(f);
  }
  return line;
}

std::string TaskDir(pid_t tid) {
  return "/proc/self/task/" + std::to_string(tid);
}

bool IsEpollWaitNumber(long nr) {
#ifdef SYS_epoll_wait
  if (nr == SYS_epoll_wait) return true;
#endif
#ifdef SYS_epoll_pwait
  if (nr == SYS_epoll_pwait) return true;
#endif
#ifdef SYS_epoll_pwait2
  if (nr == SYS_epoll_pwait2) return true;
#endif
  return false;
}

bool ProbeThreadSyscall() {
  // A thread blocked in read() on a pipe: its syscall file must name a
  // number (the file says "running" for a thread on a CPU, and nothing, or
  // is absent, where the kernel does not provide it).
  int fds[2];
  if (pipe(fds) != 0) return false;
  pid_t tid = 0;
  absl::Notification started;
  std::thread reader([&] {
    tid = ThreadId();
    started.Notify();
    char c;
    (void)read(fds[0], &c, 1);
  });
  started.WaitForNotification();
  bool readable = false;
  const absl::Time limit = absl::Now() + absl::Seconds(5);
  while (!readable && absl::Now() < limit) {
    const std::string line = FirstLine(TaskDir(tid) + "/syscall", 64);
    readable = !line.empty() && line[0] >= '0' && line[0] <= '9' &&
               std::atol(line.c_str()) == SYS_read;
    if (!readable) absl::SleepFor(absl::Milliseconds(1));
  }
  (void)write(fds[1], "x", 1);
  reader.join();
  close(fds[0]);
  close(fds[1]);
  return readable;
}

// Calls `f` with each thread id of /proc/self/task; false when the
// directory cannot be listed.
bool ForEachTask(const std::function<void(const char*)>& f) {
  DIR* dir = opendir("/proc/self/task");
  if (dir == nullptr) return false;
  while (dirent* e = readdir(dir)) {
    if (e->d_name[0] != '.') f(e->d_name);
  }
  closedir(dir);
  return true;
}

}  // namespace

pid_t ThreadId() { return static_cast<pid_t>(syscall(SYS_gettid)); }

bool ThreadSyscallReadable() {
  static const bool readable = ProbeThreadSyscall();
  return readable;
}

bool Asleep(pid_t tid) {
  const std::string stat = FirstLine(TaskDir(tid) + "/stat", 512);
  // The state follows the name, which is in parentheses and may hold any
  // character.
  const size_t paren = stat.rfind(')');
  return paren != std::string::npos && paren + 2 < stat.size() &&
         stat[paren + 2] == 'S';
}

bool AsleepInEpoll(pid_t tid) {
  const std::string syscall_line = FirstLine(TaskDir(tid) + "/syscall", 64);
  if (syscall_line.empty() || syscall_line[0] < '0' || syscall_line[0] > '9') {
    return false;
  }
  return IsEpollWaitNumber(std::atol(syscall_line.c_str())) && Asleep(tid);
}

bool WaitAsleepInEpoll(pid_t tid, absl::Duration bound) {
  const absl::Time limit = absl::Now() + bound;
  while (!AsleepInEpoll(tid)) {
    if (absl::Now() > limit) return false;
    absl::SleepFor(absl::Milliseconds(1));
  }
  return true;
}

std::optional<std::vector<std::string>> ThreadNames() {
  std::vector<std::string> names;
  if (!ForEachTask([&](const char* tid) {
        std::ifstream comm(std::string("/proc/self/task/") + tid + "/comm");
        std::string name;
        std::getline(comm, name);
        names.push_back(std::move(name));
      })) {
    return std::nullopt;
  }
  return names;
}

int ThreadCount() {
  int n = 0;
  return ForEachTask([&](const char*) { ++n; }) ? n : -1;
}

}  // namespace testing
}  // namespace transport
