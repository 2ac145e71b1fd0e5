// Found by the chaos suite (ChaosTest.Storm against grpc++): Debian's grpc++
// server sometimes ends a stream twice, HEADERS(END_STREAM) + RST_STREAM and
// then again HEADERS(END_STREAM) + RST_STREAM, seen on the wire through the
// fault proxy after a call's server-side deadline. Our client connection
// answers the second HEADERS with GOAWAY STREAM_CLOSED ("HEADERS on closed
// stream"), which fails every other call on the connection. grpc++'s and
// nghttp2's clients ignore frames on a stream they closed. The connection
// must live and the other streams finish.
//
// DISABLED_ until the fix lands in transport/ (owned by the connection work
// of issue 11); run it with --gtest_also_run_disabled_tests.

#include <memory>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "transport/connection.h"
#include "transport/connection_test_util.h"

namespace transport {
namespace testing {
namespace {

using ::testing::Contains;
using ::testing::Not;
using ::testing::StartsWith;

TEST(GrpcppDoubleTrailersTest, DISABLED_SecondTrailersAfterResetAreIgnored) {
  RecordingListener events;
  int64_t now = 0;
  Connection conn(ClientOptions(), &events, now);
  events.connection = &conn;
  ScriptedPeer peer(Role::kServer);
  peer.Preface({}).SettingsAck();
  ASSERT_TRUE(conn.Receive(peer.TakeSlice(), now));
  ASSERT_TRUE(conn.SubmitRequest(View(GetRequest()), true).ok());  // 1
  ASSERT_TRUE(conn.SubmitRequest(View(GetRequest()), true).ok());  // 3
  peer.Read(&conn);
  events.Clear();

  peer.Headers(1, Response(), false)
      .Headers(1, {{"grpc-status", "4"}}, true)
      .RstStream(1, Http2ErrorCode::kNoError)
      .Headers(1, {{"grpc-status", "1"}}, true)
      .RstStream(1, Http2ErrorCode::kNoError);
  EXPECT_TRUE(conn.Receive(peer.TakeSlice(), now));
  EXPECT_THAT(ToStrings(peer.Read(&conn)), Not(Contains(StartsWith("GOAWAY"))));

  // The other stream on the connection is unaffected.
  peer.Headers(3, Response(), false).Headers(3, {{"grpc-status", "0"}}, true);
  EXPECT_TRUE(conn.Receive(peer.TakeSlice(), now));
  EXPECT_THAT(events.lines(), Contains("trailers 3 grpc-status=0"));
}

}  // namespace
}  // namespace testing
}  // namespace transport
