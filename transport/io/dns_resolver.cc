#include "transport/io/dns_resolver.h"

#include <ares.h>
#include <netinet/in.h>
#include <poll.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>

#include <algorithm>
#include <climits>
#include <utility>

#include "absl/base/call_once.h"
#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "transport/io/absl_view.h"

namespace transport {
namespace {

// "localhost", "LocalHost.", "api.localhost": RFC 6761's localhost names.
bool IsLocalhostName(std::string_view name) {
  absl::string_view host = ToAbsl(name);
  if (absl::EndsWith(host, ".")) host.remove_suffix(1);
  return absl::EqualsIgnoreCase(host, "localhost") ||
         absl::EndsWithIgnoreCase(host, ".localhost");
}

// Rounds of ares_process_fd for one socket event before yielding to the
// loop's other work (the rest continues from a posted task).
constexpr int kMaxRoundsPerEvent = 64;
constexpr int kReceiveBufferSize = 1 << 20;

// ares_library_init once per process. On Linux it only sets up allocators,
// but it is not thread-safe, so every loop thread goes through here.
int LibraryInit() {
  static absl::once_flag once;
  static int status = ARES_SUCCESS;
  absl::call_once(once, [] { status = ares_library_init(ARES_LIB_INIT_ALL); });
  return status;
}

// "ip", "ip:port", "[v6]", "[v6]:port" (port 53 when omitted).
absl::StatusOr<SocketAddress> ParseServer(std::string_view server) {
  absl::StatusOr<SocketAddress> address = SocketAddress::Parse(server, 53);
  if (!address.ok()) address = SocketAddress::ParseHostPort(server);
  if (!address.ok()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "bad DNS server '", ToAbsl(server), "': ", address.status().message()));
  }
  if (address->port() == 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("bad DNS server '", ToAbsl(server), "': port 0"));
  }
  return address;
}

absl::Status LookupError(std::string_view host, int ares_status) {
  return absl::UnavailableError(absl::StrCat("DNS resolution failed for ",
                                             ToAbsl(host), ": ",
                                             ares_strerror(ares_status)));
}

}  // namespace

class DnsResolver::Impl {
 public:
  explicit Impl(EventLoop* loop) : loop_(loop) {}
  ~Impl();

  absl::Status Init(const DnsResolverOptions& options);
  void Resolve(std::string_view host, uint16_t port, Callback done);
  size_t pending() const { return queries_.size(); }

 private:
  struct Query {
    Impl* impl;
    uint64_t id;
    std::string host;
    uint16_t port;
    Callback done;
    absl::StatusOr<std::vector<SocketAddress>> result;
  };

  static void OnSockState(void* data, ares_socket_t fd, int readable,
                          int writable);
  static void OnAddrInfo(void* arg, int status, int timeouts,
                         struct ares_addrinfo* info);

  void SockState(int fd, bool readable, bool writable);
  void OnSocketEvent(int fd, uint32_t events);
  // Mirrors ares_timeout into the loop timer; after every ares_process_fd
  // and every new query.
  void RearmTimer();
  void OnTimer();
  // Stores the answer and delivers it from a new loop task (Post): the
  // callback may resolve again without keeping the loop in one phase.
  void Complete(Query* query, absl::StatusOr<std::vector<SocketAddress>> r);
  void Deliver(uint64_t id);

  EventLoop* const loop_;
  ares_channel channel_ = nullptr;
  bool destroying_ = false;
  // c-ares's sockets we watch: fd -> whether c-ares wants to write.
  absl::flat_hash_map<int, bool> sockets_;
  EventLoop::TimerId timer_ = EventLoop::kInvalidTimer;
  absl::flat_hash_map<uint64_t, std::unique_ptr<Query>> queries_;
  uint64_t next_id_ = 1;
  // Deferred and posted work holds a weak_ptr: after destruction it does
  // nothing.
  std::shared_ptr<Impl*> alive_ = std::make_shared<Impl*>(this);
};

