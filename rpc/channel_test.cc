// Channel for real deployments: load balancing (pick_first, round_robin)
// over two of our servers on 127.0.0.2 and 127.0.0.3 with one port, reached
// through an ipv4: address list or a real DNS server (dnsmasq); failover
// without failed wait-for-ready calls; fail-fast vs wait-for-ready;
// connectivity states; DNS errors; unix: targets. Every wait is bounded.

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "absl/time/clock.h"
#include "gtest/gtest.h"
#include "rpc/internal/channel_impl.h"
#include "rpc/internal/server_connection.h"
#include "rpc/rpc.h"
#include "rpc/testdata/test_service.rpc.pb.h"
#include "transport/testing/dnsmasq.h"
#include "transport/testing/test_certs.h"
#include "transport/testing/wait_until.h"

namespace rpc {
namespace {

using test::EchoRequest;
using test::EchoResponse;
using test::EchoService;

// Answers with its name and counts its calls.
class NamedService final : public EchoService::Service {
 public:
  explicit NamedService(std::string name) : name_(std::move(name)) {}
  Status Echo(ServerContext* /*ctx*/, const EchoRequest* req,
              EchoResponse* resp) override {
    ++calls;
    if (req->sleep_ms() > 0)
      absl::SleepFor(absl::Milliseconds(req->sleep_ms()));
    resp->set_message(name_);
    return Status::OK;
  }
  std::atomic<int> calls{0};

 private:
  const std::string name_;
};

struct Backend {
  std::unique_ptr<NamedService> service;
  std::unique_ptr<Server> server;
};

// A server on `address` ("host:port", port 0: any); nullptr server when the
// port is taken.
Backend StartBackend(const std::string& name, const std::string& address,
                     int* port) {
  Backend b;
  b.service = std::make_unique<NamedService>(name);
  int selected = 0;
  b.server =
      ServerBuilder()
          .AddListeningPort(address, InsecureServerCredentials(), &selected)
          .RegisterService(b.service.get())
          .BuildAndStart();
  const bool unix = address.rfind("unix:", 0) == 0;  // No port.
  if (b.server != nullptr && selected == 0 && !unix) b.server.reset();
  if (port != nullptr) *port = selected;
  return b;
}

// Two servers, "a" on 127.0.0.2:P and "b" on 127.0.0.3:P.
bool StartPair(Backend* a, Backend* b, int* port) {
  for (int attempt = 0; attempt < 20; ++attempt) {
    *a = StartBackend("a", "127.0.0.2:0", port);
    if (a->server == nullptr) continue;
    *b = StartBackend("b", absl::StrCat("127.0.0.3:", *port), nullptr);
    if (b->server != nullptr) return true;
    a->server->Shutdown(absl::Now());
  }
  return false;
}

// One unary call; *who gets the server's name.
Status Call(EchoService::Stub* stub, bool wait_for_ready,
            absl::Duration timeout, std::string* who = nullptr) {
  ClientContext ctx;
  ctx.set_deadline(absl::Now() + timeout);
  ctx.set_wait_for_ready(wait_for_ready);
  EchoRequest req;
  EchoResponse resp;
  Status s = stub->Echo(&ctx, req, &resp);
  if (who != nullptr) *who = resp.message();
  return s;
}

using transport::testing::WaitUntil;

// Fast reconnects for tests.
ChannelArguments TestArgs(const std::string& policy) {
  ChannelArguments args;
  args.SetLoadBalancingPolicyName(policy);
  args.initial_backoff = absl::Milliseconds(100);
  args.max_backoff = absl::Milliseconds(300);
  args.min_connect_timeout = absl::Seconds(2);
  args.dns_min_time_between_resolutions = absl::Milliseconds(200);
  return args;
}

struct LbParam {
  const char* policy;
  bool dns;
};

class ChannelLbTest : public ::testing::TestWithParam<LbParam> {
 protected:
  void SetUp() override {
    ASSERT_TRUE(StartPair(&a_, &b_, &port_));
    if (GetParam().dns) {
      auto dns = transport::testing::DnsmasqServer::Start(
          {{"svc.test", "127.0.0.2"}, {"svc.test", "127.0.0.3"}});
      ASSERT_TRUE(dns.ok()) << dns.status();
      dns_ = std::move(*dns);
      target_ = absl::StrCat("dns://", dns_->address(), "/svc.test:", port_);
    } else {
      target_ = absl::StrCat("ipv4:127.0.0.2:", port_, ",127.0.0.3:", port_);
    }
    channel_ = CreateCustomChannel(target_, InsecureChannelCredentials(),
                                   TestArgs(GetParam().policy));
    ASSERT_NE(channel_, nullptr);
    stub_ = EchoService::NewStub(channel_);
  }
  void TearDown() override {
    stub_.reset();
    channel_.reset();
    for (Backend* b : {&a_, &b_}) {
      if (b->server != nullptr) b->server->Shutdown(absl::Now());
    }
  }
  bool round_robin() const {
    return std::string(GetParam().policy) == "round_robin";
  }

  Backend a_, b_;
  int port_ = 0;
  std::unique_ptr<transport::testing::DnsmasqServer> dns_;
  std::string target_;
  std::shared_ptr<Channel> channel_;
  std::unique_ptr<EchoService::Stub> stub_;
};

TEST_P(ChannelLbTest, SpreadsOrSticks) {
  ASSERT_TRUE(channel_->WaitForConnected(absl::Now() + absl::Seconds(5)));
  if (round_robin()) {
    // Both subchannels connect soon after the first; then calls alternate.
    const absl::Time until = absl::Now() + absl::Seconds(5);
    while ((a_.service->calls == 0 || b_.service->calls == 0) &&
           absl::Now() < until) {
      ASSERT_TRUE(Call(stub_.get(), true, absl::Seconds(5)).ok());
    }
    ASSERT_GT(a_.service->calls.load(), 0);
    ASSERT_GT(b_.service->calls.load(), 0);
    const int a0 = a_.service->calls, b0 = b_.service->calls;
    for (int i = 0; i < 20; ++i) {
      ASSERT_TRUE(Call(stub_.get(), false, absl::Seconds(5)).ok());
    }
    EXPECT_EQ(a_.service->calls - a0, 10);
    EXPECT_EQ(b_.service->calls - b0, 10);
  } else {
    std::string first;
    ASSERT_TRUE(Call(stub_.get(), false, absl::Seconds(5), &first).ok());
    for (int i = 0; i < 20; ++i) {
      std::string who;
      ASSERT_TRUE(Call(stub_.get(), false, absl::Seconds(5), &who).ok());
      EXPECT_EQ(who, first);
    }
    EXPECT_TRUE(a_.service->calls == 21 || b_.service->calls == 21);
    if (!GetParam().dns) {
      EXPECT_EQ(first, "a");  // The first address.
    }
  }
}

TEST_P(ChannelLbTest, StoppingAServerMovesTrafficWithoutFailedCalls) {
  ASSERT_TRUE(channel_->WaitForConnected(absl::Now() + absl::Seconds(5)));
  std::atomic<bool> stop{false};
  std::atomic<int> ok{0};
  absl::Mutex mu;
  std::vector<std::string> failures;
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&] {
      while (!stop) {
        Status s = Call(stub_.get(), /*wait_for_ready=*/true, absl::Seconds(5));
        if (s.ok()) {
          ++ok;
        } else {
          absl::MutexLock lock(&mu);
          failures.push_back(s.error_message());
        }
      }
    });
  }
  // Calls flow; then stop the server that gets them (pick_first), or "a".
  const absl::Time until = absl::Now() + absl::Seconds(5);
  while (ok < 50 && absl::Now() < until) absl::SleepFor(absl::Milliseconds(5));
  Backend* victim = &a_;
  Backend* survivor = &b_;
  if (!round_robin() && b_.service->calls > a_.service->calls) {
    std::swap(victim, survivor);
  }
  victim->server->Shutdown(absl::Now() + absl::Seconds(2));
  const int survivor_before = survivor->service->calls;
  const int ok_before = ok;
  const absl::Time until2 = absl::Now() + absl::Seconds(5);
  while (ok < ok_before + 100 && absl::Now() < until2) {
    absl::SleepFor(absl::Milliseconds(5));
  }
  stop = true;
  for (auto& t : threads) t.join();
  EXPECT_TRUE(failures.empty())
      << failures.size()
      << " failed, first: " << (failures.empty() ? "" : failures[0]);
  EXPECT_GE(ok.load(), ok_before + 100);
  EXPECT_GE(survivor->service->calls - survivor_before, 100);
  // New fail-fast calls work too.
  EXPECT_TRUE(Call(stub_.get(), false, absl::Seconds(5)).ok());
}

INSTANTIATE_TEST_SUITE_P(Policies, ChannelLbTest,
                         ::testing::Values(LbParam{"pick_first", false},
                                           LbParam{"round_robin", false},
                                           LbParam{"pick_first", true},
                                           LbParam{"round_robin", true}),
                         [](const ::testing::TestParamInfo<LbParam>& info) {
                           return absl::StrCat(
                               info.param.policy == std::string("round_robin")
                                   ? "RoundRobin"
                                   : "PickFirst",
                               info.param.dns ? "Dns" : "Ipv4");
                         });

