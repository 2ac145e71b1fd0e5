// A channel's connection attempts end with it: a channel destroyed while
// its subchannel connects (plain TCP to a listener whose backlog is full, a
// TLS handshake with a server that never answers) closes that socket then,
// not when the attempt's connect timeout (here 10 minutes) ran out. The
// channel is destroyed directly, or when the last call holding it (a
// wait-for-ready call, cancelled) ended. So do a subchannel's whose address
// re-resolution dropped. Every wait is bounded (far below the 10 minutes a
// leftover attempt would stay).

#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <memory>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "gtest/gtest.h"
#include "rpc/rpc.h"
#include "rpc/testdata/test_service.rpc.pb.h"
#include "rpc/testing/channel_testing.h"
#include "transport/testing/dnsmasq.h"
#include "transport/testing/echo_peer.h"
#include "transport/testing/full_backlog_listener.h"
#include "transport/testing/test_certs.h"
#include "transport/testing/wait_until.h"

namespace rpc {
namespace {

using channel_testing::AsyncEcho;
using channel_testing::LoopbackListener;
using channel_testing::TestArgs;
using test::EchoService;
using transport::testing::FullBacklogListener;
using transport::testing::ReadsEofWithin;
using transport::testing::WaitUntil;

constexpr absl::Duration kWait = absl::Seconds(30);

// Arguments whose connect attempts would outlive the test by far.
ChannelArguments SlowConnectArgs(const char* policy = "pick_first") {
  ChannelArguments args = TestArgs(policy);
  args.min_connect_timeout = absl::Minutes(10);
  return args;
}

// Starts a wait-for-ready call on `stub` (it waits for a connection).
std::unique_ptr<AsyncEcho> StartWaitingCall(EchoService::Stub* stub) {
  auto call = std::make_unique<AsyncEcho>();
  AsyncEcho* c = call.get();
  c->ctx.set_deadline(absl::Now() + absl::Minutes(5));
  c->ctx.set_wait_for_ready(true);
  stub->async()->Echo(&c->ctx, &c->req, &c->resp, [c](Status status) {
    c->status = std::move(status);
    c->done.Notify();
  });
  return call;
}

// Drops the stub and the channel (the call still holds it), then cancels the
// call: the channel is destroyed when the call ended.
void DropAndCancel(std::shared_ptr<Channel>* channel,
                   std::unique_ptr<EchoService::Stub>* stub, AsyncEcho* call) {
  stub->reset();
  channel->reset();
  call->ctx.TryCancel();
  ASSERT_TRUE(call->done.WaitForNotificationWithTimeout(kWait));
  EXPECT_EQ(call->status.error_code(), StatusCode::CANCELLED)
      << call->status.error_message();
}

TEST(ChannelConnectTest, DestroyedChannelClosesItsPendingTcpConnect) {
  // A listener nobody accepts from, its queue filled: the kernel drops
  // further SYNs, so the channel's connect stays in SYN_SENT. Only that one
  // is counted (not the listener's own fillers, which expire by themselves).
  FullBacklogListener hanging;
  ASSERT_TRUE(hanging.Holds()) << "the listener's backlog does not hold a SYN";
  ASSERT_EQ(hanging.PendingConnects(), 0);
  const std::string target = absl::StrCat("127.0.0.1:", hanging.port());

  // Destroyed directly: closed by the time the destructor returns.
  {
    auto channel = CreateCustomChannel(target, InsecureChannelCredentials(),
                                       SlowConnectArgs());
    channel->GetState(/*try_to_connect=*/true);
    ASSERT_TRUE(
        WaitUntil([&] { return hanging.PendingConnects() == 1; }, kWait))
        << "the channel's connect is not in SYN_SENT: "
        << hanging.PendingConnects();
    channel.reset();  // Returns once the channel closed on its loop.
    EXPECT_EQ(hanging.PendingConnects(), 0);
  }
  // Destroyed when its last call, waiting for the connection, ended.
  {
    auto channel = CreateCustomChannel(target, InsecureChannelCredentials(),
                                       SlowConnectArgs());
    auto stub = EchoService::NewStub(channel);
    std::unique_ptr<AsyncEcho> call = StartWaitingCall(stub.get());
    ASSERT_TRUE(
        WaitUntil([&] { return hanging.PendingConnects() == 1; }, kWait))
        << "the channel's connect is not in SYN_SENT: "
        << hanging.PendingConnects();
    ASSERT_NO_FATAL_FAILURE(DropAndCancel(&channel, &stub, call.get()));
    EXPECT_TRUE(
        WaitUntil([&] { return hanging.PendingConnects() == 0; }, kWait))
        << hanging.PendingConnects();
  }
}

TEST(ChannelConnectTest, AddressDroppedByReResolutionClosesItsPendingConnect) {
  // svc.test is 127.0.0.1, where the channel's connect hangs, and 127.0.0.2,
  // where nothing listens on the port: its attempts fail at once, so the
  // channel (round_robin) resolves again and again. Once 127.0.0.1 leaves
  // the answer, its subchannel, still connecting, is dropped: its socket
  // closes then, not after the 10-minute connect timeout.
  FullBacklogListener hanging;
  ASSERT_TRUE(hanging.Holds()) << "the listener's backlog does not hold a SYN";
  auto dns = transport::testing::DnsmasqServer::Start(
      {{"svc.test", "127.0.0.1"}, {"svc.test", "127.0.0.2"}});
  ASSERT_TRUE(dns.ok()) << dns.status();
  auto channel = CreateCustomChannel(
      absl::StrCat("dns://", (*dns)->address(), "/svc.test:", hanging.port()),
      InsecureChannelCredentials(), SlowConnectArgs("round_robin"));
  channel->GetState(/*try_to_connect=*/true);
  ASSERT_TRUE(WaitUntil([&] { return hanging.PendingConnects() == 1; }, kWait))
      << "the channel's connect is not in SYN_SENT: "
      << hanging.PendingConnects();
  ASSERT_TRUE((*dns)->SetRecords({{"svc.test", "127.0.0.2"}}).ok());
  EXPECT_TRUE(WaitUntil([&] { return hanging.PendingConnects() == 0; }, kWait))
      << hanging.PendingConnects();
}

TEST(ChannelConnectTest, DestroyedChannelEndsItsPendingTlsHandshake) {
  const auto& certs = transport::testing::GetTestCertificates();
  ASSERT_TRUE(certs.ok()) << certs.status();
  // A TCP listener that accepts and never answers the ClientHello.
  int port = 0;
  const int listen_fd = LoopbackListener(16, &port);
  ASSERT_GE(listen_fd, 0);
  SslCredentialsOptions options;
  options.pem_root_certs = certs->ca_pem;
  auto channel =
      CreateCustomChannel(absl::StrCat("localhost:", port),
                          SslCredentials(options), SlowConnectArgs());
  auto stub = EchoService::NewStub(channel);
  std::unique_ptr<AsyncEcho> call = StartWaitingCall(stub.get());
  pollfd p{listen_fd, POLLIN, 0};
  ASSERT_EQ(poll(&p, 1, static_cast<int>(absl::ToInt64Milliseconds(kWait))), 1);
  const int conn = accept(listen_fd, nullptr, nullptr);
  ASSERT_GE(conn, 0);
  // The ClientHello arrived: the handshake is under way.
  pollfd hello{conn, POLLIN, 0};
  ASSERT_EQ(poll(&hello, 1, static_cast<int>(absl::ToInt64Milliseconds(kWait))),
            1);

  ASSERT_NO_FATAL_FAILURE(DropAndCancel(&channel, &stub, call.get()));
  // The client's socket closed with the channel: the server reads EOF, not
  // only after the 10-minute connect timeout.
  EXPECT_TRUE(ReadsEofWithin(conn, kWait));
  close(conn);
  close(listen_fd);
}

}  // namespace
}  // namespace rpc
