#include "rpc/internal/server_call.h"

#include <utility>

#include "google/protobuf/message_lite.h"
#include "rpc/compression/accept_encoding.h"
#include "rpc/compression/negotiator.h"
#include "rpc/internal/header_builder.h"
#include "rpc/internal/metadata_limits.h"
#include "rpc/internal/server_connection.h"
#include "rpc/server_callback.h"
#include "rpc/wire/content_type.h"
#include "rpc/wire/zero_copy_stream.h"

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
      sync_(method->callback_handler != nullptr
                ? nullptr
                : std::make_unique<SyncState>(limits.read_bound,
                                              limits.write_bound)),
      deframer_(limits.max_receive_message_size),
      decompressor_(limits.max_receive_message_size),
      single_response_(method->type == RpcType::kUnary ||
                       method->type == RpcType::kClientStreaming),
      compressor_(compression::Encoding::kIdentity,
                  limits.compression_threshold) {}

ServerCall::~ServerCall() {
  // A call that ends with its connection before its reactor finished keeps
  // the state alive through the context's reference, so this only runs once
  // the state is gone.
}

compression::Encoding ChooseResponseEncoding(
    compression::Encoding requested,
    std::optional<std::string_view> accept_encoding) {
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
      requested_encoding_.value_or(limits_.default_encoding),
      accept_encoding != nullptr
          ? std::optional<std::string_view>(*accept_encoding)
          : std::nullopt);
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
  CallCore::ReadResult r = sync_->core.Read(payload, &consume);
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
  if (handler_finished_ || !sync_->send_error.ok()) return false;
  if (payload.size() > limits_.max_send_message_size) {
    sync_->send_error = Status(
        StatusCode::RESOURCE_EXHAUSTED,
        "response message larger than max (" + std::to_string(payload.size()) +
            " vs. " + std::to_string(limits_.max_send_message_size) + ")");
    return false;
  }
  ResolveResponseEncoding();
  transport::SliceBuffer framed;
  if (absl::Status s = compressor_.Frame(std::move(payload), &framed);
      !s.ok()) {
    sync_->send_error = FromAbslStatus(s);
    return false;
  }
  if (single_response_ && !sync_->has_pending_response &&
      !handler_headers_sent_) {
    if (sync_->core.cancelled()) return false;
    sync_->has_pending_response = true;
    sync_->pending_response = std::move(framed);
    sync_->pending_initial = std::move(*initial_metadata);
    handler_headers_sent_ = true;
    return true;
  }
  if (!sync_->core.AcquireWriteCredit(framed.size())) return false;
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
    self->LoopSendMessage(std::move(framed), true);
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
  Status final_status = sync_->send_error.ok() ? status : sync_->send_error;
  const bool has_response = sync_->has_pending_response;
  if (has_response) initial = std::move(sync_->pending_initial);
  Post([self = shared_from_this(), final_status, initial = std::move(initial),
        trailing = std::move(*trailing_metadata), has_response,
        response = std::move(sync_->pending_response)]() mutable {
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
        self->LoopSendStatus(
            Status(StatusCode::DEADLINE_EXCEEDED, "Deadline Exceeded"), {}, {});
        // The response is complete: NO_ERROR asks the client to stop sending
        // (RFC 9113 8.1), as gRPC's servers do. A CANCEL here made grpc++
        // clients sometimes report the reset instead of the status.
        conn->connection().ResetStream(self->stream_id_,
                                       transport::Http2ErrorCode::kNoError);
        conn->ScheduleFlush();
        self->LoopCancel();
      });
}

bool ServerCall::LoopSendMessage(transport::SliceBuffer framed, bool flush) {
  ServerConnection* conn = connection_;
  if (conn == nullptr || status_sent_) return false;
  if (!conn->connection()
           .SubmitData(stream_id_, std::move(framed), false)
           .ok()) {
    return false;
  }
  conn->TrackWrite(stream_id_);
  if (flush) conn->ScheduleFlush();
  return true;
}

