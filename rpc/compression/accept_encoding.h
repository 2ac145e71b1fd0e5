// The one definition of content-coding negotiation: a parser for the value of
// `accept-encoding` (RFC 9110 section 12.5.3) and `grpc-accept-encoding` (the
// same list without weights), and the rule that picks the response's encoding
// from it. Negotiator (negotiator.h) caches this file's answers for the values
// real clients send; it never decides anything itself.
//
// Grammar (RFC 9110 12.5.3, 12.4.2, 5.6.1, 5.6.6):
//
//   Accept-Encoding = #( codings [ weight ] )
//   codings         = content-coding / "identity" / "*"
//   weight          = OWS ";" OWS "q=" qvalue
//   qvalue          = ( "0" [ "." 0*3DIGIT ] ) / ( "1" [ "." 0*3("0") ] )
//
// How this parser reads it (every rule is tested in accept_encoding_test.cc):
//  * The list splits at commas outside quoted strings; optional whitespace
//    (SP, HTAB) around elements is dropped; empty elements (",,", a leading or
//    trailing comma, whitespace only) are skipped (RFC 9110 5.6.1: recipients
//    accept and ignore empty elements).
//  * An element is a coding, then parameters split at ";" outside quoted
//    strings. Codings compare case-insensitively. "x-gzip" means "gzip" (RFC
//    9110 8.4.1.3). An element whose coding we do not know ("br", "compress",
//    garbage) is ignored as a whole.
//  * The weight is the first parameter named "q" (case-insensitive, whitespace
//    around "=" tolerated) whose value is a valid qvalue. A malformed qvalue
//    ("q=abc", "q=1.5", "q=0.1234", "q=", "q=.5", `q="0.5"`) is ignored as a
//    parameter: the coding keeps the default weight, 1 (RFC 9110 12.4.2: "If no
//    'q' parameter is present, the default weight is 1"). The lenient reading:
//    the client named the coding, so it accepts it; only the unreadable weight
//    is lost. Other parameters are ignored.
//  * A coding listed more than once gets its highest weight: the answer does
//    not depend on the order of the list.
//  * Weight 0 means "not acceptable".
//  * "*" gives its weight to every coding not listed explicitly, identity
//    included (RFC 9110 12.5.3: "*;q=0" excludes identity unless identity is
//    listed).
//  * identity not listed and no "*": acceptable, ranked below every coding
//    listed with a positive weight (it is acceptable "by default", not
//    preferred).
//
// Choosing (Negotiate): among the server's supported encodings (Preference:
// the server's order, identity always supported and last unless placed
// explicitly), the one with the highest weight wins; equal weights go to the
// server's order. nullopt when nothing is acceptable, not even identity
// ("identity;q=0", "*;q=0"): HTTP answers 406 or sends identity anyway (RFC
// 9110 12.5.3 allows either); gRPC sends identity.
//
// No header at all: identity. HTTP would let the server pick any coding (RFC
// 9110 12.5.3), gRPC requires identity (the client did not say it can decode
// anything), and identity is valid for both. An empty value means identity
// only, per RFC 9110.
//
// Everything is constexpr, so Negotiator can run this parser at compile time
// to build the table of its default configuration.

#ifndef RPC_COMPRESSION_ACCEPT_ENCODING_H_
#define RPC_COMPRESSION_ACCEPT_ENCODING_H_

#include <array>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>

#include "rpc/compression/encoding.h"

namespace rpc::compression {

// The server's encodings in its order of preference. identity is always
// supported: it is placed last unless the list names it (then it ranks where
// listed). Duplicates after the first occurrence are dropped.
class Preference {
 public:
  constexpr Preference(std::initializer_list<Encoding> order) {
    for (Encoding e : order) Add(e);
    Add(Encoding::kIdentity);
  }

  // Number of candidates, identity included.
  constexpr size_t size() const { return size_; }
  constexpr Encoding operator[](size_t i) const { return order_[i]; }
  constexpr EncodingSet set() const { return set_; }

  friend constexpr bool operator==(const Preference& a, const Preference& b) {
    if (a.size_ != b.size_) return false;
    for (size_t i = 0; i < a.size_; ++i) {
      if (a.order_[i] != b.order_[i]) return false;
    }
    return true;
  }

 private:
  constexpr void Add(Encoding e) {
    if (set_.Contains(e)) return;
    set_ = set_.With(e);
    order_[size_++] = e;
  }

  std::array<Encoding, kNumEncodings> order_{};
  size_t size_ = 0;
  EncodingSet set_;
};

// The default server configuration: zstd (fastest and smallest, per
// benchmarks/README.md), then gzip (every gRPC implementation and browser),
// then deflate, then identity.
inline constexpr Preference kDefaultPreference = {
    Encoding::kZstd, Encoding::kGzip, Encoding::kDeflate};

// A parsed value: each known coding's weight in thousandths (0..1000), or
// kNotListed.
struct AcceptEncoding {
  static constexpr int16_t kNotListed = -1;
  std::array<int16_t, kNumEncodings> weight = {kNotListed, kNotListed,
                                               kNotListed, kNotListed};
  int16_t star = kNotListed;  // The weight of "*".

