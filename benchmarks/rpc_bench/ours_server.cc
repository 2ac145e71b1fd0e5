// The echo server of //benchmarks:rpc_benchmark on our rpc stack: listens on
// 127.0.0.1:<port> (0 picks one), prints "PORT <n>", serves until killed.
// Flags: --port=N --loops=N --workers=N (defaults 0, 1, 4),
// --compression=NAME (the default response encoding; identity),
// --callback=1 (Unary in the CallbackService form; Stream stays blocking),
// --worker_idle_ms=N (SetWorkerIdleTime; the default when absent).

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <memory>
#include <string>

#include "absl/time/time.h"
#include "benchmarks/rpc_bench/echo.rpc.pb.h"
#include "rpc/compression/encoding.h"
#include "rpc/rpc.h"

namespace {

using EchoStream =
    rpc::ServerReaderWriter<rpcbench::EchoMessage, rpcbench::EchoMessage>;

rpc::Status EchoAll(rpc::ServerContext* ctx, EchoStream* stream) {
  // A compressed stream is echoed in its request's encoding, so that (e)
  // measures deflate and zstd in both directions.
  if (ctx->request_compression_algorithm() !=
      rpc::compression::Encoding::kIdentity) {
    ctx->set_compression_algorithm(ctx->request_compression_algorithm());
  }
  rpcbench::EchoMessage m;
  while (stream->Read(&m)) {
    if (!stream->Write(m)) break;
  }
  return rpc::Status::OK;
}

class EchoImpl final : public rpcbench::Echo::Service {
 public:
  rpc::Status Unary(rpc::ServerContext*, const rpcbench::EchoMessage* req,
                    rpcbench::EchoMessage* resp) override {
    resp->set_payload(req->payload());
    return rpc::Status::OK;
  }
  rpc::Status Stream(rpc::ServerContext* ctx, EchoStream* stream) override {
    return EchoAll(ctx, stream);
  }
};

// Unary answers at once in the callback form.
class CallbackEchoImpl final
    : public rpcbench::Echo::WithCallbackMethod_Unary<rpcbench::Echo::Service> {
 public:
  rpc::ServerUnaryReactor* Unary(rpc::CallbackServerContext* ctx,
                                 const rpcbench::EchoMessage* req,
                                 rpcbench::EchoMessage* resp) override {
    resp->set_payload(req->payload());
    rpc::ServerUnaryReactor* reactor = ctx->DefaultReactor();
    reactor->Finish(rpc::Status::OK);
    return reactor;
  }
  rpc::Status Stream(rpc::ServerContext* ctx, EchoStream* stream) override {
    return EchoAll(ctx, stream);
  }
};

int IntFlag(int argc, char** argv, const char* name, int def) {
  size_t n = std::strlen(name);
  for (int i = 1; i < argc; ++i) {
    if (std::strncmp(argv[i], name, n) == 0 && argv[i][n] == '=') {
      return std::atoi(argv[i] + n + 1);
    }
  }
  return def;
}

const char* StringFlag(int argc, char** argv, const char* name,
                       const char* def) {
  size_t n = std::strlen(name);
  for (int i = 1; i < argc; ++i) {
    if (std::strncmp(argv[i], name, n) == 0 && argv[i][n] == '=') {
      return argv[i] + n + 1;
    }
  }
  return def;
}

}  // namespace

int main(int argc, char** argv) {
  const int port_flag = IntFlag(argc, argv, "--port", 0);
  const int loops = IntFlag(argc, argv, "--loops", 1);
  const int workers = IntFlag(argc, argv, "--workers", 4);
  const int idle_ms = IntFlag(argc, argv, "--worker_idle_ms", -1);
  EchoImpl sync_service;
  CallbackEchoImpl callback_service;
  int port = 0;
  rpc::ServerBuilder builder;
  builder.AddListeningPort("127.0.0.1:" + std::to_string(port_flag),
                           rpc::InsecureServerCredentials(), &port);
  if (IntFlag(argc, argv, "--callback", 0) != 0) {
    builder.RegisterService(&callback_service);
  } else {
    builder.RegisterService(&sync_service);
  }
  builder.SetNumLoops(loops);
  builder.SetWorkerThreads(workers, 256);
  if (idle_ms >= 0) builder.SetWorkerIdleTime(absl::Milliseconds(idle_ms));
  const auto encoding = rpc::compression::ParseEncodingName(
      StringFlag(argc, argv, "--compression", "identity"));
  if (!encoding) {
    std::fprintf(stderr, "ours_server: unknown --compression\n");
    return 2;
  }
  builder.SetDefaultCompressionAlgorithm(*encoding);
  std::unique_ptr<rpc::Server> server = builder.BuildAndStart();
  if (server == nullptr || port == 0) {
    std::fprintf(stderr, "ours_server: could not start\n");
    return 1;
  }
  std::printf("PORT %d\n", port);
  std::fflush(stdout);
  server->Wait();
  return 0;
}
