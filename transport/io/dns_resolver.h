// DnsResolver: asynchronous A and AAAA lookups with c-ares, driven by an
// EventLoop: c-ares's sockets are watched in the loop's epoll and its
// retransmission timeouts are loop timers, so no lookup ever blocks a loop
// thread.
//
//   DnsResolverOptions options;          // the system's servers and hosts
//   options.server = "127.0.0.1:5353";   // or ask this server only
//   auto resolver = DnsResolver::Create(loop, options);
//   (*resolver)->Resolve("svc.test", 50051,
//       [](absl::StatusOr<std::vector<SocketAddress>> addresses) { ... });
//
// Numeric hosts ("127.0.0.1", "::1", "[::1]") are answered without a query,
// and so are localhost names ("localhost", "*.localhost": 127.0.0.1 then ::1,
// RFC 6761 section 6.3). With no server given, names are looked up as the
// system does: /etc/hosts first, then the servers of /etc/resolv.conf.
//
// Errors (the callback's status): kUnavailable with the name and c-ares's
// reason, e.g. "DNS resolution failed for svc.test: Domain name not found";
// kInvalidArgument for an empty host. Resolve never runs its callback
// inline: always in a later loop callback.
//
// Threading: create, use and destroy on the loop's thread. Destroying the
// resolver ends its pending lookups without running their callbacks.

#ifndef TRANSPORT_IO_DNS_RESOLVER_H_
#define TRANSPORT_IO_DNS_RESOLVER_H_

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/functional/any_invocable.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "transport/io/event_loop.h"
#include "transport/io/socket.h"

namespace transport {

struct DnsResolverOptions {
  // The DNS server to ask, "ip" or "ip:port" ("[v6]:port"); port 53 when
  // omitted (the AUTHORITY of a "dns://AUTHORITY/host:port" target). Empty:
  // the system's configuration (/etc/resolv.conf, /etc/hosts).
  std::string server;
  // Per try; c-ares retries `tries` times over its servers.
  // (c-ares doubles the timeout on each round over the servers: with one
  // server and 3 tries a silent server fails after timeout * (1 + 2 + 4).)
  absl::Duration timeout = absl::Seconds(2);
  int tries = 3;
};

class DnsResolver {
 public:
  // The addresses of `host` with `port`: IPv4 (A) first, then IPv6 (AAAA),
  // each in the order the server gave them.
  using Callback =
      absl::AnyInvocable<void(absl::StatusOr<std::vector<SocketAddress>>)>;

  // Errors: kInvalidArgument for a bad `options.server`; c-ares init
  // failures as kInternal.
  static absl::StatusOr<std::unique_ptr<DnsResolver>> Create(
      EventLoop* loop, const DnsResolverOptions& options);
  ~DnsResolver();

  DnsResolver(const DnsResolver&) = delete;
  DnsResolver& operator=(const DnsResolver&) = delete;

  // Looks up A and AAAA records of `host` together; `done` runs once, on the
  // loop thread, in a later callback.
  void Resolve(std::string_view host, uint16_t port, Callback done);
  // Lookups started and not yet answered.
  size_t pending() const;

 private:
  class Impl;
  explicit DnsResolver(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace transport

#endif  // TRANSPORT_IO_DNS_RESOLVER_H_