absl::Status DnsResolver::Impl::Init(const DnsResolverOptions& options) {
  if (options.tries < 1) {
    return absl::InvalidArgumentError("DnsResolverOptions.tries must be >= 1");
  }
  if (options.timeout <= absl::ZeroDuration()) {
    return absl::InvalidArgumentError(
        "DnsResolverOptions.timeout must be positive");
  }
  SocketAddress server;
  if (!options.server.empty()) {
    absl::StatusOr<SocketAddress> parsed = ParseServer(options.server);
    if (!parsed.ok()) return parsed.status();
    server = *parsed;
  }
  if (int s = LibraryInit(); s != ARES_SUCCESS) {
    return absl::InternalError(
        absl::StrCat("ares_library_init: ", ares_strerror(s)));
  }

  ares_options opts;
  memset(&opts, 0, sizeof(opts));
  int mask = ARES_OPT_SOCK_STATE_CB | ARES_OPT_TIMEOUTMS | ARES_OPT_TRIES |
             ARES_OPT_SOCK_RCVBUF;
  // All lookups share one UDP socket per server: room for a burst of
  // answers (a limit, not an allocation; the kernel caps it at rmem_max).
  opts.socket_receive_buffer_size = kReceiveBufferSize;
  opts.sock_state_cb = &Impl::OnSockState;
  opts.sock_state_cb_data = this;
  opts.timeout = static_cast<int>(
      std::clamp<int64_t>(absl::ToInt64Milliseconds(absl::Ceil(
                              options.timeout, absl::Milliseconds(1))),
                          1, INT_MAX));
  opts.tries = options.tries;
  char dns_only[] = "b";
  if (!server.empty()) {
    // Ask that server only: no /etc/hosts.
    opts.lookups = dns_only;
    mask |= ARES_OPT_LOOKUPS;
  }
  if (int s = ares_init_options(&channel_, &opts, mask); s != ARES_SUCCESS) {
    channel_ = nullptr;
    return absl::InternalError(
        absl::StrCat("ares_init_options: ", ares_strerror(s)));
  }
  if (!server.empty()) {
    ares_addr_port_node node;
    memset(&node, 0, sizeof(node));
    node.family = server.family();
    if (server.family() == AF_INET) {
      memcpy(&node.addr.addr4,
             &reinterpret_cast<const sockaddr_in*>(server.addr())->sin_addr,
             sizeof(node.addr.addr4));
    } else {
      memcpy(&node.addr.addr6,
             &reinterpret_cast<const sockaddr_in6*>(server.addr())->sin6_addr,
             sizeof(node.addr.addr6));
    }
    node.udp_port = server.port();
    node.tcp_port = server.port();
    if (int s = ares_set_servers_ports(channel_, &node); s != ARES_SUCCESS) {
      return absl::InvalidArgumentError(absl::StrCat(
          "ares_set_servers_ports(", options.server, "): ", ares_strerror(s)));
    }
  }
  return absl::OkStatus();
}

DnsResolver::Impl::~Impl() {
  destroying_ = true;
  alive_.reset();
  if (timer_ != EventLoop::kInvalidTimer) loop_->Cancel(timer_);
  timer_ = EventLoop::kInvalidTimer;
  if (channel_ != nullptr) {
    // Closes c-ares's sockets (OnSockState unwatches them) and ends every
    // query with ARES_EDESTRUCTION, which OnAddrInfo swallows.
    ares_destroy(channel_);
    channel_ = nullptr;
  }
  for (const auto& [fd, writable] : sockets_) {
    loop_->Unwatch(fd).IgnoreError();
  }
  sockets_.clear();
  queries_.clear();  // their callbacks are destroyed uncalled
}

