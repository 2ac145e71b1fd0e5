// Two Connections back to back (a client and a server, bytes shuttled both
// ways): whole exchanges, many streams, flow control with backpressure,
// MAX_CONCURRENT_STREAMS queueing, graceful shutdown. And the same input fed
// whole and split at random points gives the same events.

#include <map>
#include <memory>
#include <random>
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

// A server that answers every request: response headers, the request body
// echoed (or `reply` octets), trailers.
class EchoServer {
 public:
  explicit EchoServer(const ConnectionOptions& options, size_t reply = 0)
      : reply_(reply) {
    events.on_event = [this](const std::string& line, uint32_t id) {
      if (line.rfind("headers ", 0) == 0 &&
          line.find(" end ") != std::string::npos) {
        Respond(id);
      } else if (line.rfind("end ", 0) == 0 ||
                 line.rfind("trailers ", 0) == 0) {
        Respond(id);
      }
    };
    conn = std::make_unique<Connection>(options, &events, 0);
    events.connection = conn.get();
  }

  void Respond(uint32_t id) {
    ASSERT_TRUE(conn->SubmitHeaders(id, View(Response()), false).ok());
    SliceBuffer body;
    body.Append(reply_ > 0 ? std::string(reply_, 'r') : events.body(id));
    ASSERT_TRUE(conn->SubmitData(id, std::move(body), false).ok());
    ASSERT_TRUE(conn->SubmitTrailers(id, View({{"grpc-status", "0"}})).ok());
  }

  RecordingListener events;
  std::unique_ptr<Connection> conn;

 private:
  size_t reply_;
};

class PairTest : public ::testing::Test {
 protected:
  void Start(const ConnectionOptions& client_options,
             const ConnectionOptions& server_options, size_t reply = 0) {
    server_ = std::make_unique<EchoServer>(server_options, reply);
    client_ = std::make_unique<Connection>(client_options, &client_events_, 0);
    client_events_.connection = client_.get();
    ASSERT_TRUE(Shuttle(client_.get(), server_->conn.get()));
  }

  RecordingListener client_events_;
  std::unique_ptr<Connection> client_;
  std::unique_ptr<EchoServer> server_;
};

TEST_F(PairTest, UnaryExchange) {
  Start(ClientOptions(), ServerOptions());
  absl::StatusOr<uint32_t> id =
      client_->SubmitRequest(View(PostRequest()), false);
  ASSERT_TRUE(id.ok());
  SliceBuffer body;
  body.Append("ping");
  ASSERT_TRUE(client_->SubmitData(*id, std::move(body), true).ok());
  ASSERT_TRUE(Shuttle(client_.get(), server_->conn.get()));
  EXPECT_THAT(client_events_.lines(),
              ElementsAre("started 1", "headers 1 :status=200",
                          "trailers 1 grpc-status=0", "closed 1"));
  EXPECT_EQ(client_events_.body(1), "ping");
  EXPECT_EQ(client_->num_active_streams(), 0u);
  EXPECT_EQ(server_->conn->num_active_streams(), 0u);
}

TEST_F(PairTest, ManyConcurrentStreamsQueueOnTheClient) {
  ConnectionOptions server = ServerOptions();
  server.local_settings.max_concurrent_streams = 10;
  Start(ClientOptions(), server);
  constexpr int kStreams = 300;
  for (int i = 0; i < kStreams; ++i) {
    absl::StatusOr<uint32_t> id =
        client_->SubmitRequest(View(PostRequest()), false);
    ASSERT_TRUE(id.ok());
    SliceBuffer body;
    body.Append("req" + std::to_string(*id));
    ASSERT_TRUE(client_->SubmitData(*id, std::move(body), true).ok());
  }
  EXPECT_EQ(client_->num_active_streams(), 10u);
  EXPECT_EQ(client_->num_pending_streams(), kStreams - 10u);
  ASSERT_TRUE(Shuttle(client_.get(), server_->conn.get()));
  EXPECT_THAT(client_events_.Matching("closed"), ::testing::SizeIs(kStreams));
  EXPECT_TRUE(client_events_.Matching("reset").empty());
  for (uint32_t id = 1; id < 2 * kStreams; id += 2) {
    EXPECT_EQ(client_events_.body(id), "req" + std::to_string(id));
  }
}