void ServerCall::LoopOnData(transport::Slice data) {
  const size_t n = data.size();
  if (status_sent_) {
    connection_->connection().ConsumeData(stream_id_, n);
    return;
  }
  absl::Status s = deframer_.Push(std::move(data));
  size_t consume = n;
  if (sync_ != nullptr) {
    consume = sync_->core.OnDataBytes(n);
  } else if (inbox_bytes_ >= limits_.read_bound) {
    // The reactor reads slower than the client sends: the octets are owed
    // until it catches up, so the stream window stops the client.
    owed_bytes_ += n;
    consume = 0;
  }
  if (consume > 0) connection_->connection().ConsumeData(stream_id_, consume);
  if (!s.ok()) {
    LoopAbort(FromAbslStatus(s));
    return;
  }
  ReceivedMessage msg;
  bool received = false;
  while (deframer_.Next(&msg)) {
    transport::SliceBuffer payload;
    if (absl::Status u = decompressor_.Unpack(&msg, &payload); !u.ok()) {
      LoopAbort(FromAbslStatus(u));
      return;
    }
    if (sync_ != nullptr) {
      sync_->core.PushMessage(std::move(payload));
    } else {
      inbox_bytes_ += payload.size() + 5;
      inbox_.push_back(std::move(payload));
      received = true;
    }
  }
  if (received) Pump();
}

void ServerCall::LoopOnEnd() {
  if (status_sent_) return;
  absl::Status s = deframer_.Finish();
  if (!s.ok()) {
    LoopAbort(FromAbslStatus(s));
    return;
  }
  if (sync_ != nullptr) {
    sync_->core.PushEnd();
    return;
  }
  input_ended_ = true;
  Pump();
}

void ServerCall::LoopAbort(const Status& status) {
  if (status_sent_) return;
  // Sending may reset and close the stream (connection_ is then null): the
  // connection itself lives on for this loop iteration.
  if (ServerConnection* conn = connection_) {
    LoopSendStatus(status, {}, {});
    conn->ScheduleFlush();
  }
  LoopCancel();
}

void ServerCall::LoopOnReset() {
  status_sent_ = true;
  LoopCancel();
}

void ServerCall::LoopOnClosed() {
  if (deadline_timer_ != transport::EventLoop::kInvalidTimer) {
    loop_->Cancel(deadline_timer_);
    deadline_timer_ = transport::EventLoop::kInvalidTimer;
  }
  connection_ = nullptr;
  // A stream that closed after its status went out (the reactor's Finish, or
  // the library's) is not cancelled for a sync handler that already
  // returned; a reactor still running learns it is over.
  if (sync_ != nullptr) {
    if (!status_sent_) sync_->core.Cancel();
    return;
  }
  LoopCancel();
}

void ServerCall::LoopCancel() {
  if (sync_ != nullptr) {
    sync_->core.Cancel();
    return;
  }
  inbox_.clear();
  inbox_head_ = 0;
  inbox_bytes_ = 0;
  ReturnOwedOctets();
  last_message_.reset();
  if (write_state_ == WriteState::kAwaitingCredit) {
    // After the reactor's status the stream closes once its data left.
    write_state_ = WriteState::kDone;
    write_ok_ = finish_applied_;
  }
  if (!finish_applied_ && !cancelled_.load(std::memory_order_relaxed)) {
    cancelled_.store(true, std::memory_order_release);
    cancel_due_ = true;
  }
  Pump();
}

void ServerCall::LoopReleaseWriteCredit() {
  if (sync_ != nullptr) {
    sync_->core.ReleaseWriteCredit();
    return;
  }
  write_inflight_ = 0;
  if (write_state_ == WriteState::kAwaitingCredit) {
    write_state_ = WriteState::kDone;
    write_ok_ = true;
    Pump();
  }
}

// ---- Reactor mode ----

Status ServerCall::FrameResponse(const google::protobuf::MessageLite& msg,
                                 bool no_compression,
                                 transport::SliceBuffer* framed) {
  transport::SliceBuffer payload;
  if (!SerializeToSliceBuffer(msg, &payload)) {
    return Status(StatusCode::INTERNAL, "error serializing response message");
  }
  if (payload.size() > limits_.max_send_message_size) {
    return Status(StatusCode::RESOURCE_EXHAUSTED,
                  "response message larger than max (" +
                      std::to_string(payload.size()) + " vs. " +
                      std::to_string(limits_.max_send_message_size) + ")");
  }
  ResolveResponseEncoding();
  absl::Status s = no_compression
                       ? WriteMessage(std::move(payload), false, framed)
                       : compressor_.Frame(std::move(payload), framed);
  return FromAbslStatus(s);
}

