// ClientTransport: one HTTP/2 connection of a Channel, on the channel's loop.
// It is the Connection's listener for the calls it carries: it maps stream ids
// to ClientCalls and forwards their events. A GOAWAY from the server makes it
// stop taking calls (the channel opens a new connection for the next call)
// and close once its calls are done.
//
// Calls beyond the server's MAX_CONCURRENT_STREAMS wait in the Connection's
// queue (no count limit: each waits until its deadline). A call whose
// attempt the server did not process (REFUSED_STREAM, GOAWAY, or a queued
// stream that never started) may retry transparently (client_call.h): the
// transport then forgets it.
//
// Keepalive (ClientTransportOptions, gRPC's A8): a PING once keepalive_time
// passed without reading anything from the server (only with calls in flight
// unless keepalive_permit_without_calls); nothing read within
// keepalive_timeout after it fails the calls with UNAVAILABLE ("keepalive
// timeout") and closes the connection. GOAWAY ENHANCE_YOUR_CALM
// "too_many_pings" calls Host::OnTransportTooManyPings. Unlike gRPC core
// there is no GRPC_ARG_HTTP2_MAX_PINGS_WITHOUT_DATA limit (A8 has none;
// gRPC's keepalive.md calls it unfortunate and plans to deprecate it): a
// server that dislikes our rate says so with too_many_pings.
//
// Threading: every method runs on the channel's loop thread.

#ifndef RPC_INTERNAL_CLIENT_TRANSPORT_H_
#define RPC_INTERNAL_CLIENT_TRANSPORT_H_

#include <cstdint>
#include <memory>
#include <string>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "absl/types/span.h"
#include "rpc/auth_context.h"
#include "rpc/internal/client_call.h"
#include "rpc/internal/keepalive.h"
#include "rpc/internal/metadata_limits.h"
#include "transport/connection/connection.h"
#include "transport/driver/connection_driver.h"
#include "transport/io/endpoint.h"

