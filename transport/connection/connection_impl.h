// Connection::Impl: the state behind transport::Connection (connection.h).
// Internal to the transport; include connection.h instead.
//
// The implementation is split by direction, one responsibility per file:
// clang-format off
//   connection.cc          the public forwarding, construction, the stream
//                          table, errors (RST_STREAM / GOAWAY), GOAWAY and
//                          shutdown, timers, and the end-of-call epilogue;
//   connection_receive.cc  the FrameListener callbacks: every frame the peer
//                          sends, header blocks, RFC 9113 5.1 state rules;
//   connection_send.cc     submits, the DATA pump (flow control, fairness,
//                          high-water mark), and the frames we write.
// clang-format on
//
// Re-entrancy. Every public entry point opens a CallScope; when the outermost
// scope ends, the epilogue (AfterCall) starts pending client streams, pumps
// queued DATA, delivers deferred OnStreamWritable and OnStreamClosed
// callbacks, reports OnDrained, and frees closed streams. Streams closed
// during a call are unlinked from the table at once but freed only in the
// epilogue, so a Stream* held across a listener callback stays valid (check
// `state == kClosed`).

#ifndef TRANSPORT_CONNECTION_CONNECTION_IMPL_H_
#define TRANSPORT_CONNECTION_CONNECTION_IMPL_H_

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "hpack/decoder.h"
#include "hpack/encoder.h"
#include "hpack/header_list.h"
#include "transport/connection/connection.h"
#include "transport/connection/connection_error.h"
#include "transport/connection/flood_budget.h"
#include "transport/connection/flow_control.h"
#include "transport/connection/header_rules.h"
#include "transport/connection/stream.h"
#include "transport/frame/frame_decoder.h"
#include "transport/frame/http2_error.h"
#include "transport/frame/settings.h"
#include "transport/slice/slice.h"

namespace transport {

class Connection::Impl : public FrameListener {
 public:
  Impl(const ConnectionOptions& options, ConnectionListener* listener,
       int64_t now_ns);
  ~Impl() override;

  // ---- Public API (connection.h documents each) ----
  bool Receive(const Slice& bytes, int64_t now_ns);
  bool Receive(const SliceBuffer& bytes, int64_t now_ns);
  void OnTransportClosed();
  void ConsumeOutput(size_t n);
  void TakeOutput(SliceBuffer* out);
  void ReleaseIdleMemory() {
    if (output_.empty()) output_.Clear();
    if (block_.empty()) {
      std::string().swap(block_);
      header_list_ = hpack::HeaderList();
    }
  }
  int64_t NextDeadline() const;
  void OnTimer(int64_t now_ns);
  absl::StatusOr<uint32_t> SubmitRequest(
      absl::Span<const hpack::HeaderField> headers, bool end_stream,
      void* user_data);
  absl::Status SubmitHeaders(uint32_t stream_id,
                             absl::Span<const hpack::HeaderField> headers,
                             bool end_stream);
  absl::Status SubmitData(uint32_t stream_id, SliceBuffer data,
                          bool end_stream);
  absl::Status SubmitTrailers(uint32_t stream_id,
                              absl::Span<const hpack::HeaderField> trailers);
  void ResetStream(uint32_t stream_id, Http2ErrorCode code);
  void ConsumeData(uint32_t stream_id, size_t bytes);
  void SetStreamUserData(uint32_t stream_id, void* user_data);
  void* GetStreamUserData(uint32_t stream_id) const;
  void SendPing(uint64_t opaque);
  void GracefulShutdown(int64_t now_ns);
  void GoAway(Http2ErrorCode code, std::string_view debug_data);

  Role role() const { return options_.role; }
  bool dead() const { return dead_; }
  bool done() const { return dead_ || drained_; }
  bool goaway_received() const { return goaway_received_; }
  const ConnectionError& error() const { return error_; }
  const Http2Settings& local_settings() const { return local_; }
  const Http2Settings& remote_settings() const { return remote_; }
  size_t num_active_streams() const { return active_local_ + active_peer_; }
  size_t header_block_memory() const {
    return block_.capacity() + header_list_.capacity_bytes();
  }
  size_t num_pending_streams() const { return pending_count_; }
  size_t queued_send_bytes() const { return queued_send_bytes_; }
  size_t stream_queued_bytes(uint32_t stream_id) const;
  size_t unconsumed_receive_bytes() const { return conn_recv_.buffered(); }
  int64_t connection_send_window() const { return conn_send_.available(); }
  int64_t stream_send_window(uint32_t stream_id) const;
  uint32_t last_accepted_stream_id() const { return last_accepted_id_; }
  uint64_t headers_or_data_sent() const { return headers_or_data_sent_; }
  uint64_t stream_lookups() const { return stream_lookups_; }
  size_t encoder_table_entries() const {
    return encoder_.table().num_entries();
  }
  uint64_t encoder_table_version() const { return encoder_.table().version(); }
  bool local_stream_ids_exhausted() const {
    return next_local_id_ > kMaxStreamId;
  }
  const SliceBuffer& output() const { return output_; }

