// Http2Client: one HTTP/2 client connection on an EventLoop (h2c with prior
// knowledge, or TLS with ALPN h2, SNI and name verification), carrying many
// concurrent request streams. Streams over the server's
// MAX_CONCURRENT_STREAMS wait in the Connection's queue and start as others
// finish.
//
//   transport::Http2Client::Connect(loop, address, options,
//       [&](absl::StatusOr<std::unique_ptr<transport::Http2Client>> c) {
//         client = *std::move(c);
//         client->Fetch("GET", "/index.html", {}, [](Http2Response r) {...});
//       });
//
// Threading: everything on the loop thread (Connect's callback, every method,
// every callback). BlockingHttp2Client (blocking_http2_client.h) wraps it for
// tests and tools. The connection plumbing is ConnectionDriver.

#ifndef TRANSPORT_HTTP_HTTP2_CLIENT_H_
#define TRANSPORT_HTTP_HTTP2_CLIENT_H_

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/functional/any_invocable.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "absl/types/span.h"
#include "hpack/header_list.h"
#include "transport/connection/connection.h"
#include "transport/driver/connection_driver.h"
#include "transport/frame/http2_error.h"
#include "transport/io/endpoint.h"
#include "transport/io/event_loop.h"
#include "transport/io/socket.h"
#include "transport/slice/slice.h"
#include "transport/tls/tls.h"

