// Connection: public forwarding, construction, the stream table, errors,
// GOAWAY and shutdown, timers, and the end-of-call epilogue. See
// connection_impl.h for how the implementation is split.

#include "transport/connection/connection.h"

#include <algorithm>
#include <utility>

#include "transport/connection/connection_impl.h"
#include "transport/frame/frame_writer.h"

namespace transport {
namespace {

uint32_t FirstLocalStreamId(const ConnectionOptions& options) {
  const uint32_t parity = options.role == Role::kClient ? 1 : 0;
  const uint32_t id = options.first_local_stream_id;
  if (id == 0 || id > kMaxStreamId || id % 2 != parity) return 2 - parity;
  return id;
}

// The opaque data of the PING a graceful shutdown sends ("shutdown").
constexpr uint64_t kShutdownPingOpaque = 0x73687574646f776eULL;
// Freed streams kept for reuse.
constexpr size_t kStreamPoolSize = 64;

FrameDecoder::Options DecoderOptions(const ConnectionOptions& options) {
  FrameDecoder::Options o;
  o.max_frame_size = options.local_settings.max_frame_size;
  o.expect_client_preface = options.role == Role::kServer;
  o.expect_settings_first = true;
  return o;
}

hpack::Decoder::Options HpackDecoderOptions(const ConnectionOptions& options) {
  hpack::Decoder::Options o;
  // Our HEADER_TABLE_SIZE applies once ACKed; until then the default.
  o.max_table_size = kDefaultHeaderTableSize;
  o.max_header_list_size = options.header_list_limit();
  return o;
}

Http2Settings SanitizedLocalSettings(const ConnectionOptions& options) {
  Http2Settings s = options.local_settings;
  s.enable_push = false;  // We never accept pushes; a server never pushes.
  return s;
}

}  // namespace

Connection::Impl::Impl(const ConnectionOptions& options,
                       ConnectionListener* listener, int64_t now_ns)
    : options_(options),
      listener_(listener),
      decoder_(this, DecoderOptions(options)),
      hpack_decoder_(HpackDecoderOptions(options)),
      local_(SanitizedLocalSettings(options)),
      now_(now_ns),
      settings_deadline_(now_ns + options.settings_timeout_ns),
      recv_initial_window_(
          std::max(kDefaultInitialWindowSize, local_.initial_window_size)),
      conn_recv_(kDefaultInitialWindowSize,
                 std::max(kDefaultInitialWindowSize,
                          std::min(options.connection_window, kMaxWindowSize)),
                 options.receive_buffer_limit),
      next_local_id_(FirstLocalStreamId(options)),
      resets_(options.stream_resets.burst, options.stream_resets.per_second,
              now_ns),
      settings_budget_(options.settings_frames.burst,
                       options.settings_frames.per_second, now_ns),
      pings_(options.pings.burst, options.pings.per_second, now_ns),
      empty_data_(options.empty_data_frames.burst,
                  options.empty_data_frames.per_second, now_ns),
      window_updates_(options.window_updates.burst,
                      options.window_updates.per_second, now_ns),
      other_frames_(options.other_frames.burst, options.other_frames.per_second,
                    now_ns) {
  graveyard_.reserve(16);
  closed_ids_.reserve(16);
  write_queue_.reserve(16);
  // The preface: the client's magic, then both sides' SETTINGS (RFC 9113 3.4),
  // then the connection window beyond the initial 65535.
  if (options_.role == Role::kClient) output_.Append(kClientPreface);
  WriteSettings(local_.DiffFrom(), &output_);
  const uint32_t increment = conn_recv_.TakeUpdate();
  if (increment > 0) WriteWindowUpdate(0, increment, &output_);
}

Connection::Impl::~Impl() {
  for (auto& entry : streams_) delete entry.second;
}

// ---- Input ----

bool Connection::Impl::Receive(const Slice& bytes, int64_t now_ns) {
  CallScope scope(this);
  if (dead_) return false;
  now_ = now_ns;
  Http2Error e = decoder_.Decode(bytes);
  if (!e.ok() && !dead_) FrameDecoderFailed(e);
  return !dead_;
}

bool Connection::Impl::Receive(const SliceBuffer& bytes, int64_t now_ns) {
  CallScope scope(this);
  if (dead_) return false;
  now_ = now_ns;
  Http2Error e = decoder_.Decode(bytes);
  if (!e.ok() && !dead_) FrameDecoderFailed(e);
  return !dead_;
}

void Connection::Impl::OnTransportClosed() {
  CallScope scope(this);
  if (dead_) return;
  Kill(ConnectionError(Http2ErrorCode::kCancel,
                       ConnectionErrorReason::kTransportClosed),
       Http2ErrorCode::kCancel, /*remote=*/true, /*report=*/false);
}

// ---- Output ----

void Connection::Impl::ConsumeOutput(size_t n) {
  CallScope scope(this);
  output_.TrimFront(std::min(n, output_.size()));
  if (output_.empty()) queued_replies_ = 0;
}

void Connection::Impl::TakeOutput(SliceBuffer* out) {
  CallScope scope(this);
  out->Append(std::move(output_));
  output_.Clear();
  queued_replies_ = 0;
}

// ---- Timers ----

int64_t Connection::Impl::NextDeadline() const {
  if (dead_) return kNoDeadline;
  int64_t deadline = kNoDeadline;
  if (awaiting_settings_ack_) deadline = settings_deadline_;
  if (shutdown_ping_outstanding_) {
    deadline = std::min(deadline, shutdown_deadline_);
  }
  if (reset_ping_outstanding_ && !unanswered_resets_.empty()) {
    deadline = std::min(deadline,
                        reset_ping_sent_ns_ + options_.reset_ping_timeout_ns);
  } else if (ResetsBlockStreams() && reset_ping_ever_sent_) {
    deadline = std::min(deadline,
                        last_reset_ping_ns_ + options_.reset_ping_interval_ns);
  }
  return std::min(deadline, block_deadline_);
}

void Connection::Impl::OnTimer(int64_t now_ns) {
  CallScope scope(this);
  if (dead_) return;
  now_ = now_ns;
  if (awaiting_settings_ack_ && now_ns >= settings_deadline_) {
    FailConnection(Http2ErrorCode::kSettingsTimeout,
                   ConnectionErrorReason::kSettingsTimeout);
    return;
  }
  if (now_ns >= block_deadline_) {
    FailConnection(Http2ErrorCode::kEnhanceYourCalm,
                   ConnectionErrorReason::kHeaderBlockTimeout);
    return;
  }
  if (shutdown_ping_outstanding_ && now_ns >= shutdown_deadline_) {
    SendFinalGoAway();
  }
  // The reset PING's timeout and interval: the epilogue's MaybeAckResets.
}

// ---- Connection-wide commands ----

void Connection::Impl::SendPing(uint64_t opaque) {
  CallScope scope(this);
  if (dead_) return;
  WritePing(opaque, /*ack=*/false, &output_);
}

void Connection::Impl::GracefulShutdown(int64_t now_ns) {
  CallScope scope(this);
  if (dead_ || shutdown_started_) return;
  shutdown_started_ = true;
  now_ = now_ns;
  if (options_.role == Role::kClient) {
    SendFinalGoAway();
    return;
  }
  // RFC 9113 6.8: announce with the largest id, let a round trip pass (the
  // PING), then send the real last stream id.
  WriteGoAway(kMaxStreamId, Http2ErrorCode::kNoError, "", &output_);
  WritePing(kShutdownPingOpaque, /*ack=*/false, &output_);
  shutdown_ping_outstanding_ = true;
  shutdown_deadline_ = now_ns + options_.shutdown_ping_timeout_ns;
}

void Connection::Impl::GoAway(Http2ErrorCode code,
                              std::string_view debug_data) {
  CallScope scope(this);
  if (dead_) return;
  if (code == Http2ErrorCode::kNoError) {
    shutdown_started_ = true;
    if (!final_goaway_sent_) {
      WriteGoAway(last_accepted_id_, code, debug_data, &output_);
      final_goaway_sent_ = true;
      goaway_sent_last_id_ = last_accepted_id_;
      shutdown_ping_outstanding_ = false;
    }
    return;
  }
  WriteGoAway(last_accepted_id_, code, debug_data, &output_);
  Kill(ConnectionError(code, ConnectionErrorReason::kApplicationGoAway,
                       std::string(debug_data)),
       code, /*remote=*/false, /*report=*/false);
}

void Connection::Impl::SendFinalGoAway() {
  shutdown_ping_outstanding_ = false;
  if (final_goaway_sent_ || dead_) return;
  final_goaway_sent_ = true;
  goaway_sent_last_id_ =
      options_.role == Role::kServer ? last_accepted_id_ : last_peer_id_;
  WriteGoAway(goaway_sent_last_id_, Http2ErrorCode::kNoError, "", &output_);
}

// ---- Streams ----

size_t Connection::Impl::stream_queued_bytes(uint32_t stream_id) const {
  const Stream* s = FindStream(stream_id);
  return s == nullptr ? 0 : s->send_queue.size();
}

int64_t Connection::Impl::stream_send_window(uint32_t stream_id) const {
  const Stream* s = FindStream(stream_id);
  return s == nullptr ? 0 : s->send_window.available();
}

void Connection::Impl::SetStreamUserData(uint32_t stream_id, void* user_data) {
  Stream* s = FindStream(stream_id);
  if (s != nullptr) s->user_data = user_data;
}

void* Connection::Impl::GetStreamUserData(uint32_t stream_id) const {
  const Stream* s = FindStream(stream_id);
  if (s != nullptr) return s->user_data;
  // Closed during this call: still readable from OnStreamClosed.
  for (const auto& closed : graveyard_) {
    if (closed->id == stream_id) return closed->user_data;
  }
  return nullptr;
}

Stream* Connection::Impl::NewStream(uint32_t stream_id, StreamState state) {
  Stream* s;
  if (!pool_.empty()) {
    s = pool_.back().release();
    pool_.pop_back();
  } else {
    s = new Stream;
  }
  s->Reset(stream_id, remote_.initial_window_size, recv_initial_window_);
  streams_.emplace(stream_id, s);
  SetState(s, state);
  return s;
}

void Connection::Impl::SetState(Stream* s, StreamState state) {
  const StreamState old = s->state;
  if (old == state) return;
  const auto count = [this, s](StreamState st) -> size_t* {
    switch (st) {
      case StreamState::kPending:
        return &pending_count_;
      case StreamState::kOpen:
      case StreamState::kHalfClosedLocal:
      case StreamState::kHalfClosedRemote:
        return IsLocalId(s->id) ? &active_local_ : &active_peer_;
      case StreamState::kClosed:
        break;
    }
    return nullptr;
  };
  if (size_t* n = count(old)) --*n;
  if (size_t* n = count(state)) ++*n;
  s->state = state;
}

void Connection::Impl::CloseStream(Stream* s, bool reset_by_us) {
  if (s->state == StreamState::kClosed) return;
  const bool was_active = s->state != StreamState::kPending;
  SetState(s, StreamState::kClosed);
  streams_.erase(s->id);
  if (was_active && !reset_by_us) RememberClosed(s->id);
  queued_send_bytes_ -= s->send_queue.size();
  s->send_queue.Clear();
  if (data_stream_ == s) data_stream_ = nullptr;
  // Octets the application never consumed must not shrink the connection's
  // window for good.
  const size_t unconsumed = s->recv_window.unconsumed();
  if (unconsumed > 0 && !dead_) {
    const uint32_t increment = conn_recv_.Consume(unconsumed);
    if (increment > 0) WriteWindowUpdate(0, increment, &output_);
  }
  graveyard_.emplace_back(s);
  closed_ids_.push_back(s->id);
}

// ---- Closed ids ----

void Connection::Impl::RememberClosed(uint32_t stream_id) {
  closed_ring_[closed_ring_pos_] = stream_id;
  closed_ring_pos_ = (closed_ring_pos_ + 1) % kClosedMemory;
}

void Connection::Impl::NotePeerStreamId(uint32_t id) {
  const uint32_t expected = last_peer_id_ == 0 ? 1 : last_peer_id_ + 2;
  if (id > expected) {
    skipped_ring_[skipped_ring_pos_] = {expected, id - 2};
    skipped_ring_pos_ = (skipped_ring_pos_ + 1) % kSkippedMemory;
  }
  last_peer_id_ = id;
}

Connection::Impl::ClosedId Connection::Impl::ClassifyClosed(
    uint32_t stream_id) const {
  // Streams we opened (a client's): whatever the peer sends after they
  // closed is ignored, as grpc++'s and nghttp2's clients do. A server that
  // ends a stream twice (grpc++: trailers + RST_STREAM, then its handler's
  // trailers again) must not fail every other call on the connection.
  if (IsLocalId(stream_id)) return ClosedId::kIgnore;
  for (const uint32_t entry : closed_ring_) {
    if (entry == stream_id && stream_id != 0) return ClosedId::kStreamClosed;
  }
  if (!IsLocalId(stream_id)) {
    for (const auto& [first, last] : skipped_ring_) {
      if (first != 0 && stream_id >= first && stream_id <= last) {
        return ClosedId::kNeverOpened;
      }
    }
  }
  // Reset by us (the peer may not have seen it yet: 5.1 says ignore), or
  // forgotten: a frame the peer may legitimately have had in flight, or an
  // old violation; nothing to protect but the HPACK context and the
  // connection window, which the callers keep.
  return ClosedId::kIgnore;
}

// ---- Resets the peer has not answered ----

void Connection::Impl::NoteResetSent(const Stream* s) {
  if (!IsLocalId(s->id) || s->state == StreamState::kPending ||
      s->state == StreamState::kClosed || s->remote_closed() ||
      goaway_received_ ||
      unanswered_resets_.size() >= options_.max_unanswered_resets) {
    return;
  }
  unanswered_resets_[s->id] = reset_ping_gen_;
}

void Connection::Impl::NoteAnswered(uint32_t stream_id) {
  if (!unanswered_resets_.empty()) unanswered_resets_.erase(stream_id);
}

bool Connection::Impl::ResetsBlockStreams() const {
  const uint32_t limit = PeerStreamLimit();
  return !unanswered_resets_.empty() && pending_count_ > 0 &&
         active_local_ < limit && CountedLocalStreams() >= limit;
}

void Connection::Impl::ForgetResets(uint32_t up_to_gen) {
  absl::erase_if(unanswered_resets_, [up_to_gen](const auto& entry) {
    return entry.second <= up_to_gen;
  });
}

void Connection::Impl::OnResetPingAck(uint32_t gen) {
  if (gen >= reset_ping_gen_) return;  // Not a PING of ours.
  if (gen == reset_ping_gen_ - 1) reset_ping_outstanding_ = false;
  // The peer processed everything sent before the PING (a late ACK of one
  // that timed out too): every reset it covers is seen.
  ForgetResets(gen);
}

void Connection::Impl::MaybeAckResets() {
  if (unanswered_resets_.empty() || dead_) return;
  if (goaway_received_) {
    unanswered_resets_.clear();  // No stream will start again.
    reset_ping_outstanding_ = false;
    return;
  }
  if (reset_ping_outstanding_ &&
      now_ - reset_ping_sent_ns_ >= options_.reset_ping_timeout_ns) {
    // No ACK: stop counting what the PING covers (a refusal is retried).
    reset_ping_outstanding_ = false;
    ForgetResets(reset_ping_gen_ - 1);
  }
  if (reset_ping_outstanding_ || !ResetsBlockStreams()) return;
  if (reset_ping_ever_sent_) {
    if (!peer_sent_since_reset_ping_) {
      // Another PING might count as abuse in the peer's ping policy.
      unanswered_resets_.clear();
      return;
    }
    if (now_ - last_reset_ping_ns_ < options_.reset_ping_interval_ns) {
      return;  // NextDeadline wakes us.
    }
  }
  WritePing(kResetPingTag | reset_ping_gen_, /*ack=*/false, &output_);
  ++reset_ping_gen_;  // Later resets wait for the next PING.
  reset_ping_outstanding_ = true;
  reset_ping_ever_sent_ = true;
  reset_ping_sent_ns_ = now_;
  last_reset_ping_ns_ = now_;
  peer_sent_since_reset_ping_ = false;
}

// ---- Errors ----

bool Connection::Impl::TakeToken(FloodBudget* budget,
                                 ConnectionErrorReason flood) {
  if (budget->Take(now_)) return true;
  FailConnection(Http2ErrorCode::kEnhanceYourCalm, flood);
  return false;
}

void Connection::Impl::FailStream(Stream* s, const StreamError& error) {
  if (dead_ || s->state == StreamState::kClosed) return;
  const uint32_t id = s->id;
  if (!CountReply()) return;
  WriteRstStream(id, error.code, &output_);
  NoteResetSent(s);
  // The listener may reset the stream (its RST_STREAM is the one just
  // written) or fail the connection (which resets every stream) from the
  // callback: then that was the stream's end.
  failing_stream_ = id;
  listener_->OnStreamFailed(id, error);
  failing_stream_ = 0;
  if (dead_) return;
  if (s->state != StreamState::kClosed) {
    listener_->OnStreamReset(id, error.code, /*remote=*/false);
    CloseStream(s, /*reset_by_us=*/true);
  }
  TakeToken(&resets_, ConnectionErrorReason::kStreamErrorFlood);
}

void Connection::Impl::FailStreamId(uint32_t stream_id,
                                    const StreamError& error) {
  if (dead_) return;
  Stream* s = FindActive(stream_id);
  if (s != nullptr) {
    FailStream(s, error);
    return;
  }
  if (!CountReply()) return;
  WriteRstStream(stream_id, error.code, &output_);
  TakeToken(&resets_, ConnectionErrorReason::kStreamErrorFlood);
}

void Connection::Impl::FrameDecoderFailed(const Http2Error& e) {
  // A bad SETTINGS value carries its setting in the message; every other
  // decoder error is named by its FrameDecodeError.
  const FrameDecodeError reason = decoder_.error_reason();
  if (reason == FrameDecodeError::kInvalidSettingValue) {
    FailConnection(e.code(), ConnectionErrorReason::kBadSetting, e.message());
  } else {
    FailConnection(e.code(), ConnectionErrorReason::kBadFrame,
                   FrameDecodeErrorName(reason));
  }
}

void Connection::Impl::FailConnection(Http2ErrorCode code,
                                      ConnectionErrorReason reason,
                                      std::string detail) {
  if (dead_) return;
  ConnectionError error(code, reason, std::move(detail));
  WriteGoAway(last_accepted_id_, code, error.DebugData(), &output_);
  Kill(std::move(error), code, /*remote=*/false, /*report=*/true);
}

void Connection::Impl::Kill(ConnectionError error, Http2ErrorCode stream_code,
                            bool remote, bool report) {
  if (dead_) return;
  dead_ = true;
  error_ = std::move(error);
  if (!decoder_.failed()) {
    // No callback follows; Decode returns this (never read: we are dead).
    decoder_.Stop(Http2Error::Connection(error_.code(), error_.DebugData()));
  }
  write_queue_.clear();
  conn_blocked_.clear();
  pending_.clear();
  pending_head_ = 0;
  std::vector<uint32_t> ids;
  ids.reserve(streams_.size());
  for (const auto& entry : streams_) ids.push_back(entry.first);
  std::sort(ids.begin(), ids.end());
  for (const uint32_t id : ids) {
    Stream* s = FindStream(id);
    if (s == nullptr) continue;
    listener_->OnStreamReset(id, stream_code, remote);
    CloseStream(s, /*reset_by_us=*/true);
  }
  FlushClosed();
  if (report) listener_->OnConnectionError(error_);
}

// ---- Epilogue ----

void Connection::Impl::AfterCall() {
  // Each step can make work for the others (a closed stream frees a slot for
  // a pending one; OnStreamClosed may submit); a few rounds settle it.
  for (int round = 0; round < 16; ++round) {
    bool progressed = false;
    if (!dead_) {
      MaybeAckResets();
      progressed |= StartPendingStreams();
      progressed |= Pump();
    }
    progressed |= FlushWritable();
    progressed |= FlushClosed();
    if (!progressed) break;
  }
  MaybeDrained();
  ++call_gen_;  // What is still queued now, the application saw queued.
  for (auto& s : graveyard_) {
    if (pool_.size() < kStreamPoolSize) pool_.push_back(std::move(s));
  }
  graveyard_.clear();
}

bool Connection::Impl::FlushWritable() {
  if (writable_ids_.empty()) return false;
  // Callbacks may submit (nested calls: they only queue) but never run the
  // pump, so the list does not grow while it is delivered; swap anyway.
  std::vector<uint32_t> ids;
  ids.swap(writable_ids_);
  for (const uint32_t id : ids) {
    const Stream* s = FindStream(id);
    if (s != nullptr && s->state != StreamState::kClosed && !s->waited &&
        !s->has_queued_output()) {
      listener_->OnStreamWritable(id);
    }
  }
  if (writable_ids_.empty()) {
    ids.clear();
    writable_ids_.swap(ids);  // Keep the storage.
  }
  return true;
}

bool Connection::Impl::FlushClosed() {
  if (closed_head_ == closed_ids_.size()) return false;
  // Callbacks may close more streams: they append, and are delivered too.
  while (closed_head_ < closed_ids_.size()) {
    listener_->OnStreamClosed(closed_ids_[closed_head_++]);
  }
  closed_ids_.clear();
  closed_head_ = 0;
  return true;
}

void Connection::Impl::MaybeDrained() {
  if (dead_ || drained_) return;
  if (!final_goaway_sent_ && !goaway_received_) return;
  if (!streams_.empty()) return;
  drained_ = true;
  listener_->OnDrained();
}

// ---- Connection: forwarding ----

Connection::Connection(const ConnectionOptions& options,
                       ConnectionListener* listener, int64_t now_ns)
    : impl_(std::make_unique<Impl>(options, listener, now_ns)) {}
Connection::~Connection() = default;

bool Connection::Receive(const Slice& bytes, int64_t now_ns) {
  return impl_->Receive(bytes, now_ns);
}
bool Connection::Receive(const SliceBuffer& bytes, int64_t now_ns) {
  return impl_->Receive(bytes, now_ns);
}
void Connection::OnTransportClosed() { impl_->OnTransportClosed(); }
bool Connection::WantsWrite() const { return !impl_->output().empty(); }
const SliceBuffer& Connection::output() const { return impl_->output(); }
void Connection::ConsumeOutput(size_t n) { impl_->ConsumeOutput(n); }
void Connection::TakeOutput(SliceBuffer* out) { impl_->TakeOutput(out); }
void Connection::ReleaseIdleMemory() { impl_->ReleaseIdleMemory(); }
int64_t Connection::NextDeadline() const { return impl_->NextDeadline(); }
void Connection::OnTimer(int64_t now_ns) { impl_->OnTimer(now_ns); }
absl::StatusOr<uint32_t> Connection::SubmitRequest(
    absl::Span<const hpack::HeaderField> headers, bool end_stream,
    void* user_data) {
  return impl_->SubmitRequest(headers, end_stream, user_data);
}
absl::Status Connection::SubmitHeaders(
    uint32_t stream_id, absl::Span<const hpack::HeaderField> headers,
    bool end_stream) {
  return impl_->SubmitHeaders(stream_id, headers, end_stream);
}
absl::Status Connection::SubmitData(uint32_t stream_id, SliceBuffer data,
                                    bool end_stream) {
  return impl_->SubmitData(stream_id, std::move(data), end_stream);
}
absl::Status Connection::SubmitTrailers(
    uint32_t stream_id, absl::Span<const hpack::HeaderField> trailers) {
  return impl_->SubmitTrailers(stream_id, trailers);
}
void Connection::ResetStream(uint32_t stream_id, Http2ErrorCode code) {
  impl_->ResetStream(stream_id, code);
}
void Connection::ConsumeData(uint32_t stream_id, size_t bytes) {
  impl_->ConsumeData(stream_id, bytes);
}
void Connection::SetStreamUserData(uint32_t stream_id, void* user_data) {
  impl_->SetStreamUserData(stream_id, user_data);
}
void* Connection::GetStreamUserData(uint32_t stream_id) const {
  return impl_->GetStreamUserData(stream_id);
}
void Connection::SendPing(uint64_t opaque) { impl_->SendPing(opaque); }
void Connection::GracefulShutdown(int64_t now_ns) {
  impl_->GracefulShutdown(now_ns);
}
void Connection::GoAway(Http2ErrorCode code, std::string_view debug_data) {
  impl_->GoAway(code, debug_data);
}
Role Connection::role() const { return impl_->role(); }
bool Connection::dead() const { return impl_->dead(); }
bool Connection::done() const { return impl_->done(); }
bool Connection::goaway_received() const { return impl_->goaway_received(); }
const ConnectionError& Connection::error() const { return impl_->error(); }
const Http2Settings& Connection::local_settings() const {
  return impl_->local_settings();
}
const Http2Settings& Connection::remote_settings() const {
  return impl_->remote_settings();
}
size_t Connection::num_active_streams() const {
  return impl_->num_active_streams();
}
size_t Connection::header_block_memory() const {
  return impl_->header_block_memory();
}
size_t Connection::num_pending_streams() const {
  return impl_->num_pending_streams();
}
size_t Connection::queued_send_bytes() const {
  return impl_->queued_send_bytes();
}
size_t Connection::unconsumed_receive_bytes() const {
  return impl_->unconsumed_receive_bytes();
}
int64_t Connection::connection_send_window() const {
  return impl_->connection_send_window();
}
size_t Connection::stream_queued_bytes(uint32_t stream_id) const {
  return impl_->stream_queued_bytes(stream_id);
}
int64_t Connection::stream_send_window(uint32_t stream_id) const {
  return impl_->stream_send_window(stream_id);
}
uint32_t Connection::last_accepted_stream_id() const {
  return impl_->last_accepted_stream_id();
}
uint64_t Connection::stream_lookups() const { return impl_->stream_lookups(); }
size_t Connection::encoder_table_entries() const {
  return impl_->encoder_table_entries();
}
uint64_t Connection::encoder_table_version() const {
  return impl_->encoder_table_version();
}
bool Connection::local_stream_ids_exhausted() const {
  return impl_->local_stream_ids_exhausted();
}
uint64_t Connection::headers_or_data_sent() const {
  return impl_->headers_or_data_sent();
}

}  // namespace transport
