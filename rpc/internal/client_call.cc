#include "rpc/internal/client_call.h"

#include <sched.h>

#include <utility>

#include "absl/strings/numbers.h"
#include "rpc/internal/channel_impl.h"
#include "rpc/internal/client_transport.h"
#include "rpc/internal/header_builder.h"
#include "rpc/internal/metadata_limits.h"
#include "rpc/wire/content_type.h"
#include "rpc/wire/percent.h"
#include "rpc/wire/timeout.h"

namespace rpc {
namespace internal {

namespace {

// A framed message up to this size is copied into one block of its own
// size: framing leaves it in two blocks of 4 KiB (the prefix's and the
// payload's), which a queued call, or the replay buffer until the call
// commits, would otherwise hold for a message of a few octets.
constexpr size_t kCompactBelow = transport::SliceBuffer::kDefaultBlockSize;

void Compact(transport::SliceBuffer* framed) {
  if (framed->size() > kCompactBelow || framed->num_slices() < 2) return;
  transport::Slice one = framed->CopyToNewBlock();
  *framed = transport::SliceBuffer();
  framed->Append(std::move(one));
}

}  // namespace

ClientCall::ClientCall(ChannelImpl* channel, transport::EventLoop* loop,
                       std::string path, absl::Time deadline, Metadata metadata,
                       const ClientCallOptions& options)
    : channel_(channel),
      loop_(loop),
      path_(std::move(path)),
      deadline_(deadline),
      metadata_(std::move(metadata)),
      options_(options),
      core_(options.read_bound, options.write_bound),
      deframer_(options.max_receive_message_size),
      decompressor_(options.max_receive_message_size),
      compressor_(options.encoding, options.compression_threshold) {}

ClientCall::~ClientCall() = default;

void ClientCall::Post(transport::EventLoop::Task task) {
  // No loop (a channel without a loop thread): the call failed at its
  // creation, and every task of a finished call is a no-op.
  if (loop_ == nullptr) return;
  // A blocking call's operation runs on the caller's thread when the loop
  // sleeps (no wake-up of the loop; rpc/README.md, "Threading model"). An
  // async call's is posted: its completion callback must not run inside
  // the call that started or cancelled it.
  if (async_) {
    loop_->Post(std::move(task));
  } else {
    loop_->RunInlineOrPost(std::move(task));
  }
}

// ---- Application thread ----

Status ClientCall::Frame(transport::SliceBuffer payload, bool end,
                         bool no_compression, PendingWrite* out) {
  if (payload.size() > options_.max_send_message_size) {
    return Status(StatusCode::RESOURCE_EXHAUSTED,
                  "request message larger than max (" +
                      std::to_string(payload.size()) + " vs. " +
                      std::to_string(options_.max_send_message_size) + ")");
  }
  *out = PendingWrite{{}, end};
  absl::Status s = no_compression
                       ? WriteMessage(std::move(payload), false, &out->framed)
                       : compressor_.Frame(std::move(payload), &out->framed);
  if (!s.ok()) return FromAbslStatus(s);
  Compact(&out->framed);
  return Status::OK;
}

Status ClientCall::FrameFirst(transport::SliceBuffer* first, bool end,
                              std::vector<PendingWrite>* writes) {
  if (first == nullptr) {
    if (end) writes->push_back(PendingWrite{{}, true});
    return Status::OK;
  }
  PendingWrite w;
  Status s = Frame(std::move(*first), end, false, &w);
  if (s.ok()) writes->push_back(std::move(w));
  return s;
}

void ClientCall::Start(transport::SliceBuffer* first, bool end) {
  if (loop_ == nullptr) {
    // Failed at its creation (ChannelImpl::CreateCall), before SetOnDone.
    if (on_done_) {
      absl::AnyInvocable<void()> on_done = std::move(on_done_);
      on_done_ = nullptr;
      on_done();
    }
    return;
  }
  std::vector<PendingWrite> writes;
  if (Status s = FrameFirst(first, end, &writes); !s.ok()) {
    Post([self = shared_from_this(), s] { self->LoopFail(s); });
    return;
  }
  writes_done_ = end;
  Post([self = shared_from_this(), writes = std::move(writes)]() mutable {
    self->LoopHandOver(std::move(writes));
  });
}

void ClientCall::LoopBegin(transport::SliceBuffer* first, bool end) {
  std::vector<PendingWrite> writes;
  if (Status s = FrameFirst(first, end, &writes); !s.ok()) {
    LoopFail(s);
    return;
  }
  LoopHandOver(std::move(writes));
}

void ClientCall::LoopHandOver(std::vector<PendingWrite> writes) {
  if (done_loop_) return;
  // Writes made before (observer mode) follow.
  for (PendingWrite& w : pending_) writes.push_back(std::move(w));
  pending_ = std::move(writes);
  LoopArmDeadline();
  channel_->LoopStartCall(shared_from_this());
}

bool ClientCall::Write(transport::SliceBuffer payload, bool end) {
  if (writes_done_) return false;
  {
    transport::MutexLock lock(&mu_);
    if (has_status_) return false;
  }
  PendingWrite w;
  if (Status s = Frame(std::move(payload), end, false, &w); !s.ok()) {
    Cancel(s);
    return false;
  }
  if (!core_.AcquireWriteCredit(w.framed.size())) return false;
  writes_done_ = end;
  Post([self = shared_from_this(), w = std::move(w)]() mutable {
    self->LoopWrite(std::move(w));
  });
  return true;
}

void ClientCall::WritesDone() {
  if (writes_done_) return;
  writes_done_ = true;
  Post([self = shared_from_this()] {
    self->LoopWrite(PendingWrite{{}, true});
  });
}

bool ClientCall::Read(transport::SliceBuffer* payload) {
  // As Finish: the caller drives the loop while no message is here.
  PollUntil([this] { return core_.readable(); });
  size_t consume = 0;
  CallCore::ReadResult r = core_.Read(payload, &consume);
  if (consume > 0) {
    Post([self = shared_from_this(), consume] {
      if (self->transport_ == nullptr) return;
      self->transport_->connection().ConsumeData(self->stream_id_, consume);
      self->transport_->ScheduleFlush();
    });
  }
  return r == CallCore::ReadResult::kMessage;
}

void ClientCall::PollUntil(absl::FunctionRef<bool()> done) {
  // A blocking call only (an async call's caller does not wait), with its
  // loop; CoPollUntil declines on a loop thread (a reaction that reads the
  // status it has already).
  if (async_ || loop_ == nullptr || done()) return;
  const absl::Duration spin = loop_->busy_poll();
  const absl::Time spin_end =
      spin > absl::ZeroDuration() ? absl::Now() + spin : absl::InfinitePast();
  for (;;) {
    const transport::EventLoop::CoPollResult r =
        loop_->CoPollUntil(done, deadline_);
    if (r == transport::EventLoop::CoPollResult::kDone ||
        r == transport::EventLoop::CoPollResult::kTimedOut) {
      return;
    }
    // The loop thread runs (or spins, busy-poll) and completes the call:
    // a busy-poll channel's caller spins for the status too, up to the
    // budget, then sleeps.
    if (done() || absl::Now() >= spin_end) return;
    // The loop thread (maybe on this CPU) has the work: let it run.
    sched_yield();
  }
}

void ClientCall::WaitForInitialMetadata() {
  PollUntil(
      [this] { return initial_or_status_.load(std::memory_order_acquire); });
  transport::MutexLock lock(&mu_);
  while (!has_initial_ && !has_status_) cv_.Wait(&mu_);
}

Status ClientCall::Finish(Metadata* initial, Metadata* trailing) {
  // The caller drives the loop while it waits: the response's read handler
  // then completes the call on this thread, one wake-up (the caller's)
  // instead of two (rpc/README.md, "Threading model").
  PollUntil([this] { return status_set_.load(std::memory_order_acquire); });
  transport::MutexLock lock(&mu_);
  while (!has_status_) cv_.Wait(&mu_);
  if (initial != nullptr) *initial = initial_;
  if (trailing != nullptr) *trailing = trailing_;
  return status_;
}

void ClientCall::Cancel(Status status) {
  Post([self = shared_from_this(), status = std::move(status)] {
    self->LoopFail(status);
  });
}

void ClientCall::CopyInitialMetadata(Metadata* out) const {
  transport::MutexLock lock(&mu_);
  *out = initial_;
}

bool ClientCall::has_status() const {
  transport::MutexLock lock(&mu_);
  return has_status_;
}

std::string ClientCall::peer() const {
  transport::MutexLock lock(&mu_);
  return peer_;
}

std::shared_ptr<const AuthContext> ClientCall::auth_context() const {
  transport::MutexLock lock(&mu_);
  return auth_context_;
}

// ---- Loop thread ----

void ClientCall::LoopArmDeadline() {
  if (done_loop_ || deadline_ == absl::InfiniteFuture()) return;
  const absl::Duration timeout = deadline_ - absl::Now();
  if (timeout <= absl::ZeroDuration()) {
    LoopFail(Status(StatusCode::DEADLINE_EXCEEDED, "Deadline Exceeded"));
    return;
  }
  deadline_timer_ = loop_->RunAfter(timeout, [self = shared_from_this()] {
    self->deadline_timer_ = transport::EventLoop::kInvalidTimer;
    self->LoopFail(Status(StatusCode::DEADLINE_EXCEEDED, "Deadline Exceeded"));
  });
}

bool ClientCall::LoopSend(transport::SliceBuffer payload, bool end,
                          bool no_compression) {
  PendingWrite w;
  if (Status s = Frame(std::move(payload), end, no_compression, &w); !s.ok()) {
    LoopFail(s);
    return false;
  }
  // Counted before the write: TrackWrite may release it at once.
  loop_inflight_ += w.framed.size();
  LoopWrite(std::move(w));
  return true;
}

void ClientCall::LoopHalfClose() { LoopWrite(PendingWrite{{}, true}); }

void ClientCall::LoopMessageConsumed(size_t size) {
  rx_queued_ -= size + 5;
  if (rx_owed_ == 0 || rx_queued_ > options_.read_bound / 2) return;
  const size_t owed = rx_owed_;
  rx_owed_ = 0;
  if (transport_ == nullptr || done_loop_) return;
  transport_->connection().ConsumeData(stream_id_, owed);
  transport_->ScheduleFlush();
}

void ClientCall::LoopReleaseWriteCredit() {
  if (observer_ == nullptr) {
    core_.ReleaseWriteCredit();
    return;
  }
  loop_inflight_ = 0;
  if (done_loop_) return;
  // Not after the status (the write's reaction comes with it then).
  LoopNotify([this](ClientCallObserver* o) {
    if (!done_loop_) o->LoopOnWriteCredit();
  });
}

void ClientCall::LoopStart(ClientTransport* transport) {
  if (done_loop_) return;
  started_ = true;
  if (absl::Status s = ValidateUserMetadata(metadata_); !s.ok()) {
    LoopFail(Status(StatusCode::INTERNAL, std::string(s.message())));
    return;
  }
  const absl::Duration timeout = deadline_ - absl::Now();
  if (deadline_ != absl::InfiniteFuture() && timeout <= absl::ZeroDuration()) {
    LoopFail(Status(StatusCode::DEADLINE_EXCEEDED, "Deadline Exceeded"));
    return;
  }
  HeaderBuilder h;
  h.Add(":method", "POST");
  h.Add(":scheme", channel_->scheme());
  h.Add(":path", path_);
  h.Add(":authority", channel_->authority());
  h.Add("te", "trailers");
  h.Add("content-type", kGrpcContentType);
  h.Add("user-agent", channel_->user_agent());
  if (!grpc_encoding_header_for_test_.empty()) {
    h.Add("grpc-encoding", grpc_encoding_header_for_test_);
  } else if (options_.encoding != compression::Encoding::kIdentity) {
    h.Add("grpc-encoding", compression::EncodingName(options_.encoding));
  }
  h.Add("grpc-accept-encoding",
        compression::GrpcAcceptEncodingValue(kSupportedEncodings));
  if (deadline_ != absl::InfiniteFuture()) {
    h.AddChangingCopy("grpc-timeout", EncodeTimeout(timeout));
  }
  h.AddMetadata(metadata_);
  // A request with no message and its end (rare) ends on its HEADERS.
  const bool end_on_headers =
      pending_.size() == 1 && pending_[0].end && pending_[0].framed.empty();
  on_wire_ = false;  // Submit tells (LoopOnStarted) if HEADERS went out.
  ++attempts_;
  absl::StatusOr<uint32_t> id =
      transport->Submit(shared_from_this(), h.fields(), end_on_headers);
  if (!id.ok()) {
    // The connection failed or is going away under the pick: the call never
    // was on it; the channel places it again (fail-fast or not).
    if (absl::IsUnavailable(id.status()) && LoopRetryUnsent()) return;
    // Metadata the server said it would not take fails here, as in gRPC (a
    // server that has not sent its SETTINGS yet answers for itself).
    LoopFail(SubmitFailure(id.status(), h.fields(), transport->connection(),
                           StatusCode::UNAVAILABLE));
    return;
  }
  transport_ = transport;
  stream_id_ = *id;
  stream_open_ = true;
  {
    transport::MutexLock lock(&mu_);
    peer_ = transport->peer();
    auth_context_ = transport->auth_context();
  }
  if (end_on_headers) {
    local_end_ = true;
    if (!committed_) replay_.push_back(std::move(pending_[0]));
    pending_.clear();
  }
  auto pending = std::move(pending_);
  pending_.clear();
  for (PendingWrite& w : pending) LoopWrite(std::move(w));
}

void ClientCall::LoopWrite(PendingWrite write) {
  if (!started_) {
    pending_.push_back(std::move(write));
    return;
  }
  ClientTransport* t = transport_;
  if (done_loop_ || t == nullptr || local_end_) return;
  local_end_ = write.end;
  const bool has_data = !write.framed.empty();
  if (!committed_) {
    // Kept for a retry: the copy shares the blocks.
    replay_bytes_ += write.framed.size();
    if (replay_bytes_ > options_.retry_buffer_size ||
        !options_.transparent_retry) {
      LoopCommit();
    } else {
      replay_.push_back(write);
    }
  }
  if (!t->connection()
           .SubmitData(stream_id_, std::move(write.framed), write.end)
           .ok()) {
    return;
  }
  if (has_data) t->TrackWrite(stream_id_);
  t->ScheduleFlush();
}

void ClientCall::LoopOnHeaders(const hpack::HeaderList& headers,
                               bool end_stream) {
  if (done_loop_) return;
  const std::string_view http_status = FindHeader(headers, ":status");
  if (end_stream) {
    LoopStatusFromTrailers(headers, http_status);
    return;
  }
  if (http_status != "200") {
    int code = 0;
    (void)absl::SimpleAtoi(
        absl::string_view(http_status.data(), http_status.size()), &code);
    LoopFail(StatusFromHttp2Status(code));
    return;
  }
  if (const std::string_view encoding = FindHeader(headers, "grpc-encoding");
      !encoding.empty()) {
    std::optional<compression::Encoding> e =
        compression::ParseGrpcEncoding(encoding);
    if (!e.has_value()) {
      LoopFail(FromAbslStatus(compression::UnsupportedEncodingError(
          encoding, kSupportedEncodings)));
      return;
    }
    decompressor_.set_encoding(*e);
  }
  {
    transport::MutexLock lock(&mu_);
    ParseMetadata(headers, &initial_);
    has_initial_ = true;
    initial_or_status_.store(true, std::memory_order_release);
    cv_.SignalAll();
  }
  if (observer_ != nullptr) {
    LoopNotify([](ClientCallObserver* o) { o->LoopOnInitialMetadata(); });
  }
}

void ClientCall::LoopOnTrailers(const hpack::HeaderList& trailers) {
  if (done_loop_) return;
  LoopStatusFromTrailers(trailers, "200");
}

void ClientCall::LoopStatusFromTrailers(const hpack::HeaderList& trailers,
                                        std::string_view http_status) {
  Metadata trailing;
  ParseMetadata(trailers, &trailing);
  const std::string_view grpc_status = FindHeader(trailers, "grpc-status");
  Status status;
  bool found = false;
  for (size_t i = 0; i < trailers.size(); ++i) {
    if (trailers[i].name == "grpc-status") found = true;
  }
  if (!found) {
    int code = 0;
    (void)absl::SimpleAtoi(
        absl::string_view(http_status.data(), http_status.size()), &code);
    status = code != 200
                 ? StatusFromHttp2Status(code)
                 : Status(StatusCode::UNKNOWN, "response without grpc-status");
  } else {
    std::string details;
    const std::string_view details_bin =
        FindHeader(trailers, "grpc-status-details-bin");
    if (!details_bin.empty()) {
      absl::StatusOr<std::string> d = DecodeBinaryValue(details_bin);
      if (d.ok()) details = std::move(*d);
    }
    status = Status(ParseGrpcStatusValue(grpc_status),
                    PercentDecode(FindHeader(trailers, "grpc-message")),
                    std::move(details));
  }
  if (status.ok()) {
    absl::Status s = deframer_.Finish();
    if (!s.ok()) status = FromAbslStatus(s);
  }
  LoopComplete(std::move(status), std::move(trailing), /*clean=*/true);
}

void ClientCall::LoopOnData(transport::Slice data) {
  const size_t n = data.size();
  if (done_loop_) {
    transport_->connection().ConsumeData(stream_id_, n);
    return;
  }
  absl::Status s = deframer_.Push(std::move(data));
  size_t consume;
  if (observer_ == nullptr) {
    consume = core_.OnDataBytes(n);
  } else if (rx_queued_ < options_.read_bound) {
    consume = n;
  } else {
    consume = 0;
    rx_owed_ += n;
  }
  if (consume > 0) transport_->connection().ConsumeData(stream_id_, consume);
  if (!s.ok()) {
    LoopFail(FromAbslStatus(s));
    return;
  }
  // The observer's reactions may end the call (and drop every other
  // reference to it) while this runs.
  std::shared_ptr<ClientCall> keep;
  if (observer_ != nullptr) keep = shared_from_this();
  // gRPC's cardinality rule (set_single_response): octets beyond the one
  // message end the call, before a second message reaches anyone. As
  // grpc-go ("cardinality violation") and grpc-java: INTERNAL, and the
  // stream is reset (LoopFail).
  auto cardinality_violated = [this] {
    return single_response_ && messages_received_ > 0;
  };
  const Status violation(StatusCode::INTERNAL,
                         "cardinality violation: more than one response "
                         "message on a unary or client-streaming call");
  ReceivedMessage msg;
  while (deframer_.Next(&msg)) {
    if (cardinality_violated()) {
      LoopFail(violation);
      return;
    }
    transport::SliceBuffer payload;
    if (absl::Status u = decompressor_.Unpack(&msg, &payload); !u.ok()) {
      LoopFail(FromAbslStatus(u));
      return;
    }
    ++messages_received_;
    if (observer_ == nullptr) {
      core_.PushMessage(std::move(payload));
      continue;
    }
    rx_queued_ += payload.size() + 5;
    LoopNotify([payload = std::move(payload)](ClientCallObserver* o) mutable {
      o->LoopOnMessage(std::move(payload));
    });
    if (done_loop_) return;
  }
  if (cardinality_violated() && deframer_.buffered_bytes() > 0) {
    LoopFail(violation);
  }
}

void ClientCall::LoopOnEnd() {
  if (done_loop_) return;
  LoopComplete(Status(StatusCode::INTERNAL, "stream ended without trailers"),
               {}, false);
}

void ClientCall::LoopCommit() {
  committed_ = true;
  replay_.clear();
  replay_bytes_ = 0;
}

bool ClientCall::LoopMayRetry(transport::Http2ErrorCode code, bool remote,
                              bool connection_dead) {
  if (committed_ || !options_.transparent_retry) return false;
  if (!on_wire_) {
    // Queued in the Connection, never sent. A failed connection takes
    // fail-fast calls with it; wait-for-ready ones wait for the next.
    return !connection_dead || wait_for_ready_;
  }
  // Sent, and the server says it did not process it.
  if (connection_dead || !remote ||
      code != transport::Http2ErrorCode::kRefusedStream) {
    return false;
  }
  return ++refused_attempts_ <= kMaxRefusedAttempts;
}

void ClientCall::LoopRetry() {
  transport_ = nullptr;
  stream_id_ = 0;
  stream_open_ = false;
  local_end_ = false;
  started_ = false;  // Writes made meanwhile queue behind the replay.
  on_wire_ = false;
  std::vector<PendingWrite> replay = std::move(replay_);
  replay_.clear();
  replay_bytes_ = 0;
  for (PendingWrite& w : pending_) replay.push_back(std::move(w));
  pending_ = std::move(replay);
  // Not from inside the Connection's callback: at the end of this loop
  // iteration, through the channel, as a new call (it may be queued, go to
  // another connection, or fail fast).
  loop_->Defer([self = shared_from_this()] {
    if (!self->done_loop_) self->channel_->LoopStartCall(self);
  });
}

bool ClientCall::LoopRetryUnsent() {
  if (done_loop_ || committed_ || on_wire_ || !options_.transparent_retry) {
    return false;
  }
  LoopRetry();
  return true;
}

bool ClientCall::LoopOnReset(transport::Http2ErrorCode code, bool remote,
                             bool connection_dead, const std::string& reason) {
  stream_open_ = false;
  if (done_loop_) return false;
  if (deadline_ != absl::InfiniteFuture() && absl::Now() >= deadline_) {
    LoopComplete(Status(StatusCode::DEADLINE_EXCEEDED, "Deadline Exceeded"), {},
                 false);
    return false;
  }
  if (LoopMayRetry(code, remote, connection_dead)) {
    LoopRetry();
    return true;
  }
  if (connection_dead || !remote) {
    // A stream error our client found leaves the connection up: the message
    // says the stream, not the connection, ended.
    const char* what = !connection_dead && !reason.empty()
                           ? "stream reset by the client: "
                           : "connection failed: ";
    LoopComplete(Status(StatusCode::UNAVAILABLE,
                        reason.empty() ? std::string("connection failed")
                                       : what + reason),
                 {}, false);
    return false;
  }
  const uint32_t h2 = static_cast<uint32_t>(code);
  LoopComplete(Status(StatusCodeFromRstStream(h2),
                      "stream reset by the server (HTTP/2 error " +
                          std::to_string(h2) + ")"),
               {}, false);
  return false;
}

void ClientCall::LoopOnClosed(const Status& unfinished) {
  stream_open_ = false;
  transport_ = nullptr;
  if (deadline_timer_ != transport::EventLoop::kInvalidTimer) {
    loop_->Cancel(deadline_timer_);
    deadline_timer_ = transport::EventLoop::kInvalidTimer;
  }
  if (!done_loop_) LoopComplete(unfinished, {}, false);
}

void ClientCall::LoopFail(const Status& status) {
  started_ = true;  // No stream will come: drop later writes.
  if (done_loop_) return;
  LoopComplete(status, {}, false);
  ClientTransport* t = transport_;
  if (t != nullptr && stream_open_) {
    stream_open_ = false;
    t->connection().ResetStream(stream_id_, transport::Http2ErrorCode::kCancel);
    t->ScheduleFlush();
  }
}

void ClientCall::LoopComplete(Status status, Metadata trailing, bool clean) {
  if (done_loop_) return;
  done_loop_ = true;
  if (deadline_timer_ != transport::EventLoop::kInvalidTimer) {
    loop_->Cancel(deadline_timer_);
    deadline_timer_ = transport::EventLoop::kInvalidTimer;
  }
  if (clean) {
    core_.PushEnd();
  } else {
    core_.Cancel();
  }
  // A blocking writer waiting for credit, or one that got it just now and
  // has not seen the status yet, fails from here: no credit comes back to
  // a finished call (it would wait forever).
  core_.CloseWrites();
  loop_inflight_ = 0;
  {
    transport::MutexLock lock(&mu_);
    status_ = std::move(status);
    trailing_ = std::move(trailing);
    has_status_ = true;
    status_set_.store(true, std::memory_order_release);
    initial_or_status_.store(true, std::memory_order_release);
    cv_.SignalAll();
  }
  if (on_done_) {
    absl::AnyInvocable<void()> on_done = std::move(on_done_);
    on_done_ = nullptr;
    if (transport::EventLoop::RunningInline()) {
      // A user callback never runs on an inline runner (a blocking caller or
      // a sync handler, maybe holding a user lock): the loop's thread runs it.
      loop_->Post(std::move(on_done));
    } else {
      on_done();
    }
  }
  // The server ended while we still send: stop our side too.
  ClientTransport* t = transport_;
  if (clean && t != nullptr && stream_open_ && !local_end_) {
    stream_open_ = false;
    t->connection().ResetStream(stream_id_, transport::Http2ErrorCode::kCancel);
    t->ScheduleFlush();
  }
  if (observer_ != nullptr) {
    // Last: its reactions may end every other reference to the call.
    if (!clean && !transport::EventLoop::RunningInline()) {
      // Cancelled, reset or past its deadline on the loop thread: the
      // observer learns it now, also ahead of notifications a co-poller
      // posted and that are still queued (they are dropped). Operations posted
      // after a TryCancel (a StartRead) must see the call ended, not read the
      // messages that arrived before it; unread ones are dropped on an unclean
      // end anyway, and the queued notifications with them.
      observer_ended_ = true;
      std::shared_ptr<ClientCall> keep = shared_from_this();
      observer_->LoopOnStatus(false);
    } else {
      LoopNotify([clean](ClientCallObserver* o) { o->LoopOnStatus(clean); });
    }
  }
}

template <typename F>
void ClientCall::LoopNotify(F f) {
  // Reactions never run on an inline runner or a co-poller (another call's
  // blocking caller or sync handler, maybe holding a user lock, whose task
  // or read handler made them due): the loop's own thread runs them. Once
  // one is posted, the call's later ones are posted too until it ran, so
  // they keep their order (a message posted from a co-poller, then the
  // trailers read by the loop thread: OnReadDone before OnDone).
  if (observer_ended_) return;  // LoopOnStatus ran already (LoopComplete).
  std::shared_ptr<ClientCall> keep = shared_from_this();
  if (!transport::EventLoop::RunningInline() && observer_posted_ == 0) {
    f(observer_);
    return;
  }
  ++observer_posted_;
  loop_->Post([keep = std::move(keep), f = std::move(f)]() mutable {
    --keep->observer_posted_;
    if (keep->observer_ != nullptr && !keep->observer_ended_) {
      f(keep->observer_);
    }
  });
}

}  // namespace internal
}  // namespace rpc