 private:
  // Opens a re-entrancy level; the outermost runs the epilogue on exit.
  class CallScope {
   public:
    explicit CallScope(Impl* impl) : impl_(impl) { ++impl_->depth_; }
    ~CallScope() {
      if (impl_->depth_ == 1) impl_->AfterCall();
      --impl_->depth_;
    }
    CallScope(const CallScope&) = delete;
    CallScope& operator=(const CallScope&) = delete;

   private:
    Impl* impl_;
  };

  // A FIFO of stream ids: a vector and its consumed front, compacted now and
  // then (amortized O(1) per id).
  class IdQueue {
   public:
    bool empty() const { return head_ == ids_.size(); }
    void push_back(uint32_t id) { ids_.push_back(id); }
    uint32_t pop_front() {
      const uint32_t id = ids_[head_++];
      if (head_ == ids_.size()) {
        clear();
      } else if (head_ > 64 && head_ * 2 > ids_.size()) {
        ids_.erase(ids_.begin(), ids_.begin() + static_cast<ptrdiff_t>(head_));
        head_ = 0;
      }
      return id;
    }
    void clear() {
      ids_.clear();
      head_ = 0;
    }
    void reserve(size_t n) { ids_.reserve(n); }

   private:
    std::vector<uint32_t> ids_;
    size_t head_ = 0;
  };

  // What Pump's per-stream step achieved.
  enum class WriteResult : uint8_t {
    kDone,
    kMore,
    kBlockedStream,
    kBlockedConnection
  };

  // ---- FrameListener (connection_receive.cc) ----
  void OnDataStart(const FrameHeader& header) override;
  void OnData(uint32_t stream_id, Slice piece) override;
  void OnDataEnd(uint32_t stream_id, bool end_stream) override;
  void OnHeaders(const FrameHeader& header, const PriorityFields* priority,
                 std::string_view fragment) override;
  void OnPriority(uint32_t stream_id, const PriorityFields& priority) override;
  void OnRstStream(uint32_t stream_id, Http2ErrorCode code) override;
  void OnSettings(SettingsView settings) override;
  void OnSettingsAck() override;
  void OnPushPromise(const FrameHeader& header, uint32_t promised_stream_id,
                     std::string_view fragment) override;
  void OnPing(uint64_t opaque_data, bool ack) override;
  void OnGoAway(uint32_t last_stream_id, Http2ErrorCode code,
                std::string_view debug_data) override;
  void OnWindowUpdate(uint32_t stream_id, uint32_t increment) override;
  void OnContinuation(const FrameHeader& header,
                      std::string_view fragment) override;
  void OnUnknownFrame(const FrameHeader& header) override;
  void OnStreamError(const Http2Error& error, FrameDecodeError reason) override;

  // ---- Receive helpers (connection_receive.cc) ----
  // A complete header block for `stream_id`.
  void ProcessHeaderBlock(uint32_t stream_id, bool end_stream,
                          std::string_view block);
  // A block on a stream id with no live Stream: opens a peer stream, or
  // applies the 5.1 rules for idle and closed ids.
  void HeadersWithoutStream(uint32_t stream_id, bool end_stream,
                            hpack::DecodeError decode_error);
  void HeadersOnStream(Stream* s, bool end_stream,
                       hpack::DecodeError decode_error);
  // A block over the header list limit on stream `s` (header_list_ holds
  // what was kept): OnHeaderListTooLarge, then the block's END_STREAM if the
  // listener answered, else a stream error PROTOCOL_ERROR.
  void HeaderListTooLarge(Stream* s, bool end_stream);
  // The block just decoded (over the limit) is an HPACK bomb
  // (ConnectionOptions::kHpackBombFactor).
  bool IsHpackBomb(std::string_view block) const;
  // The peer ended its side (after the listener heard of it).
  void RemoteEnd(Stream* s);
  // Credits `n` octets that will never reach the application to the
  // connection's receive window.
  void CreditConnection(size_t n);

