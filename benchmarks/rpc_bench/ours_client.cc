// The client of //benchmarks:rpc_benchmark on our rpc stack: runs workloads
// (a) sequential unary, (b) `--concurrency` async unary calls outstanding on
// one channel, (c) one bidi stream at 1 KiB and 64 KiB against the server at
// 127.0.0.1:--port, printing RESULT lines (bench_util.h); with
// --phase=identity or --phase=compressed, (d) sequential unary calls with a
// 100-byte payload, identity or gzip, and (compressed) (e) one bidi stream of
// 64 KiB compressible messages in gzip, deflate and zstd; with --phase=sweep,
// the concurrency sweep (--sweep calls in flight over each of
// --sweep_channels channels). --api=callback: (a) as a chain of one
// stub->async() call at a time, (c) through a ClientBidiReactor.
// --busy_poll_us=N: the channel busy-polls up to N us
// (ChannelArguments::busy_poll).

#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "absl/time/clock.h"
#include "benchmarks/rpc_bench/bench_util.h"
#include "benchmarks/rpc_bench/echo.rpc.pb.h"
#include "benchmarks/rpc_bench/reactors.h"
#include "rpc/compression/codec.h"
#include "rpc/rpc.h"

namespace {

using rpcbench::EchoMessage;

using Stub = rpcbench::Echo::Stub;

// The spin mode of issue 14 (--busy_poll_us: after work the channel's loop
// polls its sockets up to that long before it sleeps;
// ChannelArguments::busy_poll, "h2rpc.busy_poll_us").
void ApplyBusyPoll(const rpcbench::Flags& flags, rpc::ChannelArguments* args) {
  if (flags.busy_poll_us > 0) {
    args->busy_poll = absl::Microseconds(flags.busy_poll_us);
  }
}

// RunAsyncChains (bench_util.h) on this stack.
bool RunAsyncChains(const rpcbench::Flags& flags, const std::string& prefix,
                    const std::vector<Stub*>& stubs, int in_flight) {
  return rpcbench::RunAsyncChains<rpc::ClientContext, rpc::Status, EchoMessage>(
      flags, prefix, stubs, in_flight, [](rpc::ClientContext* c) {
        c->set_deadline(absl::Now() + absl::Seconds(30));
      });
}

std::shared_ptr<rpc::Channel> NewChannel(const rpcbench::Flags& flags) {
  rpc::ChannelArguments args;
  ApplyBusyPoll(flags, &args);
  return rpc::CreateCustomChannel("127.0.0.1:" + std::to_string(flags.port),
                                  rpc::InsecureChannelCredentials(), args);
}

// The sweep (bench_util.h), each channel its own connection.
int RunSweep(const rpcbench::Flags& flags) {
  return rpcbench::RunSweep(
      flags, [&](int) { return rpcbench::Echo::NewStub(NewChannel(flags)); },
      [&](const std::string& prefix, const std::vector<Stub*>& stubs, int n) {
        return RunAsyncChains(flags, prefix, stubs, n);
      });
}

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

using StreamClient =
    rpcbench::StreamEchoClient<rpc::ClientBidiReactor<EchoMessage, EchoMessage>,
                               EchoMessage, rpc::Status>;

}  // namespace

int main(int argc, char** argv) {
  const rpcbench::Flags flags = rpcbench::ParseFlags(argc, argv);
  if (flags.phase == "sweep") return RunSweep(flags);
  auto stub = rpcbench::Echo::NewStub(NewChannel(flags));
  const auto deadline = [] { return absl::Now() + absl::Seconds(30); };
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
      rpc::ClientContext ctx;
      ctx.set_deadline(deadline());
      EchoMessage resp;
      rpc::Status s = stub->Unary(&ctx, empty, &resp);
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
      !rpcbench::RunStreams<rpc::ClientContext, EchoMessage, StreamClient>(
          flags, stub.get(), [](rpc::ClientContext* c, double seconds) {
            c->set_deadline(absl::Now() + absl::Seconds(seconds));
          })) {
    return 1;
  }
  return 0;
}
