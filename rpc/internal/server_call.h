// ServerCall: one incoming call, from its request headers to its status.
//
// One object for both APIs, in two modes fixed by the method:
// * Sync (a blocking handler on a worker). Loop side (methods named Loop*,
//   called by the ServerConnection on the connection's loop thread): request
//   DATA goes through the MessageDeframer into the CallCore, the deadline
//   timer runs, resets and the stream's end arrive. Handler side (Read,
//   Write, Finish, called on one worker thread): reads block on the CallCore;
//   writes and the status are loop tasks, in order, applied to the
//   Connection by the handler's thread itself while the loop sleeps, else
//   posted (EventLoop::RunInlineOrPost).
// * Reactor (a callback method, rpc/server_callback.h). Everything runs on
//   the loop thread: request messages wait in a loop-only inbox (no copy, no
//   mutex) and are parsed straight into the reactor's StartRead target; the
//   reactor's operations (Reactor*: from another thread they are posted) and
//   the reactions (Pump) are applied there. No CallCore is made.
//
// Both modes send through the same steps on the loop, which an interceptor
// chain can wrap: LoopSendHeaders (initial metadata), LoopSendMessage,
// LoopSendStatus; and receive through the deframer into the mode's queue.
//
// Response headers go out with the first message; a call finished before any
// message answers with a Trailers-Only response. After the status is sent (or
// the call was cancelled) every later operation is a no-op that fails.

#ifndef RPC_INTERNAL_SERVER_CALL_H_
#define RPC_INTERNAL_SERVER_CALL_H_

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/functional/any_invocable.h"
#include "absl/time/time.h"
#include "rpc/auth_context.h"
#include "rpc/compression/codec.h"
#include "rpc/compression/encoding.h"
#include "rpc/internal/call_core.h"
#include "rpc/internal/message_compression.h"
#include "rpc/internal/metadata_limits.h"
#include "rpc/service.h"
#include "rpc/wire/message_framer.h"
#include "rpc/wire/metadata.h"
#include "rpc/wire/status.h"
#include "rpc/write_options.h"
#include "transport/io/event_loop.h"
#include "transport/slice/slice.h"

namespace google::protobuf {
class MessageLite;
}  // namespace google::protobuf

namespace rpc {
namespace internal {

class ServerConnection;
class ServerReactorBase;
class CallbackCallState;
class CallbackCallOps;

struct ServerCallLimits {
  size_t max_receive_message_size = kDefaultMaxReceiveMessageSize;
  size_t max_send_message_size = SIZE_MAX;
  // Received metadata (the connection's; rpc/internal/metadata_limits.h).
  MetadataLimits metadata;
  // Unread request octets before the window stops the client; written
  // response octets queued before Write blocks.
  size_t read_bound = 256 << 10;
  size_t write_bound = 256 << 10;
  // The response encoding asked for when the handler sets none, and the size
  // from which a response message is compressed.
  compression::Encoding default_encoding = compression::Encoding::kIdentity;
  size_t compression_threshold = compression::kDefaultCompressionThreshold;
};

// The response encoding for a call whose server asks for `requested`, given
// the client's grpc-accept-encoding (nullopt: header absent). The rule is
// documented at ServerContext::set_compression_algorithm.
compression::Encoding ChooseResponseEncoding(
    compression::Encoding requested,
    std::optional<std::string_view> accept_encoding);

// Frees a callback call's state through a function of //rpc (where the
// context's code is).
struct CallbackStateDeleter {
  void (*destroy)(CallbackCallState*) = nullptr;
  void operator()(CallbackCallState* state) const { destroy(state); }
};

class ServerCall : public std::enable_shared_from_this<ServerCall> {
 public:
  ServerCall(ServerConnection* connection, transport::EventLoop* loop,
             uint32_t stream_id, const Service::Method* method,
             const ServerCallLimits& limits);
  ~ServerCall();

  // Set by the connection before the handler runs; read-only afterwards.
  Metadata client_metadata;
  absl::Time deadline = absl::InfiniteFuture();
  // The connection's peer() string (shared by its calls; never null once
  // dispatched).
  std::shared_ptr<const std::string> peer;
  // The connection's (shared by its calls; never null once dispatched).
  std::shared_ptr<const AuthContext> auth_context;
  // The server's count of callback calls before their OnDone (Shutdown
  // waits for it to fall to 0); may be null.
  std::atomic<int>* live_callback_calls = nullptr;
  // The request's grpc-encoding (identity when absent) and
  // grpc-accept-encoding (null when absent; shared with the connection's
  // other calls that sent the same value).
  compression::Encoding request_encoding = compression::Encoding::kIdentity;
  std::shared_ptr<const std::string> accept_encoding;

