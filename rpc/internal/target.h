// ParseTarget: a channel target string as gRPC's naming.md defines it.
//
//   dns:///host:port            ask the system's DNS configuration
//   dns://AUTHORITY/host:port   ask the DNS server AUTHORITY ("ip[:port]")
//   host:port                   the same as dns:///host:port
//   ipv4:addr:port,addr:port    fixed IPv4 addresses
//   ipv6:[addr]:port,...        fixed IPv6 addresses (brackets with a port)
//   unix:path, unix:///abs/path a unix-domain socket
//
// The port defaults to 443 when omitted (dns, ipv4, ipv6). A string whose
// prefix before ':' is none of the schemes above is a dns host:port
// ("localhost:50051"). The :authority of the calls is the target's host:port
// ("localhost" for unix sockets; the first address for ipv4/ipv6 lists).
//
// Errors: kInvalidArgument naming the target and what is wrong.

#ifndef RPC_INTERNAL_TARGET_H_
#define RPC_INTERNAL_TARGET_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "transport/io/socket.h"

namespace rpc {
namespace internal {

struct Target {
  enum class Scheme { kDns, kIpv4, kIpv6, kUnix };
  Scheme scheme = Scheme::kDns;
  // kDns: the DNS server to ask ("" for the system's), the name and port.
  std::string dns_server;
  std::string host;  // Without brackets; also the TLS name.
  uint16_t port = 443;
  // kIpv4, kIpv6: the addresses, in order; kUnix: the socket's.
  std::vector<transport::SocketAddress> addresses;
  // kUnix: the socket's path.
  std::string unix_path;
  // The :authority header.
  std::string authority;
};

absl::StatusOr<Target> ParseTarget(absl::string_view target);

// "host:port", "[v6]:port" or "host" (port `default_port`) into its host
// (brackets removed) and port. Errors: kInvalidArgument.
absl::Status SplitHostPort(absl::string_view host_port, uint16_t default_port,
                           std::string* host, uint16_t* port);

}  // namespace internal
}  // namespace rpc

#endif  // RPC_INTERNAL_TARGET_H_