// A TCP socket listening on `ip` (its port in *port) that nobody serves; -1
// on failure. The caller closes it.
int Listener(const char* ip, int backlog, int* port) {
  const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return -1;
  sockaddr_in addr = {};
  addr.sin_family = AF_INET;
  inet_pton(AF_INET, ip, &addr.sin_addr);
  socklen_t len = sizeof(addr);
  if (bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0 ||
      listen(fd, backlog) != 0 ||
      getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
    close(fd);
    return -1;
  }
  *port = ntohs(addr.sin_port);
  return fd;
}

int LoopbackListener(int backlog, int* port) {
  return Listener("127.0.0.1", backlog, port);
}

// A port where nothing listens (a server's, after it stopped).
int DeadPort() {
  int port = 0;
  Backend b = StartBackend("x", "127.0.0.1:0", &port);
  b.server->Shutdown(absl::Now());
  return port;
}

// The statuses, not a clock, show what each call waited for.
TEST(ChannelTest, FailFastVsWaitForReady) {
  const int port = DeadPort();
  {
    // After the first attempt failed, the next one is a long way off
    // (backoff 600 s, jitter 20%): a call that waited for it would end
    // DEADLINE_EXCEEDED.
    ChannelArguments args = TestArgs("pick_first");
    args.initial_backoff = args.max_backoff = absl::Seconds(600);
    auto channel = CreateCustomChannel(absl::StrCat("ipv4:127.0.0.1:", port),
                                       InsecureChannelCredentials(), args);
    auto stub = EchoService::NewStub(channel);
    // Fail-fast: UNAVAILABLE as soon as the attempt failed.
    Status s = Call(stub.get(), false, absl::Seconds(30));
    EXPECT_EQ(s.error_code(), StatusCode::UNAVAILABLE) << s.error_message();
    EXPECT_NE(s.error_message().find("failed to connect"), std::string::npos)
        << s.error_message();
    EXPECT_EQ(channel->GetState(false), ConnectivityState::kTransientFailure);
    // In TRANSIENT_FAILURE fail-fast calls fail at once (not at the next
    // attempt).
    s = Call(stub.get(), false, absl::Seconds(30));
    EXPECT_EQ(s.error_code(), StatusCode::UNAVAILABLE) << s.error_message();
  }
  auto channel =
      CreateCustomChannel(absl::StrCat("ipv4:127.0.0.1:", port),
                          InsecureChannelCredentials(), TestArgs("pick_first"));
  auto stub = EchoService::NewStub(channel);
  // Wait-for-ready: waits until its deadline, through failed attempts (every
  // 100-300 ms), and not less.
  const absl::Time start = absl::Now();
  Status s = Call(stub.get(), true, absl::Milliseconds(400));
  EXPECT_EQ(s.error_code(), StatusCode::DEADLINE_EXCEEDED) << s.error_message();
  EXPECT_GE(absl::Now() - start, absl::Milliseconds(390));
  // ... and succeeds when a server appears before the deadline: the call is
  // made while nothing listens.
  ClientContext ctx;
  ctx.set_deadline(absl::Now() + absl::Seconds(30));
  ctx.set_wait_for_ready(true);
  EchoRequest req;
  EchoResponse resp;
  Status late;
  absl::Notification done;
  stub->async()->Echo(&ctx, &req, &resp, [&](Status status) {
    late = std::move(status);
    done.Notify();
  });
  Backend b = StartBackend("late", absl::StrCat("127.0.0.1:", port), nullptr);
  if (b.server == nullptr) ctx.TryCancel();
  ASSERT_TRUE(done.WaitForNotificationWithTimeout(absl::Seconds(60)));
  ASSERT_NE(b.server, nullptr) << "port " << port << " was taken meanwhile";
  EXPECT_TRUE(late.ok()) << late.error_message();
  EXPECT_EQ(resp.message(), "late");
  EXPECT_EQ(channel->GetState(false), ConnectivityState::kReady);
  b.server->Shutdown(absl::Now());
}

// Established connections whose local end is `ip`:`port` (the server's
// side), from /proc/net/tcp.
int EstablishedTo(const char* ip, int port) {
  in_addr a;
  inet_pton(AF_INET, ip, &a);
  char local[32];
  snprintf(local, sizeof(local), "%08X:%04X", a.s_addr, port);
  FILE* f = fopen("/proc/net/tcp", "r");
  if (f == nullptr) return -1;
  char line[512];
  int n = 0;
  while (fgets(line, sizeof(line), f) != nullptr) {
    char l[64], r[64];
    unsigned state = 0;
    if (sscanf(line, " %*d: %63s %63s %x", l, r, &state) == 3 &&
        std::string(l) == local && state == 1 /* ESTABLISHED */) {
      ++n;
    }
  }
  fclose(f);
  return n;
}

TEST(ChannelTest, PickFirstKeepsOneConnectionAfterEveryAddressFailed) {
  // Both servers down: the first pass fails, then every address is retried
  // at once. When both come back, pick_first keeps the first connection
  // that came up and closes the other.
  Backend a, b;
  int port = 0;
  ASSERT_TRUE(StartPair(&a, &b, &port));
  a.server->Shutdown(absl::Now());
  b.server->Shutdown(absl::Now());
  auto channel = CreateCustomChannel(
      absl::StrCat("ipv4:127.0.0.2:", port, ",127.0.0.3:", port),
      InsecureChannelCredentials(), TestArgs("pick_first"));
  auto stub = EchoService::NewStub(channel);
  EXPECT_EQ(Call(stub.get(), false, absl::Seconds(5)).error_code(),
            StatusCode::UNAVAILABLE);
  a = StartBackend("a", absl::StrCat("127.0.0.2:", port), nullptr);
  b = StartBackend("b", absl::StrCat("127.0.0.3:", port), nullptr);
  ASSERT_TRUE(a.server != nullptr && b.server != nullptr)
      << "port " << port << " was taken meanwhile";
  ASSERT_TRUE(Call(stub.get(), true, absl::Seconds(5)).ok());
  ASSERT_NE(EstablishedTo("127.0.0.2", port), -1) << "no /proc/net/tcp";
  // The retry timers of both subchannels have fired within max_backoff.
  absl::SleepFor(absl::Milliseconds(600));
  int open = 0;
  for (int i = 0; i < 100; ++i) {
    open = EstablishedTo("127.0.0.2", port) + EstablishedTo("127.0.0.3", port);
    if (open == 1) break;
    absl::SleepFor(absl::Milliseconds(20));
  }
  EXPECT_EQ(open, 1);
  for (int i = 0; i < 10; ++i) {
    ASSERT_TRUE(Call(stub.get(), false, absl::Seconds(5)).ok());
  }
  // Every call went to the one server kept.
  EXPECT_TRUE(a.service->calls == 11 || b.service->calls == 11)
      << a.service->calls << " + " << b.service->calls;
  a.server->Shutdown(absl::Now());
  b.server->Shutdown(absl::Now());
}

TEST(ChannelTest, ReResolvesWhenTheConnectionDrops) {
  // svc.test is 127.0.0.2; while the channel is connected the record moves
  // to 127.0.0.3 (no re-resolution is needed yet: calls stay on a). When a
  // stops, the channel resolves again and reaches b.
  Backend a, b;
  int port = 0;
  ASSERT_TRUE(StartPair(&a, &b, &port));
  auto dns =
      transport::testing::DnsmasqServer::Start({{"svc.test", "127.0.0.2"}});
  ASSERT_TRUE(dns.ok()) << dns.status();
  auto channel = CreateCustomChannel(
      absl::StrCat("dns://", (*dns)->address(), "/svc.test:", port),
      InsecureChannelCredentials(), TestArgs("pick_first"));
  auto stub = EchoService::NewStub(channel);
  std::string who;
  ASSERT_TRUE(Call(stub.get(), false, absl::Seconds(5), &who).ok());
  EXPECT_EQ(who, "a");
  ASSERT_TRUE((*dns)->SetRecords({{"svc.test", "127.0.0.3"}}).ok());
  for (int i = 0; i < 5; ++i) {
    ASSERT_TRUE(Call(stub.get(), false, absl::Seconds(5), &who).ok());
    EXPECT_EQ(who, "a");
  }
  // A graceful shutdown: GOAWAY, a PING, and the connection ends after the
  // channel answered that PING, so by the time Shutdown returns the channel
  // has read the GOAWAY and picks A no more. The wait-for-ready call goes to
  // b. (Shutdown(absl::Now()) instead closes right after the first GOAWAY,
  // which names no last stream: a call the channel sent before reading it
  // fails UNAVAILABLE "connection failed: peer closed the connection",
  // since nothing tells the client the server never saw it.)
  a.server->Shutdown(absl::Now() + absl::Seconds(10));
  const Status s = Call(stub.get(), true, absl::Seconds(5), &who);
  ASSERT_TRUE(s.ok()) << s.error_code() << ": " << s.error_message();
  EXPECT_EQ(who, "b");
  EXPECT_EQ(b.service->calls, 1);
  b.server->Shutdown(absl::Now());
}

}  // namespace

namespace internal {
class ChannelTestPeer {
 public:
  static void SetFirstStreamId(Channel* channel, uint32_t id) {
    ChannelAccess::Impl(channel)->first_stream_id_for_test_ = id;
  }
};
}  // namespace internal

