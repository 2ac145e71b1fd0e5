// HPACK: our codec (//hpack) against nghttp2's (libnghttp2's hd deflater and
// inflater) on the same fixtures, in the same binary: every paired benchmark is
// registered as <Name>/ours and <Name>/nghttp2. Results and their reading:
// README.md.
//
// Fixtures: a Chrome navigation request, a typical HTML response, a gRPC call's
// request metadata.
//
// Both sides do the same work:
//  * Encode: fields in, one header block out in a caller-visible buffer. Ours
//    appends the block to a reused std::string (so the copy a transport makes
//    from the encoder's buffer is counted); nghttp2 deflates into a reused
//    buffer sized once with nghttp2_hd_deflate_bound.
//  * Decode: a block in, every field out in a reused hpack::HeaderList. Ours
//    decodes straight into it; for nghttp2 each field nghttp2_hd_inflate_hd2
//    emits is appended, as an on_header_callback would store it.
//  * Both decoders decode the same octets: the blocks our encoder produces
//    (checked at start-up to decode to the fixture on both sides).
//  * Cold: a fresh context per block, constructed and destroyed inside the
//    timed loop on both sides (nghttp2_hd_{de,in}flate_new and _del;
//    hpack::Encoder and hpack::Decoder).
//  * Steady state: a context warmed by the same sequence on both sides.
//    Encode: the same fields again after one warm-up block. Decode: the second
//    block a warmed encoder produces (all indexed), after the decoder decoded
//    the first; decoding an all-indexed block leaves the table as it is, so
//    every iteration sees the same state.
//
// Counters: "bytes" is the header block's size (what each encoder produced; for
// decode the block decoded). Each timed body is a noinline function named after
// the benchmark, so `valgrind --tool=callgrind --toggle-collect=...` can count
// its instructions alone (README.md).

#include <nghttp2/nghttp2.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "benchmark/benchmark.h"
#include "hpack/decode_error.h"
#include "hpack/decoder.h"
#include "hpack/encoder.h"
#include "hpack/field_validation.h"
#include "hpack/header_list.h"
#include "hpack/huffman/huffman.h"

