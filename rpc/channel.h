// rpc::Channel: a virtual connection to a service, in grpc++'s shape. Create
// with CreateChannel; give it to generated stubs.
//
//   std::shared_ptr<rpc::Channel> channel =
//       rpc::CreateChannel("dns:///svc.example.com:50051",
//       rpc::InsecureChannelCredentials());
//   auto stub = helloworld::Greeter::NewStub(channel);
//
// Targets (gRPC's naming.md; internal/target.h):
//   dns:///host:port            A and AAAA records, asked of the system's
//                               DNS configuration (/etc/hosts first)
//   dns://AUTHORITY/host:port   ... asked of the DNS server AUTHORITY
//   host:port                   the same as dns:///host:port
//   ipv4:addr:port,addr:port    fixed IPv4 addresses
//   ipv6:[addr]:port,...        fixed IPv6 addresses
//   unix:path, unix:///abs/path a unix-domain socket
// The port defaults to 443. Calls carry the target's host[:port] as written
// as :authority (the first address for ipv4:/ipv6: lists, "localhost" for
// unix:); TLS verifies the target's host name (or ssl_target_name_override),
// never a resolved IP.
//
// Resolution: asynchronous (c-ares on the channel's loop). The name is
// resolved again when a connection drops or an attempt fails (round_robin:
// any subchannel; pick_first: once a pass over every address failed), at
// most once per dns_min_time_between_resolutions (30 s; at least 1 ms, and
// never requested from the handling of a result, so 0 does not spin the
// loop, though real names want seconds). A failed resolution puts the channel
// in TRANSIENT_FAILURE with the DNS error (fail-fast calls fail with
// UNAVAILABLE and that message) and is retried with backoff; the next
// successful one clears it (CONNECTING while the first attempt runs).
//
// Load balancing, one subchannel (connection) per resolved address:
//   pick_first (default)  tries the addresses in order and sticks to the
//                         first that connects; when it is lost the channel
//                         goes IDLE, re-resolves, and the next call connects
//                         again from the first address.
//   round_robin           connects to every address and spreads the calls
//                         over the READY ones, one after the other.
// Choose with ChannelArguments::SetLoadBalancingPolicyName("round_robin").
//
// States (rpc/connectivity_state.h; connectivity-semantics-and-api.md):
// IDLE until the first call or GetState(true) (lazy connect), CONNECTING,
// READY, TRANSIENT_FAILURE (every address failed; stays so until one
// connects), SHUTDOWN. GetState, WaitForStateChange and WaitForConnected
// watch them from any thread.
//
// Reconnect backoff per subchannel (connection-backoff.md): attempts start
// initial_backoff (1 s) apart, times backoff_multiplier (1.6) per failure
// with jitter (0.2), at most max_backoff (120 s); an attempt may take
// max(min_connect_timeout (20 s), its backoff).
//
// Calls (wait-for-ready.md): fail-fast calls (the default) fail at once with
// UNAVAILABLE while the channel is in TRANSIENT_FAILURE, and wait while it is
// CONNECTING. Wait-for-ready calls (ClientContext::set_wait_for_ready(true))
// wait in every state until a connection is READY or their deadline passes
// (DEADLINE_EXCEEDED). All calls on one subchannel share its HTTP/2
// connection; a GOAWAY retires a connection (its calls finish) and new calls
// go elsewhere. Calls beyond the server's MAX_CONCURRENT_STREAMS wait for a
// stream until their deadline; a call the server refused (REFUSED_STREAM,
// GOAWAY) is retried transparently (internal/client_call.h).
//
// Keepalive (ChannelArguments::keepalive_*) applies to every connection; a
// GOAWAY "too_many_pings" doubles the channel's keepalive time for later
// connections.
//
// Threading (rpc/README.md, "Threading model"): a channel runs on one I/O
// loop thread, which owns its subchannels and connections; channels share
// loops. By default every channel of the process runs on a loop of one
// process-wide LoopGroup (one loop per CPU, at least one, started with the
// first channel and kept until the process exits), so 1,000 channels start
// no more threads than one. ChannelArguments::SetLoopGroup gives channels a
// group of the caller's instead; a busy-poll channel (ChannelArguments::
// busy_poll) gets a loop thread of its own, so its spinning never delays
// other channels' loops. Calls may be made from any number of threads at
// once. The channel must outlive its calls (stubs and contexts keep it
// alive). Its last reference may be dropped on any thread, a loop thread
// included (an async callback): CreateChannel's deleter then closes it from a
// later loop task and frees it from the one after (a busy-poll channel's
// own loop thread is joined by a detached thread). Nothing of a destroyed
// channel runs later: its timers are cancelled, its calls failed
// (UNAVAILABLE "channel closed"), and a call retrying or starting meanwhile
// finds it closed.

#ifndef RPC_CHANNEL_H_
#define RPC_CHANNEL_H_

#include <cstddef>
#include <memory>
#include <string>
#include <utility>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "rpc/channel_interface.h"
#include "rpc/compression/codec.h"
#include "rpc/compression/encoding.h"
#include "rpc/connectivity_state.h"
#include "rpc/credentials.h"

