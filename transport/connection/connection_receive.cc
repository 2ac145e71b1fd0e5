// Connection, receive side: the FrameListener callbacks for every frame the
// peer sends, header block assembly and decoding, and the stream state rules
// of RFC 9113 5.1 for what arrives. See connection_impl.h.

#include <algorithm>
#include <string>
#include <utility>

#include "hpack/decode_error.h"
#include "transport/connection/connection_impl.h"
#include "transport/connection/header_rules.h"
#include "transport/frame/frame_writer.h"

namespace transport {
namespace {

// Details of connection errors, built only when one happens.
std::string StreamDetail(uint32_t stream_id) {
  return "stream " + std::to_string(stream_id);
}

std::string BlockSizeDetail(size_t octets) {
  return std::to_string(octets) + " octets";
}

StreamError BadField(hpack::DecodeError e) {
  return {Http2ErrorCode::kProtocolError, StreamErrorReason::kBadField,
          hpack::DecodeErrorName(e)};
}

StreamError BrokenRule(HeaderRuleError e) {
  return {Http2ErrorCode::kProtocolError, StreamErrorReason::kHeaderRule,
          HeaderRuleErrorName(e)};
}

}  // namespace

// ---- DATA ----

void Connection::Impl::OnDataStart(const FrameHeader& header) {
  data_stream_ = nullptr;
  data_length_ = header.length;
  data_delivered_ = 0;
  if (dead_) return;
  const uint32_t id = header.stream_id;
  // The connection window counts every DATA octet, padding included, whatever
  // becomes of the stream (RFC 9113 6.9).
  uint32_t increment = 0;
  if (!conn_recv_.OnReceived(header.length, &increment)) {
    FailConnection(Http2ErrorCode::kFlowControlError,
                   ConnectionErrorReason::kConnectionWindowExceeded,
                   StreamDetail(id));
    return;
  }
  // Within the receive buffer limit the connection's credit goes back now.
  if (increment > 0) WriteWindowUpdate(0, increment, &output_);
  peer_sent_since_reset_ping_ = true;
  if (header.length == 0 && !header.has_flags(kFlagEndStream) &&
      !TakeToken(&empty_data_, ConnectionErrorReason::kEmptyDataFlood)) {
    return;
  }
  Stream* s = FindActive(id);
  if (s == nullptr) {
    if (IsIdle(id)) {
      FailConnection(Http2ErrorCode::kProtocolError,
                     ConnectionErrorReason::kDataOnIdleStream,
                     StreamDetail(id));
      return;
    }
    CreditConnection(header.length);
    if (header.has_flags(kFlagEndStream)) NoteAnswered(id);
    // Closed: STREAM_CLOSED if the peer knew it (5.1), else ignored.
    if (ClassifyClosed(id) != ClosedId::kIgnore) {
      FailStreamId(id, Http2ErrorCode::kStreamClosed,
                   StreamErrorReason::kStreamClosed);
    }
    return;
  }
  if (s->remote_closed()) {
    CreditConnection(header.length);
    FailStream(s, Http2ErrorCode::kStreamClosed,
               StreamErrorReason::kStreamClosed);
    return;
  }
  if (!s->final_headers_received) {
    // A response body before the (final) response headers: malformed.
    CreditConnection(header.length);
    FailStream(s, Http2ErrorCode::kProtocolError,
               StreamErrorReason::kDataBeforeHeaders);
    return;
  }
  if (!s->recv_window.OnReceived(header.length)) {
    CreditConnection(header.length);
    FailStream(s, Http2ErrorCode::kFlowControlError,
               StreamErrorReason::kStreamWindowExceeded);
    return;
  }
  data_stream_ = s;
}

void Connection::Impl::OnData(uint32_t stream_id, Slice piece) {
  Stream* s = data_stream_;
  if (s == nullptr || dead_) return;
  data_delivered_ += static_cast<uint32_t>(piece.size());
  s->data_received += piece.size();
  if (s->content_length >= 0 &&
      s->data_received > static_cast<uint64_t>(s->content_length)) {
    FailStream(s, Http2ErrorCode::kProtocolError,
               StreamErrorReason::kContentLength);  // 8.1.1.
    return;
  }
  listener_->OnData(stream_id, std::move(piece));
}

void Connection::Impl::OnDataEnd(uint32_t stream_id, bool end_stream) {
  Stream* s = data_stream_;
  data_stream_ = nullptr;
  if (s == nullptr || dead_ || s->state == StreamState::kClosed) return;
  // Padding (and the pad length octet) never reaches the application: it is
  // consumed at once.
  const uint32_t padding = data_length_ - data_delivered_;
  if (padding > 0) {
    WriteUpdates(stream_id, ConsumeReceived(&conn_recv_, &s->recv_window,
                                            !end_stream, padding));
  }
  if (!end_stream) return;
  if (s->content_length >= 0 &&
      s->data_received != static_cast<uint64_t>(s->content_length)) {
    FailStream(s, Http2ErrorCode::kProtocolError,
               StreamErrorReason::kContentLength);  // 8.1.1.
    return;
  }
  listener_->OnEndStream(stream_id);
  if (s->state != StreamState::kClosed) RemoteEnd(s);
}

void Connection::Impl::CreditConnection(size_t n) {
  if (n == 0) return;
  const uint32_t increment =
      ConsumeReceived(&conn_recv_, nullptr, false, n).connection_increment;
  if (increment > 0 && !dead_) WriteWindowUpdate(0, increment, &output_);
}

void Connection::Impl::RemoteEnd(Stream* s) {
  if (s->state == StreamState::kOpen) {
    SetState(s, StreamState::kHalfClosedRemote);
  } else if (s->state == StreamState::kHalfClosedLocal) {
    CloseStream(s, /*reset_by_us=*/false);
  }
}

// ---- Header blocks ----

void Connection::Impl::OnHeaders(const FrameHeader& header,
                                 const PriorityFields* /*priority*/,
                                 std::string_view fragment) {
  if (dead_) return;
  peer_sent_since_reset_ping_ = true;
  const bool end_stream = header.has_flags(kFlagEndStream);
  if (header.has_flags(kFlagEndHeaders)) {
    // The common case: the whole block in one frame, decoded in place.
    ProcessHeaderBlock(header.stream_id, end_stream, fragment);
    return;
  }
  if (fragment.size() > options_.max_header_block_bytes) {
    FailConnection(Http2ErrorCode::kEnhanceYourCalm,
                   ConnectionErrorReason::kHeaderBlockTooLarge,
                   BlockSizeDetail(fragment.size()));
    return;
  }
  block_.assign(fragment.data(), fragment.size());
  block_stream_ = header.stream_id;
  block_end_stream_ = end_stream;
  block_frames_ = 0;
  if (options_.header_block_timeout_ns > 0) {
    block_deadline_ = now_ + options_.header_block_timeout_ns;
  }
}

void Connection::Impl::OnContinuation(const FrameHeader& header,
                                      std::string_view fragment) {
  if (dead_) return;
  // CONTINUATION flood: bound the octets of one block and its frames (past
  // max_continuation_frames, a minimum average size), and fail as soon as
  // either is crossed (nothing beyond is buffered).
  const size_t size = block_.size() + fragment.size();
  if (++block_frames_ > options_.max_continuation_frames &&
      size / block_frames_ < options_.min_continuation_average_bytes) {
    FailConnection(Http2ErrorCode::kEnhanceYourCalm,
                   ConnectionErrorReason::kContinuationFlood);
    return;
  }
  if (size > options_.max_header_block_bytes) {
    FailConnection(Http2ErrorCode::kEnhanceYourCalm,
                   ConnectionErrorReason::kHeaderBlockTooLarge,
                   BlockSizeDetail(size));
    return;
  }
  block_.append(fragment.data(), fragment.size());
  if (!header.has_flags(kFlagEndHeaders)) return;
  block_deadline_ = kNoDeadline;
  ProcessHeaderBlock(block_stream_, block_end_stream_, block_);
  if (block_.capacity() > 16 * 1024) {
    std::string().swap(block_);  // Give back what a large block took.
  } else {
    block_.clear();
  }
}

void Connection::Impl::ProcessHeaderBlock(uint32_t stream_id, bool end_stream,
                                          std::string_view block) {
  // Decode first, whatever becomes of the stream: the HPACK context must see
  // every block (RFC 9113 4.3).
  const hpack::DecodeError e = hpack_decoder_.Decode(block, &header_list_);
  if (hpack::IsConnectionError(e)) {
    FailConnection(Http2ErrorCode::kCompressionError,
                   ConnectionErrorReason::kHpackError,
                   hpack::DecodeErrorName(e));
    return;
  }
  if (e == hpack::DecodeError::kHeaderListTooLarge && IsHpackBomb(block)) {
    FailConnection(Http2ErrorCode::kEnhanceYourCalm,
                   ConnectionErrorReason::kHpackBomb);
    return;
  }
  Stream* s = FindActive(stream_id);
  if (s == nullptr) {
    HeadersWithoutStream(stream_id, end_stream, e);
  } else {
    HeadersOnStream(s, end_stream, e);
  }
  // An oversized literal (or many fields) grew the reused list; do not keep
  // that memory.
  if (header_list_.capacity_bytes() >
      std::max<size_t>(64 << 10, 2 * options_.header_list_limit())) {
    header_list_ = hpack::HeaderList();
  }
}

bool Connection::Impl::IsHpackBomb(std::string_view block) const {
  // Saturating: with limits near SIZE_MAX nothing is a bomb.
  const size_t base = std::max({block.size(), options_.header_list_limit(),
                                size_t{local_.max_header_list_size}});
  const size_t factor = ConnectionOptions::kHpackBombFactor;
  return base <= SIZE_MAX / factor &&
         hpack_decoder_.block_list_size() > factor * base;
}

void Connection::Impl::HeadersWithoutStream(uint32_t id, bool end_stream,
                                            hpack::DecodeError decode_error) {
  if (IsLocalId(id)) {
    // Only we open streams of our parity.
    if (IsIdle(id)) {
      FailConnection(Http2ErrorCode::kProtocolError,
                     ConnectionErrorReason::kHeadersOnIdleStream,
                     StreamDetail(id));
      return;
    }
    // Closed: a client ignores whatever comes on its own closed streams
    // (ClassifyClosed; the block was decoded for the HPACK context).
    if (end_stream) NoteAnswered(id);
    return;
  }
  if (options_.role == Role::kClient) {
    FailConnection(Http2ErrorCode::kProtocolError,
                   ConnectionErrorReason::kServerInitiatedStream,
                   StreamDetail(id));
    return;
  }
  if (id <= last_peer_id_) {
    switch (ClassifyClosed(id)) {
      case ClosedId::kIgnore:  // Reset or refused by us, or long closed.
        return;
      case ClosedId::kStreamClosed:  // 5.1.
        FailConnection(Http2ErrorCode::kStreamClosed,
                       ConnectionErrorReason::kHeadersOnClosedStream,
                       StreamDetail(id));
        return;
      case ClosedId::kNeverOpened:  // A new stream id not above the last.
        FailConnection(Http2ErrorCode::kProtocolError,
                       ConnectionErrorReason::kStreamIdNotIncreasing,
                       StreamDetail(id));
        return;
    }
  }
  // A new peer stream.
  NotePeerStreamId(id);
  if (final_goaway_sent_ && id > goaway_sent_last_id_) {
    return;  // After our GOAWAY: ignored (as any later frame on it).
  }
  // Over the header list limit: a stream the listener can answer (8.1.1
  // rules are not checked on what was kept).
  const bool too_large =
      decode_error == hpack::DecodeError::kHeaderListTooLarge;
  if (decode_error != hpack::DecodeError::kOk && !too_large) {
    FailStreamId(id, BadField(decode_error));
    return;
  }
  HeaderInfo info;
  if (!too_large) {
    const HeaderRuleError rule =
        CheckHeaders(HeaderKind::kRequest, header_list_, &info);
    if (rule != HeaderRuleError::kOk) {
      FailStreamId(id, BrokenRule(rule));
      return;
    }
    if (end_stream && info.content_length > 0) {
      FailStreamId(id, Http2ErrorCode::kProtocolError,
                   StreamErrorReason::kContentLength);
      return;
    }
  }
  if (active_peer_ >= local_.max_concurrent_streams) {
    FailStreamId(id, Http2ErrorCode::kRefusedStream,
                 StreamErrorReason::kMaxConcurrentStreams);
    return;
  }
  Stream* s = NewStream(
      id, end_stream ? StreamState::kHalfClosedRemote : StreamState::kOpen);
  last_accepted_id_ = id;
  s->final_headers_received = true;
  if (too_large) {
    HeaderListTooLarge(s, /*end_stream=*/false);  // Already in the state.
    return;
  }
  s->content_length = info.content_length;
  listener_->OnHeaders(id, header_list_, end_stream);
}

void Connection::Impl::HeadersOnStream(Stream* s, bool end_stream,
                                       hpack::DecodeError decode_error) {
  const uint32_t id = s->id;
  if (s->remote_closed()) {
    FailStream(s, Http2ErrorCode::kStreamClosed,
               StreamErrorReason::kStreamClosed);  // 5.1 half-closed (remote).
    return;
  }
  if (s->final_headers_received && !end_stream) {
    // Trailers must end the stream (8.1), whatever their size.
    FailStream(s, Http2ErrorCode::kProtocolError,
               StreamErrorReason::kTrailersWithoutEndStream);
    return;
  }
  if (decode_error == hpack::DecodeError::kHeaderListTooLarge) {
    HeaderListTooLarge(s, end_stream);
    return;
  }
  if (decode_error != hpack::DecodeError::kOk) {
    FailStream(s, BadField(decode_error));  // An invalid field.
    return;
  }
  HeaderInfo info;
  if (!s->final_headers_received) {
    // Client: a response (informational or final).
    const HeaderRuleError rule =
        CheckHeaders(HeaderKind::kResponse, header_list_, &info);
    if (rule != HeaderRuleError::kOk) {
      FailStream(s, BrokenRule(rule));
      return;
    }
    if (info.informational()) {
      if (end_stream) {
        FailStream(s, Http2ErrorCode::kProtocolError,
                   StreamErrorReason::kInformationalEndStream);  // 8.1.
        return;
      }
      listener_->OnHeaders(id, header_list_, false);
      return;
    }
    s->final_headers_received = true;
    // HEAD and 304 responses declare a length they do not send (RFC 9110).
    const bool bodiless =
        s->head_request || info.status == 304 || info.status == 204;
    s->content_length = bodiless ? -1 : info.content_length;
    if (end_stream && s->content_length > 0) {
      FailStream(s, Http2ErrorCode::kProtocolError,
                 StreamErrorReason::kContentLength);
      return;
    }
    listener_->OnHeaders(id, header_list_, end_stream);
    if (end_stream && s->state != StreamState::kClosed) RemoteEnd(s);
    return;
  }
  // Trailers: END_STREAM and no pseudo-headers (8.1).
  if (!end_stream) {
    FailStream(s, Http2ErrorCode::kProtocolError,
               StreamErrorReason::kTrailersWithoutEndStream);
    return;
  }
  const HeaderRuleError rule =
      CheckHeaders(HeaderKind::kTrailers, header_list_, &info);
  if (rule != HeaderRuleError::kOk) {
    FailStream(s, BrokenRule(rule));
    return;
  }
  if (s->content_length >= 0 &&
      s->data_received != static_cast<uint64_t>(s->content_length)) {
    FailStream(s, Http2ErrorCode::kProtocolError,
               StreamErrorReason::kContentLength);
    return;
  }
  listener_->OnTrailers(id, header_list_);
  if (s->state != StreamState::kClosed) RemoteEnd(s);
}

void Connection::Impl::HeaderListTooLarge(Stream* s, bool end_stream) {
  const uint32_t id = s->id;
  const bool ended_before = s->end_queued || s->local_closed();
  // What comes after these headers is not the message they began.
  s->final_headers_received = true;
  s->content_length = -1;
  // The block's END_STREAM first: a stream both sides have ended is closed
  // before the listener hears, so its answer (a reset) sends nothing.
  if (end_stream) RemoteEnd(s);
  listener_->OnHeaderListTooLarge(id, header_list_,
                                  hpack_decoder_.block_list_size());
  // Gone: closed, the listener reset it, or the connection died meanwhile.
  if (dead_ || FindActive(id) != s) return;
  const bool answered = !ended_before && (s->end_queued || s->local_closed());
  // Our side had ended (e.g. a response still queued behind flow control)
  // and the peer's ends too: the stream completes as it is; only the
  // peer's block is dropped.
  const bool complete = ended_before && end_stream;
  if (!answered && !complete) {
    FailStream(s, Http2ErrorCode::kProtocolError,
               StreamErrorReason::kHeaderListTooLarge);
  }
}

void Connection::Impl::OnPushPromise(const FrameHeader& /*header*/,
                                     uint32_t /*promised_stream_id*/,
                                     std::string_view /*fragment*/) {
  // We never enable push (a client sends ENABLE_PUSH 0), and a server can
  // never receive one (RFC 9113 8.4).
  FailConnection(Http2ErrorCode::kProtocolError,
                 ConnectionErrorReason::kPushPromise);
}

// ---- Stream control ----

void Connection::Impl::OnRstStream(uint32_t stream_id, Http2ErrorCode code) {
  if (dead_) return;
  // Rapid reset (CVE-2023-44487), an attack on a server's work: each
  // RST_STREAM a client sends costs a token. A server's resets cost a client
  // nothing (grpc++ answers a burst of cancelled calls with as many).
  if (options_.role == Role::kServer &&
      !TakeToken(&resets_, ConnectionErrorReason::kRstStreamFlood)) {
    return;
  }
  Stream* s = FindActive(stream_id);
  if (s == nullptr) {
    if (IsIdle(stream_id)) {
      FailConnection(Http2ErrorCode::kProtocolError,
                     ConnectionErrorReason::kRstStreamOnIdleStream,
                     StreamDetail(stream_id));
      return;
    }
    NoteAnswered(stream_id);
    return;  // Closed: ignore.
  }
  listener_->OnStreamReset(stream_id, code, /*remote=*/true);
  CloseStream(s, /*reset_by_us=*/false);
}

void Connection::Impl::OnWindowUpdate(uint32_t stream_id, uint32_t increment) {
  if (dead_) return;
  if (!TakeToken(&window_updates_, ConnectionErrorReason::kWindowUpdateFlood)) {
    return;
  }
  if (stream_id == 0) {
    if (!conn_send_.Increase(increment)) {
      FailConnection(Http2ErrorCode::kFlowControlError,
                     ConnectionErrorReason::kConnectionWindowOverflow);
    }
    return;  // The epilogue's Pump uses the new room.
  }
  Stream* s = FindActive(stream_id);
  if (s == nullptr) {
    if (IsIdle(stream_id)) {
      FailConnection(Http2ErrorCode::kProtocolError,
                     ConnectionErrorReason::kWindowUpdateOnIdleStream,
                     StreamDetail(stream_id));
    }
    return;  // Closed: allowed for a while (5.1), ignored.
  }
  if (!s->send_window.Increase(increment)) {
    FailStream(s, Http2ErrorCode::kFlowControlError,
               StreamErrorReason::kStreamWindowOverflow);
    return;
  }
  if (s->has_queued_output()) Enqueue(s);
}

void Connection::Impl::OnPriority(uint32_t /*stream_id*/,
                                  const PriorityFields& /*priority*/) {
  if (dead_) return;
  // Deprecated: ignored.
  TakeToken(&other_frames_, ConnectionErrorReason::kPriorityFlood);
}

void Connection::Impl::OnUnknownFrame(const FrameHeader& /*header*/) {
  if (dead_) return;
  TakeToken(&other_frames_, ConnectionErrorReason::kUnknownFrameFlood);
}

void Connection::Impl::OnStreamError(const Http2Error& error,
                                     FrameDecodeError reason) {
  FailStreamId(error.stream_id(),
               StreamError{error.code(), StreamErrorReason::kBadFrame,
                           FrameDecodeErrorName(reason)});
}

// ---- Connection control ----

void Connection::Impl::OnSettings(SettingsView settings) {
  if (dead_) return;
  if (!TakeToken(&settings_budget_, ConnectionErrorReason::kSettingsFlood)) {
    return;
  }
  for (const Setting setting : settings) {
    switch (static_cast<SettingId>(setting.id)) {
      case SettingId::kHeaderTableSize:
        encoder_.SetPeerMaxTableSize(setting.value);
        break;
      case SettingId::kEnablePush:
        if (options_.role == Role::kClient && setting.value != 0) {
          FailConnection(Http2ErrorCode::kProtocolError,
                         ConnectionErrorReason::kEnablePush);
          return;
        }
        break;
      case SettingId::kInitialWindowSize: {
        // 6.9.2: every open stream's send window moves by the difference.
        const int64_t delta =
            int64_t{setting.value} - int64_t{remote_.initial_window_size};
        for (const auto& entry : streams_) {
          Stream* s = entry.second;
          if (s->state == StreamState::kPending) continue;
          if (!s->send_window.Adjust(delta)) {
            FailConnection(Http2ErrorCode::kFlowControlError,
                           ConnectionErrorReason::kInitialWindowOverflow,
                           StreamDetail(s->id));
            return;
          }
          if (delta > 0 && s->has_queued_output()) Enqueue(s);
        }
        break;
      }
      default:
        break;  // MAX_CONCURRENT_STREAMS, MAX_FRAME_SIZE, MAX_HEADER_LIST_SIZE:
                // read from remote_ where used.
    }
    (void)remote_.Apply(setting);  // Valid: the frame decoder checked it.
  }
  remote_settings_received_ = true;
  if (!CountReply()) return;
  WriteSettingsAck(&output_);
  listener_->OnRemoteSettings(remote_);
}

void Connection::Impl::OnSettingsAck() {
  if (dead_) return;
  if (!awaiting_settings_ack_) {
    TakeToken(&other_frames_, ConnectionErrorReason::kSettingsAckFlood);
    return;
  }
  awaiting_settings_ack_ = false;
  // Our settings are in force from here.
  hpack_decoder_.SetMaxTableSizeLimit(local_.header_table_size);
  const int64_t delta =
      int64_t{local_.initial_window_size} - int64_t{recv_initial_window_};
  recv_initial_window_ = local_.initial_window_size;
  if (delta != 0) {
    for (const auto& entry : streams_) entry.second->recv_window.Adjust(delta);
  }
  listener_->OnSettingsAcked();
}

void Connection::Impl::OnPing(uint64_t opaque_data, bool ack) {
  if (dead_) return;
  if (ack) {
    if (shutdown_ping_outstanding_ && opaque_data == 0x73687574646f776eULL) {
      SendFinalGoAway();
      return;
    }
    if ((opaque_data >> 32) == (kResetPingTag >> 32)) {
      OnResetPingAck(static_cast<uint32_t>(opaque_data));
      return;
    }
    listener_->OnPingAck(opaque_data);
    return;
  }
  if (!TakeToken(&pings_, ConnectionErrorReason::kPingFlood)) return;
  listener_->OnPing(opaque_data);
  if (dead_ || !CountReply()) return;
  WritePing(opaque_data, /*ack=*/true, &output_);
}

void Connection::Impl::OnGoAway(uint32_t last_stream_id, Http2ErrorCode code,
                                std::string_view debug_data) {
  if (dead_) return;
  if (goaway_received_) {
    last_stream_id = std::min(last_stream_id, goaway_received_last_id_);
  }
  goaway_received_ = true;
  goaway_received_last_id_ = last_stream_id;
  listener_->OnGoAway(last_stream_id, code, debug_data);
  // Our streams above last_stream_id were not (and will not be) processed:
  // safe to retry elsewhere.
  std::vector<uint32_t> refused;
  for (const auto& entry : streams_) {
    if (IsLocalId(entry.first) && entry.first > last_stream_id) {
      refused.push_back(entry.first);
    }
  }
  std::sort(refused.begin(), refused.end());
  for (const uint32_t id : refused) {
    Stream* s = FindStream(id);
    if (s == nullptr || dead_) continue;
    listener_->OnStreamReset(id, Http2ErrorCode::kRefusedStream,
                             /*remote=*/true);
    CloseStream(s, /*reset_by_us=*/true);
  }
}

}  // namespace transport
