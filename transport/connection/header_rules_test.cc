// RFC 9113 8.2 / 8.3 field rules on their own (the Connection's use of them
// is tested in connection_test).

#include "transport/connection/header_rules.h"

#include <vector>

#include "gtest/gtest.h"

namespace transport {
namespace {

using F = std::vector<hpack::HeaderField>;

HeaderRuleError Check(HeaderKind kind, const F& fields,
                      HeaderInfo* info = nullptr, bool validate = false) {
  HeaderInfo scratch;
  return CheckHeaders(kind, fields, info != nullptr ? info : &scratch,
                      validate);
}

TEST(HeaderRulesTest, Sec8_3_1_ValidRequest) {
  HeaderInfo info;
  EXPECT_EQ(Check(HeaderKind::kRequest,
                  {{":method", "HEAD"},
                   {":scheme", "https"},
                   {":authority", "a"},
                   {":path", "/x"},
                   {"content-length", "12"},
                   {"te", "Trailers"}},
                  &info),
            HeaderRuleError::kOk);
  EXPECT_TRUE(info.is_head);
  EXPECT_EQ(info.content_length, 12);
  EXPECT_EQ(
      Check(HeaderKind::kRequest,
            {{":method", "OPTIONS"}, {":scheme", "http"}, {":path", "*"}}),
      HeaderRuleError::kOk);
  EXPECT_EQ(Check(HeaderKind::kRequest,
                  {{":method", "GET"}, {":scheme", "http"}, {":path", "*"}}),
            HeaderRuleError::kBadPath);
}

TEST(HeaderRulesTest, Sec8_3_2_Responses) {
  HeaderInfo info;
  EXPECT_EQ(Check(HeaderKind::kResponse, {{":status", "103"}}, &info),
            HeaderRuleError::kOk);
  EXPECT_TRUE(info.informational());
  EXPECT_EQ(Check(HeaderKind::kResponse, {{":status", "101"}}),
            HeaderRuleError::kBadStatus);
  EXPECT_EQ(Check(HeaderKind::kResponse, {{":status", "20"}}),
            HeaderRuleError::kBadStatus);
  EXPECT_EQ(Check(HeaderKind::kResponse, {{"a", "b"}}),
            HeaderRuleError::kMissingStatus);
  EXPECT_EQ(Check(HeaderKind::kResponse, {{":status", "200"}, {":path", "/"}}),
            HeaderRuleError::kUnknownPseudo);
}

TEST(HeaderRulesTest, Sec8_1_Trailers) {
  EXPECT_EQ(Check(HeaderKind::kTrailers, {{"grpc-status", "0"}}),
            HeaderRuleError::kOk);
  EXPECT_EQ(Check(HeaderKind::kTrailers, {{":status", "200"}}),
            HeaderRuleError::kPseudoInTrailers);
  EXPECT_EQ(Check(HeaderKind::kTrailers, {{"connection", "close"}}),
            HeaderRuleError::kConnectionSpecific);
}

TEST(HeaderRulesTest, Sec8_2_2_ConnectionSpecificFields) {
  for (const char* name : {"connection", "keep-alive", "proxy-connection",
                           "transfer-encoding", "upgrade"}) {
    EXPECT_EQ(Check(HeaderKind::kResponse, {{":status", "200"}, {name, "x"}}),
              HeaderRuleError::kConnectionSpecific)
        << name;
  }
  EXPECT_EQ(Check(HeaderKind::kResponse, {{":status", "200"}, {"te", "x"}}),
            HeaderRuleError::kBadTe);
}

TEST(HeaderRulesTest, ContentLength) {
  EXPECT_EQ(Check(HeaderKind::kResponse, {{":status", "200"},
                                          {"content-length", "1"},
                                          {"content-length", "1"}}),
            HeaderRuleError::kOk);
  EXPECT_EQ(Check(HeaderKind::kResponse, {{":status", "200"},
                                          {"content-length", "1"},
                                          {"content-length", "2"}}),
            HeaderRuleError::kBadContentLength);
  EXPECT_EQ(Check(HeaderKind::kResponse,
                  {{":status", "200"},
                   {"content-length", "99999999999999999999999"}}),
            HeaderRuleError::kBadContentLength);
  EXPECT_EQ(Check(HeaderKind::kResponse,
                  {{":status", "200"}, {"content-length", ""}}),
            HeaderRuleError::kBadContentLength);
}

TEST(HeaderRulesTest, ValidateFieldsForOutgoingBlocks) {
  EXPECT_EQ(Check(HeaderKind::kResponse, {{":status", "200"}, {"X-A", "1"}},
                  nullptr, /*validate=*/true),
            HeaderRuleError::kInvalidField);
  EXPECT_EQ(Check(HeaderKind::kResponse, {{":status", "200"}, {"X-A", "1"}},
                  nullptr, /*validate=*/false),
            HeaderRuleError::kOk);
}

TEST(HeaderRulesTest, EveryErrorHasAName) {
  for (int e = 0; e <= static_cast<int>(HeaderRuleError::kBadContentLength);
       ++e) {
    EXPECT_STRNE(HeaderRuleErrorName(static_cast<HeaderRuleError>(e)),
                 "unknown");
  }
}

}  // namespace
}  // namespace transport