namespace {

TEST(ChannelTest, ConnectionsWhoseStreamIdsRunOutAreReplaced) {
  // Each connection has three stream ids left: the calls after them go to
  // new connections, and none fails.
  int port = 0;
  Backend b = StartBackend("s", "127.0.0.1:0", &port);
  ASSERT_NE(b.server, nullptr);
  auto channel =
      CreateCustomChannel(absl::StrCat("127.0.0.1:", port),
                          InsecureChannelCredentials(), TestArgs("pick_first"));
  internal::ChannelTestPeer::SetFirstStreamId(channel.get(),
                                              transport::kMaxStreamId - 4);
  auto stub = EchoService::NewStub(channel);
  for (int i = 0; i < 10; ++i) {
    Status s = Call(stub.get(), false, absl::Seconds(5));
    ASSERT_TRUE(s.ok()) << i << ": " << s;
  }
  EXPECT_EQ(b.service->calls, 10);
  b.server->Shutdown(absl::Now());
}

TEST(ChannelTest, ConnectivityStates) {
  int port = 0;
  Backend b = StartBackend("s", "127.0.0.1:0", &port);
  ASSERT_NE(b.server, nullptr);
  auto channel =
      CreateCustomChannel(absl::StrCat("127.0.0.1:", port),
                          InsecureChannelCredentials(), TestArgs("pick_first"));
  // Lazy: IDLE until asked.
  EXPECT_EQ(channel->GetState(false), ConnectivityState::kIdle);
  EXPECT_FALSE(channel->WaitForStateChange(
      ConnectivityState::kIdle, absl::Now() + absl::Milliseconds(100)));
  std::vector<ConnectivityState> seen;
  ConnectivityState s = channel->GetState(true);
  EXPECT_EQ(s, ConnectivityState::kIdle);
  const absl::Time deadline = absl::Now() + absl::Seconds(5);
  while (s != ConnectivityState::kReady &&
         channel->WaitForStateChange(s, deadline)) {
    s = channel->GetState(false);
    seen.push_back(s);
  }
  ASSERT_EQ(s, ConnectivityState::kReady);
  // CONNECTING is brief on loopback: a poller may see READY first
  // (ResolvingIsConnecting holds CONNECTING still).
  EXPECT_TRUE(seen.front() == ConnectivityState::kConnecting ||
              seen.front() == ConnectivityState::kReady);
  // The server goes away: IDLE (pick_first), then connecting again on
  // request fails: TRANSIENT_FAILURE.
  b.server->Shutdown(absl::Now() + absl::Seconds(1));
  ASSERT_TRUE(channel->WaitForStateChange(ConnectivityState::kReady,
                                          absl::Now() + absl::Seconds(5)));
  EXPECT_EQ(channel->GetState(false), ConnectivityState::kIdle);
  s = channel->GetState(true);
  const absl::Time deadline2 = absl::Now() + absl::Seconds(5);
  while (s != ConnectivityState::kTransientFailure &&
         channel->WaitForStateChange(s, deadline2)) {
    s = channel->GetState(false);
  }
  EXPECT_EQ(s, ConnectivityState::kTransientFailure);
  EXPECT_FALSE(
      channel->WaitForConnected(absl::Now() + absl::Milliseconds(200)));
}

TEST(ChannelTest, ResolvingIsConnectingAndFailFastCallsWait) {
  // A DNS "server" that never answers: resolution takes c-ares's timeout.
  const int fd = socket(AF_INET, SOCK_DGRAM, 0);
  ASSERT_GE(fd, 0);
  sockaddr_in addr = {};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), 0);
  socklen_t len = sizeof(addr);
  ASSERT_EQ(getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len), 0);
  auto channel = CreateCustomChannel(
      absl::StrCat("dns://127.0.0.1:", ntohs(addr.sin_port), "/svc.test:1"),
      InsecureChannelCredentials(), TestArgs("pick_first"));
  EXPECT_EQ(channel->GetState(true), ConnectivityState::kIdle);
  ASSERT_TRUE(channel->WaitForStateChange(ConnectivityState::kIdle,
                                          absl::Now() + absl::Seconds(5)));
  EXPECT_EQ(channel->GetState(false), ConnectivityState::kConnecting);
  // Fail-fast calls wait while CONNECTING (gRPC's wait-for-ready.md).
  auto stub = EchoService::NewStub(channel);
  Status s = Call(stub.get(), false, absl::Milliseconds(300));
  EXPECT_EQ(s.error_code(), StatusCode::DEADLINE_EXCEEDED) << s.error_message();
  EXPECT_EQ(channel->GetState(false), ConnectivityState::kConnecting);
  channel.reset();
  close(fd);
}

TEST(ChannelTest, UnknownNameIsUnavailableWithTheDnsError) {
  auto dns =
      transport::testing::DnsmasqServer::Start({{"svc.test", "127.0.0.2"}});
  ASSERT_TRUE(dns.ok()) << dns.status();
  auto channel = CreateCustomChannel(
      absl::StrCat("dns://", (*dns)->address(), "/nope.test:50051"),
      InsecureChannelCredentials(), TestArgs("pick_first"));
  auto stub = EchoService::NewStub(channel);
  Status s = Call(stub.get(), false, absl::Seconds(10));
  EXPECT_EQ(s.error_code(), StatusCode::UNAVAILABLE);
  EXPECT_NE(s.error_message().find("nope.test"), std::string::npos)
      << s.error_message();
  EXPECT_EQ(channel->GetState(false), ConnectivityState::kTransientFailure);
  // Wait-for-ready calls wait out their deadline.
  s = Call(stub.get(), true, absl::Milliseconds(300));
  EXPECT_EQ(s.error_code(), StatusCode::DEADLINE_EXCEEDED);
}

TEST(ChannelTest, TlsVerifiesTheTargetHostNotTheResolvedIp) {
  const auto& certs = transport::testing::GetTestCertificates();
  ASSERT_TRUE(certs.ok()) << certs.status();
  // The certificate names DNS:localhost and IP:127.0.0.1.
  SslServerCredentialsOptions server_options;
  server_options.pem_key_cert_pairs.push_back(
      {certs->server_key_pem, certs->server_chain_pem});
  NamedService service("tls");
  int port = 0;
  auto server =
      ServerBuilder()
          .AddListeningPort("127.0.0.1:0", SslServerCredentials(server_options),
                            &port)
          .RegisterService(&service)
          .BuildAndStart();
  ASSERT_NE(server, nullptr);
  auto dns = transport::testing::DnsmasqServer::Start(
      {{"svc.test", "127.0.0.1"}, {"localhost.test", "127.0.0.1"}});
  ASSERT_TRUE(dns.ok()) << dns.status();
  SslCredentialsOptions options;
  options.pem_root_certs = certs->ca_pem;
  auto creds = SslCredentials(options);
  const std::string svc =
      absl::StrCat("dns://", (*dns)->address(), "/svc.test:", port);
  {
    // svc.test resolves to 127.0.0.1, which the certificate names, but the
    // name verified is svc.test: the handshake fails.
    auto channel = CreateCustomChannel(svc, creds, TestArgs("pick_first"));
    auto stub = EchoService::NewStub(channel);
    Status s = Call(stub.get(), false, absl::Seconds(5));
    EXPECT_EQ(s.error_code(), StatusCode::UNAVAILABLE) << s.error_message();
  }
  {
    // ... unless overridden.
    ChannelArguments args = TestArgs("pick_first");
    args.SetSslTargetNameOverride("localhost");
    auto channel = CreateCustomChannel(svc, creds, args);
    auto stub = EchoService::NewStub(channel);
    Status s = Call(stub.get(), false, absl::Seconds(5));
    EXPECT_TRUE(s.ok()) << s.error_message();
  }
  server->Shutdown(absl::Now());
}

TEST(ChannelTest, BadDnsAuthorityFailsCalls) {
  auto channel =
      CreateChannel("dns://not-an-ip/svc.test:1", InsecureChannelCredentials());
  auto stub = EchoService::NewStub(channel);
  Status s = Call(stub.get(), false, absl::Seconds(5));
  EXPECT_EQ(s.error_code(), StatusCode::UNAVAILABLE);
  EXPECT_EQ(channel->GetState(false), ConnectivityState::kTransientFailure);
}

TEST(ChannelTest, TooManyPingsDoublesTheKeepaliveTime) {
  // The server allows a ping per 400 ms; the channel pings every 150 ms.
  // Each GOAWAY too_many_pings doubles the channel's keepalive time for its
  // next connection: 150 -> 300 -> 600 ms, which the server accepts. Without
  // the doubling a GOAWAY would come about every 450 ms.
  NamedService service("s");
  int port = 0;
  auto server =
      ServerBuilder()
          .AddListeningPort("127.0.0.1:0", InsecureServerCredentials(), &port)
          .RegisterService(&service)
          .SetKeepalivePermitWithoutCalls(true)
          .SetMinPingIntervalWithoutData(absl::Milliseconds(400))
          .BuildAndStart();
  ASSERT_NE(server, nullptr);
  ChannelArguments args = TestArgs("pick_first");
  args.keepalive_time = absl::Milliseconds(150);
  args.keepalive_permit_without_calls = true;
  auto channel = CreateCustomChannel(absl::StrCat("127.0.0.1:", port),
                                     InsecureChannelCredentials(), args);
  const uint64_t before = internal::ServerConnection::too_many_pings_goaways();
  const absl::Time end = absl::Now() + absl::Seconds(4);
  while (absl::Now() < end) {
    channel->WaitForConnected(absl::Now() + absl::Milliseconds(200));
    absl::SleepFor(absl::Milliseconds(20));
  }
  const uint64_t goaways =
      internal::ServerConnection::too_many_pings_goaways() - before;
  EXPECT_GE(goaways, 1u);
  EXPECT_LE(goaways, 3u);
  server->Shutdown(absl::Now());
}

