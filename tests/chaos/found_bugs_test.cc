// Transport bugs the chaos suite found (README.md, known bugs 6 and 9), as
// sans-IO regression tests of a client Connection against a scripted
// server.

#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "transport/connection/connection.h"
#include "transport/testing/connection_test_util.h"

namespace transport {
namespace testing {
namespace {

using ::testing::Contains;
using ::testing::Not;
using ::testing::StartsWith;

class FoundBugsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    events_.connection = &conn_;
    peer_.Preface({}).SettingsAck();
    ASSERT_TRUE(conn_.Receive(peer_.TakeSlice(), now_));
  }
  RecordingListener events_;
  int64_t now_ = 0;
  Connection conn_{ClientOptions(), &events_, now_};
  ScriptedPeer peer_{Role::kServer};
};

// Bug 6. Debian's grpc++ server sometimes ends a stream twice,
// HEADERS(END_STREAM) + RST_STREAM and then again HEADERS(END_STREAM) +
// RST_STREAM (seen on the wire through the fault proxy, in ChaosTest.Storm
// and DeadlineStorm against grpc++). Our client answers the second HEADERS
// with GOAWAY STREAM_CLOSED ("HEADERS on closed stream"), which fails every
// other call on the connection; grpc++'s and nghttp2's clients ignore frames
// on a stream they closed. The connection must live and the other streams
// finish.
TEST_F(FoundBugsTest, GrpcppSecondTrailersAfterResetAreIgnored) {
  ASSERT_TRUE(conn_.SubmitRequest(View(GetRequest()), true).ok());  // 1
  ASSERT_TRUE(conn_.SubmitRequest(View(GetRequest()), true).ok());  // 3
  peer_.Read(&conn_);
  events_.Clear();

  peer_.Headers(1, Response(), false)
      .Headers(1, {{"grpc-status", "4"}}, true)
      .RstStream(1, Http2ErrorCode::kNoError)
      .Headers(1, {{"grpc-status", "1"}}, true)
      .RstStream(1, Http2ErrorCode::kNoError);
  EXPECT_TRUE(conn_.Receive(peer_.TakeSlice(), now_));
  EXPECT_THAT(ToStrings(peer_.Read(&conn_)),
              Not(Contains(StartsWith("GOAWAY"))));

  // The other stream on the connection is unaffected.
  peer_.Headers(3, Response(), false).Headers(3, {{"grpc-status", "0"}}, true);
  EXPECT_TRUE(conn_.Receive(peer_.TakeSlice(), now_));
  EXPECT_THAT(events_.lines(), Contains("trailers 3 grpc-status=0"));
}

// Bug 9. The RST_STREAM flood budget (CVE-2023-44487, 1000 then 200/s)
// also counts the server's resets on a client connection: a server that
// answers 1,100 cancelled or refused calls with RST_STREAM makes our client
// close its own connection ("ENHANCE_YOUR_CALM: RST_STREAM flood"; seen
// against grpc++ in ChaosTest.ResetBurst). Rapid reset is an attack on a
// server's work; a server's resets cost a client nothing. The connection
// must live.
TEST_F(FoundBugsTest, ServerResetsAreNotAFloodOnAClient) {
  std::vector<uint32_t> ids;
  for (int i = 0; i < 1100; ++i) {
    absl::StatusOr<uint32_t> id = conn_.SubmitRequest(View(GetRequest()), true);
    ASSERT_TRUE(id.ok()) << id.status();
    ids.push_back(*id);
  }
  peer_.Read(&conn_);
  for (const uint32_t id : ids) peer_.RstStream(id, Http2ErrorCode::kCancel);
  EXPECT_TRUE(conn_.Receive(peer_.TakeSlice(), now_));
  EXPECT_THAT(ToStrings(peer_.Read(&conn_)),
              Not(Contains(StartsWith("GOAWAY"))));
  EXPECT_THAT(events_.lines(), Not(Contains(StartsWith("connection_error"))));
}

}  // namespace
}  // namespace testing
}  // namespace transport
