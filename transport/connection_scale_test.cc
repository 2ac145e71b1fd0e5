// Connection at scale, against a scripted peer: streams whose application
// does not read beside one that does (the receive policy, 6.9).

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "transport/connection.h"
#include "transport/connection_test_util.h"

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

}  // namespace
}  // namespace testing
}  // namespace transport
