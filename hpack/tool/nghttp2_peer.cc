#include "hpack/tool/nghttp2_peer.h"

#include <nghttp2/nghttp2.h>

#include <memory>
#include <string>
#include <vector>

namespace hpack {
namespace tool {
namespace {

nghttp2_nv ToNv(const Field& f) {
  nghttp2_nv nv;
  nv.name = reinterpret_cast<uint8_t*>(const_cast<char*>(f.first.data()));
  nv.value = reinterpret_cast<uint8_t*>(const_cast<char*>(f.second.data()));
  nv.namelen = f.first.size();
  nv.valuelen = f.second.size();
  nv.flags = NGHTTP2_NV_FLAG_NONE;
  return nv;
}

class Nghttp2Encoder : public PeerEncoder {
 public:
  explicit Nghttp2Encoder(uint32_t table_size) {
    // The peer's decoder starts at 4096 (RFC 7541 section 4.2): only another
    // size is announced, so the first block carries an update exactly when
    // ours does.
    ok_ = nghttp2_hd_deflate_new(&deflater_, table_size) == 0 &&
          (table_size == 4096 ||
           nghttp2_hd_deflate_change_table_size(deflater_, table_size) == 0);
  }
  ~Nghttp2Encoder() override {
    if (deflater_ != nullptr) nghttp2_hd_deflate_del(deflater_);
  }

  bool Encode(const std::vector<Field>& fields, std::string* block) override {
    if (!ok_) return false;
    nv_.clear();
    for (const Field& f : fields) nv_.push_back(ToNv(f));
    block->resize(nghttp2_hd_deflate_bound(deflater_, nv_.data(), nv_.size()));
    const ssize_t n = nghttp2_hd_deflate_hd(
        deflater_, reinterpret_cast<uint8_t*>(&(*block)[0]), block->size(),
        nv_.data(), nv_.size());
    if (n < 0) return false;
    block->resize(static_cast<size_t>(n));
    return true;
  }

 private:
  nghttp2_hd_deflater* deflater_ = nullptr;
  bool ok_ = false;
  std::vector<nghttp2_nv> nv_;
};

class Nghttp2Decoder : public PeerDecoder {
 public:
  explicit Nghttp2Decoder(uint32_t table_size) {
    ok_ = nghttp2_hd_inflate_new(&inflater_) == 0 &&
          nghttp2_hd_inflate_change_table_size(inflater_, table_size) == 0;
  }
  ~Nghttp2Decoder() override {
    if (inflater_ != nullptr) nghttp2_hd_inflate_del(inflater_);
  }

  bool Decode(std::string_view block, std::vector<Field>* fields) override {
    fields->clear();
    if (!ok_) return false;
    const uint8_t* in = reinterpret_cast<const uint8_t*>(block.data());
    size_t left = block.size();
    for (;;) {
      nghttp2_nv nv;
      int flags = 0;
      const ssize_t n =
          nghttp2_hd_inflate_hd2(inflater_, &nv, &flags, in, left, 1);
      if (n < 0) return false;
      in += n;
      left -= static_cast<size_t>(n);
      if (flags & NGHTTP2_HD_INFLATE_EMIT) {
        fields->emplace_back(
            std::string(reinterpret_cast<const char*>(nv.name), nv.namelen),
            std::string(reinterpret_cast<const char*>(nv.value), nv.valuelen));
      }
      if (flags & NGHTTP2_HD_INFLATE_FINAL) break;
      if (left == 0 && !(flags & NGHTTP2_HD_INFLATE_EMIT)) {
        return false;  // Truncated: nghttp2 wants more than the block.
      }
    }
    nghttp2_hd_inflate_end_headers(inflater_);
    return left == 0;
  }

 private:
  nghttp2_hd_inflater* inflater_ = nullptr;
  bool ok_ = false;
};

}  // namespace

Peer Nghttp2Peer() {
  Peer peer;
  peer.name = "nghttp2";
  peer.description =
      std::string("nghttp2 ") + nghttp2_version(0)->version_str + " deflater";
  peer.make_encoder = [](uint32_t table_size) {
    return std::unique_ptr<PeerEncoder>(new Nghttp2Encoder(table_size));
  };
  peer.make_decoder = [](uint32_t table_size) {
    return std::unique_ptr<PeerDecoder>(new Nghttp2Decoder(table_size));
  };
  return peer;
}

}  // namespace tool
}  // namespace hpack
