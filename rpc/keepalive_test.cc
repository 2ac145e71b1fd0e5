// Keepalive and connection lifetime (rpc/README.md "Keepalive and connection
// lifetime"): client keepalive against a peer that stopped answering, the
// server's ping enforcement (GOAWAY ENHANCE_YOUR_CALM "too_many_pings") with
// our client and grpc++'s, max connection idle, max connection age with its
// grace, and server keepalive against a client that stopped answering.
// Durations are 50-700 ms; every wait is bounded.

#include "rpc/internal/keepalive.h"

#include <arpa/inet.h>
#include <grpcpp/grpcpp.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <memory>
#include <string>
#include <thread>
#include <utility>

#include "absl/synchronization/notification.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "gtest/gtest.h"
#include "rpc/internal/client_transport.h"
#include "rpc/internal/server_connection.h"
#include "rpc/rpc.h"
#include "rpc/testdata/test_service.grpc.pb.h"
#include "rpc/testdata/test_service.rpc.pb.h"
#include "transport/io/event_loop.h"
#include "transport/io/socket.h"
#include "transport/io/tcp.h"
#include "transport/testing/wait_until.h"

namespace rpc {
namespace {

using test::EchoRequest;
using test::EchoResponse;
using test::EchoService;

// Echo answers with the client's address (a new connection has a new port);
// sleep_ms sleeps in slices, message "hold" waits for `release`, and both
// give up when the call is cancelled.
class PeerEcho final : public EchoService::Service {
 public:
  Status Echo(ServerContext* ctx, const EchoRequest* req,
              EchoResponse* resp) override {
    ++entered;
    const absl::Time until = absl::Now() + absl::Milliseconds(req->sleep_ms());
    while (absl::Now() < until ||
           (req->message() == "hold" && !release.HasBeenNotified())) {
      if (ctx->IsCancelled()) {
        ++cancelled;
        return Status(StatusCode::CANCELLED, "cancelled");
      }
      absl::SleepFor(absl::Milliseconds(5));
    }
    resp->set_message(ctx->peer());
    return Status::OK;
  }
  std::atomic<int> cancelled{0};
  std::atomic<int> entered{0};
  absl::Notification release;
};

std::unique_ptr<Server> StartServer(ServerBuilder& builder, Service* service,
                                    int* port) {
  std::unique_ptr<Server> server =
      builder.AddListeningPort("127.0.0.1:0", InsecureServerCredentials(), port)
          .RegisterService(service)
          .BuildAndStart();
  EXPECT_NE(server, nullptr);
  return server;
}

std::shared_ptr<Channel> MakeChannel(int port,
                                     const ChannelArguments& args = {}) {
  return CreateCustomChannel("127.0.0.1:" + std::to_string(port),
                             InsecureChannelCredentials(), args);
}

// One Echo: its status, the server's view of our address in *peer.
Status Echo(EchoService::Stub* stub, int sleep_ms, std::string* peer,
            absl::Duration deadline = absl::Seconds(10)) {
  ClientContext ctx;
  ctx.set_deadline(absl::Now() + deadline);
  EchoRequest req;
  req.set_sleep_ms(sleep_ms);
  EchoResponse resp;
  Status s = stub->Echo(&ctx, req, &resp);
  if (peer != nullptr) *peer = resp.message();
  return s;
}

bool WaitFor(const std::function<bool()>& done, absl::Duration timeout) {
  return transport::testing::WaitUntil(done, timeout);
}

// A listening socket on 127.0.0.1 that accepts one connection and then never
// reads or writes: a peer that stopped answering.
class SilentPeer {
 public:
  SilentPeer() {
    listen_fd_ = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    addr.sin_port = 0;
    EXPECT_EQ(
        bind(listen_fd_, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), 0);
    EXPECT_EQ(listen(listen_fd_, 8), 0);
    socklen_t len = sizeof(addr);
    getsockname(listen_fd_, reinterpret_cast<sockaddr*>(&addr), &len);
    port_ = ntohs(addr.sin_port);
    acceptor_ = std::thread([this] {
      pollfd p{listen_fd_, POLLIN, 0};
      if (poll(&p, 1, 10000) == 1)
        accepted_fd_ = accept(listen_fd_, nullptr, nullptr);
    });
  }
  ~SilentPeer() {
    shutdown(listen_fd_, SHUT_RDWR);
    acceptor_.join();
    if (accepted_fd_ >= 0) close(accepted_fd_);
    close(listen_fd_);
  }
  int port() const { return port_; }

