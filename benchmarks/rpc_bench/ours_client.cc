// The client of //benchmarks:rpc_benchmark on our rpc stack: runs workloads
// (a) sequential unary, (b) `--concurrency` async unary calls outstanding on
// one channel, (c) one bidi stream at 1 KiB and 64 KiB against the server at
// 127.0.0.1:--port, printing RESULT lines (bench_util.h).

#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "absl/time/clock.h"
#include "benchmarks/rpc_bench/bench_util.h"
#include "benchmarks/rpc_bench/echo.rpc.pb.h"
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

}  // namespace

int main(int argc, char** argv) {
  const rpcbench::Flags flags = rpcbench::ParseFlags(argc, argv);
  std::shared_ptr<rpc::Channel> channel =
      rpc::CreateChannel("127.0.0.1:" + std::to_string(flags.port),
                         rpc::InsecureChannelCredentials());
  auto stub = rpcbench::Echo::NewStub(channel);
  const auto deadline = [] { return absl::Now() + absl::Seconds(30); };

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