TEST(ChannelTest, ServerThatDropsConnectionsIsNotHammered) {
  // Accepts and closes at once; counts the connections.
  int listen_port = 0;
  const int fd = LoopbackListener(64, &listen_port);
  ASSERT_GE(fd, 0);
  std::atomic<bool> stop{false};
  std::atomic<int> accepted{0};
  absl::Mutex mu;
  std::vector<absl::Time> accepted_at;  // Guarded by mu.
  std::thread acceptor([&] {
    while (!stop) {
      pollfd p = {fd, POLLIN, 0};
      if (poll(&p, 1, 20) <= 0) continue;
      const int c = accept(fd, nullptr, nullptr);
      if (c >= 0) {
        {
          absl::MutexLock lock(&mu);
          accepted_at.push_back(absl::Now());
        }
        ++accepted;
        close(c);
      }
    }
  });
  ChannelArguments args = TestArgs("round_robin");
  args.initial_backoff = absl::Milliseconds(200);
  const absl::Time created = absl::Now();
  auto channel =
      CreateCustomChannel(absl::StrCat("ipv4:127.0.0.1:", listen_port),
                          InsecureChannelCredentials(), args);
  auto stub = EchoService::NewStub(channel);
  // Calls keep the channel reconnecting (a call sent on a connection that
  // then drops fails, as in gRPC) until it made 5 connections.
  int calls = 0;
  const absl::Time limit = absl::Now() + absl::Seconds(30);
  while (accepted < 5 && absl::Now() < limit) {
    EXPECT_NE(Call(stub.get(), true, absl::Milliseconds(200)).error_code(),
              StatusCode::OK);
    ++calls;
  }
  stop = true;
  acceptor.join();
  close(fd);
  // One connection per backoff, not one per loop iteration: attempt k+1
  // starts at least k backoff delays (each at least the initial 200 ms)
  // after the channel was created.
  absl::MutexLock lock(&mu);
  ASSERT_GE(accepted_at.size(), 5u) << calls << " calls";
  for (size_t k = 1; k < accepted_at.size(); ++k) {
    EXPECT_GE(accepted_at[k] - created,
              k * absl::Milliseconds(200) - absl::Milliseconds(1))
        << "connection " << k << " of " << calls << " calls";
  }
}

// A tiny DNS server on 127.0.0.1 (UDP): NXDOMAIN for every name until
// answer() is set, then svc.test A 127.0.0.1 (and no AAAA). Counts the A
// queries for svc.test.
class FlakyDns {
 public:
  FlakyDns() {
    fd_ = socket(AF_INET, SOCK_DGRAM, 0);
    sockaddr_in addr = {};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    bind(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof(addr));
    socklen_t len = sizeof(addr);
    getsockname(fd_, reinterpret_cast<sockaddr*>(&addr), &len);
    port_ = ntohs(addr.sin_port);
    thread_ = std::thread([this] { Serve(); });
  }
  ~FlakyDns() {
    stop_ = true;
    thread_.join();
    close(fd_);
  }
  int port() const { return port_; }
  void answer() { answer_ = true; }
  int a_queries() const { return a_queries_; }
  // When each A query for svc.test arrived (a retransmission, which has the
  // query's id, is not a new one).
  std::vector<absl::Time> a_query_times() const {
    absl::MutexLock lock(&mu_);
    return a_query_times_;
  }

 private:
  void Serve() {
    while (!stop_) {
      pollfd p = {fd_, POLLIN, 0};
      if (poll(&p, 1, 20) <= 0) continue;
      unsigned char q[512];
      sockaddr_in from = {};
      socklen_t from_len = sizeof(from);
      const ssize_t n = recvfrom(fd_, q, sizeof(q), 0,
                                 reinterpret_cast<sockaddr*>(&from), &from_len);
      if (n < 12) continue;
      // The question: labels, then type and class.
      size_t i = 12;
      std::string name;
      while (i < static_cast<size_t>(n) && q[i] != 0) {
        if (!name.empty()) name += '.';
        name.append(reinterpret_cast<char*>(q + i + 1), q[i]);
        i += q[i] + 1;
      }
      const size_t qend = i + 5;  // Root label, type, class.
      if (qend > static_cast<size_t>(n)) continue;
      const int type = q[i + 1] << 8 | q[i + 2];
      const bool ours = name == "svc.test";
      if (ours && type == 1) {
        const int id = q[0] << 8 | q[1];
        absl::MutexLock lock(&mu_);
        if (std::find(ids_.begin(), ids_.end(), id) == ids_.end()) {
          ids_.push_back(id);
          a_query_times_.push_back(absl::Now());
          ++a_queries_;
        }
      }
      std::string r(reinterpret_cast<char*>(q), qend);
      r[2] = static_cast<char>(0x81);  // QR, RD.
      const bool found = answer_ && ours;
      r[3] = static_cast<char>(found ? 0x80 : 0x83);  // RA; NXDOMAIN.
      r[4] = 0, r[5] = 1;                             // QDCOUNT 1.
      r[6] = 0, r[7] = 0, r[8] = 0, r[9] = 0, r[10] = 0, r[11] = 0;
      if (found && type == 1) {
        r[7] = 1;  // ANCOUNT 1: svc.test A 127.0.0.1, TTL 1.
        const unsigned char answer[] = {0xc0, 0x0c, 0, 1, 0,   1, 0, 0,
                                        0,    1,    0, 4, 127, 0, 0, 1};
        r.append(reinterpret_cast<const char*>(answer), sizeof(answer));
      }
      sendto(fd_, r.data(), r.size(), 0, reinterpret_cast<sockaddr*>(&from),
             from_len);
    }
  }

  int fd_ = -1;
  int port_ = 0;
  std::atomic<bool> stop_{false};
  std::atomic<bool> answer_{false};
  std::atomic<int> a_queries_{0};
  mutable absl::Mutex mu_;
  std::vector<int> ids_ ABSL_GUARDED_BY(mu_);
  std::vector<absl::Time> a_query_times_ ABSL_GUARDED_BY(mu_);
  std::thread thread_;
};

TEST(ChannelTest, DnsFailureIsRetriedWithBackoffAndRecovers) {
  int port = 0;
  Backend b = StartBackend("s", "127.0.0.1:0", &port);
  ASSERT_NE(b.server, nullptr);
  FlakyDns dns;
  auto channel = CreateCustomChannel(
      absl::StrCat("dns://127.0.0.1:", dns.port(), "/svc.test:", port),
      InsecureChannelCredentials(), TestArgs("pick_first"));
  auto stub = EchoService::NewStub(channel);
  Status s = Call(stub.get(), false, absl::Seconds(5));
  EXPECT_EQ(s.error_code(), StatusCode::UNAVAILABLE);
  EXPECT_NE(s.error_message().find("svc.test"), std::string::npos)
      << s.error_message();
  // Retries with backoff, not a storm: the k-th retry starts no earlier than
  // its backoff (100 ms, then x1.6 up to 300 ms, jitter 20%) after the
  // failure before it, which came after that query arrived here.
  ASSERT_TRUE(WaitUntil([&] { return dns.a_queries() >= 5; }));
  EXPECT_EQ(channel->GetState(false), ConnectivityState::kTransientFailure);
  const std::vector<absl::Time> at = dns.a_query_times();
  const double min_backoff_ms[] = {100, 160 * 0.8, 256 * 0.8, 300 * 0.8};
  for (size_t k = 1; k < 5; ++k) {
    EXPECT_GE(at[k] - at[k - 1], absl::Milliseconds(min_backoff_ms[k - 1] - 1))
        << "retry " << k << " after " << (at[k] - at[k - 1]);
  }
  // Once the name resolves, a waiting call goes through.
  dns.answer();
  std::string who;
  s = Call(stub.get(), true, absl::Seconds(5), &who);
  EXPECT_TRUE(s.ok()) << s.error_message();
  EXPECT_EQ(who, "s");
  b.server->Shutdown(absl::Now());
}

TEST(ChannelTest, BadTargetFailsCalls) {
  auto channel =
      CreateChannel("ipv4:not-an-ip:1", InsecureChannelCredentials());
  auto stub = EchoService::NewStub(channel);
  Status s = Call(stub.get(), false, absl::Seconds(5));
  EXPECT_EQ(s.error_code(), StatusCode::UNAVAILABLE);
  EXPECT_NE(s.error_message().find("bad target"), std::string::npos)
      << s.error_message();
  EXPECT_EQ(channel->GetState(true), ConnectivityState::kTransientFailure);
}

TEST(ChannelTest, UnknownPolicyFailsCalls) {
  ChannelArguments args;
  args.SetLoadBalancingPolicyName("grpclb");
  auto channel =
      CreateCustomChannel("127.0.0.1:1", InsecureChannelCredentials(), args);
  auto stub = EchoService::NewStub(channel);
  Status s = Call(stub.get(), false, absl::Seconds(5));
  EXPECT_EQ(s.error_code(), StatusCode::UNAVAILABLE);
  EXPECT_NE(s.error_message().find("grpclb"), std::string::npos);
}