 private:
  int listen_fd_ = -1;
  int accepted_fd_ = -1;
  int port_ = 0;
  std::thread acceptor_;
};

// ---- (a) Client keepalive detects a peer that stopped answering ----

TEST(ClientKeepaliveTest, DetectsSilentPeerWithinTimeout) {
  SilentPeer peer;
  ChannelArguments args;
  args.keepalive_time = absl::Milliseconds(200);
  args.keepalive_timeout = absl::Milliseconds(200);
  auto channel = MakeChannel(peer.port(), args);
  auto stub = EchoService::NewStub(channel);
  const absl::Time start = absl::Now();
  Status s = Echo(stub.get(), 0, nullptr, absl::Seconds(20));
  const absl::Duration took = absl::Now() - start;
  EXPECT_EQ(s.error_code(), StatusCode::UNAVAILABLE) << s;
  EXPECT_NE(s.error_message().find("keepalive timeout"), std::string::npos)
      << s;
  // keepalive_time + keepalive_timeout, not the 20 s deadline.
  EXPECT_GE(took, absl::Milliseconds(350));
  EXPECT_LT(took, absl::Seconds(3));
}

TEST(ClientKeepaliveTest, WithoutKeepaliveTheCallWaitsForItsDeadline) {
  SilentPeer peer;
  auto channel = MakeChannel(peer.port());
  auto stub = EchoService::NewStub(channel);
  Status s = Echo(stub.get(), 0, nullptr, absl::Milliseconds(700));
  EXPECT_EQ(s.error_code(), StatusCode::DEADLINE_EXCEEDED) << s;
}

TEST(ClientKeepaliveTest, AnsweredPingsKeepALongCallAlive) {
  PeerEcho service;
  int port = 0;
  ServerBuilder builder;
  builder.SetMinPingIntervalWithoutData(absl::Milliseconds(10));
  auto server = StartServer(builder, &service, &port);
  ChannelArguments args;
  args.keepalive_time = absl::Milliseconds(50);
  args.keepalive_timeout = absl::Milliseconds(200);
  auto channel = MakeChannel(port, args);
  auto stub = EchoService::NewStub(channel);
  const uint64_t goaways = internal::ServerConnection::too_many_pings_goaways();
  EXPECT_TRUE(Echo(stub.get(), 600, nullptr).ok());
  EXPECT_EQ(internal::ServerConnection::too_many_pings_goaways(), goaways);
}

// ---- (b) Server enforcement of the clients' ping rate ----

// Runs one ClientTransport (no Channel) on its own loop and records what it
// tells its host.
class TransportHarness final : public internal::ClientTransport::Host {
 public:
  TransportHarness() {
    auto thread = transport::EventLoopThread::Start("ka-test");
    EXPECT_TRUE(thread.ok());
    thread_ = std::move(*thread);
  }
  ~TransportHarness() override {
    absl::Notification gone;
    thread_->loop()->Post([this, &gone] {
      transport_.reset();
      gone.Notify();
    });
    gone.WaitForNotificationWithTimeout(absl::Seconds(5));
    thread_.reset();
  }

  void Connect(int port, const internal::ClientTransportOptions& options) {
    absl::StatusOr<transport::SocketAddress> addr =
        transport::SocketAddress::ParseHostPort("127.0.0.1:" +
                                                std::to_string(port));
    ASSERT_TRUE(addr.ok());
    absl::Notification connected;
    transport::EventLoop* loop = thread_->loop();
    loop->Post([this, loop, addr = *addr, options, &connected] {
      transport::TcpConnect(
          loop, addr, absl::Seconds(5),
          [this, options, &connected](
              absl::StatusOr<std::unique_ptr<transport::TcpEndpoint>> ep) {
            if (ep.ok()) {
              transport_ = std::make_unique<internal::ClientTransport>(
                  this, std::move(*ep), options);
              transport_->Start();
            }
            connected.Notify();
          });
    });
    ASSERT_TRUE(connected.WaitForNotificationWithTimeout(absl::Seconds(5)));
  }

