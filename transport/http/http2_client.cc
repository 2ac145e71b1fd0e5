#include "transport/http/http2_client.h"

#include <utility>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "transport/io/absl_view.h"
#include "transport/io/tcp.h"
#include "transport/tls/tls_endpoint.h"

namespace transport {

namespace {

absl::Status ResetStatus(Http2ErrorCode code, bool remote) {
  const std::string what =
      absl::StrCat(remote ? "stream reset by the peer: " : "stream reset: ",
                   Http2ErrorCodeName(code));
  return code == Http2ErrorCode::kRefusedStream ? absl::UnavailableError(what)
                                                : absl::AbortedError(what);
}

}  // namespace

Http2Client::Http2Client(std::unique_ptr<Endpoint> endpoint,
                         const Http2ClientOptions& options,
                         std::string authority, std::string scheme)
    : authority_(std::move(authority)), scheme_(std::move(scheme)) {
  ConnectionOptions connection_options = options.connection;
  connection_options.role = Role::kClient;
  driver_ = std::make_unique<ConnectionDriver>(
      std::move(endpoint), connection_options, this, this, options.driver);
}

Http2Client::~Http2Client() {
  // The driver first: it calls nothing, and the streams' callbacks go with
  // the map.
  driver_.reset();
  streams_.clear();
}

std::unique_ptr<Http2Client> Http2Client::Create(
    std::unique_ptr<Endpoint> endpoint, const Http2ClientOptions& options,
    std::string authority, std::string scheme) {
  std::unique_ptr<Http2Client> client(new Http2Client(
      std::move(endpoint), options, std::move(authority), std::move(scheme)));
  client->driver_->Start();
  return client;
}

void Http2Client::Connect(EventLoop* loop, const SocketAddress& address,
                          const Http2ClientOptions& options,
                          ConnectCallback done) {
  std::string authority = options.authority.empty()
                              ? address.ToString()
                              : std::string(options.authority);
  if (options.tls == nullptr) {
    TcpConnect(
        loop, address, options.connect_timeout,
        [options, authority = std::move(authority), done = std::move(done)](
            absl::StatusOr<std::unique_ptr<TcpEndpoint>> endpoint) mutable {
          if (!endpoint.ok()) {
            done(endpoint.status());
            return;
          }
          done(Create(*std::move(endpoint), options, std::move(authority),
                      "http"));
        });
    return;
  }
  const std::string server_name =
      options.server_name.empty() ? address.HostString() : options.server_name;
  TlsConnect(
      loop, address, options.tls, server_name, options.connect_timeout,
      [options, authority = std::move(authority), done = std::move(done)](
          absl::StatusOr<std::unique_ptr<TlsEndpoint>> endpoint) mutable {
        if (!endpoint.ok()) {
          done(endpoint.status());
          return;
        }
        done(Create(*std::move(endpoint), options, std::move(authority),
                    "https"));
      });
}

Http2Client::RequestStream* Http2Client::Find(uint32_t stream_id) {
  auto it = streams_.find(stream_id);
  return it == streams_.end() ? nullptr : it->second.get();
}

absl::StatusOr<uint32_t> Http2Client::StartRequest(
    absl::Span<const hpack::HeaderField> headers, bool end_stream,
    StreamCallbacks callbacks, bool manual_flow_control) {
  if (closed_) return absl::UnavailableError("connection closed");
  auto state = std::make_unique<RequestStream>();
  state->callbacks = std::move(callbacks);
  state->manual_flow_control = manual_flow_control;
  absl::StatusOr<uint32_t> id =
      connection().SubmitRequest(headers, end_stream, nullptr);
  if (!id.ok()) return id.status();
  // OnStreamStarted ran inside SubmitRequest unless the stream waits.
  state->started = !started_ids_.empty() && started_ids_.back() == *id;
  started_ids_.clear();
  streams_.emplace(*id, std::move(state));
  driver_->ScheduleFlush();
  return id;
}

absl::Status Http2Client::SendData(uint32_t stream_id, SliceBuffer data,
                                   bool end_stream) {
  absl::Status status =
      connection().SubmitData(stream_id, std::move(data), end_stream);
  RequestStream* s = Find(stream_id);  // Again: the submit may have closed it.
  // Still queued (inside a callback, on a stream waiting to start, or for a
  // window or the output): OnStreamWritable follows once it has all moved.
  if (status.ok() && s != nullptr &&
      connection().stream_queued_bytes(stream_id) > 0) {
    s->write_blocked = true;
  }
  driver_->ScheduleFlush();
  return status;
}

bool Http2Client::write_blocked(uint32_t stream_id) const {
  auto it = streams_.find(stream_id);
  return it != streams_.end() && it->second->write_blocked;
}

void Http2Client::ConsumeData(uint32_t stream_id, size_t bytes) {
  connection().ConsumeData(stream_id, bytes);
  driver_->ScheduleFlush();
}

void Http2Client::Reset(uint32_t stream_id, Http2ErrorCode code) {
  RequestStream* s = Find(stream_id);
  if (s != nullptr && s->error.ok()) s->error = ResetStatus(code, false);
  connection().ResetStream(stream_id, code);
  driver_->ScheduleFlush();
}

void Http2Client::Fetch(std::string_view method, std::string_view path,
                        SliceBuffer body,
                        absl::AnyInvocable<void(Http2Response)> done,
                        absl::Span<const hpack::HeaderField> extra_headers) {
  struct Pending {
    Http2Response response;
    absl::AnyInvocable<void(Http2Response)> done;
  };
  auto pending = std::make_shared<Pending>();
  pending->done = std::move(done);

  std::vector<hpack::HeaderField> headers;
  headers.reserve(4 + extra_headers.size());
  headers.push_back({":method", method});
  headers.push_back({":scheme", scheme_});
  headers.push_back({":authority", authority_});
  headers.push_back({":path", path});
  for (const hpack::HeaderField& f : extra_headers) headers.push_back(f);

  StreamCallbacks callbacks;
  callbacks.on_headers = [pending](const hpack::HeaderList& h, bool) {
    pending->response.headers = h;
    if (h.size() > 0 && h[0].name == ":status") {
      int status = 0;
      if (absl::SimpleAtoi(ToAbsl(h[0].value), &status)) {
        pending->response.status = status;
      }
    }
  };
  callbacks.on_data = [pending](Slice piece) {
    pending->response.body.Append(std::move(piece));
  };
  callbacks.on_trailers = [pending](const hpack::HeaderList& t) {
    pending->response.trailers = t;
  };
  callbacks.on_close = [pending](absl::Status status) {
    pending->response.error = std::move(status);
    if (pending->done) {
      auto done_cb = std::move(pending->done);
      done_cb(std::move(pending->response));
    }
  };

  const bool has_body = !body.empty();
  absl::StatusOr<uint32_t> id =
      StartRequest(headers, /*end_stream=*/!has_body, std::move(callbacks));
  if (!id.ok()) {
    Http2Response failed;
    failed.error = id.status();
    if (pending->done) pending->done(std::move(failed));
    return;
  }
  if (has_body) {
    absl::Status sent = SendData(*id, std::move(body), /*end_stream=*/true);
    if (!sent.ok()) Reset(*id, Http2ErrorCode::kInternalError);
  }
}

// ---- ConnectionListener ----

void Http2Client::OnHeaders(uint32_t stream_id,
                            const hpack::HeaderList& headers, bool end_stream) {
  RequestStream* s = Find(stream_id);
  if (s == nullptr) return;
  // 1xx informational responses are not the response.
  if (!end_stream && headers.size() > 0 && headers[0].name == ":status" &&
      headers[0].value.size() == 3 && headers[0].value[0] == '1') {
    return;
  }
  if (end_stream) s->ended = true;
  if (s->callbacks.on_headers) s->callbacks.on_headers(headers, end_stream);
}

void Http2Client::OnTrailers(uint32_t stream_id,
                             const hpack::HeaderList& trailers) {
  RequestStream* s = Find(stream_id);
  if (s == nullptr) return;
  s->ended = true;
  if (s->callbacks.on_trailers) s->callbacks.on_trailers(trailers);
}

void Http2Client::OnData(uint32_t stream_id, Slice data) {
  RequestStream* s = Find(stream_id);
  const size_t n = data.size();
  if (s != nullptr && s->callbacks.on_data) {
    s->callbacks.on_data(std::move(data));
    if (s->manual_flow_control) return;
  }
  connection().ConsumeData(stream_id, n);
}

void Http2Client::OnEndStream(uint32_t stream_id) {
  RequestStream* s = Find(stream_id);
  if (s != nullptr) s->ended = true;
}

void Http2Client::OnStreamReset(uint32_t stream_id, Http2ErrorCode code,
                                bool remote) {
  RequestStream* s = Find(stream_id);
  if (s == nullptr || !s->error.ok()) return;
  if (!connection_error_.ok() && !remote) {
    s->error = connection_error_;
  } else if (code == Http2ErrorCode::kCancel && remote && connection().dead()) {
    s->error = absl::UnavailableError("connection lost");
  } else {
    s->error = ResetStatus(code, remote);
  }
}

void Http2Client::OnStreamClosed(uint32_t stream_id) {
  auto it = streams_.find(stream_id);
  if (it == streams_.end()) return;
  std::unique_ptr<RequestStream> s = std::move(it->second);
  streams_.erase(it);
  absl::Status status = s->error;
  if (status.ok() && !s->ended) {
    status = absl::UnavailableError("stream closed before the response ended");
  }
  if (s->callbacks.on_close) s->callbacks.on_close(std::move(status));
}

void Http2Client::OnStreamStarted(uint32_t stream_id) {
  RequestStream* s = Find(stream_id);
  if (s != nullptr) {
    s->started = true;
  } else {
    started_ids_.push_back(stream_id);  // Inside its own SubmitRequest.
  }
}

void Http2Client::OnStreamWritable(uint32_t stream_id) {
  RequestStream* s = Find(stream_id);
  if (s == nullptr || !s->write_blocked) return;
  s->write_blocked = false;
  if (s->callbacks.on_writable) s->callbacks.on_writable();
}

void Http2Client::OnGoAway(uint32_t /*last_stream_id*/, Http2ErrorCode code,
                           std::string_view debug_data) {
  if (code != Http2ErrorCode::kNoError && connection_error_.ok()) {
    connection_error_ = absl::UnavailableError(absl::StrCat(
        "GOAWAY ", Http2ErrorCodeName(code), ": ", ToAbsl(debug_data)));
  }
}

void Http2Client::OnConnectionError(const ConnectionError& error) {
  // "connection error ENHANCE_YOUR_CALM: ping_flood".
  if (connection_error_.ok()) {
    connection_error_ = absl::InternalError(error.ToString());
  }
}

void Http2Client::OnDriverClosed(const absl::Status& status) {
  closed_ = true;
  if (on_closed_) {
    auto cb = std::move(on_closed_);
    cb(status);  // May destroy this.
  }
}

}  // namespace transport
