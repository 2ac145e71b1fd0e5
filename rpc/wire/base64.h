// Base64 (RFC 4648 section 4, standard alphabet) for binary metadata values:
// gRPC sends "-bin" header values base64-encoded, and "Implementations MUST
// accept padded and un-padded values and should emit un-padded values"
// (PROTOCOL-HTTP2.md).
//
// Why not absl::Base64Escape/Unescape: absl pads on output and, on input,
// skips whitespace anywhere in the text; a header value with embedded spaces
// is not valid base64 and is rejected here.
//
// Decoding rules: the alphabet is A-Z a-z 0-9 + /; padding, when present, is
// the one or two '=' that make the length a multiple of 4, and nothing follows
// it; an unpadded text may end in 2 or 3 characters of a final group (never 1).
// Everything else (other characters, whitespace, misplaced or partial
// padding) fails. Non-zero bits below the last full octet are ignored, as most
// decoders do (RFC 4648 section 3.5 allows either).

#ifndef RPC_WIRE_BASE64_H_
#define RPC_WIRE_BASE64_H_

#include <cstddef>
#include <string>
#include <string_view>

namespace rpc {

// Length of the encoding of `n` octets.
constexpr size_t Base64EncodedLength(size_t n, bool padded = false) {
  return padded ? (n + 2) / 3 * 4 : n / 3 * 4 + (n % 3 == 0 ? 0 : n % 3 + 1);
}

// Appends the encoding of `in` to *out (unpadded unless `padded`).
void Base64EncodeAppend(std::string_view in, std::string* out,
                        bool padded = false);
inline std::string Base64Encode(std::string_view in, bool padded = false) {
  std::string out;
  Base64EncodeAppend(in, &out, padded);
  return out;
}

// Appends the octets `in` encodes to *out and returns true; on invalid input
// returns false and leaves *out with its original contents.
bool Base64DecodeAppend(std::string_view in, std::string* out);
// *out receives the decoding (cleared first); false on invalid input.
inline bool Base64Decode(std::string_view in, std::string* out) {
  out->clear();
  return Base64DecodeAppend(in, out);
}

}  // namespace rpc

#endif  // RPC_WIRE_BASE64_H_