  void OnTransportDraining(internal::ClientTransport*) override {}
  void OnTransportClosed(internal::ClientTransport*) override { closed = true; }
  void OnTransportTooManyPings(internal::ClientTransport*) override {
    too_many_pings = true;
  }

  std::atomic<bool> closed{false};
  std::atomic<bool> too_many_pings{false};

 private:
  std::unique_ptr<transport::EventLoopThread> thread_;
  std::unique_ptr<internal::ClientTransport> transport_;  // Loop thread.
};

internal::ClientTransportOptions PingyOptions() {
  internal::ClientTransportOptions options;
  options.connection.role = transport::Role::kClient;
  options.keepalive_time = absl::Milliseconds(50);
  options.keepalive_timeout = absl::Seconds(1);
  options.keepalive_permit_without_calls = true;
  return options;
}

TEST(PingEnforcementTest, TooFrequentPingsGetTooManyPingsGoAway) {
  PeerEcho service;
  int port = 0;
  ServerBuilder builder;
  builder.SetMinPingIntervalWithoutData(absl::Seconds(1))
      .SetKeepalivePermitWithoutCalls(true);
  auto server = StartServer(builder, &service, &port);
  const uint64_t goaways = internal::ServerConnection::too_many_pings_goaways();
  TransportHarness harness;
  harness.Connect(port, PingyOptions());
  // Pings at ~50 ms; the 4th (3 strikes > 2) is answered with the GOAWAY.
  EXPECT_TRUE(
      WaitFor([&] { return harness.too_many_pings.load(); }, absl::Seconds(5)));
  EXPECT_TRUE(WaitFor([&] { return harness.closed.load(); }, absl::Seconds(5)));
  EXPECT_EQ(internal::ServerConnection::too_many_pings_goaways(), goaways + 1);
}

TEST(PingEnforcementTest, PingsWithinTheMinimumIntervalAreFine) {
  PeerEcho service;
  int port = 0;
  ServerBuilder builder;
  builder.AddChannelArgument("grpc.http2.min_ping_interval_without_data_ms", 20)
      .AddChannelArgument("grpc.keepalive_permit_without_calls", 1);
  auto server = StartServer(builder, &service, &port);
  TransportHarness harness;
  harness.Connect(port, PingyOptions());
  absl::SleepFor(absl::Milliseconds(500));
  EXPECT_FALSE(harness.too_many_pings.load());
  EXPECT_FALSE(harness.closed.load());
}

TEST(PingEnforcementTest, WithoutCallsOrPermitTheIntervalIsTwoHours) {
  PeerEcho service;
  int port = 0;
  ServerBuilder builder;
  builder.SetMinPingIntervalWithoutData(absl::Milliseconds(1));
  auto server = StartServer(builder, &service, &port);
  TransportHarness harness;
  harness.Connect(port, PingyOptions());
  EXPECT_TRUE(
      WaitFor([&] { return harness.too_many_pings.load(); }, absl::Seconds(5)));
}

TEST(PingEnforcementTest, CallsOfAnImpatientChannelFailUnavailable) {
  PeerEcho service;
  int port = 0;
  ServerBuilder builder;
  builder.SetMinPingIntervalWithoutData(absl::Seconds(1));
  auto server = StartServer(builder, &service, &port);
  const uint64_t goaways = internal::ServerConnection::too_many_pings_goaways();
  ChannelArguments args;
  args.keepalive_time = absl::Milliseconds(50);
  auto channel = MakeChannel(port, args);
  auto stub = EchoService::NewStub(channel);
  const absl::Time start = absl::Now();
  Status s = Echo(stub.get(), 3000, nullptr);
  EXPECT_EQ(s.error_code(), StatusCode::UNAVAILABLE) << s;
  EXPECT_LT(absl::Now() - start, absl::Seconds(2));
  EXPECT_EQ(internal::ServerConnection::too_many_pings_goaways(), goaways + 1);
  // The handler saw the cancellation.
  EXPECT_TRUE(
      WaitFor([&] { return service.cancelled.load() == 1; }, absl::Seconds(5)));
}

// The channel doubles its keepalive time on each too_many_pings (50, 100,
// 200, 400 ms) until the server accepts its rate (300 ms): then a call that
// outlives a few pings completes.
TEST(PingEnforcementTest, ChannelBacksOffUntilTheServerIsHappy) {
  PeerEcho service;
  int port = 0;
  ServerBuilder builder;
  builder.SetMinPingIntervalWithoutData(absl::Milliseconds(300));
  auto server = StartServer(builder, &service, &port);
  const uint64_t goaways = internal::ServerConnection::too_many_pings_goaways();
  ChannelArguments args;
  args.keepalive_time = absl::Milliseconds(50);
  auto channel = MakeChannel(port, args);
  auto stub = EchoService::NewStub(channel);
  int attempts = 0;
  Status s;
  do {
    ++attempts;
    s = Echo(stub.get(), 1000, nullptr);
  } while (!s.ok() && attempts < 8);
  EXPECT_TRUE(s.ok()) << s;
  const uint64_t got = internal::ServerConnection::too_many_pings_goaways();
  EXPECT_GE(got, goaways + 1);
  EXPECT_LE(got, goaways + 4);
  EXPECT_EQ(static_cast<uint64_t>(attempts - 1), got - goaways);
}

TEST(PingEnforcementTest, GrpcClientThatPingsTooOftenGetsGoAway) {
  PeerEcho service;
  int port = 0;
  ServerBuilder builder;
  // gRPC 1.51's client sends at most one PING per second whatever its
  // keepalive time: a 10 s minimum and one strike allowed make the third
  // PING (after about 2 s) the one that gets the GOAWAY.
  builder
      .AddChannelArgument("grpc.http2.min_ping_interval_without_data_ms", 10000)
      .AddChannelArgument("grpc.http2.max_ping_strikes", 1)
      .AddChannelArgument("grpc.keepalive_permit_without_calls", 1);
  auto server = StartServer(builder, &service, &port);
  const uint64_t goaways = internal::ServerConnection::too_many_pings_goaways();
  grpc::ChannelArguments args;
  args.SetInt(GRPC_ARG_KEEPALIVE_TIME_MS, 50);
  args.SetInt(GRPC_ARG_KEEPALIVE_TIMEOUT_MS, 5000);
  args.SetInt(GRPC_ARG_KEEPALIVE_PERMIT_WITHOUT_CALLS, 1);
  args.SetInt(GRPC_ARG_HTTP2_MAX_PINGS_WITHOUT_DATA, 0);
  auto channel =
      grpc::CreateCustomChannel("127.0.0.1:" + std::to_string(port),
                                grpc::InsecureChannelCredentials(), args);
  auto stub = test::grpcpeer::EchoService::NewStub(channel);
  // A call in flight: an idle grpc++ client reads only every 5 s (its backup
  // poller), so it would answer the server's GOAWAY late. The GOAWAY ends the
  // call long before the handler would.
  grpc::ClientContext ctx;
  ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(20));
  EchoRequest req;
  req.set_sleep_ms(10000);
  EchoResponse resp;
  const absl::Time start = absl::Now();
  grpc::Status s = stub->Echo(&ctx, req, &resp);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::UNAVAILABLE) << s.error_message();
  EXPECT_LT(absl::Now() - start, absl::Seconds(8));
  EXPECT_EQ(internal::ServerConnection::too_many_pings_goaways(), goaways + 1);
}