  // ---- Send helpers (connection_send.cc) ----
  // Starts pending client streams while the peer's limit allows. True if any.
  bool StartPendingStreams();
  // Sends the HEADERS of a client stream (pending or new) and opens it.
  template <typename Range>
  void StartStream(Stream* s, const Range& headers);
  // Moves queued DATA / trailers into the output. True if anything moved.
  bool Pump();
  WriteResult WriteFromStream(Stream* s);
  void Enqueue(Stream* s);
  // After a submit queued output on `s`: owes it OnStreamWritable if the
  // caller can see the data queued (see connection.h).
  void MarkWritableDue(Stream* s);
  // Our side ended (an END_STREAM frame was written).
  void LocalEnd(Stream* s);
  // Encodes and writes a header block (HEADERS + CONTINUATION).
  template <typename Range>
  void WriteHeaderBlock(uint32_t stream_id, const Range& fields,
                        bool end_stream);
  void WriteUpdates(uint32_t stream_id, const WindowUpdateAction& action);
  // Counts a reply the peer provoked; false (connection failed) over budget.
  bool CountReply();
  absl::Status CheckOutgoing(HeaderKind kind,
                             absl::Span<const hpack::HeaderField> fields,
                             HeaderInfo* info) const;
  // The stream a submit targets, or the status explaining why there is none.
  absl::StatusOr<Stream*> SubmitTarget(uint32_t stream_id);

  // ---- Streams and errors (connection.cc) ----
  Stream* FindStream(uint32_t stream_id) const {
    ++stream_lookups_;
    auto it = streams_.find(stream_id);
    return it == streams_.end() ? nullptr : it->second;
  }
  // A live (non-pending) stream, or nullptr.
  Stream* FindActive(uint32_t stream_id) const {
    Stream* s = FindStream(stream_id);
    return (s != nullptr && s->state != StreamState::kPending) ? s : nullptr;
  }
  // How many streams we may have open: the peer's MAX_CONCURRENT_STREAMS,
  // but at most kInitialPeerStreamLimit until its first SETTINGS arrive (a
  // client submitting many requests at once must not have them refused by a
  // peer whose limit it has not heard yet; nghttp2 does the same).
  static constexpr uint32_t kInitialPeerStreamLimit = 100;
  uint32_t PeerStreamLimit() const {
    return remote_settings_received_ ? remote_.max_concurrent_streams
                                     : std::min(remote_.max_concurrent_streams,
                                                kInitialPeerStreamLimit);
  }
  bool IsLocalId(uint32_t stream_id) const {
    return ((stream_id & 1) == 1) == (options_.role == Role::kClient);
  }
  // RFC 9113 5.1: no frame has opened this id yet (on the wire).
  bool IsIdle(uint32_t stream_id) const {
    return IsLocalId(stream_id) ? stream_id > last_started_local_id_
                                : stream_id > last_peer_id_;
  }
  Stream* NewStream(uint32_t stream_id, StreamState state);
  // Every change of a stream's state (RFC 9113 5.1) goes through here: it
  // keeps the counts of pending and active (open or half-closed) streams in
  // step with the states. CloseStream does the rest of closing.
  void SetState(Stream* s, StreamState state);
  // Unlinks the stream, releases its queues, returns its unconsumed octets to
  // the connection window, remembers the id, and schedules OnStreamClosed.
  void CloseStream(Stream* s, bool reset_by_us);

  // ---- Closed ids (RFC 9113 5.1; README.md "Closed streams") ----
  // What a frame on a non-idle id without a live Stream meets.
  enum class ClosedId : uint8_t {
    // Closed by our RST_STREAM (or refused), or closed too long ago to be
    // remembered: the frame is dropped (its HPACK block decoded, its DATA
    // credited to the connection window).
    kIgnore,
    // Recently closed by both END_STREAMs or by the peer's RST_STREAM: the
    // peer broke 5.1, STREAM_CLOSED.
    kStreamClosed,
    // A peer id that a higher one skipped (5.1.1, recently): never opened.
    kNeverOpened,
  };
  ClosedId ClassifyClosed(uint32_t stream_id) const;
  // Remembers an id closed by both END_STREAMs or by the peer's RST_STREAM
  // (bounded ring; ids we reset are not remembered: frames on them are
  // ignored anyway).
  void RememberClosed(uint32_t stream_id);
  // A new peer stream id `id`: remembers the ids it skipped (5.1.1).
  void NotePeerStreamId(uint32_t id);