void DnsResolver::Impl::Resolve(std::string_view host, uint16_t port,
                                Callback done) {
  auto owned = std::make_unique<Query>();
  Query* query = owned.get();
  query->impl = this;
  query->id = next_id_++;
  query->host = std::string(host);
  query->port = port;
  query->done = std::move(done);
  queries_.emplace(query->id, std::move(owned));

  if (host.empty()) {
    Complete(query, absl::InvalidArgumentError(
                        "DNS resolution failed for an empty host name"));
    return;
  }
  // Localhost names are the loopback addresses without a query (RFC 6761
  // section 6.3): a machine without "localhost" in /etc/hosts, or a DNS
  // server that does not know it, still reaches itself.
  if (IsLocalhostName(host)) {
    Complete(query, std::vector<SocketAddress>{
                        SocketAddress::Loopback(AF_INET, port),
                        SocketAddress::Loopback(AF_INET6, port)});
    return;
  }
  // Numeric hosts need no query.
  if (absl::StatusOr<SocketAddress> numeric = SocketAddress::Parse(host, port);
      numeric.ok()) {
    Complete(query, std::vector<SocketAddress>{*numeric});
    return;
  }
  ares_addrinfo_hints hints;
  memset(&hints, 0, sizeof(hints));
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  // Our own order (IPv4, then IPv6), not RFC 6724's (which also costs a
  // connect() per address).
  hints.ai_flags = ARES_AI_NOSORT;
  // May call OnAddrInfo inline (hosts file, errors): Complete defers.
  ares_getaddrinfo(channel_, query->host.c_str(), nullptr, &hints,
                   &Impl::OnAddrInfo, query);
  RearmTimer();
}

void DnsResolver::Impl::OnAddrInfo(void* arg, int status, int /*timeouts*/,
                                   struct ares_addrinfo* info) {
  Query* query = static_cast<Query*>(arg);
  Impl* impl = query->impl;
  if (impl->destroying_) {
    if (info != nullptr) ares_freeaddrinfo(info);
    return;
  }
  if (status != ARES_SUCCESS) {
    if (info != nullptr) ares_freeaddrinfo(info);
    impl->Complete(query, LookupError(query->host, status));
    return;
  }
  std::vector<SocketAddress> addresses;
  if (info != nullptr) {
    for (const ares_addrinfo_node* node = info->nodes; node != nullptr;
         node = node->ai_next) {
      SocketAddress a = SocketAddress::FromSockaddr(
          node->ai_addr, static_cast<socklen_t>(node->ai_addrlen));
      if (a.empty()) continue;
      a.set_port(query->port);
      addresses.push_back(a);
    }
    ares_freeaddrinfo(info);
  }
  if (addresses.empty()) {
    impl->Complete(query, LookupError(query->host, ARES_ENODATA));
    return;
  }
  std::stable_partition(
      addresses.begin(), addresses.end(),
      [](const SocketAddress& a) { return a.family() == AF_INET; });
  impl->Complete(query, std::move(addresses));
}

void DnsResolver::Impl::Complete(
    Query* query, absl::StatusOr<std::vector<SocketAddress>> result) {
  query->result = std::move(result);
  std::weak_ptr<Impl*> alive = alive_;
  const uint64_t id = query->id;
  loop_->Post([alive = std::move(alive), id] {
    if (std::shared_ptr<Impl*> self = alive.lock()) (*self)->Deliver(id);
  });
}

void DnsResolver::Impl::Deliver(uint64_t id) {
  auto it = queries_.find(id);
  if (it == queries_.end()) return;
  std::unique_ptr<Query> query = std::move(it->second);
  queries_.erase(it);
  // May destroy the resolver: nothing of `this` is touched after.
  query->done(std::move(query->result));
}

void DnsResolver::Impl::OnSockState(void* data, ares_socket_t fd, int readable,
                                    int writable) {
  static_cast<Impl*>(data)->SockState(fd, readable != 0, writable != 0);
}

