#include "transport/io/tcp.h"

#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/notification.h"
#include "absl/time/time.h"
#include "gtest/gtest.h"
#include "transport/io/absl_view.h"
#include "transport/io/event_loop.h"
#include "transport/testing/echo_peer.h"
#include "transport/testing/full_backlog_listener.h"
#include "transport/testing/wait_until.h"

namespace transport {
namespace {

using ::transport::testing::EchoPeer;
using ::transport::testing::FullBacklogListener;
using ::transport::testing::OpenFdCount;
using ::transport::testing::Pattern;
using ::transport::testing::ShrinkSocketBuffers;
using ::transport::testing::TransferClient;

constexpr absl::Duration kWait = absl::Seconds(30);

bool HasIpv6Loopback() {
  ScopedFd fd(socket(AF_INET6, SOCK_STREAM, 0));
  SocketAddress a = SocketAddress::Loopback(AF_INET6, 0);
  return fd.valid() && bind(fd.get(), a.addr(), a.len()) == 0;
}

// Connects on `loop` and runs it until the callback came; the result.
absl::StatusOr<std::unique_ptr<TcpEndpoint>> ConnectSync(
    EventLoop* loop, const SocketAddress& address,
    absl::Duration timeout = absl::Seconds(10)) {
  absl::StatusOr<std::unique_ptr<TcpEndpoint>> result =
      absl::UnknownError("connect callback never ran");
  bool done = false;
  TcpConnect(loop, address, timeout,
             [&](absl::StatusOr<std::unique_ptr<TcpEndpoint>> r) {
               result = std::move(r);
               done = true;
             });
  EXPECT_FALSE(done) << "callback ran inside TcpConnect";
  EXPECT_TRUE(loop->RunUntil([&] { return done; }, kWait));
  return result;
}

// A listener on `loop` that echoes every connection.
class EchoServer {
 public:
  EchoServer(EventLoop* loop, const SocketAddress& address,
             size_t max_pending = 256 * 1024, bool small_buffers = false) {
    auto l = TcpListener::Listen(loop, address,
                                 [this, loop, max_pending, small_buffers](
                                     ScopedFd fd, const SocketAddress& peer) {
                                   EXPECT_EQ(peer.family(), address_family_);
                                   if (small_buffers)
                                     ShrinkSocketBuffers(fd.get());
                                   auto ep =
                                       TcpEndpoint::Create(loop, std::move(fd));
                                   ASSERT_TRUE(ep.ok()) << ep.status();
                                   peers_.push_back(std::make_unique<EchoPeer>(
                                       *std::move(ep), max_pending));
                                 });
    EXPECT_TRUE(l.ok()) << l.status();
    if (l.ok()) listener_ = *std::move(l);
    address_family_ = address.family();
  }

  SocketAddress address() const { return listener_->local_address(); }
  const std::vector<std::unique_ptr<EchoPeer>>& peers() const { return peers_; }

 private:
  std::unique_ptr<TcpListener> listener_;
  int address_family_;
  std::vector<std::unique_ptr<EchoPeer>> peers_;
};

TEST(TcpTest, ListenerPicksAPort) {
  auto loop = *EventLoop::Create();
  auto l = TcpListener::Listen(loop.get(), SocketAddress::Loopback(AF_INET, 0),
                               [](ScopedFd, const SocketAddress&) {});
  ASSERT_TRUE(l.ok()) << l.status();
  EXPECT_NE((*l)->local_port(), 0);
  EXPECT_EQ((*l)->local_address().HostString(), "127.0.0.1");
  // The same port again fails (no SO_REUSEPORT) with the address named.
  auto again = TcpListener::Listen(loop.get(), (*l)->local_address(),
                                   [](ScopedFd, const SocketAddress&) {});
  ASSERT_FALSE(again.ok());
  EXPECT_TRUE(absl::StrContains(again.status().message(),
                                (*l)->local_address().ToString()))
      << again.status();
}

TEST(TcpTest, ReusePortAllowsOneListenerPerLoop) {
  auto loop = *EventLoop::Create();
  TcpListenerOptions options;
  options.reuse_port = true;
  auto a = TcpListener::Listen(
      loop.get(), SocketAddress::Loopback(AF_INET, 0),
      [](ScopedFd, const SocketAddress&) {}, options);
  ASSERT_TRUE(a.ok()) << a.status();
  auto b = TcpListener::Listen(
      loop.get(), (*a)->local_address(), [](ScopedFd, const SocketAddress&) {},
      options);
  EXPECT_TRUE(b.ok()) << b.status();
}

void SmallEcho(int family) {
  auto loop = *EventLoop::Create();
  EchoServer server(loop.get(), SocketAddress::Loopback(family, 0));
  auto ep = ConnectSync(loop.get(), server.address());
  ASSERT_TRUE(ep.ok()) << ep.status();
  EXPECT_EQ((*ep)->peer_address(), server.address());
  EXPECT_EQ((*ep)->local_address().family(), family);
  TransferClient client(*std::move(ep), "hello, h2");
  ASSERT_TRUE(loop->RunUntil([&] { return client.done(); }, kWait));
  ASSERT_TRUE(client.error().ok()) << client.error();
  EXPECT_EQ(client.received(), "hello, h2");
  ASSERT_EQ(server.peers().size(), 1u);
  EXPECT_TRUE(server.peers()[0]->finished());
}

TEST(TcpTest, EchoOverIpv4Loopback) { SmallEcho(AF_INET); }

TEST(TcpTest, EchoOverIpv6Loopback) {
  if (!HasIpv6Loopback()) GTEST_SKIP() << "no IPv6 loopback here";
  SmallEcho(AF_INET6);
}

// A unix socket path in a fresh directory: under $TEST_TMPDIR when that is
// short enough for sun_path (107 bytes), else under /tmp. Removes the
// directory (which must be empty by then) on destruction.
class UnixSocketDir {
 public:
  UnixSocketDir() {
    const char* base = getenv("TEST_TMPDIR");
    std::string tmpl =
        absl::StrCat(base != nullptr ? base : "/tmp", "/uXXXXXX");
    if (tmpl.size() + 16 > sizeof(sockaddr_un::sun_path)) {
      tmpl = "/tmp/h2rpc_unix_XXXXXX";
    }
    if (mkdtemp(tmpl.data()) != nullptr) dir_ = tmpl;
    EXPECT_FALSE(dir_.empty()) << "mkdtemp " << tmpl;
  }
  ~UnixSocketDir() {
    if (!dir_.empty()) {
      EXPECT_EQ(rmdir(dir_.c_str()), 0) << "left in " << dir_;
    }
  }
  std::string Path(std::string_view name) const {
    return absl::StrCat(dir_, "/", ToAbsl(name));
  }
  SocketAddress Address(std::string_view name) const {
    auto a = SocketAddress::Unix(Path(name));
    EXPECT_TRUE(a.ok()) << a.status();
    return a.ok() ? *a : SocketAddress();
  }

