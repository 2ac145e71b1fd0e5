// Flow control and flood budgets as pure accounting: no connection needed.

#include "transport/connection/flow_control.h"

#include "gtest/gtest.h"
#include "transport/connection/flood_budget.h"
#include "transport/frame/settings.h"

namespace transport {
namespace {

TEST(SendWindowTest, Sec6_9_1_IncreaseUpToTheMaximum) {
  SendWindow w(65535);
  EXPECT_TRUE(w.Increase(kMaxWindowSize - 65535));
  EXPECT_EQ(w.available(), kMaxWindowSize);
  EXPECT_FALSE(w.Increase(1));  // Overflow: FLOW_CONTROL_ERROR, unchanged.
  EXPECT_EQ(w.available(), kMaxWindowSize);
}

TEST(SendWindowTest, Sec6_9_2_AdjustCanGoNegative) {
  SendWindow w(100);
  w.Consume(80);
  EXPECT_TRUE(w.Adjust(-50));
  EXPECT_EQ(w.available(), -30);
  EXPECT_TRUE(w.Increase(40));
  EXPECT_EQ(w.available(), 10);
  EXPECT_FALSE(w.Adjust(kMaxWindowSize));
}

TEST(ReceiveWindowTest, Sec6_9_DataBeyondTheWindowIsRefused) {
  ReceiveWindow w(100);
  EXPECT_TRUE(w.OnReceived(60));
  EXPECT_FALSE(w.OnReceived(41));
  EXPECT_TRUE(w.OnReceived(40));
  EXPECT_EQ(w.window(), 0);
  EXPECT_EQ(w.unconsumed(), 100u);
}

TEST(ReceiveWindowTest, UpdatesOnlyAsTheApplicationConsumes) {
  ReceiveWindow w(100);
  ASSERT_TRUE(w.OnReceived(100));
  EXPECT_EQ(w.Consume(30), 0u);   // Below half the target: wait.
  EXPECT_EQ(w.Consume(30), 60u);  // Half reached: give back all consumed.
  EXPECT_EQ(w.window(), 60);
  EXPECT_EQ(w.unconsumed(), 40u);
  EXPECT_EQ(w.Consume(1000), 0u);  // Clamped to what is held (40 < 50).
  EXPECT_EQ(w.unconsumed(), 0u);
  EXPECT_EQ(w.window() + static_cast<int64_t>(w.unconsumed()) + w.unannounced(),
            w.target());
}

TEST(ReceiveWindowTest, SlowReaderBoundsMemory) {
  ReceiveWindow w(1000);
  size_t received = 0;
  while (w.OnReceived(100)) received += 100;
  EXPECT_EQ(received, 1000u);  // The peer must stop at the window.
}

TEST(ReceiveWindowTest, LargerTargetIsAnnouncedOnce) {
  ReceiveWindow w(65535, 1 << 20);
  EXPECT_EQ(w.TakeUpdate(), (1u << 20) - 65535);
  EXPECT_EQ(w.window(), 1 << 20);
  EXPECT_EQ(w.TakeUpdate(), 0u);
}

TEST(ReceiveWindowTest, AdjustMovesWindowAndTarget) {
  ReceiveWindow w(65535);
  ASSERT_TRUE(w.OnReceived(1000));
  w.Adjust(-60000);
  EXPECT_EQ(w.window(), 65535 - 1000 - 60000);
  EXPECT_EQ(w.target(), 5535);
  EXPECT_FALSE(w.OnReceived(5000));
  w.Adjust(-10000);  // Negative: only empty frames fit.
  EXPECT_TRUE(w.OnReceived(0));
  EXPECT_FALSE(w.OnReceived(1));
}

TEST(ConsumeReceivedTest, ReturnsBothActions) {
  ConnectionReceiveWindow conn(100, 100, /*buffer_limit=*/0);
  ReceiveWindow stream(100);
  uint32_t inc = 0;
  ASSERT_TRUE(conn.OnReceived(60, &inc));
  EXPECT_EQ(inc, 0u);
  ASSERT_TRUE(stream.OnReceived(60));
  WindowUpdateAction a = ConsumeReceived(&conn, &stream, true, 60);
  EXPECT_EQ(a.connection_increment, 60u);
  EXPECT_EQ(a.stream_increment, 60u);
  // A stream whose peer side ended wants no update; the connection does.
  ASSERT_TRUE(conn.OnReceived(60, &inc));
  ASSERT_TRUE(stream.OnReceived(60));
  a = ConsumeReceived(&conn, &stream, false, 60);
  EXPECT_EQ(a.connection_increment, 60u);
  EXPECT_EQ(a.stream_increment, 0u);
  // No stream: the connection alone.
  ASSERT_TRUE(conn.OnReceived(50, &inc));
  a = ConsumeReceived(&conn, nullptr, false, 50);
  EXPECT_EQ(a.connection_increment, 50u);
}

TEST(ConnectionReceiveWindowTest, CreditGoesBackOnReceiptWithinTheLimit) {
  ConnectionReceiveWindow w(100, 100, /*buffer_limit=*/1000);
  uint32_t inc = 0;
  ASSERT_TRUE(w.OnReceived(40, &inc));
  EXPECT_EQ(inc, 0u);  // Below half the target: wait.
  ASSERT_TRUE(w.OnReceived(40, &inc));
  EXPECT_EQ(inc, 80u);  // Nothing consumed, yet the peer may send again.
  EXPECT_EQ(w.window(), 100);
  EXPECT_EQ(w.buffered(), 80u);
  EXPECT_EQ(w.held(), 0u);
  // Consuming buffered octets owes the peer nothing more.
  EXPECT_EQ(w.Consume(80), 0u);
  EXPECT_EQ(w.buffered(), 0u);
  EXPECT_EQ(w.window(), 100);
}

TEST(ConnectionReceiveWindowTest, BeyondTheLimitOctetsHoldTheWindow) {
  ConnectionReceiveWindow w(100, 100, /*buffer_limit=*/150);
  uint32_t inc = 0;
  size_t received = 0;
  // The peer is stopped once limit + window octets wait unconsumed.
  for (int i = 0; i < 100 && w.OnReceived(10, &inc); ++i) received += 10;
  EXPECT_EQ(received, 250u);
  EXPECT_EQ(w.buffered(), 250u);
  EXPECT_EQ(w.held(), 100u);
  EXPECT_EQ(w.window(), 0);
  EXPECT_EQ(w.window() + static_cast<int64_t>(w.held()) + w.unannounced(),
            w.target());
  // Consuming gives back only what falls under the limit again.
  EXPECT_EQ(w.Consume(60), 60u);
  EXPECT_EQ(w.held(), 40u);
  EXPECT_EQ(w.Consume(1000), 0u);  // 40 < half the target: not yet sent.
  EXPECT_EQ(w.buffered(), 0u);
  EXPECT_EQ(w.held(), 0u);
  EXPECT_EQ(w.window() + static_cast<int64_t>(w.held()) + w.unannounced(),
            w.target());
}

TEST(ConnectionReceiveWindowTest, ZeroLimitIsTheClassicPolicy) {
  ConnectionReceiveWindow w(100, 100, /*buffer_limit=*/0);
  uint32_t inc = 0;
  ASSERT_TRUE(w.OnReceived(100, &inc));
  EXPECT_EQ(inc, 0u);
  EXPECT_FALSE(w.OnReceived(1, &inc));
  EXPECT_EQ(w.held(), 100u);
  EXPECT_EQ(w.Consume(30), 0u);
  EXPECT_EQ(w.Consume(30), 60u);
}

TEST(FloodBudgetTest, BurstThenRate) {
  constexpr int64_t kSecond = 1000 * 1000 * 1000;
  FloodBudget b(3, 2, 0);
  EXPECT_TRUE(b.Take(0));
  EXPECT_TRUE(b.Take(0));
  EXPECT_TRUE(b.Take(0));
  EXPECT_FALSE(b.Take(0));
  EXPECT_FALSE(b.Take(kSecond / 2 - 1));
  EXPECT_TRUE(b.Take(kSecond / 2));  // One token per half second.
  EXPECT_FALSE(b.Take(kSecond / 2));
  EXPECT_TRUE(b.Take(100 * kSecond));  // Refills to the burst, no more.
  EXPECT_TRUE(b.Take(100 * kSecond));
  EXPECT_TRUE(b.Take(100 * kSecond));
  EXPECT_FALSE(b.Take(100 * kSecond));
}

}  // namespace
}  // namespace transport
