// Connection limits: flow control on receipt (RFC 9113 6.9) and every bound
// against abusive peers (rapid reset, CONTINUATION flood, HPACK bomb, frame
// floods, a peer that never reads). Each limit is hit here.

#include <memory>
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
using ::testing::StartsWith;

constexpr int64_t kSecond = int64_t{1000} * 1000 * 1000;

class LimitsTest : public ::testing::Test {
 protected:
  void Init(const ConnectionOptions& options) {
    conn_ = std::make_unique<Connection>(options, &events_, now_);
    events_.connection = conn_.get();
    peer_.Preface(settings_).SettingsAck();
    ASSERT_TRUE(Feed());
    Read();
    events_.Clear();
  }
  bool Feed() { return conn_->Receive(peer_.TakeSlice(), now_); }
  Lines Read() {
    read_ = peer_.Read(conn_.get());
    return ToStrings(read_);
  }
  // The connection failed for `reason`: error(), OnConnectionError and the
  // debug data of the GOAWAY last Read() all name it.
  void ExpectFailed(ConnectionErrorReason reason) {
    EXPECT_EQ(conn_->error().reason(), reason) << conn_->error();
    EXPECT_EQ(events_.connection_error(), conn_->error());
    std::string debug = "(no GOAWAY)";
    for (const PeerFrame& f : read_) {
      if (f.type == FrameType::kGoAway) debug = f.debug;
    }
    EXPECT_EQ(debug, conn_->error().DebugData());
    EXPECT_THAT(debug, StartsWith(std::string(Name(reason))));
  }
  Lines Exchange() {
    Feed();
    return Read();
  }
  // The last frame the connection wrote (after feeding).
  std::string LastFrame() {
    Lines out = Exchange();
    return out.empty() ? "" : out.back();
  }

  std::vector<Setting> settings_;
  std::vector<PeerFrame> read_;  // What the last Read() returned.
  ScriptedPeer peer_{Role::kClient};
  RecordingListener events_;
  std::unique_ptr<Connection> conn_;
  int64_t now_ = 0;
};

// ---- Receive-side flow control (6.9) ----

// With receive_buffer_limit 0 the connection window alone bounds what is
// buffered: its credit comes back only as the application consumes.
ConnectionOptions SmallWindows() {
  ConnectionOptions o = ServerOptions();
  o.local_settings.initial_window_size = 65535;
  o.connection_window = 65535;
  o.receive_buffer_limit = 0;
  return o;
}

TEST_F(LimitsTest, Sec6_9_DataBeyondStreamWindowIsFlowControlError) {
  ConnectionOptions o = SmallWindows();
  o.connection_window = 1 << 20;
  Init(o);
  events_.auto_consume = false;
  peer_.Headers(1, PostRequest(), false);
  for (int i = 0; i < 4; ++i) peer_.Data(1, std::string(16383, 'a'), false);
  peer_.Data(1, std::string(4, 'a'), false);  // 65536: one octet over.
  EXPECT_THAT(Exchange(), ElementsAre("RST_STREAM 1 FLOW_CONTROL_ERROR"));
  EXPECT_FALSE(conn_->dead());
  EXPECT_EQ(conn_->unconsumed_receive_bytes(), 0u);  // Given back on close.
}

TEST_F(LimitsTest, Sec6_9_DataBeyondConnectionWindowIsFlowControlError) {
  ConnectionOptions o = SmallWindows();
  o.local_settings.initial_window_size = 1 << 20;
  Init(o);
  events_.auto_consume = false;
  peer_.Headers(1, PostRequest(), false).Headers(3, PostRequest(), false);
  for (int i = 0; i < 2; ++i) peer_.Data(1, std::string(16384, 'a'), false);
  for (int i = 0; i < 2; ++i) peer_.Data(3, std::string(16384, 'a'), false);
  EXPECT_FALSE(Feed());
  EXPECT_THAT(Read(), ElementsAre("GOAWAY 3 FLOW_CONTROL_ERROR"));
  ExpectFailed(ConnectionErrorReason::kConnectionWindowExceeded);
  EXPECT_EQ(conn_->error().detail(), "stream 3");
}