void DnsResolver::Impl::SockState(int fd, bool readable, bool writable) {
  auto it = sockets_.find(fd);
  if (!readable && !writable) {
    // c-ares is about to close it.
    if (it != sockets_.end()) {
      loop_->Unwatch(fd).IgnoreError();
      sockets_.erase(it);
    }
    return;
  }
  const uint32_t events =
      (readable ? EPOLLIN : 0u) | (writable ? EPOLLOUT : 0u);
  if (it != sockets_.end()) {
    it->second = writable;
    loop_->Modify(fd, events).IgnoreError();
    return;
  }
  // A failed Watch leaves the socket unwatched: its queries end by timeout.
  if (loop_
          ->Watch(fd, events,
                  [this, fd](uint32_t ev) { OnSocketEvent(fd, ev); })
          .ok()) {
    sockets_.emplace(fd, writable);
  }
}

void DnsResolver::Impl::OnSocketEvent(int fd, uint32_t events) {
  bool read = (events & (EPOLLIN | EPOLLERR | EPOLLHUP)) != 0;
  bool write = (events & (EPOLLOUT | EPOLLERR | EPOLLHUP)) != 0;
  // Edge-triggered: the edge is spent, so c-ares must drain the socket now.
  // It reads UDP until EAGAIN but TCP one read per call, so after each round
  // ask the kernel whether more is waiting.
  int round = 0;
  for (;; ++round) {
    if (round == kMaxRoundsPerEvent) {
      // Yield to the loop's other work and continue from a posted task.
      std::weak_ptr<Impl*> alive = alive_;
      loop_->Post([alive = std::move(alive), fd] {
        if (std::shared_ptr<Impl*> self = alive.lock()) {
          if ((*self)->sockets_.contains(fd)) {
            (*self)->OnSocketEvent(fd, EPOLLIN | EPOLLOUT);
          }
        }
      });
      break;
    }
    ares_process_fd(channel_, read ? fd : ARES_SOCKET_BAD,
                    write ? fd : ARES_SOCKET_BAD);
    auto it = sockets_.find(fd);
    if (it == sockets_.end()) break;  // closed by c-ares
    pollfd p;
    p.fd = fd;
    p.events = static_cast<short>(POLLIN | (it->second ? POLLOUT : 0));
    p.revents = 0;
    if (::poll(&p, 1, 0) <= 0) break;
    read = (p.revents & (POLLIN | POLLERR | POLLHUP)) != 0;
    write = it->second && (p.revents & (POLLOUT | POLLERR | POLLHUP)) != 0;
    if (!read && !write) break;
  }
  RearmTimer();
}

void DnsResolver::Impl::RearmTimer() {
  if (timer_ != EventLoop::kInvalidTimer) {
    loop_->Cancel(timer_);
    timer_ = EventLoop::kInvalidTimer;
  }
  timeval tv;
  const timeval* next = ares_timeout(channel_, nullptr, &tv);
  if (next == nullptr) return;  // no query in flight
  timer_ =
      loop_->RunAfter(absl::DurationFromTimeval(*next), [this] { OnTimer(); });
}

void DnsResolver::Impl::OnTimer() {
  timer_ = EventLoop::kInvalidTimer;
  // No fd: only retransmissions and timeouts.
  ares_process_fd(channel_, ARES_SOCKET_BAD, ARES_SOCKET_BAD);
  RearmTimer();
}

// ---- DnsResolver ----

absl::StatusOr<std::unique_ptr<DnsResolver>> DnsResolver::Create(
    EventLoop* loop, const DnsResolverOptions& options) {
  if (loop == nullptr) return absl::InvalidArgumentError("null EventLoop");
  auto impl = std::make_unique<Impl>(loop);
  if (absl::Status s = impl->Init(options); !s.ok()) return s;
  return std::unique_ptr<DnsResolver>(new DnsResolver(std::move(impl)));
}

DnsResolver::DnsResolver(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

DnsResolver::~DnsResolver() = default;

void DnsResolver::Resolve(std::string_view host, uint16_t port, Callback done) {
  impl_->Resolve(host, port, std::move(done));
}

size_t DnsResolver::pending() const { return impl_->pending(); }

}  // namespace transport