  // ---- Streams we reset that the peer may still count (client role) ----
  // Open streams of ours count against the peer's MAX_CONCURRENT_STREAMS.
  size_t CountedLocalStreams() const {
    return active_local_ + unanswered_resets_.size();
  }
  // We reset local stream `s` (RST_STREAM written): it keeps counting until
  // the peer answers, if the peer's side was still open.
  void NoteResetSent(const Stream* s);
  // The peer sent END_STREAM or RST_STREAM on `stream_id` (no live Stream).
  void NoteAnswered(uint32_t stream_id);
  // Pending streams wait only because of counted resets.
  bool ResetsBlockStreams() const;
  // Stops counting the resets of generations up to `up_to_gen`.
  void ForgetResets(uint32_t up_to_gen);
  // The ACK of reset PING `gen`.
  void OnResetPingAck(uint32_t gen);
  // The opaque data of the PINGs asking the peer to acknowledge our resets:
  // "rsta" and the generation in the low 32 bits.
  static constexpr uint64_t kResetPingTag = uint64_t{0x72737461} << 32;
  // Sends the reset PING, or stops counting the resets, when streams wait
  // for them (options.reset_ping_*); the epilogue calls it.
  void MaybeAckResets();
  // Stream error: RST_STREAM(error.code), OnStreamFailed, OnStreamReset(code,
  // false), close. Counts against the stream_resets budget (the peer caused
  // it).
  void FailStream(Stream* s, const StreamError& error);
  void FailStream(Stream* s, Http2ErrorCode code, StreamErrorReason reason) {
    FailStream(s, StreamError{code, reason, {}});
  }
  // The same for an id without a live Stream (no listener event).
  void FailStreamId(uint32_t stream_id, const StreamError& error);
  void FailStreamId(uint32_t stream_id, Http2ErrorCode code,
                    StreamErrorReason reason) {
    FailStreamId(stream_id, StreamError{code, reason, {}});
  }
  // The frame decoder failed with `e` (a connection error).
  void FrameDecoderFailed(const Http2Error& e);
  // Connection error: GOAWAY(code, its DebugData()), every stream reset,
  // OnConnectionError. `detail` is built by the caller only on error.
  void FailConnection(Http2ErrorCode code, ConnectionErrorReason reason,
                      std::string detail = std::string());
  // Ends the connection: every stream gets OnStreamReset(code, remote) and is
  // closed; OnConnectionError if `report`.
  void Kill(ConnectionError error, Http2ErrorCode stream_code, bool remote,
            bool report);
  // Takes a flood token; false (connection error ENHANCE_YOUR_CALM `flood`)
  // if none.
  bool TakeToken(FloodBudget* budget, ConnectionErrorReason flood);
  void SendFinalGoAway();
  void AfterCall();
  // Delivers deferred OnStreamClosed; true if any.
  bool FlushClosed();
  // Delivers deferred OnStreamWritable (streams still open); true if any.
  bool FlushWritable();
  void MaybeDrained();

  // ---- State ----
  const ConnectionOptions options_;
  ConnectionListener* const listener_;
  FrameDecoder decoder_;
  hpack::Encoder encoder_;
  hpack::Decoder hpack_decoder_;
  hpack::HeaderList header_list_;  // Reused for every received block.
  SliceBuffer output_;
  Http2Settings local_;
  Http2Settings remote_;
  int64_t now_;
  int depth_ = 0;

  // Settings.
  bool awaiting_settings_ack_ = true;
  bool remote_settings_received_ = false;  // The peer's first SETTINGS came.
  int64_t settings_deadline_;
  // What a new stream's receive window starts at: max(65535, ours) until the
  // peer ACKs our SETTINGS, ours after.
  uint32_t recv_initial_window_;

  // Flow control of the connection.
  SendWindow conn_send_;
  ConnectionReceiveWindow conn_recv_;

