// Proves @zlib and @zstd are wired: 1 MiB round trips through both, with a
// payload that mixes compressible text and incompressible noise.
#include <zlib.h>
#include <zstd.h>

#include <cstdint>
#include <random>
#include <string>

#include "gtest/gtest.h"

namespace {

std::string MakePayload() {
  std::string out;
  out.reserve(1 << 20);
  std::mt19937 rng(7);
  while (out.size() < (1u << 20)) {
    out += "grpc-accept-encoding: identity,deflate,gzip\r\n";
    for (int i = 0; i < 32; ++i) out.push_back(static_cast<char>(rng()));
  }
  out.resize(1 << 20);
  return out;
}

TEST(CompressionTest, ZlibRoundTripOneMebibyte) {
  const std::string input = MakePayload();
  uLongf bound = compressBound(input.size());
  std::string compressed(bound, '\0');
  ASSERT_EQ(compress2(reinterpret_cast<Bytef*>(compressed.data()), &bound,
                      reinterpret_cast<const Bytef*>(input.data()),
                      input.size(), Z_BEST_SPEED),
            Z_OK);
  compressed.resize(bound);
  EXPECT_LT(compressed.size(), input.size());

  std::string output(input.size(), '\0');
  uLongf out_len = output.size();
  ASSERT_EQ(uncompress(reinterpret_cast<Bytef*>(output.data()), &out_len,
                       reinterpret_cast<const Bytef*>(compressed.data()),
                       compressed.size()),
            Z_OK);
  EXPECT_EQ(out_len, input.size());
  EXPECT_EQ(output, input);
}

TEST(CompressionTest, ZstdRoundTripOneMebibyte) {
  const std::string input = MakePayload();
  std::string compressed(ZSTD_compressBound(input.size()), '\0');
  size_t n = ZSTD_compress(compressed.data(), compressed.size(), input.data(),
                           input.size(), 3);
  ASSERT_FALSE(ZSTD_isError(n)) << ZSTD_getErrorName(n);
  compressed.resize(n);
  EXPECT_LT(compressed.size(), input.size());
  EXPECT_EQ(ZSTD_getFrameContentSize(compressed.data(), compressed.size()),
            input.size());

  std::string output(input.size(), '\0');
  size_t m = ZSTD_decompress(output.data(), output.size(), compressed.data(),
                             compressed.size());
  ASSERT_FALSE(ZSTD_isError(m)) << ZSTD_getErrorName(m);
  EXPECT_EQ(m, input.size());
  EXPECT_EQ(output, input);
}

TEST(CompressionTest, CorruptZstdFrameIsAnError) {
  std::string junk = "\x28\xb5\x2f\xfd this is not a frame";
  char out[64];
  EXPECT_TRUE(ZSTD_isError(
      ZSTD_decompress(out, sizeof(out), junk.data(), junk.size())));
}

}  // namespace
