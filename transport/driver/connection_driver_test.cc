// ConnectionDriver on a loop run by an EventLoopThread, with an endpoint
// whose writes fail on demand. Every wait is bounded.

#include "transport/driver/connection_driver.h"

#include <atomic>
#include <memory>
#include <string_view>
#include <thread>

#include "absl/synchronization/notification.h"
#include "absl/time/clock.h"
#include "gtest/gtest.h"
#include "transport/connection/connection.h"
#include "transport/io/endpoint.h"
#include "transport/io/event_loop.h"

namespace transport {
namespace {

constexpr absl::Duration kWait = absl::Seconds(10);

// Writes succeed until fail_writes; reads find nothing.
class FakeEndpoint final : public Endpoint {
 public:
  explicit FakeEndpoint(EventLoop* loop) : loop_(loop) {}
  EventLoop* loop() const override { return loop_; }
  const SocketAddress& peer_address() const override { return address_; }
  const SocketAddress& local_address() const override { return address_; }
  IoResult Read(absl::Span<char>) override { return IoResult::WouldBlock(); }
  IoResult Writev(absl::Span<const std::string_view> buffers) override {
    if (fail_writes) return IoResult::Error(absl::UnavailableError("EPIPE"));
    size_t n = 0;
    for (std::string_view b : buffers) n += b.size();
    return IoResult::Ok(n);
  }
  void ShutdownWrite() override {}
  void Close() override {}

  std::atomic<bool> fail_writes{false};

 private:
  EventLoop* const loop_;
  SocketAddress address_;
};

class NullListener final : public ConnectionListener {
 public:
  void OnHeaders(uint32_t, const hpack::HeaderList&, bool) override {}
  void OnTrailers(uint32_t, const hpack::HeaderList&) override {}
  void OnData(uint32_t, Slice) override {}
  void OnEndStream(uint32_t) override {}
  void OnStreamReset(uint32_t, Http2ErrorCode, bool) override {}
};

class RecordingOwner final : public ConnectionDriver::Owner {
 public:
  void OnDriverClosed(const absl::Status&) override {
    closed_on = std::this_thread::get_id();
    closed.Notify();
  }
  std::thread::id closed_on;
  absl::Notification closed;
};

TEST(ConnectionDriverTest, AWriteErrorFoundInlineIsHandledOnTheLoopThread) {
  // An inline runner (a blocking caller, maybe holding a user lock) whose
  // flush fails must not close the connection itself: closing completes
  // every call of the connection (OnDriverClosed, user callbacks).
  auto t = EventLoopThread::Start("test-loop");
  ASSERT_TRUE(t.ok()) << t.status();
  EventLoop* loop = (*t)->loop();
  NullListener listener;
  RecordingOwner owner;
  std::unique_ptr<ConnectionDriver> driver;
  FakeEndpoint* endpoint = nullptr;
  absl::Notification started;
  loop->Post([&] {
    auto e = std::make_unique<FakeEndpoint>(loop);
    endpoint = e.get();
    ConnectionOptions options;
    options.role = Role::kClient;
    driver = std::make_unique<ConnectionDriver>(std::move(e), options,
                                                &listener, &owner);
    driver->Start();
    started.Notify();
  });
  ASSERT_TRUE(started.WaitForNotificationWithTimeout(kWait));
  // Until a try runs inline (the loop sleeps): a ping whose flush fails.
  std::atomic<bool> ran_inline{false};
  const absl::Time give_up = absl::Now() + kWait;
  while (!ran_inline.load() && absl::Now() < give_up) {
    loop->RunInlineOrPost([&] {
      if (!EventLoop::RunningInline() || ran_inline.load()) return;
      ran_inline = true;
      endpoint->fail_writes = true;
      driver->connection().SendPing(7);
      driver->ScheduleFlush();
    });
    if (!ran_inline.load()) absl::SleepFor(absl::Milliseconds(1));
  }
  ASSERT_TRUE(ran_inline.load()) << "the loop never slept";
  ASSERT_TRUE(owner.closed.WaitForNotificationWithTimeout(kWait));
  EXPECT_NE(owner.closed_on, std::this_thread::get_id());
  absl::Notification destroyed;
  loop->Post([&] {
    EXPECT_TRUE(driver->closed());
    driver.reset();
    destroyed.Notify();
  });
  ASSERT_TRUE(destroyed.WaitForNotificationWithTimeout(kWait));
}

}  // namespace
}  // namespace transport
