// ServerCall: one incoming call, from its request headers to its status.
//
// It lives in two worlds. Loop side (methods named Loop*, called by the
// ServerConnection on the connection's loop thread): request DATA goes through
// the MessageDeframer into the CallCore, the deadline timer runs, resets and
// the stream's end arrive. Handler side (Read, Write, Finish, called on one
// worker thread): reads block on the CallCore; writes and the status are
// loop tasks, in order, applied to the Connection by the handler's thread
// itself while the loop sleeps, else posted (EventLoop::RunInlineOrPost).
//
// Response headers go out with the first message; a call finished before any
// message answers with a Trailers-Only response. After the status is sent (or
// the call was cancelled) every later operation is a no-op that fails.

#ifndef RPC_INTERNAL_SERVER_CALL_H_
#define RPC_INTERNAL_SERVER_CALL_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>

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
#include "transport/io/event_loop.h"
#include "transport/slice/slice.h"

namespace rpc {
namespace internal {

class ServerConnection;

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
    const std::optional<std::string>& accept_encoding);

class ServerCall : public std::enable_shared_from_this<ServerCall> {
 public:
  ServerCall(ServerConnection* connection, transport::EventLoop* loop,
             uint32_t stream_id, const Service::Method* method,
             const ServerCallLimits& limits);
  ~ServerCall();

  // Set by the connection before the handler runs; read-only afterwards.
  Metadata client_metadata;
  absl::Time deadline = absl::InfiniteFuture();
  std::string peer;
  // The connection's (shared by its calls; never null once dispatched).
  std::shared_ptr<const AuthContext> auth_context;
  // The request's grpc-encoding (identity when absent) and
  // grpc-accept-encoding (nullopt when absent).
  compression::Encoding request_encoding = compression::Encoding::kIdentity;
  std::optional<std::string> accept_encoding;

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
  bool IsCancelled() const { return core_.cancelled(); }
  CallCore* core() { return &core_; }
  // Every request arrived (or the call is cancelled): Read will not block.
  bool RequestsComplete() const { return core_.input_complete(); }
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
    if (send_error_.ok()) send_error_ = status;
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
  void LoopReleaseWriteCredit() { core_.ReleaseWriteCredit(); }

 private:
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
  const ServerCallLimits limits_;
  CallCore core_;

  // Loop only.
  MessageDeframer deframer_;
  MessageDecompressor decompressor_;
  bool headers_sent_ = false;
  bool status_sent_ = false;
  transport::EventLoop::TimerId deadline_timer_ =
      transport::EventLoop::kInvalidTimer;

  // Handler thread only.
  // Unary and client-streaming calls answer one message, always followed by
  // the status: it is held until Finish so that headers, message and
  // trailers cross to the loop in one task.
  const bool single_response_;
  bool has_pending_response_ = false;
  transport::SliceBuffer pending_response_;
  Metadata pending_initial_;
  bool handler_headers_sent_ = false;
  bool handler_finished_ = false;
  Status send_error_;
  std::optional<compression::Encoding> requested_encoding_;
  MessageCompressor compressor_;
  // Written by the handler before the headers are posted; read by the loop
  // when it sends them.
  compression::Encoding response_encoding_ =
      compression::Encoding::kIdentity;  // RESOURCE_EXHAUSTED from an oversized
                                         // Write.
};

}  // namespace internal
}  // namespace rpc

#endif  // RPC_INTERNAL_SERVER_CALL_H_
