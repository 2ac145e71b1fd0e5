// Connection, client role, against a scripted server: the client's side of
// RFC 9113 (preface, push refusal, MAX_CONCURRENT_STREAMS queueing, responses,
// GOAWAY) and graceful shutdown of both roles.

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
using ::testing::StartsWith;

class ClientTest : public ::testing::Test {
 protected:
  void SetUp() override { Init(ClientOptions()); }
  void Init(const ConnectionOptions& options) {
    conn_ = std::make_unique<Connection>(options, &events_, now_);
    events_.connection = conn_.get();
  }
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
  uint32_t Request(bool end_stream = true) {
    absl::StatusOr<uint32_t> id =
        conn_->SubmitRequest(View(GetRequest()), end_stream);
    EXPECT_TRUE(id.ok()) << id.status();
    return id.ok() ? *id : 0;
  }

  ScriptedPeer peer_{Role::kServer};
  RecordingListener events_;
  std::unique_ptr<Connection> conn_;
  int64_t now_ = 0;
};

TEST_F(ClientTest, Sec3_4_ClientSendsPrefaceThenSettings) {
  // The peer's reader checks the magic octets first.
  EXPECT_THAT(Read(), ElementsAre("SETTINGS ENABLE_PUSH=0 "
                                  "MAX_CONCURRENT_STREAMS=100 "
                                  "INITIAL_WINDOW_SIZE=1048576 "
                                  "MAX_HEADER_LIST_SIZE=16384",
                                  "WINDOW_UPDATE 0 4128769"));
  EXPECT_TRUE(peer_.read_error().ok());
}

TEST_F(ClientTest, Sec5_1_1_ClientStreamIdsAreOddAndIncreasing) {
  Handshake();
  EXPECT_EQ(Request(), 1u);
  EXPECT_EQ(Request(), 3u);
  EXPECT_EQ(Request(), 5u);
  EXPECT_THAT(Read(), ElementsAre(StartsWith("HEADERS 1 end :method=GET"),
                                  StartsWith("HEADERS 3 end"),
                                  StartsWith("HEADERS 5 end")));
  EXPECT_THAT(events_.lines(),
              ElementsAre("started 1", "started 3", "started 5"));
}

TEST_F(ClientTest, Sec5_1_1_StreamIdsRunOut) {
  ConnectionOptions options = ClientOptions();
  options.first_local_stream_id = kMaxStreamId - 2;
  Init(options);
  Handshake();
  EXPECT_EQ(Request(), kMaxStreamId - 2);
  EXPECT_FALSE(conn_->local_stream_ids_exhausted());
  EXPECT_EQ(Request(), kMaxStreamId);
  EXPECT_TRUE(conn_->local_stream_ids_exhausted());
  absl::StatusOr<uint32_t> id = conn_->SubmitRequest(View(GetRequest()), true);
  EXPECT_EQ(id.status().code(), absl::StatusCode::kUnavailable);
  // An id of the wrong parity for the role is ignored.
  options.first_local_stream_id = 4;
  Init(options);
  Handshake();
  EXPECT_EQ(Request(), 1u);
}

TEST_F(ClientTest, Sec6_5_2_EnablePushFromServerIsProtocolError) {
  Read();
  peer_.Preface({{SettingId::kEnablePush, 1}});
  EXPECT_FALSE(Feed());
  EXPECT_THAT(Read(), ElementsAre("GOAWAY 0 PROTOCOL_ERROR"));
}

TEST_F(ClientTest, Sec8_4_PushPromiseWithPushDisabledIsProtocolError) {
  Handshake();
  Request();
  Read();
  peer_.PushPromise(1, 2, GetRequest());
  EXPECT_FALSE(Feed());
  EXPECT_THAT(Read(), ElementsAre("GOAWAY 0 PROTOCOL_ERROR"));
}

TEST_F(ClientTest, Sec5_1_ServerInitiatedStreamIsProtocolError) {
  Handshake();
  peer_.Headers(2, Response(), true);
  EXPECT_FALSE(Feed());
  EXPECT_THAT(Read(), ElementsAre("GOAWAY 0 PROTOCOL_ERROR"));
}

TEST_F(ClientTest, Sec5_1_ResponseOnUnopenedStreamIsProtocolError) {
  Handshake();
  peer_.Headers(1, Response(), true);
  EXPECT_FALSE(Feed());
  EXPECT_THAT(Read(), ElementsAre("GOAWAY 0 PROTOCOL_ERROR"));
}

