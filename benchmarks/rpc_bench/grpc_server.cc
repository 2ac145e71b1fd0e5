// The echo server of //benchmarks:rpc_benchmark on Debian's gRPC C++ (sync
// server): listens on 127.0.0.1:<port> (0 picks one), prints "PORT <n>",
// serves until killed. Flags: --port=N, --compression=gzip (the default
// response encoding; identity), --callback=1 (the callback server: Unary
// answered at once through its DefaultReactor, Stream a ServerBidiReactor),
// --hold=1 (adds the Hold service, all callback methods: held unary calls
// keep their DefaultReactor unfinished, held server-streaming calls are
// ServerWriteReactors; reactors.h).

#include <grpcpp/grpcpp.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>

#include "benchmarks/rpc_bench/echo.grpc.pb.h"
#include "benchmarks/rpc_bench/reactors.h"

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

using rpcbench::EchoMessage;

// grpc++'s types for the callback services of reactors.h.
struct GrpcApi {
  using Msg = EchoMessage;
  using Status = grpc::Status;
  using Context = grpc::CallbackServerContext;
  using UnaryReactor = grpc::ServerUnaryReactor;
  using WriteReactor = grpc::ServerWriteReactor<EchoMessage>;
  using BidiReactor = grpc::ServerBidiReactor<EchoMessage, EchoMessage>;
  using EchoService = rpcbench::grpcpeer::Echo::CallbackService;
  using HoldService = rpcbench::grpcpeer::Hold::CallbackService;
};

}  // namespace

int main(int argc, char** argv) {
  int port_flag = 0;
  bool gzip = false;
  bool callback = false;
  bool hold = false;
  for (int i = 1; i < argc; ++i) {
    if (std::strncmp(argv[i], "--port=", 7) == 0) {
      port_flag = std::atoi(argv[i] + 7);
    } else if (std::strcmp(argv[i], "--compression=gzip") == 0) {
      gzip = true;
    } else if (std::strcmp(argv[i], "--callback=1") == 0) {
      callback = true;
    } else if (std::strcmp(argv[i], "--hold=1") == 0) {
      hold = true;
    }
  }
  EchoImpl sync_service;
  rpcbench::CallbackEcho<GrpcApi> callback_service;
  rpcbench::CallbackHold<GrpcApi> hold_service;
  int port = 0;
  grpc::ServerBuilder builder;
  builder.AddListeningPort("127.0.0.1:" + std::to_string(port_flag),
                           grpc::InsecureServerCredentials(), &port);
  if (callback) {
    builder.RegisterService(&callback_service);
  } else {
    builder.RegisterService(&sync_service);
  }
  if (hold) builder.RegisterService(&hold_service);
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
