// ChannelImpl: what rpc::Channel (rpc/channel.h) is, behind its public
// face: the target, the resolver, the subchannels and their load balancing,
// the queue of calls waiting for a connection, and the published
// connectivity state. rpc/channel.h documents the behaviour; this file the
// machinery.
//
// Threading: one loop (of a shared group, or a busy-poll channel's own
// EventLoopThread; AcquireChannelLoop) owns everything named Loop*; GetState,
// WaitForStateChange and CreateCall may be called from any thread. rpc::Channel
// owns its ChannelImpl; ClientCall points back to it (LoopStartCall for a
// transparent retry, authority/user_agent/scheme for its request headers).

#ifndef RPC_INTERNAL_CHANNEL_IMPL_H_
#define RPC_INTERNAL_CHANNEL_IMPL_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "rpc/channel.h"
#include "rpc/compression/encoding.h"
#include "rpc/connectivity_state.h"
#include "rpc/credentials.h"
#include "rpc/internal/backoff.h"
#include "rpc/internal/client_call.h"
#include "rpc/internal/client_transport.h"
#include "rpc/internal/subchannel.h"
#include "rpc/internal/target.h"
#include "rpc/wire/metadata.h"
#include "rpc/wire/status.h"
#include "transport/io/dns_resolver.h"
#include "transport/io/event_loop.h"
#include "transport/io/socket.h"

namespace rpc {
namespace internal {

class ChannelTestPeer;

// What rpc::LoopGroup is.
class LoopGroupImpl {
 public:
  explicit LoopGroupImpl(std::unique_ptr<transport::EventLoopGroup> group)
      : group_(std::move(group)) {}
  transport::EventLoopGroup& group() { return *group_; }

 private:
  std::unique_ptr<transport::EventLoopGroup> group_;
};

struct LoopGroupAccess {
  static std::shared_ptr<LoopGroup> Make(
      std::unique_ptr<transport::EventLoopGroup> group) {
    return std::shared_ptr<LoopGroup>(
        new LoopGroup(std::make_unique<LoopGroupImpl>(std::move(group))));
  }
  static transport::EventLoopGroup& Group(LoopGroup& g) {
    return g.impl_->group();
  }
};

// The process-wide group (one loop per CPU), started by its first caller and
// never destroyed; an error (and a later call tries again) when it could not
// start. First callers racing may each start one: one is kept, the others
// stopped before they return.
absl::StatusOr<std::shared_ptr<LoopGroup>> DefaultLoopGroup();

// The loop a channel runs on, and what keeps it alive.
struct ChannelLoop {
  transport::EventLoop* loop = nullptr;
  // A busy-poll channel's own loop thread (stopped with the channel)...
  std::unique_ptr<transport::EventLoopThread> own;
  // ... or the group whose loop it shares.
  std::shared_ptr<LoopGroup> group;
};
// args.busy_poll: a thread of its own; else the next loop of args.loop_group
// or of the DefaultLoopGroup.
absl::StatusOr<ChannelLoop> AcquireChannelLoop(const ChannelArguments& args);

class ChannelImpl final : private Subchannel::Owner {
 public:
  // `creds` may be null, and `loop` an error: the channel then fails every
  // call (INVALID_ARGUMENT, UNAVAILABLE) and stays in TRANSIENT_FAILURE, as
  // one with a bad target does.
  ChannelImpl(std::string target, std::shared_ptr<ChannelCredentials> creds,
              const ChannelArguments& args, absl::StatusOr<ChannelLoop> loop);
  // Closes the channel (LoopClose, unless CloseOnLoop did) and waits until
  // the loop iteration that closed it has ended, so that work it deferred
  // (a call retrying) still finds it; stops a busy-poll channel's thread.
  ~ChannelImpl() override;
  ChannelImpl(const ChannelImpl&) = delete;
  ChannelImpl& operator=(const ChannelImpl&) = delete;

  const std::string& target() const { return target_; }
  // Null when the channel has no loop.
  transport::EventLoop* loop() const { return loop_; }
  // Loop thread: fails the calls, closes the connections, SHUTDOWN; the
  // destructor then only waits for nothing. CreateChannel's deleter calls it
  // from a loop task when the last reference goes away on the loop thread,
  // and frees the channel from a later one.
  void CloseOnLoop() { LoopClose(); }

  // ---- Connectivity (any thread) ----
  // The current state; with `try_to_connect`, an IDLE channel starts
  // connecting (the state returned is still IDLE).
  ConnectivityState GetState(bool try_to_connect);
  // Blocks until the state differs from `last_observed` (true) or `deadline`
  // passed (false).
  bool WaitForStateChange(ConnectivityState last_observed, absl::Time deadline);

  // For rpc::Channel (its ChannelInterface hook) and tests: a call of `path`
  // ("/pkg.Service/Method"), not yet started. `encoding`: the request encoding,
  // or nullopt for the channel's default.
  std::shared_ptr<ClientCall> CreateCall(
      const std::string& path, absl::Time deadline, const Metadata& metadata,
      std::optional<compression::Encoding> encoding = std::nullopt);