namespace rpc {

namespace internal {
class LoopGroupImpl;
struct LoopGroupAccess;
}  // namespace internal

// A set of I/O loop threads that channels share (the file comment,
// "Threading"). The group lives as long as its last user: the caller's
// reference or a channel on it.
class LoopGroup {
 public:
  // `num_loops` threads, started now; <= 0: one per CPU (at least one).
  // Fails when a thread or its epoll instance cannot be made.
  static absl::StatusOr<std::shared_ptr<LoopGroup>> Create(int num_loops);
  // Stops and joins the threads (from a detached thread when the last
  // reference goes away on one of them).
  ~LoopGroup();
  LoopGroup(const LoopGroup&) = delete;
  LoopGroup& operator=(const LoopGroup&) = delete;

  size_t size() const;

 private:
  friend struct internal::LoopGroupAccess;
  explicit LoopGroup(std::unique_ptr<internal::LoopGroupImpl> impl);
  std::unique_ptr<internal::LoopGroupImpl> impl_;
};

// Per-channel settings (a small subset of grpc::ChannelArguments).
struct ChannelArguments {
  // -1: unlimited. Defaults: receive 4 MiB, send unlimited.
  int max_receive_message_size = 4 * 1024 * 1024;
  int max_send_message_size = -1;
  // Prepended to the user-agent.
  std::string user_agent_prefix;
  // Reconnect backoff (gRPC's connection-backoff.md, GRPC_ARG_*_BACKOFF_MS,
  // GRPC_ARG_MIN_RECONNECT_BACKOFF_MS): see the file comment. The channel
  // uses at least 1 ms for initial_backoff and max_backoff.
  absl::Duration min_connect_timeout = absl::Seconds(20);
  absl::Duration initial_backoff = absl::Seconds(1);
  double backoff_multiplier = 1.6;
  double backoff_jitter = 0.2;
  absl::Duration max_backoff = absl::Seconds(120);
  // DNS: the shortest time between two resolutions of the name
  // (GRPC_ARG_DNS_MIN_TIME_BETWEEN_RESOLUTIONS_MS); at least 1 ms is used.
  // Keep it at seconds for real names: every failed attempt may resolve.
  absl::Duration dns_min_time_between_resolutions = absl::Seconds(30);
  // "pick_first" (default) or "round_robin" (GRPC_ARG_LB_POLICY_NAME).
  std::string load_balancing_policy_name = "pick_first";
  // TLS: verify the server as this name instead of the target's host
  // (grpc's GRPC_SSL_TARGET_NAME_OVERRIDE_ARG).
  std::string ssl_target_name_override;
  // The request encoding of calls whose ClientContext sets none (identity:
  // uncompressed), and the size from which a request message is compressed
  // (smaller ones go uncompressed, flag 0).
  compression::Encoding compression_algorithm =
      compression::Encoding::kIdentity;
  size_t compression_threshold = compression::kDefaultCompressionThreshold;
  // Keepalive pings (GRPC_ARG_KEEPALIVE_TIME_MS, _TIMEOUT_MS,
  // GRPC_ARG_KEEPALIVE_PERMIT_WITHOUT_CALLS): infinite time is off.
  absl::Duration keepalive_time = absl::InfiniteDuration();
  absl::Duration keepalive_timeout = absl::Seconds(20);
  bool keepalive_permit_without_calls = false;
  // Response metadata limits (headers, and trailers, each), in RFC 9113
  // header list octets: GRPC_ARG_MAX_METADATA_SIZE (soft) and
  // GRPC_ARG_ABSOLUTE_MAX_METADATA_SIZE (hard, the
  // SETTINGS_MAX_HEADER_LIST_SIZE we advertise); -1: gRPC's defaults (8 KiB
  // and 16 KiB, one derived from the other when only one is set). Over the
  // soft limit the call fails with RESOURCE_EXHAUSTED, every time; the
  // connection goes on. See rpc/internal/metadata_limits.h.
  int max_metadata_size = -1;
  int absolute_max_metadata_size = -1;
  // Transparent retry of calls the server did not process (rpc/README.md,
  // "Streams per connection and transparent retry"): on unless
  // grpc.enable_retries is 0; a call's requests are kept for it up to
  // per_rpc_retry_buffer_size octets (grpc.per_rpc_retry_buffer_size).
  bool enable_retries = true;
  size_t per_rpc_retry_buffer_size = 256 << 10;
  // The loops the channel runs on (the file comment, "Threading"); null:
  // the process-wide group.
  std::shared_ptr<LoopGroup> loop_group;
  // Busy-poll ("h2rpc.busy_poll_us", ours: no peer has it): after work, the
  // channel's loop polls its sockets (epoll_wait with timeout 0) for up to
  // this long before it sleeps, and polls again only while calls keep
  // coming, so an idle channel sleeps. It trades CPU for latency: the loop
  // spins a whole core while calls arrive. Such a channel gets a loop thread
  // of its own (loop_group is not used), so the spinning never delays, nor
  // is paid by, other channels. Zero (the default): off.
  absl::Duration busy_poll = absl::ZeroDuration();

