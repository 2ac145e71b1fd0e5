// The rpc fuzzers' harness: one real rpc connection, either end, on an
// EventLoop with a manual clock over a transport::MemoryEndpoint, driven to
// quiescence by the caller's thread. No socket, no thread of its own, no
// sleep: a run depends only on the bytes fed in.
//
//   * ServerHarness: a ServerConnection (the real one of rpc::Server) with
//     FuzzEchoService behind it. Handlers run inline, on the driving thread,
//     once their requests are complete (ServerCall::RequestsComplete), so a
//     handler's Read never blocks; Write does not block either (write_bound
//     is unlimited). A bidi handler thus answers after the client half-closes
//     (or the call is cancelled), as a slow server could.
//   * ClientHarness: a ClientTransport (a Channel's connection) carrying a
//     fixed set of ClientCalls, one of each kind and with each request
//     encoding (kCalls); the application side (reads, statuses) runs between
//     loop iterations once a call has its status. With `observer` the calls
//     run as the callback API runs them (ClientCallObserver on the loop, the
//     steps LoopSend / LoopHalfClose): each keeps up to two messages unread
//     before it reads the oldest, so the read bound's owed octets come back
//     as the reader catches up.
//
// The fuzzers feed the peer's bytes to the endpoint piece by piece and call
// Drain() after each; fuzz_corpus_gen joins a ClientHarness and a
// ServerHarness with a MemoryEndpoint pair to record real traffic.
//
// Threading: everything on the thread that created the loop.

#ifndef RPC_FUZZ_HARNESS_H_
#define RPC_FUZZ_HARNESS_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/functional/function_ref.h"
#include "absl/strings/string_view.h"
#include "rpc/compression/encoding.h"
#include "rpc/internal/client_call.h"
#include "rpc/internal/client_transport.h"
#include "rpc/internal/server_call.h"
#include "rpc/internal/server_connection.h"
#include "rpc/server_callback.h"
#include "rpc/service.h"
#include "rpc/testdata/test_service.rpc.pb.h"
#include "transport/io/endpoint.h"
#include "transport/io/event_loop.h"
#include "transport/io/memory_endpoint.h"

namespace rpc {
namespace fuzz {

// Runs `loop` (and `more`, which returns true when it did something) until
// neither has work left. Aborts after a bound no finite exchange needs: a
// livelock is a bug the fuzzer should report.
void DrainLoop(transport::EventLoop* loop, absl::FunctionRef<bool()> more);

// The fuzzers' input format: octet 0 the mode, octets 1-4 (big-endian) seed
// the split of the rest into at most 9 pieces, fed one by one with 1 ms of
// the manual clock between them. False when `size` < 5.
bool SplitInput(const uint8_t* data, size_t size, uint8_t* mode,
                std::vector<std::string_view>* pieces);

// Feeds `pieces` to the harness behind `peer`'s endpoint, one by one: after
// each, 1 ms on the manual clock and `drain()`, then what the harness wrote is
// taken (discarded). With `slow_reader` it has room for 4 KiB and is taken
// after every fourth piece only; at the end the room is unlimited again.
// Aborts when more than 64 MiB piles up (the fuzzers' answers are bounded).
void FeedPieces(transport::EventLoop* loop, transport::MemoryEndpoint* peer,
                const std::vector<std::string_view>& pieces, bool slow_reader,
                absl::FunctionRef<void()> drain);

// rpc.test.EchoService for fuzzing: every answer is bounded (at most
// kMaxResponses messages of at most kMaxResponseSize octets per request) and
// immediate. Request knobs: status_code/status_message end the call with
// that status; count responses of response_size octets (server streaming;
// bidi: per request); the payload and message are echoed. Metadata: the
// values of "x-echo-initial" and "x-echo-trailing-bin" come back in the
// response headers and trailers (the interop suite's keys); "x-encoding"
// (identity, deflate, gzip, zstd) sets the response encoding.
class FuzzEchoService final : public rpc::test::EchoService::Service {
 public:
  static constexpr int kMaxResponses = 8;
  static constexpr int kMaxResponseSize = 16 << 10;

  Status Echo(ServerContext* ctx, const rpc::test::EchoRequest* req,
              rpc::test::EchoResponse* resp) override;
  Status ServerStream(ServerContext* ctx, const rpc::test::EchoRequest* req,
                      ServerWriter<rpc::test::EchoResponse>* writer) override;
  Status ClientStream(ServerContext* ctx,
                      ServerReader<rpc::test::EchoRequest>* reader,
                      rpc::test::EchoResponse* resp) override;
  Status Bidi(ServerContext* ctx,
              ServerReaderWriter<rpc::test::EchoResponse,
                                 rpc::test::EchoRequest>* stream) override;
};

// The same behaviour in the callback form (rpc/server_callback.h): every
// kind's reactor, reacting inline on the loop.
class FuzzCallbackEchoService final
    : public rpc::test::EchoService::CallbackService {
 public:
  ServerUnaryReactor* Echo(CallbackServerContext* ctx,
                           const rpc::test::EchoRequest* req,
                           rpc::test::EchoResponse* resp) override;
  ServerWriteReactor<rpc::test::EchoResponse>* ServerStream(
      CallbackServerContext* ctx, const rpc::test::EchoRequest* req) override;
  ServerReadReactor<rpc::test::EchoRequest>* ClientStream(
      CallbackServerContext* ctx, rpc::test::EchoResponse* resp) override;
  ServerBidiReactor<rpc::test::EchoRequest, rpc::test::EchoResponse>* Bidi(
      CallbackServerContext* ctx) override;
};

struct ServerHarnessOptions {
  // The server's default response encoding and compression threshold
  // (ServerBuilder::SetDefaultCompressionAlgorithm and friends).
  compression::Encoding default_encoding = compression::Encoding::kIdentity;
  size_t compression_threshold = compression::kDefaultCompressionThreshold;
  // Small windows, message and header limits.
  bool small_limits = false;
  // FuzzCallbackEchoService instead of FuzzEchoService.
  bool callback = false;
};

class ServerHarness final : public internal::ServerConnection::Host {
 public:
  ServerHarness(transport::EventLoop* loop,
                std::unique_ptr<transport::Endpoint> endpoint,
                const ServerHarnessOptions& options = {});
  // Destroys the connection (calls still open are cancelled) after running
  // every handler still due.
  ~ServerHarness() override;

