// The message encodings of gRPC (and the HTTP content codings we serve):
// identity, deflate, gzip, zstd. An enum, the names on the wire, a set of them
// as a bitset, and the two single-value headers: `grpc-encoding` (one coding)
// parsed, and `grpc-accept-encoding` (a list) produced.
//
// The numbering follows gRPC core's algorithm numbering (identity 0, deflate
// 1, gzip 2), so a set's `grpc-accept-encoding` value lists the codings in the
// order gRPC C++ lists them, and the value we send for {identity, deflate,
// gzip} is the very string gRPC C++ sends ("identity, deflate, gzip").
//
// Everything here is constexpr and allocation-free.

#ifndef RPC_COMPRESSION_ENCODING_H_
#define RPC_COMPRESSION_ENCODING_H_

#include <array>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <optional>
#include <string_view>

namespace rpc::compression {

enum class Encoding : uint8_t {
  kIdentity = 0,
  kDeflate = 1,  // zlib format (RFC 1950) around deflate, as gRPC sends it.
  kGzip = 2,     // gzip format (RFC 1952).
  kZstd = 3,     // zstd frames (RFC 8878).
};

inline constexpr size_t kNumEncodings = 4;

inline constexpr std::array<Encoding, kNumEncodings> kAllEncodings = {
    Encoding::kIdentity, Encoding::kDeflate, Encoding::kGzip, Encoding::kZstd};

// The lowercase name on the wire: "identity", "deflate", "gzip", "zstd".
constexpr std::string_view EncodingName(Encoding e) {
  switch (e) {
    case Encoding::kIdentity:
      return "identity";
    case Encoding::kDeflate:
      return "deflate";
    case Encoding::kGzip:
      return "gzip";
    case Encoding::kZstd:
      return "zstd";
  }
  return "";
}

namespace encoding_internal {

constexpr char ToLowerAscii(char c) {
  return (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c;
}

// `a` equals the lowercase `lower` ignoring ASCII case.
constexpr bool EqualsIgnoreCase(std::string_view a, std::string_view lower) {
  if (a.size() != lower.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (ToLowerAscii(a[i]) != lower[i]) return false;
  }
  return true;
}

constexpr bool IsOws(char c) { return c == ' ' || c == '\t'; }

constexpr std::string_view TrimOws(std::string_view s) {
  while (!s.empty() && IsOws(s.front())) s.remove_prefix(1);
  while (!s.empty() && IsOws(s.back())) s.remove_suffix(1);
  return s;
}

}  // namespace encoding_internal

// The encoding named exactly `name` (ASCII case ignored, no surrounding
// whitespace allowed), or nullopt for any other string.
constexpr std::optional<Encoding> ParseEncodingName(std::string_view name) {
  for (Encoding e : kAllEncodings) {
    if (encoding_internal::EqualsIgnoreCase(name, EncodingName(e))) return e;
  }
  return std::nullopt;
}

// The value of a `grpc-encoding` header: one coding, optional whitespace
// around it (RFC 9110 field values are trimmed), case ignored. nullopt for an
// unknown or empty coding: the receiver answers UNIMPLEMENTED listing what it
// supports (see UnsupportedEncodingError in codec.h). An absent header means
// identity; that is the caller's branch.
constexpr std::optional<Encoding> ParseGrpcEncoding(std::string_view value) {
  return ParseEncodingName(encoding_internal::TrimOws(value));
}

// A set of encodings: one bit per Encoding.
class EncodingSet {
 public:
  constexpr EncodingSet() = default;
  constexpr EncodingSet(std::initializer_list<Encoding> encodings) {
    for (Encoding e : encodings) bits_ |= Bit(e);
  }
  static constexpr EncodingSet FromBits(uint8_t bits) {
    EncodingSet s;
    s.bits_ = bits & kAllBits;
    return s;
  }
  static constexpr EncodingSet All() { return FromBits(kAllBits); }

  constexpr bool Contains(Encoding e) const { return (bits_ & Bit(e)) != 0; }
  constexpr EncodingSet With(Encoding e) const {
    return FromBits(bits_ | Bit(e));
  }
  constexpr EncodingSet Without(Encoding e) const {
    return FromBits(bits_ & ~Bit(e));
  }
  constexpr bool empty() const { return bits_ == 0; }
  constexpr size_t size() const {
    size_t n = 0;
    for (uint8_t b = bits_; b != 0; b &= b - 1) ++n;
    return n;
  }
  constexpr uint8_t bits() const { return bits_; }

  friend constexpr bool operator==(EncodingSet a, EncodingSet b) {
    return a.bits_ == b.bits_;
  }
  friend constexpr bool operator!=(EncodingSet a, EncodingSet b) {
    return a.bits_ != b.bits_;
  }

 private:
  static constexpr uint8_t kAllBits = (1u << kNumEncodings) - 1;
  static constexpr uint8_t Bit(Encoding e) {
    return static_cast<uint8_t>(1u << static_cast<uint8_t>(e));
  }
  uint8_t bits_ = 0;
};

// The `grpc-accept-encoding` value advertising `set`: the names in Encoding
// order joined by ", " (gRPC C++'s spelling), e.g. "identity, deflate, gzip".
// Empty for the empty set. Points into a static table: no allocation.
std::string_view GrpcAcceptEncodingValue(EncodingSet set);

}  // namespace rpc::compression

#endif  // RPC_COMPRESSION_ENCODING_H_