void ServerCall::RunOnLoop(absl::AnyInvocable<void()> op) {
  if (loop_->IsInLoopThread()) {
    if (in_pump_) {
      // From this call's own reaction (or its method): the Pump running
      // delivers what the operation made due once the reaction returned.
      op();
      return;
    }
    // From elsewhere on the loop (another call's reaction, a task): the
    // operation applies now, but its reactions never run inside this Start*
    // (as in grpc++): the caller may hold a lock they take, or delete what
    // it iterates. They come from a pump deferred to the end of the
    // iteration.
    in_pump_ = true;
    op();
    in_pump_ = false;
    DeferPump();
    return;
  }
  posted_ops_.fetch_add(1, std::memory_order_relaxed);
  loop_->Post([self = shared_from_this(), op = std::move(op)]() mutable {
    self->posted_ops_.fetch_sub(1, std::memory_order_release);
    // A posted task runs in no reaction: the reactions may come at once.
    const bool outer = !self->in_pump_;
    self->in_pump_ = true;
    op();
    if (!outer) return;
    self->in_pump_ = false;
    self->Pump();
  });
}

void ServerCall::DeferPump() {
  if (pump_deferred_ || reactor_ == nullptr) return;
  pump_deferred_ = true;
  loop_->Defer([self = shared_from_this()] {
    self->pump_deferred_ = false;
    self->Pump();
  });
}

void ServerCall::ReactorSendInitialMetadata() {
  RunOnLoop([this] {
    if (done_) return;
    if (initial_metadata_started_) {
      // Its reaction comes (false), the call ends with INTERNAL.
      ++failed_initial_metadata_;
      LoopMisuse("StartSendInitialMetadata called twice");
      return;
    }
    initial_metadata_started_ = true;
    initial_metadata_done_ = true;
    initial_metadata_ok_ = false;
    if (connection_ == nullptr || status_sent_ || callback_state_ == nullptr) {
      return;
    }
    if (!handler_headers_sent_) {
      ServerConnection* conn = connection_;  // LoopSendHeaders may close.
      ResolveResponseEncoding();
      handler_headers_sent_ = true;
      LoopSendHeaders(*callback_state_->ctx.mutable_initial_metadata());
      conn->ScheduleFlush();
    }
    initial_metadata_ok_ = headers_sent_ && !status_sent_;
  });
}

void ServerCall::ReactorRead(google::protobuf::MessageLite* msg) {
  RunOnLoop([this, msg] { LoopReactorRead(msg); });
}

void ServerCall::ReactorWrite(const google::protobuf::MessageLite* msg,
                              WriteOptions options) {
  RunOnLoop([this, msg, options] { LoopReactorWrite(msg, options); });
}

void ServerCall::ReactorFinish(Status status) {
  RunOnLoop([this, status = std::move(status)] { LoopReactorFinish(status); });
}

void ServerCall::ReactorWriteAndFinish(const google::protobuf::MessageLite* msg,
                                       WriteOptions options, Status status) {
  RunOnLoop([this, msg, options, status = std::move(status)]() mutable {
    LoopReactorWrite(msg, options.set_last_message(), /*and_finish=*/true);
    LoopReactorFinish(status);
  });
}

void ServerCall::LoopMisuse(const char* what) {
  LoopAbort(Status(StatusCode::INTERNAL, what));
}

void ServerCall::LoopReactorRead(google::protobuf::MessageLite* msg) {
  if (done_) return;
  if (read_target_ != nullptr) {
    ++failed_reads_;
    LoopMisuse("StartRead before the previous OnReadDone");
    return;
  }
  read_target_ = msg;
}