TEST_F(ClientTest, Sec8_1_InformationalThenFinalResponse) {
  Handshake();
  Request();
  Read();
  events_.Clear();
  peer_.Headers(1, Response(100), false)
      .Headers(1, Response(103), false)
      .Headers(1, Response(200), false)
      .Data(1, "ok", false)
      .Headers(1, {{"grpc-status", "0"}}, true);
  EXPECT_THAT(Exchange(), IsEmpty());
  EXPECT_THAT(events_.lines(),
              ElementsAre("headers 1 :status=100", "headers 1 :status=103",
                          "headers 1 :status=200", "trailers 1 grpc-status=0",
                          "closed 1"));
  EXPECT_EQ(events_.body(1), "ok");
}

TEST_F(ClientTest, Sec8_1_InformationalWithEndStreamIsMalformed) {
  Handshake();
  Request();
  Read();
  peer_.Headers(1, Response(100), true);
  EXPECT_THAT(Exchange(), ElementsAre("RST_STREAM 1 PROTOCOL_ERROR"));
}

TEST_F(ClientTest, Sec8_1_DataBeforeResponseHeadersIsMalformed) {
  Handshake();
  Request();
  Read();
  peer_.Data(1, "x", true);
  EXPECT_THAT(Exchange(), ElementsAre("RST_STREAM 1 PROTOCOL_ERROR"));
}

TEST_F(ClientTest, Sec8_1_1_HeadResponseMayDeclareALength) {
  Handshake();
  ASSERT_TRUE(
      conn_
          ->SubmitRequest(
              View({{":method", "HEAD"}, {":scheme", "http"}, {":path", "/"}}),
              true)
          .ok());
  Read();
  events_.Clear();
  peer_.Headers(1, {{":status", "200"}, {"content-length", "1000"}}, true);
  EXPECT_THAT(Exchange(), IsEmpty());
  EXPECT_THAT(
      events_.lines(),
      ElementsAre("headers 1 end :status=200 content-length=1000", "closed 1"));
}

TEST_F(ClientTest, Sec8_3_MalformedResponseIsStreamError) {
  Handshake();
  Request();
  Request();
  Read();
  peer_.Headers(1, {{"x", "1"}}, true).Headers(3, Response(), true);
  EXPECT_THAT(Exchange(), ElementsAre("RST_STREAM 1 PROTOCOL_ERROR"));
  EXPECT_THAT(events_.Matching("headers"),
              ElementsAre("headers 3 end :status=200"));
}

TEST_F(ClientTest, Sec5_1_2_QueuesOverPeerMaxConcurrentStreams) {
  Handshake({{SettingId::kMaxConcurrentStreams, 2}});
  for (int i = 0; i < 5; ++i) Request(false);
  EXPECT_EQ(conn_->num_active_streams(), 2u);
  EXPECT_EQ(conn_->num_pending_streams(), 3u);
  // Data for a pending stream waits behind its HEADERS.
  SliceBuffer body;
  body.Append("queued");
  ASSERT_TRUE(conn_->SubmitData(5, std::move(body), true).ok());
  EXPECT_THAT(Read(), ElementsAre(StartsWith("HEADERS 1 :method"),
                                  StartsWith("HEADERS 3 :method")));
  // Frames on a stream that is still queued are on an idle stream.
  peer_.Headers(1, Response(), true);
  Feed();
  EXPECT_THAT(Read(), IsEmpty());  // Stream 1 is half-closed (remote) only.
  conn_->ResetStream(1, Http2ErrorCode::kCancel);
  EXPECT_THAT(Read(), ElementsAre("RST_STREAM 1 CANCEL",
                                  StartsWith("HEADERS 5 :method"),
                                  "DATA 5 end queued"));
  // A pending stream reset by the application never reaches the wire.
  conn_->ResetStream(7, Http2ErrorCode::kCancel);
  EXPECT_EQ(conn_->num_pending_streams(), 1u);
  // Stream 3 was open both ways: the server counts it until it sees the
  // RST_STREAM, so stream 9 waits for the ACK of a PING sent after it.
  conn_->ResetStream(3, Http2ErrorCode::kCancel);
  Lines out = Read();
  ASSERT_THAT(out, ElementsAre("RST_STREAM 3 CANCEL", StartsWith("PING ")));
  peer_.Ping(std::stoull(out[1].substr(5)), /*ack=*/true);
  EXPECT_THAT(Exchange(), ElementsAre(StartsWith("HEADERS 9 :method")));
  EXPECT_THAT(events_.Matching("started"),
              ElementsAre("started 1", "started 3", "started 5", "started 9"));
}

