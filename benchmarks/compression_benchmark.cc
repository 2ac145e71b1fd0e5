// Message compression codecs the RPC layer will offer (gzip/deflate via zlib,
// zstd), on protobuf-like payloads of typical gRPC message sizes. Establishes
// the baseline cost per message that the compression threshold of the rpc layer
// trades against.
#include <zlib.h>
#include <zstd.h>

#include <cstdint>
#include <random>
#include <string>

#include "benchmark/benchmark.h"

namespace {

// Half repetitive field text, half random bytes: roughly what a serialized
// message with string fields and packed numbers looks like to a compressor.
std::string Payload(size_t size) {
  std::string out;
  out.reserve(size + 64);
  std::mt19937 rng(1);
  static const char* kWords[] = {"feature", "latitude", "longitude", "name",
                                 "route",   "point",    "location",  "note"};
  while (out.size() < size) {
    out += kWords[rng() % 8];
    for (int i = 0; i < 6; ++i) out.push_back(static_cast<char>(rng()));
  }
  out.resize(size);
  return out;
}

void BM_ZlibDeflate(benchmark::State& state) {
  const std::string input = Payload(state.range(0));
  std::string out(compressBound(input.size()), '\0');
  // One stream reset per message, as a call's context would be reused.
  z_stream z = {};
  deflateInit2(&z, Z_DEFAULT_COMPRESSION, Z_DEFLATED, 15 + 16, 8,
               Z_DEFAULT_STRATEGY);  // gzip framing, as grpc-encoding: gzip.
  size_t compressed = 0;
  for (auto _ : state) {
    deflateReset(&z);
    z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(input.data()));
    z.avail_in = input.size();
    z.next_out = reinterpret_cast<Bytef*>(out.data());
    z.avail_out = out.size();
    if (deflate(&z, Z_FINISH) != Z_STREAM_END) {
      state.SkipWithError("deflate failed");
      break;
    }
    compressed = z.total_out;
    benchmark::DoNotOptimize(out.data());
  }
  deflateEnd(&z);
  state.SetBytesProcessed(state.iterations() * input.size());
  state.counters["ratio"] = static_cast<double>(compressed) / input.size();
}
BENCHMARK(BM_ZlibDeflate)->Arg(1 << 10)->Arg(64 << 10);

void BM_ZlibInflate(benchmark::State& state) {
  const std::string input = Payload(state.range(0));
  std::string compressed(compressBound(input.size()), '\0');
  uLongf len = compressed.size();
  compress2(reinterpret_cast<Bytef*>(compressed.data()), &len,
            reinterpret_cast<const Bytef*>(input.data()), input.size(),
            Z_DEFAULT_COMPRESSION);
  compressed.resize(len);
  std::string out(input.size(), '\0');
  for (auto _ : state) {
    uLongf out_len = out.size();
    if (uncompress(reinterpret_cast<Bytef*>(out.data()), &out_len,
                   reinterpret_cast<const Bytef*>(compressed.data()),
                   compressed.size()) != Z_OK) {
      state.SkipWithError("inflate failed");
      break;
    }
    benchmark::DoNotOptimize(out.data());
  }
  state.SetBytesProcessed(state.iterations() * input.size());
}
BENCHMARK(BM_ZlibInflate)->Arg(1 << 10)->Arg(64 << 10);

void BM_ZstdCompress(benchmark::State& state) {
  const std::string input = Payload(state.range(0));
  std::string out(ZSTD_compressBound(input.size()), '\0');
  ZSTD_CCtx* cctx =
      ZSTD_createCCtx();  // Reused, as a stream's context would be.
  size_t compressed = 0;
  for (auto _ : state) {
    compressed = ZSTD_compressCCtx(cctx, out.data(), out.size(), input.data(),
                                   input.size(), 3);
    benchmark::DoNotOptimize(out.data());
  }
  ZSTD_freeCCtx(cctx);
  state.SetBytesProcessed(state.iterations() * input.size());
  state.counters["ratio"] = static_cast<double>(compressed) / input.size();
}
BENCHMARK(BM_ZstdCompress)->Arg(1 << 10)->Arg(64 << 10);

void BM_ZstdDecompress(benchmark::State& state) {
  const std::string input = Payload(state.range(0));
  std::string compressed(ZSTD_compressBound(input.size()), '\0');
  compressed.resize(ZSTD_compress(compressed.data(), compressed.size(),
                                  input.data(), input.size(), 3));
  std::string out(input.size(), '\0');
  ZSTD_DCtx* dctx = ZSTD_createDCtx();
  for (auto _ : state) {
    size_t n = ZSTD_decompressDCtx(dctx, out.data(), out.size(),
                                   compressed.data(), compressed.size());
    if (ZSTD_isError(n)) {
      state.SkipWithError("decompress failed");
      break;
    }
    benchmark::DoNotOptimize(out.data());
  }
  ZSTD_freeDCtx(dctx);
  state.SetBytesProcessed(state.iterations() * input.size());
}
BENCHMARK(BM_ZstdDecompress)->Arg(1 << 10)->Arg(64 << 10);

}  // namespace
