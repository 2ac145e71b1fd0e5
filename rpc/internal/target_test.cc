// ParseTarget against gRPC's naming.md forms, as a table.

#include "rpc/internal/target.h"

#include <string>
#include <vector>

#include "gtest/gtest.h"

namespace rpc {
namespace internal {
namespace {

using Scheme = Target::Scheme;

struct Case {
  std::string target;
  Scheme scheme;
  std::string dns_server;
  std::string host;
  uint16_t port;
  std::vector<std::string> addresses;  // SocketAddress::ToString()
  std::string unix_path;
  std::string authority;
};

TEST(TargetTest, GoodTargets) {
  const std::vector<Case> cases = {
      {"dns:///svc.test:50051",
       Scheme::kDns,
       "",
       "svc.test",
       50051,
       {},
       "",
       "svc.test:50051"},
      {"dns:///svc.test",
       Scheme::kDns,
       "",
       "svc.test",
       443,
       {},
       "",
       "svc.test"},
      {"dns://127.0.0.1:5353/svc.test:8080",
       Scheme::kDns,
       "127.0.0.1:5353",
       "svc.test",
       8080,
       {},
       "",
       "svc.test:8080"},
      {"dns://8.8.8.8/example.com",
       Scheme::kDns,
       "8.8.8.8",
       "example.com",
       443,
       {},
       "",
       "example.com"},
      {"dns:svc.test:1", Scheme::kDns, "", "svc.test", 1, {}, "", "svc.test:1"},
      {"dns:///[::1]:50051",
       Scheme::kDns,
       "",
       "::1",
       50051,
       {},
       "",
       "[::1]:50051"},
      {"localhost:50051",
       Scheme::kDns,
       "",
       "localhost",
       50051,
       {},
       "",
       "localhost:50051"},
      {"svc.test", Scheme::kDns, "", "svc.test", 443, {}, "", "svc.test"},
      {"127.0.0.1:9", Scheme::kDns, "", "127.0.0.1", 9, {}, "", "127.0.0.1:9"},
      {"[::1]:9", Scheme::kDns, "", "::1", 9, {}, "", "[::1]:9"},
      {"ipv4:127.0.0.1:9",
       Scheme::kIpv4,
       "",
       "127.0.0.1",
       9,
       {"127.0.0.1:9"},
       "",
       "127.0.0.1:9"},
      {"ipv4:127.0.0.2:7,127.0.0.3:7",
       Scheme::kIpv4,
       "",
       "127.0.0.2",
       7,
       {"127.0.0.2:7", "127.0.0.3:7"},
       "",
       "127.0.0.2:7"},
      {"ipv4:10.0.0.1",
       Scheme::kIpv4,
       "",
       "10.0.0.1",
       443,
       {"10.0.0.1:443"},
       "",
       "10.0.0.1"},
      {"ipv6:[::1]:9", Scheme::kIpv6, "", "::1", 9, {"[::1]:9"}, "", "[::1]:9"},
      {"ipv6:[::1]:9,[::2]:10",
       Scheme::kIpv6,
       "",
       "::1",
       9,
       {"[::1]:9", "[::2]:10"},
       "",
       "[::1]:9"},
      {"ipv6:::1", Scheme::kIpv6, "", "::1", 443, {"[::1]:443"}, "", "[::1]"},
      {"unix:/tmp/a.sock",
       Scheme::kUnix,
       "",
       "localhost",
       443,
       {"unix:/tmp/a.sock"},
       "/tmp/a.sock",
       "localhost"},
      {"unix:rel.sock",
       Scheme::kUnix,
       "",
       "localhost",
       443,
       {"unix:rel.sock"},
       "rel.sock",
       "localhost"},
      {"unix:///tmp/a%20b.sock",
       Scheme::kUnix,
       "",
       "localhost",
       443,
       {"unix:/tmp/a b.sock"},
       "/tmp/a b.sock",
       "localhost"},
      {"DNS:///svc.test:80",
       Scheme::kDns,
       "",
       "svc.test",
       80,
       {},
       "",
       "svc.test:80"},
      {"unix:///tmp/b.sock",
       Scheme::kUnix,
       "",
       "localhost",
       443,
       {"unix:/tmp/b.sock"},
       "/tmp/b.sock",
       "localhost"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.target);
    absl::StatusOr<Target> t = ParseTarget(c.target);
    ASSERT_TRUE(t.ok()) << t.status();
    EXPECT_EQ(t->scheme, c.scheme);
    EXPECT_EQ(t->dns_server, c.dns_server);
    EXPECT_EQ(t->host, c.host);
    if (c.scheme != Scheme::kUnix) {
      EXPECT_EQ(t->port, c.port);
    }
    std::vector<std::string> addresses;
    for (const auto& a : t->addresses) addresses.push_back(a.ToString());
    EXPECT_EQ(addresses, c.addresses);
    EXPECT_EQ(t->unix_path, c.unix_path);
    EXPECT_EQ(t->authority, c.authority);
  }
}

TEST(TargetTest, BadTargets) {
  for (const char* target : {
           "",
           "dns:///",
           "dns://127.0.0.1",  // No '/' after the authority.
           "dns:///svc.test:",
           "dns:///svc.test:70000",
           "dns:///svc.test:http",
           "ipv4:",
           "ipv4:svc.test:80",
           "ipv4:::1",
           "ipv4:127.0.0.1:80,",
           "ipv6:127.0.0.1:80",
           "ipv6:[::1",
           "ipv6:[::1]x",
           "unix:",
           "unix://relative",
           "unix:/a-path-longer-than-sun_path-allows/"
           "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"
           "xxxxxxxxxxxxx",
           ":80",
           "dns:///svc.test:+80",
           "dns:///svc.test: 80",
           "dns:///svc.test:0",
           "foo:///bar:80",  // Unknown scheme: not a host.
           "ipv6:1:2",       // Not IPv6, not host:port either.
           "unix:///tmp/a%2",
           "dns:///svc%zz.test",
       }) {
    SCOPED_TRACE(target);
    absl::StatusOr<Target> t = ParseTarget(target);
    EXPECT_FALSE(t.ok());
    if (!t.ok()) {
      EXPECT_EQ(t.status().code(), absl::StatusCode::kInvalidArgument);
      EXPECT_NE(t.status().message().find("bad target"), std::string::npos)
          << t.status();
    }
  }
}

}  // namespace
}  // namespace internal
}  // namespace rpc
