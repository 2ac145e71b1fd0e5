// Named errors (connection_error.h): every reason has its own stable name,
// and the name reaches the GOAWAY, OnConnectionError and OnStreamFailed.

#include "transport/connection/connection_error.h"

#include <cctype>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "transport/connection/connection.h"
#include "transport/testing/connection_test_util.h"

namespace transport {
namespace testing {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;
using ::testing::SizeIs;

// Non-empty, lowercase snake_case, not the out-of-range "unknown".
void ExpectWellFormed(std::string_view name) {
  EXPECT_FALSE(name.empty());
  EXPECT_NE(name, "unknown");
  for (const char c : name) {
    EXPECT_TRUE(std::islower(static_cast<unsigned char>(c)) || c == '_')
        << name;
  }
}

// Every value up to `last` has a well-formed name of its own; the next is
// out of range.
template <typename Reason>
void ExpectDistinctNames(Reason last) {
  std::set<std::string_view> names;
  const int n = static_cast<int>(last) + 1;
  for (int i = 0; i < n; ++i) {
    const std::string_view name = Name(static_cast<Reason>(i));
    ExpectWellFormed(name);
    EXPECT_TRUE(names.insert(name).second) << "repeated: " << name;
  }
  EXPECT_EQ(names.size(), static_cast<size_t>(n));
  EXPECT_EQ(Name(static_cast<Reason>(n)), "unknown");
}

TEST(ConnectionErrorTest, EveryConnectionReasonHasADistinctName) {
  ExpectDistinctNames(kLastConnectionErrorReason);
}

TEST(ConnectionErrorTest, EveryStreamReasonHasADistinctName) {
  ExpectDistinctNames(kLastStreamErrorReason);
}

TEST(ConnectionErrorTest, DebugDataIsTheNameAndTheDetail) {
  const ConnectionError ok;
  EXPECT_TRUE(ok.ok());
  EXPECT_EQ(ok.ToString(), "ok");

  const ConnectionError flood(Http2ErrorCode::kEnhanceYourCalm,
                              ConnectionErrorReason::kRstStreamFlood);
  EXPECT_FALSE(flood.ok());
  EXPECT_EQ(flood.DebugData(), "rst_stream_flood");
  EXPECT_EQ(flood.ToString(),
            "connection error ENHANCE_YOUR_CALM: rst_stream_flood");

  const ConnectionError closed(Http2ErrorCode::kStreamClosed,
                               ConnectionErrorReason::kHeadersOnClosedStream,
                               "stream 7");
  EXPECT_EQ(closed.DebugData(), "headers_on_closed_stream: stream 7");
  EXPECT_NE(closed, flood);

  const StreamError rule{Http2ErrorCode::kProtocolError,
                         StreamErrorReason::kHeaderRule, "missing_scheme"};
  EXPECT_EQ(rule.ToString(), "header_rule: missing_scheme");
  const StreamError plain{
      Http2ErrorCode::kStreamClosed, StreamErrorReason::kStreamClosed, {}};
  EXPECT_EQ(plain.ToString(), "stream_closed");
}

class NamedErrorsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    conn_ = std::make_unique<Connection>(ServerOptions(), &events_, 0);
    events_.connection = conn_.get();
    peer_.Preface().SettingsAck();
    ASSERT_TRUE(Feed());
    peer_.Read(conn_.get());
    events_.Clear();
  }
  bool Feed() { return conn_->Receive(peer_.TakeSlice(), 0); }
  // The debug data of the GOAWAY the connection wrote ("" if none).
  std::string GoAwayDebug() {
    std::string debug;
    for (const PeerFrame& f : peer_.Read(conn_.get())) {
      if (f.type == FrameType::kGoAway) debug = f.debug;
    }
    return debug;
  }

  ScriptedPeer peer_{Role::kClient};
  RecordingListener events_;
  std::unique_ptr<Connection> conn_;
};

// A request that breaks a header rule (8.3.1) is reset; the reset names the
// rule.
TEST_F(NamedErrorsTest, StreamResetNamesTheHeaderRule) {
  peer_.Headers(1, GetRequest(), false);
  Feed();
  peer_.Headers(1, {{":status", "200"}}, true);  // Trailers with a pseudo.
  Feed();
  EXPECT_THAT(events_.Matching("reset"),
              ElementsAre("reset 1 PROTOCOL_ERROR local"));
  ASSERT_THAT(events_.stream_errors(), SizeIs(1));
  const auto& [id, error] = events_.stream_errors()[0];
  EXPECT_EQ(id, 1u);
  EXPECT_EQ(error.code, Http2ErrorCode::kProtocolError);
  EXPECT_EQ(error.reason, StreamErrorReason::kHeaderRule);
  EXPECT_EQ(error.detail, "pseudo_in_trailers");
  EXPECT_FALSE(conn_->dead());
}