// The calls of a channel that can never work all end the same way: blocking
// and streaming ones, and the asynchronous ones (done runs).
void ExpectEveryCallFails(const std::shared_ptr<Channel>& channel,
                          StatusCode code, const std::string& reason) {
  auto stub = EchoService::NewStub(channel);
  for (bool wait_for_ready : {false, true}) {
    Status s = Call(stub.get(), wait_for_ready, absl::Seconds(30));
    EXPECT_EQ(s.error_code(), code) << s;
    EXPECT_NE(s.error_message().find(reason), std::string::npos) << s;
  }
  ClientContext streaming;
  streaming.set_deadline(absl::Now() + absl::Seconds(30));
  auto reader = stub->ServerStream(&streaming, EchoRequest());
  EchoResponse resp;
  EXPECT_FALSE(reader->Read(&resp));
  EXPECT_EQ(reader->Finish().error_code(), code);
  ClientContext async;
  async.set_deadline(absl::Now() + absl::Seconds(30));
  EchoRequest req;
  absl::Notification done;
  Status async_status;
  stub->async()->Echo(&async, &req, &resp, [&](Status st) {
    async_status = std::move(st);
    done.Notify();
  });
  ASSERT_TRUE(done.WaitForNotificationWithTimeout(absl::Seconds(30)));
  EXPECT_EQ(async_status.error_code(), code) << async_status;
  EXPECT_EQ(channel->GetState(false), ConnectivityState::kTransientFailure);
  EXPECT_EQ(channel->GetState(true), ConnectivityState::kTransientFailure);
  EXPECT_FALSE(channel->WaitForConnected(absl::Now() + absl::Milliseconds(1)));
}

TEST(ChannelTest, BadTargetsMakeChannelsThatFailWithTheReason) {
  // Unparsable, empty, an unknown scheme (not a host:port either): never
  // null, TRANSIENT_FAILURE from the start, UNAVAILABLE naming the target.
  for (const char* target :
       {"", "ipv4:1.2.3", "ipv6:[::1", "dns:///", "unix:", "bad:///x",
        "localhost:notaport", "[::1", "127.0.0.1:99999"}) {
    SCOPED_TRACE(target);
    std::shared_ptr<Channel> channel =
        CreateChannel(target, InsecureChannelCredentials());
    ASSERT_NE(channel, nullptr);
    ExpectEveryCallFails(channel, StatusCode::UNAVAILABLE,
                         absl::StrCat("bad target \"", target, "\""));
  }
}

TEST(ChannelTest, NullCredentialsAreInvalidArgument) {
  // As grpc++ ("Invalid credentials."; grpc_interop_test compares).
  std::shared_ptr<Channel> channel = CreateChannel("127.0.0.1:1", nullptr);
  ASSERT_NE(channel, nullptr);
  ExpectEveryCallFails(channel, StatusCode::INVALID_ARGUMENT,
                       "Invalid credentials");
}

TEST(ChannelTest, CredentialsThatDidNotLoadAreUnavailable) {
  SslCredentialsOptions options;
  options.pem_root_certs = "not a certificate";
  std::shared_ptr<Channel> channel =
      CreateChannel("127.0.0.1:1", SslCredentials(options));
  ASSERT_NE(channel, nullptr);
  ExpectEveryCallFails(channel, StatusCode::UNAVAILABLE, "");
}

TEST(ChannelTest, ALoopThreadThatCannotStartGivesAChannelThatFails) {
  // No file descriptor left: the loop's epoll instance cannot be made. Only
  // a busy-poll channel starts a loop thread of its own (the shared group is
  // up already, from the tests before; it is created the same way, and a
  // failure there fails the channel the same way).
  rlimit old;
  ASSERT_EQ(getrlimit(RLIMIT_NOFILE, &old), 0);
  const int lowest_free = dup(0);
  ASSERT_GE(lowest_free, 0);
  close(lowest_free);
  rlimit tight = old;
  tight.rlim_cur = static_cast<rlim_t>(lowest_free);
  ASSERT_EQ(setrlimit(RLIMIT_NOFILE, &tight), 0);
  ChannelArguments args;
  args.busy_poll = absl::Microseconds(100);
  std::shared_ptr<Channel> channel =
      CreateCustomChannel("127.0.0.1:1", InsecureChannelCredentials(), args);
  ASSERT_EQ(setrlimit(RLIMIT_NOFILE, &old), 0);
  ASSERT_NE(channel, nullptr);
  ExpectEveryCallFails(channel, StatusCode::UNAVAILABLE,
                       "cannot start the channel's loop thread");
  channel.reset();
}

TEST(ChannelTest, UnixTarget) {
  // TEST_TMPDIR is often longer than sun_path allows: a short /tmp path.
  char dir[] = "/tmp/rpc_channel_test_XXXXXX";
  ASSERT_NE(mkdtemp(dir), nullptr);
  const std::string path = absl::StrCat(dir, "/s.sock");
  Backend b = StartBackend("unix", "unix:" + path, nullptr);
  ASSERT_NE(b.server, nullptr);
  for (const std::string& target : {"unix:" + path, "unix://" + path}) {
    SCOPED_TRACE(target);
    auto channel = CreateChannel(target, InsecureChannelCredentials());
    auto stub = EchoService::NewStub(channel);
    std::string who;
    Status s = Call(stub.get(), false, absl::Seconds(5), &who);
    EXPECT_TRUE(s.ok()) << s.error_message();
    EXPECT_EQ(who, "unix");
    EXPECT_EQ(internal::ChannelAccess::Impl(channel.get())->authority(),
              "localhost");
  }
  b.server->Shutdown(absl::Now());
  std::remove(path.c_str());
  rmdir(dir);
}

TEST(ChannelTest, BareHostPortIsDnsWithTheSystemResolver) {
  int port = 0;
  Backend b = StartBackend("s", "127.0.0.1:0", &port);
  ASSERT_NE(b.server, nullptr);
  // "localhost" comes from /etc/hosts through c-ares, offline.
  auto channel = CreateChannel(absl::StrCat("localhost:", port),
                               InsecureChannelCredentials());
  EXPECT_EQ(internal::ChannelAccess::Impl(channel.get())->authority(),
            absl::StrCat("localhost:", port));
  auto stub = EchoService::NewStub(channel);
  Status s = Call(stub.get(), false, absl::Seconds(5));
  EXPECT_TRUE(s.ok()) << s.error_message();
  b.server->Shutdown(absl::Now());
}

// Waits (bounded) until the channel is in `want` (asking an IDLE channel to
// connect first when `try_to_connect`).
bool WaitForState(Channel* channel, ConnectivityState want,
                  absl::Duration timeout, bool try_to_connect = true) {
  const absl::Time deadline = absl::Now() + timeout;
  ConnectivityState s = channel->GetState(try_to_connect);
  while (s != want) {
    if (!channel->WaitForStateChange(s, deadline)) return false;
    s = channel->GetState(false);
  }
  return true;
}

class ChannelReResolveTest : public ::testing::TestWithParam<const char*> {};

TEST_P(ChannelReResolveTest, StaleAddressesAreResolvedAgainUntilOneConnects) {
  // svc.test is 127.0.0.2, where nothing listens: TRANSIENT_FAILURE. The
  // record moves to 127.0.0.3, where the server is: failed attempts make the
  // channel resolve again (round_robin too), and it becomes READY.
  int port = 0;
  Backend b = StartBackend("b", "127.0.0.3:0", &port);
  ASSERT_NE(b.server, nullptr);
  auto dns =
      transport::testing::DnsmasqServer::Start({{"svc.test", "127.0.0.2"}});
  ASSERT_TRUE(dns.ok()) << dns.status();
  auto channel = CreateCustomChannel(
      absl::StrCat("dns://", (*dns)->address(), "/svc.test:", port),
      InsecureChannelCredentials(), TestArgs(GetParam()));
  ASSERT_TRUE(WaitForState(channel.get(), ConnectivityState::kTransientFailure,
                           absl::Seconds(5)));
  // A few failed attempts and resolutions with the old answer.
  absl::SleepFor(absl::Milliseconds(500));
  ASSERT_TRUE((*dns)->SetRecords({{"svc.test", "127.0.0.3"}}).ok());
  EXPECT_TRUE(channel->WaitForConnected(absl::Now() + absl::Seconds(5)))
      << static_cast<int>(channel->GetState(false));
  auto stub = EchoService::NewStub(channel);
  std::string who;
  EXPECT_TRUE(Call(stub.get(), false, absl::Seconds(5), &who).ok());
  EXPECT_EQ(who, "b");
  b.server->Shutdown(absl::Now());
}

INSTANTIATE_TEST_SUITE_P(Policies, ChannelReResolveTest,
                         ::testing::Values("pick_first", "round_robin"));

// An async unary call's state, on the heap: a test that gives up on a stuck
// loop leaks it rather than freeing what the loop may still touch.
struct AsyncEcho {
  ClientContext ctx;
  EchoRequest req;
  EchoResponse resp;
  Status status;
  absl::Notification done;
};