  // ---- Loop thread, for ClientCall ----
  // Starts the call on a READY connection the policy picks, or queues it
  // (connecting first if needed), or fails it (fail-fast in
  // TRANSIENT_FAILURE).
  void LoopStartCall(std::shared_ptr<ClientCall> call);
  const std::string& authority() const { return parsed_.authority; }
  const std::string& user_agent() const { return user_agent_; }
  // "https" with TLS credentials, else "http".
  const char* scheme() const { return creds_->secure() ? "https" : "http"; }

 private:
  // Starts resolving/connecting when IDLE.
  void LoopExitIdle();
  // Resolves the target (rate-limited by dns_min_time_between_resolutions
  // unless `now`).
  void LoopResolve(bool now);
  void LoopOnResolved(
      absl::StatusOr<std::vector<transport::SocketAddress>> addresses);
  // LoopOnResolved's work, before the state is recomputed.
  void LoopHandleResolution(
      absl::StatusOr<std::vector<transport::SocketAddress>> addresses);
  // ~ChannelImpl's work on the loop thread: fails the calls, closes the
  // connections, SHUTDOWN. Idempotent.
  void LoopClose();
  // Load balancing: the connection for a call, or nullptr.
  ClientTransport* LoopPick();
  // pick_first: connects subchannels_[i] (or the next one that is not
  // failing).
  // pick_first chose `sc`: the other subchannels' connections close.
  void LoopPickFirstSelect(Subchannel* sc);
  void LoopPickFirstFrom(size_t i);
  // Recomputes the channel's state from the subchannels', then starts or
  // fails the queued calls.
  void LoopUpdateState();
  void LoopSetState(ConnectivityState state);
  void LoopDrainQueue();
  Status LoopUnavailable() const;
  // ---- Subchannel::Owner ----
  void OnSubchannelStateChange(Subchannel* subchannel) override;
  ClientTransportOptions SubchannelTransportOptions() override;
  void OnSubchannelTooManyPings() override;
  void OnSubchannelClosed(Subchannel* subchannel) override;
  // TRANSIENT_FAILURE: after a failed pass, or a failed resolution.
  bool LoopFailing() const { return transient_failure_ || resolver_failure_; }

  const std::string target_;
  const std::shared_ptr<ChannelCredentials> creds_;
  const ChannelArguments args_;
  const std::string user_agent_;
  const bool round_robin_;
  Target parsed_;
  // Not OK: the channel can never work (bad target, credentials, policy, no
  // loop thread); its calls fail with bad_channel_code_ and this message.
  absl::Status target_status_;
  StatusCode bad_channel_code_ = StatusCode::UNAVAILABLE;
  ClientCallOptions call_options_;
  Subchannel::Options subchannel_options_;
  ChannelLoop channel_loop_;
  transport::EventLoop* const loop_;

  // Published state.
  mutable absl::Mutex state_mu_;
  absl::CondVar state_cv_;
  ConnectivityState state_ ABSL_GUARDED_BY(state_mu_) =
      ConnectivityState::kIdle;

  // Loop only.
  bool closing_ = false;
  bool idle_ = true;                // Nothing wanted until a call comes.
  bool transient_failure_ = false;  // Sticky until a subchannel is READY.
  // The last resolution failed and there is no subchannel: cleared by the
  // next successful one.
  bool resolver_failure_ = false;
  // Inside LoopOnResolved: re-resolution is never requested from there.
  bool handling_resolution_ = false;
  absl::Status last_error_;
  std::unique_ptr<transport::DnsResolver> dns_;
  bool resolving_ = false;
  bool resolved_once_ = false;
  absl::Time last_resolution_ = absl::InfinitePast();
  transport::EventLoop::TimerId resolve_timer_ =
      transport::EventLoop::kInvalidTimer;
  std::unique_ptr<Backoff> resolve_backoff_;
  std::vector<std::unique_ptr<Subchannel>> subchannels_;
  // Subchannels whose address went away, kept until their connections close.
  std::vector<std::unique_ptr<Subchannel>> retired_;
  Subchannel* selected_ = nullptr;  // pick_first's.
  size_t pick_first_index_ = 0;
  bool pick_first_trying_ = false;
  size_t round_robin_next_ = 0;
  absl::Duration keepalive_time_;
  // Tests only (ChannelTestPeer), before the first call: the
  // first stream id of new connections (0: the protocol's).
  uint32_t first_stream_id_for_test_ = 0;
  friend class ChannelTestPeer;  // Defined by rpc/channel_lb_test.cc.
  std::vector<std::shared_ptr<ClientCall>> queue_;
  // Keeps loop callbacks from touching a destroyed channel.
  std::shared_ptr<ChannelImpl*> self_;
};

// The library's way in to a public object's implementation (rpc::Channel
// keeps it private; this struct is its friend).
struct ChannelAccess {
  static ChannelImpl* Impl(Channel* channel) { return channel->impl_.get(); }
};

}  // namespace internal
}  // namespace rpc

#endif  // RPC_INTERNAL_CHANNEL_IMPL_H_
