// Writes the seed corpus of connection_fuzzer
// (transport/connection/fuzz/corpus/), from scripted exchanges:
//   ./bazelw run //transport/connection/fuzz:connection_fuzz_corpus_gen --
//   $PWD/transport/connection/fuzz/corpus
// Each seed is the fuzzer's 5-octet prefix (mode, split seed) and what the
// peer sends after its preface and SETTINGS.
#include <cstdio>
#include <fstream>
#include <string>

#include "transport/testing/connection_test_util.h"

namespace {

void Write(const std::string& dir, const std::string& name, char mode,
           const std::string& stream) {
  const std::string path = dir + "/" + name;
  std::ofstream out(path, std::ios::binary);
  out << mode << std::string("\x12\x34\x56\x78", 4) << stream;
  std::printf("%s: %zu octets\n", path.c_str(), stream.size() + 5);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s OUTPUT_DIR\n", argv[0]);
    return 1;
  }
  using namespace transport;           // NOLINT(build/namespaces): a tiny tool.
  using namespace transport::testing;  // NOLINT(build/namespaces)
  const std::string dir = argv[1];
  {
    ScriptedPeer p(Role::kClient);
    p.Headers(1, GetRequest(), true)
        .Headers(3, PostRequest(), false)
        .Data(3, "hello", false)
        .PaddedData(3, "world", 4, false)
        .Headers(3, {{"x-trailer", "1"}}, true)
        .Ping(1)
        .WindowUpdate(0, 1000);
    Write(dir, "server_exchange", 2, p.TakeBytes());
  }
  {
    ScriptedPeer p(Role::kClient);
    Fields big = PostRequest();
    big.emplace_back("x-long", std::string(3000, '~'));
    p.Headers(1, big, false, 1000)
        .Data(1, std::string(2000, 'd'), false)
        .RstStream(1, Http2ErrorCode::kCancel)
        .Headers(3, GetRequest(), false)
        .Priority(3, 1)
        .Settings({{SettingId::kInitialWindowSize, 10},
                   {SettingId::kHeaderTableSize, 0}})
        .WindowUpdate(3, 100)
        .GoAway(3, Http2ErrorCode::kNoError);
    Write(dir, "server_small_limits", 2 | 4 | 8, p.TakeBytes());
  }
  {
    ScriptedPeer p(Role::kClient);
    for (uint32_t id = 1; id < 40; id += 2) {
      p.Headers(id, GetRequest(), false).RstStream(id, Http2ErrorCode::kCancel);
    }
    Write(dir, "server_rapid_reset", 8, p.TakeBytes());
  }
  {
    ScriptedPeer p(Role::kServer);
    p.Headers(1, Response(100), false)
        .Headers(1, Response(), false)
        .Data(1, "body", false)
        .Headers(1, {{"grpc-status", "0"}}, true)
        .WindowUpdate(3, 5000)
        .Headers(3, Response(), true)
        .GoAway(3, Http2ErrorCode::kNoError)
        .Ping(5, true);
    Write(dir, "client_exchange", 1 | 2, p.TakeBytes());
  }
  return 0;
}