TEST(ChannelTest, ZeroResolutionIntervalDoesNotFreezeTheLoop) {
  // Every address of localhost fails at once, and localhost resolves at
  // once: with no minimum interval between resolutions the loop must still
  // run its timers (the deadline).
  ChannelArguments args = TestArgs("pick_first");
  args.dns_min_time_between_resolutions = absl::ZeroDuration();
  auto channel = CreateCustomChannel(absl::StrCat("localhost:", DeadPort()),
                                     InsecureChannelCredentials(), args);
  auto stub = EchoService::NewStub(channel);
  auto* call = new AsyncEcho;
  call->ctx.set_deadline(absl::Now() + absl::Seconds(1));
  call->ctx.set_wait_for_ready(true);
  const absl::Time start = absl::Now();
  stub->async()->Echo(&call->ctx, &call->req, &call->resp, [call](Status s) {
    call->status = std::move(s);
    call->done.Notify();
  });
  if (!call->done.WaitForNotificationWithTimeout(absl::Seconds(3))) {
    // The loop is stuck: destroying the channel would hang.
    new std::shared_ptr<Channel>(channel);
    new std::unique_ptr<EchoService::Stub>(std::move(stub));
    FAIL() << "the call did not end: the channel's loop is stuck";
  }
  EXPECT_EQ(call->status.error_code(), StatusCode::DEADLINE_EXCEEDED)
      << call->status.error_message();
  EXPECT_LT(absl::Now() - start, absl::Seconds(2));
  delete call;
}

TEST(ChannelTest, LastReferenceDroppedInAnAsyncCallback) {
  // The done callback holds the only stub, which holds the only channel:
  // the channel is destroyed from its loop thread, and closes.
  int port = 0;
  Backend b = StartBackend("s", "127.0.0.1:0", &port);
  ASSERT_NE(b.server, nullptr);
  auto channel =
      CreateCustomChannel(absl::StrCat("127.0.0.1:", port),
                          InsecureChannelCredentials(), TestArgs("pick_first"));
  std::weak_ptr<Channel> weak = channel;
  std::shared_ptr<EchoService::Stub> stub = EchoService::NewStub(channel);
  channel.reset();
  ASSERT_TRUE(Call(stub.get(), false, absl::Seconds(5)).ok());
  ASSERT_EQ(EstablishedTo("127.0.0.1", port), 1) << "no /proc/net/tcp?";
  auto call = std::make_shared<AsyncEcho>();
  call->ctx.set_deadline(absl::Now() + absl::Seconds(5));
  EchoService::Stub* raw = stub.get();
  raw->async()->Echo(&call->ctx, &call->req, &call->resp,
                     [call, stub = std::move(stub)](Status s) mutable {
                       call->status = std::move(s);
                       stub.reset();  // The last channel reference.
                       call->done.Notify();
                     });
  ASSERT_TRUE(call->done.WaitForNotificationWithTimeout(absl::Seconds(5)));
  EXPECT_TRUE(call->status.ok()) << call->status.error_message();
  EXPECT_TRUE(weak.expired());
  // The channel closed its connection (a deadlocked destructor would not).
  int open = 1;
  for (int i = 0; i < 250 && open != 0; ++i) {
    absl::SleepFor(absl::Milliseconds(20));
    open = EstablishedTo("127.0.0.1", port);
  }
  EXPECT_EQ(open, 0);
  b.server->Shutdown(absl::Now());
}

TEST(ChannelTest, RecoveredDnsIsConnectingNotTheOldError) {
  // The name does not resolve: TRANSIENT_FAILURE with the DNS error. Once
  // it does, the first attempt (a TLS handshake to a listener that never
  // answers) is CONNECTING, and fail-fast calls wait instead of failing with
  // the old error.
  const auto& certs = transport::testing::GetTestCertificates();
  ASSERT_TRUE(certs.ok()) << certs.status();
  int listen_port = 0;
  const int fd = LoopbackListener(16, &listen_port);
  ASSERT_GE(fd, 0);
  FlakyDns dns;
  SslCredentialsOptions options;
  options.pem_root_certs = certs->ca_pem;
  ChannelArguments args = TestArgs("pick_first");
  args.min_connect_timeout = absl::Seconds(5);
  auto channel = CreateCustomChannel(
      absl::StrCat("dns://127.0.0.1:", dns.port(), "/svc.test:", listen_port),
      SslCredentials(options), args);
  auto stub = EchoService::NewStub(channel);
  Status s = Call(stub.get(), false, absl::Seconds(5));
  EXPECT_EQ(s.error_code(), StatusCode::UNAVAILABLE);
  EXPECT_NE(s.error_message().find("svc.test"), std::string::npos)
      << s.error_message();
  EXPECT_EQ(channel->GetState(false), ConnectivityState::kTransientFailure);
  dns.answer();
  ASSERT_TRUE(channel->WaitForStateChange(ConnectivityState::kTransientFailure,
                                          absl::Now() + absl::Seconds(3)));
  EXPECT_EQ(channel->GetState(false), ConnectivityState::kConnecting);
  s = Call(stub.get(), false, absl::Milliseconds(300));
  EXPECT_EQ(s.error_code(), StatusCode::DEADLINE_EXCEEDED) << s.error_message();
  stub.reset();
  channel.reset();
  close(fd);
}

TEST(ChannelTest, ZeroBackoffArgumentsAreRejected) {
  ChannelArguments args;
  EXPECT_FALSE(args.SetInt("grpc.initial_reconnect_backoff_ms", 0));
  EXPECT_FALSE(args.SetInt("grpc.min_reconnect_backoff_ms", 0));
  EXPECT_EQ(args.initial_backoff, absl::Seconds(1));
  EXPECT_EQ(args.min_connect_timeout, absl::Seconds(20));
  EXPECT_TRUE(args.SetInt("grpc.initial_reconnect_backoff_ms", 1));
  EXPECT_EQ(args.initial_backoff, absl::Milliseconds(1));
  EXPECT_TRUE(args.SetInt("grpc.dns_min_time_between_resolutions_ms", 0));
}

TEST(ChannelTest, ZeroBackoffDoesNotSpin) {
  // A zero initial backoff (the typed field allows it) to a dead port: the
  // channel keeps working (its deadline timer fires) and retries are spaced.
  ChannelArguments args = TestArgs("round_robin");
  args.initial_backoff = absl::ZeroDuration();
  args.max_backoff = absl::ZeroDuration();
  auto channel = CreateCustomChannel(absl::StrCat("127.0.0.1:", DeadPort()),
                                     InsecureChannelCredentials(), args);
  auto stub = EchoService::NewStub(channel);
  const absl::Time start = absl::Now();
  Status s = Call(stub.get(), true, absl::Milliseconds(500));
  EXPECT_EQ(s.error_code(), StatusCode::DEADLINE_EXCEEDED) << s.error_message();
  EXPECT_LT(absl::Now() - start, absl::Seconds(2));
}

// Listens on `ip` (any port) and forwards every connection to
// 127.0.0.1:`target_port`, counting them: the exact number of connections a
// channel made to that address, whatever else runs on the machine. One
// thread, every wait bounded; the destructor closes everything.
class CountingProxy {
 public:
  CountingProxy(const char* ip, int target_port) : target_port_(target_port) {
    listen_fd_ = Listener(ip, 16, &port_);
    if (listen_fd_ >= 0) thread_ = std::thread([this] { Run(); });
  }
  ~CountingProxy() {
    stop_ = true;
    if (thread_.joinable()) thread_.join();
    for (const auto& [a, b] : pairs_) {
      close(a);
      close(b);
    }
    if (listen_fd_ >= 0) close(listen_fd_);
  }
  // 0 when the listener could not be made.
  int port() const { return listen_fd_ >= 0 ? port_ : 0; }
  int accepted() const { return accepted_; }

 private:
  void Run() {
    while (!stop_) {
      std::vector<pollfd> fds = {{listen_fd_, POLLIN, 0}};
      for (const auto& [a, b] : pairs_) {
        fds.push_back({a, POLLIN, 0});
        fds.push_back({b, POLLIN, 0});
      }
      if (poll(fds.data(), fds.size(), 20) <= 0) continue;
      if (fds[0].revents != 0) Accept();
      for (size_t i = 1; i < fds.size(); ++i) {
        if (fds[i].revents != 0 && !Pump(fds[i].fd)) break;  // pairs_ changed
      }
    }
  }
  void Accept() {
    const int c = accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC);
    if (c < 0) return;
    ++accepted_;
    const int u = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in to = {};
    to.sin_family = AF_INET;
    to.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    to.sin_port = htons(target_port_);
    if (u < 0 ||
        connect(u, reinterpret_cast<sockaddr*>(&to), sizeof(to)) != 0) {
      if (u >= 0) close(u);
      close(c);
      return;
    }
    pairs_.emplace_back(c, u);
  }
  // Forwards what `fd` has to its peer; false when that ended the pair.
  bool Pump(int fd) {
    auto it = std::find_if(pairs_.begin(), pairs_.end(), [&](const auto& p) {
      return p.first == fd || p.second == fd;
    });
    if (it == pairs_.end()) return false;
    const int to = it->first == fd ? it->second : it->first;
    char buf[16384];
    const ssize_t n = read(fd, buf, sizeof(buf));
    bool ok = n > 0;
    for (ssize_t off = 0; ok && off < n;) {
      const ssize_t w = write(to, buf + off, n - off);
      ok = w > 0;
      off += w;
    }
    if (ok) return true;
    close(it->first);
    close(it->second);
    pairs_.erase(it);
    return false;
  }

  const int target_port_;
  int listen_fd_ = -1;
  int port_ = 0;
  std::atomic<bool> stop_{false};
  std::atomic<int> accepted_{0};
  std::vector<std::pair<int, int>> pairs_;  // (client, target); Run() only.
  std::thread thread_;
};

