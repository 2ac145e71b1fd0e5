// Connection, send side: submits, starting queued client streams, the DATA
// pump (flow control, round-robin fairness, the output high-water mark), and
// the receive policy's WINDOW_UPDATEs. See connection_impl.h.

#include <algorithm>
#include <string>
#include <utility>

#include "absl/status/status.h"
#include "transport/connection/connection_impl.h"
#include "transport/connection/header_rules.h"
#include "transport/frame/frame_writer.h"

namespace transport {

// ---- Submits ----

absl::Status Connection::Impl::CheckOutgoing(
    HeaderKind kind, absl::Span<const hpack::HeaderField> fields,
    HeaderInfo* info) const {
  const HeaderRuleError e =
      CheckHeaders(kind, fields, info, /*validate_fields=*/true);
  if (e != HeaderRuleError::kOk) {
    return absl::InvalidArgumentError(
        std::string("header block breaks RFC 9113: ") + HeaderRuleErrorName(e));
  }
  if (hpack::HeaderListSize(fields) > remote_.max_header_list_size) {
    return absl::ResourceExhaustedError(
        "header list larger than the peer's MAX_HEADER_LIST_SIZE");
  }
  return absl::OkStatus();
}

absl::StatusOr<Stream*> Connection::Impl::SubmitTarget(uint32_t stream_id) {
  if (dead_) return absl::UnavailableError("connection is dead");
  Stream* s = FindStream(stream_id);
  if (s == nullptr) return absl::NotFoundError("no such stream");
  if (s->end_queued || s->local_closed()) {
    return absl::FailedPreconditionError("our side of the stream has ended");
  }
  return s;
}

absl::StatusOr<uint32_t> Connection::Impl::SubmitRequest(
    absl::Span<const hpack::HeaderField> headers, bool end_stream,
    void* user_data) {
  CallScope scope(this);
  if (options_.role != Role::kClient) {
    return absl::FailedPreconditionError("only a client submits requests");
  }
  if (dead_ || goaway_received_ || shutdown_started_) {
    return absl::UnavailableError("connection is going away");
  }
  if (next_local_id_ > kMaxStreamId) {
    return absl::UnavailableError("stream ids exhausted");
  }
  HeaderInfo info;
  absl::Status status = CheckOutgoing(HeaderKind::kRequest, headers, &info);
  if (!status.ok()) return status;
  const bool start_now =
      pending_count_ == 0 && CountedLocalStreams() < PeerStreamLimit();
  if (!start_now && pending_count_ >= options_.max_pending_streams) {
    return absl::ResourceExhaustedError("too many pending streams");
  }
  const uint32_t id = next_local_id_;
  next_local_id_ += 2;
  Stream* s = NewStream(id, StreamState::kPending);
  s->user_data = user_data;
  s->head_request = info.is_head;
  s->end_queued = end_stream;
  if (start_now) {
    StartStream(s, headers);  // Encoded straight from the caller's fields.
  } else {
    // Copied with both flags: it encodes as the caller's fields would.
    for (const hpack::HeaderField& f : headers) s->request_headers.Append(f);
    pending_.push_back(id);
  }
  return id;
}

absl::Status Connection::Impl::SubmitHeaders(
    uint32_t stream_id, absl::Span<const hpack::HeaderField> headers,
    bool end_stream) {
  CallScope scope(this);
  if (options_.role != Role::kServer) {
    return absl::FailedPreconditionError(
        "a client sends headers with SubmitRequest");
  }
  absl::StatusOr<Stream*> target = SubmitTarget(stream_id);
  if (!target.ok()) return target.status();
  Stream* s = *target;
  if (s->final_headers_sent) {
    return absl::FailedPreconditionError(
        "final headers already sent (trailers: SubmitTrailers)");
  }
  HeaderInfo info;
  absl::Status status = CheckOutgoing(HeaderKind::kResponse, headers, &info);
  if (!status.ok()) return status;
  if (info.informational() && end_stream) {
    return absl::InvalidArgumentError("a 1xx response cannot end the stream");
  }
  WriteHeaderBlock(stream_id, headers, end_stream);
  if (!info.informational()) s->final_headers_sent = true;
  if (end_stream) {
    s->end_queued = true;
    LocalEnd(s);
  }
  return absl::OkStatus();
}

absl::Status Connection::Impl::SubmitData(uint32_t stream_id, SliceBuffer data,
                                          bool end_stream) {
  CallScope scope(this);
  absl::StatusOr<Stream*> target = SubmitTarget(stream_id);
  if (!target.ok()) return target.status();
  Stream* s = *target;
  if (options_.role == Role::kServer && !s->final_headers_sent) {
    return absl::FailedPreconditionError("DATA before the response headers");
  }
  queued_send_bytes_ += data.size();
  s->send_queue.Append(std::move(data));
  if (end_stream) s->end_queued = true;
  if (s->has_queued_output()) {
    Enqueue(s);
    MarkWritableDue(s);
  }
  return absl::OkStatus();
}

absl::Status Connection::Impl::SubmitTrailers(
    uint32_t stream_id, absl::Span<const hpack::HeaderField> trailers) {
  CallScope scope(this);
  absl::StatusOr<Stream*> target = SubmitTarget(stream_id);
  if (!target.ok()) return target.status();
  Stream* s = *target;
  if (options_.role == Role::kServer && !s->final_headers_sent) {
    return absl::FailedPreconditionError(
        "trailers before the response headers");
  }
  HeaderInfo info;
  absl::Status status = CheckOutgoing(HeaderKind::kTrailers, trailers, &info);
  if (!status.ok()) return status;
  s->end_queued = true;
  if (s->state != StreamState::kPending && s->send_queue.empty()) {
    // Nothing queued ahead: encode straight into the output, no copy.
    WriteHeaderBlock(stream_id, trailers, /*end_stream=*/true);
    LocalEnd(s);
    return absl::OkStatus();
  }
  s->trailers.clear();
  for (const hpack::HeaderField& f : trailers) {
    s->trailers.Append(f.name, f.value, f.sensitive);
  }
  s->trailers_queued = true;
  Enqueue(s);
  MarkWritableDue(s);
  return absl::OkStatus();
}

void Connection::Impl::ResetStream(uint32_t stream_id, Http2ErrorCode code) {
  CallScope scope(this);
  if (dead_) return;
  Stream* s = FindStream(stream_id);
  if (s == nullptr) return;
  if (s->state != StreamState::kPending && stream_id != failing_stream_) {
    WriteRstStream(stream_id, code, &output_);
    NoteResetSent(s);
  }
  CloseStream(s, /*reset_by_us=*/true);
}

void Connection::Impl::ConsumeData(uint32_t stream_id, size_t bytes) {
  CallScope scope(this);
  if (dead_) return;
  Stream* s = FindActive(stream_id);
  if (s == nullptr) return;
  WriteUpdates(stream_id, ConsumeReceived(&conn_recv_, &s->recv_window,
                                          !s->remote_closed(), bytes));
}

// ---- Writing ----

template <typename Range>
void Connection::Impl::WriteHeaderBlock(uint32_t stream_id, const Range& fields,
                                        bool end_stream) {
  // The encoder's view is copied once, behind each frame header; the order of
  // blocks on the wire is the order of encoding (the HPACK context).
  const std::string_view block = encoder_.EncodeBlock(fields);
  WriteHeaders(stream_id, block, end_stream, remote_.max_frame_size, &output_);
  ++headers_or_data_sent_;
}

void Connection::Impl::WriteUpdates(uint32_t stream_id,
                                    const WindowUpdateAction& action) {
  if (dead_) return;
  if (action.connection_increment > 0) {
    WriteWindowUpdate(0, action.connection_increment, &output_);
  }
  if (action.stream_increment > 0) {
    WriteWindowUpdate(stream_id, action.stream_increment, &output_);
  }
}

bool Connection::Impl::CountReply() {
  if (++queued_replies_ <= options_.max_queued_replies) return true;
  FailConnection(Http2ErrorCode::kEnhanceYourCalm,
                 ConnectionErrorReason::kUnreadReplies);
  return false;
}

void Connection::Impl::LocalEnd(Stream* s) {
  if (s->state == StreamState::kOpen) {
    SetState(s, StreamState::kHalfClosedLocal);
  } else if (s->state == StreamState::kHalfClosedRemote) {
    CloseStream(s, /*reset_by_us=*/false);
  }
}

void Connection::Impl::MarkWritableDue(Stream* s) {
  // Inside a listener callback (depth > 1) or on a stream still waiting to
  // start, the caller sees the data queued when the submit returns, so it is
  // owed OnStreamWritable. An outermost submit runs the pump in its own
  // epilogue: if the data moves there, the caller sees
  // stream_queued_bytes() == 0 on return and needs no event; if it has to
  // wait, Pump owes it the event: the stream was listed in an earlier call
  // than the one it drains in (Stream::queued_call), or found a window spent.
  if (depth_ > 1 || s->state == StreamState::kPending) s->waited = true;
}

void Connection::Impl::Enqueue(Stream* s) {
  if (s->in_write_queue || s->state == StreamState::kPending ||
      s->state == StreamState::kClosed) {
    return;
  }
  s->in_write_queue = true;
  s->queued_call = call_gen_;
  write_queue_.push_back(s->id);
}

bool Connection::Impl::StartPendingStreams() {
  bool started = false;
  while (pending_head_ < pending_.size() &&
         CountedLocalStreams() < PeerStreamLimit() && !goaway_received_) {
    Stream* s = FindStream(pending_[pending_head_++]);
    if (s == nullptr || s->state != StreamState::kPending) continue;
    StartStream(s, s->request_headers);
    s->request_headers.clear();
    started = true;
  }
  if (pending_head_ == pending_.size()) {
    pending_.clear();
    pending_head_ = 0;
  }
  return started;
}

template <typename Range>
void Connection::Impl::StartStream(Stream* s, const Range& headers) {
  SetState(s, StreamState::kOpen);  // Out of the pending count, active.
  // Windows start when the stream does (settings may have changed meanwhile).
  s->send_window = SendWindow(remote_.initial_window_size);
  s->recv_window = ReceiveWindow(recv_initial_window_);
  last_started_local_id_ = s->id;
  const bool end_on_headers =
      s->end_queued && s->send_queue.empty() && !s->trailers_queued;
  WriteHeaderBlock(s->id, headers, end_on_headers);
  s->final_headers_sent = true;
  const uint32_t id = s->id;
  if (end_on_headers) {
    LocalEnd(s);
  } else if (s->has_queued_output()) {
    Enqueue(s);
  }
  listener_->OnStreamStarted(id);
}

bool Connection::Impl::Pump() {
  // Each step takes one id off a queue and costs O(1): no step walks the
  // queues, so submitting on n streams costs O(n) however many wait.
  bool wrote = false;
  while (!dead_) {
    // The peer is not reading fast enough: leave the rest queued (what is
    // still queued when the call returns is owed OnStreamWritable through
    // Stream::queued_call).
    if (output_.size() >= options_.output_high_water) break;
    // The streams the connection window held were ahead of the rest: they go
    // first once it opens.
    IdQueue* queue;
    if (!conn_blocked_.empty() && conn_send_.available() > 0) {
      queue = &conn_blocked_;
    } else if (!write_queue_.empty()) {
      queue = &write_queue_;
    } else {
      break;
    }
    const uint32_t id = queue->pop_front();
    Stream* s = FindStream(id);
    if (s == nullptr || s->state == StreamState::kPending ||
        !s->in_write_queue) {
      continue;
    }
    switch (WriteFromStream(s)) {
      case WriteResult::kDone:
        s->in_write_queue = false;
        wrote = true;
        if (s->waited || s->queued_call != call_gen_) {
          s->waited = false;
          // Delivered by the epilogue once the pump has finished.
          if (s->state != StreamState::kClosed) writable_ids_.push_back(id);
        }
        break;
      case WriteResult::kMore:
        write_queue_.push_back(id);  // Round-robin: one frame per turn.
        wrote = true;
        break;
      case WriteResult::kBlockedStream:
        s->in_write_queue = false;  // Back on its WINDOW_UPDATE.
        s->waited = true;
        break;
      case WriteResult::kBlockedConnection:
        // Only from write_queue_ (conn_blocked_ is served while the window
        // is open): it waits there, in order, without being visited again.
        conn_blocked_.push_back(id);
        s->waited = true;
        break;
    }
  }
  return wrote;
}

Connection::Impl::WriteResult Connection::Impl::WriteFromStream(Stream* s) {
  if (!s->send_queue.empty()) {
    if (s->send_window.available() <= 0) return WriteResult::kBlockedStream;
    if (conn_send_.available() <= 0) return WriteResult::kBlockedConnection;
    const size_t n = static_cast<size_t>(std::min<int64_t>(
        {static_cast<int64_t>(s->send_queue.size()),
         static_cast<int64_t>(remote_.max_frame_size),
         s->send_window.available(), conn_send_.available()}));
    const bool last = n == s->send_queue.size();
    const bool end = last && s->end_queued && !s->trailers_queued;
    WriteDataFrames(s->id, &s->send_queue, n, remote_.max_frame_size, end,
                    &output_);
    ++headers_or_data_sent_;
    s->send_window.Consume(n);
    conn_send_.Consume(n);
    queued_send_bytes_ -= n;
    if (end) {
      LocalEnd(s);
      return WriteResult::kDone;
    }
    if (!last) return WriteResult::kMore;
  }
  if (s->trailers_queued) {
    s->trailers_queued = false;
    WriteHeaderBlock(s->id, s->trailers, /*end_stream=*/true);
    s->trailers.clear();
    LocalEnd(s);
  } else if (s->end_queued && !s->local_closed()) {
    WriteData(s->id, Slice(), /*end_stream=*/true, &output_);
    ++headers_or_data_sent_;
    LocalEnd(s);
  }
  return WriteResult::kDone;
}

}  // namespace transport
