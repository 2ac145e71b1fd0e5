// POSIX socket basics for the I/O layer: an owning fd, an IPv4/IPv6 or unix
// domain socket address, and the socket options every connection gets.
//
// Nothing here touches an EventLoop; all of it is safe on any thread (each
// object on one thread at a time). Errors are absl::Status built from errno
// (absl::ErrnoToStatus), with the operation and address in the message.

#ifndef TRANSPORT_IO_SOCKET_H_
#define TRANSPORT_IO_SOCKET_H_

#include <netinet/in.h>
#include <sys/socket.h>

#include <cstdint>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

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

// An IPv4 or IPv6 address with a port, or a unix domain (AF_UNIX) socket
// path. Default-constructed: empty (family() == AF_UNSPEC). Copyable, 128
// bytes.
//
// Unix addresses: ToString() is "unix:/path" (gRPC's form), HostString() the
// path, port() 0. The peer of an accepted unix socket is usually unnamed
// (path empty, "unix:"). Abstract addresses (a leading NUL) are not
// supported: they read as unnamed.
class SocketAddress {
 public:
  SocketAddress() = default;

  // A numeric IPv4 ("127.0.0.1") or IPv6 ("::1", "[::1]") host, or
  // "localhost" (127.0.0.1). Never resolves names: DNS is asynchronous and
  // lives elsewhere. Errors: InvalidArgument.
  static absl::StatusOr<SocketAddress> Parse(std::string_view host,
                                             uint16_t port);
  // "host:port" with the host as for Parse ("[::1]:443", "127.0.0.1:0").
  static absl::StatusOr<SocketAddress> ParseHostPort(
      std::string_view host_port);
  // 127.0.0.1 or ::1.
  static SocketAddress Loopback(int family, uint16_t port);
  // 0.0.0.0 or :: (all interfaces).
  static SocketAddress Any(int family, uint16_t port);
  // A unix domain socket path (relative or absolute). Errors:
  // InvalidArgument when empty, containing a NUL, or longer than sun_path
  // allows (107 bytes).
  static absl::StatusOr<SocketAddress> Unix(std::string_view path);
  // gRPC's unix target forms: "unix:path" or "unix:///absolute/path".
  // Errors: InvalidArgument without the "unix:" prefix, else as Unix().
  static absl::StatusOr<SocketAddress> ParseUnix(std::string_view target);
  // Copies a kernel-filled address; AF_INET, AF_INET6 and AF_UNIX only
  // (others give an empty address).
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

  // "127.0.0.1", "::1"; a unix socket's path.
  std::string HostString() const;
  // "127.0.0.1:80", "[::1]:80", "unix:/path"; "(none)" when empty.
  std::string ToString() const;

  friend bool operator==(const SocketAddress& a, const SocketAddress& b);
  friend bool operator!=(const SocketAddress& a, const SocketAddress& b) {
    return !(a == b);
  }

 private:
  struct sockaddr_storage storage_ = {};
};

// Every TCP connection gets TCP_NODELAY: HTTP/2 coalesces its own writes.
absl::Status SetTcpNoDelay(int fd);
// The address family of a socket (SO_DOMAIN: AF_INET, AF_INET6, AF_UNIX...),
// or -1 when it cannot be read.
int SocketFamily(int fd);
// AF_INET or AF_INET6 (the families TCP options apply to).
inline bool IsInetFamily(int family) {
  return family == AF_INET || family == AF_INET6;
}
absl::Status SetNonBlocking(int fd);

}  // namespace transport

#endif  // TRANSPORT_IO_SOCKET_H_
