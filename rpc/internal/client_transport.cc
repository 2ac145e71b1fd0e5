#include "rpc/internal/client_transport.h"

#include <utility>
#include <vector>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "rpc/internal/driver_options.h"
#include "rpc/internal/peer_auth.h"
#include "rpc/internal/server_connection.h"

namespace rpc {
namespace internal {
namespace {

transport::ConnectionOptions WithMetadataLimits(
    const ClientTransportOptions& options) {
  transport::ConnectionOptions o = options.connection;
  options.metadata.ApplyTo(&o);
  return o;
}

// How our side ended the connection, by name: "rst_stream_flood (GOAWAY
// ENHANCE_YOUR_CALM sent)", "transport_closed".
std::string Describe(const transport::ConnectionError& error) {
  if (error.reason() == transport::ConnectionErrorReason::kTransportClosed) {
    return error.DebugData();
  }
  return absl::StrCat(error.DebugData(), " (GOAWAY ",
                      transport::Http2ErrorCodeName(error.code()), " sent)");
}

}  // namespace

ClientTransport::ClientTransport(Host* host,
                                 std::unique_ptr<transport::Endpoint> endpoint,
                                 const ClientTransportOptions& options)
    : host_(host),
      peer_(PeerName(*endpoint)),
      auth_context_(AuthContextFor(*endpoint)),
      keepalive_timeout_(options.keepalive_timeout),
      metadata_limits_(options.metadata),
      driver_(std::move(endpoint), WithMetadataLimits(options), this, this,
              RpcDriverOptions()),
      keepalive_(
          &driver_,
          KeepaliveOptions{options.keepalive_time, options.keepalive_timeout,
                           options.keepalive_permit_without_calls},
          [this] { return !calls_.empty(); },
          [this] { OnKeepaliveTimeout(); }) {}

ClientTransport::~ClientTransport() {
  auto calls = std::move(calls_);
  const Status closed(StatusCode::UNAVAILABLE, "channel closed");
  for (auto& [id, call] : calls) call->LoopOnClosed(closed);
}

void ClientTransport::Start() {
  driver_.Start();
  keepalive_.Start();
}

absl::StatusOr<uint32_t> ClientTransport::Submit(
    std::shared_ptr<ClientCall> call,
    absl::Span<const hpack::HeaderField> headers, bool end_stream) {
  if (!accepting()) return absl::UnavailableError("connection is closing");
  // Queued (no limit: a call waits for a stream up to its deadline) while
  // the server's MAX_CONCURRENT_STREAMS is reached; else started now.
  const size_t queued = connection().num_pending_streams();
  absl::StatusOr<uint32_t> id =
      connection().SubmitRequest(headers, end_stream, nullptr);
  if (absl::IsUnavailable(id.status()) && !draining_) {
    // The connection died (or goes away) and the driver has not closed it
    // yet: not picked again (a call retried at once must go elsewhere); the
    // host hears it at the end of this iteration.
    draining_ = true;
    driver_.loop()->Defer([alive = std::weak_ptr<bool>(alive_), this] {
      if (alive.lock() != nullptr) host_->OnTransportDraining(this);
    });
  }
  if (!id.ok()) return id.status();
  if (connection().num_pending_streams() == queued) call->LoopOnStarted();
  calls_[*id] = std::move(call);
  ScheduleFlush();
  if (connection().local_stream_ids_exhausted()) {
    // That was the last stream id: no new calls here; the host opens a new
    // connection (RFC 9113 section 5.1.1). Not from inside the caller's
    // submit: at the end of the loop iteration.
    driver_.loop()->Defer([alive = std::weak_ptr<bool>(alive_), this] {
      if (alive.lock() != nullptr) GracefulClose();
    });
  }
  return id;
}

ClientCall* ClientTransport::Find(uint32_t stream_id) {
  auto it = calls_.find(stream_id);
  return it == calls_.end() ? nullptr : it->second.get();
}

void ClientTransport::TrackWrite(uint32_t stream_id) {
  if (connection().stream_queued_bytes(stream_id) == 0) {
    if (ClientCall* call = Find(stream_id)) call->LoopReleaseWriteCredit();
    return;
  }
  waiting_writers_.insert(stream_id);
}

void ClientTransport::OnStreamStarted(uint32_t stream_id) {
  if (ClientCall* call = Find(stream_id)) call->LoopOnStarted();
}

void ClientTransport::OnHeaders(uint32_t stream_id,
                                const hpack::HeaderList& headers,
                                bool end_stream) {
  if (ClientCall* call = Find(stream_id)) {
    call->LoopCommit();  // The server has the call: no transparent retry.
    call->LoopOnHeaders(headers, end_stream);
  }
}

void ClientTransport::OnTrailers(uint32_t stream_id,
                                 const hpack::HeaderList& trailers) {
  if (ClientCall* call = Find(stream_id)) call->LoopOnTrailers(trailers);
}

void ClientTransport::OnHeaderListTooLarge(uint32_t stream_id,
                                           const hpack::HeaderList& /*partial*/,
                                           size_t list_size) {
  if (ClientCall* call = Find(stream_id)) {
    call->LoopFail(Status(StatusCode::RESOURCE_EXHAUSTED,
                          metadata_limits_.ReceivedTooLarge(list_size)));
  }
}

void ClientTransport::OnData(uint32_t stream_id, transport::Slice data) {
  if (ClientCall* call = Find(stream_id)) {
    call->LoopCommit();
    call->LoopOnData(std::move(data));
  } else {
    connection().ConsumeData(stream_id, data.size());
  }
}

void ClientTransport::OnEndStream(uint32_t stream_id) {
  if (ClientCall* call = Find(stream_id)) call->LoopOnEnd();
}

void ClientTransport::OnStreamReset(uint32_t stream_id,
                                    transport::Http2ErrorCode code,
                                    bool remote) {
  ClientCall* call = Find(stream_id);
  if (call == nullptr) return;
  bool retrying;
  if (!connection().dead()) {
    // A stream error we found names its reason: "header_rule: bad_status
    // (RST_STREAM PROTOCOL_ERROR sent)".
    std::string reason;
    if (!remote && stream_error_id_ == stream_id) {
      reason = absl::StrCat(stream_error_.ToString(), " (RST_STREAM ",
                            transport::Http2ErrorCodeName(code), " sent)");
    }
    retrying =
        call->LoopOnReset(code, remote, /*connection_dead=*/false, reason);
  } else {
    // Why the connection died: the transport's error (TLS alert, reset,
    // EOF) or the HTTP/2 error that killed it.
    std::string reason;
    if (!driver_.close_reason().ok()) {
      reason = std::string(driver_.close_reason().message());
    } else if (!connection().error().ok()) {
      reason = Describe(connection().error());
    }
    if (!goaway_reason_.empty()) {
      // What the server said before it closed (e.g. ENHANCE_YOUR_CALM
      // "rst_stream_flood"), then how the connection ended.
      reason = reason.empty() ? goaway_reason_
                              : absl::StrCat(goaway_reason_, ", then ", reason);
    }
    retrying =
        call->LoopOnReset(code, remote, /*connection_dead=*/true, reason);
  }
  // A transparent retry took the call elsewhere (it keeps itself alive).
  if (retrying) Forget(stream_id);
}

void ClientTransport::OnStreamFailed(uint32_t stream_id,
                                     const transport::StreamError& error) {
  stream_error_id_ = stream_id;
  stream_error_ = error;
}

void ClientTransport::Forget(uint32_t stream_id) {
  calls_.erase(stream_id);
  waiting_writers_.erase(stream_id);
}

bool ClientTransport::RetryQueued(uint32_t stream_id, ClientCall* call) {
  if (!call->LoopRetryUnsent()) return false;
  Forget(stream_id);  // The retry keeps the call alive.
  // Still queued: dropped without a RST_STREAM.
  connection().ResetStream(stream_id, transport::Http2ErrorCode::kCancel);
  return true;
}

void ClientTransport::OnStreamClosed(uint32_t stream_id) {
  auto it = calls_.find(stream_id);
  if (it == calls_.end()) return;
  std::shared_ptr<ClientCall> call = std::move(it->second);
  calls_.erase(it);
  waiting_writers_.erase(stream_id);
  call->LoopOnClosed();
}

void ClientTransport::OnStreamWritable(uint32_t stream_id) {
  if (ClientCall* call = Find(stream_id)) call->LoopReleaseWriteCredit();
  waiting_writers_.erase(stream_id);
}

void ClientTransport::StartDraining() {
  if (draining_) return;
  draining_ = true;
  host_->OnTransportDraining(this);
}

void ClientTransport::GracefulClose() {
  StartDraining();
  driver_.GracefulShutdown();
}

void ClientTransport::OnGoAway(uint32_t /*last_stream_id*/,
                               transport::Http2ErrorCode code,
                               std::string_view debug_data) {
  goaway_reason_ = absl::StrCat(
      "GOAWAY ", transport::Http2ErrorCodeName(code), " \"",
      absl::CHexEscape(absl::string_view(debug_data.data(), debug_data.size())),
      "\"");
  StartDraining();
  // Streams still queued here will never start (the ones above
  // last_stream_id the Connection refuses right after this): retry them
  // elsewhere now rather than at the server's final GOAWAY.
  std::vector<uint32_t> unsent;
  for (auto& [id, call] : calls_) {
    if (!call->loop_on_wire()) unsent.push_back(id);
  }
  for (const uint32_t id : unsent) {
    if (ClientCall* call = Find(id)) RetryQueued(id, call);
  }
  if (IsTooManyPings(code, debug_data)) {
    host_->OnTransportTooManyPings(this);
  }
  driver_.GracefulShutdown();
}

void ClientTransport::OnPingAck(uint64_t opaque) {
  keepalive_.OnPingAck(opaque);
}

void ClientTransport::OnKeepaliveTimeout() {
  StartDraining();
  // The connection fails: every stream is reset at once (OnStreamReset with
  // the connection dead), so calls sent fail UNAVAILABLE "connection failed:
  // keepalive timeout: ...", and calls still queued follow wait-for-ready.
  // (Failing the calls one by one would let a queued call start in the slot
  // that the previous one freed.)
  driver_.Abort(absl::UnavailableError(
      "keepalive timeout: no reply from " + peer_ + " within " +
      absl::FormatDuration(keepalive_timeout_) + " of a PING"));
}

void ClientTransport::OnDriverProgress() {
  keepalive_.OnProgress();
  // OnStreamWritable is promised; this only covers streams whose data left
  // without one (e.g. moved by a later call of the same iteration).
  for (auto it = waiting_writers_.begin(); it != waiting_writers_.end();) {
    const uint32_t id = *it;
    if (connection().stream_queued_bytes(id) != 0) {
      ++it;
      continue;
    }
    if (ClientCall* call = Find(id)) call->LoopReleaseWriteCredit();
    waiting_writers_.erase(it++);
  }
}

void ClientTransport::OnDriverClosed(const absl::Status& /*status*/) {
  StartDraining();
  host_->OnTransportClosed(this);
}

}  // namespace internal
}  // namespace rpc
