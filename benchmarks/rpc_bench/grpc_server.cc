// The echo server of //benchmarks:rpc_benchmark on Debian's gRPC C++ (sync
// server): listens on 127.0.0.1:<port> (0 picks one), prints "PORT <n>",
// serves until killed. Flags: --port=N, --compression=gzip (the default
// response encoding; identity), --callback=1 (Unary as a callback method,
// answered at once; Stream stays blocking).

#include <grpcpp/grpcpp.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>

#include "benchmarks/rpc_bench/echo.grpc.pb.h"

namespace {

using EchoStream =
    grpc::ServerReaderWriter<rpcbench::EchoMessage, rpcbench::EchoMessage>;

grpc::Status EchoAll(EchoStream* stream) {
  rpcbench::EchoMessage m;
  while (stream->Read(&m)) {
    if (!stream->Write(m)) break;
  }
  return grpc::Status::OK;
}

class EchoImpl final : public rpcbench::grpcpeer::Echo::Service {
 public:
  grpc::Status Unary(grpc::ServerContext*, const rpcbench::EchoMessage* req,
                     rpcbench::EchoMessage* resp) override {
    resp->set_payload(req->payload());
    return grpc::Status::OK;
  }
  grpc::Status Stream(grpc::ServerContext*, EchoStream* stream) override {
    return EchoAll(stream);
  }
};

class CallbackEchoImpl final
    : public rpcbench::grpcpeer::Echo::WithCallbackMethod_Unary<
          rpcbench::grpcpeer::Echo::Service> {
 public:
  grpc::ServerUnaryReactor* Unary(grpc::CallbackServerContext* ctx,
                                  const rpcbench::EchoMessage* req,
                                  rpcbench::EchoMessage* resp) override {
    resp->set_payload(req->payload());
    grpc::ServerUnaryReactor* reactor = ctx->DefaultReactor();
    reactor->Finish(grpc::Status::OK);
    return reactor;
  }
  grpc::Status Stream(grpc::ServerContext*, EchoStream* stream) override {
    return EchoAll(stream);
  }
};

}  // namespace

int main(int argc, char** argv) {
  int port_flag = 0;
  bool gzip = false;
  bool callback = false;
  for (int i = 1; i < argc; ++i) {
    if (std::strncmp(argv[i], "--port=", 7) == 0) {
      port_flag = std::atoi(argv[i] + 7);
    } else if (std::strcmp(argv[i], "--compression=gzip") == 0) {
      gzip = true;
    } else if (std::strcmp(argv[i], "--callback=1") == 0) {
      callback = true;
    }
  }
  EchoImpl sync_service;
  CallbackEchoImpl callback_service;
  int port = 0;
  grpc::ServerBuilder builder;
  builder.AddListeningPort("127.0.0.1:" + std::to_string(port_flag),
                           grpc::InsecureServerCredentials(), &port);
  if (callback) {
    builder.RegisterService(&callback_service);
  } else {
    builder.RegisterService(&sync_service);
  }
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
