// The client of //benchmarks:rpc_benchmark on Debian's gRPC C++: sync stubs
// for (a) sequential unary and (c) one bidi stream at 1 KiB and 64 KiB, the
// callback API (stub->async()) for (b) `--concurrency` calls outstanding on one
// channel, against the server at 127.0.0.1:--port, printing RESULT lines
// (bench_util.h); with --phase=identity or --phase=compressed, (d) sequential
// unary calls with a 100-byte payload, identity or gzip, and (compressed) (e)
// one bidi stream of 64 KiB compressible messages in gzip.

#include <grpcpp/grpcpp.h>

#include <chrono>
#include <cstdio>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "benchmarks/rpc_bench/bench_util.h"
#include "benchmarks/rpc_bench/echo.grpc.pb.h"

namespace {

using rpcbench::EchoMessage;

// One chain of (b): two contexts used alternately, so that the one a
// completion replaces finished (and its callback returned) a call earlier.
struct Slot {
  std::unique_ptr<grpc::ClientContext> ctx[2];
  EchoMessage req;
  EchoMessage resp[2];
  unsigned gen = 0;
};

std::chrono::system_clock::time_point Deadline(double seconds) {
  return std::chrono::system_clock::now() +
         std::chrono::milliseconds(static_cast<long>(seconds * 1000));
}

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
  grpc::ChannelArguments args;
  args.SetMaxReceiveMessageSize(-1);
  std::shared_ptr<grpc::Channel> channel =
      grpc::CreateCustomChannel("127.0.0.1:" + std::to_string(flags.port),
                                grpc::InsecureChannelCredentials(), args);
  auto stub = rpcbench::grpcpeer::Echo::NewStub(channel);
  if (flags.phase != "abc") return RunCompression(flags, stub.get());

  // (a)
  EchoMessage empty;
  bool ok = rpcbench::RunSequential(flags, [&] {
    grpc::ClientContext ctx;
    ctx.set_deadline(Deadline(30));
    EchoMessage resp;
    grpc::Status s = stub->Unary(&ctx, empty, &resp);
    if (!s.ok())
      std::fprintf(stderr, "(a) call failed: %s\n", s.error_message().c_str());
    return s.ok();
  });
  if (!ok) return 1;

  // (b)
  {
    rpcbench::ConcurrentRun run;
    std::vector<Slot> slots(flags.concurrency);
    std::function<void(int)> start = [&](int i) {
      Slot& slot = slots[i];
      const unsigned g = slot.gen++ & 1;
      slot.ctx[g] = std::make_unique<grpc::ClientContext>();
      slot.ctx[g]->set_deadline(Deadline(30));
      stub->async()->Unary(slot.ctx[g].get(), &slot.req, &slot.resp[g],
                           [&, i](grpc::Status s) {
                             if (!s.ok()) {
                               std::fprintf(stderr, "(b) call failed: %s\n",
                                            s.error_message().c_str());
                             }
                             if (run.Next(s.ok())) start(i);
                           });
    };
    if (!rpcbench::RunConcurrent(flags, &run, start)) return 1;
  }

  // (c)
  for (size_t size : {size_t{1024}, size_t{65536}}) {
    grpc::ClientContext ctx;
    ctx.set_deadline(Deadline(flags.duration_s * 3 + 30));
    auto stream = stub->Stream(&ctx);
    const bool small = size == 1024;
    ok = rpcbench::RunStream<EchoMessage>(
        flags, size, small ? "c1k_msgs_per_s" : "c64k_msgs_per_s",
        small ? "c1k_mb_per_s" : "c64k_mb_per_s", stream.get(), [&] {
          grpc::Status s = stream->Finish();
          if (!s.ok())
            std::fprintf(stderr, "(c) finish: %s\n", s.error_message().c_str());
          return s.ok();
        });
    if (!ok) return 1;
  }
  return 0;
}