 private:
  std::string dir_;
};

bool Exists(const std::string& path) {
  struct stat st;
  return lstat(path.c_str(), &st) == 0;
}

TEST(TcpTest, EchoOverUnixSocket) {
  UnixSocketDir dir;
  const SocketAddress address = dir.Address("echo.sock");
  auto loop = *EventLoop::Create();
  {
    EchoServer server(loop.get(), address);
    EXPECT_EQ(server.address(), address);
    EXPECT_EQ(server.address().ToString(), "unix:" + dir.Path("echo.sock"));
    auto ep = ConnectSync(loop.get(), address);
    ASSERT_TRUE(ep.ok()) << ep.status();
    EXPECT_EQ((*ep)->peer_address(), address);
    EXPECT_EQ((*ep)->local_address().ToString(), "unix:");  // unnamed
    TransferClient client(*std::move(ep), "hello, unix");
    ASSERT_TRUE(loop->RunUntil([&] { return client.done(); }, kWait));
    ASSERT_TRUE(client.error().ok()) << client.error();
    EXPECT_EQ(client.received(), "hello, unix");
    ASSERT_EQ(server.peers().size(), 1u);
    EXPECT_TRUE(server.peers()[0]->finished());
  }
  EXPECT_FALSE(Exists(dir.Path("echo.sock"))) << "listener left its file";
}

TEST(TcpTest, ListenerOnUnixSocketReportsNoPort) {
  UnixSocketDir dir;
  auto loop = *EventLoop::Create();
  auto l = TcpListener::Listen(loop.get(), dir.Address("p.sock"),
                               [](ScopedFd, const SocketAddress&) {});
  ASSERT_TRUE(l.ok()) << l.status();
  EXPECT_EQ((*l)->local_port(), 0);
  EXPECT_EQ((*l)->local_address().family(), AF_UNIX);
}

TEST(TcpTest, LargeEchoOverUnixSocketHitsBackpressure) {
  UnixSocketDir dir;
  auto loop = *EventLoop::Create();
  EchoServer server(loop.get(), dir.Address("large.sock"),
                    /*max_pending=*/64 * 1024, /*small_buffers=*/true);
  auto ep = ConnectSync(loop.get(), server.address());
  ASSERT_TRUE(ep.ok()) << ep.status();
  ShrinkSocketBuffers((*ep)->fd());
  const std::string payload = Pattern(8 << 20);
  TransferClient client(*std::move(ep), payload);
  ASSERT_TRUE(loop->RunUntil([&] { return client.done(); }, kWait));
  ASSERT_TRUE(client.error().ok()) << client.error();
  ASSERT_EQ(client.received().size(), payload.size());
  EXPECT_TRUE(client.received() == payload);
  EXPECT_GT(client.short_writes(), 0u) << "client never saw EAGAIN";
}

TEST(TcpTest, UnixListenerReplacesAStaleSocketFileButNoOtherFile) {
  UnixSocketDir dir;
  auto loop = *EventLoop::Create();
  const SocketAddress address = dir.Address("stale.sock");
  {
    // A socket file whose process is gone: bound, never unlinked.
    ScopedFd fd(socket(AF_UNIX, SOCK_STREAM, 0));
    ASSERT_EQ(bind(fd.get(), address.addr(), address.len()), 0);
  }
  ASSERT_TRUE(Exists(dir.Path("stale.sock")));
  // Nobody listens there: connecting is refused.
  auto refused = ConnectSync(loop.get(), address);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.status().code(), absl::StatusCode::kUnavailable)
      << refused.status();
  {
    EchoServer server(loop.get(), address);
    auto ep = ConnectSync(loop.get(), address);
    EXPECT_TRUE(ep.ok()) << ep.status();
  }
  EXPECT_FALSE(Exists(dir.Path("stale.sock")));

