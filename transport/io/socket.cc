#include "transport/io/socket.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/tcp.h>
#include <string.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <cstddef>
#include <string_view>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "transport/io/absl_view.h"

namespace transport {
namespace {

constexpr size_t kSunPathOffset = offsetof(sockaddr_un, sun_path);
constexpr size_t kSunPathSize = sizeof(sockaddr_un::sun_path);

// The path of a unix address: up to the first NUL, empty for an unnamed one.
std::string_view UnixPath(const sockaddr_storage& storage) {
  const auto* un = reinterpret_cast<const sockaddr_un*>(&storage);
  return std::string_view(un->sun_path, strnlen(un->sun_path, kSunPathSize));
}

}  // namespace

void ScopedFd::reset(int fd) {
  if (fd_ >= 0) {
    // Linux closes the fd even when close() fails with EINTR: never retry.
    ::close(fd_);
  }
  fd_ = fd;
}

absl::StatusOr<SocketAddress> SocketAddress::Parse(std::string_view host,
                                                   uint16_t port) {
  if (host == "localhost") return Loopback(AF_INET, port);
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']') {
    host = host.substr(1, host.size() - 2);
  }
  // inet_pton needs a NUL-terminated string.
  char buf[INET6_ADDRSTRLEN + 1];
  if (host.empty() || host.size() >= sizeof(buf)) {
    return absl::InvalidArgumentError(
        absl::StrCat("not a numeric IP address: '", ToAbsl(host), "'"));
  }
  memcpy(buf, host.data(), host.size());
  buf[host.size()] = '\0';
  SocketAddress a;
  auto* v4 = reinterpret_cast<sockaddr_in*>(&a.storage_);
  auto* v6 = reinterpret_cast<sockaddr_in6*>(&a.storage_);
  if (inet_pton(AF_INET, buf, &v4->sin_addr) == 1) {
    v4->sin_family = AF_INET;
    v4->sin_port = htons(port);
    return a;
  }
  a = SocketAddress();
  if (inet_pton(AF_INET6, buf, &v6->sin6_addr) == 1) {
    v6->sin6_family = AF_INET6;
    v6->sin6_port = htons(port);
    return a;
  }
  return absl::InvalidArgumentError(
      absl::StrCat("not a numeric IP address: '", ToAbsl(host), "'"));
}

absl::StatusOr<SocketAddress> SocketAddress::ParseHostPort(
    std::string_view host_port) {
  const size_t colon = host_port.rfind(':');
  if (colon == std::string_view::npos) {
    return absl::InvalidArgumentError(
        absl::StrCat("expected host:port, got '", ToAbsl(host_port), "'"));
  }
  std::string_view host = host_port.substr(0, colon);
  // An unbracketed IPv6 address ("::1") has colons in the host part.
  if (host.find(':') != std::string_view::npos && host.front() != '[') {
    return absl::InvalidArgumentError(
        absl::StrCat("IPv6 host must be bracketed as [addr]:port: '",
                     ToAbsl(host_port), "'"));
  }
  uint32_t port;
  if (!absl::SimpleAtoi(ToAbsl(host_port.substr(colon + 1)), &port) ||
      port > 65535) {
    return absl::InvalidArgumentError(
        absl::StrCat("bad port in '", ToAbsl(host_port), "'"));
  }
  return Parse(host, static_cast<uint16_t>(port));
}

SocketAddress SocketAddress::Loopback(int family, uint16_t port) {
  SocketAddress a;
  if (family == AF_INET6) {
    auto* v6 = reinterpret_cast<sockaddr_in6*>(&a.storage_);
    v6->sin6_family = AF_INET6;
    v6->sin6_addr = in6addr_loopback;
    v6->sin6_port = htons(port);
  } else {
    auto* v4 = reinterpret_cast<sockaddr_in*>(&a.storage_);
    v4->sin_family = AF_INET;
    v4->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    v4->sin_port = htons(port);
  }
  return a;
}

SocketAddress SocketAddress::Any(int family, uint16_t port) {
  SocketAddress a;
  if (family == AF_INET6) {
    auto* v6 = reinterpret_cast<sockaddr_in6*>(&a.storage_);
    v6->sin6_family = AF_INET6;
    v6->sin6_addr = in6addr_any;
    v6->sin6_port = htons(port);
  } else {
    auto* v4 = reinterpret_cast<sockaddr_in*>(&a.storage_);
    v4->sin_family = AF_INET;
    v4->sin_addr.s_addr = htonl(INADDR_ANY);
    v4->sin_port = htons(port);
  }
  return a;
}

absl::StatusOr<SocketAddress> SocketAddress::Unix(std::string_view path) {
  if (path.empty()) {
    return absl::InvalidArgumentError("empty unix socket path");
  }
  if (path.find('\0') != std::string_view::npos) {
    return absl::InvalidArgumentError("unix socket path contains a NUL");
  }
  // sun_path needs the terminating NUL too.
  if (path.size() >= kSunPathSize) {
    return absl::InvalidArgumentError(
        absl::StrCat("unix socket path longer than ", kSunPathSize - 1,
                     " bytes: '", ToAbsl(path), "'"));
  }
  SocketAddress a;
  auto* un = reinterpret_cast<sockaddr_un*>(&a.storage_);
  un->sun_family = AF_UNIX;
  memcpy(un->sun_path, path.data(), path.size());
  return a;
}

absl::StatusOr<SocketAddress> SocketAddress::ParseUnix(
    std::string_view target) {
  constexpr std::string_view kScheme = "unix:";
  if (target.substr(0, kScheme.size()) != kScheme) {
    return absl::InvalidArgumentError(
        absl::StrCat("expected unix:path, got '", ToAbsl(target), "'"));
  }
  target.remove_prefix(kScheme.size());
  // "unix:///abs" is the URI form of "unix:/abs".
  if (target.substr(0, 2) == "//") target.remove_prefix(2);
  return Unix(target);
}

