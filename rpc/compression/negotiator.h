// Negotiator: accept-encoding negotiation for one server configuration, with a
// fast path that is a cache of the parser's answers (accept_encoding.h).
//
// The header values real clients send are few and byte-exact (see
// kFastPathValues). A Negotiator holds, for each of them, the answer
// Negotiate(value, preference) gives: computed by the parser when the
// Negotiator is built, at compile time for kDefaultNegotiator (constexpr) and
// at start-up for any other Preference. A lookup matches the whole value
// byte for byte against the table and returns the stored answer; any other
// value (another client, different spacing or case, weights) goes to the
// parser. The table therefore decides nothing: it can only give the answer the
// parser would give, and negotiator_test.cc holds the two equal (every table
// value against the parser on spellings the table never matches, thousands of
// random lists, every configuration).
//
// Lookup: a value of 1..31 octets indexes a 256-entry slot array by its
// length and the low 3 bits of its first octet (a perfect hash over the
// table, checked at compile time); the entry found is compared as 4- or 8-octet
// words (overlapping loads, no loop, no libc call). A hit is ~30 instructions
// including the call (callgrind, benchmarks/README.md), with four branches
// that a repeated value predicts.

#ifndef RPC_COMPRESSION_NEGOTIATOR_H_
#define RPC_COMPRESSION_NEGOTIATOR_H_

#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <optional>
#include <string_view>

#include "rpc/compression/accept_encoding.h"
#include "rpc/compression/encoding.h"

namespace rpc::compression {

// The values the fast path recognises, byte for byte, and who sends them.
inline constexpr std::string_view kFastPathValues[] = {
    // grpc-accept-encoding, gRPC C++ >= 1.4x (seen from Debian's 1.51.1),
    // and the other gRPC core wrappings (Python, Ruby, PHP, C#/Grpc.Core).
    "identity, deflate, gzip",
    // grpc-accept-encoding, gRPC core before the ", " spelling; grpc-js.
    "identity,deflate,gzip",
    // grpc-accept-encoding, grpc-dotnet (Grpc.Net.Client).
    "identity,gzip",
    // grpc-accept-encoding of grpc-go (encoding/gzip registered) and
    // grpc-java; accept-encoding of Go's net/http and OkHttp.
    "gzip",
    // A client that decodes nothing.
    "identity",
    // Chrome >= 123, Firefox >= 126, Edge.
    "gzip, deflate, br, zstd",
    // Safari; older Chrome and Firefox.
    "gzip, deflate, br",
    // Python requests / urllib3 without brotli; HPACK's static table entry.
    "gzip, deflate",
    // curl --compressed (7.88 with brotli and zstd, seen).
    "deflate, gzip, br, zstd",
    // curl built without brotli and zstd.
    "deflate, gzip",
    // Apache HttpClient (Java).
    "gzip,deflate",
};

inline constexpr size_t kNumFastPathValues =
    sizeof(kFastPathValues) / sizeof(kFastPathValues[0]);

namespace negotiator_internal {

inline constexpr size_t kMaxLength = 31;  // Longest value the table can hold.

// Slot of a value of length 1..kMaxLength: its length and the low 3 bits of
// its first octet.
constexpr size_t Slot(size_t length, char first) {
  return (length << 3) | (static_cast<uint8_t>(first) & 7);
}

struct Entry {
  std::array<char, kMaxLength + 1> bytes{};
  size_t length = 0;  // 0: the empty entry, matches nothing.
};

struct Table {
  // Entry 0 is empty; entries 1..kNumFastPathValues are kFastPathValues.
  std::array<Entry, kNumFastPathValues + 1> entries{};
  std::array<uint8_t, (kMaxLength + 1) << 3> slots{};  // Index into entries.
  bool perfect = true;  // No two values share a slot.
};

constexpr Table BuildTable() {
  Table table;
  for (size_t i = 0; i < kNumFastPathValues; ++i) {
    const std::string_view value = kFastPathValues[i];
    if (value.empty() || value.size() > kMaxLength) {
      table.perfect = false;
      continue;
    }
    Entry& entry = table.entries[i + 1];
    for (size_t j = 0; j < value.size(); ++j) entry.bytes[j] = value[j];
    entry.length = value.size();
    uint8_t& slot = table.slots[Slot(value.size(), value[0])];
    if (slot != 0) table.perfect = false;
    slot = static_cast<uint8_t>(i + 1);
  }
  return table;
}

inline constexpr Table kTable = BuildTable();
static_assert(kTable.perfect,
              "two kFastPathValues share a slot (or one is empty or longer "
              "than kMaxLength): change Slot()");

inline uint64_t Load64(const char* p) {
  uint64_t v;
  std::memcpy(&v, p, sizeof(v));
  return v;
}

inline uint32_t Load32(const char* p) {
  uint32_t v;
  std::memcpy(&v, p, sizeof(v));
  return v;
}

// a[0, n) == b[0, n) for 1 <= n <= 32, by overlapping word loads.
inline bool EqualShort(const char* a, const char* b, size_t n) {
  if (n >= 16) {
    return ((Load64(a) ^ Load64(b)) | (Load64(a + 8) ^ Load64(b + 8)) |
            (Load64(a + n - 16) ^ Load64(b + n - 16)) |
            (Load64(a + n - 8) ^ Load64(b + n - 8))) == 0;
  }
  if (n >= 8) {
    return ((Load64(a) ^ Load64(b)) |
            (Load64(a + n - 8) ^ Load64(b + n - 8))) == 0;
  }
  if (n >= 4) {
    return ((Load32(a) ^ Load32(b)) |
            (Load32(a + n - 4) ^ Load32(b + n - 4))) == 0;
  }
  return a[0] == b[0] && a[n / 2] == b[n / 2] && a[n - 1] == b[n - 1];
}

}  // namespace negotiator_internal

class Negotiator {
 public:
  // Runs the parser on every table value for `preference`.
  constexpr explicit Negotiator(const Preference& preference)
      : preference_(preference) {
    for (size_t i = 0; i < kNumFastPathValues; ++i) {
      answers_[i + 1] = compression::Negotiate(
          ParseAcceptEncoding(kFastPathValues[i]), preference_);
    }
  }

