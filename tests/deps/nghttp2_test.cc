// Proves @nghttp2 (a test peer) is wired: its HPACK deflater produces a block
// for a request, and its inflater reads the block back to the same fields.
#include <nghttp2/nghttp2.h>

#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "gtest/gtest.h"

namespace {

nghttp2_nv Field(const std::string& name, const std::string& value) {
  return {reinterpret_cast<uint8_t*>(const_cast<char*>(name.data())),
          reinterpret_cast<uint8_t*>(const_cast<char*>(value.data())),
          name.size(), value.size(), NGHTTP2_NV_FLAG_NONE};
}

TEST(Nghttp2Test, DeflaterBlockInflatesToSameFields) {
  const std::vector<std::pair<std::string, std::string>> fields = {
      {":method", "GET"},
      {":scheme", "https"},
      {":authority", "www.example.com"},
      {":path", "/index.html"},
      {"user-agent", "h2rpc-test/1"}};
  std::vector<nghttp2_nv> nva;
  for (const auto& f : fields) nva.push_back(Field(f.first, f.second));

  nghttp2_hd_deflater* deflater = nullptr;
  ASSERT_EQ(nghttp2_hd_deflate_new(&deflater, 4096), 0);
  std::vector<uint8_t> block(
      nghttp2_hd_deflate_bound(deflater, nva.data(), nva.size()));
  ssize_t n = nghttp2_hd_deflate_hd(deflater, block.data(), block.size(),
                                    nva.data(), nva.size());
  ASSERT_GT(n, 0);
  block.resize(n);
  // :method GET, :scheme https are static-table hits: one octet each (0x82,
  // 0x87).
  EXPECT_EQ(block[0], 0x82);
  EXPECT_EQ(block[1], 0x87);
  EXPECT_LT(block.size(), 60u);
  nghttp2_hd_deflate_del(deflater);

  nghttp2_hd_inflater* inflater = nullptr;
  ASSERT_EQ(nghttp2_hd_inflate_new(&inflater), 0);
  std::vector<std::pair<std::string, std::string>> decoded;
  const uint8_t* in = block.data();
  size_t left = block.size();
  for (int guard = 0; guard < 100; ++guard) {
    nghttp2_nv nv;
    int flags = 0;
    ssize_t used = nghttp2_hd_inflate_hd2(inflater, &nv, &flags, in, left, 1);
    ASSERT_GE(used, 0);
    in += used;
    left -= used;
    if (flags & NGHTTP2_HD_INFLATE_EMIT) {
      decoded.emplace_back(
          std::string(reinterpret_cast<char*>(nv.name), nv.namelen),
          std::string(reinterpret_cast<char*>(nv.value), nv.valuelen));
    }
    if (flags & NGHTTP2_HD_INFLATE_FINAL) {
      nghttp2_hd_inflate_end_headers(inflater);
      break;
    }
  }
  nghttp2_hd_inflate_del(inflater);
  EXPECT_EQ(decoded, fields);
}

}  // namespace