TEST_F(LimitsTest, Sec6_9_WindowUpdatesFollowTheApplication) {
  Init(SmallWindows());
  events_.auto_consume = false;
  peer_.Headers(1, PostRequest(), false)
      .Data(1, std::string(16384, 'a'), false)
      .Data(1, std::string(16384, 'a'), false)
      .Data(1, std::string(16384, 'a'), false);
  EXPECT_THAT(Exchange(), IsEmpty());  // Nothing consumed: no credit.
  EXPECT_EQ(conn_->unconsumed_receive_bytes(), 3u * 16384);
  conn_->ConsumeData(1, 20000);
  EXPECT_THAT(Read(), IsEmpty());  // Below half the window.
  conn_->ConsumeData(1, 20000);
  EXPECT_THAT(Read(),
              ElementsAre("WINDOW_UPDATE 0 40000", "WINDOW_UPDATE 1 40000"));
}

TEST_F(LimitsTest, Sec6_9_PaddingIsConsumedAtOnce) {
  Init(SmallWindows());
  events_.auto_consume = false;
  peer_.Headers(1, PostRequest(), false);
  for (int i = 0; i < 200; ++i) peer_.PaddedData(1, "x", 254, false);
  Exchange();
  // 200 frames of 256 octets: the padding (255 each) went back by itself.
  EXPECT_EQ(conn_->unconsumed_receive_bytes(), 200u);
  EXPECT_FALSE(conn_->dead());
  EXPECT_EQ(events_.body(1), std::string(200, 'x'));
}

TEST_F(LimitsTest, Sec6_9_1_StreamWindowUpdateOverflowIsStreamError) {
  Init(ServerOptions());
  peer_.Headers(1, GetRequest(), false).WindowUpdate(1, kMaxWindowSize);
  EXPECT_THAT(Exchange(), ElementsAre("RST_STREAM 1 FLOW_CONTROL_ERROR"));
  EXPECT_FALSE(conn_->dead());
}

TEST_F(LimitsTest, Sec6_9_1_ConnectionWindowUpdateOverflowIsConnectionError) {
  Init(ServerOptions());
  peer_.WindowUpdate(0, kMaxWindowSize);
  EXPECT_FALSE(Feed());
  EXPECT_THAT(Read(), ElementsAre("GOAWAY 0 FLOW_CONTROL_ERROR"));
  ExpectFailed(ConnectionErrorReason::kConnectionWindowOverflow);
}

TEST_F(LimitsTest, Sec6_9_SendWaitsForTheWindowAndSaysWhenWritable) {
  settings_ = {{SettingId::kInitialWindowSize, 10}};
  Init(ServerOptions());
  events_.record_noise = true;
  peer_.Headers(1, GetRequest(), true);
  Feed();
  ASSERT_TRUE(conn_->SubmitHeaders(1, View(Response()), false).ok());
  SliceBuffer body;
  body.Append(std::string(30, 'x'));
  ASSERT_TRUE(conn_->SubmitData(1, std::move(body), false).ok());
  EXPECT_THAT(Read(), ElementsAre("HEADERS 1 :status=200",
                                  "DATA 1 " + std::string(10, 'x')));
  EXPECT_EQ(conn_->queued_send_bytes(), 20u);
  peer_.WindowUpdate(1, 100);
  EXPECT_THAT(Exchange(), ElementsAre("DATA 1 " + std::string(20, 'x')));
  EXPECT_THAT(events_.Matching("writable"), ElementsAre("writable 1"));
}

// ---- Attacks ----

TEST_F(LimitsTest, RapidResetIsEnhanceYourCalm) {  // CVE-2023-44487.
  ConnectionOptions o = ServerOptions();
  o.stream_resets = {10, 1};
  Init(o);
  uint32_t id = 1;
  for (int i = 0; i < 10; ++i, id += 2) {
    peer_.Headers(id, GetRequest(), false)
        .RstStream(id, Http2ErrorCode::kCancel);
  }
  EXPECT_TRUE(Feed());
  peer_.Headers(id, GetRequest(), false).RstStream(id, Http2ErrorCode::kCancel);
  EXPECT_FALSE(Feed());
  EXPECT_EQ(Read().back(), "GOAWAY 21 ENHANCE_YOUR_CALM");
  ExpectFailed(ConnectionErrorReason::kRstStreamFlood);
  EXPECT_EQ(conn_->error().DebugData(), "rst_stream_flood");
}

