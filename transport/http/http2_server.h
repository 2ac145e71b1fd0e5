// Http2Server: an HTTP/2 server on N event loops (h2c with prior knowledge,
// or TLS with ALPN h2), with a small request API for applications:
// Http2Handler receives each request as an Http2ServerStream, reads its body as
// Slices and answers with headers, data and trailers under flow control.
//
//   class Hello : public transport::Http2Handler {
//     void OnRequest(transport::Http2ServerStream* stream) override {
//       stream->Respond({{":status", "200"}}, /*end_stream=*/false);
//       stream->Write(transport::SliceBuffer("hello"), /*end_stream=*/true);
//     }
//   };
//   Hello hello;
//   auto server = transport::Http2Server::Start(options, &hello);
//   ... (*server)->port() ...
//   (*server)->Shutdown(absl::Seconds(5));
//
// Threading. Start() makes an EventLoopGroup of options.num_threads loops;
// the listener runs on loop 0 and hands each accepted socket to the next loop
// in round-robin order, which owns the connection for its whole life. Every
// handler callback and every Http2ServerStream method runs on (and must be
// called on) the stream's loop thread: Http2ServerStream::loop()->Post() from
// elsewhere. Start, Shutdown and the destructor are called from a thread that
// is not one of the server's loops.
//
// The connection plumbing is ConnectionDriver (connection_driver.h); this
// file only maps Connection events to Http2ServerStreams, so an rpc layer can
// sit on ConnectionDriver + Connection directly instead.

#ifndef TRANSPORT_HTTP_HTTP2_SERVER_H_
#define TRANSPORT_HTTP_HTTP2_SERVER_H_

#include <atomic>
#include <cstdint>
#include <memory>
#include <string_view>
#include <vector>

#include "absl/functional/any_invocable.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "absl/types/span.h"
#include "hpack/header_list.h"
#include "transport/connection/connection.h"
#include "transport/driver/connection_driver.h"
#include "transport/frame/http2_error.h"
#include "transport/io/event_loop.h"
#include "transport/io/socket.h"
#include "transport/io/tcp.h"
#include "transport/slice/slice.h"
#include "transport/tls/tls.h"

namespace transport {

class ServerSession;

// One request/response exchange. Owned by the server; valid from
// Http2Handler::OnRequest until its on_close callback returns (the object is
// then recycled for a later stream: keep no pointer to it).
class Http2ServerStream {
 public:
  struct Callbacks {
    // A piece of the request body (a Slice of the received bytes, no copy).
    // Unless manual flow control is on, its octets are released to the
    // peer's window when the callback returns. Empty: the body is dropped.
    absl::AnyInvocable<void(Slice)> on_data;
    // The request is complete (trailers(), if any, are set). Runs once, also
    // for requests without a body (right after OnRequest returns).
    absl::AnyInvocable<void()> on_end;
    // A Write that had to wait (write_blocked()) has gone to the connection:
    // write more.
    absl::AnyInvocable<void()> on_writable;
    // Last call: the stream is over. kNoError when both sides ended normally;
    // else the reset code (the peer's or ours). The stream is destroyed
    // right after.
    absl::AnyInvocable<void(Http2ErrorCode)> on_close;
  };

  uint32_t id() const { return id_; }
  EventLoop* loop() const;

  // The request headers (pseudo-headers first) and the common ones.
  const hpack::HeaderList& request_headers() const { return headers_; }
  std::string_view method() const { return method_; }
  std::string_view path() const { return path_; }
  std::string_view authority() const { return authority_; }
  std::string_view scheme() const { return scheme_; }
  // The request's trailers (empty when none).
  const hpack::HeaderList& trailers() const { return trailers_; }
  bool request_ended() const { return request_ended_; }

  // Sets the callbacks (usually from OnRequest). manual_flow_control: the
  // body's octets count against the receive windows until ConsumeData, so a
  // slow consumer stops the peer (backpressure).
  void SetCallbacks(Callbacks callbacks, bool manual_flow_control = false);
  void ConsumeData(size_t bytes);

