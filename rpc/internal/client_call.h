// ClientCall: one outgoing call, shared between the application thread that
// makes it (blocking Read/Write/Finish) and the channel's loop thread, which
// owns the stream (methods named Loop*).
//
// Every application operation is a task posted to the loop, so they apply in
// the order made; operations made before the stream exists (the connection is
// still being established) wait in the call and follow its HEADERS. Until
// then the channel may hold the call in its queue (no READY connection yet;
// wait-for-ready); the deadline timer runs from Start, queued or not.
//
// (A blocking call's tasks run on its own thread while the loop sleeps,
// EventLoop::RunInlineOrPost, and its waits for the status, the headers or a
// message drive the sleeping loop on its thread, EventLoop::CoPollUntil, so
// the response is read and the call completed there; an async call's tasks
// are always posted.)
//
// Transparent retry (gRPC's A6 "transparent retries"): until the call is
// committed, every request message it submitted is kept (shared blocks, no
// copy of the bytes) in its replay buffer, so that an attempt the server
// did not process can be made again, on the same connection or another,
// without the application seeing it. Retried, while the deadline allows:
//   * an attempt whose HEADERS never left the client (queued in the
//     Connection for the peer's MAX_CONCURRENT_STREAMS) when a GOAWAY ends
//     its connection: always; when the connection fails: wait-for-ready calls
//     only (fail-fast calls fail UNAVAILABLE, as gRPC's wait-for-ready.md);
//   * an attempt refused by the server (RST_STREAM REFUSED_STREAM, or above
//     a GOAWAY's last stream id): at most kMaxRefusedAttempts times;
//   * an attempt the connection refused to open (it failed or is going away
//     under the pick): always, the channel placing it again.
// The call commits (its buffer is dropped, no more retries) on the first
// response frame, or once its requests outgrow
// ClientCallOptions::retry_buffer_size. A retry goes back to the channel
// (ChannelImpl::LoopStartCall) from a deferred task: picking, queueing and
// wait-for-ready apply to it as to a new call.
//
// Two drivers, one call. The blocking API (rpc/client_stream.h) drives it
// from the application thread: Start, Write, WritesDone, Read, Finish post to
// the loop and wait on the CallCore. The callback API (rpc/client_callback.h)
// sets a ClientCallObserver and drives it from the loop thread only, through
// the same steps (Loop* below): LoopBegin (send initial metadata, and the
// first message), LoopSend (send a message; LoopHalfClose ends the requests),
// and the observer's LoopOnInitialMetadata, LoopOnMessage and LoopOnStatus
// (receive initial metadata, a message, the status). In that mode received
// messages are not copied nor locked: they go to the observer on the loop,
// which reports each one read with LoopMessageConsumed (the read_bound rule of
// call_core.h, loop only); a write's credit is counted on the loop too
// (loop_write_within_bound, LoopOnWriteCredit). An interceptor chain would
// wrap these steps: the send steps before they reach the stream, the
// observer's callbacks before they reach the reactor.
//
// The status is decided once, by the first of: the trailers (or a
// Trailers-Only response; grpc-status/grpc-message, or the HTTP status when
// grpc-status is missing), a reset from the server, the deadline timer, a
// cancel (TryCancel, or the library cancelling after a local error: an
// oversized or unparsable message), or the connection failing. A call that
// gets its status while its stream is open resets the stream (CANCEL).

#ifndef RPC_INTERNAL_CLIENT_CALL_H_
#define RPC_INTERNAL_CLIENT_CALL_H_

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/functional/any_invocable.h"
#include "absl/functional/function_ref.h"
#include "absl/time/time.h"
#include "hpack/header_list.h"
#include "rpc/auth_context.h"
#include "rpc/compression/codec.h"
#include "rpc/compression/encoding.h"
#include "rpc/internal/call_core.h"
#include "rpc/internal/message_compression.h"
#include "rpc/wire/message_framer.h"
#include "rpc/wire/metadata.h"
#include "rpc/wire/status.h"
#include "transport/frame/http2_error.h"
#include "transport/io/event_loop.h"
#include "transport/io/mutex.h"
#include "transport/slice/slice.h"