TEST_F(LimitsTest, ResetsWithinTheRateAreFine) {
  ConnectionOptions o = ServerOptions();
  o.stream_resets = {10, 1};
  Init(o);
  for (uint32_t id = 1; id < 200; id += 2) {
    now_ += kSecond;
    peer_.Headers(id, GetRequest(), false)
        .RstStream(id, Http2ErrorCode::kCancel);
    ASSERT_TRUE(Feed()) << id;
  }
}

TEST_F(LimitsTest, StreamErrorsCountAsResets) {
  ConnectionOptions o = ServerOptions();
  o.stream_resets = {5, 1};
  Init(o);
  for (uint32_t id = 1; id <= 11; id += 2) {
    peer_.Headers(id, {{":method", "GET"}}, true);  // Malformed each time.
  }
  EXPECT_FALSE(Feed());
  EXPECT_EQ(Read().back(), "GOAWAY 0 ENHANCE_YOUR_CALM");
  ExpectFailed(ConnectionErrorReason::kStreamErrorFlood);
}

TEST_F(LimitsTest, ContinuationFloodByOctets) {
  ConnectionOptions o = ServerOptions();
  o.max_header_block_bytes = 32 << 10;
  Init(o);
  const std::string block = peer_.Encode(GetRequest());
  peer_.HeadersFragment(1, block, true, false);
  for (int i = 0; i < 10; ++i) {
    peer_.Continuation(1, std::string(8000, 'x'), false);
  }
  EXPECT_FALSE(Feed());
  EXPECT_EQ(Read().back(), "GOAWAY 0 ENHANCE_YOUR_CALM");
  ExpectFailed(ConnectionErrorReason::kHeaderBlockTooLarge);
  EXPECT_THAT(events_.Matching("headers"), IsEmpty());
}

TEST_F(LimitsTest, ContinuationFloodByFrames) {
  Init(ServerOptions());
  const std::string block = peer_.Encode(GetRequest());
  peer_.HeadersFragment(1, block, true, false);
  for (int i = 0; i < 1000; ++i) peer_.Continuation(1, "", false);
  EXPECT_FALSE(Feed());
  EXPECT_EQ(Read().back(), "GOAWAY 0 ENHANCE_YOUR_CALM");
  ExpectFailed(ConnectionErrorReason::kContinuationFlood);
}

// The frame bound is exact: a block in HEADERS plus max_continuation_frames
// CONTINUATIONs is accepted, one more is the flood.
TEST_F(LimitsTest, ContinuationFramesExactlyAtTheLimit) {
  ConnectionOptions o = ServerOptions();
  o.max_continuation_frames = 3;
  Init(o);
  const std::string block = peer_.Encode(GetRequest());
  peer_.HeadersFragment(1, block, true, false)
      .Continuation(1, "", false)
      .Continuation(1, "", false)
      .Continuation(1, "", true);
  EXPECT_THAT(Exchange(), IsEmpty());
  EXPECT_THAT(events_.Matching("headers 1 end"), SizeIs(1));
  peer_.HeadersFragment(3, peer_.Encode(GetRequest()), true, false);
  for (int i = 0; i < 3; ++i) peer_.Continuation(3, "", false);
  peer_.Continuation(3, "", true);  // The 4th.
  EXPECT_FALSE(Feed());
  EXPECT_THAT(Read(), ElementsAre("GOAWAY 1 ENHANCE_YOUR_CALM"));
  ExpectFailed(ConnectionErrorReason::kContinuationFlood);
  EXPECT_THAT(events_.Matching("headers 3"), IsEmpty());
}

TEST_F(LimitsTest, HeaderBlockAcrossContinuationsWithinLimits) {
  Init(ServerOptions());
  Fields f = GetRequest();
  f.emplace_back("x-long", std::string(12000, '~'));
  peer_.Headers(1, f, true, /*max_frame_size=*/1000);  // 1 + 12 CONTINUATIONs.
  EXPECT_THAT(Exchange(), IsEmpty());
  EXPECT_THAT(events_.Matching("headers 1 end"), SizeIs(1));
}

