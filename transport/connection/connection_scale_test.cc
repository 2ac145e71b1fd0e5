// Connection at scale, against a scripted peer: many streams reset at once and
// answered late (RFC 9113 5.1, 6.4), streams whose application does not read
// beside one that does (the receive policy, 6.9), and streams we reset still
// counted against the peer's MAX_CONCURRENT_STREAMS until it has seen the
// reset (5.1.2), and 20,000 answers queued behind the output's high-water
// mark or a spent connection window (the DATA pump's cost per submit).

#include <cstdint>
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

using ::testing::Each;
using ::testing::ElementsAre;
using ::testing::IsEmpty;
using ::testing::SizeIs;
using ::testing::StartsWith;

constexpr int64_t kMs = 1000 * 1000;

class ScaleTest : public ::testing::Test {
 protected:
  void Init(const ConnectionOptions& options, Role peer_role,
            const std::vector<Setting>& peer_settings = {}) {
    peer_ = std::make_unique<ScriptedPeer>(peer_role);
    conn_ = std::make_unique<Connection>(options, &events_, now_);
    events_.connection = conn_.get();
    peer_->Preface(peer_settings).SettingsAck();
    ASSERT_TRUE(Feed());
    ReadFrames();
    events_.Clear();
  }
  bool Feed() { return conn_->Receive(peer_->TakeSlice(), now_); }
  // What the connection wrote; keeps count of the connection-level credit.
  std::vector<PeerFrame> ReadFrames() {
    std::vector<PeerFrame> frames = peer_->Read(conn_.get());
    for (const PeerFrame& f : frames) {
      if (f.type == FrameType::kWindowUpdate && f.stream_id == 0) {
        peer_conn_window_ += f.increment;
      }
    }
    return frames;
  }
  Lines Read() { return ToStrings(ReadFrames()); }
  Lines Exchange() {
    Feed();
    return Read();
  }
  // The peer sends `n` octets of DATA on `id` within the connection window.
  void PeerData(uint32_t id, size_t n, bool end_stream) {
    while (n > 0) {
      const size_t chunk = std::min<size_t>(n, 16384);
      peer_->Data(id, std::string(chunk, 'd'), end_stream && chunk == n);
      peer_conn_window_ -= static_cast<int64_t>(chunk);
      n -= chunk;
    }
  }
  uint32_t Request(bool end_stream = true) {
    absl::StatusOr<uint32_t> id =
        conn_->SubmitRequest(View(GetRequest()), end_stream);
    EXPECT_TRUE(id.ok()) << id.status();
    return id.ok() ? *id : 0;
  }
  // The opaque data of the last PING (not ACK) in `frames`; 0 if none.
  static uint64_t LastPing(const std::vector<PeerFrame>& frames) {
    uint64_t opaque = 0;
    for (const PeerFrame& f : frames) {
      if (f.type == FrameType::kPing && !f.ack) opaque = f.opaque;
    }
    return opaque;
  }

  std::unique_ptr<ScriptedPeer> peer_;
  RecordingListener events_;
  std::unique_ptr<Connection> conn_;
  int64_t now_ = 0;
  int64_t peer_conn_window_ = 65535;  // The peer's view of our window.
};

// ---- 5.1, 6.4: frames after our RST_STREAM are ignored, at any scale ----