// A request queued behind the peer's limit is copied until it starts: the copy
// keeps HeaderField::index_name_only, so a queued call's grpc-timeout is sent
// without indexing like a call started at once (a new value per call inserted
// into the table would change it every block).
TEST_F(ClientTest, Sec5_1_2_AQueuedRequestKeepsIndexNameOnly) {
  Handshake({{SettingId::kMaxConcurrentStreams, 1}});
  const std::string timeouts[] = {"1S", "2S", "3S", "4S"};
  const Fields get = GetRequest();
  auto request = [&](const std::string& timeout) {
    std::vector<hpack::HeaderField> fields = View(get);
    hpack::HeaderField f{"grpc-timeout", timeout};
    f.index_name_only = true;
    fields.push_back(f);
    absl::StatusOr<uint32_t> id = conn_->SubmitRequest(fields, true);
    EXPECT_TRUE(id.ok()) << id.status();
  };
  for (const std::string& t : timeouts) request(t);
  EXPECT_EQ(conn_->num_pending_streams(), 3u);
  // Stream 1 started at once: its grpc-timeout, the first, named the entry.
  ASSERT_THAT(Read(), ElementsAre(StartsWith("HEADERS 1 end")));
  const size_t entries = conn_->encoder_table_entries();
  const uint64_t version = conn_->encoder_table_version();
  ASSERT_EQ(peer_.decoder().table().num_entries(), entries);
  for (uint32_t id = 1; id <= 5; id += 2) {
    // Each answer ends a stream and starts the next queued one.
    peer_.Headers(id, Response(), true);
    const Lines out = Exchange();
    ASSERT_THAT(out, ElementsAre(StartsWith("HEADERS " +
                                            std::to_string(id + 2) + " end")));
    EXPECT_THAT(out[0],
                ::testing::HasSubstr("grpc-timeout=" + timeouts[(id + 1) / 2]));
    EXPECT_EQ(conn_->encoder_table_entries(), entries) << "stream " << id + 2;
    EXPECT_EQ(conn_->encoder_table_version(), version) << "stream " << id + 2;
    EXPECT_EQ(peer_.decoder().table().num_entries(), entries)
        << "stream " << id + 2;
  }
  EXPECT_EQ(conn_->num_pending_streams(), 0u);
  EXPECT_TRUE(peer_.read_error().ok());
}

TEST_F(ClientTest, Sec5_1_2_AtMost100StreamsBeforeThePeersSettings) {
  // Until the server's SETTINGS arrive its limit is unknown: a burst of
  // requests must not be refused by a server whose limit is 100 (nghttpd's).
  Read();
  for (int i = 0; i < 150; ++i) Request();
  EXPECT_EQ(conn_->num_active_streams(), 100u);
  EXPECT_EQ(conn_->num_pending_streams(), 50u);
  // SETTINGS without MAX_CONCURRENT_STREAMS: no limit; the rest start.
  peer_.Preface({}).SettingsAck();
  ASSERT_TRUE(Feed());
  EXPECT_EQ(conn_->num_active_streams(), 150u);
  EXPECT_EQ(conn_->num_pending_streams(), 0u);
}

TEST_F(ClientTest, UserDataIsReadableUntilClosed) {
  Handshake();
  int tag = 0;
  absl::StatusOr<uint32_t> id =
      conn_->SubmitRequest(View(GetRequest()), true, &tag);
  ASSERT_TRUE(id.ok());
  EXPECT_EQ(conn_->GetStreamUserData(*id), &tag);
  void* seen = nullptr;
  events_.on_event = [&](const std::string& line, uint32_t stream_id) {
    if (line.rfind("closed", 0) == 0)
      seen = conn_->GetStreamUserData(stream_id);
  };
  peer_.Headers(*id, Response(), true);
  Feed();
  EXPECT_EQ(seen, &tag);
  EXPECT_EQ(conn_->GetStreamUserData(*id), nullptr);
}