// A 3000-octet field enters the peer's table with request 1, then request 3
// references it `copies` times (one octet each), then request 5 is plain.
void IndexThenReference(ScriptedPeer* peer, int copies) {
  Fields first = GetRequest();
  first.emplace_back("x-bomb", std::string(3000, 'b'));
  peer->Headers(1, first, true);
  Fields many = GetRequest();
  for (int i = 0; i < copies; ++i) {
    many.emplace_back("x-bomb", std::string(3000, 'b'));
  }
  peer->Headers(3, many, true);
  peer->Headers(5, GetRequest(), true);
}

// The rule: only a block past the hard cap, or an HPACK bomb, is a
// connection error. A block decoding to more than 64 times both its octets
// and our limit is the bomb: GOAWAY ENHANCE_YOUR_CALM "hpack_bomb".
TEST_F(LimitsTest, HpackBombIsAConnectionError) {
  Init(ServerOptions());
  IndexThenReference(&peer_, 1000);  // 3 MB decoded from about 2 KB.
  ASSERT_LT(peer_.pending_bytes(), 8000u);
  EXPECT_FALSE(Feed());
  EXPECT_THAT(Read(), ElementsAre("GOAWAY 1 ENHANCE_YOUR_CALM"));
  ExpectFailed(ConnectionErrorReason::kHpackBomb);
  EXPECT_THAT(events_.Matching("headers"),
              ElementsAre(::testing::StartsWith("headers 1 end")));
}

// References that overflow the limit moderately (30 KB decoded against the
// 16 KiB limit) are that stream's error only.
TEST_F(LimitsTest, ModerateOverflowByReferenceIsAStreamError) {
  Init(ServerOptions());
  IndexThenReference(&peer_, 10);
  EXPECT_THAT(Exchange(), ElementsAre("RST_STREAM 3 PROTOCOL_ERROR"));
  EXPECT_FALSE(conn_->dead());
  ASSERT_THAT(events_.stream_errors(), SizeIs(1));
  EXPECT_EQ(events_.stream_errors()[0].first, 3u);
  EXPECT_EQ(events_.stream_errors()[0].second.reason,
            StreamErrorReason::kHeaderListTooLarge);
  EXPECT_THAT(events_.Matching("headers"),
              ElementsAre(::testing::StartsWith("headers 1 end"),
                          ::testing::StartsWith("headers 5 end")));
}

TEST_F(LimitsTest, SettingsFlood) {
  ConnectionOptions o = ServerOptions();
  o.settings_frames = {5, 1};
  Init(o);  // The preface's SETTINGS took one token.
  for (int i = 0; i < 5; ++i) peer_.Settings({});
  EXPECT_FALSE(Feed());
  EXPECT_EQ(Read().back(), "GOAWAY 0 ENHANCE_YOUR_CALM");
  ExpectFailed(ConnectionErrorReason::kSettingsFlood);
}

TEST_F(LimitsTest, PingFlood) {
  ConnectionOptions o = ServerOptions();
  o.pings = {5, 1};
  Init(o);
  for (int i = 0; i < 6; ++i) peer_.Ping(i);
  EXPECT_FALSE(Feed());
  EXPECT_EQ(Read().back(), "GOAWAY 0 ENHANCE_YOUR_CALM");
  ExpectFailed(ConnectionErrorReason::kPingFlood);
}

TEST_F(LimitsTest, RepliesToAPeerThatDoesNotRead) {
  ConnectionOptions o = ServerOptions();
  o.max_queued_replies = 10;
  Init(o);
  // Read between bursts: fine.
  for (int round = 0; round < 5; ++round) {
    for (int i = 0; i < 10; ++i) peer_.Ping(i);
    EXPECT_THAT(Exchange(), SizeIs(10));
  }
  // Never read: the eleventh ACK we would owe is one too many.
  for (int i = 0; i < 11; ++i) peer_.Ping(i);
  EXPECT_FALSE(Feed());
  EXPECT_EQ(Read().back(), "GOAWAY 0 ENHANCE_YOUR_CALM");
  ExpectFailed(ConnectionErrorReason::kUnreadReplies);
}