  const Service::Method* method() const { return method_; }

  // ---- Handler thread ----
  // The next request message; false at the end of the requests or when the
  // call is cancelled.
  bool Read(transport::SliceBuffer* payload);
  // Sends a response message (with the response headers, carrying
  // *initial_metadata, the first time). False when the call is cancelled or
  // finished, or the message is over the max send size (the call then ends
  // with RESOURCE_EXHAUSTED). Blocks while the client reads slower than we
  // write.
  bool Write(transport::SliceBuffer payload, Metadata* initial_metadata);
  // Sends just the response headers now.
  void SendInitialMetadata(Metadata* initial_metadata);
  // Sends the status (with the trailing metadata); ends the call.
  void Finish(const Status& status, Metadata* initial_metadata,
              Metadata* trailing_metadata);
  bool IsCancelled() const {
    return sync_ != nullptr ? sync_->core.cancelled()
                            : cancelled_.load(std::memory_order_acquire);
  }
  // Sync mode's hand-off (null in reactor mode).
  CallCore* core() { return sync_ != nullptr ? &sync_->core : nullptr; }
  // Every request arrived (or the call is cancelled): Read will not block.
  bool RequestsComplete() const {
    return sync_ != nullptr ? sync_->core.input_complete()
                            : input_ended_ || IsCancelled();
  }
  bool reactor_mode() const { return sync_ == nullptr; }
  // The encoding the server asks for; before the response headers only.
  void SetResponseEncoding(compression::Encoding encoding) {
    if (!handler_headers_sent_) requested_encoding_ = encoding;
  }
  // Response messages sent compressed (for tests).
  size_t compressed_responses() const {
    return compressor_.compressed_messages();
  }
  // Request messages received compressed (for tests; any thread).
  size_t compressed_requests() const {
    return decompressor_.compressed_messages();
  }
  // Makes the call end with `status` whatever the handler returns (the
  // library's verdict: an unparsable request, an oversized response). The
  // first one wins.
  void SetError(const Status& status) {
    if (sync_ != nullptr && sync_->send_error.ok()) sync_->send_error = status;
  }

  // ---- Loop thread (ServerConnection) ----
  void LoopStartDeadlineTimer();
  void LoopSetRequestEncoding(compression::Encoding encoding) {
    decompressor_.set_encoding(encoding);
  }
  void LoopOnData(transport::Slice data);
  void LoopOnEnd();
  // The library ends the call with `status` (a broken request, oversized
  // request trailers): the handler sees it cancelled, the client gets the
  // status. No-op once a status went out.
  void LoopAbort(const Status& status);
  // The stream was reset or the connection died.
  void LoopOnReset();
  void LoopOnClosed();
  // The connection is going away: forget it before any call learns so (in
  // ~ServerConnection), so no reaction reaches it through another call.
  void LoopDetach() { connection_ = nullptr; }
  void LoopReleaseWriteCredit();

  // ---- Reactor mode: the reactor's operations (any thread) ----
  void ReactorSendInitialMetadata();
  void ReactorRead(google::protobuf::MessageLite* msg);
  void ReactorWrite(const google::protobuf::MessageLite* msg,
                    WriteOptions options);
  void ReactorFinish(Status status);
  void ReactorWriteAndFinish(const google::protobuf::MessageLite* msg,
                             WriteOptions options, Status status);

 private:
  friend class CallbackCallOps;

  // The call is over (reset, deadline, aborted, connection gone): wakes the
  // handler (sync) or fails the reactor's operations and owes it OnCancel.
  void LoopCancel();
  // Submits a framed message (after the headers); false when the stream
  // took none.
  bool LoopSendMessage(transport::SliceBuffer framed, bool flush);
  // Serializes and frames a response; not OK ends the call with it.
  Status FrameResponse(const google::protobuf::MessageLite& msg,
                       bool no_compression, transport::SliceBuffer* framed);

  // Reactor mode, loop thread.
  // Runs `op` on the loop (now when on it, else posted) and then Pump.
  void RunOnLoop(absl::AnyInvocable<void()> op);
  void LoopReactorRead(google::protobuf::MessageLite* msg);
  // `and_finish`: StartWriteAndFinish's (no OnWriteDone of its own).
  void LoopReactorWrite(const google::protobuf::MessageLite* msg,
                        WriteOptions options, bool and_finish = false);
  void LoopReactorFinish(const Status& status);
  // Gives the stream window of requests withheld for a slow reader back
  // (the call no longer reads).
  void ReturnOwedOctets();
  // The reactor's misuse ends the call with INTERNAL `what`.
  void LoopMisuse(const char* what);
  // The one request of a unary or server-streaming call into *msg.
  Status LoopTakeRequest(google::protobuf::MessageLite* msg);
  void LoopBind(ServerReactorBase* reactor);
  // Delivers the reactions that are due, one at a time, until none is
  // (never from inside one: a nested call returns at once).
  void Pump();
  // Pump at the end of this loop iteration (once, however often asked).
  void DeferPump();
  // Frees the context and messages (after OnDone, or when no method ran).
  void ReleaseCallbackState();

