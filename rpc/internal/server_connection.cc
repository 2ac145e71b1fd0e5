#include "rpc/internal/server_connection.h"

#include <atomic>
#include <chrono>
#include <random>
#include <utility>

#include "absl/strings/numbers.h"
#include "rpc/compression/codec.h"
#include "rpc/compression/encoding.h"
#include "rpc/internal/driver_options.h"
#include "rpc/internal/header_builder.h"
#include "rpc/internal/message_compression.h"
#include "rpc/internal/peer_auth.h"
#include "rpc/wire/content_type.h"
#include "rpc/wire/timeout.h"

namespace rpc {
namespace internal {

std::string PeerName(const transport::Endpoint& endpoint) {
  if (endpoint.peer_address().family() == AF_UNIX) {
    // gRPC's form "unix:/path". An accepted unix socket's peer is unnamed,
    // so (like gRPC) name the path it was accepted on.
    const transport::SocketAddress& peer = endpoint.peer_address();
    return peer.HostString().empty() ? endpoint.local_address().ToString()
                                     : peer.ToString();
  }
  const std::string addr = endpoint.peer_address().ToString();
  const bool v6 = !addr.empty() && addr[0] == '[';
  return (v6 ? "ipv6:" : "ipv4:") + addr;
}

ServerConnection::ServerConnection(
    Host* host, std::unique_ptr<transport::Endpoint> endpoint,
    const transport::ConnectionOptions& options,
    const ServerKeepaliveOptions& keepalive)
    : host_(host),
      peer_(std::make_shared<const std::string>(PeerName(*endpoint))),
      auth_context_(AuthContextFor(*endpoint)),
      keepalive_options_(keepalive),
      ping_policy_(PingPolicyOptions{keepalive.min_ping_interval_without_data,
                                     keepalive.max_ping_strikes,
                                     keepalive.permit_without_calls}),
      driver_(std::move(endpoint), options, this, this, RpcDriverOptions()),
      keepalive_(
          &driver_,
          KeepaliveOptions{keepalive.keepalive_time,
                           keepalive.keepalive_timeout,
                           keepalive.permit_without_calls},
          [this] { return !calls_.empty(); },
          [this] {
            driver_.Abort(
                absl::UnavailableError("keepalive timeout: no reply to "
                                       "a PING from " +
                                       *peer_));
          }) {}

void ServerConnection::Start() {
  driver_.Start();
  keepalive_.Start();
  StartLifetimeTimers();
}

ServerConnection::~ServerConnection() {
  for (transport::EventLoop::TimerId t :
       {idle_timer_, age_timer_, grace_timer_}) {
    if (t != transport::EventLoop::kInvalidTimer) driver_.loop()->Cancel(t);
  }
  // Every call forgets the connection before any learns it is over: a
  // reaction (OnCancel) may start operations on another call of this
  // half-destroyed connection.
  for (auto& [id, call] : calls_) call->LoopDetach();
  for (auto& [id, call] : calls_) {
    call->LoopOnReset();
    call->LoopOnClosed();
  }
}

void ServerConnection::Abort() {
  driver_.Abort(absl::CancelledError("server shutting down"));
}

ServerCall* ServerConnection::Find(uint32_t stream_id) {
  auto it = calls_.find(stream_id);
  return it == calls_.end() ? nullptr : it->second.get();
}

void ServerConnection::TrackWrite(uint32_t stream_id) {
  if (connection().stream_queued_bytes(stream_id) == 0) {
    if (ServerCall* call = Find(stream_id)) call->LoopReleaseWriteCredit();
    return;
  }
  waiting_writers_.insert(stream_id);
}

void ServerConnection::Reject(uint32_t stream_id, std::string_view http_status,
                              const Status& status) {
  HeaderBuilder h;
  h.Add(":status", http_status);
  h.Add("content-type", kGrpcContentType);
  h.Add("grpc-accept-encoding",
        compression::GrpcAcceptEncodingValue(kSupportedEncodings));
  h.AddStatus(status);
  (void)connection().SubmitHeaders(stream_id, h.fields(), true);
  // The request body, if any, is not wanted.
  connection().ResetStream(stream_id, transport::Http2ErrorCode::kNoError);
}

void ServerConnection::OnHeaders(uint32_t stream_id,
                                 const hpack::HeaderList& headers,
                                 bool end_stream) {
  std::string_view path, method, content_type, timeout, encoding;
  std::optional<std::string_view> accept_encoding;
  for (size_t i = 0; i < headers.size(); ++i) {
    hpack::HeaderField f = headers[i];
    if (f.name == ":path") {
      path = f.value;
    } else if (f.name == ":method") {
      method = f.value;
    } else if (f.name == "content-type") {
      content_type = f.value;
    } else if (f.name == "grpc-timeout") {
      timeout = f.value;
    } else if (f.name == "grpc-encoding") {
      encoding = f.value;
    } else if (f.name == "grpc-accept-encoding") {
      accept_encoding = f.value;
    }
  }
  if (method != "POST") {
    Reject(stream_id, "405",
           Status(StatusCode::INTERNAL, "gRPC requires method POST"));
    return;
  }
  if (!IsGrpcContentType(content_type)) {
    Reject(stream_id, "415",
           Status(StatusCode::INTERNAL, "invalid gRPC request content-type \"" +
                                            std::string(content_type) + "\""));
    return;
  }
  // An encoding we cannot decode: UNIMPLEMENTED naming the ones we can (also
  // listed in grpc-accept-encoding), as gRPC's compression spec asks.
  compression::Encoding request_encoding = compression::Encoding::kIdentity;
  if (!encoding.empty()) {
    std::optional<compression::Encoding> e =
        compression::ParseGrpcEncoding(encoding);
    if (!e.has_value()) {
      Reject(stream_id, "200",
             FromAbslStatus(compression::UnsupportedEncodingError(
                 encoding, kSupportedEncodings)));
      return;
    }
    request_encoding = *e;
  }
  const Service::Method* m = host_->FindMethod(path);
  if (m == nullptr) {
    Reject(stream_id, "200",
           Status(StatusCode::UNIMPLEMENTED,
                  "unknown method " + std::string(path)));
    return;
  }
  auto call = std::make_shared<ServerCall>(this, driver_.loop(), stream_id, m,
                                           host_->limits());
  call->peer = peer_;
  call->auth_context = auth_context_;
  call->live_callback_calls = host_->live_callback_calls();
  call->request_encoding = request_encoding;
  call->LoopSetRequestEncoding(request_encoding);
  if (accept_encoding.has_value()) {
    if (accept_encoding_ == nullptr || *accept_encoding_ != *accept_encoding) {
      accept_encoding_ = std::make_shared<const std::string>(*accept_encoding);
    }
    call->accept_encoding = accept_encoding_;
  }
  ParseMetadata(headers, &call->client_metadata);
  if (!timeout.empty()) {
    absl::StatusOr<absl::Duration> d = ParseTimeout(timeout);
    if (d.ok()) call->deadline = absl::Now() + *d;
  }
  calls_[stream_id] = call;
  call->LoopStartDeadlineTimer();
  if (end_stream) call->LoopOnEnd();
  // Callback handlers run inline on this loop (Server::Dispatch): the unary
  // and server-streaming ones start once the request is whole, so that the
  // method gets it.
  if (m->callback_handler != nullptr &&
      (m->type == RpcType::kUnary || m->type == RpcType::kServerStreaming) &&
      !end_stream) {
    awaiting_request_.insert(stream_id);
    return;
  }
  host_->Dispatch(std::move(call));
}

void ServerConnection::OnRequestEnd(uint32_t stream_id) {
  auto it = calls_.find(stream_id);
  if (it == calls_.end()) return;
  it->second->LoopOnEnd();
  if (awaiting_request_.erase(stream_id) > 0) host_->Dispatch(it->second);
}

void ServerConnection::OnTrailers(uint32_t stream_id,
                                  const hpack::HeaderList& /*trailers*/) {
  OnRequestEnd(stream_id);
}

void ServerConnection::OnHeaderListTooLarge(
    uint32_t stream_id, const hpack::HeaderList& /*partial*/,
    size_t list_size) {
  const Status status(StatusCode::RESOURCE_EXHAUSTED,
                      host_->limits().metadata.ReceivedTooLarge(list_size));
  if (ServerCall* call = Find(stream_id)) {
    call->LoopAbort(status);  // Its trailers: the call ends here.
    return;
  }
  Reject(stream_id, "200", status);
}

void ServerConnection::OnData(uint32_t stream_id, transport::Slice data) {
  if (ServerCall* call = Find(stream_id)) {
    call->LoopOnData(std::move(data));
  } else {
    connection().ConsumeData(stream_id, data.size());
  }
}

void ServerConnection::OnEndStream(uint32_t stream_id) {
  OnRequestEnd(stream_id);
}

void ServerConnection::OnStreamReset(uint32_t stream_id,
                                     transport::Http2ErrorCode /*code*/,
                                     bool /*remote*/) {
  if (ServerCall* call = Find(stream_id)) call->LoopOnReset();
}

void ServerConnection::OnStreamClosed(uint32_t stream_id) {
  auto it = calls_.find(stream_id);
  if (it != calls_.end()) {
    it->second->LoopOnClosed();
    calls_.erase(it);
    waiting_writers_.erase(stream_id);
    awaiting_request_.erase(stream_id);
  }
  if (!HasCalls()) idle_since_ns_ = driver_.NowNs();
}

void ServerConnection::OnStreamWritable(uint32_t stream_id) {
  if (ServerCall* call = Find(stream_id)) call->LoopReleaseWriteCredit();
  waiting_writers_.erase(stream_id);
}

void ServerConnection::OnDriverProgress() {
  keepalive_.OnProgress();
  // OnStreamWritable is promised; this only covers streams whose data left
  // without one (e.g. moved by a later call of the same iteration).
  for (auto it = waiting_writers_.begin(); it != waiting_writers_.end();) {
    const uint32_t id = *it;
    if (connection().stream_queued_bytes(id) != 0) {
      ++it;
      continue;
    }
    if (ServerCall* call = Find(id)) call->LoopReleaseWriteCredit();
    waiting_writers_.erase(it++);
  }
}

// ---- Keepalive and connection lifetime ----

namespace {
std::atomic<uint64_t> g_too_many_pings_goaways{0};
}  // namespace

uint64_t ServerConnection::too_many_pings_goaways() {
  return g_too_many_pings_goaways.load();
}

bool ServerConnection::HasCalls() {
  return !calls_.empty() || connection().num_active_streams() > 0;
}

void ServerConnection::OnPing(uint64_t /*opaque*/) {
  if (!ping_policy_.OnPing(driver_.NowNs(), connection().headers_or_data_sent(),
                           HasCalls())) {
    return;
  }
  ++g_too_many_pings_goaways;
  // Kills the connection (its calls are cancelled); the driver flushes the
  // GOAWAY and closes.
  connection().GoAway(transport::Http2ErrorCode::kEnhanceYourCalm,
                      kTooManyPingsDebug);
}

void ServerConnection::OnPingAck(uint64_t opaque) {
  keepalive_.OnPingAck(opaque);
}

void ServerConnection::StartLifetimeTimers() {
  const int64_t now = driver_.NowNs();
  idle_since_ns_ = now;
  // Durations, not deadlines: RunAfter takes any length (beyond a century
  // is never) where now + a huge duration would overflow.
  if (keepalive_options_.max_connection_idle != absl::InfiniteDuration()) {
    idle_timer_ = driver_.loop()->RunAfter(
        keepalive_options_.max_connection_idle, [this] { OnIdleTimer(); });
  }
  if (keepalive_options_.max_connection_age != absl::InfiniteDuration()) {
    // +-10% so that connections made together do not all reconnect together.
    thread_local std::minstd_rand rng(std::random_device{}());
    const double jitter = std::uniform_real_distribution<double>(0.9, 1.1)(rng);
    age_timer_ =
        driver_.loop()->RunAfter(keepalive_options_.max_connection_age * jitter,
                                 [this] { OnAgeTimer(); });
  }
}

void ServerConnection::OnIdleTimer() {
  idle_timer_ = transport::EventLoop::kInvalidTimer;
  if (driver_.closed()) return;
  const absl::Duration max_idle = keepalive_options_.max_connection_idle;
  if (HasCalls()) {
    // Busy: look again later (idle_since_ns_ moves when the last call ends).
    idle_timer_ = driver_.loop()->RunAfter(max_idle, [this] { OnIdleTimer(); });
    return;
  }
  const absl::Duration idle =
      absl::Nanoseconds(driver_.NowNs() - idle_since_ns_);
  if (idle < max_idle) {
    idle_timer_ =
        driver_.loop()->RunAfter(max_idle - idle, [this] { OnIdleTimer(); });
    return;
  }
  driver_.GracefulShutdown();  // GOAWAY; closes once drained.
}

void ServerConnection::OnAgeTimer() {
  age_timer_ = transport::EventLoop::kInvalidTimer;
  if (driver_.closed()) return;
  driver_.GracefulShutdown();
  if (keepalive_options_.max_connection_age_grace != absl::InfiniteDuration()) {
    grace_timer_ = driver_.loop()->RunAfter(
        keepalive_options_.max_connection_age_grace, [this] {
          grace_timer_ = transport::EventLoop::kInvalidTimer;
          // Calls still running are cancelled; their clients see UNAVAILABLE.
          driver_.Abort(absl::UnavailableError(
              "max connection age and its grace period passed"));
        });
  }
}

void ServerConnection::OnDriverClosed(const absl::Status& /*status*/) {
  host_->OnConnectionClosed(this);
}

}  // namespace internal
}  // namespace rpc