namespace transport {

struct Http2ClientOptions {
  // The role is forced to kClient.
  ConnectionOptions connection;
  DriverOptions driver;
  // Non-null: TLS (a client context; ALPN h2 is required). Null: h2c.
  std::shared_ptr<const TlsContext> tls;
  // The name TLS verifies (and sends as SNI). Empty: the address's host.
  std::string server_name;
  // ":authority" of requests. Empty: "host:port" of the address.
  std::string authority;
  absl::Duration connect_timeout = absl::Seconds(10);
};

// A whole response, as Fetch collects it.
struct Http2Response {
  int status = 0;  // The final ":status"; 0 when none arrived.
  hpack::HeaderList headers;
  SliceBuffer body;  // Slices of the received bytes (loop thread only).
  hpack::HeaderList trailers;
  // OK when the stream completed; else why not (reset: the code's name;
  // connection lost: kUnavailable).
  absl::Status error;
};

class Http2Client final : public ConnectionListener,
                          public ConnectionDriver::Owner {
 public:
  using ConnectCallback =
      absl::AnyInvocable<void(absl::StatusOr<std::unique_ptr<Http2Client>>)>;

  struct StreamCallbacks {
    // The final response headers (1xx are skipped).
    absl::AnyInvocable<void(const hpack::HeaderList&, bool end_stream)>
        on_headers;
    // A body piece; released to the windows on return unless manual flow
    // control (then ConsumeData).
    absl::AnyInvocable<void(Slice)> on_data;
    absl::AnyInvocable<void(const hpack::HeaderList&)> on_trailers;
    // A SendData that waited has gone to the connection.
    absl::AnyInvocable<void()> on_writable;
    // Last call: OK when both sides ended normally; else the reset or the
    // connection failure.
    absl::AnyInvocable<void(absl::Status)> on_close;
  };

  // Connects (TCP, then TLS if options.tls), and calls `done` once on the
  // loop thread with a started client or the error. Call on the loop thread.
  static void Connect(EventLoop* loop, const SocketAddress& address,
                      const Http2ClientOptions& options, ConnectCallback done);
  // Runs HTTP/2 over an endpoint that is already connected (and through its
  // TLS handshake). `scheme` is "http" or "https".
  static std::unique_ptr<Http2Client> Create(std::unique_ptr<Endpoint> endpoint,
                                             const Http2ClientOptions& options,
                                             std::string authority,
                                             std::string scheme);
  // Closes the connection; no callback runs (pending streams are dropped).
  ~Http2Client() override;

  // Starts a request stream: `headers` with its pseudo-headers (see
  // Connection::SubmitRequest). Returns the stream id.
  absl::StatusOr<uint32_t> StartRequest(
      absl::Span<const hpack::HeaderField> headers, bool end_stream,
      StreamCallbacks callbacks, bool manual_flow_control = false);
  // Request body octets (no copy); see write_blocked().
  absl::Status SendData(uint32_t stream_id, SliceBuffer data, bool end_stream);
  // True after a SendData whose octets have not all moved to the
  // connection's output yet (sent from a callback, the stream not started,
  // or waiting for the windows); on_writable follows.
  bool write_blocked(uint32_t stream_id) const;
  void ConsumeData(uint32_t stream_id, size_t bytes);
  void Reset(uint32_t stream_id, Http2ErrorCode code = Http2ErrorCode::kCancel);

  // Convenience: a request with :method, :scheme, :authority, :path (plus
  // `extra_headers`) and `body` (none when empty and method is GET or HEAD),
  // collected into one Http2Response.
  void Fetch(std::string_view method, std::string_view path, SliceBuffer body,
             absl::AnyInvocable<void(Http2Response)> done,
             absl::Span<const hpack::HeaderField> extra_headers = {});

  // GOAWAY; the connection closes once the open streams are done.
  void GracefulShutdown() { driver_->GracefulShutdown(); }
  // Closes now: every open stream's on_close gets kUnavailable.
  void Close() { driver_->Abort(absl::UnavailableError("client closed")); }
  // Runs once the connection is closed (from the end of a loop iteration:
  // the client may be destroyed there).
  void SetOnClosed(absl::AnyInvocable<void(absl::Status)> on_closed) {
    on_closed_ = std::move(on_closed);
  }
  bool closed() const { return closed_; }

  EventLoop* loop() const { return driver_->loop(); }
  const std::string& authority() const { return authority_; }
  const std::string& scheme() const { return scheme_; }
  Connection& connection() { return driver_->connection(); }
  ConnectionDriver& driver() { return *driver_; }
  size_t num_open_streams() const { return streams_.size(); }

  // ---- ConnectionListener (the Connection's events; not for users) ----
  void OnHeaders(uint32_t stream_id, const hpack::HeaderList& headers,
                 bool end_stream) override;
  void OnTrailers(uint32_t stream_id,
                  const hpack::HeaderList& trailers) override;
  void OnData(uint32_t stream_id, Slice data) override;
  void OnEndStream(uint32_t stream_id) override;
  void OnStreamReset(uint32_t stream_id, Http2ErrorCode code,
                     bool remote) override;
  void OnStreamClosed(uint32_t stream_id) override;
  void OnStreamStarted(uint32_t stream_id) override;
  void OnStreamWritable(uint32_t stream_id) override;
  void OnGoAway(uint32_t last_stream_id, Http2ErrorCode code,
                std::string_view debug_data) override;
  void OnConnectionError(const ConnectionError& error) override;
  // ---- ConnectionDriver::Owner ----
  void OnDriverClosed(const absl::Status& status) override;

 private:
  // One request stream, from StartRequest until its on_close: the callbacks
  // and what the client tracks for it (its RFC 9113 state is the
  // Connection's).
  struct RequestStream {
    StreamCallbacks callbacks;
    bool manual_flow_control = false;
    bool started = false;  // Its HEADERS went out (OnStreamStarted).
    bool write_blocked = false;
    bool ended = false;  // The response ended (END_STREAM or trailers).
    absl::Status error;
  };

  Http2Client(std::unique_ptr<Endpoint> endpoint,
              const Http2ClientOptions& options, std::string authority,
              std::string scheme);
  RequestStream* Find(uint32_t stream_id);

  std::string authority_;
  std::string scheme_;
  absl::flat_hash_map<uint32_t, std::unique_ptr<RequestStream>> streams_;
  absl::AnyInvocable<void(absl::Status)> on_closed_;
  // OnStreamStarted for ids not in streams_ yet (during SubmitRequest).
  std::vector<uint32_t> started_ids_;
  bool closed_ = false;
  // Why the connection went away (for streams that end with it).
  absl::Status connection_error_;
  std::unique_ptr<ConnectionDriver> driver_;  // Last: destroyed first.
};

}  // namespace transport

#endif  // TRANSPORT_HTTP_HTTP2_CLIENT_H_
