// The HTTP/2 frame layer (//transport frame codec), alone and with //hpack on a
// gRPC call's request metadata.
//
//  * ParseFrameHeader: the 9-octet header, fast (one 64-bit load) vs octet
//    by octet.
//  * ParsePreface: the 24-octet client preface through the decoder, in one
//    input (three 64-bit compares) vs split in two (octet path).
//  * ParseSettings: a 6-entry SETTINGS frame decoded and applied to
//    Http2Settings.
//  * GenerateDataFrame / ParseDataFrame: a 16 KiB DATA frame written (payload
//    appended as a slice) and decoded (payload sliced from the input: bytes/s
//    far above memcpy speed shows nothing was copied); ParseDataFrame/split
//    feeds it as 4 KiB reads.
//  * GenerateHeadersFrameSteadyState: hpack::Encoder on the gRPC request
//    (warm table) plus WriteHeaders into the output chain.
//  * ParseHeadersFrameCold / SteadyState: FrameDecoder plus hpack::Decoder
//    into a HeaderList: a new connection's first request (fresh decoder,
//    literal fields) and a warm connection's (every field indexed).
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "benchmark/benchmark.h"
#include "hpack/decoder.h"
#include "hpack/encoder.h"
#include "hpack/header_list.h"
#include "transport/frame/frame.h"
#include "transport/frame/frame_decoder.h"
#include "transport/frame/frame_writer.h"
#include "transport/frame/settings.h"
#include "transport/slice/slice.h"

namespace transport {
namespace {

[[noreturn]] void Die(const char* what) {
  std::fprintf(stderr, "frame_benchmark: %s\n", what);
  std::abort();
}

// gRPC C++ calling a unary method (the same fixture as hpack_benchmark).
const std::vector<hpack::HeaderField>& GrpcRequest() {
  static const auto* fields = new std::vector<hpack::HeaderField>{
      {":method", "POST"},
      {":scheme", "http"},
      {":path", "/package.Service/Method"},
      {":authority", "backend.internal:50051"},
      {"te", "trailers"},
      {"content-type", "application/grpc"},
      {"grpc-accept-encoding", "identity,deflate,gzip"},
      {"grpc-timeout", "1S"},
      {"user-agent", "grpc-c++/1.51.1 grpc-c/29.0.0 (linux; chttp2)"},
  };
  return *fields;
}

// A listener that does the least a Connection would: keeps DATA slices, applies
// SETTINGS, decodes a complete header block with HPACK.
class BenchListener : public FrameListener {
 public:
  hpack::Decoder* hpack = nullptr;
  hpack::HeaderList fields;
  SliceBuffer data;
  Http2Settings settings;
  uint64_t frames = 0;