// OnStreamFailed may call back into the Connection (connection.h). A
// listener that resets the stream itself from it has made the stream's
// ending its own (OnStreamClosed only, as for any ResetStream); one that fails
// the connection sees the stream reset once, by the connection's end. Either
// way one RST_STREAM goes out and no OnStreamReset follows the callback.
class ActingOnStreamFailed : public RecordingListener {
 public:
  enum class Act { kResetStream, kGoAway } act = Act::kResetStream;
  void OnStreamFailed(uint32_t id, const StreamError& error) override {
    RecordingListener::OnStreamFailed(id, error);
    if (act == Act::kResetStream) {
      connection->ResetStream(id, Http2ErrorCode::kCancel);
    } else {
      connection->GoAway(Http2ErrorCode::kInternalError, "giving up");
    }
  }
};

TEST(StreamFailedCallbackTest, CallingBackFromTheCallbackEndsTheStreamOnce) {
  for (auto act : {ActingOnStreamFailed::Act::kResetStream,
                   ActingOnStreamFailed::Act::kGoAway}) {
    const bool goaway = act == ActingOnStreamFailed::Act::kGoAway;
    SCOPED_TRACE(goaway ? "goaway" : "reset_stream");
    ScriptedPeer peer(Role::kClient);
    ActingOnStreamFailed events;
    events.act = act;
    Connection conn(ServerOptions(), &events, 0);
    events.connection = &conn;
    peer.Preface().SettingsAck();
    ASSERT_TRUE(conn.Receive(peer.TakeSlice(), 0));
    peer.Read(&conn);
    events.Clear();
    peer.Headers(1, GetRequest(), false);
    peer.Headers(1, {{":status", "200"}}, true);  // Trailers with a pseudo.
    conn.Receive(peer.TakeSlice(), 0);
    EXPECT_THAT(events.stream_errors(), SizeIs(1));
    if (goaway) {
      EXPECT_THAT(events.Matching("reset 1"),
                  ElementsAre("reset 1 INTERNAL_ERROR local"));
    } else {
      EXPECT_THAT(events.Matching("reset 1"), IsEmpty());
    }
    EXPECT_THAT(events.Matching("closed 1"), SizeIs(1));
    int rst_streams = 0;
    for (const PeerFrame& f : peer.Read(&conn)) {
      if (f.type == FrameType::kRstStream && f.stream_id == 1) {
        ++rst_streams;
        EXPECT_EQ(f.code, Http2ErrorCode::kProtocolError);
      }
    }
    EXPECT_EQ(rst_streams, 1);
  }
}

// An invalid field (8.2.1, found by the HPACK decoder) is a stream error
// named after the decoder's error.
TEST_F(NamedErrorsTest, StreamResetNamesTheHpackFieldError) {
  peer_.Headers(1, GetRequest(), false);
  Feed();
  peer_.Headers(1, {{"x-bad", "a\nb"}}, true);
  Feed();
  ASSERT_THAT(events_.stream_errors(), SizeIs(1));
  EXPECT_EQ(events_.stream_errors()[0].second.reason,
            StreamErrorReason::kBadField);
  EXPECT_EQ(events_.stream_errors()[0].second.detail, "invalid_field_value");
}

// A corrupt block is COMPRESSION_ERROR (4.3): the GOAWAY and the listener
// say hpack_error and which HPACK rule.
TEST_F(NamedErrorsTest, HpackErrorNamesTheDecoderError) {
  peer_.HeadersFragment(1, "\x80", true, true);  // Index 0.
  EXPECT_FALSE(Feed());
  EXPECT_EQ(GoAwayDebug(), "hpack_error: index_zero");
  EXPECT_EQ(conn_->error().code(), Http2ErrorCode::kCompressionError);
  EXPECT_EQ(events_.connection_error().reason(),
            ConnectionErrorReason::kHpackError);
  EXPECT_EQ(events_.connection_error().detail(), "index_zero");
}

// The frame decoder's connection errors keep its rule's name as detail.
TEST_F(NamedErrorsTest, FrameDecoderErrorNamesTheFrameRule) {
  peer_.Raw(std::string("\x00\x00\x03\x06\x00\x00\x00\x00\x00xyz", 12));
  EXPECT_FALSE(Feed());  // PING of 3 octets: FRAME_SIZE_ERROR (6.7).
  EXPECT_EQ(GoAwayDebug(), "bad_frame: bad_ping_length");
  EXPECT_EQ(conn_->error().reason(), ConnectionErrorReason::kBadFrame);
  EXPECT_EQ(conn_->error().code(), Http2ErrorCode::kFrameSizeError);
}

// The transport closing and the application's GoAway are named too.
TEST_F(NamedErrorsTest, TransportClosedAndApplicationGoAway) {
  conn_->OnTransportClosed();
  EXPECT_EQ(conn_->error().reason(), ConnectionErrorReason::kTransportClosed);
  EXPECT_TRUE(events_.connection_error().ok());  // Not reported.

  Connection other(ServerOptions(), &events_, 0);
  other.GoAway(Http2ErrorCode::kEnhanceYourCalm, "too_many_pings");
  EXPECT_EQ(other.error().reason(), ConnectionErrorReason::kApplicationGoAway);
  EXPECT_EQ(other.error().detail(), "too_many_pings");
}

}  // namespace
}  // namespace testing
}  // namespace transport