  // The response encoding for a request's `accept-encoding` or
  // `grpc-accept-encoding` value: exactly compression::Negotiate(value,
  // preference()). nullopt result: nothing acceptable (HTTP 406; gRPC sends
  // identity).
  std::optional<Encoding> Negotiate(std::string_view value) const {
    const size_t index = TableIndex(value);
    if (index != 0) return answers_[index];
    return NegotiateWithParser(value);
  }

  // No header: identity (see accept_encoding.h).
  std::optional<Encoding> Negotiate(std::nullopt_t) const {
    return Encoding::kIdentity;
  }

  // Whether `value` is answered from the table (for tests and benchmarks).
  static bool InFastPath(std::string_view value) {
    return TableIndex(value) != 0;
  }

  const Preference& preference() const { return preference_; }

 private:
  // 1 + the index of `value` in kFastPathValues, or 0 if it is not there.
  static size_t TableIndex(std::string_view value) {
    namespace internal = negotiator_internal;
    const size_t n = value.size();
    if (n - 1 >= internal::kMaxLength) return 0;  // n == 0 or n > kMaxLength
    const uint8_t index = internal::kTable.slots[internal::Slot(n, value[0])];
    const internal::Entry& entry = internal::kTable.entries[index];
    if (entry.length != n ||
        !internal::EqualShort(value.data(), entry.bytes.data(), n)) {
      return 0;
    }
    return index;
  }

  // The general path, out of line.
  std::optional<Encoding> NegotiateWithParser(std::string_view value) const;

  Preference preference_;
  // answers_[i + 1]: the parser's answer for kFastPathValues[i]; answers_[0]
  // is never returned.
  std::array<std::optional<Encoding>, kNumFastPathValues + 1> answers_{};
};

// The default configuration's negotiator, its table built at compile time.
inline constexpr Negotiator kDefaultNegotiator{kDefaultPreference};

}  // namespace rpc::compression

#endif  // RPC_COMPRESSION_NEGOTIATOR_H_