TEST_F(ScaleTest, Sec6_4_ThousandResetsAnsweredLateAreIgnored) {
  ConnectionOptions o = ClientOptions();
  o.connection_window = 65535;  // The answers' DATA overflows it if kept.
  Init(o, Role::kServer);       // No MAX_CONCURRENT_STREAMS: unlimited.
  constexpr int kStreams = 1000;
  std::vector<uint32_t> ids;
  for (int i = 0; i < kStreams; ++i) ids.push_back(Request());
  for (uint32_t id : ids) conn_->ResetStream(id, Http2ErrorCode::kCancel);
  Lines out = Read();
  ASSERT_THAT(out, SizeIs(2 * kStreams));  // HEADERS, then RST_STREAM each.
  EXPECT_THAT(out.back(),
              "RST_STREAM " + std::to_string(ids.back()) + " CANCEL");
  events_.Clear();
  // A grpc++ server answers every call it had started: headers, a message,
  // trailers (the HPACK context must follow every block).
  for (uint32_t id : ids) {
    peer_->Headers(id, Response(), false);
    PeerData(id, 100, false);
    peer_->Headers(id, {{"grpc-status", "1"}}, true);
  }
  ASSERT_TRUE(Feed());
  out = Read();
  EXPECT_THAT(out, Each(StartsWith("WINDOW_UPDATE 0 ")));  // No GOAWAY.
  EXPECT_FALSE(conn_->dead());
  EXPECT_THAT(events_.lines(), IsEmpty());
  // The ignored DATA went back to the connection window.
  EXPECT_EQ(conn_->unconsumed_receive_bytes(), 0u);
  EXPECT_GE(peer_conn_window_, 65535 / 2);
  EXPECT_LE(peer_conn_window_, 65535);
  // And the connection still works.
  const uint32_t id = Request();
  events_.Clear();
  EXPECT_THAT(Read(), ElementsAre(StartsWith("HEADERS " + std::to_string(id))));
  peer_->Headers(id, Response(), false);
  PeerData(id, 10, false);
  peer_->Headers(id, {{"grpc-status", "0"}}, true);
  EXPECT_TRUE(Feed());
  EXPECT_THAT(events_.lines(),
              ElementsAre("headers " + std::to_string(id) + " :status=200",
                          "trailers " + std::to_string(id) + " grpc-status=0",
                          "closed " + std::to_string(id)));
  EXPECT_EQ(events_.body(id), std::string(10, 'd'));
}

TEST_F(ScaleTest, Sec6_4_ServerResetsManyStreamsWhoseBodiesArriveLate) {
  // The server resets 1500 calls (deadlines); their request bodies were in
  // flight. Ignoring them spends no RST_STREAM and no reset budget.
  ConnectionOptions o = ServerOptions();
  o.local_settings.max_concurrent_streams = 2000;
  Init(o, Role::kClient);
  constexpr uint32_t kStreams = 1500;
  for (uint32_t i = 0; i < kStreams; ++i) {
    peer_->Headers(2 * i + 1, PostRequest(), false);
  }
  ASSERT_TRUE(Feed());
  for (uint32_t i = 0; i < kStreams; ++i) {
    conn_->ResetStream(2 * i + 1, Http2ErrorCode::kCancel);
  }
  ASSERT_THAT(Read(), SizeIs(kStreams));
  for (uint32_t i = 0; i < kStreams; ++i) {
    PeerData(2 * i + 1, 10, true);
    peer_->Headers(2 * i + 1, {{"x-trailer", "1"}}, true);
  }
  ASSERT_TRUE(Feed());
  EXPECT_THAT(Read(), IsEmpty());
  EXPECT_FALSE(conn_->dead());
  EXPECT_EQ(conn_->unconsumed_receive_bytes(), 0u);
  peer_->Headers(2 * kStreams + 1, GetRequest(), true);
  ASSERT_TRUE(Feed());
  EXPECT_THAT(events_.Matching("headers " + std::to_string(2 * kStreams + 1)),
              SizeIs(1));
}

TEST_F(ScaleTest, Sec5_1_LongClosedStreamsAreIgnoredRecentOnesAreNot) {
  // Closed by both END_STREAMs: recently, STREAM_CLOSED (h2spec 5.1);
  // beyond what the connection remembers, ignored like nghttp2 does.
  Init(ServerOptions(), Role::kClient);
  for (uint32_t id = 1; id < 2 * 200; id += 2) {
    peer_->Headers(id, GetRequest(), true);
    ASSERT_TRUE(Feed());
    ASSERT_TRUE(conn_->SubmitHeaders(id, View(Response()), true).ok());
  }
  Read();
  peer_->Headers(1, {{"x-late", "1"}}, true);
  PeerData(3, 5, true);
  ASSERT_TRUE(Feed());
  EXPECT_THAT(Read(), IsEmpty());
  EXPECT_EQ(conn_->unconsumed_receive_bytes(), 0u);
  PeerData(397, 5, false);
  EXPECT_THAT(Exchange(), ElementsAre("RST_STREAM 397 STREAM_CLOSED"));
  peer_->Headers(399, {{"x-late", "1"}}, true);
  EXPECT_FALSE(Feed());
  EXPECT_THAT(Read(), ElementsAre("GOAWAY 399 STREAM_CLOSED"));
}

