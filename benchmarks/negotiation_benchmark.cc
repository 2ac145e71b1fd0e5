// accept-encoding negotiation (//rpc/compression): the Negotiator's fast path
// on the values real clients send, the parser on the same values and on one
// with weights, no header at all; and the message codecs on a 64 KiB
// protobuf-like message. See benchmarks/README.md for the table.
//
// gRPC C++'s gzip beside ours needs a compressed call through gRPC C++ (its
// message compression is internal to gRPC core): it lands with the rpc layer
// (issue 5), as a unary call with gzip on both stacks.

#include <optional>
#include <random>
#include <string>
#include <string_view>

#include "benchmark/benchmark.h"
#include "rpc/compression/accept_encoding.h"
#include "rpc/compression/codec.h"
#include "rpc/compression/encoding.h"
#include "rpc/compression/negotiator.h"

namespace rpc::compression {
namespace {

struct Client {
  const char* name;  // Benchmark names may not contain spaces.
  std::string_view value;
};

// One row per kFastPathValues entry, named after who sends it.
const Client kClients[] = {
    {"grpc_cpp", "identity, deflate, gzip"},
    {"grpc_js", "identity,deflate,gzip"},
    {"grpc_dotnet", "identity,gzip"},
    {"gzip", "gzip"},
    {"identity", "identity"},
    {"chrome", "gzip, deflate, br, zstd"},
    {"safari", "gzip, deflate, br"},
    {"requests", "gzip, deflate"},
    {"curl", "deflate, gzip, br, zstd"},
    {"curl_plain", "deflate, gzip"},
    {"apache_httpclient", "gzip,deflate"},
};
static_assert(std::size(kClients) == kNumFastPathValues);

constexpr std::string_view kWeighted = "gzip;q=0.8, deflate;q=0.5, br";

// Each timed body is a noinline function, so callgrind can count one call
// (benchmarks/README.md); the call itself is part of what is timed.
[[gnu::noinline]] std::optional<Encoding> TimedFast(const Negotiator& n,
                                                    std::string_view v) {
  return n.Negotiate(v);
}

[[gnu::noinline]] std::optional<Encoding> TimedNoHeader(
    const Negotiator& n, std::optional<std::string_view> header) {
  return header.has_value() ? n.Negotiate(*header) : n.Negotiate(std::nullopt);
}

[[gnu::noinline]] std::optional<Encoding> TimedParser(std::string_view v) {
  return Negotiate(v, kDefaultPreference);
}

void BM_NegotiateFast(benchmark::State& state, std::string_view value) {
  if (!Negotiator::InFastPath(value)) state.SkipWithError("not in the table");
  const std::string header(value);  // As the header list would hold it.
  for (auto _ : state) {
    std::string_view v = header;
    benchmark::DoNotOptimize(v);  // Opaque per iteration: no hoisting.
    std::optional<Encoding> e = TimedFast(kDefaultNegotiator, v);
    benchmark::DoNotOptimize(e);
  }
}

// A custom configuration: its table was built by the parser at start-up.
void BM_NegotiateFastCustom(benchmark::State& state) {
  static const Negotiator negotiator(
      Preference{Encoding::kGzip, Encoding::kDeflate});
  const std::string header = "identity, deflate, gzip";
  for (auto _ : state) {
    std::string_view v = header;
    benchmark::DoNotOptimize(v);
    std::optional<Encoding> e = TimedFast(negotiator, v);
    benchmark::DoNotOptimize(e);
  }
}
BENCHMARK(BM_NegotiateFastCustom);

// A value the table does not hold: the Negotiator falls through to the parser.
void BM_NegotiateWeighted(benchmark::State& state) {
  const std::string header(kWeighted);
  for (auto _ : state) {
    std::string_view v = header;
    benchmark::DoNotOptimize(v);
    std::optional<Encoding> e = TimedFast(kDefaultNegotiator, v);
    benchmark::DoNotOptimize(e);
  }
}
BENCHMARK(BM_NegotiateWeighted);

// No header: the caller's lookup found nothing.
void BM_NegotiateNoHeader(benchmark::State& state) {
  for (auto _ : state) {
    std::optional<std::string_view> header;
    benchmark::DoNotOptimize(header);
    std::optional<Encoding> e = TimedNoHeader(kDefaultNegotiator, header);
    benchmark::DoNotOptimize(e);
  }
}
BENCHMARK(BM_NegotiateNoHeader);

// The parser alone (what every value would cost without the table).
void BM_Parser(benchmark::State& state, std::string_view value) {
  const std::string header(value);
  for (auto _ : state) {
    std::string_view v = header;
    benchmark::DoNotOptimize(v);
    std::optional<Encoding> e = TimedParser(v);
    benchmark::DoNotOptimize(e);
  }
}

const int kRegistered = [] {
  for (const Client& c : kClients) {
    benchmark::RegisterBenchmark(
        (std::string("BM_NegotiateFast/") + c.name).c_str(), BM_NegotiateFast,
        c.value);
  }
  benchmark::RegisterBenchmark("BM_Parser/weighted", BM_Parser, kWeighted);
  for (const Client& c : kClients) {
    benchmark::RegisterBenchmark((std::string("BM_Parser/") + c.name).c_str(),
                                 BM_Parser, c.value);
  }
  return 0;
}();

// Half repeated field text, half random octets (as compression_benchmark).
std::string Payload(size_t size) {
  static const char* kWords[] = {"feature", "latitude", "longitude", "name",
                                 "route",   "point",    "location",  "note"};
  std::mt19937 rng(1);
  std::string out;
  while (out.size() < size) {
    out += kWords[rng() % 8];
    for (int i = 0; i < 6; ++i) out.push_back(static_cast<char>(rng()));
  }
  out.resize(size);
  return out;
}

constexpr size_t kMessageSize = 64 << 10;

// Compress: MB/s of message in (bytes_per_second) and of compressed octets out.
void BM_Compress(benchmark::State& state, Encoding encoding) {
  const std::string message = Payload(kMessageSize);
  Compressor compressor(encoding);  // Reused, as a stream reuses it.
  std::string out;
  for (auto _ : state) {
    out.clear();
    if (!compressor.Compress(message, &out).ok()) {
      state.SkipWithError("compress failed");
      break;
    }
    benchmark::DoNotOptimize(out.data());
  }
  state.SetBytesProcessed(state.iterations() * message.size());
  state.counters["out_per_second"] = benchmark::Counter(
      static_cast<double>(state.iterations() * out.size()),
      benchmark::Counter::kIsRate, benchmark::Counter::kIs1024);
  state.counters["ratio"] = static_cast<double>(out.size()) / message.size();
}

// Decompress: MB/s of compressed octets in and of message out
// (bytes_per_second).
void BM_Decompress(benchmark::State& state, Encoding encoding) {
  const std::string message = Payload(kMessageSize);
  std::string compressed;
  Compressor(encoding).Compress(message, &compressed).IgnoreError();
  Decompressor decompressor(encoding);
  std::string out;
  for (auto _ : state) {
    out.clear();
    if (!decompressor.Decompress(compressed, 4 << 20, &out).ok()) {
      state.SkipWithError("decompress failed");
      break;
    }
    benchmark::DoNotOptimize(out.data());
  }
  state.SetBytesProcessed(state.iterations() * message.size());
  state.counters["in_per_second"] = benchmark::Counter(
      static_cast<double>(state.iterations() * compressed.size()),
      benchmark::Counter::kIsRate, benchmark::Counter::kIs1024);
  state.counters["ratio"] =
      static_cast<double>(compressed.size()) / message.size();
}

BENCHMARK_CAPTURE(BM_Compress, gzip, Encoding::kGzip);
BENCHMARK_CAPTURE(BM_Compress, deflate, Encoding::kDeflate);
BENCHMARK_CAPTURE(BM_Compress, zstd, Encoding::kZstd);
BENCHMARK_CAPTURE(BM_Decompress, gzip, Encoding::kGzip);
BENCHMARK_CAPTURE(BM_Decompress, deflate, Encoding::kDeflate);
BENCHMARK_CAPTURE(BM_Decompress, zstd, Encoding::kZstd);

}  // namespace
}  // namespace rpc::compression
