// TLS over loopback sockets on the event loop, and against Debian's openssl
// s_server / s_client as peers nobody here wrote.

#include "transport/tls/tls_endpoint.h"

#include <poll.h>
#include <sys/epoll.h>
#include <sys/socket.h>

#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "gtest/gtest.h"
#include "transport/io/absl_view.h"
#include "transport/io/event_loop.h"
#include "transport/io/tcp.h"
#include "transport/testing/echo_peer.h"
#include "transport/testing/full_backlog_listener.h"
#include "transport/testing/subprocess.h"
#include "transport/testing/test_certs.h"
#include "transport/testing/wait_until.h"
#include "transport/tls/tls.h"

namespace transport {
namespace {

using ::transport::testing::EchoPeer;
using ::transport::testing::FullBacklogListener;
using ::transport::testing::GetTestCertificates;
using ::transport::testing::OpenFdCount;
using ::transport::testing::Pattern;
using ::transport::testing::ReadsEofWithin;
using ::transport::testing::ShrinkSocketBuffers;
using ::transport::testing::Subprocess;
using ::transport::testing::TestCertificates;
using ::transport::testing::TransferClient;

constexpr absl::Duration kWait = absl::Seconds(30);

const TestCertificates& Certs() {
  const auto& certs = GetTestCertificates();
  EXPECT_TRUE(certs.ok()) << certs.status();
  return *certs;
}

std::shared_ptr<const TlsContext> ServerContext(
    TlsVersion max = TlsVersion::kTls13, bool mtls = false) {
  TlsServerOptions o;
  o.certificate_chain_pem = Certs().server_chain_pem;
  o.private_key_pem = Certs().server_key_pem;
  o.max_version = max;
  if (mtls) {
    o.client_ca_pem = Certs().ca_pem;
    o.require_client_certificate = true;
  }
  auto ctx = TlsContext::CreateServer(o);
  EXPECT_TRUE(ctx.ok()) << ctx.status();
  return *ctx;
}

std::shared_ptr<const TlsContext> ClientContext(
    TlsVersion max = TlsVersion::kTls13) {
  TlsClientOptions o;
  o.root_certificates_pem = Certs().ca_pem;
  o.max_version = max;
  auto ctx = TlsContext::CreateClient(o);
  EXPECT_TRUE(ctx.ok()) << ctx.status();
  return *ctx;
}

// Accepts TCP, runs the server handshake, echoes over TLS.
class TlsEchoServer {
 public:
  TlsEchoServer(EventLoop* loop, std::shared_ptr<const TlsContext> context,
                int family = AF_INET, size_t echo_limit = 256 * 1024,
                bool small_buffers = false)
      : loop_(loop),
        context_(std::move(context)),
        echo_limit_(echo_limit),
        small_buffers_(small_buffers) {
    auto l = TcpListener::Listen(
        loop, SocketAddress::Loopback(family, 0),
        [this](ScopedFd fd, const SocketAddress&) { OnAccept(std::move(fd)); });
    EXPECT_TRUE(l.ok()) << l.status();
    listener_ = *std::move(l);
  }

  SocketAddress address() const { return listener_->local_address(); }
  uint16_t port() const { return listener_->local_port(); }
  const std::vector<absl::Status>& handshakes() const { return handshakes_; }
  const std::vector<std::unique_ptr<EchoPeer>>& peers() const { return peers_; }
  const std::vector<std::string>& client_subjects() const {
    return client_subjects_;
  }
  // Per successful handshake: whether it resumed a session.
  const std::vector<bool>& resumed() const { return resumed_; }

 private:
  void OnAccept(ScopedFd fd) {
    if (small_buffers_) ShrinkSocketBuffers(fd.get());
    auto tcp = TcpEndpoint::Create(loop_, std::move(fd));
    ASSERT_TRUE(tcp.ok()) << tcp.status();
    auto session = TlsSession::CreateServer(context_);
    ASSERT_TRUE(session.ok()) << session.status();
    const int id = next_id_++;
    handshaking_[id] = TlsEndpoint::Create(
        *std::move(tcp), *std::move(session),
        [this, id](absl::Status s) { OnHandshake(id, std::move(s)); });
  }

  void OnHandshake(int id, absl::Status s) {
    handshakes_.push_back(s);
    std::unique_ptr<TlsEndpoint> ep = std::move(handshaking_[id]);
    handshaking_.erase(id);
    if (!s.ok()) return;  // destroys the endpoint inside its own callback
    EXPECT_EQ(ep->session().alpn_protocol(), "h2");
    client_subjects_.push_back(ep->session().PeerSubject());
    resumed_.push_back(ep->session().session_reused());
    peers_.push_back(std::make_unique<EchoPeer>(std::move(ep), echo_limit_));
  }

