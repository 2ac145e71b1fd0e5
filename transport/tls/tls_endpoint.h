// TlsEndpoint: an Endpoint that runs a TlsSession over another Endpoint
// (normally a TcpEndpoint), so HTTP/2 code reads and writes plaintext with
// the same contract as plain TCP (endpoint.h).
//
// Threading: like every endpoint, one loop thread: the wrapped endpoint's.
//
// Order of events:
//   1. Create() takes over the transport's callbacks; the handshake starts at
//      the end of the current loop iteration (never inside Create).
//   2. `on_handshake_done` runs exactly once: OK (the endpoint is open, ALPN
//      is "h2"; session() tells the version and the peer certificate) or the
//      error (the endpoint is dead: close or destroy it). Until then Read
//      returns kWouldBlock and Writev takes 0 bytes; afterwards on_writable
//      and on_readable run once each, so such early callers need no special
//      case.
//   3. Then on_readable / on_writable as for any endpoint.
// A transport EOF without close_notify reads as kEof: HTTP/2 frames are
// self-delimiting, and the connection layer sees a truncated frame itself.
// A transport write's error once open fails writes only: reads still return
// what the peer sent before it reset the connection, then the end (as
// TcpEndpoint's, endpoint.h).
//
// Memory: at most the session's two ciphertext buffers (tls.h) plus one
// ciphertext read chunk; Writev takes only what fits the output buffer after
// pushing as much as the transport accepts.

#ifndef TRANSPORT_TLS_TLS_ENDPOINT_H_
#define TRANSPORT_TLS_TLS_ENDPOINT_H_

#include <memory>
#include <string>
#include <string_view>

#include "absl/functional/any_invocable.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "transport/io/endpoint.h"
#include "transport/io/event_loop.h"
#include "transport/io/socket.h"
#include "transport/io/tcp.h"
#include "transport/tls/tls.h"

namespace transport {

class TlsEndpoint final : public Endpoint {
 public:
  using HandshakeCallback = absl::AnyInvocable<void(absl::Status)>;

  // Call on the transport's loop thread. `session` is fresh (client or server
  // role decides who speaks first).
  static std::unique_ptr<TlsEndpoint> Create(
      std::unique_ptr<Endpoint> transport, std::unique_ptr<TlsSession> session,
      HandshakeCallback on_handshake_done);
  ~TlsEndpoint() override;

  TlsEndpoint(const TlsEndpoint&) = delete;
  TlsEndpoint& operator=(const TlsEndpoint&) = delete;

  EventLoop* loop() const override { return transport_->loop(); }
  const SocketAddress& peer_address() const override {
    return transport_->peer_address();
  }
  const SocketAddress& local_address() const override {
    return transport_->local_address();
  }
  IoResult Read(absl::Span<char> buffer) override;
  IoResult Writev(absl::Span<const std::string_view> buffers) override;
  // Sends close_notify, then the transport's FIN once it is out.
  void ShutdownWrite() override;
  void Close() override;

  bool handshake_complete() const { return state_ == State::kOpen; }
  // ALPN, version, cipher and peer certificate, once the handshake is done.
  const TlsSession& session() const { return *session_; }

 private:
  enum class State { kHandshaking, kOpen, kFailed, kClosed };
  enum class Pull { kGotData, kNoData, kFailed };

  TlsEndpoint(std::unique_ptr<Endpoint> transport,
              std::unique_ptr<TlsSession> session, HandshakeCallback done);
  void OnTransportReadable();
  void OnTransportWritable();
  // Returns false if `this` was destroyed by a callback.
  bool DriveHandshake();
  // Sends the session's pending ciphertext; true when none is left. On a
  // transport error the endpoint fails (error_ set), or once open only its
  // writes do (write_error_ set).
  bool FlushOutput();
  // Moves ciphertext from the transport into the session.
  Pull PullInput();
  // Delivers an owed on_writable from the loop (end of this iteration).
  void ScheduleWritable();
  // Marks the endpoint failed; during the handshake also reports it. Returns
  // false if `this` was destroyed by the handshake callback.
  bool Fail(absl::Status status);
  void MaybeFinishShutdown();

  std::unique_ptr<Endpoint> transport_;
  std::unique_ptr<TlsSession> session_;
  HandshakeCallback on_handshake_done_;
  State state_ = State::kHandshaking;
  absl::Status error_;
  // A transport write's error while open: fails writes, not reads (what the
  // peer sent before it reset the connection is still read, then the end).
  absl::Status write_error_;
  bool transport_eof_ = false;
  bool write_blocked_ = false;     // a Writev took less: on_writable owed
  bool shutdown_pending_ = false;  // close_notify queued, FIN not yet sent
  bool read_stalled_ = false;      // input buffer full: resume on writable
  bool writable_scheduled_ = false;
  // Cleared by the destructor; the deferred handshake start checks it.
  std::shared_ptr<bool> alive_;
};

// Connects TCP to `address`, then runs a client TLS handshake verifying
// `server_name` (see TlsSession::CreateClient), all within `timeout`.
// `done` runs exactly once on the loop thread, never from inside TlsConnect,
// with an open endpoint or the error (kDeadlineExceeded on timeout), unless
// the returned handle is cancelled first (ConnectHandle::Cancel, tcp.h: then
// never; the TCP connect, or the handshake and its socket, end at once). The
// handle may be dropped (the attempt goes on). Call on the loop thread. The
// attempt is owned by the loop: destroying the loop first destroys `done`
// uncalled. The session resumes one the context cached for the same name and
// address, if any (TlsSession::CreateClient; session().session_reused() tells).
using TlsConnectCallback =
    absl::AnyInvocable<void(absl::StatusOr<std::unique_ptr<TlsEndpoint>>)>;
ConnectHandle TlsConnect(EventLoop* loop, const SocketAddress& address,
                         std::shared_ptr<const TlsContext> context,
                         const std::string& server_name, absl::Duration timeout,
                         TlsConnectCallback done);

}  // namespace transport

#endif  // TRANSPORT_TLS_TLS_ENDPOINT_H_
