// The echo server of //benchmarks:rpc_benchmark on Debian's gRPC C++ (sync
// server): listens on 127.0.0.1:<port> (0 picks one), prints "PORT <n>",
// serves until killed. Flags: --port=N, --compression=gzip (the default
// response encoding; identity).

#include <grpcpp/grpcpp.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>

#include "benchmarks/rpc_bench/echo.grpc.pb.h"

namespace {

class EchoImpl final : public rpcbench::grpcpeer::Echo::Service {
 public:
  grpc::Status Unary(grpc::ServerContext*, const rpcbench::EchoMessage* req,
                     rpcbench::EchoMessage* resp) override {
    resp->set_payload(req->payload());
    return grpc::Status::OK;
  }
  grpc::Status Stream(
      grpc::ServerContext*,
      grpc::ServerReaderWriter<rpcbench::EchoMessage, rpcbench::EchoMessage>*
          stream) override {
    rpcbench::EchoMessage m;
    while (stream->Read(&m)) {
      if (!stream->Write(m)) break;
    }
    return grpc::Status::OK;
  }
};

}  // namespace

int main(int argc, char** argv) {
  int port_flag = 0;
  bool gzip = false;
  for (int i = 1; i < argc; ++i) {
    if (std::strncmp(argv[i], "--port=", 7) == 0) {
      port_flag = std::atoi(argv[i] + 7);
    } else if (std::strcmp(argv[i], "--compression=gzip") == 0) {
      gzip = true;
    }
  }
  EchoImpl service;
  int port = 0;
  grpc::ServerBuilder builder;
  builder.AddListeningPort("127.0.0.1:" + std::to_string(port_flag),
                           grpc::InsecureServerCredentials(), &port);
  builder.RegisterService(&service);
  if (gzip) builder.SetDefaultCompressionAlgorithm(GRPC_COMPRESS_GZIP);
  std::unique_ptr<grpc::Server> server = builder.BuildAndStart();
  if (server == nullptr || port == 0) {
    std::fprintf(stderr, "grpc_server: could not start\n");
    return 1;
  }
  std::printf("PORT %d\n", port);
  std::fflush(stdout);
  server->Wait();
  return 0;
}
