#include "rpc/wire/status.h"

#include <array>

#include "absl/strings/cord.h"
#include "absl/strings/str_cat.h"

namespace rpc {

namespace {

constexpr std::array<std::string_view, kMaxStatusCode + 1> kNames = {
    "OK",
    "CANCELLED",
    "UNKNOWN",
    "INVALID_ARGUMENT",
    "DEADLINE_EXCEEDED",
    "NOT_FOUND",
    "ALREADY_EXISTS",
    "PERMISSION_DENIED",
    "RESOURCE_EXHAUSTED",
    "FAILED_PRECONDITION",
    "ABORTED",
    "OUT_OF_RANGE",
    "UNIMPLEMENTED",
    "INTERNAL",
    "UNAVAILABLE",
    "DATA_LOSS",
    "UNAUTHENTICATED",
};

constexpr std::array<std::string_view, kMaxStatusCode + 1> kValues = {
    "0", "1",  "2",  "3",  "4",  "5",  "6",  "7",  "8",
    "9", "10", "11", "12", "13", "14", "15", "16",
};

absl::string_view ToAbsl(std::string_view s) {
  return absl::string_view(s.data(), s.size());
}

}  // namespace

const Status& Status::OK = Status();
const Status& Status::CANCELLED = Status(StatusCode::CANCELLED, "");

std::string_view StatusCodeName(StatusCode code) {
  return IsValidStatusCode(code) ? kNames[code] : "UNKNOWN_CODE";
}

std::optional<StatusCode> StatusCodeFromName(std::string_view name) {
  for (int i = 0; i <= kMaxStatusCode; ++i) {
    if (kNames[i] == name) return static_cast<StatusCode>(i);
  }
  return std::nullopt;
}

std::string Status::ToString() const {
  if (ok()) return "OK";
  return absl::StrCat(ToAbsl(StatusCodeName(code_)), ": ", message_);
}

bool operator==(const Status& a, const Status& b) {
  return a.error_code() == b.error_code() &&
         a.error_message() == b.error_message() &&
         a.error_details() == b.error_details();
}

std::ostream& operator<<(std::ostream& os, const Status& status) {
  return os << status.ToString();
}

absl::Status ToAbslStatus(const Status& status) {
  if (status.ok()) return absl::OkStatus();
  absl::Status out(ToAbslStatusCode(status.error_code()),
                   status.error_message());
  if (!status.error_details().empty()) {
    out.SetPayload(ToAbsl(kStatusDetailsTypeUrl),
                   absl::Cord(status.error_details()));
  }
  return out;
}

StatusCode FromAbslStatusCode(absl::StatusCode code) {
  const int n = static_cast<int>(code);
  return IsValidStatusCode(n) ? static_cast<StatusCode>(n)
                              : StatusCode::UNKNOWN;
}

Status FromAbslStatus(const absl::Status& status) {
  if (status.ok()) return Status();
  auto details = status.GetPayload(ToAbsl(kStatusDetailsTypeUrl));
  return Status(FromAbslStatusCode(status.code()),
                std::string(status.message()),
                details ? std::string(*details) : std::string());
}

std::string_view GrpcStatusValue(StatusCode code) {
  return IsValidStatusCode(code) ? kValues[code] : kValues[StatusCode::UNKNOWN];
}

StatusCode ParseGrpcStatusValue(std::string_view value) {
  if (value.empty()) return StatusCode::UNKNOWN;
  int n = 0;
  for (char c : value) {
    if (c < '0' || c > '9') return StatusCode::UNKNOWN;
    n = n * 10 + (c - '0');
    // Stop before overflow; anything past 16 is out of range anyway.
    if (n > kMaxStatusCode) return StatusCode::UNKNOWN;
  }
  return static_cast<StatusCode>(n);
}

StatusCode StatusCodeFromHttpStatus(int http_status) {
  switch (http_status) {
    case 400:
      return StatusCode::INTERNAL;
    case 401:
      return StatusCode::UNAUTHENTICATED;
    case 403:
      return StatusCode::PERMISSION_DENIED;
    case 404:
      return StatusCode::UNIMPLEMENTED;
    case 429:
    case 502:
    case 503:
    case 504:
      return StatusCode::UNAVAILABLE;
    case 431:
      return StatusCode::INTERNAL;
    default:
      return StatusCode::UNKNOWN;
  }
}

Status StatusFromHttp2Status(int http_status) {
  return Status(
      StatusCodeFromHttpStatus(http_status),
      absl::StrCat("HTTP status ", http_status, " without grpc-status"));
}

StatusCode StatusCodeFromRstStream(uint32_t h2_error) {
  switch (h2_error) {
    case 0x7:  // REFUSED_STREAM: nothing was processed; retryable.
      return StatusCode::UNAVAILABLE;
    case 0x8:  // CANCEL
      return StatusCode::CANCELLED;
    case 0xb:  // ENHANCE_YOUR_CALM
      return StatusCode::RESOURCE_EXHAUSTED;
    case 0xc:  // INADEQUATE_SECURITY
      return StatusCode::PERMISSION_DENIED;
    default:
      return StatusCode::INTERNAL;
  }
}

}  // namespace rpc