  void OnDataStart(const FrameHeader&) override {}
  void OnData(uint32_t, Slice piece) override { data.Append(std::move(piece)); }
  void OnDataEnd(uint32_t, bool) override { ++frames; }
  void OnHeaders(const FrameHeader&, const PriorityFields*,
                 std::string_view fragment) override {
    ++frames;
    if (hpack == nullptr) return;
    const hpack::DecodeError e = hpack->Decode(fragment, &fields);
    if (e != hpack::DecodeError::kOk) Die(hpack::DecodeErrorName(e));
  }
  void OnRstStream(uint32_t, Http2ErrorCode) override { ++frames; }
  void OnSettings(SettingsView view) override {
    ++frames;
    if (!settings.ApplyAll(view).ok()) Die("settings");
  }
  void OnSettingsAck() override { ++frames; }
  void OnPushPromise(const FrameHeader&, uint32_t, std::string_view) override {
    ++frames;
  }
  void OnPing(uint64_t, bool) override { ++frames; }
  void OnGoAway(uint32_t, Http2ErrorCode, std::string_view) override {
    ++frames;
  }
  void OnWindowUpdate(uint32_t, uint32_t) override { ++frames; }
  void OnContinuation(const FrameHeader&, std::string_view) override {
    ++frames;
  }
  void OnStreamError(const Http2Error&, FrameDecodeError) override {
    Die("stream error");
  }
};

void Check(const Http2Error& e) {
  if (!e.ok()) Die(e.ToString().c_str());
}

std::vector<uint8_t> HeaderBytes() {
  std::vector<uint8_t> bytes(1024 * kFrameHeaderSize);
  uint32_t x = 12345;
  for (uint8_t& b : bytes) {
    x = x * 1103515245 + 12345;
    b = static_cast<uint8_t>(x >> 16);
  }
  return bytes;
}

// Each timed body is a noinline Timed* function, so callgrind can count the
// instructions of one iteration without the harness (see benchmarks/README.md).

// 1024 different headers; the fields are folded into a sum so the parse cannot
// be skipped.
[[gnu::noinline]] uint64_t TimedParseHeadersFast(const uint8_t* bytes) {
  uint64_t sum = 0;
  for (size_t i = 0; i < 1024; ++i) {
    const FrameHeader h = ParseFrameHeaderFast(bytes + i * kFrameHeaderSize);
    sum += h.length + h.type + h.flags + h.stream_id;
  }
  return sum;
}
[[gnu::noinline]] uint64_t TimedParseHeadersOctets(const uint8_t* bytes) {
  uint64_t sum = 0;
  for (size_t i = 0; i < 1024; ++i) {
    const FrameHeader h = ParseFrameHeader(bytes + i * kFrameHeaderSize);
    sum += h.length + h.type + h.flags + h.stream_id;
  }
  return sum;
}

void BM_ParseFrameHeader(benchmark::State& state) {
  const std::vector<uint8_t> bytes = HeaderBytes();
  const bool fast = state.range(0) != 0;
  for (auto _ : state) {
    benchmark::DoNotOptimize(fast ? TimedParseHeadersFast(bytes.data())
                                  : TimedParseHeadersOctets(bytes.data()));
  }
  state.SetItemsProcessed(state.iterations() * 1024);
  state.SetLabel(fast ? "64-bit load, per 1024" : "octets, per 1024");
}
BENCHMARK(BM_ParseFrameHeader)->Arg(1)->Arg(0);

// A server's decoder meets the preface: in one input (three 64-bit compares) or
// split in two (the octet path).
[[gnu::noinline]] bool TimedParsePreface(FrameListener* listener,
                                         const Slice& preface, bool split) {
  FrameDecoder::Options options;
  options.expect_client_preface = true;
  FrameDecoder decoder(listener, options);
  if (split) {
    Check(decoder.Decode(preface.Sub(0, 12)));
    Check(decoder.Decode(preface.Sub(12, 12)));
  } else {
    Check(decoder.Decode(preface));
  }
  return decoder.at_frame_boundary();
}

void BM_ParsePreface(benchmark::State& state) {
  const Slice preface = Slice::FromStatic(kClientPreface);
  const bool split = state.range(0) != 0;
  BenchListener listener;
  for (auto _ : state) {
    benchmark::DoNotOptimize(TimedParsePreface(&listener, preface, split));
  }
  state.SetItemsProcessed(state.iterations());
  state.SetLabel(split ? "split: octets" : "one input: 64-bit words");
}
BENCHMARK(BM_ParsePreface)->Arg(0)->Arg(1);

// A 6-entry SETTINGS frame decoded, validated and applied to Http2Settings.
[[gnu::noinline]] void TimedParseSettings(FrameDecoder* decoder,
                                          const Slice& frame) {
  Check(decoder->Decode(frame));
}

void BM_ParseSettings(benchmark::State& state) {
  SliceBuffer out;
  WriteSettings({{SettingId::kHeaderTableSize, 8192},
                 {SettingId::kEnablePush, 0},
                 {SettingId::kMaxConcurrentStreams, 100},
                 {SettingId::kInitialWindowSize, 1 << 20},
                 {SettingId::kMaxFrameSize, 1 << 20},
                 {SettingId::kMaxHeaderListSize, 16384}},
                &out);
  const Slice frame = out.CopyToNewBlock();
  BenchListener listener;
  FrameDecoder decoder(&listener);
  for (auto _ : state) TimedParseSettings(&decoder, frame);
  if (listener.settings.max_concurrent_streams != 100) Die("not applied");
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_ParseSettings);

// A DATA frame for a 16 KiB message: header written, message appended as a
// slice; then the chain is consumed as a writev that sent everything would.
[[gnu::noinline]] void TimedGenerateDataFrame(const Slice& message,
                                              SliceBuffer* out) {
  WriteData(1, message, false, out);
  out->TrimFront(out->size());
}

void BM_GenerateDataFrame(benchmark::State& state) {
  const Slice message = Slice::Copy(std::string(state.range(0), 'm'));
  SliceBuffer out;
  for (auto _ : state) TimedGenerateDataFrame(message, &out);
  state.SetBytesProcessed(state.iterations() * message.size());
}
BENCHMARK(BM_GenerateDataFrame)->Arg(16 << 10);

// A 16 KiB DATA frame decoded from one input (arg 0) or from 4 KiB reads; the
// listener keeps the payload slices in a SliceBuffer, as a stream would.
[[gnu::noinline]] void TimedParseDataFrame(FrameDecoder* decoder,
                                           BenchListener* listener,
                                           const Slice& frame, size_t piece) {
  for (size_t at = 0; at < frame.size(); at += piece) {
    Check(decoder->Decode(frame.Sub(at, std::min(piece, frame.size() - at))));
  }
  listener->data.Clear();
}

void BM_ParseDataFrame(benchmark::State& state) {
  const size_t kPayload = 16 << 10;
  SliceBuffer out;
  WriteData(1, Slice::Copy(std::string(kPayload, 'd')), false, &out);
  const Slice frame = out.CopyToNewBlock();
  const size_t piece = state.range(0) == 0 ? frame.size() : state.range(0);
  BenchListener listener;
  FrameDecoder decoder(&listener);
  for (auto _ : state) TimedParseDataFrame(&decoder, &listener, frame, piece);
  if (listener.frames != static_cast<uint64_t>(state.iterations())) {
    Die("frames");
  }
  state.SetBytesProcessed(state.iterations() * kPayload);
  state.SetLabel(state.range(0) == 0 ? "one input" : "4 KiB reads");
}
BENCHMARK(BM_ParseDataFrame)->Arg(0)->Arg(4096);

// The gRPC request's HEADERS on a warm connection: the HPACK block (every field
// indexed) and the frame appended to the output chain (arg 1), or the HPACK
// encode alone (arg 0): the difference is the frame layer's share.
[[gnu::noinline]] size_t TimedGenerateHeaders(hpack::Encoder* encoder,
                                              SliceBuffer* out) {
  WriteHeaders(1, encoder->EncodeBlock(GrpcRequest()), false,
               kDefaultMaxFrameSize, out);
  const size_t n = out->size();
  out->TrimFront(n);
  return n;
}
[[gnu::noinline]] size_t TimedEncodeOnly(hpack::Encoder* encoder) {
  return encoder->EncodeBlock(GrpcRequest()).size();
}

void BM_GenerateHeadersFrameSteadyState(benchmark::State& state) {
  const bool with_frame = state.range(0) != 0;
  hpack::Encoder encoder;
  encoder.EncodeBlock(GrpcRequest());  // Warm: every field is in the table now.
  SliceBuffer out;
  size_t octets = 0;
  for (auto _ : state) {
    octets = with_frame ? TimedGenerateHeaders(&encoder, &out)
                        : TimedEncodeOnly(&encoder);
  }
  state.SetItemsProcessed(state.iterations());
  state.counters["octets"] = static_cast<double>(octets);
  state.SetLabel(with_frame ? "hpack + frame" : "hpack only");
}
BENCHMARK(BM_GenerateHeadersFrameSteadyState)->Arg(1)->Arg(0);

// A HEADERS frame carrying the block `encoder` produces next.
Slice HeadersFrameBytes(hpack::Encoder* encoder) {
  SliceBuffer out;
  WriteHeaders(1, encoder->EncodeBlock(GrpcRequest()), false,
               kDefaultMaxFrameSize, &out);
  return out.CopyToNewBlock();
}

// A new connection's first request: fresh frame and HPACK decoders and header
// list, the block all literals.
[[gnu::noinline]] size_t TimedParseHeadersCold(const Slice& frame) {
  hpack::Decoder hpack_decoder;
  BenchListener listener;
  listener.hpack = &hpack_decoder;
  FrameDecoder decoder(&listener);
  Check(decoder.Decode(frame));
  return listener.fields.size();
}

void BM_ParseHeadersFrameCold(benchmark::State& state) {
  hpack::Encoder encoder;
  const Slice frame = HeadersFrameBytes(&encoder);
  for (auto _ : state) {
    if (TimedParseHeadersCold(frame) != GrpcRequest().size()) Die("fields");
  }
  state.SetItemsProcessed(state.iterations());
  state.counters["octets"] = static_cast<double>(frame.size());
}
BENCHMARK(BM_ParseHeadersFrameCold);

// A warm connection's request: the frame decoder and hpack::Decoder into the
// reused header list (arg 1), or hpack::Decoder alone on the block (arg 0).
[[gnu::noinline]] void TimedParseHeadersSteady(FrameDecoder* decoder,
                                               const Slice& frame) {
  Check(decoder->Decode(frame));
}
[[gnu::noinline]] void TimedDecodeOnly(hpack::Decoder* decoder,
                                       std::string_view block,
                                       hpack::HeaderList* fields) {
  if (decoder->Decode(block, fields) != hpack::DecodeError::kOk) Die("hpack");
}

void BM_ParseHeadersFrameSteadyState(benchmark::State& state) {
  const bool with_frame = state.range(0) != 0;
  hpack::Encoder encoder;
  const Slice first = HeadersFrameBytes(&encoder);
  const Slice steady = HeadersFrameBytes(&encoder);  // Every field indexed.
  // END_HEADERS and no padding: the block is the payload.
  const std::string_view block = steady.view().substr(kFrameHeaderSize);
  hpack::Decoder hpack_decoder;
  BenchListener listener;
  listener.hpack = &hpack_decoder;
  FrameDecoder decoder(&listener);
  Check(decoder.Decode(first));
  for (auto _ : state) {
    if (with_frame) {
      TimedParseHeadersSteady(&decoder, steady);
    } else {
      TimedDecodeOnly(&hpack_decoder, block, &listener.fields);
    }
  }
  if (listener.fields.size() != GrpcRequest().size()) Die("fields");
  state.SetItemsProcessed(state.iterations());
  state.counters["octets"] =
      static_cast<double>(with_frame ? steady.size() : block.size());
  state.SetLabel(with_frame ? "frame + hpack" : "hpack only");
}
BENCHMARK(BM_ParseHeadersFrameSteadyState)->Arg(1)->Arg(0);

}  // namespace
}  // namespace transport
