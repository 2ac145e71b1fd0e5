#include "rpc/wire/base64.h"

#include <array>
#include <cstdint>

namespace rpc {

namespace {

constexpr char kAlphabet[] =
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

constexpr uint8_t kInvalid = 0x80;

constexpr std::array<uint8_t, 256> MakeDecodeTable() {
  std::array<uint8_t, 256> t{};
  for (auto& v : t) v = kInvalid;
  for (int i = 0; i < 64; ++i) t[static_cast<uint8_t>(kAlphabet[i])] = i;
  return t;
}
constexpr std::array<uint8_t, 256> kDecode = MakeDecodeTable();

}  // namespace

void Base64EncodeAppend(std::string_view in, std::string* out, bool padded) {
  const size_t start = out->size();
  out->resize(start + Base64EncodedLength(in.size(), padded));
  char* dst = out->data() + start;
  const auto* src = reinterpret_cast<const uint8_t*>(in.data());
  size_t n = in.size();
  for (; n >= 3; n -= 3, src += 3, dst += 4) {
    const uint32_t v =
        (uint32_t{src[0]} << 16) | (uint32_t{src[1]} << 8) | uint32_t{src[2]};
    dst[0] = kAlphabet[v >> 18];
    dst[1] = kAlphabet[(v >> 12) & 63];
    dst[2] = kAlphabet[(v >> 6) & 63];
    dst[3] = kAlphabet[v & 63];
  }
  if (n == 0) return;
  const uint32_t v =
      (uint32_t{src[0]} << 16) | (n == 2 ? uint32_t{src[1]} << 8 : 0);
  dst[0] = kAlphabet[v >> 18];
  dst[1] = kAlphabet[(v >> 12) & 63];
  if (n == 2) {
    dst[2] = kAlphabet[(v >> 6) & 63];
  } else if (padded) {
    dst[2] = '=';
  }
  if (padded) dst[3] = '=';
}

bool Base64DecodeAppend(std::string_view in, std::string* out) {
  size_t n = in.size();
  if (n % 4 == 0 && n > 0 && in[n - 1] == '=') {
    n -= (in[n - 2] == '=') ? 2 : 1;
  }
  // Left after the whole groups: 0, 2 or 3 characters (1 cannot encode an
  // octet). A stray '=' elsewhere fails the table lookup below.
  const size_t tail = n % 4;
  if (tail == 1) return false;
  const size_t start = out->size();
  out->resize(start + n / 4 * 3 + (tail == 0 ? 0 : tail - 1));
  auto* dst = reinterpret_cast<uint8_t*>(out->data() + start);
  const auto* src = reinterpret_cast<const uint8_t*>(in.data());
  uint32_t bad = 0;
  size_t i = 0;
  for (; i + 4 <= n; i += 4, dst += 3) {
    const uint32_t a = kDecode[src[i]];
    const uint32_t b = kDecode[src[i + 1]];
    const uint32_t c = kDecode[src[i + 2]];
    const uint32_t d = kDecode[src[i + 3]];
    bad |= a | b | c | d;
    const uint32_t v = (a << 18) | (b << 12) | (c << 6) | d;
    dst[0] = static_cast<uint8_t>(v >> 16);
    dst[1] = static_cast<uint8_t>(v >> 8);
    dst[2] = static_cast<uint8_t>(v);
  }
  if (tail != 0) {
    const uint32_t a = kDecode[src[i]];
    const uint32_t b = kDecode[src[i + 1]];
    const uint32_t c = tail == 3 ? kDecode[src[i + 2]] : 0;
    bad |= a | b | c;
    const uint32_t v = (a << 18) | (b << 12) | (c << 6);
    dst[0] = static_cast<uint8_t>(v >> 16);
    if (tail == 3) dst[1] = static_cast<uint8_t>(v >> 8);
  }
  if (bad & kInvalid) {
    out->resize(start);
    return false;
  }
  return true;
}

}  // namespace rpc
