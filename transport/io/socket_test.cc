#include "transport/io/socket.h"

#include <signal.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cstddef>
#include <string>

#include "gtest/gtest.h"

namespace transport {
namespace {

TEST(SocketAddressTest, ParsesIpv4) {
  auto a = SocketAddress::Parse("127.0.0.1", 8080);
  ASSERT_TRUE(a.ok()) << a.status();
  EXPECT_EQ(a->family(), AF_INET);
  EXPECT_EQ(a->port(), 8080);
  EXPECT_EQ(a->HostString(), "127.0.0.1");
  EXPECT_EQ(a->ToString(), "127.0.0.1:8080");
  EXPECT_EQ(*a, SocketAddress::Loopback(AF_INET, 8080));
}

TEST(SocketAddressTest, ParsesIpv6WithAndWithoutBrackets) {
  auto a = SocketAddress::Parse("::1", 443);
  auto b = SocketAddress::Parse("[::1]", 443);
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_EQ(a->family(), AF_INET6);
  EXPECT_EQ(*a, *b);
  EXPECT_EQ(a->ToString(), "[::1]:443");
  EXPECT_EQ(*a, SocketAddress::Loopback(AF_INET6, 443));
}

TEST(SocketAddressTest, LocalhostIsIpv4Loopback) {
  auto a = SocketAddress::Parse("localhost", 1);
  ASSERT_TRUE(a.ok());
  EXPECT_EQ(*a, SocketAddress::Loopback(AF_INET, 1));
}

TEST(SocketAddressTest, RejectsNames) {
  EXPECT_EQ(SocketAddress::Parse("example.com", 1).status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_FALSE(SocketAddress::Parse("", 1).ok());
  EXPECT_FALSE(SocketAddress::Parse("1.2.3.4.5", 1).ok());
}

TEST(SocketAddressTest, ParsesHostPort) {
  auto a = SocketAddress::ParseHostPort("[::1]:50051");
  ASSERT_TRUE(a.ok()) << a.status();
  EXPECT_EQ(a->ToString(), "[::1]:50051");
  auto b = SocketAddress::ParseHostPort("127.0.0.1:0");
  ASSERT_TRUE(b.ok());
  EXPECT_EQ(b->port(), 0);
  EXPECT_FALSE(SocketAddress::ParseHostPort("::1:80").ok());  // unbracketed
  EXPECT_FALSE(SocketAddress::ParseHostPort("127.0.0.1").ok());
  EXPECT_FALSE(SocketAddress::ParseHostPort("127.0.0.1:65536").ok());
  EXPECT_FALSE(SocketAddress::ParseHostPort("127.0.0.1:x").ok());
}

TEST(SocketAddressTest, EmptyAndSetPort) {
  SocketAddress empty;
  EXPECT_TRUE(empty.empty());
  EXPECT_EQ(empty.ToString(), "(none)");
  EXPECT_EQ(empty.len(), 0u);
  SocketAddress a = SocketAddress::Any(AF_INET6, 0);
  a.set_port(99);
  EXPECT_EQ(a.ToString(), "[::]:99");
}

TEST(SocketAddressTest, UnixPath) {
  auto a = SocketAddress::Unix("/tmp/x.sock");
  ASSERT_TRUE(a.ok()) << a.status();
  EXPECT_EQ(a->family(), AF_UNIX);
  EXPECT_FALSE(a->empty());
  EXPECT_EQ(a->ToString(), "unix:/tmp/x.sock");
  EXPECT_EQ(a->HostString(), "/tmp/x.sock");
  EXPECT_EQ(a->port(), 0);
  a->set_port(80);  // no port: unchanged
  EXPECT_EQ(a->port(), 0);
  EXPECT_EQ(a->len(), offsetof(sockaddr_un, sun_path) + 12);
  EXPECT_EQ(*a, *SocketAddress::Unix("/tmp/x.sock"));
  EXPECT_NE(*a, *SocketAddress::Unix("/tmp/x.soc"));
  EXPECT_NE(*a, SocketAddress::Loopback(AF_INET, 0));
  auto relative = SocketAddress::Unix("x.sock");
  ASSERT_TRUE(relative.ok());
  EXPECT_EQ(relative->ToString(), "unix:x.sock");
}

TEST(SocketAddressTest, UnixPathLimits) {
  const size_t max = sizeof(sockaddr_un::sun_path) - 1;  // 107
  auto longest = SocketAddress::Unix(std::string(max, 'a'));
  ASSERT_TRUE(longest.ok()) << longest.status();
  EXPECT_EQ(longest->HostString(), std::string(max, 'a'));
  EXPECT_EQ(longest->len(), sizeof(sockaddr_un));
  EXPECT_EQ(SocketAddress::Unix(std::string(max + 1, 'a')).status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_FALSE(SocketAddress::Unix("").ok());
  EXPECT_FALSE(SocketAddress::Unix(std::string("a\0b", 3)).ok());
}

TEST(SocketAddressTest, ParsesUnixTargets) {
  EXPECT_EQ(SocketAddress::ParseUnix("unix:/run/x.sock")->HostString(),
            "/run/x.sock");
  EXPECT_EQ(SocketAddress::ParseUnix("unix:///run/x.sock")->HostString(),
            "/run/x.sock");
  EXPECT_EQ(SocketAddress::ParseUnix("unix:rel.sock")->HostString(),
            "rel.sock");
  EXPECT_FALSE(SocketAddress::ParseUnix("/run/x.sock").ok());
  EXPECT_FALSE(SocketAddress::ParseUnix("unix:").ok());
  // Not for ParseHostPort.
  EXPECT_FALSE(SocketAddress::ParseHostPort("unix:/run/x.sock").ok());
}

TEST(SocketAddressTest, FromSockaddrUnix) {
  sockaddr_un un = {};
  un.sun_family = AF_UNIX;
  strcpy(un.sun_path, "/a/b");
  SocketAddress a = SocketAddress::FromSockaddr(
      reinterpret_cast<sockaddr*>(&un), offsetof(sockaddr_un, sun_path) + 5);
  EXPECT_EQ(a.ToString(), "unix:/a/b");
  EXPECT_EQ(a, *SocketAddress::Unix("/a/b"));
  // An unnamed peer (what accept() reports for a client that never bound).
  SocketAddress unnamed = SocketAddress::FromSockaddr(
      reinterpret_cast<sockaddr*>(&un), sizeof(sa_family_t));
  EXPECT_EQ(unnamed.family(), AF_UNIX);
  EXPECT_FALSE(unnamed.empty());
  EXPECT_EQ(unnamed.ToString(), "unix:");
  EXPECT_EQ(unnamed.len(), sizeof(sa_family_t));
  // Abstract addresses read as unnamed.
  un.sun_path[0] = '\0';
  SocketAddress abstract = SocketAddress::FromSockaddr(
      reinterpret_cast<sockaddr*>(&un), offsetof(sockaddr_un, sun_path) + 4);
  EXPECT_EQ(abstract.ToString(), "unix:");
}

TEST(SocketAddressTest, LocalAndPeerOfAUnixSocketPair) {
  int fds[2];
  ASSERT_EQ(socketpair(AF_UNIX, SOCK_STREAM, 0, fds), 0);
  ScopedFd a(fds[0]), b(fds[1]);
  EXPECT_EQ(SocketFamily(a.get()), AF_UNIX);
  auto local = SocketAddress::LocalOf(a.get());
  ASSERT_TRUE(local.ok()) << local.status();
  EXPECT_EQ(local->ToString(), "unix:");
  ScopedFd tcp(socket(AF_INET, SOCK_STREAM, 0));
  EXPECT_EQ(SocketFamily(tcp.get()), AF_INET);
  EXPECT_TRUE(IsInetFamily(AF_INET6));
  EXPECT_FALSE(IsInetFamily(AF_UNIX));
  EXPECT_EQ(SocketFamily(-1), -1);
}

TEST(ScopedFdTest, ClosesAndReleases) {
  int fds[2];
  ASSERT_EQ(pipe(fds), 0);
  {
    ScopedFd r(fds[0]);
    ScopedFd moved = std::move(r);
    EXPECT_FALSE(r.valid());
    EXPECT_TRUE(moved.valid());
  }
  // The read end is closed: writing to the pipe now fails with EPIPE.
  signal(SIGPIPE, SIG_IGN);
  EXPECT_EQ(write(fds[1], "x", 1), -1);
  ScopedFd w(fds[1]);
  int raw = w.release();
  EXPECT_FALSE(w.valid());
  EXPECT_EQ(close(raw), 0);
}

}  // namespace
}  // namespace transport
