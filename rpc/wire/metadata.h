// Custom metadata: the key/value pairs an application sends and receives with
// a call (gRPC PROTOCOL-HTTP2.md, "Custom-Metadata"), and the rules for
// putting them on the wire.
//
// Keys: 1 or more of 0-9 a-z _ - . (lower case only; HTTP/2 field names are
// lower case). Keys ending in "-bin" carry arbitrary octets, base64-encoded on
// the wire (unpadded when sending, padded or not when receiving, see
// base64.h); other values are printable ASCII 0x20-0x7E (an empty value is
// accepted: HTTP allows it and peers send it).
//
// Reserved names. The library writes these headers itself, so an application
// may not set them: pseudo-headers (":..."), every "grpc-..." name (the spec
// reserves the prefix for gRPC), the names in kReservedHeaders (te,
// content-type, user-agent, ...), and the HTTP/1 connection-specific names
// HTTP/2 forbids (RFC 9113 section 8.2.2). ValidateUserMetadata checks all of
// this before a call sends anything.
//
// Metadata keeps pairs in insertion order and allows several values per key,
// like the std::multimap grpc++ hands out (ServerContext::client_metadata),
// but as a flat vector: cheaper to build, and the order of repeated keys is
// the order on the wire.
//
//   rpc::Metadata md;
//   md.Add("x-request-id", "42");
//   md.Add("trace-proto-bin", std::string("\x00\x01", 2));
//   if (auto id = md.Get("x-request-id")) ...

#ifndef RPC_WIRE_METADATA_H_
#define RPC_WIRE_METADATA_H_

#include <array>
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace rpc {

class Metadata {
 public:
  using value_type = std::pair<std::string, std::string>;
  using const_iterator = std::vector<value_type>::const_iterator;

  Metadata() = default;
  Metadata(std::initializer_list<value_type> pairs) : pairs_(pairs) {}

  // Appends a pair (no validation here: see ValidateUserMetadata).
  void Add(std::string key, std::string value) {
    pairs_.emplace_back(std::move(key), std::move(value));
  }
  // The first value under `key`, or nullopt.
  std::optional<std::string_view> Get(std::string_view key) const;
  // Every value under `key`, in insertion order.
  std::vector<std::string_view> GetAll(std::string_view key) const;
  size_t Count(std::string_view key) const;
  // Removes every pair under `key`; returns how many.
  size_t Remove(std::string_view key);

  size_t size() const { return pairs_.size(); }
  bool empty() const { return pairs_.empty(); }
  void clear() { pairs_.clear(); }
  void reserve(size_t n) { pairs_.reserve(n); }
  const_iterator begin() const { return pairs_.begin(); }
  const_iterator end() const { return pairs_.end(); }
  const value_type& operator[](size_t i) const { return pairs_[i]; }

  friend bool operator==(const Metadata& a, const Metadata& b) {
    return a.pairs_ == b.pairs_;
  }
  friend bool operator!=(const Metadata& a, const Metadata& b) {
    return !(a == b);
  }

 private:
  std::vector<value_type> pairs_;
};

// ---- Key and value rules ----

// 1 or more of [0-9a-z_.-].
bool IsValidMetadataKey(std::string_view key);
// Ends in "-bin" (the value is binary, base64 on the wire).
bool IsBinaryKey(std::string_view key);
// Every octet in 0x20-0x7E (empty allowed).
bool IsValidAsciiValue(std::string_view value);

// The header names the library sets or interprets itself (te, content-type,
// user-agent), and the connection-specific names HTTP/2 forbids, besides every
// ":..." and "grpc-..." name.
inline constexpr std::array<std::string_view, 9> kReservedHeaders = {
    "te",
    "content-type",
    "user-agent",
    "host",
    "connection",
    "keep-alive",
    "proxy-connection",
    "upgrade",
    "transfer-encoding",
};
// True for pseudo-headers, "grpc-..." names (grpc-timeout, grpc-encoding,
// grpc-accept-encoding, grpc-status, grpc-message, grpc-status-details-bin,
// grpc-message-type and those gRPC may add) and kReservedHeaders.
bool IsReservedHeader(std::string_view key);

// OK, or InvalidArgument naming the problem: a malformed or reserved key, or a
// non-binary value with octets outside 0x20-0x7E.
absl::Status ValidateUserMetadata(std::string_view key, std::string_view value);
absl::Status ValidateUserMetadata(const Metadata& metadata);

// ---- Wire form of values ----

// The header value to send for (key, value): base64 (unpadded) for "-bin"
// keys, the value itself otherwise.
std::string EncodeMetadataValue(std::string_view key, std::string_view value);

// Decodes a received "-bin" header value into one or more values, appended to
// *out. A peer or proxy may have joined repeated headers with ',' (the spec
// requires splitting on ',' before decoding); spaces and tabs around each
// piece are ignored. InvalidArgument (and *out unchanged) when a piece is not
// base64.
absl::Status DecodeBinaryHeader(std::string_view wire_value,
                                std::vector<std::string>* out);
// One binary value, no ',' splitting (e.g. grpc-status-details-bin).
absl::StatusOr<std::string> DecodeBinaryValue(std::string_view wire_value);

}  // namespace rpc

#endif  // RPC_WIRE_METADATA_H_
