// Streams per connection (issue 11, bug 3): the server's
// SETTINGS_MAX_CONCURRENT_STREAMS is settable (SetMaxConcurrentStreams,
// "grpc.max_concurrent_streams") and unlimited by default; a client fanning
// out beyond it queues its calls until their deadline instead of failing
// them, and a queued call can time out or be cancelled without holding a
// stream. Every wait is bounded.

#include <arpa/inet.h>
#include <malloc.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "absl/time/clock.h"
#include "gtest/gtest.h"
#include "rpc/rpc.h"
#include "rpc/testdata/test_service.rpc.pb.h"
#include "rpc/testing/fan_out.h"
#include "transport/connection/connection.h"

namespace rpc {
namespace {

using test::EchoRequest;
using test::EchoResponse;
using test::EchoService;

// ServerStream answers `count` messages, through a gate that counts the
// handlers running at once; "hold" waits until the gate opens (bounded).
class CountingService final : public EchoService::Service {
 public:
  Status Echo(ServerContext* /*ctx*/, const EchoRequest* req,
              EchoResponse* resp) override {
    ++echo_calls;
    resp->set_message(req->message());
    return Status::OK;
  }
  Status ServerStream(ServerContext* /*ctx*/, const EchoRequest* req,
                      ServerWriter<EchoResponse>* writer) override {
    gate.Enter();
    if (req->message() == "hold") gate.Hold();
    for (int i = 0; i < req->count(); ++i) {
      EchoResponse resp;
      resp.set_index(i);
      writer->Write(resp);
    }
    gate.Leave();
    return Status::OK;
  }
  testing::HandlerGate gate;
  std::atomic<int> echo_calls{0};
};

std::unique_ptr<Server> StartServer(CountingService* service, int max_streams,
                                    int* port, bool by_argument = false) {
  ServerBuilder builder;
  builder.AddListeningPort("127.0.0.1:0", InsecureServerCredentials(), port);
  builder.RegisterService(service);
  if (by_argument) {
    builder.AddChannelArgument("grpc.max_concurrent_streams", max_streams);
  } else if (max_streams >= 0) {
    builder.SetMaxConcurrentStreams(max_streams);
  }
  return builder.BuildAndStart();
}

using testing::StartServerStream;
using testing::StreamCall;

TEST(MaxConcurrentStreamsTest, FanOutBeyondTheServerLimitQueuesAndSucceeds) {
  // 2,000 server-streaming calls at once on one channel, the server taking
  // 100 at a time, its first 100 handlers held until the last call was
  // made: all succeed with every message (before: 100 started, 1,000 queued
  // and the rest failed UNAVAILABLE "too many pending streams").
  CountingService service;
  int port = 0;
  auto server = StartServer(&service, 100, &port);
  ASSERT_NE(server, nullptr);
  auto channel = CreateChannel(absl::StrCat("127.0.0.1:", port),
                               InsecureChannelCredentials());
  ASSERT_TRUE(channel->WaitForConnected(absl::Now() + absl::Seconds(10)));
  constexpr int kCalls = 2000;
  EchoRequest req;
  req.set_message("hold");  // The first 100 hold until all were started.
  req.set_count(3);
  std::vector<std::unique_ptr<StreamCall>> calls;
  calls.reserve(kCalls);
  for (int i = 0; i < kCalls; ++i) {
    calls.push_back(
        StartServerStream(channel.get(), req, absl::Now() + absl::Seconds(60)));
  }
  ASSERT_TRUE(testing::WaitCallsStarted(channel.get()));
  ASSERT_TRUE(service.gate.WaitStarted(100));
  service.gate.Release();
  std::string first_error;
  EXPECT_EQ(testing::CountSucceeded(calls, 3, &first_error), kCalls)
      << first_error;
  EXPECT_LE(service.gate.max_active(), 100);
  EXPECT_EQ(service.gate.started(), kCalls);
}

// The server's SETTINGS as a raw HTTP/2 client sees them.
class SettingsCapture final : public transport::ConnectionListener {
 public:
  void OnHeaders(uint32_t, const hpack::HeaderList&, bool) override {}
  void OnTrailers(uint32_t, const hpack::HeaderList&) override {}
  void OnData(uint32_t, transport::Slice) override {}
  void OnEndStream(uint32_t) override {}
  void OnStreamReset(uint32_t, transport::Http2ErrorCode, bool) override {}
  void OnRemoteSettings(const transport::Http2Settings& s) override {
    settings = s;
    received = true;
  }
  transport::Http2Settings settings;
  bool received = false;
};

// Connects to 127.0.0.1:port and returns the server's first SETTINGS
// (nullopt on a failure or after 10 s).
std::optional<transport::Http2Settings> ServerSettings(int port) {
  const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return std::nullopt;
  sockaddr_in addr = {};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = htons(static_cast<uint16_t>(port));
  if (connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) {
    close(fd);
    return std::nullopt;
  }
  transport::ConnectionOptions options;
  options.role = transport::Role::kClient;
  SettingsCapture capture;
  transport::Connection conn(options, &capture, 0);
  transport::SliceBuffer out;
  conn.TakeOutput(&out);
  for (size_t i = 0; i < out.num_slices(); ++i) {
    const transport::Slice& s = out.slice(i);
    if (write(fd, s.data(), s.size()) != static_cast<ssize_t>(s.size())) {
      close(fd);
      return std::nullopt;
    }
  }
  const absl::Time give_up = absl::Now() + absl::Seconds(10);
  char buf[4096];
  while (!capture.received && absl::Now() < give_up) {
    pollfd p = {fd, POLLIN, 0};
    if (poll(&p, 1, 100) <= 0) continue;
    const ssize_t n = read(fd, buf, sizeof(buf));
    if (n <= 0) break;
    conn.Receive(transport::Slice::Copy(buf, static_cast<size_t>(n)), 0);
  }
  close(fd);
  if (!capture.received) return std::nullopt;
  return capture.settings;
}

TEST(MaxConcurrentStreamsTest, ServerAdvertisesItsSetting) {
  CountingService service;
  {
    int port = 0;
    auto server = StartServer(&service, 7, &port);
    ASSERT_NE(server, nullptr);
    std::optional<transport::Http2Settings> s = ServerSettings(port);
    ASSERT_TRUE(s.has_value());
    EXPECT_EQ(s->max_concurrent_streams, 7u);
  }
  {
    int port = 0;
    auto server = StartServer(&service, 9, &port, /*by_argument=*/true);
    ASSERT_NE(server, nullptr);
    std::optional<transport::Http2Settings> s = ServerSettings(port);
    ASSERT_TRUE(s.has_value());
    EXPECT_EQ(s->max_concurrent_streams, 9u);
  }
}

TEST(MaxConcurrentStreamsTest, DefaultIsUnlimitedAsGrpc) {
  // grpc++ advertises no limit unless GRPC_ARG_MAX_CONCURRENT_STREAMS says
  // so: neither do we (the setting is absent, its initial value unlimited).
  CountingService service;
  int port = 0;
  auto server = StartServer(&service, -1, &port);
  ASSERT_NE(server, nullptr);
  std::optional<transport::Http2Settings> s = ServerSettings(port);
  ASSERT_TRUE(s.has_value());
  EXPECT_EQ(s->max_concurrent_streams, transport::kSettingUnlimited);
}

// A server that takes one call at a time, busy with a held stream.
class OneAtATime : public ::testing::Test {
 protected:
  void SetUp() override {
    server_ = StartServer(&service_, 1, &port_);
    ASSERT_NE(server_, nullptr);
    channel_ = CreateChannel(absl::StrCat("127.0.0.1:", port_),
                             InsecureChannelCredentials());
    stub_ = EchoService::NewStub(channel_);
    EchoRequest hold;
    hold.set_message("hold");
    hold.set_count(1);
    held_ = StartServerStream(channel_.get(), hold,
                              absl::Now() + absl::Seconds(60));
    // The server's SETTINGS (sent first) have arrived once it runs.
    ASSERT_TRUE(service_.gate.WaitStarted(1));
  }
  void TearDown() override {
    service_.gate.Release();
    if (held_ != nullptr) {
      EXPECT_TRUE(
          held_->done.WaitForNotificationWithTimeout(absl::Seconds(30)));
      EXPECT_TRUE(held_->call->Finish(nullptr, nullptr).ok());
    }
  }
  // After the held call is released, a new call still gets a stream.
  void ExpectSlotFreed() {
    service_.gate.Release();
    ASSERT_TRUE(held_->done.WaitForNotificationWithTimeout(absl::Seconds(30)));
    EXPECT_TRUE(held_->call->Finish(nullptr, nullptr).ok());
    held_.reset();
    ClientContext ctx;
    ctx.set_deadline(absl::Now() + absl::Seconds(30));
    EchoRequest req;
    req.set_message("after");
    EchoResponse resp;
    Status s = stub_->Echo(&ctx, req, &resp);
    EXPECT_TRUE(s.ok()) << s.error_message();
    EXPECT_EQ(resp.message(), "after");
  }

