// POSIX socket basics for the I/O layer: an owning fd, an IPv4/IPv6 socket
// address, and the socket options every connection gets.
//
// Nothing here touches an EventLoop; all of it is safe on any thread (each
// object on one thread at a time). Errors are absl::Status built from errno
// (absl::ErrnoToStatus), with the operation and address in the message.

#ifndef TRANSPORT_SOCKET_H_
#define TRANSPORT_SOCKET_H_

#include <netinet/in.h>
#include <sys/socket.h>

#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace transport {

// Owns one file descriptor; closes it on destruction. Move-only.
class ScopedFd {
 public:
  ScopedFd() = default;
  explicit ScopedFd(int fd) : fd_(fd) {}
  ScopedFd(ScopedFd&& other) noexcept : fd_(other.release()) {}
  ScopedFd& operator=(ScopedFd&& other) noexcept {
    if (this != &other) reset(other.release());
    return *this;
  }
  ScopedFd(const ScopedFd&) = delete;
  ScopedFd& operator=(const ScopedFd&) = delete;
  ~ScopedFd() { reset(); }

  int get() const { return fd_; }
  bool valid() const { return fd_ >= 0; }
  // Gives up ownership without closing.
  int release() {
    int fd = fd_;
    fd_ = -1;
    return fd;
  }
  // Closes the current fd (if any) and owns `fd`.
  void reset(int fd = -1);

 private:
  int fd_ = -1;
};

// An IPv4 or IPv6 address with a port. Default-constructed: empty
// (family() == AF_UNSPEC). Copyable, 128 bytes.
class SocketAddress {
 public:
  SocketAddress() = default;

  // A numeric IPv4 ("127.0.0.1") or IPv6 ("::1", "[::1]") host, or
  // "localhost" (127.0.0.1). Never resolves names: DNS is asynchronous and
  // lives elsewhere. Errors: InvalidArgument.
  static absl::StatusOr<SocketAddress> Parse(absl::string_view host,
                                             uint16_t port);
  // "host:port" with the host as for Parse ("[::1]:443", "127.0.0.1:0").
  static absl::StatusOr<SocketAddress> ParseHostPort(
      absl::string_view host_port);
  // 127.0.0.1 or ::1.
  static SocketAddress Loopback(int family, uint16_t port);
  // 0.0.0.0 or :: (all interfaces).
  static SocketAddress Any(int family, uint16_t port);
  // Copies a kernel-filled address; AF_INET and AF_INET6 only (others give an
  // empty address).
  static SocketAddress FromSockaddr(const struct sockaddr* addr, socklen_t len);
  // getsockname / getpeername.
  static absl::StatusOr<SocketAddress> LocalOf(int fd);
  static absl::StatusOr<SocketAddress> PeerOf(int fd);

  int family() const { return storage_.ss_family; }
  bool empty() const { return family() == AF_UNSPEC; }
  uint16_t port() const;
  void set_port(uint16_t port);
  const struct sockaddr* addr() const {
    return reinterpret_cast<const struct sockaddr*>(&storage_);
  }
  socklen_t len() const;

  // "127.0.0.1", "::1".
  std::string HostString() const;
  // "127.0.0.1:80", "[::1]:80"; "(none)" when empty.
  std::string ToString() const;

  friend bool operator==(const SocketAddress& a, const SocketAddress& b);
  friend bool operator!=(const SocketAddress& a, const SocketAddress& b) {
    return !(a == b);
  }

 private:
  struct sockaddr_storage storage_ = {};
};

// Every connection gets TCP_NODELAY: HTTP/2 coalesces its own writes.
absl::Status SetTcpNoDelay(int fd);
absl::Status SetNonBlocking(int fd);

}  // namespace transport

#endif  // TRANSPORT_SOCKET_H_
