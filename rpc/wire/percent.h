// grpc-message percent-encoding (gRPC PROTOCOL-HTTP2.md, "Responses":
// Status-Message -> Percent-Encoded).
//
// The status message is UTF-8 text; on the wire every octet outside 0x20-0x7E,
// and '%' itself, is sent as "%XX" (two upper-case hex digits); every other
// octet is sent as is. Decoding is lenient, as the spec requires ("When
// decoding invalid values, implementations MUST NOT error or throw away the
// message"): "%" followed by two hex digits (either case) becomes that octet,
// any other '%' is passed through unchanged, and other octets are copied.
//
// Most messages need no encoding; the *IfNeeded forms return the input itself
// then, without copying or allocating.

#ifndef RPC_WIRE_PERCENT_H_
#define RPC_WIRE_PERCENT_H_

#include <optional>
#include <string>
#include <string_view>

namespace rpc {

// True when some octet of `in` must be escaped (outside 0x20-0x7E, or '%').
bool NeedsPercentEncoding(std::string_view in);

// The grpc-message form of `in`.
std::string PercentEncode(std::string_view in);
// `in` itself when nothing needs escaping; else the encoding, stored in
// *storage (overwritten) and returned as a view of it.
std::string_view PercentEncodeIfNeeded(std::string_view in,
                                       std::string* storage);

// The text a received grpc-message stands for (never fails, see above).
std::string PercentDecode(std::string_view in);
// `in` itself when it holds no '%'; else the decoding in *storage.
std::string_view PercentDecodeIfNeeded(std::string_view in,
                                       std::string* storage);

// Strict decoding, for URIs (gRPC targets): every '%' must start "%XX";
// nullopt otherwise.
std::optional<std::string> PercentDecodeStrict(std::string_view in);

}  // namespace rpc

#endif  // RPC_WIRE_PERCENT_H_