namespace {

using Fields = std::vector<std::pair<std::string, std::string>>;

// 100 octets, as a returning visitor's first-party cookies.
constexpr std::string_view kCookie =
    "_ga=GA1.1.1954211042.1732957810; "
    "NID=519=Xk2Lq9vR7mTzY4pW8sB3nH6cF1dJ0aE5gK; "
    "_gid=GA1.1.817263541.17";
static_assert(kCookie.size() == 100, "the fixture's cookie is 100 octets");

// Chrome 131 on Linux navigating to a search result page, headers in the order
// Chrome sends them.
const Fields kChromeRequest = {
    {":method", "GET"},
    {":authority", "www.example.com"},
    {":scheme", "https"},
    {":path",
     "/search?q=hpack+header+compression&hl=en&source=hp&ei=Zx1kZ4CwAZ"},
    {"sec-ch-ua",
     "\"Google Chrome\";v=\"131\", \"Chromium\";v=\"131\", "
     "\"Not_A Brand\";v=\"24\""},
    {"sec-ch-ua-mobile", "?0"},
    {"sec-ch-ua-platform", "\"Linux\""},
    {"upgrade-insecure-requests", "1"},
    {"user-agent",
     "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) "
     "Chrome/131.0.0.0 Safari/537.36"},
    {"accept",
     "text/html,application/xhtml+xml,application/xml;q=0.9,image/"
     "avif,image/webp,"
     "image/apng,*/*;q=0.8,application/signed-exchange;v=b3;q=0.7"},
    {"sec-fetch-site", "same-origin"},
    {"sec-fetch-mode", "navigate"},
    {"sec-fetch-user", "?1"},
    {"sec-fetch-dest", "document"},
    {"referer", "https://www.example.com/"},
    {"accept-encoding", "gzip, deflate, br, zstd"},
    {"accept-language", "en-US,en;q=0.9"},
    {"cookie", std::string(kCookie)},
    {"priority", "u=0, i"},
};

// The response to it: an HTML page from nginx behind a CDN.
const Fields kHtmlResponse = {
    {":status", "200"},
    {"date", "Mon, 30 Nov 2026 12:00:00 GMT"},
    {"content-type", "text/html; charset=utf-8"},
    {"content-length", "48213"},
    {"cache-control", "private, max-age=0"},
    {"expires", "-1"},
    {"server", "nginx"},
    {"content-encoding", "br"},
    {"vary", "Accept-Encoding"},
    {"set-cookie",
     "session=8f14e45fceea167a5a36dedd4bea2543; Path=/; "
     "Expires=Tue, 30 Dec 2026 "
     "12:00:00 GMT; Secure; HttpOnly; SameSite=Lax"},
    {"strict-transport-security", "max-age=31536000; includeSubDomains"},
    {"x-content-type-options", "nosniff"},
    {"x-frame-options", "SAMEORIGIN"},
    {"alt-svc", "h3=\":443\"; ma=86400"},
};

// gRPC C++ 1.51 calling a unary method.
const Fields kGrpcRequest = {
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

[[noreturn]] void Die(const char* what) {
  std::fprintf(stderr, "hpack_benchmark: %s\n", what);
  std::abort();
}

// A fixture in both libraries' input forms (views into the Fields above).
struct Fixture {
  explicit Fixture(const Fields& f) : fields(f) {
    for (const auto& [name, value] : fields) {
      ours.push_back(hpack::HeaderField{name, value});
      nva.push_back(nghttp2_nv{
          reinterpret_cast<uint8_t*>(const_cast<char*>(name.data())),
          reinterpret_cast<uint8_t*>(const_cast<char*>(value.data())),
          name.size(), value.size(), NGHTTP2_NV_FLAG_NONE});
    }
  }
  const Fields& fields;
  std::vector<hpack::HeaderField> ours;
  std::vector<nghttp2_nv> nva;
};

const Fixture& Request() {
  static const Fixture* f = new Fixture(kChromeRequest);
  return *f;
}
const Fixture& Response() {
  static const Fixture* f = new Fixture(kHtmlResponse);
  return *f;
}
const Fixture& Grpc() {
  static const Fixture* f = new Fixture(kGrpcRequest);
  return *f;
}

// -----------------------------------------------------------------------------
// The timed bodies.

__attribute__((noinline)) void OursEncodeCold(const Fixture& f,
                                              std::string* out) {
  hpack::Encoder encoder;
  out->clear();
  encoder.AppendBlock(f.ours, out);
}

__attribute__((noinline)) void OursEncodeSteady(hpack::Encoder* encoder,
                                                const Fixture& f,
                                                std::string* out) {
  out->clear();
  encoder->AppendBlock(f.ours, out);
}

__attribute__((noinline)) hpack::DecodeError OursDecodeCold(
    std::string_view block, hpack::HeaderList* list) {
  hpack::Decoder decoder;
  return decoder.Decode(block, list);
}

__attribute__((noinline)) hpack::DecodeError OursDecodeSteady(
    hpack::Decoder* decoder, std::string_view block, hpack::HeaderList* list) {
  return decoder->Decode(block, list);
}

// nghttp2_hd_deflate_hd into *out (sized by the caller): the block's size, or
// a negative error.
ssize_t Deflate(nghttp2_hd_deflater* deflater, const Fixture& f,
                std::vector<uint8_t>* out) {
  return nghttp2_hd_deflate_hd(deflater, out->data(), out->size(), f.nva.data(),
                               f.nva.size());
}

__attribute__((noinline)) ssize_t Nghttp2EncodeCold(const Fixture& f,
                                                    std::vector<uint8_t>* out) {
  nghttp2_hd_deflater* deflater;
  if (nghttp2_hd_deflate_new(&deflater, 4096) != 0) return -1;
  const ssize_t n = Deflate(deflater, f, out);
  nghttp2_hd_deflate_del(deflater);
  return n;
}

__attribute__((noinline)) ssize_t Nghttp2EncodeSteady(
    nghttp2_hd_deflater* deflater, const Fixture& f,
    std::vector<uint8_t>* out) {
  return Deflate(deflater, f, out);
}

// Inflates one whole block, appending every field to *list. False on an error.
bool Inflate(nghttp2_hd_inflater* inflater, std::string_view block,
             hpack::HeaderList* list) {
  list->clear();
  const uint8_t* in = reinterpret_cast<const uint8_t*>(block.data());
  size_t left = block.size();
  for (;;) {
    nghttp2_nv nv;
    int flags = 0;
    const ssize_t used =
        nghttp2_hd_inflate_hd2(inflater, &nv, &flags, in, left, 1);
    if (used < 0) return false;
    in += used;
    left -= static_cast<size_t>(used);
    if (flags & NGHTTP2_HD_INFLATE_EMIT) {
      list->Append(
          std::string_view(reinterpret_cast<const char*>(nv.name), nv.namelen),
          std::string_view(reinterpret_cast<const char*>(nv.value),
                           nv.valuelen),
          (nv.flags & NGHTTP2_NV_FLAG_NO_INDEX) != 0);
    }
    if (flags & NGHTTP2_HD_INFLATE_FINAL) {
      nghttp2_hd_inflate_end_headers(inflater);
      return true;
    }
    if (used == 0 && left == 0) return false;
  }
}

__attribute__((noinline)) bool Nghttp2DecodeCold(std::string_view block,
                                                 hpack::HeaderList* list) {
  nghttp2_hd_inflater* inflater;
  if (nghttp2_hd_inflate_new(&inflater) != 0) return false;
  const bool ok = Inflate(inflater, block, list);
  nghttp2_hd_inflate_del(inflater);
  return ok;
}

__attribute__((noinline)) bool Nghttp2DecodeSteady(
    nghttp2_hd_inflater* inflater, std::string_view block,
    hpack::HeaderList* list) {
  return Inflate(inflater, block, list);
}

// -----------------------------------------------------------------------------
// Blocks to decode, and checks that both decoders get the fixture back.

struct Blocks {
  std::string cold;    // A fresh encoder's block.
  std::string steady;  // The same encoder's next block for the same fields.
};

Blocks OurBlocks(const Fixture& f) {
  hpack::Encoder encoder;
  Blocks b;
  encoder.AppendBlock(f.ours, &b.cold);
  encoder.AppendBlock(f.ours, &b.steady);
  return b;
}

bool SameAsFixture(const hpack::HeaderList& list, const Fixture& f) {
  if (list.size() != f.fields.size()) return false;
  for (size_t i = 0; i < list.size(); ++i) {
    if (list[i].name != f.fields[i].first ||
        list[i].value != f.fields[i].second) {
      return false;
    }
  }
  return true;
}

void CheckDecodes(const Fixture& f, const Blocks& b) {
  hpack::Decoder ours;
  hpack::HeaderList list;
  if (ours.Decode(b.cold, &list) != hpack::DecodeError::kOk ||
      !SameAsFixture(list, f) ||
      ours.Decode(b.steady, &list) != hpack::DecodeError::kOk ||
      !SameAsFixture(list, f)) {
    Die("our decoder does not decode our blocks to the fixture");
  }
  nghttp2_hd_inflater* inflater;
  if (nghttp2_hd_inflate_new(&inflater) != 0) Die("nghttp2_hd_inflate_new");
  if (!Inflate(inflater, b.cold, &list) || !SameAsFixture(list, f) ||
      !Inflate(inflater, b.steady, &list) || !SameAsFixture(list, f)) {
    Die("nghttp2 does not decode our blocks to the fixture");
  }
  nghttp2_hd_inflate_del(inflater);
}

// -----------------------------------------------------------------------------
// Paired benchmarks.

void EncodeColdOurs(benchmark::State& state, const Fixture& f) {
  std::string out;
  for (auto _ : state) {
    OursEncodeCold(f, &out);
    benchmark::DoNotOptimize(out.data());
  }
  state.counters["bytes"] = static_cast<double>(out.size());
}

void EncodeColdNghttp2(benchmark::State& state, const Fixture& f) {
  std::vector<uint8_t> out(4096);
  ssize_t n = 0;
  for (auto _ : state) {
    n = Nghttp2EncodeCold(f, &out);
    benchmark::DoNotOptimize(out.data());
  }
  if (n < 0) state.SkipWithError("nghttp2_hd_deflate_hd failed");
  state.counters["bytes"] = static_cast<double>(n);
}

void EncodeSteadyOurs(benchmark::State& state, const Fixture& f) {
  hpack::Encoder encoder;
  std::string out;
  encoder.AppendBlock(f.ours, &out);  // Warm-up block.
  for (auto _ : state) {
    OursEncodeSteady(&encoder, f, &out);
    benchmark::DoNotOptimize(out.data());
  }
  state.counters["bytes"] = static_cast<double>(out.size());
}

void EncodeSteadyNghttp2(benchmark::State& state, const Fixture& f) {
  nghttp2_hd_deflater* deflater;
  if (nghttp2_hd_deflate_new(&deflater, 4096) != 0) {
    Die("nghttp2_hd_deflate_new");
  }
  std::vector<uint8_t> out(
      nghttp2_hd_deflate_bound(deflater, f.nva.data(), f.nva.size()));
  ssize_t n = Deflate(deflater, f, &out);  // Warm-up block.
  for (auto _ : state) {
    n = Nghttp2EncodeSteady(deflater, f, &out);
    benchmark::DoNotOptimize(out.data());
  }
  if (n < 0) state.SkipWithError("nghttp2_hd_deflate_hd failed");
  state.counters["bytes"] = static_cast<double>(n);
  nghttp2_hd_deflate_del(deflater);
}

void DecodeColdOurs(benchmark::State& state, const Fixture& f) {
  const Blocks b = OurBlocks(f);
  hpack::HeaderList list;
  hpack::DecodeError e = hpack::DecodeError::kOk;
  for (auto _ : state) {
    e = OursDecodeCold(b.cold, &list);
    benchmark::DoNotOptimize(list.arena_size());
  }
  if (e != hpack::DecodeError::kOk) state.SkipWithError("decode failed");
  state.counters["bytes"] = static_cast<double>(b.cold.size());
}

void DecodeColdNghttp2(benchmark::State& state, const Fixture& f) {
  const Blocks b = OurBlocks(f);
  hpack::HeaderList list;
  bool ok = true;
  for (auto _ : state) {
    ok = Nghttp2DecodeCold(b.cold, &list);
    benchmark::DoNotOptimize(list.arena_size());
  }
  if (!ok) state.SkipWithError("inflate failed");
  state.counters["bytes"] = static_cast<double>(b.cold.size());
}

void DecodeSteadyOurs(benchmark::State& state, const Fixture& f) {
  const Blocks b = OurBlocks(f);
  hpack::Decoder decoder;
  hpack::HeaderList list;
  hpack::DecodeError e = decoder.Decode(b.cold, &list);  // Warm-up block.
  for (auto _ : state) {
    e = OursDecodeSteady(&decoder, b.steady, &list);
    benchmark::DoNotOptimize(list.arena_size());
  }
  if (e != hpack::DecodeError::kOk) state.SkipWithError("decode failed");
  state.counters["bytes"] = static_cast<double>(b.steady.size());
}

void DecodeSteadyNghttp2(benchmark::State& state, const Fixture& f) {
  const Blocks b = OurBlocks(f);
  nghttp2_hd_inflater* inflater;
  if (nghttp2_hd_inflate_new(&inflater) != 0) Die("nghttp2_hd_inflate_new");
  hpack::HeaderList list;
  bool ok = Inflate(inflater, b.cold, &list);  // Warm-up block.
  for (auto _ : state) {
    ok = Nghttp2DecodeSteady(inflater, b.steady, &list);
    benchmark::DoNotOptimize(list.arena_size());
  }
  if (!ok) state.SkipWithError("inflate failed");
  state.counters["bytes"] = static_cast<double>(b.steady.size());
  nghttp2_hd_inflate_del(inflater);
}

// -----------------------------------------------------------------------------
// Ours alone: the building blocks, over every name and value of the three
// fixtures.

std::vector<std::string> AllStrings() {
  std::vector<std::string> out;
  for (const Fields* fs : {&kChromeRequest, &kHtmlResponse, &kGrpcRequest}) {
    for (const auto& [name, value] : *fs) {
      out.push_back(name);
      out.push_back(value);
    }
  }
  return out;
}

size_t TotalSize(const std::vector<std::string>& strings) {
  size_t n = 0;
  for (const std::string& s : strings) n += s.size();
  return n;
}

void HuffmanDecodeBench(benchmark::State& state) {
  const std::vector<std::string> text = AllStrings();
  std::vector<std::string> encoded;
  size_t max_decoded = 0;
  for (const std::string& s : text) {
    std::string e(hpack::HuffmanEncodedLength(s), '\0');
    hpack::HuffmanEncode(s, reinterpret_cast<uint8_t*>(e.data()));
    max_decoded =
        std::max(max_decoded, hpack::HuffmanMaxDecodedLength(e.size()));
    encoded.push_back(std::move(e));
  }
  std::vector<uint8_t> out(max_decoded + 1);
  for (auto _ : state) {
    for (const std::string& e : encoded) {
      size_t n = 0;
      const hpack::HuffmanDecodeStatus s = hpack::HuffmanDecode(
          reinterpret_cast<const uint8_t*>(e.data()), e.size(), out.data(), &n);
      benchmark::DoNotOptimize(s);
      benchmark::DoNotOptimize(n);
    }
    benchmark::ClobberMemory();
  }
  // Throughput in decoded (header text) octets.
  state.SetBytesProcessed(
      static_cast<int64_t>(state.iterations() * TotalSize(text)));
  state.counters["bytes"] = static_cast<double>(TotalSize(encoded));
}

// All the fixtures' strings as one string: per-octet throughput without the
// per-call costs.
void HuffmanDecodeLongBench(benchmark::State& state) {
  std::string text;
  for (const std::string& s : AllStrings()) text += s;
  std::string encoded(hpack::HuffmanEncodedLength(text), '\0');
  hpack::HuffmanEncode(text, reinterpret_cast<uint8_t*>(encoded.data()));
  std::vector<uint8_t> out(hpack::HuffmanMaxDecodedLength(encoded.size()) + 1);
  for (auto _ : state) {
    size_t n = 0;
    const hpack::HuffmanDecodeStatus s =
        hpack::HuffmanDecode(reinterpret_cast<const uint8_t*>(encoded.data()),
                             encoded.size(), out.data(), &n);
    benchmark::DoNotOptimize(s);
    benchmark::DoNotOptimize(n);
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(
      static_cast<int64_t>(state.iterations() * text.size()));
  state.counters["bytes"] = static_cast<double>(encoded.size());
}

void HuffmanEncodeBench(benchmark::State& state) {
  const std::vector<std::string> text = AllStrings();
  std::vector<uint8_t> out(2 * TotalSize(text) + 8);
  for (auto _ : state) {
    for (const std::string& s : text) {
      benchmark::DoNotOptimize(hpack::HuffmanEncode(s, out.data()));
    }
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(
      static_cast<int64_t>(state.iterations() * TotalSize(text)));
}

void HuffmanEncodedLengthBench(benchmark::State& state) {
  const std::vector<std::string> text = AllStrings();
  for (auto _ : state) {
    for (const std::string& s : text) {
      benchmark::DoNotOptimize(hpack::HuffmanEncodedLength(s));
    }
  }
  state.SetBytesProcessed(
      static_cast<int64_t>(state.iterations() * TotalSize(text)));
}

void ValidateFieldsBench(benchmark::State& state) {
  std::vector<std::pair<std::string, std::string>> fields;
  size_t bytes = 0;
  for (const Fields* fs : {&kChromeRequest, &kHtmlResponse, &kGrpcRequest}) {
    for (const auto& f : *fs) {
      fields.push_back(f);
      bytes += f.first.size() + f.second.size();
    }
  }
  for (auto _ : state) {
    unsigned bad = 0;
    for (const auto& [name, value] : fields) {
      bad |= hpack::ValidateField(name, value);
    }
    benchmark::DoNotOptimize(bad);
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * bytes));
}

// Lowercasing user-supplied names: the common case (already lowercase, returned
// as is) and HTTP/1-style capitalized names (copied and lowercased).
void ToLowerCaseBench(benchmark::State& state, bool capitalized) {
  std::vector<std::string> names;
  size_t bytes = 0;
  for (const Fields* fs : {&kChromeRequest, &kHtmlResponse, &kGrpcRequest}) {
    for (const auto& f : *fs) {
      std::string name = f.first;
      if (capitalized) {
        for (size_t i = 0; i < name.size(); ++i) {
          if ((i == 0 || name[i - 1] == '-') && name[i] >= 'a' &&
              name[i] <= 'z') {
            name[i] = static_cast<char>(name[i] - 'a' + 'A');
          }
        }
      }
      bytes += name.size();
      names.push_back(std::move(name));
    }
  }
  std::string storage;
  storage.reserve(256);
  for (auto _ : state) {
    for (const std::string& name : names) {
      const std::string_view lower = hpack::ToLowerAscii(name, &storage);
      benchmark::DoNotOptimize(lower.data());
    }
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * bytes));
}

// -----------------------------------------------------------------------------
// Registration.

using PairFn = void (*)(benchmark::State&, const Fixture&);

void RegisterPair(const std::string& name, const Fixture& f, PairFn ours,
                  PairFn nghttp2) {
  benchmark::RegisterBenchmark((name + "/ours").c_str(),
                               [&f, ours](benchmark::State& s) { ours(s, f); });
  benchmark::RegisterBenchmark(
      (name + "/nghttp2").c_str(),
      [&f, nghttp2](benchmark::State& s) { nghttp2(s, f); });
}

bool RegisterAll() {
  for (const Fixture* f : {&Request(), &Response(), &Grpc()}) {
    CheckDecodes(*f, OurBlocks(*f));
  }

  RegisterPair("DecodeRequestCold", Request(), DecodeColdOurs,
               DecodeColdNghttp2);
  RegisterPair("DecodeRequestSteadyState", Request(), DecodeSteadyOurs,
               DecodeSteadyNghttp2);
  RegisterPair("DecodeResponseCold", Response(), DecodeColdOurs,
               DecodeColdNghttp2);
  RegisterPair("EncodeRequestCold", Request(), EncodeColdOurs,
               EncodeColdNghttp2);
  RegisterPair("EncodeRequestSteadyState", Request(), EncodeSteadyOurs,
               EncodeSteadyNghttp2);
  RegisterPair("EncodeResponseCold", Response(), EncodeColdOurs,
               EncodeColdNghttp2);
  RegisterPair("DecodeGrpcSteadyState", Grpc(), DecodeSteadyOurs,
               DecodeSteadyNghttp2);
  RegisterPair("EncodeGrpcSteadyState", Grpc(), EncodeSteadyOurs,
               EncodeSteadyNghttp2);

  benchmark::RegisterBenchmark("HuffmanDecode", HuffmanDecodeBench);
  benchmark::RegisterBenchmark("HuffmanDecode/long", HuffmanDecodeLongBench);
  benchmark::RegisterBenchmark("HuffmanEncode", HuffmanEncodeBench);
  benchmark::RegisterBenchmark("HuffmanEncodedLength",
                               HuffmanEncodedLengthBench);
  benchmark::RegisterBenchmark("ValidateFields", ValidateFieldsBench);
  benchmark::RegisterBenchmark(
      "ToLowerCase", [](benchmark::State& s) { ToLowerCaseBench(s, false); });
  benchmark::RegisterBenchmark(
      "ToLowerCase/capitalized",
      [](benchmark::State& s) { ToLowerCaseBench(s, true); });
  return true;
}

[[maybe_unused]] const bool kRegistered = RegisterAll();

}  // namespace