TEST_F(ClientTest, Sec5_1_2_PendingLimitFailsTheSubmit) {
  ConnectionOptions o = ClientOptions();
  o.max_pending_streams = 2;
  Init(o);
  Handshake({{SettingId::kMaxConcurrentStreams, 1}});
  Request();
  Request();
  Request();
  EXPECT_EQ(conn_->SubmitRequest(View(GetRequest()), true).status().code(),
            absl::StatusCode::kResourceExhausted);
}

TEST_F(ClientTest, Sec8_3_InvalidRequestFailsTheSubmit) {
  Handshake();
  EXPECT_EQ(
      conn_->SubmitRequest(View({{":method", "GET"}}), true).status().code(),
      absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(conn_
                ->SubmitRequest(View({{":method", "GET"},
                                      {":scheme", "http"},
                                      {":path", "/"},
                                      {"Upper", "x"}}),
                                true)
                .status()
                .code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(Read(), IsEmpty());
}

TEST_F(ClientTest, Sec6_8_GoAwayRefusesStreamsAboveLastId) {
  Handshake({{SettingId::kMaxConcurrentStreams, 3}});
  for (int i = 0; i < 4; ++i) Request(false);  // 1, 3, 5 start; 7 waits.
  Read();
  events_.Clear();
  peer_.GoAway(3, Http2ErrorCode::kNoError);
  Feed();
  EXPECT_THAT(
      events_.lines(),
      ElementsAre("goaway 3 NO_ERROR", "reset 5 REFUSED_STREAM remote",
                  "reset 7 REFUSED_STREAM remote", "closed 5", "closed 7"));
  EXPECT_EQ(conn_->SubmitRequest(View(GetRequest()), true).status().code(),
            absl::StatusCode::kUnavailable);
  // A later GOAWAY cannot raise the last stream id: 7 is read as 3, so the
  // listener never hears that 5 or 7 may have been processed (a retry
  // decision depends on it), and the refused streams stay refused.
  events_.Clear();
  peer_.GoAway(7, Http2ErrorCode::kNoError);
  Feed();
  EXPECT_THAT(events_.lines(), ElementsAre("goaway 3 NO_ERROR"));
  EXPECT_TRUE(conn_->goaway_received());
  EXPECT_EQ(conn_->num_active_streams(), 2u);  // 1 and 3.
  EXPECT_THAT(Read(), IsEmpty());
  // Streams at or below the last id complete; then the connection drains.
  events_.Clear();
  ASSERT_TRUE(conn_->SubmitData(1, SliceBuffer(), true).ok());
  ASSERT_TRUE(conn_->SubmitData(3, SliceBuffer(), true).ok());
  peer_.Headers(1, Response(), true).Headers(3, Response(), true);
  Feed();
  EXPECT_THAT(events_.lines(), ElementsAre("headers 1 end :status=200",
                                           "headers 3 end :status=200",
                                           "closed 1", "closed 3", "drained"));
  EXPECT_TRUE(conn_->done());
  EXPECT_FALSE(conn_->dead());
}

TEST_F(ClientTest, Sec6_8_ClientGracefulShutdown) {
  Handshake();
  Request();
  Read();
  conn_->GracefulShutdown(now_);
  EXPECT_THAT(Read(), ElementsAre("GOAWAY 0 NO_ERROR"));
  EXPECT_EQ(conn_->SubmitRequest(View(GetRequest()), true).status().code(),
            absl::StatusCode::kUnavailable);
  events_.Clear();
  peer_.Headers(1, Response(), true);
  Feed();
  EXPECT_THAT(events_.lines(),
              ElementsAre("headers 1 end :status=200", "closed 1", "drained"));
}

TEST_F(ClientTest, ConnectionErrorEndsEveryStream) {
  Handshake();
  Request(false);
  Request(false);
  Read();
  events_.Clear();
  peer_.WindowUpdate(0, kMaxWindowSize);  // Overflow.
  EXPECT_FALSE(Feed());
  EXPECT_THAT(Read(), ElementsAre("GOAWAY 0 FLOW_CONTROL_ERROR"));
  EXPECT_THAT(events_.lines(),
              ElementsAre("reset 1 FLOW_CONTROL_ERROR local",
                          "reset 3 FLOW_CONTROL_ERROR local", "closed 1",
                          "closed 3", "connection_error FLOW_CONTROL_ERROR"));
  EXPECT_EQ(conn_->SubmitData(1, SliceBuffer(), true).code(),
            absl::StatusCode::kUnavailable);
}

TEST_F(ClientTest, TransportClosedEndsEveryStream) {
  Handshake();
  Request(false);
  Read();
  events_.Clear();
  conn_->OnTransportClosed();
  EXPECT_TRUE(conn_->dead());
  EXPECT_THAT(Read(), IsEmpty());
  EXPECT_THAT(events_.lines(),
              ElementsAre("reset 1 CANCEL remote", "closed 1"));
}

TEST_F(ClientTest, GoAwayWithErrorKillsTheConnection) {
  Handshake();
  Request(false);
  Read();
  events_.Clear();
  conn_->GoAway(Http2ErrorCode::kInternalError, "bye");
  EXPECT_THAT(Read(), ElementsAre("GOAWAY 0 INTERNAL_ERROR"));
  EXPECT_TRUE(conn_->dead());
  EXPECT_THAT(events_.lines(),
              ElementsAre("reset 1 INTERNAL_ERROR local", "closed 1"));
}

// ---- Server graceful shutdown (6.8) ----

class ShutdownTest : public ::testing::Test {
 protected:
  void SetUp() override {
    conn_ = std::make_unique<Connection>(ServerOptions(), &events_, 0);
    events_.connection = conn_.get();
    peer_.Preface().SettingsAck();
    conn_->Receive(peer_.TakeSlice(), 0);
    peer_.Read(conn_.get());
    events_.Clear();
  }
  ScriptedPeer peer_{Role::kClient};
  RecordingListener events_;
  std::unique_ptr<Connection> conn_;
};

TEST_F(ShutdownTest, Sec6_8_TwoGoAwaysThenDrain) {
  peer_.Headers(1, GetRequest(), true);
  conn_->Receive(peer_.TakeSlice(), 0);
  conn_->GracefulShutdown(0);
  std::vector<PeerFrame> out = peer_.Read(conn_.get());
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[0].ToString(), "GOAWAY 2147483647 NO_ERROR");
  EXPECT_EQ(out[1].type, FrameType::kPing);
  // A stream opened before the PING ACK is still accepted.
  peer_.Headers(3, GetRequest(), true).Ping(out[1].opaque, true);
  conn_->Receive(peer_.TakeSlice(), 0);
  EXPECT_THAT(ToStrings(peer_.Read(conn_.get())),
              ElementsAre("GOAWAY 3 NO_ERROR"));
  // After the final GOAWAY, new streams are ignored.
  peer_.Headers(5, GetRequest(), true).Data(5, "x", true);
  conn_->Receive(peer_.TakeSlice(), 0);
  EXPECT_THAT(events_.Matching("headers"),
              ElementsAre(StartsWith("headers 1"), StartsWith("headers 3")));
  ASSERT_TRUE(conn_->SubmitHeaders(1, View(Response()), true).ok());
  EXPECT_FALSE(conn_->done());
  ASSERT_TRUE(conn_->SubmitHeaders(3, View(Response()), true).ok());
  EXPECT_THAT(events_.lines().back(), "drained");
  EXPECT_TRUE(conn_->done());
  EXPECT_THAT(
      ToStrings(peer_.Read(conn_.get())),
      ElementsAre("HEADERS 1 end :status=200", "HEADERS 3 end :status=200"));
}

TEST_F(ShutdownTest, Sec6_8_PingTimeoutSendsTheFinalGoAway) {
  peer_.Headers(1, GetRequest(), true);
  conn_->Receive(peer_.TakeSlice(), 0);
  conn_->GracefulShutdown(100);
  peer_.Read(conn_.get());
  const int64_t deadline = conn_->NextDeadline();
  EXPECT_EQ(deadline, 100 + ConnectionOptions().shutdown_ping_timeout_ns);
  conn_->OnTimer(deadline);
  EXPECT_THAT(ToStrings(peer_.Read(conn_.get())),
              ElementsAre("GOAWAY 1 NO_ERROR"));
  EXPECT_EQ(conn_->NextDeadline(), kNoDeadline);
}

TEST_F(ShutdownTest, Sec6_8_IdleConnectionDrainsAtOnce) {
  conn_->GoAway(Http2ErrorCode::kNoError, "");
  EXPECT_THAT(events_.lines(), ElementsAre("drained"));
  EXPECT_TRUE(conn_->done());
}

}  // namespace
}  // namespace testing
}  // namespace transport
