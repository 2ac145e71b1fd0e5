// Channel load balancing and subchannels: pick_first and round_robin over
// two of our servers on 127.0.0.2 and 127.0.0.3 with one port, reached
// through an ipv4: address list or a real DNS server (dnsmasq); failover
// without failed wait-for-ready calls; fail-fast vs wait-for-ready; one
// connection kept after every address failed; re-resolution when the
// connection drops; connections whose stream ids run out; retired and idle
// subchannels that must not connect again. Every wait is bounded.

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
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
#include "rpc/rpc.h"
#include "rpc/testdata/test_service.rpc.pb.h"
#include "rpc/testing/channel_testing.h"
#include "transport/testing/dnsmasq.h"
#include "transport/testing/wait_until.h"

namespace rpc {
namespace {

using channel_testing::AsyncEcho;
using channel_testing::Backend;
using channel_testing::Call;
using channel_testing::DeadPort;
using channel_testing::EstablishedTo;
using channel_testing::Listener;
using channel_testing::NamedService;
using channel_testing::StartBackend;
using channel_testing::StartPair;
using channel_testing::TestArgs;
using channel_testing::WaitForState;
using test::EchoRequest;
using test::EchoResponse;
using test::EchoService;

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

}  // namespace
}  // namespace rpc