// ---- 6.9: unread streams do not hold back the others ----

TEST_F(ScaleTest, Sec6_9_UnreadStreamsDoNotStallTheConnection) {
  // Default windows: 1 MiB per stream, 4 MiB for the connection. Four
  // streams fill their windows and are never consumed: together they would
  // fill the connection window too if its credit waited for the reader.
  Init(ServerOptions(), Role::kClient);
  events_.auto_consume = false;
  for (uint32_t id : {1u, 3u, 5u, 7u}) {
    peer_->Headers(id, PostRequest(), false);
    PeerData(id, 1 << 20, false);
  }
  ASSERT_TRUE(Feed());
  std::vector<PeerFrame> frames = ReadFrames();
  EXPECT_EQ(conn_->unconsumed_receive_bytes(), 4u << 20);
  // WINDOW_UPDATEs for the connection arrived, none for the unread streams.
  for (const PeerFrame& f : frames) {
    EXPECT_EQ(f.type, FrameType::kWindowUpdate);
    EXPECT_EQ(f.stream_id, 0u);
  }
  EXPECT_GE(peer_conn_window_, 2 << 20);
  // Another stream still gets its data through, and its reader its credit.
  peer_->Headers(9, PostRequest(), false);
  PeerData(9, 64 << 10, true);
  ASSERT_TRUE(Feed());
  EXPECT_FALSE(conn_->dead());
  EXPECT_EQ(events_.body(9).size(), 64u << 10);
  EXPECT_THAT(events_.Matching("end"), ElementsAre("end 9"));
  ASSERT_TRUE(conn_->SubmitHeaders(9, View(Response()), true).ok());
  conn_->ConsumeData(9, 64 << 10);
  EXPECT_THAT(Read(), ElementsAre("HEADERS 9 end :status=200"));
}

TEST_F(ScaleTest, Sec6_9_BeyondTheBufferLimitTheConnectionWindowHolds) {
  // Memory stays bounded whatever the number of streams: past
  // receive_buffer_limit, unconsumed octets hold the connection window.
  ConnectionOptions o = ServerOptions();
  o.receive_buffer_limit = 1 << 20;
  Init(o, Role::kClient);
  events_.auto_consume = false;
  uint32_t id = 1;
  // The peer sends full stream windows while its connection window allows.
  for (; peer_conn_window_ >= (1 << 20); id += 2) {
    peer_->Headers(id, PostRequest(), false);
    PeerData(id, 1 << 20, false);
    ASSERT_TRUE(Feed());
    ReadFrames();
  }
  // limit + window, less what is not yet worth a WINDOW_UPDATE.
  EXPECT_LE(conn_->unconsumed_receive_bytes(), 5u << 20);
  EXPECT_GE(conn_->unconsumed_receive_bytes(), 3u << 20);
  EXPECT_LT(peer_conn_window_, 1 << 20);
  // One octet beyond the window is the peer's FLOW_CONTROL_ERROR.
  peer_->Headers(id, PostRequest(), false);
  PeerData(id, static_cast<size_t>(peer_conn_window_), false);
  peer_->Data(id, "d", false);
  EXPECT_FALSE(Feed());
  EXPECT_THAT(Read(), ElementsAre(StartsWith("GOAWAY")));
  EXPECT_EQ(conn_->error().code(), Http2ErrorCode::kFlowControlError);
}

TEST_F(ScaleTest, Sec6_9_ConsumingBelowTheLimitReturnsTheHeldCredit) {
  ConnectionOptions o = ServerOptions();
  o.receive_buffer_limit = 1 << 20;
  Init(o, Role::kClient);
  events_.auto_consume = false;
  for (uint32_t id : {1u, 3u, 5u, 7u}) {
    peer_->Headers(id, PostRequest(), false);
    PeerData(id, 1 << 20, false);
  }
  ASSERT_TRUE(Feed());
  ReadFrames();
  const int64_t before = peer_conn_window_;
  EXPECT_LT(before, 2 << 20);
  for (uint32_t id : {1u, 3u, 5u, 7u}) conn_->ConsumeData(id, 1 << 20);
  ReadFrames();
  EXPECT_EQ(conn_->unconsumed_receive_bytes(), 0u);
  EXPECT_GE(peer_conn_window_, 2 << 20);
  EXPECT_LE(peer_conn_window_, 4 << 20);
}