  // Response headers (":status" first; 1xx any number of times, then the
  // final ones). Errors as Connection::SubmitHeaders.
  absl::Status Respond(absl::Span<const hpack::HeaderField> headers,
                       bool end_stream);
  // Body octets (no copy). They queue while the windows are closed; then
  // write_blocked() is true until on_writable runs. Errors as
  // Connection::SubmitData.
  absl::Status Write(SliceBuffer data, bool end_stream);
  // Ends the response with trailers (after the queued data).
  absl::Status WriteTrailers(absl::Span<const hpack::HeaderField> trailers);
  // True after a Write whose octets have not all moved to the connection's
  // output yet; on_writable follows.
  bool write_blocked() const { return write_blocked_; }
  // RST_STREAM(code); on_close(code) follows at once.
  void Reset(Http2ErrorCode code = Http2ErrorCode::kCancel);

 private:
  friend class ServerSession;
  Http2ServerStream(ServerSession* session, uint32_t id,
                    const hpack::HeaderList& headers, bool end_stream);
  // (Re)starts this object as stream `id` (the session recycles streams).
  void Init(uint32_t id, const hpack::HeaderList& headers, bool end_stream);

  ServerSession* const session_;
  uint32_t id_ = 0;
  hpack::HeaderList headers_;
  hpack::HeaderList trailers_;
  std::string_view method_, path_, authority_, scheme_;
  Callbacks callbacks_;
  bool manual_flow_control_ = false;
  bool request_ended_ = false;
  bool write_blocked_ = false;
  bool closed_ = false;
  Http2ErrorCode reset_code_ = Http2ErrorCode::kNoError;
};

class Http2Handler {
 public:
  virtual ~Http2Handler() = default;
  // A new request, its headers complete. Runs on the connection's loop; must
  // not block. Typically sets the stream's callbacks and responds (now or
  // later, from the same loop).
  virtual void OnRequest(Http2ServerStream* stream) = 0;
};

struct Http2ServerOptions {
  // Where to listen (port 0: the kernel picks one; see Http2Server::port()).
  SocketAddress address = SocketAddress::Loopback(AF_INET, 0);
  int num_threads = 1;
  bool pin_threads = false;
  // Non-null: TLS with ALPN h2 (a server context). Null: h2c, prior
  // knowledge.
  std::shared_ptr<const TlsContext> tls;
  // The role is forced to kServer.
  ConnectionOptions connection;
  DriverOptions driver;
  TcpListenerOptions listener;
};

class Http2Server {
 public:
  // Listens and starts the loops. Errors: those of the loops and of
  // TcpListener::Listen. `handler` must outlive the server.
  static absl::StatusOr<std::unique_ptr<Http2Server>> Start(
      const Http2ServerOptions& options, Http2Handler* handler);
  // Shutdown(absl::ZeroDuration()) unless already shut down.
  ~Http2Server();

  Http2Server(const Http2Server&) = delete;
  Http2Server& operator=(const Http2Server&) = delete;

  uint16_t port() const { return port_; }
  const SocketAddress& local_address() const { return local_address_; }
  // Open connections, over all loops (approximate while they change).
  size_t num_connections() const {
    return connections_.load(std::memory_order_relaxed);
  }
  // Connections accepted since Start.
  uint64_t connections_accepted() const {
    return accepted_.load(std::memory_order_relaxed);
  }

  // Stops accepting, starts a graceful shutdown (GOAWAY, PING, final GOAWAY)
  // on every connection, waits up to `grace` for them to drain, then closes
  // the rest, and stops the loops. Blocking; not on a server loop.
  void Shutdown(absl::Duration grace);

 private:
  struct LoopState;
  friend class ServerSession;

  Http2Server(const Http2ServerOptions& options, Http2Handler* handler);
  // On `state`'s loop: wraps the socket (TLS handshake first if configured)
  // and starts a session.
  void Adopt(LoopState* state, ScopedFd fd);
  void StartSession(LoopState* state, std::unique_ptr<Endpoint> endpoint);
  void SessionClosed(LoopState* state, ServerSession* session);
  // Runs `fn` on every loop and waits for all.
  void RunOnEveryLoop(absl::AnyInvocable<void(LoopState*)> fn);

  Http2ServerOptions options_;
  Http2Handler* const handler_;
  std::unique_ptr<EventLoopGroup> group_;
  std::vector<std::unique_ptr<LoopState>> loops_;
  std::unique_ptr<TcpListener> listener_;  // On loop 0.
  SocketAddress local_address_;
  uint16_t port_ = 0;
  bool shut_down_ = false;
  std::atomic<size_t> connections_{0};
  std::atomic<uint64_t> accepted_{0};
  std::atomic<size_t> next_loop_{0};
};

}  // namespace transport

#endif  // TRANSPORT_HTTP_HTTP2_SERVER_H_