TEST(ChannelTest, RetiredSubchannelDoesNotConnectAgain) {
  // round_robin to svc.test = A (127.0.0.2), whose server ends connections
  // after 300 ms (GOAWAY). The record moves to B (127.0.0.3). When A's
  // connection drains (a 2 s call still on it), the subchannel waits out its
  // backoff (1 s after the first attempt) to reconnect; meanwhile the channel
  // resolves again and retires A. The retired subchannel must not connect to
  // A again while its old connection finishes the call. A is reached through
  // a CountingProxy on 127.0.0.2: every connection to it counts.
  NamedService service_a("a");
  int a_port = 0;
  std::unique_ptr<Server> a =
      ServerBuilder()
          .AddListeningPort("127.0.0.1:0", InsecureServerCredentials(), &a_port)
          .SetMaxConnectionAge(absl::Milliseconds(300))
          .SetMaxConnectionAgeGrace(absl::Seconds(5))
          .RegisterService(&service_a)
          .BuildAndStart();
  ASSERT_NE(a, nullptr);
  ASSERT_NE(a_port, 0);
  std::unique_ptr<CountingProxy> proxy;
  Backend b;
  for (int attempt = 0; attempt < 20 && b.server == nullptr; ++attempt) {
    proxy = std::make_unique<CountingProxy>("127.0.0.2", a_port);
    if (proxy->port() == 0) continue;
    b = StartBackend("b", absl::StrCat("127.0.0.3:", proxy->port()), nullptr);
  }
  ASSERT_NE(b.server, nullptr);
  const int port = proxy->port();
  auto dns =
      transport::testing::DnsmasqServer::Start({{"svc.test", "127.0.0.2"}});
  ASSERT_TRUE(dns.ok()) << dns.status();
  ChannelArguments args = TestArgs("round_robin");
  args.initial_backoff = absl::Seconds(1);
  args.max_backoff = absl::Seconds(1);
  auto channel = CreateCustomChannel(
      absl::StrCat("dns://", (*dns)->address(), "/svc.test:", port),
      InsecureChannelCredentials(), args);
  auto stub = EchoService::NewStub(channel);
  std::string who;
  ASSERT_TRUE(Call(stub.get(), true, absl::Seconds(5), &who).ok());
  ASSERT_EQ(who, "a");
  ASSERT_EQ(proxy->accepted(), 1);
  auto call = std::make_shared<AsyncEcho>();
  call->ctx.set_deadline(absl::Now() + absl::Seconds(5));
  call->req.set_sleep_ms(2000);
  stub->async()->Echo(&call->ctx, &call->req, &call->resp, [call](Status s) {
    call->status = std::move(s);
    call->done.Notify();
  });
  ASSERT_TRUE((*dns)->SetRecords({{"svc.test", "127.0.0.3"}}).ok());
  ASSERT_TRUE(call->done.WaitForNotificationWithTimeout(absl::Seconds(10)));
  EXPECT_TRUE(call->status.ok()) << call->status.error_message();
  EXPECT_EQ(call->resp.message(), "a");
  // Until the call ended: never a second connection to A.
  EXPECT_EQ(proxy->accepted(), 1);
  // The channel moved to B.
  EXPECT_TRUE(Call(stub.get(), true, absl::Seconds(5), &who).ok());
  EXPECT_EQ(who, "b");
  stub.reset();
  channel.reset();
  a->Shutdown(absl::Now());
  b.server->Shutdown(absl::Now());
}

// A TCP socket bound to 127.0.0.1 and a free port, not listening yet
// (connections are refused).
int BoundSocket(int* port) {
  const int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
  sockaddr_in addr = {};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (fd < 0 ||
      bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) {
    return -1;
  }
  socklen_t len = sizeof(addr);
  getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
  *port = ntohs(addr.sin_port);
  return fd;
}

// Accepts one pending connection (bounded wait) and closes it.
bool AcceptAndClose(int fd) {
  for (int i = 0; i < 200; ++i) {
    const int c = accept(fd, nullptr, nullptr);
    if (c >= 0) {
      close(c);
      return true;
    }
    absl::SleepFor(absl::Milliseconds(10));
  }
  return false;
}

TEST(ChannelTest, PickFirstClosesAConnectionThatComesUpWhileIdle) {
  // Both addresses refuse: a failed pass, then both are retried at once. A
  // connects (selected); B's SYN is dropped (its accept queue is full), so it
  // is still connecting when A's connection is lost and the channel goes
  // IDLE. When B connects (SYN retransmitted after 1 s), nothing wants it:
  // pick_first closes it.
  int port_a = 0, port_b = 0;
  const int a = BoundSocket(&port_a);
  const int b = BoundSocket(&port_b);
  ASSERT_GE(a, 0);
  ASSERT_GE(b, 0);
  ChannelArguments args = TestArgs("pick_first");
  args.initial_backoff = absl::Seconds(1);
  args.max_backoff = absl::Seconds(1);
  args.backoff_jitter = 0;
  args.min_connect_timeout = absl::Seconds(5);
  auto channel = CreateCustomChannel(
      absl::StrCat("ipv4:127.0.0.1:", port_a, ",127.0.0.1:", port_b),
      InsecureChannelCredentials(), args);
  ASSERT_TRUE(WaitForState(channel.get(), ConnectivityState::kTransientFailure,
                           absl::Seconds(5)));
  ASSERT_EQ(listen(a, 16), 0);
  // Backlog 0: one connection fills B's accept queue; later SYNs are dropped.
  ASSERT_EQ(listen(b, 0), 0);
  const int filler = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
  sockaddr_in to = {};
  to.sin_family = AF_INET;
  to.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  to.sin_port = htons(port_b);
  connect(filler, reinterpret_cast<sockaddr*>(&to), sizeof(to));
  ASSERT_TRUE(
      WaitForState(channel.get(), ConnectivityState::kReady, absl::Seconds(5)));
  ASSERT_EQ(EstablishedTo("127.0.0.1", port_b), 1) << "no /proc/net/tcp?";
  // A's connection is lost: IDLE (nothing calls).
  ASSERT_TRUE(AcceptAndClose(a));
  ASSERT_TRUE(WaitForState(channel.get(), ConnectivityState::kIdle,
                           absl::Seconds(5),
                           /*try_to_connect=*/false));
  // Room in B's queue: the retransmitted SYN gets through.
  ASSERT_TRUE(AcceptAndClose(b));
  close(filler);
  int c = -1;
  for (int i = 0; i < 400 && c < 0; ++i) {
    c = accept(b, nullptr, nullptr);
    if (c < 0) absl::SleepFor(absl::Milliseconds(10));
  }
  ASSERT_GE(c, 0) << "B's connection did not come up";
  // The channel closes it: EOF after its preface (and GOAWAY).
  bool eof = false;
  const absl::Time deadline = absl::Now() + absl::Seconds(2);
  while (!eof && absl::Now() < deadline) {
    pollfd p = {c, POLLIN, 0};
    if (poll(&p, 1, 20) <= 0) continue;
    char buf[512];
    const ssize_t n = read(c, buf, sizeof(buf));
    eof = n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR);
  }
  close(c);
  EXPECT_TRUE(eof);
  EXPECT_EQ(channel->GetState(false), ConnectivityState::kIdle);
  channel.reset();
  close(a);
  close(b);
}

using transport::testing::ThreadCount;

TEST(ChannelLoopsTest, AThousandChannelsShareTheLoops) {
  int port = 0;
  Backend b = StartBackend("s", "127.0.0.1:0", &port);
  ASSERT_NE(b.server, nullptr);
  const std::string target = absl::StrCat("127.0.0.1:", port);
  // The process-wide group (and the server's workers) exist after one call.
  {
    auto channel = CreateChannel(target, InsecureChannelCredentials());
    auto stub = EchoService::NewStub(channel);
    ASSERT_TRUE(Call(stub.get(), false, absl::Seconds(10)).ok());
  }
  const int before = ThreadCount();
  ASSERT_GT(before, 0) << "no /proc/self/task?";
  std::vector<std::shared_ptr<Channel>> channels;
  for (int i = 0; i < 1000; ++i) {
    channels.push_back(CreateChannel(target, InsecureChannelCredentials()));
    if (i % 100 == 0) {
      auto stub = EchoService::NewStub(channels.back());
      ASSERT_TRUE(Call(stub.get(), false, absl::Seconds(10)).ok()) << i;
    }
  }
  // Was one thread per channel; the slack is for the server's worker pool.
  EXPECT_LE(ThreadCount(), before + 2);
  channels.clear();
  b.server->Shutdown(absl::Now());
}

// A backend, a group of one loop, and arguments that put channels on it.
struct OneLoop {
  Backend b;
  std::string target;
  std::shared_ptr<LoopGroup> group;
  ChannelArguments args;
};
void StartOneLoop(OneLoop* s) {
  int port = 0;
  s->b = StartBackend("s", "127.0.0.1:0", &port);
  ASSERT_NE(s->b.server, nullptr);
  s->target = absl::StrCat("127.0.0.1:", port);
  absl::StatusOr<std::shared_ptr<LoopGroup>> created = LoopGroup::Create(1);
  ASSERT_TRUE(created.ok()) << created.status();
  ASSERT_EQ((*created)->size(), 1u);
  s->group = *std::move(created);
  s->args.SetLoopGroup(s->group);
}