// ---- 5.1.2: a stream we reset counts until the peer has seen the reset ----

class ResetCountTest : public ScaleTest {
 protected:
  void SetUp() override {
    Init(ClientOptions(), Role::kServer,
         {{SettingId::kMaxConcurrentStreams, 2}});
  }
  // Streams 1 and 3 open (our side ended), 5 waiting for a slot; then
  // stream 1 reset. Returns what that wrote.
  std::vector<PeerFrame> OpenTwoQueueOneResetFirst() {
    Request();
    Request();
    Request();
    Read();
    conn_->ResetStream(1, Http2ErrorCode::kCancel);
    return ReadFrames();
  }
};

TEST_F(ResetCountTest, ResetStreamWaitsForThePeersAnswer) {
  // The server still counts stream 1 until it reads the RST_STREAM: 5
  // waits, and a PING asks the server to confirm it saw the reset.
  std::vector<PeerFrame> frames = OpenTwoQueueOneResetFirst();
  ASSERT_THAT(ToStrings(frames),
              ElementsAre("RST_STREAM 1 CANCEL", StartsWith("PING ")));
  EXPECT_EQ(conn_->num_pending_streams(), 1u);
  // The server's answer (sent before it saw our reset) frees the slot.
  peer_->Headers(1, Response(), false).Headers(1, {{"grpc-status", "0"}}, true);
  EXPECT_THAT(Exchange(), ElementsAre(StartsWith("HEADERS 5 ")));
  EXPECT_THAT(events_.Matching("started"),
              ElementsAre("started 1", "started 3", "started 5"));
  // The late ACK changes nothing and is not the application's.
  peer_->Ping(LastPing(frames), /*ack=*/true);
  EXPECT_THAT(Exchange(), IsEmpty());
  EXPECT_THAT(events_.Matching("ping_ack"), IsEmpty());
}

TEST_F(ResetCountTest, PingAckProvesThePeerSawTheReset) {
  const uint64_t ping = LastPing(OpenTwoQueueOneResetFirst());
  ASSERT_NE(ping, 0u);
  EXPECT_EQ(conn_->num_pending_streams(), 1u);
  peer_->Ping(ping, /*ack=*/true);
  EXPECT_THAT(Exchange(), ElementsAre(StartsWith("HEADERS 5 ")));
  EXPECT_EQ(conn_->num_pending_streams(), 0u);
  EXPECT_EQ(conn_->num_active_streams(), 2u);
}

TEST_F(ResetCountTest, PeerResetAnswersToo) {
  OpenTwoQueueOneResetFirst();
  peer_->RstStream(1, Http2ErrorCode::kNoError);
  EXPECT_THAT(Exchange(), ElementsAre(StartsWith("HEADERS 5 ")));
}

TEST_F(ResetCountTest, UnansweredPingStopsCountingAfterItsTimeout) {
  OpenTwoQueueOneResetFirst();
  const int64_t deadline = conn_->NextDeadline();
  EXPECT_EQ(deadline, now_ + ClientOptions().reset_ping_timeout_ns);
  conn_->OnTimer(deadline - 1);
  EXPECT_THAT(Read(), IsEmpty());
  conn_->OnTimer(deadline);
  EXPECT_THAT(Read(), ElementsAre(StartsWith("HEADERS 5 ")));
  EXPECT_EQ(conn_->NextDeadline(), kNoDeadline);
}

TEST_F(ResetCountTest, HalfClosedRemoteStreamsDoNotCount) {
  // The server ended its side already: it has nothing more to say, and
  // our RST_STREAM reaches it before the next HEADERS.
  const uint32_t a = Request(/*end_stream=*/false);
  Request();
  Request();
  Read();
  peer_->Headers(a, Response(), true);
  ASSERT_TRUE(Feed());
  conn_->ResetStream(a, Http2ErrorCode::kCancel);
  EXPECT_THAT(Read(),
              ElementsAre("RST_STREAM 1 CANCEL", StartsWith("HEADERS 5 ")));
}

