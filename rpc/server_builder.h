// rpc::ServerBuilder: configures and starts a Server (grpc::ServerBuilder's
// shape; see server.h for an example).

#ifndef RPC_SERVER_BUILDER_H_
#define RPC_SERVER_BUILDER_H_

#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include "rpc/compression/encoding.h"
#include "rpc/credentials.h"
#include "rpc/server.h"
#include "rpc/service.h"

namespace rpc {

class ServerBuilder {
 public:
  ServerBuilder();

  // Listens on `address` ("0.0.0.0:50051", "[::]:0", "localhost:0"); port 0
  // picks a free port, stored in *selected_port by BuildAndStart (0 when
  // binding failed). `creds`: InsecureServerCredentials() or
  // SslServerCredentials(...).
  ServerBuilder& AddListeningPort(const std::string& address,
                                  std::shared_ptr<ServerCredentials> creds,
                                  int* selected_port = nullptr);
  // The service must outlive the server.
  ServerBuilder& RegisterService(Service* service);
  // I/O loops (threads); default 1.
  ServerBuilder& SetNumLoops(int n);
  // Handler threads: `min` started up front, more up to `max` as handlers
  // block (default 2..256).
  ServerBuilder& SetWorkerThreads(int min, int max);
  // Larger request messages fail the call with RESOURCE_EXHAUSTED (default
  // 4 MiB); larger responses too (default unlimited). -1: unlimited.
  ServerBuilder& SetMaxReceiveMessageSize(int bytes);
  ServerBuilder& SetMaxSendMessageSize(int bytes);
  // The response encoding of calls whose handler sets none
  // (ServerContext::set_compression_algorithm); default identity. Used only
  // when the client accepts compression; see ServerContext for the rule.
  ServerBuilder& SetDefaultCompressionAlgorithm(compression::Encoding encoding);
  // Response messages smaller than this go uncompressed (flag 0) on a
  // compressed call; default compression::kDefaultCompressionThreshold (1024).
  ServerBuilder& SetCompressionThreshold(size_t bytes);

  // nullptr when a port could not be bound, or two services share a method.
  std::unique_ptr<Server> BuildAndStart();

 private:
  Server::Options options_;
  std::vector<std::string> addresses_;
  std::vector<std::shared_ptr<ServerCredentials>> credentials_;
  std::vector<int*> selected_ports_;
  std::vector<Service*> services_;
};

}  // namespace rpc

#endif  // RPC_SERVER_BUILDER_H_
