// Proves @com_github_cares_cares is wired: an asynchronous ares_getaddrinfo of
// "localhost", driven by the channel's own fds with a bounded wait, yields
// loopback.
#include <ares.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/select.h>

#include <chrono>
#include <cstdlib>
#include <fstream>
#include <set>
#include <string>

#include "gtest/gtest.h"

namespace {

struct Result {
  bool done = false;
  int status = -1;
  std::set<std::string> addresses;
  std::set<int> ports;
};

void OnAddrInfo(void* arg, int status, int /*timeouts*/,
                struct ares_addrinfo* info) {
  auto* result = static_cast<Result*>(arg);
  result->done = true;
  result->status = status;
  if (info == nullptr) return;
  for (ares_addrinfo_node* n = info->nodes; n != nullptr; n = n->ai_next) {
    char text[INET6_ADDRSTRLEN] = {};
    if (n->ai_family == AF_INET) {
      auto* sin = reinterpret_cast<sockaddr_in*>(n->ai_addr);
      inet_ntop(AF_INET, &sin->sin_addr, text, sizeof(text));
      result->ports.insert(ntohs(sin->sin_port));
    } else if (n->ai_family == AF_INET6) {
      auto* sin6 = reinterpret_cast<sockaddr_in6*>(n->ai_addr);
      inet_ntop(AF_INET6, &sin6->sin6_addr, text, sizeof(text));
      result->ports.insert(ntohs(sin6->sin6_port));
    }
    result->addresses.insert(text);
  }
  ares_freeaddrinfo(info);
}

TEST(CaresTest, ResolvesLocalhostToLoopback) {
  const char* tmp = std::getenv("TEST_TMPDIR");
  const std::string hosts =
      std::string(tmp ? tmp : "/tmp") + "/cares_test_hosts";
  std::ofstream(hosts) << "127.0.0.1 localhost\n::1 localhost ip6-localhost\n";
  ASSERT_EQ(setenv("CARES_HOSTS", hosts.c_str(), 1), 0);

  ASSERT_EQ(ares_library_init(ARES_LIB_INIT_ALL), ARES_SUCCESS);
  ares_channel channel;
  ares_options options = {};
  // Hosts file only: the test sends no DNS traffic.
  char lookups[] = "f";
  options.lookups = lookups;
  ASSERT_EQ(ares_init_options(&channel, &options, ARES_OPT_LOOKUPS),
            ARES_SUCCESS);

  Result result;
  ares_addrinfo_hints hints = {};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = ARES_AI_ENVHOSTS;  // Read CARES_HOSTS, not /etc/hosts.
  ares_getaddrinfo(channel, "localhost", "50051", &hints, OnAddrInfo, &result);

  const auto deadline =
      std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (!result.done && std::chrono::steady_clock::now() < deadline) {
    fd_set readers, writers;
    FD_ZERO(&readers);
    FD_ZERO(&writers);
    int nfds = ares_fds(channel, &readers, &writers);
    timeval tv = {0, 100000};
    if (nfds > 0) select(nfds, &readers, &writers, nullptr, &tv);
    ares_process(channel, &readers, &writers);
  }
  ares_destroy(channel);
  ares_library_cleanup();

  ASSERT_TRUE(result.done);
  ASSERT_EQ(result.status, ARES_SUCCESS) << ares_strerror(result.status);
  EXPECT_TRUE(result.addresses.count("127.0.0.1") ||
              result.addresses.count("::1"))
      << "got " << result.addresses.size() << " addresses";
  EXPECT_EQ(result.ports, std::set<int>{50051});
}

TEST(CaresTest, ErrorStringsAreNamed) {
  EXPECT_STREQ(ares_strerror(ARES_ENOTFOUND), "Domain name not found");
}

}  // namespace
