// The echo server of //benchmarks:rpc_benchmark on our rpc stack: listens on
// 127.0.0.1:<port> (0 picks one), prints "PORT <n>", serves until killed.
// Flags: --port=N --loops=N --workers=N (defaults 0, 1, 4),
// --compression=NAME (the default response encoding; identity),
// --callback=1 (the CallbackService form: Unary through its DefaultReactor,
// Stream a ServerBidiReactor), --worker_idle_ms=N (SetWorkerIdleTime; the
// default when absent), --hold=1 (adds the Hold service: a held unary call
// keeps its DefaultReactor unfinished, a held server-streaming call is a
// ServerWriteReactor that writes nothing until Release), --busy_poll_us=N
// (issue 14's spin mode: the loops busy-poll up to N us after work;
// ServerBuilder::SetBusyPoll), --leader_follower=0|1
// (SetWorkerLeaderFollower; the builder's default when absent).

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>

#include "absl/time/time.h"
#include "benchmarks/rpc_bench/echo.rpc.pb.h"
#include "benchmarks/rpc_bench/reactors.h"
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

using rpcbench::EchoMessage;

// Our types for the callback services of reactors.h.
struct OursApi {
  using Msg = EchoMessage;
  using Status = rpc::Status;
  using Context = rpc::CallbackServerContext;
  using UnaryReactor = rpc::ServerUnaryReactor;
  using WriteReactor = rpc::ServerWriteReactor<EchoMessage>;
  using BidiReactor = rpc::ServerBidiReactor<EchoMessage, EchoMessage>;
  using EchoService = rpcbench::Echo::CallbackService;
  using HoldService = rpcbench::Hold::CallbackService;
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
  rpcbench::CallbackEcho<OursApi> callback_service;
  rpcbench::CallbackHold<OursApi> hold_service;
  int port = 0;
  rpc::ServerBuilder builder;
  builder.AddListeningPort("127.0.0.1:" + std::to_string(port_flag),
                           rpc::InsecureServerCredentials(), &port);
  if (IntFlag(argc, argv, "--callback", 0) != 0) {
    builder.RegisterService(&callback_service);
  } else {
    builder.RegisterService(&sync_service);
  }
  if (IntFlag(argc, argv, "--hold", 0) != 0) {
    builder.RegisterService(&hold_service);
  }
  const int busy_poll_us = IntFlag(argc, argv, "--busy_poll_us", 0);
  if (busy_poll_us > 0) builder.SetBusyPoll(absl::Microseconds(busy_poll_us));
  builder.SetNumLoops(loops);
  builder.SetWorkerThreads(workers, 256);
  if (idle_ms >= 0) builder.SetWorkerIdleTime(absl::Milliseconds(idle_ms));
  const int leader_follower = IntFlag(argc, argv, "--leader_follower", -1);
  if (leader_follower >= 0)
    builder.SetWorkerLeaderFollower(leader_follower != 0);
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
