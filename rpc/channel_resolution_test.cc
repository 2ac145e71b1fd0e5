// Channel connectivity and name resolution: the connectivity states, DNS
// (errors, retries with backoff, recovery, the TLS name against the
// resolved address, stale addresses resolved again), bad targets, policies
// and credentials, unix: and bare host:port targets, backoff arguments, and
// the last reference to a channel dropped in an async callback. Every wait
// is bounded.

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/resource.h>
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
#include "rpc/internal/server_connection.h"
#include "rpc/rpc.h"
#include "rpc/testdata/test_service.rpc.pb.h"
#include "rpc/testing/channel_testing.h"
#include "transport/testing/dnsmasq.h"
#include "transport/testing/test_certs.h"
#include "transport/testing/wait_until.h"

namespace rpc {
namespace {

using channel_testing::AsyncEcho;
using channel_testing::Backend;
using channel_testing::Call;
using channel_testing::DeadPort;
using channel_testing::EstablishedTo;
using channel_testing::LoopbackListener;
using channel_testing::NamedService;
using channel_testing::StartBackend;
using channel_testing::TestArgs;
using channel_testing::WaitForState;
using test::EchoRequest;
using test::EchoResponse;
using test::EchoService;
using transport::testing::WaitUntil;

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
  // The done callback holds the only stub, which holds the only channel
  // besides the call's own reference: the channel is destroyed from its
  // loop thread, when the call lets it go after the callback, and closes.
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
                       stub.reset();  // The last reference but the call's.
                       call->done.Notify();
                     });
  ASSERT_TRUE(call->done.WaitForNotificationWithTimeout(absl::Seconds(5)));
  EXPECT_TRUE(call->status.ok()) << call->status.error_message();
  // The callback call keeps the channel until after its callback returns
  // (rpc/client_callback.cc): it goes on the loop thread, maybe after the
  // notification.
  EXPECT_TRUE(WaitUntil([&] { return weak.expired(); }));
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

}  // namespace
}  // namespace rpc