TEST_F(LimitsTest, EmptyDataFlood) {
  ConnectionOptions o = ServerOptions();
  o.empty_data_frames = {20, 1};
  Init(o);
  peer_.Headers(1, PostRequest(), false);
  for (int i = 0; i < 21; ++i) peer_.Data(1, "", false);
  EXPECT_FALSE(Feed());
  EXPECT_EQ(Read().back(), "GOAWAY 1 ENHANCE_YOUR_CALM");
  ExpectFailed(ConnectionErrorReason::kEmptyDataFlood);
}

TEST_F(LimitsTest, WindowUpdateFlood) {
  ConnectionOptions o = ServerOptions();
  o.window_updates = {50, 1};
  Init(o);
  for (int i = 0; i < 51; ++i) peer_.WindowUpdate(0, 1);
  EXPECT_FALSE(Feed());
  EXPECT_EQ(Read().back(), "GOAWAY 0 ENHANCE_YOUR_CALM");
  ExpectFailed(ConnectionErrorReason::kWindowUpdateFlood);
}

TEST_F(LimitsTest, PriorityAndUnknownFrameFlood) {
  ConnectionOptions o = ServerOptions();
  o.other_frames = {50, 1};
  Init(o);
  for (int i = 0; i < 25; ++i) peer_.Priority(1, 0).Unknown(0x42, 0, 3);
  EXPECT_TRUE(Feed());
  peer_.Priority(3, 0);
  EXPECT_FALSE(Feed());
  EXPECT_EQ(Read().back(), "GOAWAY 0 ENHANCE_YOUR_CALM");
  ExpectFailed(ConnectionErrorReason::kPriorityFlood);
}

// The same budget, named by the frame that found it empty.
TEST_F(LimitsTest, UnknownFrameFlood) {
  ConnectionOptions o = ServerOptions();
  o.other_frames = {50, 1};
  Init(o);
  for (int i = 0; i < 25; ++i) peer_.Priority(1, 0).Unknown(0x42, 0, 3);
  EXPECT_TRUE(Feed());
  peer_.Unknown(0x42, 0, 3);
  EXPECT_FALSE(Feed());
  EXPECT_EQ(Read().back(), "GOAWAY 0 ENHANCE_YOUR_CALM");
  ExpectFailed(ConnectionErrorReason::kUnknownFrameFlood);
}

TEST_F(LimitsTest, UnsolicitedSettingsAckFlood) {
  ConnectionOptions o = ServerOptions();
  o.other_frames = {5, 1};
  Init(o);  // Our SETTINGS were ACKed once: the rest are unsolicited.
  for (int i = 0; i < 6; ++i) peer_.SettingsAck();
  EXPECT_FALSE(Feed());
  EXPECT_EQ(Read().back(), "GOAWAY 0 ENHANCE_YOUR_CALM");
  ExpectFailed(ConnectionErrorReason::kSettingsAckFlood);
}

TEST_F(LimitsTest, PeerThatNeverReadsBoundsOurOutput) {
  settings_ = {{SettingId::kInitialWindowSize, kMaxWindowSize}};
  ConnectionOptions o = ServerOptions();
  Init(o);
  peer_.WindowUpdate(0, kMaxWindowSize - 65535).Headers(1, GetRequest(), true);
  Feed();
  ASSERT_TRUE(conn_->SubmitHeaders(1, View(Response()), false).ok());
  constexpr size_t kBody = 16 << 20;
  SliceBuffer body;
  body.Append(std::string(kBody, 'z'));
  ASSERT_TRUE(conn_->SubmitData(1, std::move(body), true).ok());
  // Nothing is read: the output stops near the high-water mark.
  EXPECT_LE(conn_->output().size(), o.output_high_water + 16384 + 100);
  EXPECT_GT(conn_->queued_send_bytes(), kBody - o.output_high_water - 16384);
  // The I/O layer writes a little at a time: DATA follows, still bounded.
  size_t received = 0;
  for (int i = 0; i < 100000 && !conn_->done() && conn_->WantsWrite(); ++i) {
    const size_t n = std::min<size_t>(conn_->output().size(), 100000);
    conn_->ConsumeOutput(n);
    received += n;
    ASSERT_LE(conn_->output().size(), o.output_high_water + 16384 + 100);
  }
  EXPECT_EQ(conn_->queued_send_bytes(), 0u);
  EXPECT_GT(received, kBody);
}

}  // namespace
}  // namespace testing
}  // namespace transport