// Our client's hook, from grpc++'s own enforcement (default: no pings
// without calls, 2 strikes).
TEST(PingEnforcementTest, GrpcServerTooManyPingsReachesTheHook) {
  test::grpcpeer::EchoService::Service service;
  int port = 0;
  grpc::ServerBuilder builder;
  builder.AddListeningPort("127.0.0.1:0", grpc::InsecureServerCredentials(),
                           &port);
  builder.RegisterService(&service);
  std::unique_ptr<grpc::Server> server = builder.BuildAndStart();
  ASSERT_NE(server, nullptr);
  {
    TransportHarness harness;
    harness.Connect(port, PingyOptions());
    EXPECT_TRUE(WaitFor([&] { return harness.too_many_pings.load(); },
                        absl::Seconds(5)));
  }
  server->Shutdown(std::chrono::system_clock::now());
}

// ---- (c) Max connection idle ----

TEST(ConnectionLifetimeTest, IdleConnectionGetsGoAwayAndTheChannelReconnects) {
  PeerEcho service;
  int port = 0;
  ServerBuilder builder;
  builder.SetMaxConnectionIdle(absl::Milliseconds(300));
  auto server = StartServer(builder, &service, &port);
  auto channel = MakeChannel(port);
  auto stub = EchoService::NewStub(channel);
  // A call longer than the idle time keeps the connection: a call made
  // after the limit passed during it goes on the same connection.
  std::string held, during, after_idle;
  Status held_status;
  std::thread holder([&] {
    ClientContext ctx;
    ctx.set_deadline(absl::Now() + absl::Seconds(30));
    EchoRequest req;
    req.set_message("hold");
    EchoResponse resp;
    held_status = stub->Echo(&ctx, req, &resp);
    held = resp.message();
  });
  const bool entered =
      WaitFor([&] { return service.entered == 1; }, absl::Seconds(20));
  absl::SleepFor(absl::Milliseconds(600));  // Twice the limit, or more.
  const Status during_status = Echo(stub.get(), 0, &during);
  const absl::Time released = absl::Now();
  service.release.Notify();
  holder.join();
  ASSERT_TRUE(entered);
  ASSERT_TRUE(during_status.ok()) << during_status;
  ASSERT_TRUE(held_status.ok()) << held_status;
  EXPECT_EQ(during, held);
  // Idle: GOAWAY, no earlier than the limit after the last call ended, and
  // the next call goes to a new connection.
  ASSERT_TRUE(channel->WaitForStateChange(ConnectivityState::kReady,
                                          absl::Now() + absl::Seconds(20)));
  EXPECT_GE(absl::Now() - released, absl::Milliseconds(300));
  Status s = Echo(stub.get(), 0, &after_idle);
  ASSERT_TRUE(s.ok()) << s;
  EXPECT_NE(after_idle, held);
}