namespace rpc {
namespace internal {

class ChannelImpl;
class ClientTransport;

struct ClientCallOptions {
  size_t max_receive_message_size = kDefaultMaxReceiveMessageSize;
  size_t max_send_message_size = SIZE_MAX;
  size_t read_bound = 256 << 10;
  size_t write_bound = 256 << 10;
  // The request encoding (grpc-encoding) and the size from which a request
  // message is compressed.
  compression::Encoding encoding = compression::Encoding::kIdentity;
  size_t compression_threshold = compression::kDefaultCompressionThreshold;
  // Transparent retry (the file comment): the replay buffer's bound
  // (GRPC_ARG_PER_RPC_RETRY_BUFFER_SIZE's default), and whether to retry at
  // all (GRPC_ARG_ENABLE_RETRIES).
  size_t retry_buffer_size = 256 << 10;
  bool transparent_retry = true;
};

// Attempts refused by the server (REFUSED_STREAM, GOAWAY) that a call makes
// again before it fails with UNAVAILABLE: a server that refuses everything
// costs a few round trips, not a loop.
inline constexpr int kMaxRefusedAttempts = 5;

// The callback API's side of a call (ClientCall::SetObserver): every method
// runs on the loop thread, and none after LoopOnStatus.
class ClientCallObserver {
 public:
  // The response headers arrived (CopyInitialMetadata has them).
  virtual void LoopOnInitialMetadata() = 0;
  // A response message, not copied (it may share the connection's read
  // blocks: release it on the loop). Report it read with
  // ClientCall::LoopMessageConsumed(its size).
  virtual void LoopOnMessage(transport::SliceBuffer payload) = 0;
  // The requests written so far left the Connection's queue.
  virtual void LoopOnWriteCredit() = 0;
  // The call has its status (Finish returns at once); `clean`: the server
  // ended it (trailers), so the messages it sent before stay readable; else
  // (cancelled, reset, deadline, failed) unread ones are dropped.
  virtual void LoopOnStatus(bool clean) = 0;

  virtual ~ClientCallObserver() = default;
};

class ClientCall : public std::enable_shared_from_this<ClientCall> {
 public:
  // `loop` null: the call of a channel without a loop thread, failed by the
  // channel (LoopFail) before anyone uses it; Start then only runs on_done.
  ClientCall(ChannelImpl* channel, transport::EventLoop* loop, std::string path,
             absl::Time deadline, Metadata metadata,
             const ClientCallOptions& options);
  ~ClientCall();

  // ---- Application thread ----
  // Runs `on_done` on the loop thread once the call has its status (for the
  // asynchronous API: Read and Finish then return without blocking). Set it
  // before Start. It must not block.
  void SetOnDone(absl::AnyInvocable<void()> on_done) {
    on_done_ = std::move(on_done);
    async_ = true;
  }
  // The callback API (the file comment): set before LoopBegin; the call then
  // drives `observer` instead of its CallCore. Null to detach (loop).
  // Its tasks are then posted, never run inline (as SetOnDone's): a
  // reaction must not run inside the TryCancel or StartCall that caused it.
  void SetObserver(ClientCallObserver* observer) {
    observer_ = observer;
    if (observer != nullptr) async_ = true;
  }
  // Null for a call failed at its creation (no loop thread).
  transport::EventLoop* loop() const { return loop_; }
  // Wait-for-ready (gRPC's wait-for-ready.md): the call waits for a READY
  // connection instead of failing while the channel is in
  // TRANSIENT_FAILURE. Set before Start.
  void set_wait_for_ready(bool wait) { wait_for_ready_ = wait; }
  bool wait_for_ready() const { return wait_for_ready_; }
  // A unary or client-streaming call: one response message. Octets beyond
  // it end the call with INTERNAL and reset the stream (gRPC's cardinality
  // rule; a blocking unary call reads only after the status, so a second
  // message would otherwise be owed, never read, and stall the stream). Set
  // before Start.
  void set_single_response() { single_response_ = true; }
  // Sends the request headers, then `first` (when given) as a message, and
  // ends the requests when `end` is set. Call once, first. *first is moved
  // from (its blocks go to the loop thread).
  void Start(transport::SliceBuffer* first, bool end);
  // A request message; false when the call already has its status (or the
  // message is over the max send size: the call then ends with
  // RESOURCE_EXHAUSTED). Blocks while the server reads slower than we write.
  bool Write(transport::SliceBuffer payload, bool end);
  // Ends the requests.
  void WritesDone();
  // The next response message; false at the end (then call Finish).
  bool Read(transport::SliceBuffer* payload);
  // Blocks until the response headers (or the status) arrived.
  void WaitForInitialMetadata();
  // Blocks until the call has its status; copies the server's metadata.
  Status Finish(Metadata* initial, Metadata* trailing);
  // Any thread: ends the call with `status` (CANCELLED for TryCancel) unless
  // it has its status already.
  void Cancel(Status status);
  std::string peer() const;
  // The connection's AuthContext once the call started on one, else null.
  std::shared_ptr<const AuthContext> auth_context() const;
  bool has_status() const;
  // The response headers' metadata received so far.
  void CopyInitialMetadata(Metadata* out) const;

