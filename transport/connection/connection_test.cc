// Connection, server role, against a scripted client: one test per rule of
// RFC 9113 (named after its section). "peer sends X; we expect frames Y and
// events Z".

#include "transport/connection/connection.h"

#include <memory>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "transport/testing/connection_test_util.h"

namespace transport {
namespace testing {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;

constexpr char kServerSettings[] =
    "SETTINGS ENABLE_PUSH=0 MAX_CONCURRENT_STREAMS=100 "
    "INITIAL_WINDOW_SIZE=1048576 MAX_HEADER_LIST_SIZE=16384";

class ServerTest : public ::testing::Test {
 protected:
  void SetUp() override { Init(ServerOptions()); }

  void Init(const ConnectionOptions& options) {
    conn_ = std::make_unique<Connection>(options, &events_, now_);
    events_.connection = conn_.get();
  }
  // Preface both ways, SETTINGS ACKed both ways; output and events cleared.
  void Handshake(const std::vector<Setting>& settings = {}) {
    peer_.Preface(settings).SettingsAck();
    ASSERT_TRUE(Feed());
    Read();
    events_.Clear();
  }
  bool Feed() { return conn_->Receive(peer_.TakeSlice(), now_); }
  Lines Read() { return ToStrings(peer_.Read(conn_.get())); }
  Lines Exchange() {
    Feed();
    return Read();
  }

