// grpc-timeout: the relative deadline a client sends with a request (gRPC
// PROTOCOL-HTTP2.md, "Requests": Timeout -> "grpc-timeout" TimeoutValue
// TimeoutUnit; TimeoutValue is at most 8 ASCII digits; TimeoutUnit is one of
// H M S m u n for hours, minutes, seconds, milli-, micro- and nanoseconds).
//
// Encoding picks the finest unit in which the duration fits in 8 digits and
// rounds up to a whole number of that unit, so the deadline the server sees is
// never earlier than the client's (at most one unit later: under 100 ms ->
// exact in ns, under 100 s -> within 1 us, ... ). gRPC C++ instead rounds to
// three significant figures (coarser, for HPACK reuse); both are valid inputs
// to every peer. Non-positive durations encode as "1n" (the value must be
// positive; the deadline has passed either way). Durations beyond 99999999H
// (about 11,400 years), infinite included, clamp to "99999999H"; callers
// normally send no grpc-timeout for an infinite deadline.
//
// Parsing is strict: 1 to 8 ASCII digits then exactly one unit letter, nothing
// else (no spaces, signs or further characters). "0n" style zero values are
// accepted (some peers send them for expired deadlines) and mean zero.

#ifndef RPC_WIRE_TIMEOUT_H_
#define RPC_WIRE_TIMEOUT_H_

#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "absl/time/time.h"

namespace rpc {

// Longest encoding: 8 digits and a unit.
inline constexpr size_t kMaxTimeoutLength = 9;

// Writes the grpc-timeout value for `timeout` to `out` (kMaxTimeoutLength
// octets of room) and returns its length.
size_t EncodeTimeout(absl::Duration timeout, char* out);
// The same as a string (short enough to need no heap allocation).
std::string EncodeTimeout(absl::Duration timeout);

// The duration a received grpc-timeout value stands for; InvalidArgument when
// it is not 1-8 digits followed by one of H M S m u n.
absl::StatusOr<absl::Duration> ParseTimeout(std::string_view value);

}  // namespace rpc

#endif  // RPC_WIRE_TIMEOUT_H_
