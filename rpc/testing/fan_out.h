// Test helpers for many calls at once on one channel: server-streaming
// calls made through the internal call API (no thread per call), and a gate
// that counts the handlers running at once and holds them until released.
// Every wait is bounded (30 s, 60 s for a call).

#ifndef RPC_TESTING_FAN_OUT_H_
#define RPC_TESTING_FAN_OUT_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "absl/time/time.h"
#include "rpc/channel.h"
#include "rpc/internal/client_call.h"
#include "rpc/testdata/test_service.pb.h"

namespace rpc {
namespace testing {

// Handlers call Enter on entry and Leave on return; Hold blocks until
// Release (or 30 s).
class HandlerGate {
 public:
  void Enter();
  void Leave();
  void Hold();
  void Release();
  // Waits until `n` handlers entered in all; false after 30 s.
  bool WaitStarted(int n);
  int started();
  int max_active();

 private:
  absl::Notification released_;
  absl::Mutex mu_;
  absl::CondVar cv_;
  int started_ ABSL_GUARDED_BY(mu_) = 0;
  int active_ ABSL_GUARDED_BY(mu_) = 0;
  int max_active_ ABSL_GUARDED_BY(mu_) = 0;
};

// One /rpc.test.EchoService/ServerStream call; `done` once it has its
// status.
struct StreamCall {
  std::shared_ptr<internal::ClientCall> call;
  absl::Notification done;
};

std::unique_ptr<StreamCall> StartServerStream(Channel* channel,
                                              const test::EchoRequest& req,
                                              absl::Time deadline);

// Returns once the channel's loop has started every call made on it before
// (calls start in order: a call whose deadline passed ends at its start).
// False after 30 s.
bool WaitCallsStarted(Channel* channel);

// Waits for every call (60 s each) and returns how many ended OK with
// `messages` messages; *first_error describes the first that did not.
int CountSucceeded(const std::vector<std::unique_ptr<StreamCall>>& calls,
                   int messages, std::string* first_error);

}  // namespace testing
}  // namespace rpc

#endif  // RPC_TESTING_FAN_OUT_H_
