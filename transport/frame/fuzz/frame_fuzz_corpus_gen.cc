// Writes the seed corpus of frame_decoder_fuzzer
// (transport/frame/fuzz/corpus/):
//   ./bazelw run //transport/frame/fuzz:frame_fuzz_corpus_gen --
//   $PWD/transport/frame/fuzz/corpus
// Each seed is the fuzzer's 5-octet prefix (options, split seed) and a frame
// stream.
#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include "transport/frame/frame.h"
#include "transport/testing/frame_test_util.h"

namespace {

void Write(const std::string& dir, const std::string& name, char options,
           const std::string& stream) {
  const std::string path = dir + "/" + name;
  std::ofstream out(path, std::ios::binary);
  out << options << std::string("\x12\x34\x56\x78", 4) << stream;
  std::printf("%s: %zu octets\n", path.c_str(), stream.size() + 5);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s OUTPUT_DIR\n", argv[0]);
    return 1;
  }
  using namespace transport;  // NOLINT(build/namespaces): a tiny tool.
  const std::string dir = argv[1];
  const std::string sample = testing::Serialize(testing::SampleFrames());
  Write(dir, "sample_frames", 0, sample);
  Write(dir, "server_preface_sample", 3, std::string(kClientPreface) + sample);
  Write(
      dir, "request", 3,
      std::string(kClientPreface) +
          testing::Serialize(
              {SettingsFrame{false, {{SettingId::kEnablePush, 0}}},
               WindowUpdateFrame{0, 1 << 20},
               HeadersFrame{1, false, false, std::nullopt, "\x83\x86\x84", {}},
               ContinuationFrame{1, true, "\x41\x0alocalhost"},
               DataFrame{1, true,
                         [] {
                           SliceBuffer b;
                           b.Append(std::string("\0\0\0\0\x05hello", 10));
                           return b;
                         }(),
                         std::nullopt},
               SettingsFrame{true, {}}, PingFrame{false, 42},
               GoAwayFrame{1, Http2ErrorCode::kNoError, "bye"}}));
  Write(dir, "bad_settings", 0,
        testing::Serialize(
            {SettingsFrame{false, {{SettingId::kMaxFrameSize, 100}}}}));
  Write(
      dir, "interleaved_continuation", 0,
      testing::Serialize({HeadersFrame{1, false, false, std::nullopt, "ab", {}},
                          PingFrame{false, 1}}));
  return 0;
}