void ServerCall::LoopReactorWrite(const google::protobuf::MessageLite* msg,
                                  WriteOptions options, bool and_finish) {
  if (done_) return;
  if (write_state_ != WriteState::kNone) {
    ++failed_writes_;
    LoopMisuse("StartWrite before the previous OnWriteDone");
    return;
  }
  // StartWriteAndFinish has no OnWriteDone (grpc++'s): it completes at
  // OnDone.
  write_state_ = and_finish ? WriteState::kNone : WriteState::kDone;
  write_ok_ = false;
  if (finish_called_ || last_message_ != nullptr) {
    LoopMisuse(finish_called_ ? "StartWrite after Finish"
                              : "StartWrite after StartWriteLast");
    return;
  }
  if (connection_ == nullptr || status_sent_) return;
  transport::SliceBuffer framed;
  if (Status s = FrameResponse(*msg, options.get_no_compression(), &framed);
      !s.ok()) {
    LoopAbort(s);
    return;
  }
  if (options.is_last_message()) {
    // Held until Finish: message and status leave in one flush.
    last_message_ = std::make_unique<transport::SliceBuffer>(std::move(framed));
    write_ok_ = true;
    return;
  }
  if (!handler_headers_sent_) {
    handler_headers_sent_ = true;
    LoopSendHeaders(*callback_state_->ctx.mutable_initial_metadata());
  }
  const size_t n = framed.size();
  write_state_ = WriteState::kAwaitingCredit;
  write_inflight_ += n;
  // TrackWrite may release the credit at once (the queue is already empty).
  if (!LoopSendMessage(std::move(framed), true)) {
    write_state_ = WriteState::kDone;
    write_ok_ = false;
    return;
  }
  if (write_state_ == WriteState::kAwaitingCredit &&
      write_inflight_ <= limits_.write_bound) {
    write_state_ = WriteState::kDone;
    write_ok_ = true;
  }
}

void ServerCall::LoopReactorFinish(const Status& status) {
  if (done_) return;
  if (finish_called_) return;  // The first status already went out.
  finish_called_ = true;
  ServerConnection* conn = connection_;
  if (conn == nullptr || status_sent_ || callback_state_ == nullptr) return;
  CallbackServerContext& ctx = callback_state_->ctx;
  Status final_status = status;
  transport::SliceBuffer response;
  bool has_response = false;
  if (final_status.ok() && unary_response_ != nullptr) {
    if (Status s = FrameResponse(*unary_response_, false, &response); !s.ok()) {
      final_status = s;
    } else {
      has_response = true;
    }
  } else if (last_message_ != nullptr) {
    // A streamed message goes out before any status, an error too (only the
    // single response of unary and client streaming is dropped on error).
    response = std::move(*last_message_);
    has_response = true;
  }
  last_message_.reset();
  if (has_response) {
    if (!handler_headers_sent_) {
      ResolveResponseEncoding();
      handler_headers_sent_ = true;
      LoopSendHeaders(*ctx.mutable_initial_metadata());
    }
    (void)conn->connection().SubmitData(stream_id_, std::move(response), false);
  } else {
    ResolveResponseEncoding();
  }
  finish_applied_ = true;
  // Requests no longer wait for a StartRead: the window they hold goes back
  // (a client keeping its half open must not starve the connection).
  ReturnOwedOctets();
  LoopSendStatus(final_status, *ctx.mutable_initial_metadata(),
                 *ctx.mutable_trailing_metadata());
  conn->ScheduleFlush();
}

void ServerCall::ReturnOwedOctets() {
  if (owed_bytes_ == 0 || connection_ == nullptr) return;
  connection_->connection().ConsumeData(stream_id_, owed_bytes_);
  owed_bytes_ = 0;
  connection_->ScheduleFlush();
}

Status ServerCall::LoopTakeRequest(google::protobuf::MessageLite* msg) {
  if (inbox_head_ == inbox_.size()) {
    return IsCancelled()
               ? Status(StatusCode::CANCELLED, "Cancelled")
               : Status(StatusCode::INTERNAL, "missing request message");
  }
  transport::SliceBuffer payload = std::move(inbox_[inbox_head_]);
  inbox_.clear();
  inbox_head_ = 0;
  inbox_bytes_ = 0;
  if (!ParseFromSliceBuffer(payload, msg)) {
    return Status(StatusCode::INTERNAL, "error parsing request message");
  }
  return Status();
}

