#include "transport/testing/subprocess.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "transport/io/absl_view.h"

extern char** environ;

namespace transport {
namespace testing {
namespace {

int PollMs(std::chrono::steady_clock::time_point deadline) {
  const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
      deadline - std::chrono::steady_clock::now());
  return left.count() < 0 ? 0 : static_cast<int>(left.count()) + 1;
}

}  // namespace

absl::StatusOr<std::unique_ptr<Subprocess>> Subprocess::Start(
    const std::vector<std::string>& argv) {
  if (argv.empty()) return absl::InvalidArgumentError("empty argv");
  signal(SIGPIPE, SIG_IGN);
  int in[2], out[2];
  if (pipe2(in, O_CLOEXEC) != 0) return absl::ErrnoToStatus(errno, "pipe2");
  if (pipe2(out, O_CLOEXEC) != 0) {
    close(in[0]);
    close(in[1]);
    return absl::ErrnoToStatus(errno, "pipe2");
  }
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, in[0], 0);
  posix_spawn_file_actions_adddup2(&actions, out[1], 1);
  posix_spawn_file_actions_adddup2(&actions, out[1], 2);
  std::vector<char*> args;
  for (const std::string& a : argv)
    args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  pid_t pid;
  const int err = posix_spawn(&pid, argv[0].c_str(), &actions, nullptr,
                              args.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  close(in[0]);
  close(out[1]);
  if (err != 0) {
    close(in[1]);
    close(out[0]);
    return absl::ErrnoToStatus(err, absl::StrCat("spawn ", argv[0]));
  }
  std::unique_ptr<Subprocess> p(new Subprocess());
  p->pid_ = pid;
  p->in_fd_ = in[1];
  p->out_fd_ = out[0];
  fcntl(p->out_fd_, F_SETFL, fcntl(p->out_fd_, F_GETFL) | O_NONBLOCK);
  p->pidfd_ = static_cast<int>(syscall(SYS_pidfd_open, pid, 0));
  return p;
}

Subprocess::~Subprocess() {
  if (!exited_ && pid_ > 0) {
    kill(pid_, SIGKILL);
    Reap(0);  // SIGKILL cannot be ignored: this returns promptly
  }
  if (in_fd_ >= 0) close(in_fd_);
  if (out_fd_ >= 0) close(out_fd_);
  if (pidfd_ >= 0) close(pidfd_);
}

absl::Status Subprocess::WriteStdin(std::string_view data) {
  while (!data.empty()) {
    const ssize_t n = write(in_fd_, data.data(), data.size());
    if (n < 0) {
      if (errno == EINTR) continue;
      return absl::ErrnoToStatus(errno, "write to child stdin");
    }
    data.remove_prefix(static_cast<size_t>(n));
  }
  return absl::OkStatus();
}

void Subprocess::CloseStdin() {
  if (in_fd_ >= 0) close(in_fd_);
  in_fd_ = -1;
}

void Subprocess::ReadAvailable() {
  char buf[4096];
  for (;;) {
    const ssize_t n = read(out_fd_, buf, sizeof(buf));
    if (n > 0) {
      output_.append(buf, static_cast<size_t>(n));
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    return;  // EAGAIN or EOF
  }
}

bool Subprocess::WaitForOutput(std::string_view needle,
                               absl::Duration timeout) {
  const auto deadline =
      std::chrono::steady_clock::now() + absl::ToChronoMilliseconds(timeout);
  for (;;) {
    ReadAvailable();
    if (absl::StrContains(output_, ToAbsl(needle))) return true;
    if (std::chrono::steady_clock::now() >= deadline) return false;
    pollfd p{out_fd_, POLLIN, 0};
    const int r = poll(&p, 1, PollMs(deadline));
    if (r > 0 && (p.revents & POLLIN) == 0) {
      // Hang-up and nothing left to read: the child closed its output.
      ReadAvailable();
      return absl::StrContains(output_, ToAbsl(needle));
    }
  }
}

bool Subprocess::Reap(int options) {
  int status = 0;
  pid_t r;
  do {
    r = waitpid(pid_, &status, options);
  } while (r < 0 && errno == EINTR);
  if (r != pid_) return false;
  exited_ = true;
  exit_code_ = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  return true;
}

absl::StatusOr<int> Subprocess::WaitForExit(absl::Duration timeout) {
  const auto deadline =
      std::chrono::steady_clock::now() + absl::ToChronoMilliseconds(timeout);
  while (!exited_) {
    if (Reap(WNOHANG)) break;
    if (std::chrono::steady_clock::now() >= deadline) {
      return absl::DeadlineExceededError("child still running");
    }
    // The pidfd turns readable at exit; keep draining output meanwhile so a
    // chatty child never blocks on a full pipe.
    pollfd p[2] = {{pidfd_, POLLIN, 0}, {out_fd_, POLLIN, 0}};
    poll(p, pidfd_ >= 0 ? 2 : 1, std::min(PollMs(deadline), 100));
    ReadAvailable();
  }
  ReadAvailable();
  return exit_code_;
}

std::string OpenSslBinary() {
  std::vector<std::string> candidates;
  if (const char* srcdir = getenv("TEST_SRCDIR")) {
    candidates.push_back(absl::StrCat(srcdir, "/openssl/openssl"));
    if (const char* ws = getenv("TEST_WORKSPACE")) {
      candidates.push_back(
          absl::StrCat(srcdir, "/", ws, "/external/openssl/openssl"));
    }
  }
  candidates.push_back("/usr/bin/openssl");
  for (const std::string& c : candidates) {
    if (access(c.c_str(), X_OK) == 0) return c;
  }
  return std::string();
}

std::string TempDir() {
  const char* base = getenv("TEST_TMPDIR");
  std::string tmpl =
      absl::StrCat(base != nullptr ? base : "/tmp", "/h2rpc_XXXXXX");
  if (mkdtemp(tmpl.data()) == nullptr) return std::string();
  return tmpl;
}

int WaitForChild(pid_t child, absl::Duration timeout) {
  int status = 0;
  pid_t waited = 0;
  const absl::Time deadline = absl::Now() + timeout;
  for (;;) {
    waited = waitpid(child, &status, WNOHANG);
    if (waited < 0 && errno == EINTR) continue;
    if (waited != 0 || absl::Now() >= deadline) break;
    absl::SleepFor(absl::Milliseconds(10));
  }
  if (waited == 0) {
    kill(child, SIGKILL);
    while (waitpid(child, &status, 0) < 0 && errno == EINTR) {
    }
    return -1;
  }
  // Another waitpid error (ECHILD: not a child of this process): not ours
  // to kill.
  if (waited != child || !WIFEXITED(status)) return -1;
  return WEXITSTATUS(status);
}

}  // namespace testing
}  // namespace transport