  // Streams.
  absl::flat_hash_map<uint32_t, Stream*> streams_;
  std::vector<std::unique_ptr<Stream>> pool_;       // Free, for reuse.
  std::vector<std::unique_ptr<Stream>> graveyard_;  // Closed this call.
  // The stream whose OnStreamFailed is running: its RST_STREAM is written.
  uint32_t failing_stream_ = 0;
  std::vector<uint32_t> closed_ids_;  // OnStreamClosed still due.
  size_t closed_head_ = 0;
  std::vector<uint32_t> writable_ids_;  // OnStreamWritable still due.
  // The DATA pump's round-robin, as two FIFOs of stream ids (a stream is in
  // at most one: Stream::in_write_queue; ids of closed streams are skipped).
  // write_queue_: streams with output to move. conn_blocked_: streams that
  // found the connection window spent, in the order they found it; they are
  // served first once it opens, so a spent window costs nothing per submit
  // however many streams wait for it.
  IdQueue write_queue_;
  IdQueue conn_blocked_;
  // Outermost calls finished (the epilogue counts them): a stream enqueued
  // in an earlier call than the one that drains it was seen queued by the
  // application (Stream::queued_call), so it is owed OnStreamWritable.
  uint64_t call_gen_ = 0;
  std::vector<uint32_t> pending_;  // Client streams waiting to start (FIFO).
  size_t pending_head_ = 0;
  size_t pending_count_ = 0;  // Streams in kPending.
  size_t active_local_ = 0;   // Open/half-closed streams we initiated.
  size_t active_peer_ = 0;    // ... the peer initiated.
  uint32_t next_local_id_;
  uint32_t last_started_local_id_ = 0;
  uint32_t last_peer_id_ = 0;      // Highest peer id seen (opened or not).
  uint32_t last_accepted_id_ = 0;  // Highest peer id handed to the listener.
  size_t queued_send_bytes_ = 0;
  uint64_t headers_or_data_sent_ = 0;    // HEADERS/DATA writes, for pings.
  mutable uint64_t stream_lookups_ = 0;  // FindStream calls (tests).
  // Ids recently closed by both END_STREAMs or the peer's RST_STREAM (ring),
  // and ranges of peer ids skipped by a higher one (ring of [first, last]).
  static constexpr size_t kClosedMemory = 128;
  std::array<uint32_t, kClosedMemory> closed_ring_{};
  size_t closed_ring_pos_ = 0;
  static constexpr size_t kSkippedMemory = 16;
  std::array<std::pair<uint32_t, uint32_t>, kSkippedMemory> skipped_ring_{};
  size_t skipped_ring_pos_ = 0;
  // Local streams we reset while the peer's side was open, until the peer
  // answers (END_STREAM or RST_STREAM on them) or ACKs the reset PING whose
  // generation is the value (at most options.max_unanswered_resets).
  absl::flat_hash_map<uint32_t, uint32_t> unanswered_resets_;
  uint32_t reset_ping_gen_ = 0;  // Generation of the next reset PING.
  bool reset_ping_outstanding_ = false;
  int64_t reset_ping_sent_ns_ = 0;
  int64_t last_reset_ping_ns_ = 0;
  bool reset_ping_ever_sent_ = false;
  // HEADERS or DATA arrived since our last reset PING (a peer's ping policy
  // forgives pings while it sends: gRPC's ping strikes).
  bool peer_sent_since_reset_ping_ = true;

  // Header block being assembled from HEADERS + CONTINUATION.
  std::string block_;
  uint32_t block_stream_ = 0;
  bool block_end_stream_ = false;
  uint32_t block_frames_ = 0;
  int64_t block_deadline_ = kNoDeadline;  // header_block_timeout_ns.

  // The DATA frame being received.
  Stream* data_stream_ = nullptr;  // Null: discard its pieces.
  uint32_t data_length_ = 0;
  uint32_t data_delivered_ = 0;

  // Limits.
  FloodBudget resets_;
  FloodBudget settings_budget_;
  FloodBudget pings_;
  FloodBudget empty_data_;
  FloodBudget window_updates_;
  FloodBudget other_frames_;
  uint32_t queued_replies_ = 0;

  // Lifecycle.
  bool dead_ = false;
  ConnectionError error_;
  bool shutdown_started_ = false;
  bool shutdown_ping_outstanding_ = false;
  int64_t shutdown_deadline_ = kNoDeadline;
  bool final_goaway_sent_ = false;
  uint32_t goaway_sent_last_id_ = kMaxStreamId;
  bool goaway_received_ = false;
  uint32_t goaway_received_last_id_ = kMaxStreamId;
  bool drained_ = false;
};

}  // namespace transport

#endif  // TRANSPORT_CONNECTION_CONNECTION_IMPL_H_
