// ServerConnection: one accepted HTTP/2 connection of a Server, on one loop.
// It is the Connection's listener: request HEADERS become ServerCalls (routed
// by :path, UNIMPLEMENTED for unknown methods, 415 for non-gRPC content
// types), DATA, end of stream and resets go to the call of the stream.
//
// Keepalive and connection lifetime (ServerKeepaliveOptions; gRPC's A9 and
// keepalive.md): the server pings a silent client (KeepalivePinger) and
// closes the connection when it does not answer; enforces the clients' ping
// rate (PingPolicy: GOAWAY ENHANCE_YOUR_CALM "too_many_pings"); after
// max_connection_idle without calls, or at max_connection_age (+-10% jitter),
// it shuts down gracefully (GOAWAY, calls in flight finish), and
// max_connection_age_grace after that age it closes what is left.
//
// Threading: every method runs on the connection's loop thread; calls reach
// it only through tasks posted to that loop.

#ifndef RPC_INTERNAL_SERVER_CONNECTION_H_
#define RPC_INTERNAL_SERVER_CONNECTION_H_

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/functional/any_invocable.h"
#include "absl/time/time.h"
#include "rpc/auth_context.h"
#include "rpc/internal/keepalive.h"
#include "rpc/internal/server_call.h"
#include "rpc/service.h"
#include "transport/connection/connection.h"
#include "transport/driver/connection_driver.h"
#include "transport/io/endpoint.h"

namespace rpc {
namespace internal {

// "ipv4:127.0.0.1:5000" / "ipv6:[::1]:5000", grpc++'s peer() form.
std::string PeerName(const transport::Endpoint& endpoint);

// Keepalive and connection lifetime of a server's connections (gRPC's server
// defaults; ServerBuilder sets them).
struct ServerKeepaliveOptions {
  // Server pings: after keepalive_time without reading from the client (only
  // with calls in flight unless permit_without_calls); no reply within
  // keepalive_timeout closes the connection. Infinite time: no pings.
  absl::Duration keepalive_time = absl::Hours(2);
  absl::Duration keepalive_timeout = absl::Seconds(20);
  // Also lets clients ping without calls at min_ping_interval_without_data
  // (without it, one PING per 2 hours when there are no calls).
  bool permit_without_calls = false;
  // Client pings closer together than this (while we send no HEADERS or
  // DATA) are strikes; more than max_ping_strikes (0: no limit) gets GOAWAY
  // ENHANCE_YOUR_CALM "too_many_pings".
  absl::Duration min_ping_interval_without_data = absl::Minutes(5);
  int max_ping_strikes = 2;
  // Infinite: never.
  absl::Duration max_connection_idle = absl::InfiniteDuration();
  absl::Duration max_connection_age = absl::InfiniteDuration();
  absl::Duration max_connection_age_grace = absl::InfiniteDuration();
};

class ServerConnection final : public transport::ConnectionListener,
                               public transport::ConnectionDriver::Owner {
 public:
  // What the connection needs from its server.
  class Host {
   public:
    virtual ~Host() = default;
    // nullptr when no service has the method.
    virtual const Service::Method* FindMethod(std::string_view path) = 0;
    // Runs the call's handler on a worker thread.
    virtual void Dispatch(std::shared_ptr<ServerCall> call) = 0;
    virtual const ServerCallLimits& limits() const = 0;
    // The connection closed (end of a loop iteration); the host destroys it.
    virtual void OnConnectionClosed(ServerConnection* connection) = 0;
    // Counts the callback calls before their reactor's OnDone (may be null).
    virtual std::atomic<int>* live_callback_calls() { return nullptr; }
  };

  ServerConnection(Host* host, std::unique_ptr<transport::Endpoint> endpoint,
                   const transport::ConnectionOptions& options,
                   const ServerKeepaliveOptions& keepalive = {});
  ~ServerConnection() override;

  void Start();
  // GOAWAY; in-flight calls finish, then the connection closes.
  void GracefulShutdown() { driver_.GracefulShutdown(); }
  // Closes now: every call is cancelled.
  void Abort();

  transport::Connection& connection() { return driver_.connection(); }
  void ScheduleFlush() { driver_.ScheduleFlush(); }
  // After SubmitData for `stream_id`: releases the call's write credit once
  // its data left the Connection's queue.
  void TrackWrite(uint32_t stream_id);
  size_t num_calls() const { return calls_.size(); }
  // GOAWAY too_many_pings sent by all server connections of the process
  // (tests).
  static uint64_t too_many_pings_goaways();

  // ---- transport::ConnectionListener ----
  void OnHeaders(uint32_t stream_id, const hpack::HeaderList& headers,
                 bool end_stream) override;
  void OnTrailers(uint32_t stream_id,
                  const hpack::HeaderList& trailers) override;
  // Request headers over the limits: a Trailers-Only RESOURCE_EXHAUSTED
  // (no call is made); request trailers: the call ends with it.
  void OnHeaderListTooLarge(uint32_t stream_id,
                            const hpack::HeaderList& partial,
                            size_t list_size) override;
  void OnData(uint32_t stream_id, transport::Slice data) override;
  void OnEndStream(uint32_t stream_id) override;
  void OnStreamReset(uint32_t stream_id, transport::Http2ErrorCode code,
                     bool remote) override;
  void OnStreamClosed(uint32_t stream_id) override;
  void OnStreamWritable(uint32_t stream_id) override;
  void OnPing(uint64_t opaque) override;
  void OnPingAck(uint64_t opaque) override;

  // ---- transport::ConnectionDriver::Owner ----
  void OnDriverProgress() override;
  void OnDriverClosed(const absl::Status& status) override;

 private:
  ServerCall* Find(uint32_t stream_id);
  // END_STREAM or trailers from the client: the request is complete.
  void OnRequestEnd(uint32_t stream_id);
  // A Trailers-Only response without a call (unknown method, bad request).
  void Reject(uint32_t stream_id, std::string_view http_status,
              const Status& status);
  // Calls (or other streams) in flight.
  bool HasCalls();
  // Max idle / max age timers.
  void StartLifetimeTimers();
  void OnIdleTimer();
  void OnAgeTimer();

  Host* const host_;
  // peer() of the calls, shared by them.
  std::shared_ptr<const std::string> peer_;
  // The grpc-accept-encoding value of the latest call that sent one, shared
  // by the calls that send the same (a client sends the same on every call).
  std::shared_ptr<const std::string> accept_encoding_;
  // Who the peer is (TLS identity); computed once, shared by the calls.
  std::shared_ptr<const AuthContext> auth_context_;
  absl::flat_hash_map<uint32_t, std::shared_ptr<ServerCall>> calls_;
  absl::flat_hash_set<uint32_t> waiting_writers_;
  // Callback unary and server-streaming calls not dispatched until their
  // request is complete.
  absl::flat_hash_set<uint32_t> awaiting_request_;
  const ServerKeepaliveOptions keepalive_options_;
  PingPolicy ping_policy_;
  int64_t idle_since_ns_ = 0;
  transport::EventLoop::TimerId idle_timer_ =
      transport::EventLoop::kInvalidTimer;
  transport::EventLoop::TimerId age_timer_ =
      transport::EventLoop::kInvalidTimer;
  transport::EventLoop::TimerId grace_timer_ =
      transport::EventLoop::kInvalidTimer;
  transport::ConnectionDriver driver_;  // Destroyed right after keepalive_.
  KeepalivePinger keepalive_;
};

}  // namespace internal
}  // namespace rpc

#endif  // RPC_INTERNAL_SERVER_CONNECTION_H_