  friend constexpr bool operator==(const AcceptEncoding& a,
                                   const AcceptEncoding& b) {
    for (size_t i = 0; i < kNumEncodings; ++i) {
      if (a.weight[i] != b.weight[i]) return false;
    }
    return a.star == b.star;
  }
};

// Parses a header value; never fails (what it cannot read, it ignores, as
// described above).
constexpr AcceptEncoding ParseAcceptEncoding(std::string_view value);

// The weight the client gives `e` after "*" and identity's default are
// applied, doubled so that identity's default sits below every explicit
// weight: 2..2000 for an explicit weight, 1 for identity by default, 0 for not
// acceptable.
constexpr int EffectiveScore(const AcceptEncoding& accept, Encoding e);

// The response encoding (see the rules above); nullopt: nothing acceptable.
constexpr std::optional<Encoding> Negotiate(const AcceptEncoding& accept,
                                            const Preference& preference);

// ParseAcceptEncoding then Negotiate.
constexpr std::optional<Encoding> Negotiate(std::string_view value,
                                            const Preference& preference);

// No header: identity.
constexpr std::optional<Encoding> Negotiate(std::nullopt_t,
                                            const Preference& preference);

// "gzip=1000 deflate=- zstd=0 identity=- *=500": for test failure messages.
std::string DebugString(const AcceptEncoding& accept);

// ---------------------------------------------------------------------------
// Implementation (constexpr, so it lives here).

namespace accept_encoding_internal {

// A qvalue (RFC 9110 12.4.2) in thousandths, or -1 if `v` is not one.
constexpr int ParseQValue(std::string_view v) {
  if (v.empty() || (v[0] != '0' && v[0] != '1')) return -1;
  const int whole = v[0] - '0';
  if (v.size() == 1) return whole * 1000;
  if (v[1] != '.' || v.size() > 5) return -1;
  int fraction = 0;
  int scale = 100;
  for (size_t i = 2; i < v.size(); ++i) {
    const char c = v[i];
    if (c < '0' || c > '9') return -1;
    if (whole == 1 && c != '0') return -1;
    fraction += (c - '0') * scale;
    scale /= 10;
  }
  return whole * 1000 + fraction;
}

// The first `delimiter` in s at or after `pos` that is outside a quoted string
// (RFC 9110 5.6.4, backslash escapes), or s.size(). An unterminated quoted
// string runs to the end.
constexpr size_t FindUnquoted(std::string_view s, size_t pos, char delimiter) {
  bool quoted = false;
  for (; pos < s.size(); ++pos) {
    const char c = s[pos];
    if (quoted) {
      if (c == '\\') {
        ++pos;
      } else if (c == '"') {
        quoted = false;
      }
    } else if (c == '"') {
      quoted = true;
    } else if (c == delimiter) {
      return pos;
    }
  }
  return s.size();
}

// Which weight an element's coding sets: an Encoding's index, kStar, or
// kUnknown.
inline constexpr int kStar = kNumEncodings;
inline constexpr int kUnknown = -1;

constexpr int CodingSlot(std::string_view coding) {
  if (coding == "*") return kStar;
  if (std::optional<Encoding> e = ParseEncodingName(coding)) {
    return static_cast<int>(*e);
  }
  if (encoding_internal::EqualsIgnoreCase(coding, "x-gzip")) {
    return static_cast<int>(Encoding::kGzip);
  }
  return kUnknown;
}

// The weight an element's parameters give (1000 unless a valid q says
// otherwise).
constexpr int ElementWeight(std::string_view element, size_t semicolon) {
  while (semicolon < element.size()) {
    const size_t next = FindUnquoted(element, semicolon + 1, ';');
    const std::string_view parameter =
        element.substr(semicolon + 1, next - semicolon - 1);
    semicolon = next;
    const size_t equals = parameter.find('=');
    if (equals == std::string_view::npos) continue;
    const std::string_view name =
        encoding_internal::TrimOws(parameter.substr(0, equals));
    if (!encoding_internal::EqualsIgnoreCase(name, "q")) continue;
    const int q =
        ParseQValue(encoding_internal::TrimOws(parameter.substr(equals + 1)));
    if (q >= 0) return q;
  }
  return 1000;
}

}  // namespace accept_encoding_internal

constexpr AcceptEncoding ParseAcceptEncoding(std::string_view value) {
  namespace internal = accept_encoding_internal;
  AcceptEncoding accept;
  size_t start = 0;
  while (start <= value.size()) {
    const size_t comma = internal::FindUnquoted(value, start, ',');
    const std::string_view element = value.substr(start, comma - start);
    start = comma + 1;
    const size_t semicolon = internal::FindUnquoted(element, 0, ';');
    const int slot = internal::CodingSlot(
        encoding_internal::TrimOws(element.substr(0, semicolon)));
    if (slot == internal::kUnknown) continue;
    const int16_t weight =
        static_cast<int16_t>(internal::ElementWeight(element, semicolon));
    int16_t& target =
        slot == internal::kStar ? accept.star : accept.weight[slot];
    if (weight > target) target = weight;
  }
  return accept;
}

constexpr int EffectiveScore(const AcceptEncoding& accept, Encoding e) {
  int weight = accept.weight[static_cast<size_t>(e)];
  if (weight == AcceptEncoding::kNotListed) weight = accept.star;
  if (weight == AcceptEncoding::kNotListed) {
    return e == Encoding::kIdentity ? 1 : 0;
  }
  return 2 * weight;
}

constexpr std::optional<Encoding> Negotiate(const AcceptEncoding& accept,
                                            const Preference& preference) {
  std::optional<Encoding> best;
  int best_score = 0;
  for (size_t i = 0; i < preference.size(); ++i) {
    const int score = EffectiveScore(accept, preference[i]);
    if (score > best_score) {
      best = preference[i];
      best_score = score;
    }
  }
  return best;
}

constexpr std::optional<Encoding> Negotiate(std::string_view value,
                                            const Preference& preference) {
  return Negotiate(ParseAcceptEncoding(value), preference);
}

constexpr std::optional<Encoding> Negotiate(std::nullopt_t, const Preference&) {
  return Encoding::kIdentity;
}

}  // namespace rpc::compression

#endif  // RPC_COMPRESSION_ACCEPT_ENCODING_H_
