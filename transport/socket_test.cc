#include "transport/socket.h"

#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

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