TEST_F(ResetCountTest, ResetPingsArePacedAndNeedThePeerToSendBetween) {
  // A peer's ping policy (gRPC's ping strikes, a PING flood budget) must
  // not see a PING per reset: at most one per reset_ping_interval_ns, and
  // only if the peer sent HEADERS or DATA since the last one.
  const uint32_t a = Request();
  const uint32_t b = Request();
  Request();
  Request();
  Read();
  conn_->ResetStream(a, Http2ErrorCode::kCancel);
  peer_->Ping(LastPing(ReadFrames()), /*ack=*/true);
  EXPECT_THAT(Exchange(), ElementsAre(StartsWith("HEADERS 5 ")));
  // The server sends something; the next reset within the interval waits.
  peer_->Headers(b, Response(), false);
  ASSERT_TRUE(Feed());
  now_ += 5 * kMs;
  conn_->ResetStream(b, Http2ErrorCode::kCancel);
  EXPECT_THAT(Read(), ElementsAre("RST_STREAM 3 CANCEL"));
  EXPECT_EQ(conn_->NextDeadline(), ClientOptions().reset_ping_interval_ns);
  conn_->OnTimer(conn_->NextDeadline());
  const uint64_t ping = LastPing(ReadFrames());
  ASSERT_NE(ping, 0u);
  peer_->Ping(ping, /*ack=*/true);
  EXPECT_THAT(Exchange(), ElementsAre(StartsWith("HEADERS 7 ")));
  // The server now sends nothing: the next reset does not ping, it stops
  // counting (the rare refusal is retried by the caller).
  Request();
  now_ += 100 * kMs;
  conn_->ResetStream(5, Http2ErrorCode::kCancel);
  EXPECT_THAT(Read(),
              ElementsAre("RST_STREAM 5 CANCEL", StartsWith("HEADERS 9 ")));
}

TEST_F(ResetCountTest, GoAwayForgetsTheResets) {
  OpenTwoQueueOneResetFirst();
  peer_->GoAway(3, Http2ErrorCode::kNoError);
  ASSERT_TRUE(Feed());
  EXPECT_THAT(events_.Matching("reset"),
              ElementsAre("reset 5 REFUSED_STREAM remote"));
  EXPECT_EQ(conn_->NextDeadline(), kNoDeadline);
}

// ---- The DATA pump: the cost of a submit does not grow with the queue ----

// A server answering kAnswers calls on one connection (headers, a message,
// trailers; the requests stay open, so every stream stays listed) while the
// peer does not read (the output above its high-water mark) or while the
// connection window is spent: each submit's work (stream table searches,
// Connection::stream_lookups) is bounded by a constant, not by the number of
// streams already queued, and so is the drain's per stream. Every stream
// left with output queued by its submits gets OnStreamWritable once it
// drained, and the others none.
class PumpScaleTest : public ScaleTest {
 protected:
  static constexpr int kAnswers = 20000;
  // Searches per submit, and per stream while draining.
  static constexpr uint64_t kLookupsPerStep = 4;

