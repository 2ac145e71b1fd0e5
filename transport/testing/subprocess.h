// Runs a peer program for interop tests (openssl s_server / s_client, later
// nghttp and friends): stdin is a pipe, stdout and stderr go to one pipe
// that the test reads. Every wait is bounded; the destructor kills the
// process (SIGKILL) and reaps it. One thread at a time.

#ifndef TRANSPORT_TESTING_SUBPROCESS_H_
#define TRANSPORT_TESTING_SUBPROCESS_H_

#include <sys/types.h>

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"

namespace transport {
namespace testing {

class Subprocess {
 public:
  // argv[0] is the program's path. SIGPIPE is ignored in this process from
  // now on, so writing to a peer that exited is an error, not a crash.
  static absl::StatusOr<std::unique_ptr<Subprocess>> Start(
      const std::vector<std::string>& argv);
  ~Subprocess();

  Subprocess(const Subprocess&) = delete;
  Subprocess& operator=(const Subprocess&) = delete;

  // Writes all of `data` to the child's stdin.
  absl::Status WriteStdin(std::string_view data);
  void CloseStdin();

  // The output pipe (non-blocking), e.g. to watch it on an EventLoop, and
  // the call that appends whatever is readable now to output().
  int output_fd() const { return out_fd_; }
  void ReadAvailable();
  const std::string& output() const { return output_; }

  // Reads until output() contains `needle`; false on timeout or EOF without
  // it.
  bool WaitForOutput(std::string_view needle, absl::Duration timeout);
  // Waits for the exit: the exit code (128 + signal when killed), or
  // kDeadlineExceeded.
  absl::StatusOr<int> WaitForExit(absl::Duration timeout);
  pid_t pid() const { return pid_; }

 private:
  Subprocess() = default;
  bool Reap(int options);

  pid_t pid_ = -1;
  int pidfd_ = -1;
  int in_fd_ = -1;
  int out_fd_ = -1;
  bool exited_ = false;
  int exit_code_ = -1;
  std::string output_;
};

// The openssl binary from @openssl//:openssl in the runfiles, else
// /usr/bin/openssl; empty when neither exists.
std::string OpenSslBinary();

// A fresh directory for files a peer reads (under $TEST_TMPDIR).
std::string TempDir();

// The exit code of `child` (a process this one forked); -1 when it did not
// exit normally (a signal) or not within `timeout` (it is killed, SIGKILL,
// and reaped).
int WaitForChild(pid_t child, absl::Duration timeout);

}  // namespace testing
}  // namespace transport

#endif  // TRANSPORT_TESTING_SUBPROCESS_H_
