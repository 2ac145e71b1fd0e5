// Subchannel: a channel's connection to one address, with its own
// connectivity state and reconnect backoff (gRPC's subchannel).
//
//   IDLE --Connect()--> CONNECTING --connected--> READY
//                           |                       |
//          failed (or drained        GOAWAY / closed
//          before it was READY)
//                           v                       v
//                   TRANSIENT_FAILURE             IDLE
//                           |
//            the backoff delay passed (connection-backoff.md)
//                           v
//                         IDLE
//
// Attempts start at least initial_backoff apart, also after a connection
// that was lost right after it was made (the backoff resets on success).
//
// Every change is reported to the Owner (the channel's load-balancing
// policy), which decides when to Connect again. A connection that is
// draining (GOAWAY) keeps carrying its calls until they end; the subchannel
// owns it until it closed.
//
// Threading: every method runs on the channel's loop thread.

#ifndef RPC_INTERNAL_SUBCHANNEL_H_
#define RPC_INTERNAL_SUBCHANNEL_H_

#include <memory>
#include <string>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "rpc/connectivity_state.h"
#include "rpc/internal/backoff.h"
#include "rpc/internal/client_transport.h"
#include "transport/io/endpoint.h"
#include "transport/io/event_loop.h"
#include "transport/io/socket.h"
#include "transport/io/tcp.h"
#include "transport/tls/tls.h"

namespace rpc {
namespace internal {

class Subchannel final : private ClientTransport::Host {
 public:
  class Owner {
   public:
    virtual ~Owner() = default;
    // The subchannel's state() changed.
    virtual void OnSubchannelStateChange(Subchannel* subchannel) = 0;
    // The options of its next connection (keepalive may change).
    virtual ClientTransportOptions SubchannelTransportOptions() = 0;
    // A connection was closed for too many pings (GOAWAY ENHANCE_YOUR_CALM).
    virtual void OnSubchannelTooManyPings() = 0;
    // After Shutdown(/*notify_closed=*/true): its last connection closed.
    // The owner may destroy the subchannel from here.
    virtual void OnSubchannelClosed(Subchannel* subchannel) = 0;
  };

  struct Options {
    BackoffOptions backoff;
    // TLS: the context and the name to verify; nullptr context: plain TCP.
    std::shared_ptr<const transport::TlsContext> tls;
    std::string tls_name;
  };

  Subchannel(Owner* owner, transport::EventLoop* loop,
             transport::SocketAddress address, const Options& options);
  // Closes its connections (their calls fail with UNAVAILABLE) and cancels
  // a connection attempt in flight.
  ~Subchannel() override;
  Subchannel(const Subchannel&) = delete;
  Subchannel& operator=(const Subchannel&) = delete;

  const transport::SocketAddress& address() const { return address_; }
  ConnectivityState state() const { return state_; }
  // The state before the last change (READY -> IDLE: the connection was
  // lost; TRANSIENT_FAILURE -> IDLE: the backoff delay passed).
  ConnectivityState previous_state() const { return previous_state_; }
  // Why the last attempt failed (TRANSIENT_FAILURE).
  const absl::Status& last_error() const { return last_error_; }
  // An attempt failed since the subchannel was last READY.
  bool failed_since_ready() const { return failed_since_ready_; }
  // IDLE: starts connecting. Otherwise nothing.
  void Connect();
  // READY: the connection stops taking calls and closes once they ended
  // (ClientTransport::GracefulClose); the subchannel is IDLE again. The
  // owner, who asked, is not told. Otherwise nothing.
  void Disconnect();
  // For good (its address went away, or the channel closes): the backoff
  // timer is cancelled, a connection attempt in flight is cancelled (its
  // socket closes now, its callback never runs), the current connection
  // drains (its calls finish), and the owner hears nothing more, except
  // OnSubchannelClosed once no connection is open when `notify_closed`
  // (maybe from inside this call). Idempotent; a later call may turn
  // `notify_closed` off.
  void Shutdown(bool notify_closed);
  bool shut_down() const { return shut_down_; }
  // READY: the connection to start calls on; else nullptr.
  ClientTransport* transport() const { return current_; }
  // Connections still open (the current one and draining ones).
  size_t open_transports() const { return transports_.size(); }

 private:
  void SetState(ConnectivityState state);
  // An attempt failed: TRANSIENT_FAILURE until the backoff delay passed.
  void OnAttemptFailed(absl::Status error);
  // Shut down with notify_closed and no connection left: tells the owner.
  void MaybeNotifyClosed();
  // The connection attempt itself (Connect waits for earliest_attempt_).
  void StartAttempt();
  void OnConnected(
      absl::StatusOr<std::unique_ptr<transport::Endpoint>> endpoint);
  // ---- ClientTransport::Host ----
  void OnTransportDraining(ClientTransport* transport) override;
  void OnTransportClosed(ClientTransport* transport) override;
  void OnTransportTooManyPings(ClientTransport* transport) override;

  Owner* const owner_;
  transport::EventLoop* const loop_;
  const transport::SocketAddress address_;
  const Options options_;
  Backoff backoff_;
  ConnectivityState state_ = ConnectivityState::kIdle;
  ConnectivityState previous_state_ = ConnectivityState::kIdle;
  bool failed_since_ready_ = false;
  bool shut_down_ = false;
  bool notify_closed_ = false;
  bool closed_notified_ = false;
  // Inside ClientTransport::Start: a connection that drains before it was
  // READY is a failed attempt, not a lost connection.
  bool starting_ = false;
  absl::Status last_error_;
  absl::Time attempt_start_;
  absl::Time next_attempt_;  // Start of the last attempt + its delay.
  // After a success: the next attempt starts no sooner than initial_backoff
  // after the last one, so a server that accepts and drops connections at
  // once is not hammered.
  absl::Time earliest_attempt_ = absl::InfinitePast();
  transport::EventLoop::TimerId backoff_timer_ =
      transport::EventLoop::kInvalidTimer;
  // The attempt in flight (TcpConnect/TlsConnect), cancelled by Shutdown and
  // the destructor: its socket, timer and handshake end at once instead of
  // lingering until the connect timeout.
  transport::ConnectHandle attempt_;
  ClientTransport* current_ = nullptr;
  absl::flat_hash_map<ClientTransport*, std::unique_ptr<ClientTransport>>
      transports_;
  // Keeps connect and timer callbacks from touching a destroyed subchannel.
  std::shared_ptr<Subchannel*> self_;
};

}  // namespace internal
}  // namespace rpc

#endif  // RPC_INTERNAL_SUBCHANNEL_H_