  // Loop side: sends headers (if not yet), then the status; marks finished.
  // No-op once a status went out. Metadata the client's
  // SETTINGS_MAX_HEADER_LIST_SIZE cannot take is replaced by a bare
  // RESOURCE_EXHAUSTED status (gRPC: "to-be-sent metadata size exceeds peer
  // limit"); if even that does not fit, the stream is reset INTERNAL_ERROR.
  void LoopSendStatus(const Status& status, const Metadata& initial,
                      const Metadata& trailing);
  // Response headers too large for the client end the call that way too.
  void LoopSendHeaders(const Metadata& initial);
  void Post(transport::EventLoop::Task task);
  // Handler side, before the response headers: fixes the response encoding.
  void ResolveResponseEncoding();

  ServerConnection* connection_;  // Loop only; nullptr once closed.
  transport::EventLoop* const loop_;
  const uint32_t stream_id_;
  const Service::Method* const method_;
  const ServerCallLimits& limits_;  // The server's; outlives its calls.
  // Sync mode only (null in reactor mode): the hand-off to the handler's
  // thread, and the handler side's pending response (unary and
  // client-streaming calls answer one message, always followed by the
  // status: it is held until Finish so that headers, message and trailers
  // cross to the loop in one task).
  struct SyncState {
    SyncState(size_t read_bound, size_t write_bound)
        : core(read_bound, write_bound) {}
    CallCore core;
    bool has_pending_response = false;
    transport::SliceBuffer pending_response;
    Metadata pending_initial;
    // RESOURCE_EXHAUSTED from an oversized Write, and the like (SetError).
    Status send_error;
  };
  std::unique_ptr<SyncState> sync_;

  // Loop only.
  MessageDeframer deframer_;
  MessageDecompressor decompressor_;
  bool headers_sent_ = false;
  bool status_sent_ = false;
  transport::EventLoop::TimerId deadline_timer_ =
      transport::EventLoop::kInvalidTimer;

  // Handler thread only (the loop in reactor mode).
  const bool single_response_;
  bool handler_headers_sent_ = false;
  bool handler_finished_ = false;
  std::optional<compression::Encoding> requested_encoding_;
  MessageCompressor compressor_;
  // Written by the handler before the headers are posted; read by the loop
  // when it sends them.
  compression::Encoding response_encoding_ = compression::Encoding::kIdentity;

  // Reactor mode (loop thread only, except the atomics).
  enum class WriteState : uint8_t { kNone, kAwaitingCredit, kDone };
  ServerReactorBase* reactor_ = nullptr;  // Null before bind and after OnDone.
  std::unique_ptr<CallbackCallState, CallbackStateDeleter> callback_state_;
  const google::protobuf::MessageLite* unary_response_ = nullptr;
  // StartWriteLast's message, framed, until Finish.
  std::unique_ptr<transport::SliceBuffer> last_message_;
  google::protobuf::MessageLite* read_target_ = nullptr;
  // Request messages not yet read (their slices are still the connection's:
  // they never leave the loop), from inbox_head_ on.
  std::vector<transport::SliceBuffer> inbox_;
  size_t inbox_head_ = 0;
  size_t inbox_bytes_ = 0;
  size_t owed_bytes_ = 0;
  size_t write_inflight_ = 0;
  // Operations posted from other threads, not yet applied (OnDone waits).
  std::atomic<int> posted_ops_{0};
  std::atomic<bool> cancelled_{false};
  WriteState write_state_ = WriteState::kNone;
  bool write_ok_ = false;
  bool input_ended_ = false;
  bool in_pump_ = false;
  bool pump_deferred_ = false;  // A DeferPump task is queued.
  bool cancel_due_ = false;
  bool cancel_delivered_ = false;
  bool finish_called_ = false;
  // Finish sent the status (no OnCancel after it).
  bool finish_applied_ = false;
  bool initial_metadata_started_ = false;
  bool initial_metadata_done_ = false;  // OnSendInitialMetadataDone due.
  bool initial_metadata_ok_ = false;
  bool done_ = false;
  // Operations started against the rules: each gets its reaction (false).
  uint32_t failed_initial_metadata_ = 0;
  uint32_t failed_reads_ = 0;
  uint32_t failed_writes_ = 0;
};

}  // namespace internal
}  // namespace rpc

#endif  // RPC_INTERNAL_SERVER_CALL_H_
