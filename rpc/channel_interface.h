// rpc::ChannelInterface: what generated stubs need of a channel, in grpc++'s
// shape (grpc::ChannelInterface). rpc::Channel (rpc/channel.h) is the real
// one; stubs take any ChannelInterface, so a std::shared_ptr<Channel> is
// passed as it is:
//
//   std::shared_ptr<rpc::ChannelInterface> channel =
//       rpc::CreateChannel("localhost:50051",
//       rpc::InsecureChannelCredentials());
//   auto stub = helloworld::Greeter::NewStub(channel);
//
// Public: the connectivity state (GetState, WaitForStateChange,
// WaitForConnected), any thread. Private: the hook the library starts calls
// through (CreateCall), reached only by the call classes of
// rpc/client_stream.h. It is the seam for channels that are not a connection:
// a channel that intercepts calls derives from this class, overrides the hook
// and forwards to the channel it wraps (CreateCallOn); a mock channel for
// tests of generated stubs will override it the same way once calls have an
// interface of their own (the hook returns the library's call type today).

#ifndef RPC_CHANNEL_INTERFACE_H_
#define RPC_CHANNEL_INTERFACE_H_

#include <chrono>
#include <memory>
#include <string>

#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "rpc/connectivity_state.h"

namespace rpc {

class ClientContext;
namespace internal {
class ClientCall;
class ClientCallBase;
}  // namespace internal

class ChannelInterface {
 public:
  virtual ~ChannelInterface() = default;

  // The current state; with `try_to_connect`, an IDLE channel starts
  // connecting (the state returned is still IDLE).
  virtual ConnectivityState GetState(bool try_to_connect) = 0;

  // Blocks until the state differs from `last_observed` (true) or `deadline`
  // passed (false).
  bool WaitForStateChange(ConnectivityState last_observed,
                          absl::Time deadline) {
    return WaitForStateChangeImpl(last_observed, deadline);
  }
  template <typename Clock, typename Duration>
  bool WaitForStateChange(ConnectivityState last_observed,
                          const std::chrono::time_point<Clock, Duration>& t) {
    return WaitForStateChange(last_observed,
                              absl::Now() + absl::FromChrono(t - Clock::now()));
  }

  // Connects if needed and blocks until READY (true), or `deadline` passed or
  // the channel is SHUTDOWN (false).
  bool WaitForConnected(absl::Time deadline) {
    for (;;) {
      const ConnectivityState state = GetState(/*try_to_connect=*/true);
      if (state == ConnectivityState::kReady) return true;
      if (state == ConnectivityState::kShutdown) return false;
      if (!WaitForStateChange(state, deadline)) return false;
    }
  }
  template <typename Clock, typename Duration>
  bool WaitForConnected(const std::chrono::time_point<Clock, Duration>& t) {
    return WaitForConnected(absl::Now() + absl::FromChrono(t - Clock::now()));
  }

 protected:
  ChannelInterface() = default;
  ChannelInterface(const ChannelInterface&) = delete;
  ChannelInterface& operator=(const ChannelInterface&) = delete;

  // For channels that wrap another one (interceptors): `channel`'s
  // CreateCall hook.
  static std::shared_ptr<internal::ClientCall> CreateCallOn(
      ChannelInterface* channel, const std::string& method,
      ClientContext* context) {
    return channel->CreateCall(method, context);
  }

 private:
  // The library's (rpc/client_stream.h's call classes).
  friend class internal::ClientCallBase;

  virtual bool WaitForStateChangeImpl(ConnectivityState last_observed,
                                      absl::Time deadline) = 0;
  // A call of `method` ("/pkg.Service/Method") with `context`'s deadline,
  // metadata and encoding, not yet started (the caller starts it). Never
  // null: a channel that cannot make the call returns one that fails.
  virtual std::shared_ptr<internal::ClientCall> CreateCall(
      const std::string& method, ClientContext* context) = 0;
};

}  // namespace rpc

#endif  // RPC_CHANNEL_INTERFACE_H_
