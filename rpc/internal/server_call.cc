#include "rpc/internal/server_call.h"

#include <utility>

#include "rpc/compression/accept_encoding.h"
#include "rpc/compression/negotiator.h"
#include "rpc/internal/header_builder.h"
#include "rpc/internal/metadata_limits.h"
#include "rpc/internal/server_connection.h"
#include "rpc/wire/content_type.h"

namespace rpc {
namespace internal {

ServerCall::ServerCall(ServerConnection* connection, transport::EventLoop* loop,
                       uint32_t stream_id, const Service::Method* method,
                       const ServerCallLimits& limits)
    : connection_(connection),
      loop_(loop),
      stream_id_(stream_id),
      method_(method),
      limits_(limits),
      core_(limits.read_bound, limits.write_bound),
      deframer_(limits.max_receive_message_size),
      decompressor_(limits.max_receive_message_size),
      single_response_(method->type == RpcType::kUnary ||
                       method->type == RpcType::kClientStreaming),
      compressor_(compression::Encoding::kIdentity,
                  limits.compression_threshold) {}

ServerCall::~ServerCall() = default;

compression::Encoding ChooseResponseEncoding(
    compression::Encoding requested,
    const std::optional<std::string>& accept_encoding) {
  using compression::Encoding;
  if (requested == Encoding::kIdentity || !accept_encoding.has_value()) {
    return Encoding::kIdentity;
  }
  // The fast path answers the common values without parsing.
  const std::optional<Encoding> negotiated =
      compression::kDefaultNegotiator.Negotiate(*accept_encoding);
  if (negotiated == requested) return requested;
  if (compression::EffectiveScore(
          compression::ParseAcceptEncoding(*accept_encoding), requested) > 0) {
    return requested;
  }
  return negotiated.value_or(Encoding::kIdentity);
}

void ServerCall::ResolveResponseEncoding() {
  if (handler_headers_sent_) return;
  response_encoding_ = ChooseResponseEncoding(
      requested_encoding_.value_or(limits_.default_encoding), accept_encoding);
  compressor_.set_encoding(response_encoding_);
}

void ServerCall::Post(transport::EventLoop::Task task) {
  // A handler's operation runs on its own thread when the connection's loop
  // sleeps (no wake-up of the loop; rpc/README.md, "Threading model").
  loop_->RunInlineOrPost(std::move(task));
}

// ---- Handler thread ----

bool ServerCall::Read(transport::SliceBuffer* payload) {
  size_t consume = 0;
  CallCore::ReadResult r = core_.Read(payload, &consume);
  if (consume > 0) {
    Post([self = shared_from_this(), consume] {
      if (self->connection_ == nullptr) return;
      self->connection_->connection().ConsumeData(self->stream_id_, consume);
      self->connection_->ScheduleFlush();
    });
  }
  return r == CallCore::ReadResult::kMessage;
}

bool ServerCall::Write(transport::SliceBuffer payload,
                       Metadata* initial_metadata) {
  if (handler_finished_ || !send_error_.ok()) return false;
  if (payload.size() > limits_.max_send_message_size) {
    send_error_ = Status(
        StatusCode::RESOURCE_EXHAUSTED,
        "response message larger than max (" + std::to_string(payload.size()) +
            " vs. " + std::to_string(limits_.max_send_message_size) + ")");
    return false;
  }
  ResolveResponseEncoding();
  transport::SliceBuffer framed;
  if (absl::Status s = compressor_.Frame(std::move(payload), &framed);
      !s.ok()) {
    send_error_ = FromAbslStatus(s);
    return false;
  }
  if (single_response_ && !has_pending_response_ && !handler_headers_sent_) {
    if (core_.cancelled()) return false;
    has_pending_response_ = true;
    pending_response_ = std::move(framed);
    pending_initial_ = std::move(*initial_metadata);
    handler_headers_sent_ = true;
    return true;
  }
  if (!core_.AcquireWriteCredit(framed.size())) return false;
  Metadata initial;
  const bool send_headers = !handler_headers_sent_;
  if (send_headers) {
    handler_headers_sent_ = true;
    initial = std::move(*initial_metadata);
  }
  Post([self = shared_from_this(), framed = std::move(framed),
        initial = std::move(initial), send_headers]() mutable {
    ServerConnection* conn = self->connection_;
    if (conn == nullptr || self->status_sent_) return;
    if (send_headers) self->LoopSendHeaders(initial);
    if (!conn->connection()
             .SubmitData(self->stream_id_, std::move(framed), false)
             .ok()) {
      return;
    }
    conn->TrackWrite(self->stream_id_);
    conn->ScheduleFlush();
  });
  return true;
}

void ServerCall::SendInitialMetadata(Metadata* initial_metadata) {
  if (handler_headers_sent_ || handler_finished_) return;
  ResolveResponseEncoding();
  handler_headers_sent_ = true;
  Post([self = shared_from_this(),
        initial = std::move(*initial_metadata)]() mutable {
    ServerConnection* conn = self->connection_;
    if (conn == nullptr || self->status_sent_) return;
    self->LoopSendHeaders(initial);
    conn->ScheduleFlush();
  });
}

void ServerCall::Finish(const Status& status, Metadata* initial_metadata,
                        Metadata* trailing_metadata) {
  if (handler_finished_) return;
  handler_finished_ = true;
  Metadata initial;
  if (!handler_headers_sent_) initial = std::move(*initial_metadata);
  Status final_status = send_error_.ok() ? status : send_error_;
  const bool has_response = has_pending_response_;
  if (has_response) initial = std::move(pending_initial_);
  Post([self = shared_from_this(), final_status, initial = std::move(initial),
        trailing = std::move(*trailing_metadata), has_response,
        response = std::move(pending_response_)]() mutable {
    ServerConnection* conn = self->connection_;
    if (conn == nullptr || self->status_sent_) return;
    if (has_response && final_status.ok()) {
      self->LoopSendHeaders(initial);
      (void)conn->connection().SubmitData(self->stream_id_, std::move(response),
                                          false);
    }
    self->LoopSendStatus(final_status, initial, trailing);
    conn->ScheduleFlush();
  });
}

// ---- Loop thread ----

void ServerCall::LoopSendHeaders(const Metadata& initial) {
  if (headers_sent_ || status_sent_) return;
  HeaderBuilder h;
  h.Add(":status", "200");
  h.Add("content-type", kGrpcContentType);
  if (response_encoding_ != compression::Encoding::kIdentity) {
    h.Add("grpc-encoding", compression::EncodingName(response_encoding_));
  }
  h.Add("grpc-accept-encoding",
        compression::GrpcAcceptEncodingValue(kSupportedEncodings));
  h.AddMetadata(initial);
  transport::Connection& c = connection_->connection();
  const absl::Status sent = c.SubmitHeaders(stream_id_, h.fields(), false);
  if (OverPeerLimit(sent, h.fields(), c)) {
    // Nothing was sent: the status goes Trailers-Only.
    LoopAbort(SubmitFailure(sent, h.fields(), c, StatusCode::INTERNAL));
    return;
  }
  headers_sent_ = true;
}

namespace {

// The block that carries a status: Trailers-Only (with the response
// headers' fields and the initial metadata) or trailers.
void BuildStatusBlock(bool trailers_only, const Status& status,
                      const Metadata& initial, const Metadata& trailing,
                      HeaderBuilder* h) {
  if (trailers_only) {
    h->Add(":status", "200");
    h->Add("content-type", kGrpcContentType);
    h->AddMetadata(initial);
  }
  h->AddStatus(status);
  h->AddMetadata(trailing);
}

}  // namespace

void ServerCall::LoopSendStatus(const Status& status, const Metadata& initial,
                                const Metadata& trailing) {
  if (status_sent_) return;
  status_sent_ = true;
  transport::Connection& c = connection_->connection();
  const bool trailers_only = !headers_sent_;
  headers_sent_ = true;
  const auto submit = [&](const HeaderBuilder& block) {
    return trailers_only ? c.SubmitHeaders(stream_id_, block.fields(), true)
                         : c.SubmitTrailers(stream_id_, block.fields());
  };
  HeaderBuilder h;
  BuildStatusBlock(trailers_only, status, initial, trailing, &h);
  absl::Status sent = submit(h);
  if (OverPeerLimit(sent, h.fields(), c)) {
    // What the client would refuse (nothing was sent): tell it why instead.
    HeaderBuilder bare;
    BuildStatusBlock(trailers_only,
                     SubmitFailure(sent, h.fields(), c, StatusCode::INTERNAL),
                     {}, {}, &bare);
    sent = submit(bare);
  }
  if (absl::IsResourceExhausted(sent)) {
    c.ResetStream(stream_id_, transport::Http2ErrorCode::kInternalError);
  }
  if (deadline_timer_ != transport::EventLoop::kInvalidTimer) {
    loop_->Cancel(deadline_timer_);
    deadline_timer_ = transport::EventLoop::kInvalidTimer;
  }
}

void ServerCall::LoopStartDeadlineTimer() {
  if (deadline == absl::InfiniteFuture()) return;
  deadline_timer_ =
      loop_->RunAfter(deadline - absl::Now(), [self = shared_from_this()] {
        self->deadline_timer_ = transport::EventLoop::kInvalidTimer;
        ServerConnection* conn = self->connection_;
        if (conn == nullptr || self->status_sent_) return;
        self->core_.Cancel();
        self->LoopSendStatus(
            Status(StatusCode::DEADLINE_EXCEEDED, "Deadline Exceeded"), {}, {});
        // The response is complete: NO_ERROR asks the client to stop sending
        // (RFC 9113 8.1), as gRPC's servers do. A CANCEL here made grpc++
        // clients sometimes report the reset instead of the status.
        conn->connection().ResetStream(self->stream_id_,
                                       transport::Http2ErrorCode::kNoError);
        conn->ScheduleFlush();
      });
}

void ServerCall::LoopOnData(transport::Slice data) {
  const size_t n = data.size();
  if (status_sent_) {
    connection_->connection().ConsumeData(stream_id_, n);
    return;
  }
  absl::Status s = deframer_.Push(std::move(data));
  const size_t consume = core_.OnDataBytes(n);
  if (consume > 0) connection_->connection().ConsumeData(stream_id_, consume);
  if (!s.ok()) {
    LoopAbort(FromAbslStatus(s));
    return;
  }
  ReceivedMessage msg;
  while (deframer_.Next(&msg)) {
    transport::SliceBuffer payload;
    if (absl::Status u = decompressor_.Unpack(&msg, &payload); !u.ok()) {
      LoopAbort(FromAbslStatus(u));
      return;
    }
    core_.PushMessage(std::move(payload));
  }
}

void ServerCall::LoopOnEnd() {
  if (status_sent_) return;
  absl::Status s = deframer_.Finish();
  if (!s.ok()) {
    LoopAbort(FromAbslStatus(s));
    return;
  }
  core_.PushEnd();
}

void ServerCall::LoopAbort(const Status& status) {
  if (status_sent_) return;
  ServerConnection* conn = connection_;  // the status may close the stream
  core_.Cancel();
  LoopSendStatus(status, {}, {});
  conn->ScheduleFlush();  // also from a timer (Server's worker wait)
}

void ServerCall::LoopOnReset() {
  status_sent_ = true;
  core_.Cancel();
}

void ServerCall::LoopOnClosed() {
  if (!status_sent_) core_.Cancel();
  if (deadline_timer_ != transport::EventLoop::kInvalidTimer) {
    loop_->Cancel(deadline_timer_);
    deadline_timer_ = transport::EventLoop::kInvalidTimer;
  }
  connection_ = nullptr;
}

}  // namespace internal
}  // namespace rpc
