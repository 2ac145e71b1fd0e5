// The fault proxy does what its plans say, over real loopback sockets.
#include "tests/chaos/fault_proxy.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <string>
#include <thread>

#include "absl/time/clock.h"
#include "gtest/gtest.h"

namespace chaos {
namespace {

sockaddr_in Loopback(int port) {
  sockaddr_in a = {};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  a.sin_port = htons(static_cast<uint16_t>(port));
  return a;
}

// A backend that accepts one connection, writes `reply`, and reads until
// EOF or an error.
class Backend {
 public:
  explicit Backend(std::string reply) : reply_(std::move(reply)) {
    fd_ = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a = Loopback(0);
    bind(fd_, reinterpret_cast<sockaddr*>(&a), sizeof(a));
    listen(fd_, 4);
    socklen_t len = sizeof(a);
    getsockname(fd_, reinterpret_cast<sockaddr*>(&a), &len);
    port_ = ntohs(a.sin_port);
    thread_ = std::thread([this] {
      pollfd p = {fd_, POLLIN, 0};
      if (poll(&p, 1, 10000) != 1) return;
      const int c = accept(fd_, nullptr, nullptr);
      send(c, reply_.data(), reply_.size(), MSG_NOSIGNAL);
      char buf[4096];
      for (;;) {
        pollfd q = {c, POLLIN, 0};
        if (poll(&q, 1, 10000) != 1) break;
        const ssize_t n = recv(c, buf, sizeof(buf), 0);
        if (n <= 0) break;
        received_.append(buf, static_cast<size_t>(n));
      }
      close(c);
    });
  }
  ~Backend() {
    if (thread_.joinable()) thread_.join();
    close(fd_);
  }
  int port() const { return port_; }
  // After the connection ended.
  const std::string& received() {
    thread_.join();
    return received_;
  }

 private:
  const std::string reply_;
  int fd_ = -1;
  int port_ = 0;
  std::string received_;
  std::thread thread_;
};

int Connect(int port) {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a = Loopback(port);
  EXPECT_EQ(connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof(a)), 0);
  return fd;
}

// Reads until EOF, an error or 10 s.
std::string ReadAll(int fd, bool* reset) {
  std::string out;
  char buf[4096];
  *reset = false;
  for (;;) {
    pollfd q = {fd, POLLIN, 0};
    if (poll(&q, 1, 10000) != 1) break;
    const ssize_t n = recv(fd, buf, sizeof(buf), 0);
    if (n < 0) *reset = true;
    if (n <= 0) break;
    out.append(buf, static_cast<size_t>(n));
  }
  return out;
}

FaultProxy::Planner Always(FaultPlan plan) {
  return [plan](int) { return plan; };
}

TEST(FaultProxyTest, ForwardsBothWays) {
  const std::string reply(100000, 'r');
  Backend backend(reply);
  FaultProxy proxy(backend.port(), FaultProxy::CleanPlanner());
  ASSERT_TRUE(proxy.Start().ok());
  const int fd = Connect(proxy.port());
  const std::string request(200000, 'q');
  ASSERT_EQ(send(fd, request.data(), request.size(), MSG_NOSIGNAL),
            static_cast<ssize_t>(request.size()));
  shutdown(fd, SHUT_WR);
  bool reset = false;
  EXPECT_EQ(ReadAll(fd, &reset), reply);
  EXPECT_FALSE(reset);
  EXPECT_EQ(backend.received(), request);
  close(fd);
  EXPECT_TRUE(
      proxy.WaitClosedTo(backend.port(), absl::Now() + absl::Seconds(10)));
  EXPECT_EQ(proxy.connections_accepted(), 1);
}

TEST(FaultProxyTest, CutAfterBytesResetsBothSides) {
  Backend backend("");
  FaultPlan plan;
  plan.kind = FaultPlan::Kind::kCut;
  plan.direction = FaultPlan::Direction::kToServer;
  plan.after_bytes = 1000;
  FaultProxy proxy(backend.port(), Always(plan));
  ASSERT_TRUE(proxy.Start().ok());
  const int fd = Connect(proxy.port());
  const std::string request(5000, 'q');
  send(fd, request.data(), request.size(), MSG_NOSIGNAL);
  bool reset = false;
  EXPECT_EQ(ReadAll(fd, &reset), "");
  EXPECT_TRUE(reset);
  EXPECT_EQ(backend.received(), request.substr(0, 1000));
  close(fd);
}

TEST(FaultProxyTest, TruncateEndsOneDirectionMidStream) {
  Backend backend(std::string(100, 'r'));
  FaultPlan plan;
  plan.kind = FaultPlan::Kind::kTruncate;
  plan.direction = FaultPlan::Direction::kToClient;
  plan.after_bytes = 10;
  FaultProxy proxy(backend.port(), Always(plan));
  ASSERT_TRUE(proxy.Start().ok());
  const int fd = Connect(proxy.port());
  bool reset = false;
  EXPECT_EQ(ReadAll(fd, &reset), std::string(10, 'r'));  // then EOF
  EXPECT_FALSE(reset);
  // The other direction still flows.
  send(fd, "hello", 5, MSG_NOSIGNAL);
  shutdown(fd, SHUT_WR);
  EXPECT_EQ(backend.received(), "hello");
  close(fd);
}

TEST(FaultProxyTest, StallThenReset) {
  Backend backend("");
  FaultPlan plan;
  plan.kind = FaultPlan::Kind::kStall;
  plan.direction = FaultPlan::Direction::kToServer;
  plan.after_bytes = 3;
  plan.delay = absl::Milliseconds(50);
  FaultProxy proxy(backend.port(), Always(plan));
  ASSERT_TRUE(proxy.Start().ok());
  const int fd = Connect(proxy.port());
  send(fd, "abcdef", 6, MSG_NOSIGNAL);
  bool reset = false;
  ReadAll(fd, &reset);
  EXPECT_TRUE(reset);
  EXPECT_EQ(backend.received(), "abc");
  close(fd);
}

TEST(FaultProxyTest, PlansComeFromTheSeed) {
  auto a = FaultProxy::RandomPlanner(42, 0.5);
  auto b = FaultProxy::RandomPlanner(42, 0.5);
  auto c = FaultProxy::RandomPlanner(43, 0.5);
  bool differs = false;
  for (int i = 0; i < 50; ++i) {
    EXPECT_EQ(a(i).ToString(), b(i).ToString());
    differs |= a(i).ToString() != c(i).ToString();
  }
  EXPECT_TRUE(differs);
}

}  // namespace
}  // namespace chaos