  // ---- Loop thread ----
  // Start's work on the loop (the callback API's "send initial metadata"):
  // frames `first` (when given) and hands the call to the channel. Writes
  // made before it (LoopSend) follow the first message.
  void LoopBegin(transport::SliceBuffer* first, bool end);
  // Observer mode: frames and sends a request message (compressed unless
  // `no_compression`), with the end of the requests when `end`. False when
  // the call failed instead (over the max send size, compression error).
  bool LoopSend(transport::SliceBuffer payload, bool end, bool no_compression);
  // Observer mode: ends the requests.
  void LoopHalfClose();
  // Observer mode: the requests in flight are within write_bound (the write
  // just sent is as good as done, the sync Write's rule).
  bool loop_write_within_bound() const {
    return loop_inflight_ <= options_.write_bound;
  }
  // Observer mode: a message of `size` octets given to LoopOnMessage was
  // read: octets owed to the server's window go back once the reader caught
  // up (below half of read_bound).
  void LoopMessageConsumed(size_t size);
  // Opens the stream on `transport`. The deadline timer runs from Start on,
  // also while the channel holds the call waiting for a connection.
  void LoopStart(ClientTransport* transport);
  // The status is decided (the channel drops the call from its queue).
  bool loop_done() const { return done_loop_; }
  void LoopOnHeaders(const hpack::HeaderList& headers, bool end_stream);
  void LoopOnTrailers(const hpack::HeaderList& trailers);
  void LoopOnData(transport::Slice data);
  void LoopOnEnd();
  // `reason`: why the connection died (empty when it did not, or unknown).
  // True when the call retries (the file comment): it has left `transport`,
  // which forgets it (no LoopOnClosed follows).
  bool LoopOnReset(transport::Http2ErrorCode code, bool remote,
                   bool connection_dead, const std::string& reason);
  // The stream's HEADERS were written (it left the Connection's queue).
  void LoopOnStarted() { on_wire_ = true; }
  bool loop_on_wire() const { return on_wire_; }
  // The server answered on the stream: no transparent retry from now on.
  void LoopCommit();
  // The transport can never start the queued stream (GOAWAY): true when the
  // call retries elsewhere (then the transport forgets it).
  bool LoopRetryUnsent();
  // Attempts made so far (1 + transparent retries; tests).
  int attempts() const { return attempts_; }
  // The stream is gone; a call not finished yet ends with `unfinished`.
  void LoopOnClosed(const Status& unfinished = Status(StatusCode::INTERNAL,
                                                      "stream closed"));
  void LoopReleaseWriteCredit();
  // Ends the call with `status` (no stream, or the stream is reset).
  void LoopFail(const Status& status);
  uint32_t stream_id() const { return stream_id_; }
  // For tests: messages sent and received with the compressed flag.
  void set_grpc_encoding_header_for_test(std::string value) {
    grpc_encoding_header_for_test_ = std::move(value);
  }
  size_t compressed_requests() const {
    return compressor_.compressed_messages();
  }
  size_t compressed_responses() const {
    return decompressor_.compressed_messages();
  }
  const std::string& path() const { return path_; }