// Finite but enormous limits (beyond what now + duration can hold in
// nanoseconds) mean "never", not an overflowed deadline in the past.
TEST(ConnectionLifetimeTest, EnormousIdleAndAgeLimitsNeverFire) {
  PeerEcho service;
  int port = 0;
  ServerBuilder builder;
  builder.SetMaxConnectionIdle(absl::Hours(1e9))
      .SetMaxConnectionAge(absl::Hours(1e9))
      .SetMaxConnectionAgeGrace(absl::Hours(1e9));
  auto server = StartServer(builder, &service, &port);
  auto channel = MakeChannel(port);
  auto stub = EchoService::NewStub(channel);
  std::string first, later;
  ASSERT_TRUE(Echo(stub.get(), 0, &first).ok());
  absl::SleepFor(absl::Milliseconds(200));
  ASSERT_TRUE(Echo(stub.get(), 0, &later).ok());
  EXPECT_EQ(later, first);  // The same connection: no GOAWAY came.
}

// ---- (d) Max connection age with grace ----

TEST(ConnectionLifetimeTest, AgedConnectionDrainsWithinGrace) {
  PeerEcho service;
  int port = 0;
  ServerBuilder builder;
  builder.AddChannelArgument("grpc.max_connection_age_ms", 300)
      .AddChannelArgument("grpc.max_connection_age_grace_ms", 700);
  auto server = StartServer(builder, &service, &port);
  auto channel = MakeChannel(port);
  auto stub = EchoService::NewStub(channel);
  std::string first, long_call, later;
  ASSERT_TRUE(Echo(stub.get(), 0, &first).ok());
  // Outlives the age (270-330 ms) but ends within the grace.
  Status s = Echo(stub.get(), 500, &long_call);
  ASSERT_TRUE(s.ok()) << s;
  EXPECT_EQ(long_call, first);
  s = Echo(stub.get(), 0, &later);
  ASSERT_TRUE(s.ok()) << s;
  EXPECT_NE(later, first);
}

TEST(ConnectionLifetimeTest, CallOutlivingTheGraceFails) {
  PeerEcho service;
  int port = 0;
  ServerBuilder builder;
  builder.SetMaxConnectionAge(absl::Milliseconds(300))
      .SetMaxConnectionAgeGrace(absl::Milliseconds(500));
  auto server = StartServer(builder, &service, &port);
  auto channel = MakeChannel(port);
  auto stub = EchoService::NewStub(channel);
  const absl::Time start = absl::Now();
  Status s = Echo(stub.get(), 5000, nullptr);
  EXPECT_EQ(s.error_code(), StatusCode::UNAVAILABLE) << s;
  // Age (at most 330 ms) + grace, not the 5 s handler.
  EXPECT_LT(absl::Now() - start, absl::Seconds(3));
  EXPECT_TRUE(
      WaitFor([&] { return service.cancelled.load() == 1; }, absl::Seconds(5)));
  // The channel carries on over a new connection.
  s = Echo(stub.get(), 0, nullptr);
  EXPECT_TRUE(s.ok()) << s;
}

