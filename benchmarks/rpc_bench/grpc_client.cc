// The client of //benchmarks:rpc_benchmark on Debian's gRPC C++: sync stubs
// for (a) sequential unary and (c) one bidi stream at 1 KiB and 64 KiB (with
// --api=callback: (a) a chain of one stub->async() call at a time, (c) a
// ClientBidiReactor), the callback API (stub->async()) for (b)
// `--concurrency` calls outstanding on one channel, against the server at
// 127.0.0.1:--port, printing RESULT lines (bench_util.h); with
// --phase=identity or --phase=compressed, (d) sequential unary calls with a
// 100-byte payload, identity or gzip, and (compressed) (e) one bidi stream of
// 64 KiB compressible messages in gzip; with --phase=sweep, the concurrency
// sweep (--sweep calls in flight over each of --sweep_channels channels, each
// channel its own connection).

#include <grpcpp/grpcpp.h>

#include <chrono>
#include <cstdio>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "benchmarks/rpc_bench/bench_util.h"
#include "benchmarks/rpc_bench/echo.grpc.pb.h"
#include "benchmarks/rpc_bench/reactors.h"

namespace {

using rpcbench::EchoMessage;

std::chrono::system_clock::time_point Deadline(double seconds) {
  return std::chrono::system_clock::now() +
         std::chrono::milliseconds(static_cast<long>(seconds * 1000));
}

using Stub = rpcbench::grpcpeer::Echo::Stub;

// RunAsyncChains (bench_util.h) on this stack.
bool RunAsyncChains(const rpcbench::Flags& flags, const std::string& prefix,
                    const std::vector<Stub*>& stubs, int in_flight) {
  return rpcbench::RunAsyncChains<grpc::ClientContext, grpc::Status,
                                  EchoMessage>(
      flags, prefix, stubs, in_flight,
      [](grpc::ClientContext* c) { c->set_deadline(Deadline(30)); });
}

// The sweep (bench_util.h), each channel its own connection (distinct channel
// arguments, so that grpc++ does not share one subchannel between them).
int RunSweep(const rpcbench::Flags& flags) {
  return rpcbench::RunSweep(
      flags,
      [&](int i) {
        grpc::ChannelArguments args;
        args.SetInt("rpcbench.channel", i);
        return rpcbench::grpcpeer::Echo::NewStub(grpc::CreateCustomChannel(
            "127.0.0.1:" + std::to_string(flags.port),
            grpc::InsecureChannelCredentials(), args));
      },
      [&](const std::string& prefix, const std::vector<Stub*>& stubs, int n) {
        return RunAsyncChains(flags, prefix, stubs, n);
      });
}

using StreamClient = rpcbench::StreamEchoClient<
    grpc::ClientBidiReactor<EchoMessage, EchoMessage>, EchoMessage,
    grpc::Status>;

// (d) and (e).
int RunCompression(const rpcbench::Flags& flags,
                   rpcbench::grpcpeer::Echo::Stub* stub) {
  const bool gzip = flags.phase == "compressed";
  EchoMessage small;
  small.set_payload(rpcbench::Payload(100));
  bool ok = rpcbench::RunSequentialCpu(
      flags, gzip ? "d_gzip_cpu_us_per_call" : "d_identity_cpu_us_per_call",
      [&] {
        grpc::ClientContext ctx;
        ctx.set_deadline(Deadline(30));
        if (gzip) ctx.set_compression_algorithm(GRPC_COMPRESS_GZIP);
        EchoMessage resp;
        grpc::Status s = stub->Unary(&ctx, small, &resp);
        if (!s.ok()) {
          std::fprintf(stderr, "(d) call failed: %s\n",
                       s.error_message().c_str());
        }
        return s.ok() && resp.payload().size() == 100;
      });
  if (!ok || !gzip) return ok ? 0 : 1;

  const std::string payload = rpcbench::Payload(65536);
  grpc::ClientContext ctx;
  ctx.set_deadline(Deadline(flags.duration_s * 3 + 30));
  ctx.set_compression_algorithm(GRPC_COMPRESS_GZIP);
  auto stream = stub->Stream(&ctx);
  ok = rpcbench::RunStream<EchoMessage>(
      flags, payload.size(), "e_gzip_msgs_per_s", "e_gzip_mb_per_s",
      stream.get(),
      [&] {
        grpc::Status s = stream->Finish();
        if (!s.ok())
          std::fprintf(stderr, "(e) finish: %s\n", s.error_message().c_str());
        return s.ok();
      },
      payload);
  return ok ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  const rpcbench::Flags flags = rpcbench::ParseFlags(argc, argv);
  if (flags.busy_poll_us != 0) {
    std::fprintf(stderr, "grpc_client: grpc++ has no busy-poll setting\n");
    return 2;
  }
  grpc::ChannelArguments args;
  args.SetMaxReceiveMessageSize(-1);
  std::shared_ptr<grpc::Channel> channel =
      grpc::CreateCustomChannel("127.0.0.1:" + std::to_string(flags.port),
                                grpc::InsecureChannelCredentials(), args);
  auto stub = rpcbench::grpcpeer::Echo::NewStub(channel);
  if (flags.phase == "sweep") return RunSweep(flags);
  if (flags.phase == "identity" || flags.phase == "compressed") {
    return RunCompression(flags, stub.get());
  }
  if (!flags.Runs('a') && !flags.Runs('b') && !flags.Runs('c')) {
    std::fprintf(stderr, "unknown --phase=%s\n", flags.phase.c_str());
    return 2;
  }

  // (a)
  EchoMessage empty;
  bool ok = true;
  if (flags.Runs('a') && flags.api == "callback") {
    ok = RunAsyncChains(flags, "a", {stub.get()}, 1);
  } else if (flags.Runs('a')) {
    ok = rpcbench::RunSequential(flags, [&] {
      grpc::ClientContext ctx;
      ctx.set_deadline(Deadline(30));
      EchoMessage resp;
      grpc::Status s = stub->Unary(&ctx, empty, &resp);
      if (!s.ok())
        std::fprintf(stderr, "(a) call failed: %s\n",
                     s.error_message().c_str());
      return s.ok();
    });
  }
  if (!ok) return 1;

  // (b)
  if (flags.Runs('b') &&
      !RunAsyncChains(flags, "b", {stub.get()}, flags.concurrency)) {
    return 1;
  }

  // (c)
  if (flags.Runs('c') &&
      !rpcbench::RunStreams<grpc::ClientContext, EchoMessage, StreamClient>(
          flags, stub.get(), [](grpc::ClientContext* c, double seconds) {
            c->set_deadline(Deadline(seconds));
          })) {
    return 1;
  }
  return 0;
}