  void SetMaxMetadataSize(int bytes) {
    max_metadata_size = bytes < 0 ? -1 : bytes;
  }
  void SetAbsoluteMaxMetadataSize(int bytes) {
    absolute_max_metadata_size = bytes < 0 ? -1 : bytes;
  }
  void SetCompressionAlgorithm(compression::Encoding encoding) {
    compression_algorithm = encoding;
  }
  void SetCompressionThreshold(size_t bytes) { compression_threshold = bytes; }
  void SetMaxReceiveMessageSize(int size) { max_receive_message_size = size; }
  void SetMaxSendMessageSize(int size) { max_send_message_size = size; }
  void SetUserAgentPrefix(const std::string& prefix) {
    user_agent_prefix = prefix;
  }
  void SetSslTargetNameOverride(const std::string& name) {
    ssl_target_name_override = name;
  }
  void SetLoadBalancingPolicyName(const std::string& name) {
    load_balancing_policy_name = name;
  }
  void SetLoopGroup(std::shared_ptr<LoopGroup> group) {
    loop_group = std::move(group);
  }

  // gRPC's channel argument names, for code written against grpc++
  // (args.SetInt(GRPC_ARG_KEEPALIVE_TIME_MS, 10000) is
  // args.SetInt("grpc.keepalive_time_ms", 10000)). Integers:
  // grpc.keepalive_time_ms (INT_MAX: off), grpc.keepalive_timeout_ms,
  // grpc.keepalive_permit_without_calls, grpc.initial_reconnect_backoff_ms,
  // grpc.max_reconnect_backoff_ms, grpc.min_reconnect_backoff_ms (the
  // minimum connect timeout), grpc.dns_min_time_between_resolutions_ms,
  // grpc.max_receive_message_length, grpc.max_send_message_length,
  // grpc.max_metadata_size, grpc.absolute_max_metadata_size,
  // grpc.enable_retries, grpc.per_rpc_retry_buffer_size, and ours,
  // h2rpc.busy_poll_us (busy_poll, microseconds; 0 off). Strings:
  // grpc.lb_policy_name, grpc.ssl_target_name_override,
  // grpc.primary_user_agent. Returns false (and changes nothing) for other
  // names, a negative duration, or 0 for grpc.initial_reconnect_backoff_ms or
  // grpc.min_reconnect_backoff_ms.
  bool SetInt(const std::string& name, int value);
  bool SetString(const std::string& name, const std::string& value);
};

namespace internal {
class ChannelImpl;
struct ChannelAccess;
}  // namespace internal

class Channel final : public ChannelInterface {
 public:
  // Fails the calls in flight and the queued ones (UNAVAILABLE) and closes
  // the connections (a busy-poll channel also stops its loop thread).
  ~Channel() override;

  const std::string& target() const;

  // ---- Connectivity (any thread; ChannelInterface) ----
  ConnectivityState GetState(bool try_to_connect) override;

 private:
  friend struct internal::ChannelAccess;
  friend std::shared_ptr<Channel> CreateCustomChannel(
      const std::string& target,
      const std::shared_ptr<ChannelCredentials>& creds,
      const ChannelArguments& args);

  // Use CreateChannel.
  explicit Channel(std::unique_ptr<internal::ChannelImpl> impl);

  // ---- ChannelInterface ----
  bool WaitForStateChangeImpl(ConnectivityState last_observed,
                              absl::Time deadline) override;
  std::shared_ptr<internal::ClientCall> CreateCall(
      const std::string& method, ClientContext* context) override;

  const std::unique_ptr<internal::ChannelImpl> impl_;
};

// A channel to `target` (see the file comment), plain or TLS as `creds` say.
// Never null. A channel that can never work is in TRANSIENT_FAILURE from the
// start and fails every call at once (wait-for-ready ones too):
//   * a target that does not parse ("", "ipv4:1.2.3", "dns:///", an unknown
//     "scheme:" that is no host:port either), credentials whose PEM did not
//     load, an unknown load-balancing policy, or a loop (thread) that could
//     not start: UNAVAILABLE, and the message says what is wrong;
//   * null credentials: INVALID_ARGUMENT "Invalid credentials", as grpc++
//     (before, null meant an insecure channel).
// With no loop thread there is no thread to complete calls on: an async
// call's callback then runs inline, on the thread that started it, before
// the start returns.
// (grpc++ 1.51 fails the calls of a target that does not parse with UNKNOWN
// "Failed to create secure client channel", without the reason;
// grpc_interop_test compares.)
std::shared_ptr<Channel> CreateChannel(
    const std::string& target,
    const std::shared_ptr<ChannelCredentials>& creds);
std::shared_ptr<Channel> CreateCustomChannel(
    const std::string& target, const std::shared_ptr<ChannelCredentials>& creds,
    const ChannelArguments& args);

}  // namespace rpc

#endif  // RPC_CHANNEL_H_
