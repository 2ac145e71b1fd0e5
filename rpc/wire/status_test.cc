#include "rpc/wire/status.h"

#include <sstream>

#include "absl/status/status.h"
#include "absl/strings/cord.h"
#include "gtest/gtest.h"

namespace rpc {
namespace {

TEST(StatusCodeTest, NumbersAndNamesAreGrpcs) {
  // doc/statuscodes.md, in order.
  const char* names[] = {"OK",
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
                         "UNAUTHENTICATED"};
  static_assert(kMaxStatusCode == 16, "17 codes");
  for (int i = 0; i <= kMaxStatusCode; ++i) {
    const StatusCode code = static_cast<StatusCode>(i);
    EXPECT_EQ(StatusCodeName(code), names[i]);
    EXPECT_EQ(StatusCodeFromName(names[i]), code);
    // absl uses the same numbers and names.
    EXPECT_EQ(absl::StatusCodeToString(ToAbslStatusCode(code)), names[i]);
  }
  EXPECT_EQ(StatusCodeName(static_cast<StatusCode>(17)), "UNKNOWN_CODE");
  EXPECT_EQ(StatusCodeFromName("NOPE"), std::nullopt);
  // Unscoped, like grpc::StatusCode.
  EXPECT_EQ(rpc::OK, StatusCode::OK);
  EXPECT_EQ(UNAUTHENTICATED, 16);
}

TEST(StatusTest, GrpcPlusPlusShape) {
  Status ok;
  EXPECT_TRUE(ok.ok());
  EXPECT_EQ(ok.error_code(), StatusCode::OK);
  EXPECT_EQ(ok.error_message(), "");
  EXPECT_EQ(ok.error_details(), "");
  EXPECT_TRUE(Status::OK.ok());
  EXPECT_EQ(Status::CANCELLED.error_code(), StatusCode::CANCELLED);

  Status s(StatusCode::NOT_FOUND, "no such user");
  EXPECT_FALSE(s.ok());
  EXPECT_EQ(s.error_code(), StatusCode::NOT_FOUND);
  EXPECT_EQ(s.error_message(), "no such user");
  EXPECT_EQ(s.ToString(), "NOT_FOUND: no such user");
  std::ostringstream os;
  os << s;
  EXPECT_EQ(os.str(), "NOT_FOUND: no such user");

  Status d(StatusCode::INVALID_ARGUMENT, "bad", std::string("\x08\x03\0z", 4));
  EXPECT_EQ(d.error_details(), std::string("\x08\x03\0z", 4));
  EXPECT_NE(d, Status(StatusCode::INVALID_ARGUMENT, "bad"));
  EXPECT_EQ(d, Status(StatusCode::INVALID_ARGUMENT, "bad",
                      std::string("\x08\x03\0z", 4)));
}

TEST(StatusTest, AbslRoundTripEveryCode) {
  for (int i = 1; i <= kMaxStatusCode; ++i) {
    const Status s(static_cast<StatusCode>(i), "message " + std::to_string(i));
    const absl::Status a = ToAbslStatus(s);
    EXPECT_EQ(static_cast<int>(a.code()), i);
    EXPECT_EQ(a.message(), s.error_message());
    EXPECT_FALSE(a.GetPayload(kStatusDetailsTypeUrl.data()).has_value());
    EXPECT_EQ(FromAbslStatus(a), s);
  }
  EXPECT_TRUE(ToAbslStatus(Status()).ok());
  EXPECT_TRUE(FromAbslStatus(absl::OkStatus()).ok());
}

TEST(StatusTest, DetailsTravelAsPayload) {
  const std::string details(
      "\x08\x05\x12\x03"
      "abc\xff",
      8);
  const Status s(StatusCode::FAILED_PRECONDITION, "precondition", details);
  const absl::Status a = ToAbslStatus(s);
  auto payload = a.GetPayload("type.googleapis.com/google.rpc.Status");
  ASSERT_TRUE(payload.has_value());
  EXPECT_EQ(std::string(*payload), details);
  EXPECT_EQ(FromAbslStatus(a), s);

  // Other payloads are dropped; absl codes map back 1:1.
  absl::Status other = absl::DataLossError("lost");
  other.SetPayload("type.example.com/x", absl::Cord("y"));
  EXPECT_EQ(FromAbslStatus(other), Status(StatusCode::DATA_LOSS, "lost"));
}

TEST(StatusTest, OkDropsMessageInAbsl) {
  // An OK status has nothing to carry (absl drops message and payload).
  EXPECT_EQ(ToAbslStatus(Status(StatusCode::OK, "ignored")), absl::OkStatus());
}

TEST(GrpcStatusValueTest, EncodesWithoutLeadingZeros) {
  EXPECT_EQ(GrpcStatusValue(StatusCode::OK), "0");
  EXPECT_EQ(GrpcStatusValue(StatusCode::CANCELLED), "1");
  EXPECT_EQ(GrpcStatusValue(StatusCode::UNAUTHENTICATED), "16");
  EXPECT_EQ(GrpcStatusValue(static_cast<StatusCode>(99)), "2");
  for (int i = 0; i <= kMaxStatusCode; ++i) {
    const StatusCode code = static_cast<StatusCode>(i);
    EXPECT_EQ(GrpcStatusValue(code), std::to_string(i));
    EXPECT_EQ(ParseGrpcStatusValue(GrpcStatusValue(code)), code);
  }
}

TEST(GrpcStatusValueTest, ParseRejectsToUnknown) {
  EXPECT_EQ(ParseGrpcStatusValue("14"), StatusCode::UNAVAILABLE);
  EXPECT_EQ(ParseGrpcStatusValue("007"), StatusCode::PERMISSION_DENIED);
  for (const char* bad : {"", "17", "99", "100", "-1", "+1", " 1", "1 ", "1a",
                          "0x1", "99999999999999999999999", "\xd9\xa1"}) {
    EXPECT_EQ(ParseGrpcStatusValue(bad), StatusCode::UNKNOWN) << bad;
  }
}

TEST(HttpStatusTest, MappingTable) {
  // doc/http-grpc-status-mapping.md
  EXPECT_EQ(StatusCodeFromHttpStatus(400), StatusCode::INTERNAL);
  EXPECT_EQ(StatusCodeFromHttpStatus(401), StatusCode::UNAUTHENTICATED);
  EXPECT_EQ(StatusCodeFromHttpStatus(403), StatusCode::PERMISSION_DENIED);
  EXPECT_EQ(StatusCodeFromHttpStatus(404), StatusCode::UNIMPLEMENTED);
  EXPECT_EQ(StatusCodeFromHttpStatus(429), StatusCode::UNAVAILABLE);
  EXPECT_EQ(StatusCodeFromHttpStatus(431), StatusCode::INTERNAL);
  EXPECT_EQ(StatusCodeFromHttpStatus(502), StatusCode::UNAVAILABLE);
  EXPECT_EQ(StatusCodeFromHttpStatus(503), StatusCode::UNAVAILABLE);
  EXPECT_EQ(StatusCodeFromHttpStatus(504), StatusCode::UNAVAILABLE);
  for (int other : {0, 100, 200, 204, 302, 402, 415, 500, 505, 999}) {
    EXPECT_EQ(StatusCodeFromHttpStatus(other), StatusCode::UNKNOWN) << other;
  }
  const Status s = StatusFromHttp2Status(503);
  EXPECT_EQ(s.error_code(), StatusCode::UNAVAILABLE);
  EXPECT_EQ(s.error_message(), "HTTP status 503 without grpc-status");
}

TEST(RstStreamTest, MappingTable) {
  // PROTOCOL-HTTP2.md, "Errors".
  EXPECT_EQ(StatusCodeFromRstStream(0x0), StatusCode::INTERNAL);  // NO_ERROR
  EXPECT_EQ(StatusCodeFromRstStream(0x1), StatusCode::INTERNAL);
  EXPECT_EQ(StatusCodeFromRstStream(0x2), StatusCode::INTERNAL);
  EXPECT_EQ(StatusCodeFromRstStream(0x3), StatusCode::INTERNAL);
  EXPECT_EQ(StatusCodeFromRstStream(0x4), StatusCode::INTERNAL);
  EXPECT_EQ(StatusCodeFromRstStream(0x6), StatusCode::INTERNAL);
  EXPECT_EQ(StatusCodeFromRstStream(0x7), StatusCode::UNAVAILABLE);
  EXPECT_EQ(StatusCodeFromRstStream(0x8), StatusCode::CANCELLED);
  EXPECT_EQ(StatusCodeFromRstStream(0x9), StatusCode::INTERNAL);
  EXPECT_EQ(StatusCodeFromRstStream(0xa), StatusCode::INTERNAL);
  EXPECT_EQ(StatusCodeFromRstStream(0xb), StatusCode::RESOURCE_EXHAUSTED);
  EXPECT_EQ(StatusCodeFromRstStream(0xc), StatusCode::PERMISSION_DENIED);
  EXPECT_EQ(StatusCodeFromRstStream(0xd), StatusCode::INTERNAL);
  EXPECT_EQ(StatusCodeFromRstStream(0xffff), StatusCode::INTERNAL);
}

}  // namespace
}  // namespace rpc