// ---- (e) Server keepalive detects a client that stopped answering ----

TEST(ServerKeepaliveTest, SilentClientIsDisconnected) {
  PeerEcho service;
  int port = 0;
  ServerBuilder builder;
  builder.SetKeepaliveTime(absl::Milliseconds(200))
      .SetKeepaliveTimeout(absl::Milliseconds(200))
      .SetKeepalivePermitWithoutCalls(true);
  auto server = StartServer(builder, &service, &port);
  // A raw client: the preface and empty SETTINGS, then it reads everything
  // and answers nothing (not even the SETTINGS ACK: that would time out
  // only after 10 s).
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = htons(static_cast<uint16_t>(port));
  ASSERT_EQ(connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), 0);
  const std::string preface =
      std::string("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n") +
      std::string("\x00\x00\x00\x04\x00\x00\x00\x00\x00", 9);
  ASSERT_EQ(write(fd, preface.data(), preface.size()),
            static_cast<ssize_t>(preface.size()));
  const absl::Time start = absl::Now();
  std::string received;
  bool closed = false;
  while (!closed && absl::Now() - start < absl::Seconds(5)) {
    pollfd p{fd, POLLIN, 0};
    if (poll(&p, 1, 100) != 1) continue;
    char buf[4096];
    const ssize_t n = read(fd, buf, sizeof(buf));
    if (n <= 0) {
      closed = true;
    } else {
      received.append(buf, static_cast<size_t>(n));
    }
  }
  const absl::Duration took = absl::Now() - start;
  close(fd);
  EXPECT_TRUE(closed);
  EXPECT_LT(took, absl::Seconds(3));
  // It did send a (non-ACK) PING first.
  bool saw_ping = false;
  for (size_t at = 0; at + 9 <= received.size();) {
    const size_t len = (static_cast<uint8_t>(received[at]) << 16) |
                       (static_cast<uint8_t>(received[at + 1]) << 8) |
                       static_cast<uint8_t>(received[at + 2]);
    if (received[at + 3] == 6 && (received[at + 4] & 1) == 0) saw_ping = true;
    at += 9 + len;
  }
  EXPECT_TRUE(saw_ping);
}

// ---- Builder arguments ----

TEST(ServerBuilderKeepaliveTest, PingPolicyCountsStrikesLikeGrpc) {
  internal::PingPolicy policy(internal::PingPolicyOptions{
      absl::Milliseconds(100), /*max_ping_strikes=*/2,
      /*permit_without_calls=*/false});
  const int64_t ms = 1000 * 1000;
  // With calls: 100 ms apart is fine, closer is a strike.
  EXPECT_FALSE(policy.OnPing(0, 0, true));
  EXPECT_FALSE(policy.OnPing(100 * ms, 0, true));
  EXPECT_FALSE(policy.OnPing(150 * ms, 0, true));
  EXPECT_EQ(policy.strikes(), 1);
  EXPECT_FALSE(policy.OnPing(160 * ms, 0, true));
  EXPECT_EQ(policy.strikes(), 2);
  // Sending HEADERS/DATA resets the strikes.
  EXPECT_FALSE(policy.OnPing(170 * ms, 1, true));
  EXPECT_EQ(policy.strikes(), 0);
  // Without calls the interval is 2 hours.
  EXPECT_FALSE(policy.OnPing(10000 * ms, 1, false));
  EXPECT_FALSE(policy.OnPing(20000 * ms, 1, false));
  EXPECT_EQ(policy.strikes(), 2);
  EXPECT_TRUE(policy.OnPing(30000 * ms, 1, false));
}

TEST(ServerBuilderKeepaliveTest, UnlimitedStrikes) {
  internal::PingPolicy policy(
      internal::PingPolicyOptions{absl::Minutes(5), /*max_ping_strikes=*/0,
                                  /*permit_without_calls=*/true});
  for (int i = 0; i < 100; ++i) EXPECT_FALSE(policy.OnPing(i, 0, false));
}

}  // namespace
}  // namespace rpc
