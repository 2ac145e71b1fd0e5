// The README's demo until the RPC examples exist: what HPACK on a long-lived
// connection buys, shown with this project's codec.
//
// 1. A gRPC client's request metadata and a browser navigation, each sent three
//    times on one connection: the first block carries the text, every later one
//    is a handful of table indexes. Each block is decoded back and checked.
// 2. The HTTP working group's compression table over the hpack-test-case
//    raw-data stories (real sites' headers), at three table sizes.
#include <cstdio>
#include <string>
#include <vector>

#include "hpack/decoder.h"
#include "hpack/encoder.h"
#include "hpack/header_list.h"
#include "hpack/tool/ratio.h"
#include "hpack/tool/story.h"

namespace {

using hpack::HeaderField;

const std::vector<HeaderField> kGrpcRequest = {
    {":method", "POST"},
    {":scheme", "http"},
    {":path", "/helloworld.Greeter/SayHello"},
    {":authority", "localhost:50051"},
    {"te", "trailers"},
    {"content-type", "application/grpc"},
    {"grpc-accept-encoding", "identity,deflate,gzip"},
    {"grpc-timeout", "1S"},
    {"user-agent", "grpc-c++/1.51.1 grpc-c/29.0.0 (linux; chttp2)"},
};

const std::vector<HeaderField> kBrowserRequest = {
    {":method", "GET"},
    {":scheme", "https"},
    {":authority", "www.example.com"},
    {":path", "/search?q=http2+header+compression&hl=en"},
    {"user-agent",
     "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) "
     "Chrome/131.0.0.0 Safari/537.36"},
    {"accept",
     "text/html,application/xhtml+xml,application/xml;q=0.9,image/avif,"
     "image/webp,image/apng,*/*;q=0.8"},
    {"accept-encoding", "gzip, deflate, br, zstd"},
    {"accept-language", "en-US,en;q=0.9"},
    {"cookie",
     "SID=31d4d96e407aad42; lang=en-US; theme=dark; "
     "session=8f14e45fceea167a5a36dedd4bea2543abcdef"},
};

size_t Http1Size(const std::vector<HeaderField>& fields) {
  size_t n = 2;  // Final CRLF.
  for (const HeaderField& f : fields)
    n += f.name.size() + 2 + f.value.size() + 2;
  return n;
}

std::string Hex(std::string_view bytes) {
  static const char kDigits[] = "0123456789abcdef";
  std::string out;
  for (unsigned char c : bytes) {
    out.push_back(kDigits[c >> 4]);
    out.push_back(kDigits[c & 15]);
  }
  return out;
}

bool ShowConnection(const char* title, const std::vector<HeaderField>& fields) {
  std::printf("%s: %zu fields, about %zu octets as HTTP/1.1 text\n", title,
              fields.size(), Http1Size(fields));
  hpack::Encoder encoder;  // Our side of one connection...
  hpack::Decoder decoder;  // ...and the peer's.
  hpack::HeaderList decoded;
  for (int i = 1; i <= 3; ++i) {
    const std::string_view block = encoder.EncodeBlock(fields);
    const hpack::DecodeError e = decoder.Decode(block, &decoded);
    bool same = e == hpack::DecodeError::kOk && decoded.size() == fields.size();
    for (size_t k = 0; same && k < fields.size(); ++k) {
      same = decoded[k].name == fields[k].name &&
             decoded[k].value == fields[k].value;
    }
    std::printf("  request %d: %3zu octets%s  %s\n", i, block.size(),
                i == 1 ? " (literals, Huffman-coded)" : " (all indexed)     ",
                same ? "decodes back: ok" : "DECODE MISMATCH");
    if (!same) return false;
    if (i == 3) std::printf("  block: %s\n", Hex(block).c_str());
  }
  std::printf("  dynamic table after: %zu entries, %zu octets\n\n",
              encoder.table().num_entries(),
              static_cast<size_t>(encoder.table().size()));
  return true;
}

bool ShowCorpusTable() {
  std::vector<hpack::tool::Conversation> conversations;
  for (int i = 0; i < 32; ++i) {
    char path[96];
    std::snprintf(path, sizeof(path),
                  "third_party/hpack_test_case/raw-data/story_%02d.json", i);
    hpack::tool::Story story;
    std::string error;
    if (!hpack::tool::ReadStoryFile(path, &story, &error)) {
      std::fprintf(stderr, "%s: %s\n", path, error.c_str());
      return false;
    }
    conversations.push_back(hpack::tool::ConversationFromStory(story, path));
  }
  std::vector<hpack::tool::RatioRow> rows;
  std::string error;
  if (!hpack::tool::ComputeRatios(conversations, {256, 4096, 16384}, &rows,
                                  &error)) {
    std::fprintf(stderr, "%s\n", error.c_str());
    return false;
  }
  std::printf(
      "hpack-test-case raw-data (32 stories of real sites' headers), encoded\n"
      "by our encoder and checked by our decoder; ratio = HPACK octets /\n"
      "HTTP/1.1 octets:\n\n%s\n",
      hpack::tool::FormatRatioTable(rows).c_str());
  return true;
}

}  // namespace

int main() {
  std::printf("HPACK on one long-lived connection (RFC 7541)\n\n");
  bool ok = ShowConnection("gRPC unary call metadata", kGrpcRequest);
  ok = ShowConnection("Browser navigation", kBrowserRequest) && ok;
  ok = ShowCorpusTable() && ok;
  std::printf(
      "More: ./bazelw run //hpack:hpack_tool -- ratio FILE.har  (a browser's "
      "HAR export)\n      ./bazelw run --config=bench "
      "//benchmarks:hpack_benchmark  (against nghttp2)\n");
  return ok ? 0 : 1;
}
