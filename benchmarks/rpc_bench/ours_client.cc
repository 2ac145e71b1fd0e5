// The client of //benchmarks:rpc_benchmark on our rpc stack: runs workloads
// (a) sequential unary, (b) `--concurrency` async unary calls outstanding on
// one channel, (c) one bidi stream at 1 KiB and 64 KiB against the server at
// 127.0.0.1:--port, printing RESULT lines (bench_util.h); with
// --phase=identity or --phase=compressed, (d) sequential unary calls with a
// 100-byte payload, identity or gzip, and (compressed) (e) one bidi stream of
// 64 KiB compressible messages in gzip, deflate and zstd.

#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "absl/time/clock.h"
#include "benchmarks/rpc_bench/bench_util.h"
#include "benchmarks/rpc_bench/echo.rpc.pb.h"
#include "rpc/compression/codec.h"
#include "rpc/rpc.h"

namespace {

using rpcbench::EchoMessage;

// One chain of (b): two contexts used alternately, so that the one a
// completion replaces finished (and its callback returned) a call earlier.
struct Slot {
  std::unique_ptr<rpc::ClientContext> ctx[2];
  EchoMessage req;
  EchoMessage resp[2];
  unsigned gen = 0;
};

using rpc::compression::Encoding;

// (d) and (e).
int RunCompression(const rpcbench::Flags& flags, rpcbench::Echo::Stub* stub) {
  const bool gzip = flags.phase == "compressed";
  EchoMessage small;
  small.set_payload(rpcbench::Payload(100));
  bool ok = rpcbench::RunSequentialCpu(
      flags, gzip ? "d_gzip_cpu_us_per_call" : "d_identity_cpu_us_per_call",
      [&] {
        rpc::ClientContext ctx;
        ctx.set_deadline(absl::Now() + absl::Seconds(30));
        if (gzip) ctx.set_compression_algorithm(Encoding::kGzip);
        EchoMessage resp;
        rpc::Status s = stub->Unary(&ctx, small, &resp);
        if (!s.ok()) {
          std::fprintf(stderr, "(d) call failed: %s\n",
                       s.error_message().c_str());
        }
        return s.ok() && resp.payload().size() == 100;
      });
  if (!ok || !gzip) return ok ? 0 : 1;

  const std::string payload = rpcbench::Payload(65536);
  struct Codec {
    Encoding encoding;
    const char* name;
  };
  for (const Codec& c :
       {Codec{Encoding::kGzip, "gzip"}, Codec{Encoding::kDeflate, "deflate"},
        Codec{Encoding::kZstd, "zstd"}}) {
    // The codec's ratio on this payload (output / input octets, as in
    // compression_benchmark).
    rpc::compression::Compressor compressor(c.encoding);
    std::string compressed;
    if (!compressor.Compress(payload, &compressed).ok()) return 1;
    const std::string prefix = std::string("e_") + c.name;
    rpcbench::Result((prefix + "_ratio").c_str(),
                     static_cast<double>(compressed.size()) / payload.size());

    rpc::ClientContext ctx;
    ctx.set_deadline(absl::Now() + absl::Seconds(flags.duration_s * 3 + 30));
    ctx.set_compression_algorithm(c.encoding);
    auto stream = stub->Stream(&ctx);
    ok = rpcbench::RunStream<EchoMessage>(
        flags, payload.size(), (prefix + "_msgs_per_s").c_str(),
        (prefix + "_mb_per_s").c_str(), stream.get(),
        [&] {
          rpc::Status s = stream->Finish();
          if (!s.ok())
            std::fprintf(stderr, "(e) finish: %s\n", s.error_message().c_str());
          return s.ok();
        },
        payload);
    if (!ok) return 1;
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  const rpcbench::Flags flags = rpcbench::ParseFlags(argc, argv);
  std::shared_ptr<rpc::Channel> channel =
      rpc::CreateChannel("127.0.0.1:" + std::to_string(flags.port),
                         rpc::InsecureChannelCredentials());
  auto stub = rpcbench::Echo::NewStub(channel);
  const auto deadline = [] { return absl::Now() + absl::Seconds(30); };
  if (flags.phase != "abc") return RunCompression(flags, stub.get());

  // (a)
  EchoMessage empty;
  bool ok = rpcbench::RunSequential(flags, [&] {
    rpc::ClientContext ctx;
    ctx.set_deadline(deadline());
    EchoMessage resp;
    rpc::Status s = stub->Unary(&ctx, empty, &resp);
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
      slot.ctx[g] = std::make_unique<rpc::ClientContext>();
      slot.ctx[g]->set_deadline(deadline());
      stub->async()->Unary(slot.ctx[g].get(), &slot.req, &slot.resp[g],
                           [&, i](rpc::Status s) {
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
    rpc::ClientContext ctx;
    ctx.set_deadline(absl::Now() + absl::Seconds(flags.duration_s * 3 + 30));
    auto stream = stub->Stream(&ctx);
    const bool small = size == 1024;
    ok = rpcbench::RunStream<EchoMessage>(
        flags, size, small ? "c1k_msgs_per_s" : "c64k_msgs_per_s",
        small ? "c1k_mb_per_s" : "c64k_mb_per_s", stream.get(), [&] {
          rpc::Status s = stream->Finish();
          if (!s.ok())
            std::fprintf(stderr, "(c) finish: %s\n", s.error_message().c_str());
          return s.ok();
        });
    if (!ok) return 1;
  }
  return 0;
}
