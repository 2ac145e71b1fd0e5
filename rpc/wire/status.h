// rpc::Status and rpc::StatusCode: the outcome of a call, in the shape grpc++
// users know (grpc::Status, grpc::StatusCode), plus the wire mappings a client
// needs when a response carries no usable grpc-status.
//
//   rpc::Status s(rpc::StatusCode::NOT_FOUND, "no such user");
//   if (!s.ok()) std::cerr << s.error_code() << ": " << s.error_message();
//   absl::Status a = rpc::ToAbslStatus(s);   // and rpc::FromAbslStatus(a)
//
// Codes, names and numbers are gRPC's (doc/statuscodes.md); absl::StatusCode
// uses the same numbers, so conversions map 1:1. error_details() holds the
// serialized google.rpc.Status carried in the grpc-status-details-bin trailer;
// in an absl::Status it travels as a payload under kStatusDetailsTypeUrl.

#ifndef RPC_WIRE_STATUS_H_
#define RPC_WIRE_STATUS_H_

#include <cstdint>
#include <optional>
#include <ostream>
#include <string>
#include <string_view>
#include <utility>

#include "absl/status/status.h"

namespace rpc {

// Unscoped, as in grpc++: both rpc::StatusCode::OK and rpc::OK work.
enum StatusCode : int {
  OK = 0,
  CANCELLED = 1,
  UNKNOWN = 2,
  INVALID_ARGUMENT = 3,
  DEADLINE_EXCEEDED = 4,
  NOT_FOUND = 5,
  ALREADY_EXISTS = 6,
  PERMISSION_DENIED = 7,
  RESOURCE_EXHAUSTED = 8,
  FAILED_PRECONDITION = 9,
  ABORTED = 10,
  OUT_OF_RANGE = 11,
  UNIMPLEMENTED = 12,
  INTERNAL = 13,
  UNAVAILABLE = 14,
  DATA_LOSS = 15,
  UNAUTHENTICATED = 16,
};

inline constexpr int kMaxStatusCode = UNAUTHENTICATED;

// "OK", "CANCELLED", ... "UNAUTHENTICATED"; "UNKNOWN_CODE" for values outside
// [0, 16].
std::string_view StatusCodeName(StatusCode code);
// The inverse of StatusCodeName, for the 17 names; nullopt otherwise.
std::optional<StatusCode> StatusCodeFromName(std::string_view name);
// True for 0..16.
inline bool IsValidStatusCode(int code) {
  return code >= 0 && code <= kMaxStatusCode;
}

class Status {
 public:
  // OK.
  Status() = default;
  Status(StatusCode code, std::string message)
      : code_(code), message_(std::move(message)) {}
  // `details`: a serialized google.rpc.Status (grpc-status-details-bin).
  Status(StatusCode code, std::string message, std::string details)
      : code_(code),
        message_(std::move(message)),
        details_(std::move(details)) {}

  // Pre-made statuses, as in grpc++.
  static const Status& OK;
  static const Status& CANCELLED;

  bool ok() const { return code_ == StatusCode::OK; }
  StatusCode error_code() const { return code_; }
  const std::string& error_message() const { return message_; }
  const std::string& error_details() const { return details_; }

  // "OK", or "NOT_FOUND: no such user" (details are not printed).
  std::string ToString() const;

 private:
  StatusCode code_ = StatusCode::OK;
  std::string message_;
  std::string details_;
};

bool operator==(const Status& a, const Status& b);
inline bool operator!=(const Status& a, const Status& b) { return !(a == b); }
std::ostream& operator<<(std::ostream& os, const Status& status);

// ---- absl::Status ----

// The payload type URL under which error_details() rides in an absl::Status.
inline constexpr std::string_view kStatusDetailsTypeUrl =
    "type.googleapis.com/google.rpc.Status";

// Codes map 1:1 (same numbers). An OK rpc::Status becomes absl::OkStatus()
// (absl drops messages and payloads of OK statuses). Non-empty details are
// attached as the kStatusDetailsTypeUrl payload.
absl::Status ToAbslStatus(const Status& status);
// Codes map 1:1; the kStatusDetailsTypeUrl payload, if any, becomes
// error_details(); other payloads are dropped.
Status FromAbslStatus(const absl::Status& status);
inline absl::StatusCode ToAbslStatusCode(StatusCode code) {
  return static_cast<absl::StatusCode>(code);
}
// absl codes outside 0..16 (absl reserves none in use today) become UNKNOWN.
StatusCode FromAbslStatusCode(absl::StatusCode code);

// ---- Wire mappings ----

// The grpc-status header value for `code`: "0".."16" (static storage, no
// leading zeros as the spec requires). Codes outside 0..16 give "2" (UNKNOWN).
std::string_view GrpcStatusValue(StatusCode code);

// Parses a received grpc-status value: one or more ASCII digits naming a code
// in 0..16 (leading zeros tolerated). Anything else (empty, a sign, spaces,
// other characters, a number above 16) yields UNKNOWN, as gRPC implementations
// do for a grpc-status they cannot use.
StatusCode ParseGrpcStatusValue(std::string_view value);

// The status code a client synthesizes for a response whose :status is
// `http_status` and that carries no grpc-status (gRPC's
// doc/http-grpc-status-mapping.md): 400 INTERNAL, 401 UNAUTHENTICATED,
// 403 PERMISSION_DENIED, 404 UNIMPLEMENTED, 429/502/503/504 UNAVAILABLE,
// 431 INTERNAL, anything else (200 included) UNKNOWN.
StatusCode StatusCodeFromHttpStatus(int http_status);
// The same code with a message naming the HTTP status, e.g.
// "HTTP status 503 without grpc-status".
Status StatusFromHttp2Status(int http_status);

// The status code for a stream reset by the peer with HTTP/2 error code
// `h2_error` (gRPC's PROTOCOL-HTTP2.md, "Errors"): REFUSED_STREAM UNAVAILABLE,
// CANCEL CANCELLED, ENHANCE_YOUR_CALM RESOURCE_EXHAUSTED, INADEQUATE_SECURITY
// PERMISSION_DENIED, everything else (NO_ERROR included) INTERNAL. A server
// receiving CANCEL treats it as the client cancelling; that is the call
// layer's decision, the code is CANCELLED either way.
StatusCode StatusCodeFromRstStream(uint32_t h2_error);

}  // namespace rpc

#endif  // RPC_WIRE_STATUS_H_
