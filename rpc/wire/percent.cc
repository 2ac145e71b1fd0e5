#include "rpc/wire/percent.h"

#include <array>
#include <cstdint>

namespace rpc {

namespace {

// kEscape[c]: octet c is sent as %XX.
constexpr std::array<bool, 256> MakeEscapeTable() {
  std::array<bool, 256> t{};
  for (int c = 0; c < 256; ++c) t[c] = c < 0x20 || c > 0x7e || c == '%';
  return t;
}
constexpr std::array<bool, 256> kEscape = MakeEscapeTable();

constexpr char kUpperHex[] = "0123456789ABCDEF";

// The value of hex digit c, or -1.
constexpr int HexValue(uint8_t c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  return -1;
}

// Index of the first octet needing an escape, or in.size().
size_t FirstToEscape(std::string_view in) {
  const auto* p = reinterpret_cast<const uint8_t*>(in.data());
  const size_t n = in.size();
  size_t i = 0;
  // Unrolled: the common message is plain ASCII.
  for (; i + 4 <= n; i += 4) {
    // Bitwise on ints, no short-circuit branches (clang warns on bools).
    if (int{kEscape[p[i]]} | int{kEscape[p[i + 1]]} | int{kEscape[p[i + 2]]} |
        int{kEscape[p[i + 3]]}) {
      break;
    }
  }
  for (; i < n; ++i) {
    if (kEscape[p[i]]) return i;
  }
  return n;
}

void EncodeFrom(std::string_view in, size_t first, std::string* out) {
  size_t escapes = 0;
  for (size_t i = first; i < in.size(); ++i) {
    escapes += kEscape[static_cast<uint8_t>(in[i])];
  }
  out->clear();
  out->reserve(in.size() + 2 * escapes);
  out->append(in.data(), first);
  for (size_t i = first; i < in.size(); ++i) {
    const uint8_t c = static_cast<uint8_t>(in[i]);
    if (kEscape[c]) {
      const char esc[3] = {'%', kUpperHex[c >> 4], kUpperHex[c & 0xf]};
      out->append(esc, 3);
    } else {
      out->push_back(static_cast<char>(c));
    }
  }
}

void DecodeFrom(std::string_view in, size_t first, std::string* out) {
  out->clear();
  out->reserve(in.size());
  out->append(in.data(), first);
  const size_t n = in.size();
  for (size_t i = first; i < n; ++i) {
    const char c = in[i];
    if (c == '%' && i + 2 < n) {
      const int hi = HexValue(static_cast<uint8_t>(in[i + 1]));
      const int lo = HexValue(static_cast<uint8_t>(in[i + 2]));
      if (hi >= 0 && lo >= 0) {
        out->push_back(static_cast<char>((hi << 4) | lo));
        i += 2;
        continue;
      }
    }
    out->push_back(c);
  }
}

}  // namespace

bool NeedsPercentEncoding(std::string_view in) {
  return FirstToEscape(in) != in.size();
}

std::string PercentEncode(std::string_view in) {
  const size_t first = FirstToEscape(in);
  if (first == in.size()) return std::string(in);
  std::string out;
  EncodeFrom(in, first, &out);
  return out;
}

std::string_view PercentEncodeIfNeeded(std::string_view in,
                                       std::string* storage) {
  const size_t first = FirstToEscape(in);
  if (first == in.size()) return in;
  EncodeFrom(in, first, storage);
  return *storage;
}

std::string PercentDecode(std::string_view in) {
  const size_t first = in.find('%');
  if (first == std::string_view::npos) return std::string(in);
  std::string out;
  DecodeFrom(in, first, &out);
  return out;
}

std::optional<std::string> PercentDecodeStrict(std::string_view in) {
  for (size_t i = in.find('%'); i != std::string_view::npos;
       i = in.find('%', i + 3)) {
    if (i + 2 >= in.size() || HexValue(static_cast<uint8_t>(in[i + 1])) < 0 ||
        HexValue(static_cast<uint8_t>(in[i + 2])) < 0) {
      return std::nullopt;
    }
  }
  // Every '%' starts a valid escape: the lenient decoder gives the answer.
  return PercentDecode(in);
}

std::string_view PercentDecodeIfNeeded(std::string_view in,
                                       std::string* storage) {
  const size_t first = in.find('%');
  if (first == std::string_view::npos) return in;
  DecodeFrom(in, first, storage);
  return *storage;
}

}  // namespace rpc