  void Open(ConnectionOptions o, uint32_t extra_connection_window) {
    o.local_settings.max_concurrent_streams = kAnswers;
    Init(o, Role::kClient);
    if (extra_connection_window > 0) {
      peer_->WindowUpdate(0, extra_connection_window);
    }
    for (int i = 0; i < kAnswers; ++i) {
      peer_->Headers(Id(i), PostRequest(), /*end_stream=*/false);
    }
    ASSERT_TRUE(Feed());
    ReadFrames();
    events_.Clear();
    events_.record_noise = true;
  }
  static uint32_t Id(int i) { return static_cast<uint32_t>(2 * i + 1); }
  // Headers, a message of `size` octets and trailers on every stream;
  // returns how many stream table searches they took and notes the streams
  // left with output queued (owed OnStreamWritable).
  uint64_t AnswerAll(size_t size) {
    const uint64_t before = conn_->stream_lookups();
    uint64_t excluded = 0;
    for (int i = 0; i < kAnswers; ++i) {
      const uint32_t id = Id(i);
      EXPECT_TRUE(conn_->SubmitHeaders(id, View(Response()), false).ok());
      SliceBuffer message;
      message.Append(std::string(size, 'm'));
      EXPECT_TRUE(conn_->SubmitData(id, std::move(message), false).ok());
      EXPECT_TRUE(conn_->SubmitTrailers(id, View({{"grpc-status", "0"}})).ok());
      // Trailers wait only behind DATA.
      const uint64_t checked = conn_->stream_lookups();
      if (conn_->stream_queued_bytes(id) > 0) {
        waited_.push_back("writable " + std::to_string(id));
      }
      excluded += conn_->stream_lookups() - checked;
    }
    return conn_->stream_lookups() - before - excluded;
  }
  // Reads until nothing more comes (each read lets the pump refill the
  // output up to the high-water mark), giving `update` octets of connection
  // credit before each (0: none); at most `rounds` reads.
  std::vector<PeerFrame> Drain(uint32_t update, int rounds) {
    std::vector<PeerFrame> all;
    for (int r = 0; r < rounds; ++r) {
      if (update > 0) {
        peer_->WindowUpdate(0, update);
        EXPECT_TRUE(Feed());
      }
      std::vector<PeerFrame> frames = ReadFrames();
      if (frames.empty()) break;
      for (PeerFrame& f : frames) all.push_back(std::move(f));
    }
    return all;
  }
  static size_t CountEnds(const std::vector<PeerFrame>& frames) {
    size_t n = 0;
    for (const PeerFrame& f : frames) {
      if (f.type == FrameType::kHeaders && f.end_stream) ++n;
    }
    return n;
  }

  Lines waited_;  // "writable <id>" lines due, in order.
};

TEST_F(PumpScaleTest, SubmitsAboveTheHighWaterMarkCostTheSameAtAnyQueueLength) {
  ConnectionOptions o = ServerOptions();
  o.output_high_water = 4096;  // Reached after a few hundred answers.
  ASSERT_NO_FATAL_FAILURE(Open(o, /*extra_connection_window=*/1 << 24));
  EXPECT_LE(AnswerAll(10), kLookupsPerStep * 3 * kAnswers);
  EXPECT_GT(waited_.size(), static_cast<size_t>(kAnswers) * 9 / 10);
  const uint64_t before = conn_->stream_lookups();
  const std::vector<PeerFrame> frames = Drain(0, 2 * kAnswers);
  EXPECT_EQ(conn_->queued_send_bytes(), 0u);
  EXPECT_LE(conn_->stream_lookups() - before, kLookupsPerStep * kAnswers);
  EXPECT_EQ(CountEnds(frames), static_cast<size_t>(kAnswers));
  EXPECT_EQ(events_.Matching("writable"), waited_);
}

TEST_F(PumpScaleTest,
       SubmitsBlockedOnTheConnectionWindowCostTheSameAtAnyQueueLength) {
  ConnectionOptions o = ServerOptions();
  o.output_high_water = size_t{1} << 30;  // Only the window holds DATA.
  ASSERT_NO_FATAL_FAILURE(Open(o, /*extra_connection_window=*/0));
  // 85-octet messages: the 65535-octet window takes 771 of them exactly.
  constexpr int kFit = 65535 / 85;
  EXPECT_LE(AnswerAll(85), kLookupsPerStep * 3 * kAnswers);
  EXPECT_EQ(waited_.size(), static_cast<size_t>(kAnswers - kFit));
  std::vector<PeerFrame> frames = ReadFrames();
  EXPECT_EQ(CountEnds(frames), static_cast<size_t>(kFit));
  // The peer credits the connection ten messages at a time: the streams the
  // window held go out in the order they were held, one frame each.
  const uint64_t before = conn_->stream_lookups();
  frames = Drain(/*update=*/850, /*rounds=*/2 * kAnswers);
  EXPECT_EQ(conn_->queued_send_bytes(), 0u);
  EXPECT_LE(conn_->stream_lookups() - before, kLookupsPerStep * kAnswers);
  Lines data_ids;
  for (const PeerFrame& f : frames) {
    if (f.type == FrameType::kData) {
      data_ids.push_back("writable " + std::to_string(f.stream_id));
    }
  }
  EXPECT_EQ(data_ids, waited_);
  EXPECT_EQ(CountEnds(frames), static_cast<size_t>(kAnswers - kFit));
  EXPECT_EQ(events_.Matching("writable"), waited_);
}

}  // namespace
}  // namespace testing
}  // namespace transport