  ScriptedPeer peer_{Role::kClient};
  RecordingListener events_;
  std::unique_ptr<Connection> conn_;
  int64_t now_ = 0;
};

// ---- 3.4 Preface, 6.5 SETTINGS ----

TEST_F(ServerTest, Sec3_4_PrefaceAndSettingsExchange) {
  EXPECT_THAT(Read(), ElementsAre(kServerSettings, "WINDOW_UPDATE 0 4128769"));
  events_.record_noise = true;
  peer_.Preface({{SettingId::kMaxFrameSize, 20000}}).SettingsAck();
  EXPECT_THAT(Exchange(), ElementsAre("SETTINGS ack"));
  EXPECT_THAT(events_.lines(), ElementsAre("settings", "settings_acked"));
  EXPECT_EQ(conn_->remote_settings().max_frame_size, 20000u);
  EXPECT_EQ(conn_->NextDeadline(), kNoDeadline);
}

TEST_F(ServerTest, Sec3_4_InvalidPrefaceIsProtocolError) {
  Read();
  peer_.Raw("GET / HTTP/1.1\r\nHost: x\r\n\r\n");
  EXPECT_FALSE(Feed());
  EXPECT_THAT(Read(), ElementsAre("GOAWAY 0 PROTOCOL_ERROR"));
  EXPECT_THAT(events_.lines(), ElementsAre("connection_error PROTOCOL_ERROR"));
  EXPECT_TRUE(conn_->dead());
  EXPECT_TRUE(conn_->done());
  // Further input is ignored.
  peer_.Ping(1);
  EXPECT_FALSE(Feed());
  EXPECT_THAT(Read(), IsEmpty());
}

TEST_F(ServerTest, Sec3_4_FirstFrameMustBeSettings) {
  Read();
  peer_.Raw(kClientPreface).Ping(1);
  EXPECT_FALSE(Feed());
  EXPECT_THAT(Read(), ElementsAre("GOAWAY 0 PROTOCOL_ERROR"));
}

TEST_F(ServerTest, Sec6_5_3_SettingsTimeout) {
  Read();
  peer_.Preface();  // Never ACKs ours.
  Feed();
  EXPECT_EQ(conn_->NextDeadline(), int64_t{10} * 1000 * 1000 * 1000);
  conn_->OnTimer(conn_->NextDeadline() - 1);
  EXPECT_FALSE(conn_->dead());
  conn_->OnTimer(conn_->NextDeadline());
  EXPECT_TRUE(conn_->dead());
  EXPECT_THAT(Read(), ElementsAre("SETTINGS ack", "GOAWAY 0 SETTINGS_TIMEOUT"));
}

TEST_F(ServerTest, Sec6_5_2_HeaderTableSizeFromPeerLimitsOurEncoder) {
  Handshake({{SettingId::kHeaderTableSize, 0}});
  peer_.Headers(1, GetRequest(), true);
  Feed();
  ASSERT_TRUE(
      conn_
          ->SubmitHeaders(1, View({{":status", "200"}, {"x-custom", "value"}}),
                          true)
          .ok());
  EXPECT_THAT(Read(), ElementsAre("HEADERS 1 end :status=200 x-custom=value"));
  EXPECT_TRUE(peer_.read_error().ok());
  EXPECT_EQ(peer_.decoder().table().num_entries(), 0u);
}

TEST_F(ServerTest, Sec6_5_2_OurHeaderTableSizeAppliesWhenAcked) {
  // Ours is the default 4096; the peer may use it all.
  Handshake();
  peer_.Headers(1,
                {{":method", "GET"},
                 {":scheme", "http"},
                 {":path", "/"},
                 {"x-big", std::string(3000, 'a')}},
                true);
  Feed();
  EXPECT_THAT(events_.Matching("headers"), ::testing::SizeIs(1));
}

TEST_F(ServerTest, Sec8_4_PushPromiseToServerIsProtocolError) {
  Handshake();
  peer_.Headers(1, GetRequest(), false).PushPromise(1, 2, GetRequest());
  EXPECT_FALSE(Feed());
  EXPECT_THAT(Read(), ElementsAre("GOAWAY 1 PROTOCOL_ERROR"));
}

TEST_F(ServerTest, Sec5_1_2_MaxConcurrentStreamsRefusesExcess) {
  ConnectionOptions o = ServerOptions();
  o.local_settings.max_concurrent_streams = 2;
  Init(o);
  Handshake();
  peer_.Headers(1, GetRequest(), true)
      .Headers(3, GetRequest(), true)
      .Headers(5, GetRequest(), true);
  EXPECT_THAT(Exchange(), ElementsAre("RST_STREAM 5 REFUSED_STREAM"));
  EXPECT_EQ(conn_->num_active_streams(), 2u);
  // A slot frees: the next stream is accepted.
  ASSERT_TRUE(conn_->SubmitHeaders(1, View(Response()), true).ok());
  peer_.Headers(7, GetRequest(), true);
  EXPECT_THAT(Exchange(), ElementsAre("HEADERS 1 end :status=200"));
  EXPECT_EQ(conn_->num_active_streams(), 2u);
  EXPECT_THAT(events_.Matching("headers"), ::testing::SizeIs(3));
}

TEST_F(ServerTest, Sec6_9_2_InitialWindowSizeAppliesToOpenStreamsAsDelta) {
  Handshake({{SettingId::kInitialWindowSize, 10}});
  peer_.Headers(1, GetRequest(), true);
  Feed();
  ASSERT_TRUE(conn_->SubmitHeaders(1, View(Response()), false).ok());
  SliceBuffer body;
  body.Append(std::string(25, 'x'));
  ASSERT_TRUE(conn_->SubmitData(1, std::move(body), true).ok());
  EXPECT_THAT(Read(), ElementsAre("HEADERS 1 :status=200",
                                  "DATA 1 " + std::string(10, 'x')));
  EXPECT_EQ(conn_->stream_send_window(1), 0);
  // +10: the window becomes 10 and ten more octets move.
  peer_.Settings({{SettingId::kInitialWindowSize, 20}});
  EXPECT_THAT(Exchange(),
              ElementsAre("SETTINGS ack", "DATA 1 " + std::string(10, 'x')));
  // -15: negative window; a WINDOW_UPDATE of 10 leaves it at -5.
  peer_.Settings({{SettingId::kInitialWindowSize, 5}}).WindowUpdate(1, 10);
  EXPECT_THAT(Exchange(), ElementsAre("SETTINGS ack"));
  EXPECT_EQ(conn_->stream_send_window(1), -5);
  peer_.WindowUpdate(1, 10);
  EXPECT_THAT(Exchange(), ElementsAre("DATA 1 end xxxxx"));
}

TEST_F(ServerTest, Sec6_9_2_InitialWindowSizeOverflowIsFlowControlError) {
  Handshake();
  peer_.Headers(1, GetRequest(), true);
  Feed();
  peer_.WindowUpdate(1, kMaxWindowSize - 65535);
  Feed();
  peer_.Settings({{SettingId::kInitialWindowSize, 65536}});
  EXPECT_FALSE(Feed());
  EXPECT_THAT(Read(), ElementsAre("GOAWAY 1 FLOW_CONTROL_ERROR"));
}

TEST_F(ServerTest, Sec6_5_2_MaxFrameSizeSplitsOurFrames) {
  Handshake({{SettingId::kInitialWindowSize, 1 << 20}});
  peer_.WindowUpdate(0, 1 << 20).Headers(1, GetRequest(), true);
  Feed();
  ASSERT_TRUE(
      conn_
          ->SubmitHeaders(
              1, View({{":status", "200"}, {"x-big", std::string(20000, '~')}}),
              false)
          .ok());
  SliceBuffer body;
  body.Append(std::string(40000, 'd'));
  ASSERT_TRUE(conn_->SubmitData(1, std::move(body), true).ok());
  std::vector<PeerFrame> frames = peer_.Read(conn_.get());
  ASSERT_EQ(frames.size(), 4u);
  EXPECT_EQ(frames[0].type, FrameType::kHeaders);
  EXPECT_EQ(frames[0].continuations, 1);  // A >16384 block: one CONTINUATION.
  EXPECT_EQ(frames[1].data.size(), 16384u);
  EXPECT_EQ(frames[2].data.size(), 16384u);
  EXPECT_EQ(frames[3].data.size(), 40000u - 2 * 16384);
  EXPECT_TRUE(frames[3].end_stream);
}

TEST_F(ServerTest, Sec6_5_2_LargerPeerMaxFrameSize) {
  Handshake({{SettingId::kInitialWindowSize, 1 << 20},
             {SettingId::kMaxFrameSize, 30000}});
  peer_.WindowUpdate(0, 1 << 20).Headers(1, GetRequest(), true);
  Feed();
  ASSERT_TRUE(conn_->SubmitHeaders(1, View(Response()), false).ok());
  SliceBuffer body;
  body.Append(std::string(40000, 'd'));
  ASSERT_TRUE(conn_->SubmitData(1, std::move(body), true).ok());
  std::vector<PeerFrame> frames = peer_.Read(conn_.get());
  ASSERT_EQ(frames.size(), 3u);
  EXPECT_EQ(frames[1].data.size(), 30000u);
  EXPECT_EQ(frames[2].data.size(), 10000u);
}

TEST_F(ServerTest, Sec6_5_2_OurMaxFrameSizeLimitsTheDecoder) {
  Handshake();
  peer_.Headers(1, GetRequest(), false).Data(1, std::string(16385, 'x'), true);
  EXPECT_FALSE(Feed());
  EXPECT_THAT(Read(), ElementsAre("GOAWAY 1 FRAME_SIZE_ERROR"));
}

TEST_F(ServerTest, Sec6_5_2_OurMaxHeaderListSizeIsAStreamError) {
  Handshake();
  peer_
      .Headers(1,
               {{":method", "GET"},
                {":scheme", "http"},
                {":path", "/"},
                {"x-big", std::string(17000, 'a')}},
               true)
      .Headers(3, GetRequest(), true);
  EXPECT_THAT(Exchange(), ElementsAre("RST_STREAM 1 PROTOCOL_ERROR"));
  EXPECT_FALSE(conn_->dead());
  EXPECT_THAT(events_.Matching("headers"),
              ElementsAre("headers 3 end :method=GET :scheme=http "
                          ":authority=example.com :path=/"));
}

TEST_F(ServerTest, Sec6_5_2_PeerMaxHeaderListSizeFailsTheSubmit) {
  Handshake({{SettingId::kMaxHeaderListSize, 100}});
  peer_.Headers(1, GetRequest(), true);
  Feed();
  absl::Status s = conn_->SubmitHeaders(
      1, View({{":status", "200"}, {"x-big", std::string(100, 'a')}}), true);
  EXPECT_EQ(s.code(), absl::StatusCode::kResourceExhausted);
  EXPECT_TRUE(conn_->SubmitHeaders(1, View(Response()), true).ok());
}

// ---- 5.1 Stream states and identifiers ----

TEST_F(ServerTest, Sec5_1_1_StreamIdMustIncrease) {
  Handshake();
  peer_.Headers(5, GetRequest(), true).Headers(3, GetRequest(), true);
  EXPECT_FALSE(Feed());
  EXPECT_THAT(Read(), ElementsAre("GOAWAY 5 PROTOCOL_ERROR"));
  EXPECT_THAT(events_.lines(),
              ElementsAre(::testing::StartsWith("headers 5"),
                          "reset 5 PROTOCOL_ERROR local", "closed 5",
                          "connection_error PROTOCOL_ERROR"));
}

TEST_F(ServerTest, Sec5_1_1_ClientMustUseOddIds) {
  Handshake();
  peer_.Headers(2, GetRequest(), true);
  EXPECT_FALSE(Feed());
  EXPECT_THAT(Read(), ElementsAre("GOAWAY 0 PROTOCOL_ERROR"));
}

TEST_F(ServerTest, Sec5_1_DataOnIdleStreamIsProtocolError) {
  Handshake();
  peer_.Data(1, "x", false);
  EXPECT_FALSE(Feed());
  EXPECT_THAT(Read(), ElementsAre("GOAWAY 0 PROTOCOL_ERROR"));
}

TEST_F(ServerTest, Sec5_1_RstStreamOnIdleStreamIsProtocolError) {
  Handshake();
  peer_.RstStream(1, Http2ErrorCode::kCancel);
  EXPECT_FALSE(Feed());
  EXPECT_THAT(Read(), ElementsAre("GOAWAY 0 PROTOCOL_ERROR"));
}

TEST_F(ServerTest, Sec5_1_WindowUpdateOnIdleStreamIsProtocolError) {
  Handshake();
  peer_.WindowUpdate(1, 1);
  EXPECT_FALSE(Feed());
  EXPECT_THAT(Read(), ElementsAre("GOAWAY 0 PROTOCOL_ERROR"));
}

TEST_F(ServerTest, Sec5_1_PriorityOnIdleStreamIsAllowed) {
  Handshake();
  peer_.Priority(9, 0).Headers(1, GetRequest(), true);
  EXPECT_THAT(Exchange(), IsEmpty());
  EXPECT_THAT(events_.Matching("headers"), ::testing::SizeIs(1));
}

TEST_F(ServerTest, Sec5_1_DataOnHalfClosedRemoteIsStreamClosed) {
  Handshake();
  peer_.Headers(1, GetRequest(), true).Data(1, "late", false);
  EXPECT_THAT(Exchange(), ElementsAre("RST_STREAM 1 STREAM_CLOSED"));
  EXPECT_EQ(conn_->unconsumed_receive_bytes(), 0u);  // Credited back.
  EXPECT_FALSE(conn_->dead());
  EXPECT_THAT(events_.lines(),
              ElementsAre(::testing::StartsWith("headers 1 end"),
                          "reset 1 STREAM_CLOSED local", "closed 1"));
}

TEST_F(ServerTest, Sec5_1_HeadersOnHalfClosedRemoteIsStreamClosed) {
  Handshake();
  peer_.Headers(1, GetRequest(), true).Headers(1, {{"x", "y"}}, true);
  EXPECT_THAT(Exchange(), ElementsAre("RST_STREAM 1 STREAM_CLOSED"));
}

TEST_F(ServerTest, Sec5_1_HeadersOnClosedStreamIsStreamClosed) {
  Handshake();
  peer_.Headers(1, GetRequest(), true);
  Feed();
  ASSERT_TRUE(conn_->SubmitHeaders(1, View(Response()), true).ok());
  Read();
  peer_.Headers(1, GetRequest(), true);
  EXPECT_FALSE(Feed());
  EXPECT_THAT(Read(), ElementsAre("GOAWAY 1 STREAM_CLOSED"));
}

TEST_F(ServerTest, Sec5_1_DataAfterPeerResetIsStreamClosed) {
  Handshake();
  peer_.Headers(1, GetRequest(), false)
      .RstStream(1, Http2ErrorCode::kCancel)
      .Data(1, "x", false);
  EXPECT_THAT(Exchange(), ElementsAre("RST_STREAM 1 STREAM_CLOSED"));
  EXPECT_EQ(conn_->unconsumed_receive_bytes(), 0u);
  EXPECT_THAT(events_.lines(),
              ElementsAre(::testing::StartsWith("headers 1"),
                          "reset 1 CANCEL remote", "closed 1"));
}

TEST_F(ServerTest, Sec5_1_FramesAfterOurResetAreIgnored) {
  Handshake();
  peer_.Headers(1, GetRequest(), false);
  Feed();
  conn_->ResetStream(1, Http2ErrorCode::kCancel);
  EXPECT_THAT(Read(), ElementsAre("RST_STREAM 1 CANCEL"));
  EXPECT_THAT(events_.lines(),
              ElementsAre(::testing::StartsWith("headers 1"), "closed 1"));
  // In flight when we reset: DATA (window credited), trailers (decoded for
  // HPACK, dropped), WINDOW_UPDATE, RST_STREAM.
  peer_.Data(1, "abc", false)
      .Headers(1, {{"x-trailer", "1"}}, true)
      .WindowUpdate(1, 5)
      .RstStream(1, Http2ErrorCode::kCancel)
      .Headers(3, GetRequest(), true);
  EXPECT_THAT(Exchange(), IsEmpty());
  EXPECT_EQ(conn_->unconsumed_receive_bytes(), 0u);
  EXPECT_FALSE(conn_->dead());
  EXPECT_THAT(events_.Matching("headers 3"), ::testing::SizeIs(1));
}

TEST_F(ServerTest, Sec5_1_StreamLifecycleEvents) {
  Handshake();
  events_.record_data = true;
  peer_.Headers(1, PostRequest(), false).Data(1, "hello", true);
  Feed();
  ASSERT_TRUE(conn_->SubmitHeaders(1, View(Response()), false).ok());
  SliceBuffer body;
  body.Append("world");
  ASSERT_TRUE(conn_->SubmitData(1, std::move(body), false).ok());
  ASSERT_TRUE(conn_->SubmitTrailers(1, View({{"grpc-status", "0"}})).ok());
  EXPECT_THAT(Read(), ElementsAre("HEADERS 1 :status=200", "DATA 1 world",
                                  "HEADERS 1 end grpc-status=0"));
  EXPECT_THAT(events_.lines(),
              ElementsAre("headers 1 :method=POST :scheme=http "
                          ":authority=example.com :path=/echo",
                          "data 1 hello", "end 1", "closed 1"));
  EXPECT_EQ(conn_->num_active_streams(), 0u);
}

TEST_F(ServerTest, Sec5_1_SubmitRulesFollowStreamState) {
  Handshake();
  peer_.Headers(1, GetRequest(), true);
  Feed();
  EXPECT_EQ(conn_->SubmitData(1, SliceBuffer(), true).code(),
            absl::StatusCode::kFailedPrecondition);  // Before headers.
  EXPECT_EQ(conn_->SubmitHeaders(3, View(Response()), true).code(),
            absl::StatusCode::kNotFound);
  EXPECT_EQ(conn_->SubmitRequest(View(GetRequest()), true).status().code(),
            absl::StatusCode::kFailedPrecondition);  // Server role.
  ASSERT_TRUE(conn_->SubmitHeaders(1, View(Response(100)), false).ok());
  ASSERT_TRUE(conn_->SubmitHeaders(1, View(Response()), false).ok());
  EXPECT_EQ(conn_->SubmitHeaders(1, View(Response()), false).code(),
            absl::StatusCode::kFailedPrecondition);
  ASSERT_TRUE(conn_->SubmitData(1, SliceBuffer(), true).ok());
  EXPECT_THAT(Read(), ElementsAre("HEADERS 1 :status=100",
                                  "HEADERS 1 :status=200", "DATA 1 end"));
  EXPECT_EQ(conn_->SubmitData(1, SliceBuffer(), true).code(),
            absl::StatusCode::kNotFound);  // Closed and gone.
}

// ---- 8.1 Trailers ----

TEST_F(ServerTest, Sec8_1_Trailers) {
  Handshake();
  peer_.Headers(1, PostRequest(), false)
      .Data(1, "body", false)
      .Headers(1, {{"x-checksum", "42"}}, true);
  Feed();
  EXPECT_THAT(events_.lines(), ElementsAre(::testing::StartsWith("headers 1"),
                                           "trailers 1 x-checksum=42"));
  EXPECT_EQ(events_.body(1), "body");
}

TEST_F(ServerTest, Sec8_1_TrailersWithoutEndStreamAreMalformed) {
  Handshake();
  peer_.Headers(1, PostRequest(), false).Headers(1, {{"x-a", "1"}}, false);
  EXPECT_THAT(Exchange(), ElementsAre("RST_STREAM 1 PROTOCOL_ERROR"));
}

TEST_F(ServerTest, Sec8_1_PseudoHeaderInTrailersIsMalformed) {
  Handshake();
  peer_.Headers(1, PostRequest(), false).Headers(1, {{":path", "/"}}, true);
  EXPECT_THAT(Exchange(), ElementsAre("RST_STREAM 1 PROTOCOL_ERROR"));
}

// ---- 8.2, 8.3 Field rules ----

struct MalformedCase {
  const char* name;
  Fields fields;
};

class MalformedRequestTest
    : public ServerTest,
      public ::testing::WithParamInterface<MalformedCase> {};

TEST_P(MalformedRequestTest, Sec8_1_1_MalformedRequestIsStreamError) {
  Handshake();
  peer_.Headers(1, GetParam().fields, true).Headers(3, GetRequest(), true);
  EXPECT_THAT(Exchange(), ElementsAre("RST_STREAM 1 PROTOCOL_ERROR"));
  EXPECT_FALSE(conn_->dead());
  EXPECT_THAT(events_.lines(),
              ElementsAre(::testing::StartsWith("headers 3 end")));
}

INSTANTIATE_TEST_SUITE_P(
    Sec8, MalformedRequestTest,
    ::testing::Values(
        MalformedCase{"Sec8_3_PseudoAfterRegular",
                      {{":method", "GET"},
                       {":scheme", "http"},
                       {"a", "b"},
                       {":path", "/"}}},
        MalformedCase{"Sec8_3_UnknownPseudo",
                      {{":method", "GET"},
                       {":scheme", "http"},
                       {":path", "/"},
                       {":foo", "x"}}},
        MalformedCase{"Sec8_3_ResponsePseudoInRequest",
                      {{":method", "GET"},
                       {":scheme", "http"},
                       {":path", "/"},
                       {":status", "200"}}},
        MalformedCase{"Sec8_3_DuplicatePseudo",
                      {{":method", "GET"},
                       {":method", "GET"},
                       {":scheme", "http"},
                       {":path", "/"}}},
        MalformedCase{"Sec8_3_1_MissingMethod",
                      {{":scheme", "http"}, {":path", "/"}}},
        MalformedCase{"Sec8_3_1_MissingScheme",
                      {{":method", "GET"}, {":path", "/"}}},
        MalformedCase{"Sec8_3_1_MissingPath",
                      {{":method", "GET"}, {":scheme", "http"}}},
        MalformedCase{"Sec8_3_1_EmptyPath",
                      {{":method", "GET"}, {":scheme", "http"}, {":path", ""}}},
        MalformedCase{
            "Sec8_5_ConnectWithPath",
            {{":method", "CONNECT"}, {":authority", "a:443"}, {":path", "/"}}},
        MalformedCase{"Sec8_2_2_Connection",
                      {{":method", "GET"},
                       {":scheme", "http"},
                       {":path", "/"},
                       {"connection", "keep-alive"}}},
        MalformedCase{"Sec8_2_2_TransferEncoding",
                      {{":method", "GET"},
                       {":scheme", "http"},
                       {":path", "/"},
                       {"transfer-encoding", "chunked"}}},
        MalformedCase{"Sec8_2_2_Upgrade",
                      {{":method", "GET"},
                       {":scheme", "http"},
                       {":path", "/"},
                       {"upgrade", "h2c"}}},
        MalformedCase{"Sec8_2_2_TeNotTrailers",
                      {{":method", "GET"},
                       {":scheme", "http"},
                       {":path", "/"},
                       {"te", "gzip"}}},
        MalformedCase{"Sec8_2_1_UppercaseName",
                      {{":method", "GET"},
                       {":scheme", "http"},
                       {":path", "/"},
                       {"X-Upper", "1"}}},
        MalformedCase{"Sec8_2_1_NewlineInValue",
                      {{":method", "GET"},
                       {":scheme", "http"},
                       {":path", "/"},
                       {"x-a", "a\nb"}}},
        MalformedCase{"Sec8_1_1_ContentLengthWithEndStream",
                      {{":method", "POST"},
                       {":scheme", "http"},
                       {":path", "/"},
                       {"content-length", "5"}}},
        MalformedCase{"Sec8_1_1_BadContentLength",
                      {{":method", "POST"},
                       {":scheme", "http"},
                       {":path", "/"},
                       {"content-length", "x5"}}}),
    [](const ::testing::TestParamInfo<MalformedCase>& info) {
      return std::string(info.param.name);
    });

TEST_F(ServerTest, Sec8_2_2_TeTrailersIsAllowed) {
  Handshake();
  Fields f = GetRequest();
  f.emplace_back("te", "trailers");
  peer_.Headers(1, f, true);
  EXPECT_THAT(Exchange(), IsEmpty());
  EXPECT_THAT(events_.lines(), ::testing::SizeIs(1));
}

TEST_F(ServerTest, Sec8_5_ConnectWithAuthorityOnly) {
  Handshake();
  peer_.Headers(1, {{":method", "CONNECT"}, {":authority", "a:443"}}, false);
  EXPECT_THAT(Exchange(), IsEmpty());
  EXPECT_THAT(events_.lines(), ::testing::SizeIs(1));
}

TEST_F(ServerTest, Sec8_1_1_ContentLengthMismatchIsStreamError) {
  Handshake();
  Fields f = PostRequest();
  f.emplace_back("content-length", "3");
  peer_.Headers(1, f, false).Data(1, "ab", true);    // Too little.
  peer_.Headers(3, f, false).Data(3, "abcd", true);  // Too much.
  peer_.Headers(5, f, false).Data(5, "abc", true);   // Right.
  Feed();
  Lines out = Read();
  EXPECT_THAT(events_.Matching("reset"),
              ElementsAre("reset 1 PROTOCOL_ERROR local",
                          "reset 3 PROTOCOL_ERROR local"));
  EXPECT_THAT(events_.Matching("end"), ElementsAre("end 5"));
  EXPECT_FALSE(conn_->dead());
}

TEST_F(ServerTest, Sec4_3_CorruptHeaderBlockIsCompressionError) {
  Handshake();
  peer_.HeadersFragment(1, "\xff\xff\xff\xff\xff\xff", true, true);
  EXPECT_FALSE(Feed());
  EXPECT_THAT(Read(), ElementsAre("GOAWAY 0 COMPRESSION_ERROR"));
}

// ---- 6.7 PING ----

TEST_F(ServerTest, Sec6_7_PingIsAnsweredBeforeQueuedData) {
  Handshake({{SettingId::kInitialWindowSize, 1 << 20}});
  peer_.WindowUpdate(0, 1 << 20).Headers(1, GetRequest(), true);
  Feed();
  ConnectionOptions o;
  ASSERT_TRUE(conn_->SubmitHeaders(1, View(Response()), false).ok());
  SliceBuffer body;
  body.Append(std::string(1 << 20, 'x'));
  ASSERT_TRUE(conn_->SubmitData(1, std::move(body), true).ok());
  // The output stopped at the high-water mark; the rest is queued.
  EXPECT_GT(conn_->queued_send_bytes(), 0u);
  peer_.Ping(77);
  Feed();
  std::vector<PeerFrame> frames = peer_.Read(conn_.get());
  size_t ack_at = 0;
  for (size_t i = 0; i < frames.size(); ++i) {
    if (frames[i].type == FrameType::kPing) ack_at = i;
  }
  ASSERT_GT(ack_at, 0u);
  EXPECT_TRUE(frames[ack_at].ack);
  EXPECT_EQ(frames[ack_at].opaque, 77u);
  // Only what was already in the output (about the high-water mark) is ahead.
  EXPECT_LE(ack_at * 16384, o.output_high_water + 16384);
}

TEST_F(ServerTest, Sec6_7_OurPingIsAcked) {
  Handshake();
  conn_->SendPing(5);
  EXPECT_THAT(Read(), ElementsAre("PING 5"));
  peer_.Ping(5, true);
  Feed();
  EXPECT_THAT(events_.lines(), ElementsAre("ping_ack 5"));
}

// A listener that sees PINGs (the keepalive ping policy's hook) and may
// answer one with GoAway.
class PingListener : public RecordingListener {
 public:
  void OnPing(uint64_t opaque) override {
    pings.push_back(opaque);
    if (go_away_on_ping) {
      connection->GoAway(Http2ErrorCode::kEnhanceYourCalm, "too_many_pings");
    }
  }
  std::vector<uint64_t> pings;
  bool go_away_on_ping = false;
};

TEST(ConnectionPingTest, PingIsReportedThenAcked) {
  ScriptedPeer peer(Role::kClient);
  PingListener events;
  Connection conn(ServerOptions(), &events, 0);
  events.connection = &conn;
  peer.Preface().SettingsAck();
  ASSERT_TRUE(conn.Receive(peer.TakeSlice(), 0));
  peer.Read(&conn);
  peer.Ping(9).Ping(3, /*ack=*/true);
  ASSERT_TRUE(conn.Receive(peer.TakeSlice(), 0));
  EXPECT_THAT(events.pings, ElementsAre(9u));  // ACKs are not reported.
  EXPECT_THAT(ToStrings(peer.Read(&conn)), ElementsAre("PING ack 9"));
}

TEST(ConnectionPingTest, GoAwayFromOnPingSuppressesTheAck) {
  ScriptedPeer peer(Role::kClient);
  PingListener events;
  Connection conn(ServerOptions(), &events, 0);
  events.connection = &conn;
  peer.Preface().SettingsAck().Headers(1, GetRequest(), true);
  ASSERT_TRUE(conn.Receive(peer.TakeSlice(), 0));
  peer.Read(&conn);
  events.Clear();
  events.go_away_on_ping = true;
  peer.Ping(1);
  EXPECT_FALSE(conn.Receive(peer.TakeSlice(), 0));
  std::vector<PeerFrame> frames = peer.Read(&conn);
  ASSERT_EQ(frames.size(), 1u);
  EXPECT_EQ(frames[0].ToString(), "GOAWAY 1 ENHANCE_YOUR_CALM");
  EXPECT_EQ(frames[0].debug, "too_many_pings");
  EXPECT_TRUE(conn.dead());
  // The open stream ended with the connection.
  EXPECT_THAT(events.Matching("closed"), ElementsAre("closed 1"));
}

TEST_F(ServerTest, HeadersOrDataSentCountsResponseFrames) {
  Handshake();
  EXPECT_EQ(conn_->headers_or_data_sent(), 0u);
  peer_.Headers(1, GetRequest(), true).Ping(4);
  Feed();
  Read();
  EXPECT_EQ(conn_->headers_or_data_sent(), 0u);  // PING ACKs do not count.
  ASSERT_TRUE(conn_->SubmitHeaders(1, View(Response()), false).ok());
  EXPECT_EQ(conn_->headers_or_data_sent(), 1u);
  SliceBuffer body;
  body.Append(std::string(10, 'x'));
  ASSERT_TRUE(conn_->SubmitData(1, std::move(body), false).ok());
  EXPECT_EQ(conn_->headers_or_data_sent(), 2u);
  ASSERT_TRUE(conn_->SubmitTrailers(1, View({{"grpc-status", "0"}})).ok());
  EXPECT_EQ(conn_->headers_or_data_sent(), 3u);
}

// ---- OnStreamWritable and stream_queued_bytes ----

TEST_F(ServerTest, DataSubmittedInsideACallbackGetsWritable) {
  Handshake();
  events_.record_noise = true;
  size_t queued_inside = 0;
  events_.on_event = [&](const std::string& line, uint32_t id) {
    if (line.rfind("headers ", 0) != 0) return;
    ASSERT_TRUE(conn_->SubmitHeaders(id, View(Response()), false).ok());
    SliceBuffer body;
    body.Append(std::string(30, 'x'));
    ASSERT_TRUE(conn_->SubmitData(id, std::move(body), false).ok());
    // Nothing moves until the outermost call (this Receive) ends.
    queued_inside = conn_->stream_queued_bytes(id);
  };
  peer_.Headers(1, GetRequest(), true);
  EXPECT_THAT(Exchange(), ElementsAre("HEADERS 1 :status=200",
                                      "DATA 1 " + std::string(30, 'x')));
  EXPECT_EQ(queued_inside, 30u);
  EXPECT_EQ(conn_->stream_queued_bytes(1), 0u);
  EXPECT_THAT(events_.lines(),
              ElementsAre(::testing::StartsWith("headers 1"), "writable 1"));
}

TEST_F(ServerTest, OutermostSubmitThatMovesAtOnceGetsNoWritable) {
  Handshake();
  events_.record_noise = true;
  peer_.Headers(1, GetRequest(), true);
  Feed();
  events_.Clear();
  ASSERT_TRUE(conn_->SubmitHeaders(1, View(Response()), false).ok());
  SliceBuffer body;
  body.Append("abc");
  ASSERT_TRUE(conn_->SubmitData(1, std::move(body), false).ok());
  EXPECT_EQ(conn_->stream_queued_bytes(1), 0u);
  EXPECT_THAT(events_.lines(), IsEmpty());
  EXPECT_THAT(Read(), ElementsAre("HEADERS 1 :status=200", "DATA 1 abc"));
  EXPECT_EQ(conn_->stream_queued_bytes(99), 0u);  // Unknown stream.
}

TEST_F(ServerTest, WritableIsDeferredAndChainsWritesFromItsCallback) {
  Handshake();
  events_.record_noise = true;
  int chunks = 0;
  bool inside_submit = false;
  bool writable_inside_submit = false;
  auto write_chunk = [&](uint32_t id) {
    SliceBuffer body;
    body.Append(std::string(5, static_cast<char>('a' + chunks)));
    ++chunks;
    inside_submit = true;
    ASSERT_TRUE(conn_->SubmitData(id, std::move(body), chunks == 3).ok());
    inside_submit = false;
  };
  events_.on_event = [&](const std::string& line, uint32_t id) {
    if (inside_submit) writable_inside_submit = true;
    if (line.rfind("headers ", 0) == 0) {
      ASSERT_TRUE(conn_->SubmitHeaders(id, View(Response()), false).ok());
      write_chunk(id);
    } else if (line.rfind("writable ", 0) == 0 && chunks < 3) {
      write_chunk(id);
    }
  };
  peer_.Headers(1, GetRequest(), false);
  EXPECT_THAT(Exchange(), ElementsAre("HEADERS 1 :status=200", "DATA 1 aaaaa",
                                      "DATA 1 bbbbb", "DATA 1 end ccccc"));
  EXPECT_FALSE(writable_inside_submit);
  // One per emptying: after "aaaaa", "bbbbb", and "ccccc" (the stream is
  // half closed, still open for the request body).
  EXPECT_THAT(events_.Matching("writable"),
              ElementsAre("writable 1", "writable 1", "writable 1"));
}

TEST_F(ServerTest, NoWritableForAStreamThatClosed) {
  Handshake();
  events_.record_noise = true;
  events_.on_event = [&](const std::string& line, uint32_t id) {
    if (line.rfind("headers ", 0) != 0) return;
    ASSERT_TRUE(conn_->SubmitHeaders(id, View(Response()), false).ok());
    SliceBuffer body;
    body.Append("done");
    ASSERT_TRUE(conn_->SubmitData(id, std::move(body), true).ok());
  };
  peer_.Headers(1, GetRequest(), true);
  EXPECT_THAT(Exchange(),
              ElementsAre("HEADERS 1 :status=200", "DATA 1 end done"));
  EXPECT_THAT(events_.lines(),
              ElementsAre(::testing::StartsWith("headers 1"), "closed 1"));
}

TEST_F(ServerTest, WritableAfterWaitingForTheStreamWindowFromACallback) {
  Handshake({{SettingId::kInitialWindowSize, 10}});
  events_.record_noise = true;
  events_.on_event = [&](const std::string& line, uint32_t id) {
    if (line.rfind("headers ", 0) != 0) return;
    ASSERT_TRUE(conn_->SubmitHeaders(id, View(Response()), false).ok());
    SliceBuffer body;
    body.Append(std::string(25, 'x'));
    ASSERT_TRUE(conn_->SubmitData(id, std::move(body), false).ok());
  };
  peer_.Headers(1, GetRequest(), false);
  EXPECT_THAT(Exchange(), ElementsAre("HEADERS 1 :status=200",
                                      "DATA 1 " + std::string(10, 'x')));
  EXPECT_EQ(conn_->stream_queued_bytes(1), 15u);
  EXPECT_THAT(events_.Matching("writable"), IsEmpty());
  peer_.WindowUpdate(1, 100);
  EXPECT_THAT(Exchange(), ElementsAre("DATA 1 " + std::string(15, 'x')));
  EXPECT_EQ(conn_->stream_queued_bytes(1), 0u);
  EXPECT_THAT(events_.Matching("writable"), ElementsAre("writable 1"));
}

}  // namespace
}  // namespace testing
}  // namespace transport