  // A regular file is not ours to remove: bind fails, the file stays.
  const std::string file = dir.Path("file.sock");
  { std::ofstream(file) << "data"; }
  auto l = TcpListener::Listen(loop.get(), *SocketAddress::Unix(file),
                               [](ScopedFd, const SocketAddress&) {});
  ASSERT_FALSE(l.ok());
  EXPECT_TRUE(absl::StrContains(l.status().message(), "unix:" + file))
      << l.status();
  EXPECT_TRUE(Exists(file));
  EXPECT_EQ(unlink(file.c_str()), 0);
}

TEST(TcpTest, UnixListenerLeavesASuccessorsFile) {
  UnixSocketDir dir;
  auto loop = *EventLoop::Create();
  const SocketAddress address = dir.Address("shared.sock");
  auto first = TcpListener::Listen(loop.get(), address,
                                   [](ScopedFd, const SocketAddress&) {});
  ASSERT_TRUE(first.ok()) << first.status();
  // A second listener on the same path takes it over (its file replaces the
  // first one's).
  int accepted = 0;
  auto second = TcpListener::Listen(
      loop.get(), address, [&](ScopedFd, const SocketAddress&) { ++accepted; });
  ASSERT_TRUE(second.ok()) << second.status();
  first->reset();
  EXPECT_TRUE(Exists(dir.Path("shared.sock")));
  auto ep = ConnectSync(loop.get(), address);
  ASSERT_TRUE(ep.ok()) << ep.status();
  EXPECT_TRUE(loop->RunUntil([&] { return accepted == 1; }, kWait));
  second->reset();
  EXPECT_FALSE(Exists(dir.Path("shared.sock")));
}

TEST(TcpTest, ConnectToMissingUnixPathFails) {
  UnixSocketDir dir;
  auto loop = *EventLoop::Create();
  const SocketAddress address = dir.Address("missing.sock");
  auto ep = ConnectSync(loop.get(), address);
  ASSERT_FALSE(ep.ok());
  EXPECT_EQ(ep.status().code(), absl::StatusCode::kNotFound) << ep.status();
  EXPECT_TRUE(absl::StrContains(ep.status().message(), address.ToString()))
      << ep.status();
  EXPECT_EQ(loop->pending_timers(), 0u);
}

// 8 MiB each way through one loop with small socket buffers: the client's
// writes hit EAGAIN (and usually the echo's too, which then pauses reading at
// its limit), and everything arrives intact and in order. The two tests
// below pin the write and read halves down deterministically.
TEST(TcpTest, LargeEchoHitsBackpressureBothWays) {
  auto loop = *EventLoop::Create();
  EchoServer server(loop.get(), SocketAddress::Loopback(AF_INET, 0),
                    /*max_pending=*/64 * 1024, /*small_buffers=*/true);
  auto ep = ConnectSync(loop.get(), server.address());
  ASSERT_TRUE(ep.ok()) << ep.status();
  ShrinkSocketBuffers((*ep)->fd());
  const std::string payload = Pattern(8 << 20);
  TransferClient client(*std::move(ep), payload);
  ASSERT_TRUE(loop->RunUntil([&] { return client.done(); }, kWait));
  ASSERT_TRUE(client.error().ok()) << client.error();
  ASSERT_EQ(client.received().size(), payload.size());
  EXPECT_TRUE(client.received() == payload);
  EXPECT_GT(client.short_writes(), 0u) << "client never saw EAGAIN";
  ASSERT_EQ(server.peers().size(), 1u);
  EXPECT_EQ(server.peers()[0]->echoed(), payload.size());
}

// The write half of the edge-triggered discipline: a writer facing a reader
// that does not read is woken (on_writable) only while space still frees up,
// then stays quiet with its data pending (no busy loop); once the reader
// reads, on_writable resumes it until everything arrived.
TEST(TcpTest, BlockedWriterWaitsQuietlyAndResumesWhenThePeerReads) {
  auto loop = *EventLoop::Create();
  std::unique_ptr<TcpEndpoint> reader;
  auto l = TcpListener::Listen(loop.get(), SocketAddress::Loopback(AF_INET, 0),
                               [&](ScopedFd fd, const SocketAddress&) {
                                 ShrinkSocketBuffers(fd.get());
                                 reader = *TcpEndpoint::Create(loop.get(),
                                                               std::move(fd));
                               });
  ASSERT_TRUE(l.ok());
  auto writer = ConnectSync(loop.get(), (*l)->local_address());
  ASSERT_TRUE(writer.ok());
  ShrinkSocketBuffers((*writer)->fd());
  ASSERT_TRUE(loop->RunUntil([&] { return reader != nullptr; }, kWait));

  const std::string payload = Pattern(4 << 20);
  size_t sent = 0;
  int writable_calls = 0;
  auto write_more = [&] {
    IoResult w = (*writer)->Write(std::string_view(payload).substr(sent));
    ASSERT_TRUE(w.ok()) << w.status;
    sent += w.bytes;
    if (sent == payload.size()) (*writer)->ShutdownWrite();
  };
  (*writer)->SetCallbacks(nullptr, [&] {
    ++writable_calls;
    write_more();
  });
  write_more();
  ASSERT_LT(sent, payload.size());  // the socket filled up
  // The reader reads nothing: after the buffers settle, nothing moves and no
  // callback runs (bounded looks at the idle loop).
  loop->RunUntil([] { return false; }, absl::Milliseconds(100));
  const int settled_calls = writable_calls;
  const size_t settled_sent = sent;
  loop->RunUntil([] { return false; }, absl::Milliseconds(50));
  EXPECT_EQ(writable_calls, settled_calls);
  EXPECT_EQ(sent, settled_sent);
  EXPECT_LT(sent, payload.size());

  // Now read everything; the writer resumes from its callback.
  std::string got;
  bool eof = false;
  reader->SetCallbacks(
      [&] {
        IoResult rr = reader->ReadSome(&got, 64 << 20);
        if (rr.outcome == IoOutcome::kEof) eof = true;
      },
      nullptr);
  // The edges so far went by without a callback: start reading by hand.
  reader->ReadSome(&got, 64 << 20);
  ASSERT_TRUE(loop->RunUntil([&] { return eof; }, kWait));
  EXPECT_GT(writable_calls, settled_calls);
  EXPECT_EQ(got.size(), payload.size());
  EXPECT_TRUE(got == payload);
}

// The read half: a reader that stops before kWouldBlock (backpressure) gets
// no new edge for bytes already there, yet a later Read returns them.
TEST(TcpTest, ReaderThatStopsEarlyFindsTheRestLater) {
  auto loop = *EventLoop::Create();
  std::unique_ptr<TcpEndpoint> reader;
  auto l = TcpListener::Listen(loop.get(), SocketAddress::Loopback(AF_INET, 0),
                               [&](ScopedFd fd, const SocketAddress&) {
                                 reader = *TcpEndpoint::Create(loop.get(),
                                                               std::move(fd));
                               });
  ASSERT_TRUE(l.ok());
  auto writer = ConnectSync(loop.get(), (*l)->local_address());
  ASSERT_TRUE(writer.ok());
  ASSERT_TRUE(loop->RunUntil([&] { return reader != nullptr; }, kWait));
  int readable_calls = 0;
  reader->SetCallbacks([&] { ++readable_calls; }, nullptr);
  const std::string payload = Pattern(100000);
  ASSERT_EQ((*writer)->Write(payload).bytes, payload.size());
  (*writer)->ShutdownWrite();
  ASSERT_TRUE(loop->RunUntil([&] { return readable_calls > 0; }, kWait));
  // Take 1000 bytes only, then let the loop idle: no further edge comes.
  char buf[1000];
  std::string got;
  IoResult r = reader->Read(absl::MakeSpan(buf));
  ASSERT_TRUE(r.ok());
  got.append(buf, r.bytes);
  const int calls = readable_calls;
  loop->RunUntil([] { return false; }, absl::Milliseconds(30));
  EXPECT_EQ(readable_calls, calls);
  // Resuming finds everything, then the end.
  r = reader->ReadSome(&got, 1 << 20);
  EXPECT_EQ(r.outcome, IoOutcome::kEof);
  EXPECT_TRUE(got == payload);
}

// The server on its own loop thread, the client here: accepted fds cross no
// thread (the listener and its connections share the server loop), and the
// two loops only meet through the socket.
TEST(TcpTest, LargeEchoAcrossTwoLoopThreads) {
  auto server_thread = EventLoopThread::Start("echo-server");
  ASSERT_TRUE(server_thread.ok()) << server_thread.status();
  EventLoop* server_loop = (*server_thread)->loop();
  std::unique_ptr<EchoServer> server;
  SocketAddress address;
  absl::Notification started;
  server_loop->Post([&] {
    server = std::make_unique<EchoServer>(server_loop,
                                          SocketAddress::Loopback(AF_INET, 0));
    address = server->address();
    started.Notify();
  });
  ASSERT_TRUE(started.WaitForNotificationWithTimeout(kWait));

  auto loop = *EventLoop::Create();
  auto ep = ConnectSync(loop.get(), address);
  ASSERT_TRUE(ep.ok()) << ep.status();
  const std::string payload = Pattern(8 << 20, 7);
  TransferClient client(*std::move(ep), payload);
  ASSERT_TRUE(loop->RunUntil([&] { return client.done(); }, kWait));
  ASSERT_TRUE(client.error().ok()) << client.error();
  EXPECT_TRUE(client.received() == payload);

  absl::Notification stopped;
  server_loop->Post([&] {
    server.reset();
    stopped.Notify();
  });
  ASSERT_TRUE(stopped.WaitForNotificationWithTimeout(kWait));
}

// One acceptor loop hands accepted fds to a group, round-robin.
TEST(TcpTest, AcceptorHandsConnectionsToAGroup) {
  EventLoopGroup::Options options;
  options.num_threads = 2;
  auto group = EventLoopGroup::Create(options);
  ASSERT_TRUE(group.ok()) << group.status();
  auto loop = *EventLoop::Create();
  // Each group loop owns the peers it created; touched only on its thread.
  std::vector<std::vector<std::unique_ptr<EchoPeer>>> peers(2);
  std::atomic<int> accepted{0};
  auto listener = TcpListener::Listen(
      loop.get(), SocketAddress::Loopback(AF_INET, 0),
      [&](ScopedFd fd, const SocketAddress&) {
        const size_t i = accepted.fetch_add(1) % 2;
        EventLoop* target = (*group)->loop(i);
        target->Post([&, i, target, fd = std::move(fd)]() mutable {
          auto ep = TcpEndpoint::Create(target, std::move(fd));
          ASSERT_TRUE(ep.ok()) << ep.status();
          peers[i].push_back(std::make_unique<EchoPeer>(*std::move(ep)));
        });
      });
  ASSERT_TRUE(listener.ok()) << listener.status();
  std::vector<std::unique_ptr<TransferClient>> clients;
  for (int i = 0; i < 4; ++i) {
    auto ep = ConnectSync(loop.get(), (*listener)->local_address());
    ASSERT_TRUE(ep.ok()) << ep.status();
    clients.push_back(std::make_unique<TransferClient>(*std::move(ep),
                                                       Pattern(100000, i + 1)));
  }
  ASSERT_TRUE(loop->RunUntil(
      [&] {
        for (auto& c : clients) {
          if (!c->done()) return false;
        }
        return true;
      },
      kWait));
  for (int i = 0; i < 4; ++i) {
    ASSERT_TRUE(clients[i]->error().ok()) << clients[i]->error();
    EXPECT_TRUE(clients[i]->received() == Pattern(100000, i + 1));
  }
  EXPECT_EQ(accepted.load(), 4);
  for (size_t i = 0; i < 2; ++i) {
    absl::Notification cleared;
    (*group)->loop(i)->Post([&, i] {
      EXPECT_EQ(peers[i].size(), 2u);
      peers[i].clear();
      cleared.Notify();
    });
    ASSERT_TRUE(cleared.WaitForNotificationWithTimeout(kWait));
  }
}

TEST(TcpTest, WritevTakesMoreBuffersThanIovMax) {
  auto loop = *EventLoop::Create();
  EchoServer server(loop.get(), SocketAddress::Loopback(AF_INET, 0));
  auto ep = ConnectSync(loop.get(), server.address());
  ASSERT_TRUE(ep.ok()) << ep.status();
  // 3000 tiny buffers (and some empty ones) in one call.
  std::vector<std::string> parts;
  std::string expected;
  for (int i = 0; i < 3000; ++i) {
    parts.push_back(i % 7 == 0 ? "" : std::to_string(i) + ",");
    expected += parts.back();
  }
  std::vector<std::string_view> views(parts.begin(), parts.end());
  IoResult r = (*ep)->Writev(views);
  ASSERT_TRUE(r.ok()) << r.status;
  EXPECT_EQ(r.bytes, expected.size());
  (*ep)->ShutdownWrite();
  std::string got;
  bool eof = false;
  TcpEndpoint* raw = ep->get();
  raw->SetCallbacks(
      [&] {
        IoResult rr = raw->ReadSome(&got, 1 << 20);
        if (rr.outcome == IoOutcome::kEof) eof = true;
        ASSERT_NE(rr.outcome, IoOutcome::kError) << rr.status;
      },
      nullptr);
  ASSERT_TRUE(loop->RunUntil([&] { return eof; }, kWait));
  EXPECT_EQ(got, expected);
  // After EOF, Read keeps saying so; writes after ShutdownWrite fail.
  char c;
  EXPECT_EQ(raw->Read(absl::Span<char>(&c, 1)).outcome, IoOutcome::kEof);
  EXPECT_EQ(raw->Write("x").outcome, IoOutcome::kError);
}

// Out of file descriptors: the listener sacrifices its spare fd to accept
// and close each pending connection, instead of leaving them queued (under
// edge triggering a queue left behind would never be reported again).
TEST(TcpTest, ListenerShedsConnectionsAtTheFdLimit) {
  auto loop = *EventLoop::Create();
  int accepted = 0;
  auto l =
      TcpListener::Listen(loop.get(), SocketAddress::Loopback(AF_INET, 0),
                          [&](ScopedFd, const SocketAddress&) { ++accepted; });
  ASSERT_TRUE(l.ok());
  const SocketAddress address = (*l)->local_address();
  std::vector<ScopedFd> clients;
  for (int i = 0; i < 3; ++i) {
    clients.emplace_back(socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
    ASSERT_EQ(connect(clients.back().get(), address.addr(), address.len()), 0);
  }
  // No free descriptor left: lower the limit to the highest open fd and fill
  // the holes below it.
  rlimit saved;
  ASSERT_EQ(getrlimit(RLIMIT_NOFILE, &saved), 0);
  int highest = 0;
  for (int fd = 0; fd < 4096; ++fd) {
    if (fcntl(fd, F_GETFD) != -1) highest = fd;
  }
  rlimit low = saved;
  low.rlim_cur = highest + 1;
  ASSERT_EQ(setrlimit(RLIMIT_NOFILE, &low), 0);
  std::vector<ScopedFd> fillers;
  for (;;) {
    ScopedFd f(open("/dev/null", O_RDONLY | O_CLOEXEC));
    if (!f.valid()) break;
    fillers.push_back(std::move(f));
  }
  const bool shed =
      loop->RunUntil([&] { return (*l)->rejected_for_fd_limit() == 3; }, kWait);
  fillers.clear();
  ASSERT_EQ(setrlimit(RLIMIT_NOFILE, &saved), 0);
  ASSERT_TRUE(shed) << (*l)->rejected_for_fd_limit();
  EXPECT_EQ(accepted, 0);
  // The clients see their connections closed.
  for (ScopedFd& c : clients) {
    pollfd p{c.get(), POLLIN, 0};
    ASSERT_EQ(poll(&p, 1, 10000), 1);
    char byte;
    const ssize_t n = recv(c.get(), &byte, 1, MSG_DONTWAIT);
    EXPECT_TRUE(n == 0 || (n < 0 && errno == ECONNRESET)) << n;
  }
  // With descriptors back, the listener accepts again.
  auto ep = ConnectSync(loop.get(), address);
  ASSERT_TRUE(ep.ok());
  ASSERT_TRUE(loop->RunUntil([&] { return accepted == 1; }, kWait));
}

TEST(TcpTest, ConnectToClosedPortFails) {
  auto loop = *EventLoop::Create();
  // Reserve a port, then close it: nothing listens there.
  SocketAddress address;
  {
    ScopedFd fd(socket(AF_INET, SOCK_STREAM, 0));
    SocketAddress any = SocketAddress::Loopback(AF_INET, 0);
    ASSERT_EQ(bind(fd.get(), any.addr(), any.len()), 0);
    address = *SocketAddress::LocalOf(fd.get());
  }
  auto ep = ConnectSync(loop.get(), address);
  ASSERT_FALSE(ep.ok());
  EXPECT_EQ(ep.status().code(), absl::StatusCode::kUnavailable) << ep.status();
  EXPECT_TRUE(absl::StrContains(ep.status().message(), address.ToString()))
      << ep.status();
  EXPECT_TRUE(absl::StrContains(ep.status().message(), "refused"))
      << ep.status();
  EXPECT_EQ(loop->pending_timers(), 0u);  // the timeout timer was cancelled
}

TEST(TcpTest, ConnectTimesOut) {
  auto loop = *EventLoop::Create();
  FullBacklogListener hanging;
  ASSERT_TRUE(hanging.Holds()) << "the listener's backlog does not hold a SYN";
  const auto start = EventLoop::Clock::now();
  auto ep = ConnectSync(loop.get(), hanging.address(), absl::Milliseconds(200));
  const auto took = EventLoop::Clock::now() - start;
  ASSERT_FALSE(ep.ok());
  EXPECT_EQ(ep.status().code(), absl::StatusCode::kDeadlineExceeded)
      << ep.status();
  EXPECT_GE(took, std::chrono::milliseconds(200));
  EXPECT_LT(took, std::chrono::seconds(10));
}

TEST(TcpTest, CancelClosesAPendingConnectAndDropsTheCallback) {
  auto loop = *EventLoop::Create();
  FullBacklogListener hanging;
  ASSERT_TRUE(hanging.Holds()) << "the listener's backlog does not hold a SYN";
  const int fds_before = OpenFdCount();
  auto token = std::make_shared<int>();
  std::weak_ptr<int> weak = token;
  bool called = false;
  ConnectHandle handle =
      TcpConnect(loop.get(), hanging.address(), absl::Seconds(60),
                 [&called, token = std::move(token)](auto) { called = true; });
  // A few iterations: the connect is still in progress (no EPOLLOUT).
  for (int i = 0; i < 5; ++i) loop->RunOnce(absl::Milliseconds(2));
  ASSERT_FALSE(called) << "the listener's backlog did not hold the connect";
  EXPECT_EQ(OpenFdCount(), fds_before + 1);
  EXPECT_EQ(loop->pending_timers(), 1u);
  EXPECT_EQ(hanging.PendingConnects(), 1);
  EXPECT_TRUE(handle.active());

  EXPECT_TRUE(handle.Cancel());
  EXPECT_FALSE(handle.active());
  // At once: the socket is closed, the timer gone, `done` destroyed.
  EXPECT_EQ(OpenFdCount(), fds_before);
  EXPECT_EQ(hanging.PendingConnects(), 0);
  EXPECT_EQ(loop->pending_timers(), 0u);
  EXPECT_TRUE(weak.expired());
  EXPECT_FALSE(handle.Cancel());  // once
  // And nothing runs later (bounded: the loop has nothing left to do).
  loop->RunUntil([&] { return called; }, absl::Milliseconds(100));
  EXPECT_FALSE(called);
}

TEST(TcpTest, CancelBeforeAnImmediateFailureIsReportedDropsIt) {
  auto loop = *EventLoop::Create();
  bool called = false;
  ConnectHandle handle =
      TcpConnect(loop.get(), SocketAddress(), absl::Seconds(10),
                 [&](auto) { called = true; });
  EXPECT_TRUE(handle.Cancel());
  loop->RunUntil([&] { return called; }, absl::Milliseconds(50));
  EXPECT_FALSE(called);
}

TEST(TcpTest, CancelAfterTheCallbackIsANoOp) {
  auto loop = *EventLoop::Create();
  std::vector<ScopedFd> accepted;  // held open
  auto l = TcpListener::Listen(loop.get(), SocketAddress::Loopback(AF_INET, 0),
                               [&](ScopedFd fd, const SocketAddress&) {
                                 accepted.push_back(std::move(fd));
                               });
  ASSERT_TRUE(l.ok());
  std::unique_ptr<TcpEndpoint> ep;
  ConnectHandle handle;
  bool cancelled_inside = true;
  handle = TcpConnect(loop.get(), (*l)->local_address(), absl::Seconds(10),
                      [&](absl::StatusOr<std::unique_ptr<TcpEndpoint>> r) {
                        cancelled_inside = handle.Cancel();
                        ASSERT_TRUE(r.ok()) << r.status();
                        ep = *std::move(r);
                      });
  ASSERT_TRUE(loop->RunUntil([&] { return ep != nullptr; }, kWait));
  EXPECT_FALSE(cancelled_inside);  // from inside `done`: harmless
  EXPECT_FALSE(handle.Cancel());
  EXPECT_TRUE(ep->Write("still open").ok());  // the endpoint is untouched
  // After `done`, with the handle never touched meanwhile: a no-op too, and
  // the endpoint `done` was handed stays open.
  std::unique_ptr<TcpEndpoint> ep2;
  ConnectHandle kept =
      TcpConnect(loop.get(), (*l)->local_address(), absl::Seconds(10),
                 [&](absl::StatusOr<std::unique_ptr<TcpEndpoint>> r) {
                   ASSERT_TRUE(r.ok()) << r.status();
                   ep2 = *std::move(r);
                 });
  ASSERT_TRUE(loop->RunUntil([&] { return ep2 != nullptr; }, kWait));
  loop->RunOnce(absl::ZeroDuration());  // the attempt is freed
  EXPECT_FALSE(kept.active());
  EXPECT_FALSE(kept.Cancel());
  EXPECT_TRUE(ep2->Write("still open").ok());
  EXPECT_EQ(loop->pending_timers(), 0u);
  // A dropped (never cancelled) handle: the attempt goes on as before.
  std::unique_ptr<TcpEndpoint> ep3;
  TcpConnect(loop.get(), (*l)->local_address(), absl::Seconds(10),
             [&](absl::StatusOr<std::unique_ptr<TcpEndpoint>> r) {
               ASSERT_TRUE(r.ok()) << r.status();
               ep3 = *std::move(r);
             });
  ASSERT_TRUE(loop->RunUntil([&] { return ep3 != nullptr; }, kWait));
}

TEST(TcpTest, ConnectToUnspecifiedAddressFailsAsynchronously) {
  auto loop = *EventLoop::Create();
  auto ep = ConnectSync(loop.get(), SocketAddress());
  EXPECT_EQ(ep.status().code(), absl::StatusCode::kInvalidArgument);
}

TEST(TcpTest, LoopDestroyedWithConnectPendingDropsCallback) {
  auto loop = *EventLoop::Create();
  auto l = TcpListener::Listen(loop.get(), SocketAddress::Loopback(AF_INET, 0),
                               [](ScopedFd, const SocketAddress&) {});
  ASSERT_TRUE(l.ok());
  auto token = std::make_shared<int>();
  std::weak_ptr<int> weak = token;
  TcpConnect(loop.get(), (*l)->local_address(), absl::Seconds(10),
             [token = std::move(token)](auto) { ADD_FAILURE(); });
  l->reset();
  loop.reset();  // ASan: nothing leaks, nothing runs
  EXPECT_TRUE(weak.expired());
}

// A listener on `loop` whose accepted connection becomes `accepted`.
struct AcceptingServer {
  explicit AcceptingServer(EventLoop* loop)
      : listener(TcpListener::Listen(
            loop, SocketAddress::Loopback(AF_INET, 0),
            [this, loop](ScopedFd fd, const SocketAddress&) {
              accepted = *TcpEndpoint::Create(loop, std::move(fd));
            })) {}
  absl::StatusOr<std::unique_ptr<TcpListener>> listener;
  std::unique_ptr<TcpEndpoint> accepted;
};

TEST(TcpTest, PeerCloseIsEofAndWriteToClosedPeerIsAnError) {
  auto loop = *EventLoop::Create();
  AcceptingServer server(loop.get());
  ASSERT_TRUE(server.listener.ok());
  auto ep = ConnectSync(loop.get(), (*server.listener)->local_address());
  ASSERT_TRUE(ep.ok());
  ASSERT_TRUE(
      loop->RunUntil([&] { return server.accepted != nullptr; }, kWait));
  bool readable = false;
  (*ep)->SetCallbacks([&] { readable = true; }, nullptr);
  server.accepted.reset();  // close
  ASSERT_TRUE(loop->RunUntil([&] { return readable; }, kWait));
  char buf[16];
  EXPECT_EQ((*ep)->Read(absl::MakeSpan(buf)).outcome, IoOutcome::kEof);
  // Writing into a closed connection: EPIPE/ECONNRESET eventually, never
  // SIGPIPE (the test would die).
  IoResult r;
  const std::string block(64 * 1024, 'x');
  for (int i = 0; i < 100 && r.outcome != IoOutcome::kError; ++i) {
    r = (*ep)->Write(block);
    loop->RunOnce(absl::Milliseconds(1));
  }
  EXPECT_EQ(r.outcome, IoOutcome::kError);
  EXPECT_FALSE(r.status.ok());
}

TEST(TcpTest, AfterAWriteErrorReadReturnsWhatThePeerSentBeforeItsReset) {
  // A peer sends a request and resets the connection (SO_LINGER 0) before
  // this side read it; this side's next write is the first to find the
  // reset. The request is still read (then the end), as when a read finds
  // the reset first: the HTTP/2 driver then still serves it (on a client:
  // a response that came before the reset completes its call). Reads went
  // on returning the write's error instead, before any edge was handled.
  auto loop = *EventLoop::Create();
  AcceptingServer server(loop.get());
  ASSERT_TRUE(server.listener.ok());
  const SocketAddress address = (*server.listener)->local_address();
  ScopedFd client(socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
  ASSERT_EQ(connect(client.get(), address.addr(), address.len()), 0);
  ASSERT_TRUE(
      loop->RunUntil([&] { return server.accepted != nullptr; }, kWait));
  TcpEndpoint* server_side = server.accepted.get();
  char buf[64];
  ASSERT_EQ(server_side->Read(absl::MakeSpan(buf)).outcome,
            IoOutcome::kWouldBlock);
  ASSERT_EQ(write(client.get(), "request", 7), 7);
  linger reset = {1, 0};
  ASSERT_EQ(
      setsockopt(client.get(), SOL_SOCKET, SO_LINGER, &reset, sizeof(reset)),
      0);
  client.reset();
  // The reset has arrived (the loop has not run: no edge was handled).
  pollfd p{server_side->fd(), 0, 0};
  ASSERT_EQ(poll(&p, 1, 10000), 1);
  ASSERT_NE(p.revents & (POLLHUP | POLLERR), 0);
  const IoResult w = server_side->Write("response");
  ASSERT_EQ(w.outcome, IoOutcome::kError);
  const IoResult r = server_side->Read(absl::MakeSpan(buf));
  ASSERT_EQ(r.outcome, IoOutcome::kOk) << r.status;
  EXPECT_EQ(std::string_view(buf, r.bytes), "request");
  const IoResult end = server_side->Read(absl::MakeSpan(buf));
  EXPECT_TRUE(end.outcome == IoOutcome::kEof ||
              end.outcome == IoOutcome::kError)
      << IoOutcomeName(end.outcome);
  // Writes stay failed.
  EXPECT_EQ(server_side->Write("more").outcome, IoOutcome::kError);
}

TEST(TcpTest, EndpointMayBeDestroyedInsideItsCallback) {
  auto loop = *EventLoop::Create();
  std::unique_ptr<TcpEndpoint> server_side;
  auto l = TcpListener::Listen(loop.get(), SocketAddress::Loopback(AF_INET, 0),
                               [&](ScopedFd fd, const SocketAddress&) {
                                 server_side = *TcpEndpoint::Create(
                                     loop.get(), std::move(fd));
                                 server_side->SetCallbacks(
                                     [&] {
                                       // Destroys the endpoint (and this
                                       // closure's owner) mid-call.
                                       server_side.reset();
                                     },
                                     nullptr);
                               });
  ASSERT_TRUE(l.ok());
  auto ep = ConnectSync(loop.get(), (*l)->local_address());
  ASSERT_TRUE(ep.ok());
  ASSERT_TRUE(loop->RunUntil([&] { return server_side != nullptr; }, kWait));
  ASSERT_TRUE((*ep)->Write("bye").ok());
  ASSERT_TRUE(loop->RunUntil([&] { return server_side == nullptr; }, kWait));
}

TEST(TcpTest, ListenerMayBeDestroyedInsideAcceptCallback) {
  auto loop = *EventLoop::Create();
  std::unique_ptr<TcpListener> listener;
  int accepted = 0;
  auto l = TcpListener::Listen(loop.get(), SocketAddress::Loopback(AF_INET, 0),
                               [&](ScopedFd, const SocketAddress&) {
                                 ++accepted;
                                 listener.reset();
                               });
  ASSERT_TRUE(l.ok());
  listener = *std::move(l);
  const SocketAddress address = listener->local_address();
  auto a = ConnectSync(loop.get(), address);
  ASSERT_TRUE(a.ok());
  ASSERT_TRUE(loop->RunUntil([&] { return listener == nullptr; }, kWait));
  EXPECT_EQ(accepted, 1);
}

}  // namespace
}  // namespace transport