  EventLoop* const loop_;
  std::shared_ptr<const TlsContext> context_;
  const size_t echo_limit_;
  const bool small_buffers_;
  std::unique_ptr<TcpListener> listener_;
  int next_id_ = 0;
  std::map<int, std::unique_ptr<TlsEndpoint>> handshaking_;
  std::vector<std::unique_ptr<EchoPeer>> peers_;
  std::vector<absl::Status> handshakes_;
  std::vector<std::string> client_subjects_;
  std::vector<bool> resumed_;
};

absl::StatusOr<std::unique_ptr<TlsEndpoint>> TlsConnectSync(
    EventLoop* loop, const SocketAddress& address,
    std::shared_ptr<const TlsContext> context, const std::string& name,
    absl::Duration timeout = absl::Seconds(10)) {
  absl::StatusOr<std::unique_ptr<TlsEndpoint>> result =
      absl::UnknownError("callback never ran");
  bool done = false;
  TlsConnect(loop, address, std::move(context), name, timeout,
             [&](absl::StatusOr<std::unique_ptr<TlsEndpoint>> r) {
               result = std::move(r);
               done = true;
             });
  EXPECT_TRUE(loop->RunUntil([&] { return done; }, kWait));
  return result;
}

class TlsEchoTest : public ::testing::TestWithParam<TlsVersion> {};

// Large transfers both ways through TLS on one loop: records are gathered,
// the echo side may pause at its limit, the client sees short writes.
TEST_P(TlsEchoTest, EightMegabytesBothWays) {
  auto loop = *EventLoop::Create();
  TlsEchoServer server(loop.get(), ServerContext(), AF_INET,
                       /*echo_limit=*/64 * 1024, /*small_buffers=*/true);
  // TCP first, then TLS on top by hand (what TlsConnect does), so the
  // client socket's buffers can be shrunk too.
  absl::StatusOr<std::unique_ptr<TcpEndpoint>> tcp = absl::UnknownError("");
  bool connected = false;
  TcpConnect(loop.get(), server.address(), absl::Seconds(10), [&](auto r) {
    tcp = std::move(r);
    connected = true;
  });
  ASSERT_TRUE(loop->RunUntil([&] { return connected; }, kWait));
  ASSERT_TRUE(tcp.ok()) << tcp.status();
  ShrinkSocketBuffers((*tcp)->fd());
  auto session =
      TlsSession::CreateClient(ClientContext(GetParam()), "localhost");
  ASSERT_TRUE(session.ok()) << session.status();
  absl::Status handshake = absl::UnknownError("pending");
  std::unique_ptr<TlsEndpoint> ep =
      TlsEndpoint::Create(*std::move(tcp), *std::move(session),
                          [&](absl::Status s) { handshake = std::move(s); });
  ASSERT_TRUE(loop->RunUntil(
      [&] { return handshake.code() != absl::StatusCode::kUnknown; }, kWait));
  ASSERT_TRUE(handshake.ok()) << handshake;
  EXPECT_TRUE(ep->handshake_complete());
  EXPECT_EQ(ep->session().alpn_protocol(), "h2");
  EXPECT_EQ(ep->session().version_name(),
            GetParam() == TlsVersion::kTls12 ? "TLSv1.2" : "TLSv1.3");
  EXPECT_EQ(ep->peer_address(), server.address());
  const std::string payload = Pattern(8 << 20, 9);
  TransferClient client(std::move(ep), payload);
  ASSERT_TRUE(loop->RunUntil([&] { return client.done(); }, kWait));
  ASSERT_TRUE(client.error().ok()) << client.error();
  ASSERT_EQ(client.received().size(), payload.size());
  EXPECT_TRUE(client.received() == payload);
  EXPECT_GT(client.short_writes(), 0u);
  ASSERT_EQ(server.peers().size(), 1u);
  EXPECT_TRUE(server.peers()[0]->finished());
}

INSTANTIATE_TEST_SUITE_P(Versions, TlsEchoTest,
                         ::testing::Values(TlsVersion::kTls13,
                                           TlsVersion::kTls12),
                         [](const auto& info) {
                           return info.param == TlsVersion::kTls12
                                      ? std::string("Tls12")
                                      : std::string("Tls13");
                         });

TEST(TlsEndpointTest, MegabyteOverIpv6) {
  ScopedFd probe(socket(AF_INET6, SOCK_STREAM, 0));
  SocketAddress v6 = SocketAddress::Loopback(AF_INET6, 0);
  if (!probe.valid() || bind(probe.get(), v6.addr(), v6.len()) != 0) {
    GTEST_SKIP() << "no IPv6 loopback";
  }
  auto loop = *EventLoop::Create();
  TlsEchoServer server(loop.get(), ServerContext(), AF_INET6);
  // Verified against the certificate's IP:::1 SAN.
  auto ep =
      TlsConnectSync(loop.get(), server.address(), ClientContext(), "::1");
  ASSERT_TRUE(ep.ok()) << ep.status();
  const std::string payload = Pattern(1 << 20, 2);
  TransferClient client(*std::move(ep), payload);
  ASSERT_TRUE(loop->RunUntil([&] { return client.done(); }, kWait));
  ASSERT_TRUE(client.error().ok()) << client.error();
  EXPECT_TRUE(client.received() == payload);
}

TEST(TlsEndpointTest, MutualTlsOverSockets) {
  auto loop = *EventLoop::Create();
  TlsEchoServer server(loop.get(), ServerContext(TlsVersion::kTls13, true));
  TlsClientOptions o;
  o.root_certificates_pem = Certs().ca_pem;
  o.certificate_chain_pem = Certs().client_chain_pem;
  o.private_key_pem = Certs().client_key_pem;
  auto ep = TlsConnectSync(loop.get(), server.address(),
                           *TlsContext::CreateClient(o), "localhost");
  ASSERT_TRUE(ep.ok()) << ep.status();
  TransferClient client(*std::move(ep), "mutual");
  ASSERT_TRUE(loop->RunUntil([&] { return client.done(); }, kWait));
  EXPECT_EQ(client.received(), "mutual");
  ASSERT_EQ(server.client_subjects().size(), 1u);
  EXPECT_EQ(server.client_subjects()[0], "CN=test-client,O=h2rpc test");

  // Without a client certificate the server refuses.
  auto refused = TlsConnectSync(loop.get(), server.address(), ClientContext(),
                                "localhost");
  if (refused.ok()) {
    // TLS 1.3: the client finished first; the refusal arrives as an alert.
    TransferClient c(*std::move(refused), "x");
    ASSERT_TRUE(loop->RunUntil([&] { return c.done(); }, kWait));
    EXPECT_EQ(c.error().code(), absl::StatusCode::kUnauthenticated)
        << c.error();
  } else {
    EXPECT_EQ(refused.status().code(), absl::StatusCode::kUnauthenticated);
  }
  ASSERT_TRUE(
      loop->RunUntil([&] { return server.handshakes().size() == 2; }, kWait));
  EXPECT_EQ(server.handshakes()[1].code(), absl::StatusCode::kUnauthenticated)
      << server.handshakes()[1];
}

// A second connection with the same client context resumes the first one's
// session (TLS 1.3: the ticket arrives after the handshake, with the echo).
TEST_P(TlsEchoTest, ReconnectResumesTheSession) {
  auto loop = *EventLoop::Create();
  TlsEchoServer server(loop.get(), ServerContext(GetParam(), true));
  TlsClientOptions o;
  o.root_certificates_pem = Certs().ca_pem;
  o.certificate_chain_pem = Certs().client_chain_pem;
  o.private_key_pem = Certs().client_key_pem;
  std::shared_ptr<const TlsContext> context = *TlsContext::CreateClient(o);
  for (int i = 0; i < 3; ++i) {
    auto ep =
        TlsConnectSync(loop.get(), server.address(), context, "localhost");
    ASSERT_TRUE(ep.ok()) << ep.status();
    EXPECT_EQ((*ep)->session().session_reused(), i > 0) << i;
    TransferClient client(*std::move(ep), "resume " + std::to_string(i));
    ASSERT_TRUE(loop->RunUntil([&] { return client.done(); }, kWait));
    EXPECT_EQ(client.received(), "resume " + std::to_string(i));
    EXPECT_EQ(context->cached_sessions(), 1u);
  }
  ASSERT_EQ(server.resumed(), (std::vector<bool>{false, true, true}));
  // The client certificate comes back with the resumed session.
  for (const std::string& subject : server.client_subjects()) {
    EXPECT_EQ(subject, "CN=test-client,O=h2rpc test");
  }
  // Another name (same address): its own cache entry, a full handshake.
  auto other =
      TlsConnectSync(loop.get(), server.address(), context, "127.0.0.1");
  ASSERT_TRUE(other.ok()) << other.status();
  EXPECT_FALSE((*other)->session().session_reused());
}

TEST(TlsEndpointTest, WrongHostnameFailsOnBothSides) {
  auto loop = *EventLoop::Create();
  TlsEchoServer server(loop.get(), ServerContext());
  auto ep = TlsConnectSync(loop.get(), server.address(), ClientContext(),
                           "wrong.example");
  ASSERT_FALSE(ep.ok());
  EXPECT_EQ(ep.status().code(), absl::StatusCode::kUnauthenticated)
      << ep.status();
  EXPECT_TRUE(absl::StrContains(ep.status().message(), "hostname mismatch"))
      << ep.status();
  ASSERT_TRUE(
      loop->RunUntil([&] { return server.handshakes().size() == 1; }, kWait));
  EXPECT_FALSE(server.handshakes()[0].ok());
}

// A TCP server that accepts and never answers (a ClientHello waits).
struct SilentServer {
  explicit SilentServer(EventLoop* loop) {
    auto l = TcpListener::Listen(loop, SocketAddress::Loopback(AF_INET, 0),
                                 [this](ScopedFd fd, const SocketAddress&) {
                                   held.push_back(std::move(fd));
                                 });
    EXPECT_TRUE(l.ok()) << l.status();
    if (l.ok()) listener = *std::move(l);
  }
  const SocketAddress& address() const { return listener->local_address(); }
  std::vector<ScopedFd> held;  // accepted
  std::unique_ptr<TcpListener> listener;
};

TEST(TlsEndpointTest, HandshakeTimesOutAgainstASilentServer) {
  auto loop = *EventLoop::Create();
  SilentServer server(loop.get());
  ASSERT_TRUE(server.listener != nullptr);
  const auto start = EventLoop::Clock::now();
  auto ep = TlsConnectSync(loop.get(), server.address(), ClientContext(),
                           "localhost", absl::Milliseconds(200));
  ASSERT_FALSE(ep.ok());
  EXPECT_EQ(ep.status().code(), absl::StatusCode::kDeadlineExceeded)
      << ep.status();
  EXPECT_GE(EventLoop::Clock::now() - start, std::chrono::milliseconds(200));
  EXPECT_EQ(loop->pending_timers(), 0u);
}

TEST(TlsEndpointTest, CancelEndsAPendingHandshakeAndDropsTheCallback) {
  auto loop = *EventLoop::Create();
  SilentServer server(loop.get());
  ASSERT_TRUE(server.listener != nullptr);
  bool called = false;
  // No timeout: without Cancel the handshake would wait forever.
  ConnectHandle handle =
      TlsConnect(loop.get(), server.address(), ClientContext(), "localhost",
                 absl::InfiniteDuration(), [&](auto) { called = true; });
  // Until the ClientHello reached the server: the handshake is under way.
  ASSERT_TRUE(loop->RunUntil(
      [&] {
        if (server.held.empty()) return false;
        pollfd p{server.held[0].get(), POLLIN, 0};
        return ::poll(&p, 1, 0) == 1;
      },
      kWait));
  EXPECT_TRUE(handle.Cancel());
  EXPECT_EQ(loop->pending_timers(), 0u);
  // The client's socket closed: the server reads the hello, then EOF.
  EXPECT_TRUE(ReadsEofWithin(server.held[0].get(), kWait));
  EXPECT_FALSE(handle.Cancel());
  loop->RunUntil([&] { return called; }, absl::Milliseconds(100));
  EXPECT_FALSE(called);
}

// A listener whose full backlog drops the SYN keeps TCP connecting: against
// one that accepts, the kernel completes the connect inside connect(), and
// the TcpEndpoint a cancelled attempt is handed later closes anyway, so a TCP
// phase left running would go unseen.
TEST(TlsEndpointTest, CancelDuringTheTcpConnectClosesTheSocket) {
  auto loop = *EventLoop::Create();
  FullBacklogListener hanging;
  ASSERT_TRUE(hanging.Holds()) << "the listener's backlog does not hold a SYN";
  auto context = ClientContext();
  const int fds_before = OpenFdCount();
  bool called = false;
  // A finite timeout: the TCP phase then has a timer of its own to stop.
  ConnectHandle handle =
      TlsConnect(loop.get(), hanging.address(), context, "localhost",
                 absl::Seconds(60), [&](auto) { called = true; });
  EXPECT_EQ(OpenFdCount(), fds_before + 1);
  EXPECT_EQ(loop->pending_timers(), 2u);  // TlsConnect's and TcpConnect's
  EXPECT_EQ(hanging.PendingConnects(), 1);
  EXPECT_TRUE(handle.Cancel());
  // At once, before the loop ran: the socket closed, both timers gone.
  EXPECT_EQ(OpenFdCount(), fds_before);
  EXPECT_EQ(loop->pending_timers(), 0u);
  EXPECT_EQ(hanging.PendingConnects(), 0);
  loop->RunUntil([&] { return called; }, absl::Milliseconds(100));
  EXPECT_FALSE(called);
}

TEST(TlsEndpointTest, TimeoutDuringTheTcpConnectClosesTheSocketAtOnce) {
  auto loop = *EventLoop::Create();
  FullBacklogListener hanging;
  ASSERT_TRUE(hanging.Holds()) << "the listener's backlog does not hold a SYN";
  auto context = ClientContext();
  const int fds_before = OpenFdCount();
  bool called = false;
  absl::Status status;
  size_t timers_in_done = 0;
  int fds_in_done = -1;
  TlsConnect(loop.get(), hanging.address(), context, "localhost",
             absl::Milliseconds(200),
             [&](absl::StatusOr<std::unique_ptr<TlsEndpoint>> r) {
               called = true;
               status = r.status();
               // The TCP phase ended with the timeout, not after `done`.
               timers_in_done = loop->pending_timers();
               fds_in_done = OpenFdCount();
             });
  ASSERT_TRUE(loop->RunUntil([&] { return called; }, kWait));
  EXPECT_EQ(status.code(), absl::StatusCode::kDeadlineExceeded) << status;
  EXPECT_EQ(timers_in_done, 0u);
  EXPECT_EQ(fds_in_done, fds_before);
  EXPECT_EQ(hanging.PendingConnects(), 0);
}

TEST(TlsEndpointTest, ServerClosingDuringHandshakeFails) {
  auto loop = *EventLoop::Create();
  auto l = TcpListener::Listen(loop.get(), SocketAddress::Loopback(AF_INET, 0),
                               [](ScopedFd, const SocketAddress&) {
                                 // Dropping the fd closes the connection.
                               });
  ASSERT_TRUE(l.ok());
  auto ep = TlsConnectSync(loop.get(), (*l)->local_address(), ClientContext(),
                           "localhost");
  ASSERT_FALSE(ep.ok());
  EXPECT_EQ(ep.status().code(), absl::StatusCode::kUnavailable) << ep.status();
}

TEST(TlsEndpointTest, PlaintextClientIsRejectedByTlsServer) {
  auto loop = *EventLoop::Create();
  TlsEchoServer server(loop.get(), ServerContext());
  auto tcp = [&] {
    absl::StatusOr<std::unique_ptr<TcpEndpoint>> r = absl::UnknownError("");
    bool done = false;
    TcpConnect(loop.get(), server.address(), absl::Seconds(10), [&](auto ep) {
      r = std::move(ep);
      done = true;
    });
    EXPECT_TRUE(loop->RunUntil([&] { return done; }, kWait));
    return r;
  }();
  ASSERT_TRUE(tcp.ok());
  // An h2c client speaking prior knowledge to a TLS port.
  ASSERT_TRUE((*tcp)->Write("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n").ok());
  ASSERT_TRUE(
      loop->RunUntil([&] { return server.handshakes().size() == 1; }, kWait));
  EXPECT_EQ(server.handshakes()[0].code(), absl::StatusCode::kUnavailable)
      << server.handshakes()[0];
}

TEST(TlsEndpointTest, DestroyingTheEndpointDuringTheHandshakeIsSafe) {
  auto loop = *EventLoop::Create();
  TlsEchoServer server(loop.get(), ServerContext());
  bool called = false;
  TlsConnect(loop.get(), server.address(), ClientContext(), "localhost",
             absl::Seconds(10), [&](auto r) {
               called = true;
               // Drop it at once, from inside the handshake callback.
               EXPECT_TRUE(r.ok()) << r.status();
             });
  ASSERT_TRUE(loop->RunUntil([&] { return called; }, kWait));
  loop->RunOnce(absl::Milliseconds(10));
}

// ---- Against Debian's openssl binary ----

struct PeerFiles {
  std::string dir, ca, server_cert, server_key, client_cert, client_key;
};

PeerFiles WriteCertFiles() {
  PeerFiles f;
  f.dir = testing::TempDir();
  f.ca = f.dir + "/ca.pem";
  f.server_cert = f.dir + "/server.pem";
  f.server_key = f.dir + "/server.key";
  f.client_cert = f.dir + "/client.pem";
  f.client_key = f.dir + "/client.key";
  EXPECT_TRUE(testing::WriteFile(f.ca, Certs().ca_pem).ok());
  EXPECT_TRUE(testing::WriteFile(f.server_cert, Certs().server_chain_pem).ok());
  EXPECT_TRUE(testing::WriteFile(f.server_key, Certs().server_key_pem).ok());
  EXPECT_TRUE(testing::WriteFile(f.client_cert, Certs().client_chain_pem).ok());
  EXPECT_TRUE(testing::WriteFile(f.client_key, Certs().client_key_pem).ok());
  return f;
}

// Watches a child's output on the loop while it lives in the test.
class OutputWatch {
 public:
  OutputWatch(EventLoop* loop, Subprocess* p) : loop_(loop), p_(p) {
    EXPECT_TRUE(loop->Watch(p->output_fd(), EPOLLIN,
                            [p](uint32_t) { p->ReadAvailable(); })
                    .ok());
  }
  ~OutputWatch() { loop_->Unwatch(p_->output_fd()).IgnoreError(); }
  bool RunUntilOutput(std::string_view needle) {
    return loop_->RunUntil(
        [&] {
          p_->ReadAvailable();
          return absl::StrContains(p_->output(), ToAbsl(needle));
        },
        kWait);
  }

