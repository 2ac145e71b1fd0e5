// rpc::ClientContext: per-call options and results on the client, in grpc++'s
// shape (grpc::ClientContext). One context serves one call; do not reuse it.
//
//   rpc::ClientContext ctx;
//   ctx.set_deadline(std::chrono::system_clock::now() +
//                    std::chrono::seconds(1));
//   ctx.AddMetadata("x-user", "ann");
//   rpc::Status s = stub->SayHello(&ctx, request, &reply);
//   ctx.GetServerTrailingMetadata().Get("x-cost");
//
// TryCancel may be called from any thread, at any time; the call then ends
// with CANCELLED (unless it already had its status). Everything else belongs
// to the thread that makes the call.

#ifndef RPC_CLIENT_CONTEXT_H_
#define RPC_CLIENT_CONTEXT_H_

#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <utility>

#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "rpc/auth_context.h"
#include "rpc/compression/encoding.h"
#include "rpc/wire/metadata.h"
#include "rpc/wire/status.h"

namespace rpc {

class ChannelInterface;
namespace internal {
class ClientCall;
class ClientCallBase;
class ClientContextTestPeer;
class ClientReactorCall;
}  // namespace internal

class ClientContext {
 public:
  ClientContext();
  ~ClientContext();
  ClientContext(const ClientContext&) = delete;
  ClientContext& operator=(const ClientContext&) = delete;

  // The call fails with DEADLINE_EXCEEDED after this time (sent to the server
  // as grpc-timeout). Default: none.
  void set_deadline(absl::Time deadline) { deadline_ = deadline; }
  template <typename Clock, typename Duration>
  void set_deadline(const std::chrono::time_point<Clock, Duration>& t) {
    deadline_ = absl::Now() + absl::FromChrono(t - Clock::now());
  }
  absl::Time deadline() const { return deadline_; }

  // Custom metadata for the request (metadata.h rules; the call fails with
  // INTERNAL before sending anything when a key or value is invalid).
  void AddMetadata(const std::string& key, const std::string& value) {
    send_metadata_.Add(key, value);
  }
  const Metadata& send_metadata() const { return send_metadata_; }

  // The request encoding (grpc-encoding): messages of at least the channel's
  // compression threshold are compressed with it. Default: the channel's
  // (ChannelArguments::compression_algorithm, identity unless set). Responses
  // in any of identity, deflate, gzip and zstd are decoded whatever this is.
  void set_compression_algorithm(compression::Encoding encoding) {
    compression_algorithm_ = encoding;
  }
  std::optional<compression::Encoding> compression_algorithm() const {
    return compression_algorithm_;
  }
  // Wait-for-ready (grpc++'s name; gRPC's wait-for-ready.md): when true the
  // call waits until the channel has a READY connection (or the deadline
  // passes: DEADLINE_EXCEEDED) instead of failing with UNAVAILABLE while the
  // channel is in TRANSIENT_FAILURE. Default false (fail-fast).
  void set_wait_for_ready(bool wait_for_ready) {
    wait_for_ready_ = wait_for_ready;
  }
  bool wait_for_ready() const { return wait_for_ready_; }

  // Cancels the call (any thread): RST_STREAM CANCEL to the server and
  // CANCELLED for the caller.
  void TryCancel();

  // The response headers' and trailers' custom metadata; valid once the call
  // has its status (Finish, or a blocking unary call returned; OnDone for a
  // callback call), and the initial metadata also once a first response
  // message was read (OnReadInitialMetadataDone for a callback call).
  const Metadata& GetServerInitialMetadata() const;
  const Metadata& GetServerTrailingMetadata() const;

  // "ipv4:127.0.0.1:50051" once the call started on a connection.
  std::string peer() const;
  // The server's identity and the connection's security (rpc/auth_context.h)
  // once the call started on a connection; null before.
  std::shared_ptr<const AuthContext> auth_context() const;

 private:
  // The library's (rpc/client_stream.h's call classes) and tests'.
  friend class internal::ClientCallBase;
  friend class internal::ClientContextTestPeer;
  friend class internal::ClientReactorCall;

  // Binds the context to its call; `channel` is kept alive until the
  // context is destroyed (null: the caller keeps it).
  void set_call(std::shared_ptr<internal::ClientCall> call,
                std::shared_ptr<ChannelInterface> channel);
  std::shared_ptr<internal::ClientCall> call() const;
  // Waits for the call's status and stores the server's metadata.
  Status FinishCall();
  // Waits for the response headers and stores their metadata.
  void FetchInitialMetadata();
  // A grpc-encoding value to send instead of the real one (empty: none).
  const std::string& grpc_encoding_header_for_test() const {
    return grpc_encoding_header_for_test_;
  }
  // Sends `value` as grpc-encoding instead (messages are still compressed per
  // compression_algorithm), to exercise a server's answer to an encoding it
  // does not support.
  void set_grpc_encoding_header_for_test(std::string value) {
    grpc_encoding_header_for_test_ = std::move(value);
  }

  absl::Time deadline_ = absl::InfiniteFuture();
  Metadata send_metadata_;
  std::optional<compression::Encoding> compression_algorithm_;
  std::string grpc_encoding_header_for_test_;
  bool wait_for_ready_ = false;
  // FetchInitialMetadata stored them (the thread that drives the call).
  bool initial_fetched_ = false;
  mutable absl::Mutex mu_;
  std::shared_ptr<internal::ClientCall> call_ ABSL_GUARDED_BY(mu_);
  std::shared_ptr<ChannelInterface> channel_;
  bool cancel_requested_ ABSL_GUARDED_BY(mu_) = false;
  Metadata received_initial_;
  Metadata received_trailing_;
};

}  // namespace rpc

#endif  // RPC_CLIENT_CONTEXT_H_
