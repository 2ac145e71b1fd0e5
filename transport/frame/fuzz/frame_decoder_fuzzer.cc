// libFuzzer target: the frame decoder on arbitrary bytes, and a differential
// check of its fast paths against its general path.
//
// Input: octet 0 picks the options (bit 0: expect the client preface, bit 1:
// SETTINGS first, bit 2: max frame size 2^24-1 instead of 2^14); octets 1-4
// seed the split points; the rest is the byte stream. It is decoded in one
// piece and again cut at pseudo-random points; both must report the same
// events, DATA bytes and error (and the collector must see the documented
// callback order). Any difference aborts.
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

#include "transport/frame/frame_decoder.h"
#include "transport/testing/frame_test_util.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 5) return 0;
  transport::FrameDecoder::Options options;
  options.expect_client_preface = (data[0] & 1) != 0;
  options.expect_settings_first = (data[0] & 2) != 0;
  options.max_frame_size = (data[0] & 4) != 0 ? transport::kMaxAllowedFrameSize
                                              : transport::kDefaultMaxFrameSize;
  const uint32_t seed = (uint32_t{data[1]} << 24) | (uint32_t{data[2]} << 16) |
                        (uint32_t{data[3]} << 8) | data[4];
  const std::string bytes(reinterpret_cast<const char*>(data) + 5, size - 5);

  const transport::testing::DecodeOutcome whole =
      transport::testing::DecodeInPieces(bytes, {}, options);
  std::mt19937 rng(seed);
  std::vector<size_t> splits(1 + rng() % 16);
  for (size_t& s : splits) s = rng() % (bytes.size() + 1);
  std::sort(splits.begin(), splits.end());
  const transport::testing::DecodeOutcome split =
      transport::testing::DecodeInPieces(bytes, splits, options);

  if (!(whole == split) || !whole.violations.empty()) {
    std::fprintf(stderr, "whole:\n%s\nsplit:\n%s\n", whole.ToString().c_str(),
                 split.ToString().c_str());
    std::abort();
  }
  return 0;
}