 private:
  struct PendingWrite {
    transport::SliceBuffer framed;
    bool end = false;
  };
  void Post(transport::EventLoop::Task task);
  // A blocking caller's wait (Finish, WaitForInitialMetadata, Read) for
  // `done` (a flag the loop sets, or CallCore::readable): drives the
  // loop on this thread while it sleeps (EventLoop::CoPollUntil), spinning
  // for up to a busy-poll channel's budget when the loop is awake. Returns
  // when done, or when the loop thread took over (then wait on cv_).
  void PollUntil(absl::FunctionRef<bool()> done);
  // Loop: runs `f(observer_)` now, or posted to the loop's thread when this
  // is an inline runner or a co-poller, or when earlier ones of this call
  // are still posted (order kept).
  template <typename F>
  void LoopNotify(F f);
  // A request message framed for the stream (compressed unless
  // `no_compression`), or why it cannot be sent (over the max send size,
  // compression error). Uses the compressor: the thread that writes.
  Status Frame(transport::SliceBuffer payload, bool end, bool no_compression,
               PendingWrite* out);
  // Start's first write: `first` framed (when given), or only the end.
  Status FrameFirst(transport::SliceBuffer* first, bool end,
                    std::vector<PendingWrite>* writes);
  // Starts the deadline timer (or fails the call when the deadline passed).
  void LoopArmDeadline();
  void LoopWrite(PendingWrite write);
  // Places the call with its first writes (Start's and LoopBegin's end).
  void LoopHandOver(std::vector<PendingWrite> writes);
  // Records the status (first one wins) and wakes the application; `clean`:
  // the stream ended with trailers (queued messages stay readable).
  void LoopComplete(Status status, Metadata trailing, bool clean);
  void LoopStatusFromTrailers(const hpack::HeaderList& trailers,
                              std::string_view http_status);
  // Whether a reset attempt may be made again (the file comment).
  bool LoopMayRetry(transport::Http2ErrorCode code, bool remote,
                    bool connection_dead);
  // Leaves the attempt's transport and starts the next attempt from a
  // deferred task, replaying the buffered requests.
  void LoopRetry();

  ChannelImpl* const channel_;
  transport::EventLoop* const loop_;
  const std::string path_;
  const absl::Time deadline_;
  const Metadata metadata_;
  const ClientCallOptions options_;
  std::string grpc_encoding_header_for_test_;  // Set before Start.
  bool wait_for_ready_ = false;                // Set before Start.
  bool single_response_ = false;               // Set before Start.
  CallCore core_;

  // Loop only.
  ClientTransport* transport_ = nullptr;
  uint32_t stream_id_ = 0;
  bool started_ = false;    // LoopStart ran.
  bool done_loop_ = false;  // Status decided.
  bool stream_open_ = false;
  bool local_end_ = false;
  std::vector<PendingWrite> pending_;
  // Transparent retry: the requests submitted on this attempt (until
  // committed_), their octets, and the attempts made.
  std::vector<PendingWrite> replay_;
  size_t replay_bytes_ = 0;
  bool committed_ = false;
  bool on_wire_ = false;  // This attempt's HEADERS were written.
  int attempts_ = 0;
  int refused_attempts_ = 0;
  MessageDeframer deframer_;
  size_t messages_received_ = 0;
  MessageDecompressor decompressor_;
  transport::EventLoop::TimerId deadline_timer_ =
      transport::EventLoop::kInvalidTimer;

  // Application thread only.
  bool writes_done_ = false;
  MessageCompressor compressor_;
  // Set before Start, then loop only.
  absl::AnyInvocable<void()> on_done_;
  // Set before Start (SetOnDone, SetObserver), then read-only: tasks are
  // posted, never run inline (Post).
  bool async_ = false;
  ClientCallObserver* observer_ = nullptr;
  // Observer mode (loop only): octets of messages given to the observer and
  // not yet read, octets owed to the server's window, octets written and
  // still in the Connection's queue.
  size_t rx_queued_ = 0;
  size_t rx_owed_ = 0;
  size_t loop_inflight_ = 0;
  // Observer notifications posted and not yet run (LoopNotify).
  int observer_posted_ = 0;
  // LoopOnStatus ran ahead of posted notifications (an unclean end): they
  // are dropped when they run (LoopComplete).
  bool observer_ended_ = false;

  // Shared.
  mutable transport::Mutex mu_;
  transport::CondVar cv_;
  bool has_initial_ ABSL_GUARDED_BY(mu_) = false;
  bool has_status_ ABSL_GUARDED_BY(mu_) = false;
  // has_status_, and has_initial_ || has_status_, for a co-polling caller
  // (read with the loop's run lock held: no mu_ there).
  std::atomic<bool> status_set_{false};
  std::atomic<bool> initial_or_status_{false};
  Metadata initial_ ABSL_GUARDED_BY(mu_);
  Metadata trailing_ ABSL_GUARDED_BY(mu_);
  Status status_ ABSL_GUARDED_BY(mu_);
  std::string peer_ ABSL_GUARDED_BY(mu_);
  std::shared_ptr<const AuthContext> auth_context_ ABSL_GUARDED_BY(mu_);
};

}  // namespace internal
}  // namespace rpc

#endif  // RPC_INTERNAL_CLIENT_CALL_H_