  void Start() { connection_->Start(); }
  // Runs the loop and the handlers whose requests are complete until nothing
  // is left to do.
  void Drain();
  void GracefulShutdown() { connection_->GracefulShutdown(); }
  bool closed() const { return closed_; }
  size_t handlers_run() const { return handlers_run_; }

  // ---- ServerConnection::Host ----
  const Service::Method* FindMethod(std::string_view path) override;
  // Callback methods run at once (as rpc::Server runs them, inline).
  void Dispatch(std::shared_ptr<internal::ServerCall> call) override {
    if (call->method()->callback_handler != nullptr) {
      call->method()->callback_handler(std::move(call));
      ++handlers_run_;
      return;
    }
    pending_.push_back(std::move(call));
  }
  const internal::ServerCallLimits& limits() const override { return limits_; }
  void OnConnectionClosed(internal::ServerConnection*) override {
    closed_ = true;
  }

 private:
  // Runs the handlers that are due; true if it ran any.
  bool RunHandlers(bool all);

  transport::EventLoop* const loop_;
  FuzzEchoService service_;
  FuzzCallbackEchoService callback_service_;
  absl::flat_hash_map<std::string, const Service::Method*> methods_;
  internal::ServerCallLimits limits_;
  std::unique_ptr<internal::ServerConnection> connection_;
  std::vector<std::shared_ptr<internal::ServerCall>> pending_;
  bool closed_ = false;
  size_t handlers_run_ = 0;
};

struct ClientHarnessOptions {
  // Small windows and limits (receive messages of at most 1 KiB).
  bool small_limits = false;
  // Requests compressed as Calls() says, and responses asked compressed
  // (x-encoding); else everything identity.
  bool compress = true;
  // Only the calls of this kind.
  std::optional<RpcType> only;
  // The calls in observer mode (the callback API's), see the file comment.
  bool observer = false;
};

class ClientHarness final : public internal::ClientTransport::Host {
 public:
  // The fixed calls (one of each kind, each request encoding, metadata to
  // echo), in the order they open their streams (ids 1, 3, 5, ...).
  struct CallSpec {
    const char* method;  // EchoService method name
    RpcType type;
    compression::Encoding encoding;
    int requests;  // request messages (1 for unary and server streaming)
  };
  static const std::vector<CallSpec>& Calls();

  ClientHarness(transport::EventLoop* loop,
                std::unique_ptr<transport::Endpoint> endpoint,
                const ClientHarnessOptions& options = {});
  // Fails the calls still open (UNAVAILABLE "channel closed").
  ~ClientHarness() override;

  // Starts the connection and every call of Calls(): headers, requests and
  // (for all but the last bidi call, which stays open) the end of the
  // requests.
  void Start();
  // Runs the loop until it has nothing to do; collects the calls that have
  // their status (reads their responses, Finish).
  void Drain();
  // Cancels the calls without a status, then drains.
  void CancelRemaining();
  void GracefulClose() { transport_->GracefulClose(); }
  bool closed() const { return closed_; }
  // Calls with their status, and how many of them are OK.
  size_t finished() const { return finished_; }
  size_t ok() const { return ok_; }

  // ---- ClientTransport::Host ----
  void OnTransportDraining(internal::ClientTransport*) override {}
  void OnTransportClosed(internal::ClientTransport*) override {
    closed_ = true;
  }

 private:
  // Collects the calls with a status; true if there were any.
  bool Collect();

  transport::EventLoop* const loop_;
  const ClientHarnessOptions options_;
  internal::ClientCallOptions call_options_;
  std::unique_ptr<internal::ClientTransport> transport_;
  std::vector<std::shared_ptr<internal::ClientCall>> calls_;
  // Observer mode: one per call, kept until the harness goes (the transport's
  // destructor still ends calls through them).
  std::vector<std::unique_ptr<internal::ClientCallObserver>> observers_;
  bool closed_ = false;
  size_t finished_ = 0;
  size_t ok_ = 0;
};

// One exchange of our client against our server (a ClientHarness and a
// ServerHarness joined by a MemoryEndpoint pair on a manual-clock loop): the
// calls run to their end, then the one left open is cancelled.
struct RecordedExchange {
  std::string client_bytes;  // what the client sent (from its preface on)
  std::string server_bytes;  // what the server sent
  size_t calls_finished = 0;
  size_t calls_ok = 0;
  size_t handlers_run = 0;
};
RecordedExchange RecordExchange(const ClientHarnessOptions& client,
                                const ServerHarnessOptions& server);

// The fuzzers' mode octets (see their header comments) for these options.
uint8_t ServerFuzzerMode(const ServerHarnessOptions& options);
uint8_t ClientFuzzerMode(const ClientHarnessOptions& options);

}  // namespace fuzz
}  // namespace rpc

#endif  // RPC_FUZZ_HARNESS_H_
