// rpc::ServerContext: what a handler knows about its call and what it adds to
// the response, in grpc++'s shape (grpc::ServerContext).
//
//   rpc::Status SayHello(rpc::ServerContext* ctx, const HelloRequest* req,
//                        HelloReply* reply) override {
//     if (auto v = ctx->client_metadata().Get("x-user")) ...
//     ctx->AddInitialMetadata("x-server", "a");     // before the first write
//     ctx->AddTrailingMetadata("x-cost", "3");      // before returning
//     if (ctx->IsCancelled()) return rpc::Status::CANCELLED;
//   }
//
// A context belongs to the handler's thread; IsCancelled may be called from
// any thread. Metadata added after the response headers went out (the first
// Write, or the end of the handler) is ignored.

#ifndef RPC_SERVER_CONTEXT_H_
#define RPC_SERVER_CONTEXT_H_

#include <chrono>
#include <memory>
#include <string>

#include "absl/time/time.h"
#include "rpc/auth_context.h"
#include "rpc/compression/encoding.h"
#include "rpc/wire/metadata.h"

namespace rpc {

namespace internal {
class ServerCall;
}

class ServerContext {
 public:
  explicit ServerContext(std::shared_ptr<internal::ServerCall> call);
  ~ServerContext();
  ServerContext(const ServerContext&) = delete;
  ServerContext& operator=(const ServerContext&) = delete;

  // The client's deadline (from grpc-timeout); absl::InfiniteFuture() when
  // none was sent. The server enforces it: past it the call is cancelled and
  // the client gets DEADLINE_EXCEEDED.
  absl::Time deadline() const;
  std::chrono::system_clock::time_point raw_deadline() const {
    return absl::ToChronoTime(deadline());
  }

  // The request's custom metadata ("-bin" values decoded), in wire order.
  const Metadata& client_metadata() const;
  // "ipv4:127.0.0.1:54321" (grpc++'s form).
  std::string peer() const;
  // "/package.Service/Method".
  const std::string& method() const;
  // Who the client is: transport security and, under TLS, the identity in
  // its certificate (rpc/auth_context.h). One per connection, shared by its
  // calls; never null.
  std::shared_ptr<const AuthContext> auth_context() const;

  // Sent with the response headers (the first Write, or with the status).
  // Keys and values follow metadata.h; invalid ones are dropped.
  void AddInitialMetadata(const std::string& key, const std::string& value);
  // Sent with the status in the trailers.
  void AddTrailingMetadata(const std::string& key, const std::string& value);

  // True once the call ended without the handler's status: the client
  // cancelled or its deadline passed, the connection failed, or the server is
  // shutting down past its deadline. Writes then fail and reads return false.
  bool IsCancelled() const;

  // The response encoding for this call, before the first Write (later calls
  // are ignored); default: the server's (SetDefaultCompressionAlgorithm).
  // The encoding actually used is one the client accepts
  // (grpc-accept-encoding): identity when `encoding` is identity or the client
  // sent no grpc-accept-encoding; else `encoding` itself when the client lists
  // it; else the server's first preference among the ones the client lists
  // (compression::kDefaultPreference: zstd, gzip, deflate; answered by
  // compression::kDefaultNegotiator), identity if none. Response messages
  // below the server's threshold are sent uncompressed.
  void set_compression_algorithm(compression::Encoding encoding);
  // The request's grpc-encoding (identity when absent).
  compression::Encoding request_compression_algorithm() const;

  // For the library.
  internal::ServerCall* call() const { return call_.get(); }
  Metadata* mutable_initial_metadata() { return &initial_metadata_; }
  Metadata* mutable_trailing_metadata() { return &trailing_metadata_; }

 private:
  std::shared_ptr<internal::ServerCall> call_;
  Metadata initial_metadata_;
  Metadata trailing_metadata_;
};

}  // namespace rpc

#endif  // RPC_SERVER_CONTEXT_H_