  CountingService service_;
  int port_ = 0;
  std::unique_ptr<Server> server_;
  std::shared_ptr<Channel> channel_;
  std::unique_ptr<EchoService::Stub> stub_;
  std::unique_ptr<StreamCall> held_;
};

TEST_F(OneAtATime, QueuedCallEndsDeadlineExceededAtItsDeadline) {
  ClientContext ctx;
  const absl::Time deadline = absl::Now() + absl::Milliseconds(300);
  ctx.set_deadline(deadline);
  EchoRequest req;
  EchoResponse resp;
  Status s = stub_->Echo(&ctx, req, &resp);
  EXPECT_EQ(s.error_code(), StatusCode::DEADLINE_EXCEEDED) << s.error_message();
  EXPECT_GE(absl::Now(), deadline);
  EXPECT_EQ(service_.echo_calls.load(), 0);  // It never reached the server.
  ExpectSlotFreed();
}

TEST_F(OneAtATime, QueuedCallCanBeCancelled) {
  struct Async {
    ClientContext ctx;
    EchoRequest req;
    EchoResponse resp;
    Status status;
    absl::Notification done;
  };
  auto* call = new Async;
  call->ctx.set_deadline(absl::Now() + absl::Seconds(30));
  stub_->async()->Echo(&call->ctx, &call->req, &call->resp, [call](Status s) {
    call->status = std::move(s);
    call->done.Notify();
  });
  call->ctx.TryCancel();  // Applied on the loop after the call queued.
  ASSERT_TRUE(call->done.WaitForNotificationWithTimeout(absl::Seconds(10)));
  EXPECT_EQ(call->status.error_code(), StatusCode::CANCELLED)
      << call->status.error_message();
  EXPECT_EQ(service_.echo_calls.load(), 0);
  delete call;
  ExpectSlotFreed();
  EXPECT_EQ(service_.echo_calls.load(), 1);
}

TEST_F(OneAtATime, WhatAQueuedCallCosts) {
  // Heap octets per call queued behind the server's limit (glibc's
  // counters; not under sanitizers, whose allocators keep their own):
  // the ClientCall, its stream in the Connection's queue with a copy of the
  // request headers, and the framed first message (100 octets here) with
  // the call's replay reference to it.
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
  GTEST_SKIP() << "allocator counters are the sanitizer's";
#else
  constexpr int kQueued = 1000;
  EchoRequest req;
  req.set_message(std::string(98, 'q'));
  ASSERT_EQ(req.ByteSizeLong(), 100u);
  std::vector<std::unique_ptr<StreamCall>> calls;
  calls.reserve(kQueued + 1);
  // Warm up the allocator and the connection's tables.
  calls.push_back(
      StartServerStream(channel_.get(), req, absl::Now() + absl::Seconds(60)));
  ASSERT_TRUE(testing::WaitCallsStarted(channel_.get()));
  const size_t before = mallinfo2().uordblks;
  for (int i = 0; i < kQueued; ++i) {
    calls.push_back(StartServerStream(channel_.get(), req,
                                      absl::Now() + absl::Seconds(60)));
  }
  ASSERT_TRUE(testing::WaitCallsStarted(channel_.get()));
  const size_t after = mallinfo2().uordblks;
  const size_t per_call = (after - before) / kQueued;
  std::printf("a queued call costs %zu heap octets (%zu-octet message)\n",
              per_call, req.ByteSizeLong());
  EXPECT_LT(per_call, 6u << 10);  // About 3.2 KiB (rpc/README.md).
  // (11 KiB before small messages were compacted into one block.)
  service_.gate.Release();
  for (auto& c : calls) {
    ASSERT_TRUE(c->done.WaitForNotificationWithTimeout(absl::Seconds(30)));
    EXPECT_TRUE(c->call->Finish(nullptr, nullptr).ok());
  }
#endif
}

}  // namespace
}  // namespace rpc
