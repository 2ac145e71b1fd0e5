// rpc::Channel: a virtual connection to one server ("host:port"), in grpc++'s
// shape. Create with CreateChannel; give it to generated stubs.
//
//   std::shared_ptr<rpc::Channel> channel =
//       rpc::CreateChannel("localhost:50051",
//       rpc::InsecureChannelCredentials());
//   auto stub = helloworld::Greeter::NewStub(channel);
//
// Connection management: nothing happens until the first call (lazy
// connect). All calls share one HTTP/2 connection (multiplexed streams) while
// it lasts; calls made while it is being established wait for it. When a
// connection attempt fails, the calls waiting for it fail with UNAVAILABLE and
// new calls fail at once until a backoff delay passed (initial_backoff,
// times 1.6 per failed attempt, up to max_backoff); the next call after that
// connects again. A GOAWAY from the server retires the connection (its calls
// finish) and the next call opens a new one.
//
// Threading: the channel runs one loop thread that owns its connections.
// Calls may be made from any number of threads at once. The channel must
// outlive its calls (stubs and contexts keep it alive).

#ifndef RPC_CHANNEL_H_
#define RPC_CHANNEL_H_

#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/time/time.h"
#include "rpc/compression/codec.h"
#include "rpc/compression/encoding.h"
#include "rpc/credentials.h"
#include "rpc/internal/client_call.h"
#include "rpc/internal/client_transport.h"
#include "transport/event_loop.h"
#include "transport/socket.h"
#include "transport/tcp.h"

namespace rpc {

// Per-channel settings (a small subset of grpc::ChannelArguments).
struct ChannelArguments {
  // -1: unlimited. Defaults: receive 4 MiB, send unlimited.
  int max_receive_message_size = 4 * 1024 * 1024;
  int max_send_message_size = -1;
  // Prepended to the user-agent.
  std::string user_agent_prefix;
  absl::Duration connect_timeout = absl::Seconds(20);
  absl::Duration initial_backoff = absl::Milliseconds(200);
  absl::Duration max_backoff = absl::Seconds(30);
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
};

class Channel final : private internal::ClientTransport::Host {
 public:
  // Use CreateChannel.
  Channel(std::string target, std::shared_ptr<ChannelCredentials> creds,
          const ChannelArguments& args,
          std::unique_ptr<transport::EventLoopThread> loop_thread);
  // Fails the calls in flight (UNAVAILABLE), closes the connections and stops
  // the loop thread.
  ~Channel() override;
  Channel(const Channel&) = delete;
  Channel& operator=(const Channel&) = delete;

  const std::string& target() const { return target_; }

  // For stubs and call objects: a call of `path` ("/pkg.Service/Method"), not
  // yet started.
  // `encoding`: the request encoding, or nullopt for the channel's default.
  std::shared_ptr<internal::ClientCall> CreateCall(
      const std::string& path, absl::Time deadline, const Metadata& metadata,
      std::optional<compression::Encoding> encoding = std::nullopt);

  // ---- Loop thread, for ClientCall ----
  // Starts the call on the connection (connecting first if needed).
  void LoopStartCall(std::shared_ptr<internal::ClientCall> call);
  const std::string& authority() const { return authority_; }
  const std::string& user_agent() const { return user_agent_; }
  // "https" with TLS credentials, else "http".
  const char* scheme() const { return creds_->secure() ? "https" : "http"; }

 private:
  void LoopConnect();
  void LoopOnConnected(
      absl::StatusOr<std::unique_ptr<transport::Endpoint>> endpoint);
  // ---- ClientTransport::Host ----
  void OnTransportDraining(internal::ClientTransport* transport) override;
  void OnTransportClosed(internal::ClientTransport* transport) override;

  const std::string target_;
  std::string authority_;  // host:port
  const std::shared_ptr<ChannelCredentials> creds_;
  const ChannelArguments args_;
  const std::string user_agent_;
  internal::ClientCallOptions call_options_;
  std::unique_ptr<transport::EventLoopThread> loop_thread_;
  transport::EventLoop* const loop_;

  // Loop only.
  internal::ClientTransport* current_ = nullptr;
  bool connecting_ = false;
  bool closing_ = false;
  absl::Time next_attempt_ = absl::InfinitePast();
  absl::Duration backoff_;
  std::vector<std::shared_ptr<internal::ClientCall>> waiting_;
  absl::flat_hash_map<internal::ClientTransport*,
                      std::unique_ptr<internal::ClientTransport>>
      transports_;
  // Keeps the connect attempt's callback from touching a destroyed channel.
  std::shared_ptr<Channel*> self_;
};

// A channel to `target`: "host:port", "dns:///host:port", "ipv4:host:port"
// (host: a numeric address, "localhost", or a name resolved with
// getaddrinfo when connecting), plain or TLS as `creds` say. nullptr when
// the loop thread cannot start.
std::shared_ptr<Channel> CreateChannel(
    const std::string& target,
    const std::shared_ptr<ChannelCredentials>& creds);
std::shared_ptr<Channel> CreateCustomChannel(
    const std::string& target, const std::shared_ptr<ChannelCredentials>& creds,
    const ChannelArguments& args);

}  // namespace rpc

#endif  // RPC_CHANNEL_H_