TEST(ChannelLoopsTest, ChannelsOfAUserGroupRunOnItsLoops) {
  OneLoop s;
  ASSERT_NO_FATAL_FAILURE(StartOneLoop(&s));
  const int before = ThreadCount();
  std::vector<std::shared_ptr<Channel>> channels;
  for (int i = 0; i < 20; ++i) {
    channels.push_back(
        CreateCustomChannel(s.target, InsecureChannelCredentials(), s.args));
    auto stub = EchoService::NewStub(channels.back());
    ASSERT_TRUE(Call(stub.get(), false, absl::Seconds(10)).ok()) << i;
  }
  EXPECT_LE(ThreadCount(), before + 2);  // The server's workers' slack.
  // The channels keep the group: dropping ours first is fine.
  s.group.reset();
  s.args.SetLoopGroup(nullptr);
  for (auto& channel : channels) {
    auto stub = EchoService::NewStub(channel);
    ASSERT_TRUE(Call(stub.get(), false, absl::Seconds(10)).ok());
  }
  channels.clear();
  s.b.server->Shutdown(absl::Now());
}

TEST(ChannelLoopsTest, ADestroyedChannelLeavesNothingOnTheSharedLoop) {
  // Two channels on one loop. The first is destroyed with async calls in
  // flight (a slow handler) and with calls whose deadline timers are armed:
  // they fail with "channel closed", and nothing of that channel runs later
  // while the loop goes on serving the second (ASan would see it).
  OneLoop s;
  ASSERT_NO_FATAL_FAILURE(StartOneLoop(&s));
  auto survivor =
      CreateCustomChannel(s.target, InsecureChannelCredentials(), s.args);
  auto survivor_stub = EchoService::NewStub(survivor);
  ASSERT_TRUE(Call(survivor_stub.get(), false, absl::Seconds(10)).ok());
  for (int round = 0; round < 5; ++round) {
    auto doomed =
        CreateCustomChannel(s.target, InsecureChannelCredentials(), s.args);
    auto stub = EchoService::NewStub(doomed);
    ASSERT_TRUE(Call(stub.get(), false, absl::Seconds(10)).ok());
    std::vector<std::unique_ptr<AsyncEcho>> calls;
    for (int i = 0; i < 8; ++i) {
      calls.push_back(std::make_unique<AsyncEcho>());
      AsyncEcho* c = calls.back().get();
      c->ctx.set_deadline(absl::Now() + absl::Milliseconds(200 + 50 * i));
      c->req.set_sleep_ms(100);
      stub->async()->Echo(&c->ctx, &c->req, &c->resp, [c](Status status) {
        c->status = std::move(status);
        c->done.Notify();
      });
    }
    stub.reset();
    doomed.reset();  // Blocks until it is closed.
    for (auto& c : calls) {
      ASSERT_TRUE(c->done.WaitForNotificationWithTimeout(absl::Seconds(10)));
      // Done before the destruction, or failed by it.
      if (!c->status.ok()) {
        EXPECT_EQ(c->status.error_code(), StatusCode::UNAVAILABLE)
            << c->status.error_message();
      }
    }
  }
  // Past every deadline of the destroyed channels' calls: the shared loop
  // still serves the survivor.
  for (int i = 0; i < 20; ++i) {
    ASSERT_TRUE(Call(survivor_stub.get(), false, absl::Seconds(10)).ok());
    absl::SleepFor(absl::Milliseconds(30));
  }
  s.b.server->Shutdown(absl::Now());
}

// A call on a new channel (the process-wide group) to a new backend.
bool CallANewBackend() {
  int port = 0;
  Backend b = StartBackend("s", "127.0.0.1:0", &port);
  if (b.server == nullptr) return false;
  auto stub = EchoService::NewStub(CreateChannel(
      absl::StrCat("127.0.0.1:", port), InsecureChannelCredentials()));
  const bool ok = Call(stub.get(), false, absl::Seconds(10)).ok();
  b.server->Shutdown(absl::Now());
  return ok;
}

// The exit code of `child`; -1 when it did not exit within `timeout` (it is
// killed) or did not exit normally.
int WaitForChild(pid_t child, absl::Duration timeout) {
  int status = 0;
  pid_t waited = 0;
  const absl::Time deadline = absl::Now() + timeout;
  while ((waited = waitpid(child, &status, WNOHANG)) == 0 &&
         absl::Now() < deadline) {
    absl::SleepFor(absl::Milliseconds(10));
  }
  if (waited == 0) {
    kill(child, SIGKILL);
    waitpid(child, &status, 0);
    return -1;
  }
  if (waited != child || !WIFEXITED(status)) return -1;
  return WEXITSTATUS(status);
}

TEST(ChannelLoopsTest, AChildOfForkGetsLoopsOfItsOwn) {
  // fork() copies the process-wide group but not its threads: a child's
  // channel on that copy would wait forever for a loop nobody runs.
  ASSERT_TRUE(CallANewBackend());  // The group exists, its threads run.
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  // A server and a channel made in the child; only the exit code counts.
  if (child == 0) _exit(CallANewBackend() ? 0 : 1);
  // Generous: only a hang (the bug) reaches it.
  EXPECT_EQ(WaitForChild(child, absl::Seconds(30)), 0) << "-1: the call hung";
}

// fork() while another thread holds the process-wide group's lock: the
// child gets it free (the fork handlers), so its first channel does not
// wait forever for an owner that does not exist there. Bounded stress: the
// other thread takes the lock about half of its time, so without the
// handlers most children hang.
TEST(ChannelLoopsTest, AForkWhileAnotherThreadTakesTheGroupLockLeavesItFree) {
  ASSERT_TRUE(internal::DefaultLoopGroup().ok());
  std::atomic<bool> stop{false};
  std::atomic<int> taken{0};
  std::thread hammer([&] {
    while (!stop.load(std::memory_order_relaxed)) {
      if (internal::DefaultLoopGroup().ok()) ++taken;
    }
  });
  // (No ASSERT before the join: failures ADD_FAILURE and break.)
  constexpr int kForks = 20;
  for (int i = 0; i < kForks; ++i) {
    const int before = taken.load();
    // The other thread is in its loop (the lock taken and released since).
    if (!WaitUntil([&] { return taken.load() > before + 10; })) {
      ADD_FAILURE() << "the other thread does not run";
      break;
    }
    const pid_t child = fork();
    if (child < 0) {
      ADD_FAILURE() << "fork: " << errno;
      break;
    }
    if (child == 0) {
      // A channel: it takes the lock to make the child its own group.
      auto channel = CreateChannel("127.0.0.1:1", InsecureChannelCredentials());
      _exit(channel != nullptr && internal::DefaultLoopGroup().ok() ? 0 : 1);
    }
    const int code = WaitForChild(child, absl::Seconds(10));
    if (code != 0) {
      // -1: hung on the lock (17 of 20 children before the fork handlers).
      ADD_FAILURE() << "fork " << i << ": the child ended with " << code;
      break;
    }
  }
  stop = true;
  hammer.join();
}

using transport::testing::ProcessCpu;

TEST(ChannelLoopsTest, BusyPollChannelAndServerWorkAndSleepWhenIdle) {
  ChannelArguments args;
  ASSERT_TRUE(args.SetInt("h2rpc.busy_poll_us", 2000));
  EXPECT_EQ(args.busy_poll, absl::Milliseconds(2));
  EXPECT_FALSE(args.SetInt("h2rpc.busy_poll_us", -1));
  NamedService service("s");
  int port = 0;
  std::unique_ptr<Server> server =
      ServerBuilder()
          .AddListeningPort("127.0.0.1:0", InsecureServerCredentials(), &port)
          .RegisterService(&service)
          .AddChannelArgument("h2rpc.busy_poll_us", 2000)
          .BuildAndStart();
  ASSERT_NE(server, nullptr);
  ASSERT_GT(port, 0);
  // A busy-poll channel runs on a loop thread of its own.
  const int before = ThreadCount();
  auto channel = CreateCustomChannel(absl::StrCat("127.0.0.1:", port),
                                     InsecureChannelCredentials(), args);
  EXPECT_EQ(ThreadCount(), before + 1);
  auto stub = EchoService::NewStub(channel);
  for (int i = 0; i < 200; ++i) {
    ASSERT_TRUE(Call(stub.get(), false, absl::Seconds(10)).ok()) << i;
  }
  // Idle: both loops spin at most 2 ms after their last work, then sleep.
  // Generous bound: loops that kept spinning would use about the whole
  // interval each (less on a loaded machine, hence its length).
  absl::SleepFor(absl::Milliseconds(50));
  const absl::Duration cpu_before = ProcessCpu();
  absl::SleepFor(absl::Milliseconds(500));
  EXPECT_LT(ProcessCpu() - cpu_before, absl::Milliseconds(100))
      << "CPU burnt while idle";
  // And they wake for the next call.
  ASSERT_TRUE(Call(stub.get(), false, absl::Seconds(10)).ok());
  channel.reset();
  server->Shutdown(absl::Now());
}

}  // namespace
}  // namespace rpc