SocketAddress SocketAddress::FromSockaddr(const struct sockaddr* addr,
                                          socklen_t len) {
  SocketAddress a;
  if (addr == nullptr) return a;
  if (addr->sa_family == AF_INET && len >= sizeof(sockaddr_in)) {
    memcpy(&a.storage_, addr, sizeof(sockaddr_in));
  } else if (addr->sa_family == AF_INET6 && len >= sizeof(sockaddr_in6)) {
    memcpy(&a.storage_, addr, sizeof(sockaddr_in6));
  } else if (addr->sa_family == AF_UNIX && len >= sizeof(sa_family_t)) {
    // Unnamed (len == sizeof(sa_family_t)) or a path; an abstract address
    // (leading NUL) reads as unnamed.
    memcpy(&a.storage_, addr, std::min<size_t>(len, sizeof(sockaddr_un)));
    auto* un = reinterpret_cast<sockaddr_un*>(&a.storage_);
    if (un->sun_path[0] == '\0') memset(un->sun_path, 0, kSunPathSize);
  }
  return a;
}

absl::StatusOr<SocketAddress> SocketAddress::LocalOf(int fd) {
  sockaddr_storage ss;
  socklen_t len = sizeof(ss);
  if (getsockname(fd, reinterpret_cast<sockaddr*>(&ss), &len) != 0) {
    return absl::ErrnoToStatus(errno, "getsockname");
  }
  return FromSockaddr(reinterpret_cast<sockaddr*>(&ss), len);
}

absl::StatusOr<SocketAddress> SocketAddress::PeerOf(int fd) {
  sockaddr_storage ss;
  socklen_t len = sizeof(ss);
  if (getpeername(fd, reinterpret_cast<sockaddr*>(&ss), &len) != 0) {
    return absl::ErrnoToStatus(errno, "getpeername");
  }
  return FromSockaddr(reinterpret_cast<sockaddr*>(&ss), len);
}

uint16_t SocketAddress::port() const {
  switch (family()) {
    case AF_INET:
      return ntohs(reinterpret_cast<const sockaddr_in*>(&storage_)->sin_port);
    case AF_INET6:
      return ntohs(reinterpret_cast<const sockaddr_in6*>(&storage_)->sin6_port);
    default:
      return 0;
  }
}

void SocketAddress::set_port(uint16_t port) {
  switch (family()) {
    case AF_INET:
      reinterpret_cast<sockaddr_in*>(&storage_)->sin_port = htons(port);
      break;
    case AF_INET6:
      reinterpret_cast<sockaddr_in6*>(&storage_)->sin6_port = htons(port);
      break;
    default:
      break;
  }
}

socklen_t SocketAddress::len() const {
  switch (family()) {
    case AF_INET:
      return sizeof(sockaddr_in);
    case AF_INET6:
      return sizeof(sockaddr_in6);
    case AF_UNIX: {
      const size_t path = UnixPath(storage_).size();
      if (path == 0) return sizeof(sa_family_t);
      return static_cast<socklen_t>(
          std::min(kSunPathOffset + path + 1, sizeof(sockaddr_un)));
    }
    default:
      return 0;
  }
}

std::string SocketAddress::HostString() const {
  char buf[INET6_ADDRSTRLEN];
  const char* s = nullptr;
  switch (family()) {
    case AF_INET:
      s = inet_ntop(AF_INET,
                    &reinterpret_cast<const sockaddr_in*>(&storage_)->sin_addr,
                    buf, sizeof(buf));
      break;
    case AF_INET6:
      s = inet_ntop(
          AF_INET6,
          &reinterpret_cast<const sockaddr_in6*>(&storage_)->sin6_addr, buf,
          sizeof(buf));
      break;
    case AF_UNIX:
      return std::string(UnixPath(storage_));
    default:
      break;
  }
  return s == nullptr ? std::string() : std::string(s);
}

std::string SocketAddress::ToString() const {
  switch (family()) {
    case AF_INET:
      return absl::StrCat(HostString(), ":", port());
    case AF_INET6:
      return absl::StrCat("[", HostString(), "]:", port());
    case AF_UNIX:
      return absl::StrCat("unix:", ToAbsl(UnixPath(storage_)));
    default:
      return "(none)";
  }
}

bool operator==(const SocketAddress& a, const SocketAddress& b) {
  if (a.family() != b.family()) return false;
  return a.len() == 0 || memcmp(&a.storage_, &b.storage_, a.len()) == 0;
}

absl::Status SetTcpNoDelay(int fd) {
  int one = 1;
  if (setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one)) != 0) {
    return absl::ErrnoToStatus(errno, "setsockopt(TCP_NODELAY)");
  }
  return absl::OkStatus();
}

int SocketFamily(int fd) {
  int domain = -1;
  socklen_t len = sizeof(domain);
  if (getsockopt(fd, SOL_SOCKET, SO_DOMAIN, &domain, &len) != 0) return -1;
  return domain;
}

absl::Status SetNonBlocking(int fd) {
  int flags = fcntl(fd, F_GETFL, 0);
  if (flags < 0) return absl::ErrnoToStatus(errno, "fcntl(F_GETFL)");
  if ((flags & O_NONBLOCK) == 0 &&
      fcntl(fd, F_SETFL, flags | O_NONBLOCK) != 0) {
    return absl::ErrnoToStatus(errno, "fcntl(F_SETFL, O_NONBLOCK)");
  }
  return absl::OkStatus();
}

}  // namespace transport