TEST_F(PairTest, LargeBodiesThroughSmallWindowsWithASlowReader) {
  ConnectionOptions client = ClientOptions();
  client.local_settings.initial_window_size = 65535;
  client.connection_window = 65535 * 2;
  client.receive_buffer_limit = 65535;
  ConnectionOptions server = ServerOptions();
  server.local_settings.initial_window_size = 65535;
  server.connection_window = 65535 * 2;
  constexpr size_t kReply = 4 << 20;
  Start(client, server, kReply);
  client_events_.auto_consume = false;
  for (int i = 0; i < 3; ++i) {
    ASSERT_TRUE(client_->SubmitRequest(View(GetRequest()), true).ok());
  }
  size_t max_held = 0;
  for (int round = 0; round < 100000; ++round) {
    Shuttle(client_.get(), server_->conn.get(), 0, 1);
    max_held = std::max(max_held, client_events_.held_bytes());
    // The client never holds more than its receive buffer limit plus its
    // connection window (and here one stream window per stream).
    ASSERT_LE(client_->unconsumed_receive_bytes(), 65535u * 3);
    // The slow reader consumes a bit now and then.
    if (round % 3 == 0) client_events_.ConsumeAll();
    if (client_events_.Matching("closed").size() == 3) break;
  }
  EXPECT_THAT(client_events_.Matching("closed"), ::testing::SizeIs(3));
  for (uint32_t id : {1u, 3u, 5u}) {
    EXPECT_EQ(client_events_.body(id).size(), kReply);
  }
  EXPECT_LE(max_held, 65535u * 3);
  EXPECT_GT(max_held, 0u);
}

TEST_F(PairTest, ReaderThatStopsStopsTheSender) {
  ConnectionOptions client = ClientOptions();
  client.local_settings.initial_window_size = 65535;
  client.connection_window = 65535;
  Start(client, ServerOptions(), 1 << 20);
  client_events_.auto_consume = false;
  ASSERT_TRUE(client_->SubmitRequest(View(GetRequest()), true).ok());
  Shuttle(client_.get(), server_->conn.get());
  // The server sent one window and waits; its queue holds the rest.
  EXPECT_EQ(client_events_.held_bytes(), 65535u);
  EXPECT_EQ(server_->conn->queued_send_bytes(), (1u << 20) - 65535);
  client_events_.ConsumeAll();
  ASSERT_TRUE(Shuttle(client_.get(), server_->conn.get()));
  EXPECT_EQ(client_events_.held_bytes(), 65535u);
}

TEST_F(PairTest, GracefulShutdownWithStreamsInFlight) {
  Start(ClientOptions(), ServerOptions());
  std::vector<uint32_t> ids;
  for (int i = 0; i < 3; ++i) {
    absl::StatusOr<uint32_t> id =
        client_->SubmitRequest(View(PostRequest()), false);
    ASSERT_TRUE(id.ok());
    ids.push_back(*id);
  }
  Shuttle(client_.get(), server_->conn.get());
  server_->conn->GracefulShutdown(0);
  ASSERT_TRUE(Shuttle(client_.get(), server_->conn.get()));
  EXPECT_EQ(client_->SubmitRequest(View(GetRequest()), true).status().code(),
            absl::StatusCode::kUnavailable);
  for (uint32_t id : ids) {
    SliceBuffer body;
    body.Append("x");
    ASSERT_TRUE(client_->SubmitData(id, std::move(body), true).ok());
  }
  ASSERT_TRUE(Shuttle(client_.get(), server_->conn.get()));
  EXPECT_THAT(client_events_.Matching("closed"), ::testing::SizeIs(3));
  EXPECT_THAT(client_events_.Matching("goaway"),
              ElementsAre("goaway 2147483647 NO_ERROR", "goaway 5 NO_ERROR"));
  EXPECT_TRUE(server_->conn->done());
  EXPECT_TRUE(client_->done());
  EXPECT_THAT(server_->events.lines().back(), "drained");
}

// ---- Input split at random points ----

