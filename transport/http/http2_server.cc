#include "transport/http/http2_server.h"

#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/synchronization/notification.h"
#include "absl/time/clock.h"
#include "transport/tls/tls_endpoint.h"

namespace transport {

// ---- ServerSession: one connection's streams ----

// The ConnectionListener of one server connection: maps stream ids to
// Http2ServerStreams and Connection events to their callbacks. Owns the driver.
class ServerSession final : public ConnectionListener,
                            public ConnectionDriver::Owner {
 public:
  ServerSession(Http2Server* server, Http2Server::LoopState* state,
                std::unique_ptr<Endpoint> endpoint,
                const ConnectionOptions& connection_options)
      : server_(server),
        state_(state),
        self_(std::make_shared<ServerSession*>(this)),
        driver_(std::move(endpoint), connection_options, this, this,
                server->options_.driver) {}

  ~ServerSession() override {
    *self_ = nullptr;
    // Streams still here were dropped without callbacks (the driver was
    // destroyed while open): release them quietly.
    streams_.clear();
    graveyard_.clear();
    free_streams_.clear();
  }

  ConnectionDriver& driver() { return driver_; }
  Connection& connection() { return driver_.connection(); }

  void Start() { driver_.Start(); }

  // ---- ConnectionListener ----
  void OnHeaders(uint32_t stream_id, const hpack::HeaderList& headers,
                 bool end_stream) override {
    std::unique_ptr<Http2ServerStream> owned;
    if (!free_streams_.empty()) {
      // A recycled stream: its header storage is reused, no allocation.
      owned = std::move(free_streams_.back());
      free_streams_.pop_back();
      owned->Init(stream_id, headers, end_stream);
    } else {
      owned.reset(new Http2ServerStream(this, stream_id, headers, end_stream));
    }
    Http2ServerStream* stream = owned.get();
    streams_.emplace(stream_id, std::move(owned));
    server_->handler_->OnRequest(stream);
    if (end_stream && !stream->closed_ && stream->callbacks_.on_end) {
      stream->callbacks_.on_end();
    }
  }

  void OnTrailers(uint32_t stream_id,
                  const hpack::HeaderList& trailers) override {
    Http2ServerStream* s = Find(stream_id);
    if (s == nullptr) return;
    s->trailers_ = trailers;
    s->request_ended_ = true;
    if (s->callbacks_.on_end) s->callbacks_.on_end();
  }

  void OnData(uint32_t stream_id, Slice data) override {
    Http2ServerStream* s = Find(stream_id);
    const size_t n = data.size();
    if (s == nullptr) {
      connection().ConsumeData(stream_id, n);
      return;
    }
    if (s->callbacks_.on_data) {
      s->callbacks_.on_data(std::move(data));
      if (s->manual_flow_control_) return;
    }
    connection().ConsumeData(stream_id, n);
  }

  void OnEndStream(uint32_t stream_id) override {
    Http2ServerStream* s = Find(stream_id);
    if (s == nullptr) return;
    s->request_ended_ = true;
    if (s->callbacks_.on_end) s->callbacks_.on_end();
  }

  void OnStreamReset(uint32_t stream_id, Http2ErrorCode code,
                     bool /*remote*/) override {
    Http2ServerStream* s = Find(stream_id);
    if (s != nullptr) s->reset_code_ = code;
  }

  void OnStreamClosed(uint32_t stream_id) override {
    auto it = streams_.find(stream_id);
    if (it == streams_.end()) return;
    std::unique_ptr<Http2ServerStream> s = std::move(it->second);
    streams_.erase(it);
    s->closed_ = true;
    if (s->callbacks_.on_close) s->callbacks_.on_close(s->reset_code_);
    // Freed at the end of the loop iteration, not now: the close may have
    // been delivered from inside one of the stream's own methods (a Write
    // from a timer ends the stream in the Connection's epilogue).
    graveyard_.push_back(std::move(s));
    if (graveyard_.size() == 1) {
      driver_.loop()->Defer([self = self_] {
        if (*self != nullptr) (*self)->Recycle();
      });
    }
  }

  // The Connection promises it for every submit that left data queued
  // (connection.h), so write_blocked_ (set when stream_queued_bytes() > 0
  // after a Write) always clears here.
  void OnStreamWritable(uint32_t stream_id) override {
    Http2ServerStream* s = Find(stream_id);
    if (s == nullptr || !s->write_blocked_) return;
    s->write_blocked_ = false;
    if (s->callbacks_.on_writable) s->callbacks_.on_writable();
  }

  // ---- ConnectionDriver::Owner ----
  void OnDriverClosed(const absl::Status& /*status*/) override {
    server_->SessionClosed(state_, this);  // Destroys this.
  }

 private:
  // Frees the streams closed this iteration, keeping a few for reuse. Their
  // callbacks (and whatever they captured) go now, as before.
  void Recycle() {
    for (std::unique_ptr<Http2ServerStream>& s : graveyard_) {
      if (free_streams_.size() >= kMaxFreeStreams) break;
      s->callbacks_ = Http2ServerStream::Callbacks();
      free_streams_.push_back(std::move(s));
    }
    graveyard_.clear();
  }

  Http2ServerStream* Find(uint32_t stream_id) const {
    auto it = streams_.find(stream_id);
    return it == streams_.end() ? nullptr : it->second.get();
  }

  Http2Server* const server_;
  Http2Server::LoopState* const state_;
  absl::flat_hash_map<uint32_t, std::unique_ptr<Http2ServerStream>> streams_;
  std::vector<std::unique_ptr<Http2ServerStream>> graveyard_;
  // Closed streams kept for reuse (bounded: memory per idle connection).
  static constexpr size_t kMaxFreeStreams = 32;
  std::vector<std::unique_ptr<Http2ServerStream>> free_streams_;
  std::shared_ptr<ServerSession*> self_;
  ConnectionDriver driver_;  // Last: destroyed first.
};

// ---- Http2ServerStream ----

Http2ServerStream::Http2ServerStream(ServerSession* session, uint32_t id,
                                     const hpack::HeaderList& headers,
                                     bool end_stream)
    : session_(session) {
  Init(id, headers, end_stream);
}

void Http2ServerStream::Init(uint32_t id, const hpack::HeaderList& headers,
                             bool end_stream) {
  id_ = id;
  headers_ = headers;  // Reuses the storage of a recycled stream.
  trailers_.clear();
  method_ = path_ = authority_ = scheme_ = std::string_view();
  // callbacks_ are empty: new, or cleared by ServerSession::Recycle.
  manual_flow_control_ = false;
  request_ended_ = end_stream;
  write_blocked_ = false;
  closed_ = false;
  reset_code_ = Http2ErrorCode::kNoError;
  for (const hpack::HeaderField& f : headers_) {
    if (f.name.empty() || f.name[0] != ':') break;
    if (f.name == ":method") {
      method_ = f.value;
    } else if (f.name == ":path") {
      path_ = f.value;
    } else if (f.name == ":authority") {
      authority_ = f.value;
    } else if (f.name == ":scheme") {
      scheme_ = f.value;
    }
  }
}

EventLoop* Http2ServerStream::loop() const { return session_->driver().loop(); }

void Http2ServerStream::SetCallbacks(Callbacks callbacks,
                                     bool manual_flow_control) {
  callbacks_ = std::move(callbacks);
  manual_flow_control_ = manual_flow_control;
}

void Http2ServerStream::ConsumeData(size_t bytes) {
  if (closed_) return;
  session_->connection().ConsumeData(id_, bytes);
  session_->driver().ScheduleFlush();
}

absl::Status Http2ServerStream::Respond(
    absl::Span<const hpack::HeaderField> headers, bool end_stream) {
  absl::Status status =
      session_->connection().SubmitHeaders(id_, headers, end_stream);
  session_->driver().ScheduleFlush();
  return status;
}

absl::Status Http2ServerStream::Write(SliceBuffer data, bool end_stream) {
  Connection& conn = session_->connection();
  absl::Status status = conn.SubmitData(id_, std::move(data), end_stream);
  // Still queued (inside a callback, or waiting for a window or the output):
  // OnStreamWritable follows once it has all moved.
  if (status.ok() && !closed_ && conn.stream_queued_bytes(id_) > 0) {
    write_blocked_ = true;
  }
  session_->driver().ScheduleFlush();
  return status;
}

absl::Status Http2ServerStream::WriteTrailers(
    absl::Span<const hpack::HeaderField> trailers) {
  absl::Status status = session_->connection().SubmitTrailers(id_, trailers);
  session_->driver().ScheduleFlush();
  return status;
}

void Http2ServerStream::Reset(Http2ErrorCode code) {
  if (closed_) return;
  reset_code_ = code;
  session_->connection().ResetStream(id_, code);
  session_->driver().ScheduleFlush();
}

// ---- Http2Server ----

struct Http2Server::LoopState {
  EventLoop* loop = nullptr;
  bool shutting_down = false;
  absl::flat_hash_map<ServerSession*, std::unique_ptr<ServerSession>> sessions;
  // TLS connections still in their handshake, by a never-reused id.
  absl::flat_hash_map<uint64_t, std::unique_ptr<Endpoint>> handshaking;
  uint64_t next_handshake_id = 1;
};

Http2Server::Http2Server(const Http2ServerOptions& options,
                         Http2Handler* handler)
    : options_(options), handler_(handler) {
  options_.connection.role = Role::kServer;
}

Http2Server::~Http2Server() {
  if (!shut_down_) Shutdown(absl::ZeroDuration());
}

absl::StatusOr<std::unique_ptr<Http2Server>> Http2Server::Start(
    const Http2ServerOptions& options, Http2Handler* handler) {
  std::unique_ptr<Http2Server> server(new Http2Server(options, handler));
  EventLoopGroup::Options group_options;
  group_options.num_threads = options.num_threads > 0 ? options.num_threads : 1;
  group_options.pin_threads = options.pin_threads;
  group_options.name_prefix = "h2-server-";
  absl::StatusOr<std::unique_ptr<EventLoopGroup>> group =
      EventLoopGroup::Create(group_options);
  if (!group.ok()) return group.status();
  server->group_ = *std::move(group);
  for (size_t i = 0; i < server->group_->size(); ++i) {
    auto state = std::make_unique<LoopState>();
    state->loop = server->group_->loop(i);
    server->loops_.push_back(std::move(state));
  }

  absl::Status listen_status;
  Http2Server* raw = server.get();
  absl::Notification listening;
  EventLoop* loop0 = server->loops_[0]->loop;
  loop0->Post([raw, loop0, &listen_status, &listening] {
    absl::StatusOr<std::unique_ptr<TcpListener>> listener = TcpListener::Listen(
        loop0, raw->options_.address,
        [raw](ScopedFd fd, const SocketAddress& /*peer*/) {
          raw->accepted_.fetch_add(1, std::memory_order_relaxed);
          const size_t i = raw->next_loop_.fetch_add(1) % raw->loops_.size();
          LoopState* state = raw->loops_[i].get();
          if (state->loop->IsInLoopThread()) {
            raw->Adopt(state, std::move(fd));
          } else {
            state->loop->Post([raw, state, fd = std::move(fd)]() mutable {
              raw->Adopt(state, std::move(fd));
            });
          }
        },
        raw->options_.listener);
    if (listener.ok()) {
      raw->listener_ = *std::move(listener);
      raw->local_address_ = raw->listener_->local_address();
      raw->port_ = raw->listener_->local_port();
    } else {
      listen_status = listener.status();
    }
    listening.Notify();
  });
  listening.WaitForNotification();
  if (!listen_status.ok()) {
    server->shut_down_ = true;
    server->group_.reset();
    return listen_status;
  }
  return server;
}

void Http2Server::Adopt(LoopState* state, ScopedFd fd) {
  if (state->shutting_down) return;  // Closes fd.
  absl::StatusOr<std::unique_ptr<TcpEndpoint>> tcp =
      TcpEndpoint::Create(state->loop, std::move(fd));
  if (!tcp.ok()) return;
  if (options_.tls == nullptr) {
    StartSession(state, *std::move(tcp));
    return;
  }
  absl::StatusOr<std::unique_ptr<TlsSession>> session =
      TlsSession::CreateServer(options_.tls);
  if (!session.ok()) return;
  const uint64_t id = state->next_handshake_id++;
  std::unique_ptr<TlsEndpoint> tls = TlsEndpoint::Create(
      *std::move(tcp), *std::move(session), [this, state, id](absl::Status s) {
        auto it = state->handshaking.find(id);
        if (it == state->handshaking.end()) return;
        std::unique_ptr<Endpoint> endpoint = std::move(it->second);
        state->handshaking.erase(it);
        if (s.ok() && !state->shutting_down) {
          StartSession(state, std::move(endpoint));
        }
        // Else the failed endpoint is destroyed here (allowed from its
        // handshake callback).
      });
  state->handshaking.emplace(id, std::move(tls));
  // A client that never finishes its handshake is dropped after the settings
  // timeout (the same patience the Connection has for a SETTINGS ACK).
  state->loop->RunAfter(
      absl::Nanoseconds(options_.connection.settings_timeout_ns),
      [state, id] { state->handshaking.erase(id); });
}

void Http2Server::StartSession(LoopState* state,
                               std::unique_ptr<Endpoint> endpoint) {
  auto owned = std::make_unique<ServerSession>(this, state, std::move(endpoint),
                                               options_.connection);
  ServerSession* session = owned.get();
  state->sessions.emplace(session, std::move(owned));
  connections_.fetch_add(1, std::memory_order_relaxed);
  session->Start();
  if (state->shutting_down) session->driver().GracefulShutdown();
}

void Http2Server::SessionClosed(LoopState* state, ServerSession* session) {
  if (state->sessions.erase(session) > 0) {
    connections_.fetch_sub(1, std::memory_order_relaxed);
  }
}

void Http2Server::RunOnEveryLoop(absl::AnyInvocable<void(LoopState*)> fn) {
  for (auto& state : loops_) {
    absl::Notification done;
    LoopState* s = state.get();
    s->loop->Post([&fn, s, &done] {
      fn(s);
      done.Notify();
    });
    done.WaitForNotification();
  }
}

void Http2Server::Shutdown(absl::Duration grace) {
  if (shut_down_) return;
  shut_down_ = true;
  // Stop accepting.
  RunOnEveryLoop([this](LoopState* state) {
    if (state == loops_[0].get()) listener_.reset();
    state->shutting_down = true;
    state->handshaking.clear();
    std::vector<ServerSession*> sessions;
    for (auto& entry : state->sessions) sessions.push_back(entry.first);
    for (ServerSession* s : sessions) s->driver().GracefulShutdown();
  });
  const absl::Time deadline = absl::Now() + grace;
  while (num_connections() > 0 && absl::Now() < deadline) {
    absl::SleepFor(absl::Milliseconds(2));
  }
  // Whatever is left is closed now: its streams hear on_close(kCancel).
  RunOnEveryLoop([](LoopState* state) {
    std::vector<ServerSession*> sessions;
    for (auto& entry : state->sessions) sessions.push_back(entry.first);
    for (ServerSession* s : sessions) {
      s->driver().Abort(absl::CancelledError("server shutdown"));
    }
    state->sessions.clear();
  });
  connections_.store(0, std::memory_order_relaxed);
  group_.reset();
}

}  // namespace transport
