// A real DNS server for resolver tests: Debian's dnsmasq on 127.0.0.1 and a
// free port, answering only the records it is given (A for IPv4 addresses,
// AAAA for IPv6; one name may have several). Every other name gets NXDOMAIN
// (NOERROR with no answers for a known name asked for the other family):
// nothing is forwarded, /etc/hosts and /etc/resolv.conf are not read.
//
//   auto dns = DnsmasqServer::Start({{"svc.test", "127.0.0.2"},
//                                    {"svc.test", "::2"}});
//   options.server = (*dns)->address();   // "127.0.0.1:PORT"
//
// Start returns once the server answers a query (bounded: 5 s per try, a few
// tries on fresh ports when the port was taken meanwhile). SetRecords
// replaces the records while it runs (re-resolution tests). The records live
// in a hosts file dnsmasq reads (--addn-hosts) and re-reads on SIGHUP. The
// destructor kills and reaps it. One thread at a time.

#ifndef TRANSPORT_TESTING_DNSMASQ_H_
#define TRANSPORT_TESTING_DNSMASQ_H_

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "transport/testing/subprocess.h"

namespace transport {
namespace testing {

class DnsmasqServer {
 public:
  // `records`: (name, numeric IPv4 or IPv6 address). Errors:
  // kFailedPrecondition when /usr/sbin/dnsmasq is missing (the message names
  // the Debian package), kInvalidArgument for a bad record, kUnavailable when
  // dnsmasq does not start or answer (with its output).
  static absl::StatusOr<std::unique_ptr<DnsmasqServer>> Start(
      const std::vector<std::pair<std::string, std::string>>& records);
  ~DnsmasqServer();

  DnsmasqServer(const DnsmasqServer&) = delete;
  DnsmasqServer& operator=(const DnsmasqServer&) = delete;

  // Replaces every record; returns once dnsmasq re-read them (bounded, 5 s).
  // Errors: kInvalidArgument for a bad record, kDeadlineExceeded.
  absl::Status SetRecords(
      const std::vector<std::pair<std::string, std::string>>& records);

  uint16_t port() const { return port_; }
  // "127.0.0.1:PORT", for DnsResolverOptions::server.
  std::string address() const;
  // What dnsmasq printed so far (its log goes to stderr).
  std::string output();

 private:
  DnsmasqServer(std::unique_ptr<Subprocess> process, uint16_t port,
                std::string dir)
      : process_(std::move(process)), port_(port), dir_(std::move(dir)) {}
  std::string hosts_path() const { return dir_ + "/hosts"; }

  std::unique_ptr<Subprocess> process_;
  uint16_t port_;
  std::string dir_;  // holds the hosts file
};

// Where the fixture looks for dnsmasq.
inline constexpr char kDnsmasqPath[] = "/usr/sbin/dnsmasq";

}  // namespace testing
}  // namespace transport

#endif  // TRANSPORT_TESTING_DNSMASQ_H_