namespace rpc {
namespace internal {

// How a channel's connections are run.
struct ClientTransportOptions {
  transport::ConnectionOptions connection;
  // Keepalive (gRPC's GRPC_ARG_KEEPALIVE_*): after `keepalive_time` without
  // a PING sent, send one; no ACK within `keepalive_timeout` closes the
  // connection (its calls fail UNAVAILABLE). Infinite: no keepalive pings.
  // Without calls in flight pings are sent only with permit_without_calls.
  absl::Duration keepalive_time = absl::InfiniteDuration();
  absl::Duration keepalive_timeout = absl::Seconds(20);
  bool keepalive_permit_without_calls = false;
  // Received metadata limits (rpc/internal/metadata_limits.h); the
  // transport's own header list options are set from them.
  MetadataLimits metadata;
};

class ClientTransport final : public transport::ConnectionListener,
                              public transport::ConnectionDriver::Owner {
 public:
  // What the transport tells its channel.
  class Host {
   public:
    virtual ~Host() = default;
    // The transport takes no more calls (GOAWAY or closing).
    virtual void OnTransportDraining(ClientTransport* transport) = 0;
    // Closed (end of a loop iteration); the host destroys it.
    virtual void OnTransportClosed(ClientTransport* transport) = 0;
    // The server sent GOAWAY ENHANCE_YOUR_CALM "too_many_pings": the
    // channel should double its keepalive time for later connections.
    virtual void OnTransportTooManyPings(ClientTransport* /*transport*/) {}
  };

  ClientTransport(Host* host, std::unique_ptr<transport::Endpoint> endpoint,
                  const ClientTransportOptions& options);
  // Fails the calls still carried with UNAVAILABLE.
  ~ClientTransport() override;

  void Start();
  void Abort() { driver_.Abort(absl::CancelledError("channel closed")); }
  // No more calls (the host hears OnTransportDraining); GOAWAY to the
  // server, and the connection closes once its calls ended.
  void GracefulClose();

  // Opens the call's stream; kUnavailable and friends when the connection
  // cannot take it (then the call is not registered).
  absl::StatusOr<uint32_t> Submit(std::shared_ptr<ClientCall> call,
                                  absl::Span<const hpack::HeaderField> headers,
                                  bool end_stream);
  transport::Connection& connection() { return driver_.connection(); }
  void ScheduleFlush() { driver_.ScheduleFlush(); }
  void TrackWrite(uint32_t stream_id);
  bool accepting() const { return !draining_ && !driver_.closed(); }
  const std::string& peer() const { return peer_; }
  // The server's identity (TLS), computed once when the connection starts.
  const std::shared_ptr<const AuthContext>& auth_context() const {
    return auth_context_;
  }
  // Keepalive PINGs sent so far (tests).
  uint64_t keepalive_pings_sent() const { return keepalive_.pings_sent(); }

  // ---- transport::ConnectionListener ----
  void OnHeaders(uint32_t stream_id, const hpack::HeaderList& headers,
                 bool end_stream) override;
  void OnTrailers(uint32_t stream_id,
                  const hpack::HeaderList& trailers) override;
  // Response headers or trailers over the limits: the call fails with
  // RESOURCE_EXHAUSTED (and resets its stream).
  void OnHeaderListTooLarge(uint32_t stream_id,
                            const hpack::HeaderList& partial,
                            size_t list_size) override;
  void OnData(uint32_t stream_id, transport::Slice data) override;
  void OnEndStream(uint32_t stream_id) override;
  void OnStreamReset(uint32_t stream_id, transport::Http2ErrorCode code,
                     bool remote) override;
  // Why we reset a stream (kept for the OnStreamReset that follows at once).
  void OnStreamFailed(uint32_t stream_id,
                      const transport::StreamError& error) override;
  void OnStreamClosed(uint32_t stream_id) override;
  void OnStreamWritable(uint32_t stream_id) override;
  void OnStreamStarted(uint32_t stream_id) override;
  void OnGoAway(uint32_t last_stream_id, transport::Http2ErrorCode code,
                std::string_view debug_data) override;
  void OnPingAck(uint64_t opaque) override;

  // ---- transport::ConnectionDriver::Owner ----
  void OnDriverProgress() override;
  void OnDriverClosed(const absl::Status& status) override;

 private:
  ClientCall* Find(uint32_t stream_id);
  // The call left for a transparent retry: no more events for it.
  void Forget(uint32_t stream_id);
  // A call whose stream is still queued here (never sent) retries
  // elsewhere if it may (true; its stream is dropped).
  bool RetryQueued(uint32_t stream_id, ClientCall* call);
  void StartDraining();
  // No reply to a keepalive PING: fail the calls, close.
  void OnKeepaliveTimeout();

  Host* const host_;
  std::string peer_;
  std::shared_ptr<const AuthContext> auth_context_;
  bool draining_ = false;
  // The peer's last GOAWAY, as "GOAWAY <code> \"<debug data>\"" (empty
  // before one): calls that die with the connection say why.
  std::string goaway_reason_;
  // The last OnStreamFailed: the stream and why.
  uint32_t stream_error_id_ = 0;
  transport::StreamError stream_error_;
  // Deferred work checks it is still alive through a weak_ptr.
  std::shared_ptr<bool> alive_ = std::make_shared<bool>(true);
  absl::flat_hash_map<uint32_t, std::shared_ptr<ClientCall>> calls_;
  absl::flat_hash_set<uint32_t> waiting_writers_;
  const absl::Duration keepalive_timeout_;
  const MetadataLimits metadata_limits_;
  transport::ConnectionDriver driver_;  // Destroyed right after keepalive_.
  KeepalivePinger keepalive_;
};

}  // namespace internal
}  // namespace rpc

#endif  // RPC_INTERNAL_CLIENT_TRANSPORT_H_