void ServerCall::LoopBind(ServerReactorBase* reactor) {
  if (reactor == nullptr) {
    LoopAbort(Status(StatusCode::INTERNAL, "the method returned no reactor"));
    ReleaseCallbackState();
    return;
  }
  // Written only when not bound yet: a reactor bound in its constructor may
  // already be read by another thread it published itself to.
  if (reactor->call_ != this) reactor->call_ = this;
  reactor_ = reactor;
  if (reactor->used_unbound_) {
    LoopMisuse("reactor used before its method returned it");
  }
}

void ServerCall::ReleaseCallbackState() {
  std::atomic<int>* live = live_callback_calls;
  // The state's context holds a reference to this call: keep it for the
  // rest of this function.
  std::shared_ptr<ServerCall> keep = shared_from_this();
  callback_state_.reset();
  if (live != nullptr) live->fetch_sub(1, std::memory_order_release);
}

void ServerCall::Pump() {
  if (in_pump_ || reactor_ == nullptr) return;
  if (transport::EventLoop::RunningInline()) {
    // Reactions never run on an inline runner (another call's sync handler
    // or blocking caller, whose flush made them due): the loop's thread.
    loop_->Post([self = shared_from_this()] { self->Pump(); });
    return;
  }
  in_pump_ = true;
  std::shared_ptr<ServerCall> keep;  // Set when OnDone is delivered.
  for (;;) {
    ServerReactorBase* r = reactor_;
    if (cancel_due_ && !cancel_delivered_) {
      cancel_delivered_ = true;
      r->OnCancel();
      continue;
    }
    if (initial_metadata_done_) {
      initial_metadata_done_ = false;
      r->OnSendInitialMetadataDone(initial_metadata_ok_);
      continue;
    }
    if (failed_initial_metadata_ > 0) {
      --failed_initial_metadata_;
      r->OnSendInitialMetadataDone(false);
      continue;
    }
    if (failed_reads_ > 0) {
      --failed_reads_;
      r->OnReadDoneBase(false);
      continue;
    }
    if (failed_writes_ > 0) {
      --failed_writes_;
      r->OnWriteDoneBase(false);
      continue;
    }
    if (read_target_ != nullptr) {
      // After Finish or the end of the call, reads outstanding fail.
      const bool over = IsCancelled() || finish_called_;
      if (!over && inbox_head_ < inbox_.size()) {
        google::protobuf::MessageLite* target = read_target_;
        read_target_ = nullptr;
        transport::SliceBuffer payload = std::move(inbox_[inbox_head_++]);
        inbox_bytes_ -= payload.size() + 5;
        if (inbox_head_ == inbox_.size()) {
          inbox_.clear();
          inbox_head_ = 0;
        }
        if (owed_bytes_ > 0 && inbox_bytes_ <= limits_.read_bound / 2 &&
            connection_ != nullptr) {
          connection_->connection().ConsumeData(stream_id_, owed_bytes_);
          owed_bytes_ = 0;
          connection_->ScheduleFlush();
        }
        const bool ok = ParseFromSliceBuffer(payload, target);
        if (!ok) {
          LoopAbort(
              Status(StatusCode::INTERNAL, "error parsing request message"));
        }
        r->OnReadDoneBase(ok);
        continue;
      }
      if (over || input_ended_) {
        read_target_ = nullptr;
        r->OnReadDoneBase(false);
        continue;
      }
    }
    if (write_state_ == WriteState::kDone) {
      write_state_ = WriteState::kNone;
      r->OnWriteDoneBase(write_ok_);
      continue;
    }
    if (finish_called_ && read_target_ == nullptr &&
        write_state_ == WriteState::kNone &&
        posted_ops_.load(std::memory_order_acquire) == 0 &&
        (!cancel_due_ || cancel_delivered_)) {
      done_ = true;
      reactor_ = nullptr;
      keep = shared_from_this();
      r->OnDone();
      ReleaseCallbackState();
      return;  // `keep` goes last.
    }
    break;
  }
  in_pump_ = false;
}

}  // namespace internal
}  // namespace rpc