// A scripted client session covering most frame kinds.
std::string Session() {
  ScriptedPeer peer(Role::kClient);
  Fields big = PostRequest();
  big.emplace_back("x-long", std::string(20000, '~'));
  peer.Preface({{SettingId::kInitialWindowSize, 100000}})
      .SettingsAck()
      .Headers(1, GetRequest(), true)
      .Headers(3, PostRequest(), false)
      .Data(3, "hello ", false)
      .PaddedData(3, "world", 10, false)
      .Headers(3, {{"x-trailer", "t"}}, true)
      .Ping(9)
      .Headers(5, big, false, 5000)
      .Priority(5, 1)
      .WindowUpdate(0, 1000)
      .WindowUpdate(5, 1000)
      .Data(5, std::string(15000, 'd'), false)
      .Data(5, std::string(15000, 'e'), true)
      .Headers(7, GetRequest(), false)
      .RstStream(7, Http2ErrorCode::kCancel)
      .Headers(9, {{":method", "GET"}}, true)  // Malformed.
      .GoAway(0, Http2ErrorCode::kNoError);
  return peer.TakeBytes();
}

// Events and frames grouped by stream (stream 0: the connection), in order
// within each: how they interleave across streams depends on when the input
// ends (responses are pumped at the end of each Receive), what happens to each
// stream does not.
struct Outcome {
  std::map<std::string, Lines> events;
  std::map<uint32_t, Lines> frames;
};

std::string StreamOf(const std::string& line) {
  const size_t a = line.find(' ');
  if (a == std::string::npos) return "0";
  const size_t b = line.find(' ', a + 1);
  const std::string id =
      line.substr(a + 1, b == std::string::npos ? b : b - a - 1);
  const bool numeric =
      !id.empty() && id.find_first_not_of("0123456789") == std::string::npos;
  return numeric && line.rfind("goaway", 0) != 0 && line.rfind("ping", 0) != 0
             ? id
             : "0";
}

Outcome RunSession(const std::string& bytes,
                   const std::vector<size_t>& splits) {
  EchoServer server(ServerOptions(), 10);
  server.events.record_data = true;
  SliceBuffer out;
  const Slice all = Slice::Copy(bytes);
  size_t at = 0;
  for (size_t i = 0; i <= splits.size(); ++i) {
    const size_t end = i < splits.size() ? splits[i] : bytes.size();
    server.conn->Receive(all.Sub(at, end - at), 0);
    server.conn->TakeOutput(&out);
    at = end;
  }
  // DATA lines depend on piece boundaries: join each stream's pieces.
  Outcome o;
  for (const std::string& line : server.events.lines()) {
    if (line.rfind("data ", 0) == 0) continue;
    o.events[StreamOf(line)].push_back(line);
  }
  for (uint32_t id : {1u, 3u, 5u, 7u}) {
    o.events[std::to_string(id)].push_back("body " + server.events.body(id));
  }
  ScriptedPeer reader(Role::kClient);
  for (const PeerFrame& f : reader.Decode(out)) {
    o.frames[f.type == FrameType::kGoAway ? 0 : f.stream_id].push_back(
        f.ToString());
  }
  return o;
}

TEST(SplitTest, RandomSplitsGiveTheSameEventsAndOutput) {
  const std::string bytes = Session();
  const Outcome whole = RunSession(bytes, {});
  ASSERT_EQ(whole.events.size(), 5u);  // Streams 1, 3, 5, 7 and 0.
  EXPECT_THAT(whole.events.at("0"),
              ElementsAre("goaway 0 NO_ERROR", "drained"));
  EXPECT_THAT(whole.events.at("7"),
              ElementsAre(::testing::StartsWith("headers 7"),
                          "reset 7 CANCEL remote", "closed 7", "body "));
  std::mt19937 rng(12345);
  for (int trial = 0; trial < 200; ++trial) {
    std::vector<size_t> splits(1 + rng() % 40);
    for (size_t& s : splits) s = rng() % (bytes.size() + 1);
    std::sort(splits.begin(), splits.end());
    const Outcome split = RunSession(bytes, splits);
    ASSERT_EQ(split.events, whole.events) << "trial " << trial;
    ASSERT_EQ(split.frames, whole.frames) << "trial " << trial;
  }
}

TEST(SplitTest, EveryOctetAlone) {
  const std::string bytes = Session();
  std::vector<size_t> splits;
  for (size_t i = 1; i < bytes.size(); ++i) splits.push_back(i);
  const Outcome whole = RunSession(bytes, {});
  const Outcome split = RunSession(bytes, splits);
  EXPECT_EQ(split.events, whole.events);
  EXPECT_EQ(split.frames, whole.frames);
}

}  // namespace
}  // namespace testing
}  // namespace transport