 private:
  EventLoop* loop_;
  Subprocess* p_;
};

// Starts `openssl s_server` on an OS-chosen loopback port; returns the port.
std::unique_ptr<Subprocess> StartSServer(const PeerFiles& f,
                                         const std::vector<std::string>& extra,
                                         uint16_t* port) {
  std::vector<std::string> argv = {testing::OpenSslBinary(),
                                   "s_server",
                                   "-accept",
                                   "127.0.0.1:0",
                                   "-cert",
                                   f.server_cert,
                                   "-key",
                                   f.server_key,
                                   "-naccept",
                                   "1"};
  argv.insert(argv.end(), extra.begin(), extra.end());
  auto p = Subprocess::Start(argv);
  EXPECT_TRUE(p.ok()) << p.status();
  if (!p.ok()) return nullptr;
  if (!(*p)->WaitForOutput("ACCEPT", kWait) ||
      !(*p)->WaitForOutput("\n", kWait)) {
    ADD_FAILURE() << "s_server did not start: " << (*p)->output();
    return nullptr;
  }
  // "ACCEPT 127.0.0.1:PORT"
  const std::string& out = (*p)->output();
  const size_t line = out.find("ACCEPT");
  const size_t colon = out.find(':', line);
  const size_t end = out.find('\n', colon);
  uint32_t value = 0;
  if (colon == std::string::npos ||
      !absl::SimpleAtoi(out.substr(colon + 1, end - colon - 1), &value)) {
    ADD_FAILURE() << "no port in: " << out;
    return nullptr;
  }
  *port = static_cast<uint16_t>(value);
  return *std::move(p);
}

#define REQUIRE_OPENSSL_BINARY()                          \
  if (testing::OpenSslBinary().empty()) {                 \
    GTEST_SKIP() << "openssl binary not found (Debian's " \
                    "package openssl)";                   \
  }

TEST(OpenSslInteropTest, OurClientAgainstSServer) {
  REQUIRE_OPENSSL_BINARY();
  const PeerFiles files = WriteCertFiles();
  uint16_t port = 0;
  auto server = StartSServer(files, {"-alpn", "h2"}, &port);
  ASSERT_NE(server, nullptr);
  auto loop = *EventLoop::Create();
  OutputWatch watch(loop.get(), server.get());
  auto ep = TlsConnectSync(loop.get(), SocketAddress::Loopback(AF_INET, port),
                           ClientContext(), "localhost");
  ASSERT_TRUE(ep.ok()) << ep.status() << "\ns_server said:\n"
                       << server->output();
  EXPECT_EQ((*ep)->session().alpn_protocol(), "h2");
  EXPECT_EQ((*ep)->session().version_name(), "TLSv1.3");
  // Our bytes reach s_server (it prints them) ...
  ASSERT_TRUE((*ep)->Write("hello from h2rpc\n").ok());
  ASSERT_TRUE(watch.RunUntilOutput("hello from h2rpc")) << server->output();
  // ... and its stdin reaches us.
  ASSERT_TRUE(server->WriteStdin("pong from openssl\n").ok());
  std::string got;
  TlsEndpoint* raw = ep->get();
  raw->SetCallbacks([&] { raw->ReadSome(&got, 1 << 16); }, nullptr);
  raw->ReadSome(&got, 1 << 16);
  ASSERT_TRUE(loop->RunUntil(
      [&] { return absl::StrContains(got, "pong from openssl"); }, kWait))
      << got;
}

TEST(OpenSslInteropTest, OurClientRefusesSServerWithoutAlpn) {
  REQUIRE_OPENSSL_BINARY();
  const PeerFiles files = WriteCertFiles();
  uint16_t port = 0;
  auto server = StartSServer(files, {}, &port);
  ASSERT_NE(server, nullptr);
  auto loop = *EventLoop::Create();
  auto ep = TlsConnectSync(loop.get(), SocketAddress::Loopback(AF_INET, port),
                           ClientContext(), "localhost");
  ASSERT_FALSE(ep.ok());
  EXPECT_EQ(ep.status().code(), absl::StatusCode::kFailedPrecondition)
      << ep.status();
  EXPECT_TRUE(absl::StrContains(ep.status().message(), "ALPN")) << ep.status();
}

std::unique_ptr<Subprocess> StartSClient(
    const PeerFiles& f, uint16_t port, const std::vector<std::string>& extra) {
  std::vector<std::string> argv = {testing::OpenSslBinary(),
                                   "s_client",
                                   "-connect",
                                   absl::StrCat("127.0.0.1:", port),
                                   "-CAfile",
                                   f.ca,
                                   "-verify_return_error",
                                   "-verify_hostname",
                                   "localhost",
                                   "-servername",
                                   "localhost"};
  argv.insert(argv.end(), extra.begin(), extra.end());
  auto p = Subprocess::Start(argv);
  EXPECT_TRUE(p.ok()) << p.status();
  return p.ok() ? *std::move(p) : nullptr;
}

TEST(OpenSslInteropTest, SClientAgainstOurServer) {
  REQUIRE_OPENSSL_BINARY();
  const PeerFiles files = WriteCertFiles();
  auto loop = *EventLoop::Create();
  TlsEchoServer server(loop.get(), ServerContext());
  auto client = StartSClient(files, server.port(), {"-alpn", "h2"});
  ASSERT_NE(client, nullptr);
  OutputWatch watch(loop.get(), client.get());
  ASSERT_TRUE(watch.RunUntilOutput("Verify return code: 0 (ok)"))
      << client->output();
  EXPECT_TRUE(absl::StrContains(client->output(), "ALPN protocol: h2"))
      << client->output();
  // TLS 1.3: s_client is done before our server has read its Finished.
  ASSERT_TRUE(
      loop->RunUntil([&] { return server.handshakes().size() == 1; }, kWait));
  EXPECT_TRUE(server.handshakes()[0].ok()) << server.handshakes()[0];
  // What s_client sends comes back (our echo), and s_client prints it.
  ASSERT_TRUE(client->WriteStdin("ping-from-s_client\n").ok());
  ASSERT_TRUE(watch.RunUntilOutput("ping-from-s_client")) << client->output();
}

TEST(OpenSslInteropTest, OurServerRefusesSClientWithoutH2) {
  REQUIRE_OPENSSL_BINARY();
  const PeerFiles files = WriteCertFiles();
  auto loop = *EventLoop::Create();
  TlsEchoServer server(loop.get(), ServerContext());
  auto client = StartSClient(files, server.port(), {"-alpn", "http/1.1"});
  ASSERT_NE(client, nullptr);
  OutputWatch watch(loop.get(), client.get());
  ASSERT_TRUE(
      loop->RunUntil([&] { return server.handshakes().size() == 1; }, kWait));
  EXPECT_EQ(server.handshakes()[0].code(),
            absl::StatusCode::kFailedPrecondition)
      << server.handshakes()[0];
  ASSERT_TRUE(watch.RunUntilOutput("no application protocol"))
      << client->output();
}

TEST(OpenSslInteropTest, SClientWithCertificateAgainstOurMtlsServer) {
  REQUIRE_OPENSSL_BINARY();
  const PeerFiles files = WriteCertFiles();
  auto loop = *EventLoop::Create();
  TlsEchoServer server(loop.get(), ServerContext(TlsVersion::kTls13, true));
  auto client = StartSClient(
      files, server.port(),
      {"-alpn", "h2", "-cert", files.client_cert, "-key", files.client_key});
  ASSERT_NE(client, nullptr);
  OutputWatch watch(loop.get(), client.get());
  ASSERT_TRUE(
      loop->RunUntil([&] { return server.handshakes().size() == 1; }, kWait))
      << client->output();
  EXPECT_TRUE(server.handshakes()[0].ok()) << server.handshakes()[0];
  ASSERT_EQ(server.client_subjects().size(), 1u);
  EXPECT_EQ(server.client_subjects()[0], "CN=test-client,O=h2rpc test");
}

// A peer sends a request over TLS and resets the connection (SO_LINGER 0)
// before this side read it; this side's next write is the first to find the
// reset. The request is still read (then the end), as over plain TCP
// (TcpEndpoint) and as when a read finds the reset first: the HTTP/2 driver
// then still serves it. The write's error failed the endpoint instead, so
// reads returned it and the request was lost.
TEST(TlsEndpointTest,
     AfterAWriteErrorReadReturnsWhatThePeerSentBeforeItsReset) {
  auto loop = *EventLoop::Create();
  int server_fd = -1;
  absl::Status server_handshake = absl::UnknownError("pending");
  std::unique_ptr<TlsEndpoint> server;
  auto listener = TcpListener::Listen(
      loop.get(), SocketAddress::Loopback(AF_INET, 0),
      [&](ScopedFd fd, const SocketAddress&) {
        server_fd = fd.get();
        auto tcp = TcpEndpoint::Create(loop.get(), std::move(fd));
        ASSERT_TRUE(tcp.ok()) << tcp.status();
        auto session = TlsSession::CreateServer(ServerContext());
        ASSERT_TRUE(session.ok()) << session.status();
        server = TlsEndpoint::Create(
            *std::move(tcp), *std::move(session),
            [&](absl::Status s) { server_handshake = std::move(s); });
      });
  ASSERT_TRUE(listener.ok()) << listener.status();
  absl::StatusOr<std::unique_ptr<TcpEndpoint>> tcp = absl::UnknownError("");
  bool connected = false;
  TcpConnect(loop.get(), (*listener)->local_address(), absl::Seconds(10),
             [&](auto r) {
               tcp = std::move(r);
               connected = true;
             });
  ASSERT_TRUE(loop->RunUntil([&] { return connected; }, kWait));
  ASSERT_TRUE(tcp.ok()) << tcp.status();
  const int client_fd = (*tcp)->fd();
  auto session = TlsSession::CreateClient(ClientContext(), "localhost");
  ASSERT_TRUE(session.ok()) << session.status();
  absl::Status client_handshake = absl::UnknownError("pending");
  std::unique_ptr<TlsEndpoint> client = TlsEndpoint::Create(
      *std::move(tcp), *std::move(session),
      [&](absl::Status s) { client_handshake = std::move(s); });
  ASSERT_TRUE(loop->RunUntil(
      [&] {
        return client_handshake.code() != absl::StatusCode::kUnknown &&
               server_handshake.code() != absl::StatusCode::kUnknown;
      },
      kWait));
  ASSERT_TRUE(client_handshake.ok()) << client_handshake;
  ASSERT_TRUE(server_handshake.ok()) << server_handshake;
  ASSERT_EQ(client->Write("request").outcome, IoOutcome::kOk);
  linger reset = {1, 0};
  ASSERT_EQ(setsockopt(client_fd, SOL_SOCKET, SO_LINGER, &reset, sizeof(reset)),
            0);
  client.reset();
  // The reset has arrived (the loop has not run: no edge was handled).
  pollfd p{server_fd, 0, 0};
  ASSERT_EQ(poll(&p, 1, 10000), 1);
  ASSERT_NE(p.revents & (POLLHUP | POLLERR), 0);
  ASSERT_EQ(server->Write("response").outcome, IoOutcome::kError);
  std::string got;
  char buf[64];
  IoResult r = IoResult::Ok(0);
  for (int i = 0; i < 100; ++i) {
    r = server->Read(absl::MakeSpan(buf));
    if (!r.ok()) break;
    got.append(buf, r.bytes);
  }
  EXPECT_EQ(got, "request") << r.status;
  EXPECT_TRUE(r.outcome == IoOutcome::kEof || r.outcome == IoOutcome::kError)
      << IoOutcomeName(r.outcome);
  // Writes stay failed.
  EXPECT_EQ(server->Write("more").outcome, IoOutcome::kError);
}
}  // namespace
}  // namespace transport
