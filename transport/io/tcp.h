// Non-blocking TCP on an EventLoop: a listener, an outgoing connect with a
// timeout, and TcpEndpoint, the plain-TCP Endpoint.
//
// Threading: everything here is created, used and destroyed on the thread of
// the EventLoop it was given, and its callbacks run there. The one exception
// is an accepted socket: TcpListener hands out a bare ScopedFd so it can be
// moved to another loop (EventLoopGroup::Next()) and wrapped there with
// TcpEndpoint::Create.
//
// Every socket is SOCK_NONBLOCK | SOCK_CLOEXEC with TCP_NODELAY, watched
// edge-triggered. Writes use sendmsg(MSG_NOSIGNAL): a closed peer is an
// EPIPE error, never a SIGPIPE.
//
// Unix domain stream sockets: despite the names, TcpListener, TcpConnect and
// TcpEndpoint carry AF_UNIX stream sockets too (SocketAddress::Unix), with
// the same behavior minus the TCP options (no TCP_NODELAY). A unix listener
// removes a stale socket file at its path before binding and its own file
// when destroyed.

#ifndef TRANSPORT_IO_TCP_H_
#define TRANSPORT_IO_TCP_H_

#include <sys/types.h>

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "absl/functional/any_invocable.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "transport/io/endpoint.h"
#include "transport/io/event_loop.h"
#include "transport/io/socket.h"

namespace transport {

class TcpEndpoint final : public Endpoint {
 public:
  // Wraps a connected socket: makes it non-blocking, sets TCP_NODELAY (TCP
  // only; unix stream sockets work too), and watches it on `loop` (EPOLLIN |
  // EPOLLRDHUP; EPOLLOUT only while a write is pending). Call on the loop
  // thread. Errors: the errno of setsockopt or epoll_ctl.
  static absl::StatusOr<std::unique_ptr<TcpEndpoint>> Create(EventLoop* loop,
                                                             ScopedFd fd);
  ~TcpEndpoint() override;

  TcpEndpoint(const TcpEndpoint&) = delete;
  TcpEndpoint& operator=(const TcpEndpoint&) = delete;

  EventLoop* loop() const override { return loop_; }
  const SocketAddress& peer_address() const override { return peer_; }
  const SocketAddress& local_address() const override { return local_; }
  // One read(). A read shorter than the buffer counts as "drained" (the next
  // Read returns kWouldBlock without a syscall) unless the peer's FIN or an
  // error was signalled: new data always raises a new edge. After a
  // Writev's error, reads go on (without waiting for an edge) until EOF or
  // a read error: what the peer sent before it reset the connection is
  // still read.
  IoResult Read(absl::Span<char> buffer) override;
  // sendmsg of up to IOV_MAX buffers per call, repeated until everything is
  // taken or the socket is full.
  IoResult Writev(absl::Span<const std::string_view> buffers) override;
  void ShutdownWrite() override;
  void Close() override;

  int fd() const { return fd_.get(); }

 private:
  TcpEndpoint(EventLoop* loop, ScopedFd fd);
  void OnEvents(uint32_t events);
  void SetWriteInterest(bool on);

  EventLoop* const loop_;
  ScopedFd fd_;
  SocketAddress peer_;
  SocketAddress local_;
  bool readable_ = true;         // false after EAGAIN until the next edge
  bool peer_hangup_ = false;     // RDHUP/HUP/ERR seen: read until 0 or EAGAIN
  bool eof_ = false;             // read() returned 0
  bool write_blocked_ = false;   // a Writev was short: on_writable owed
  bool epollout_armed_ = false;  // EPOLLOUT in the watched set
  bool write_shut_ = false;
  // Sticky. error_: a write's (or epoll's), which fails later writes;
  // read_error_: a read's, which fails reads and writes.
  absl::Status error_;
  absl::Status read_error_;
};

struct TcpListenerOptions {
  // listen()'s queue of connections not yet accepted. The default asks for
  // the most the system allows (Linux caps it at net.core.somaxconn, 4096 on
  // current kernels; grpc++ does the same), so a burst of connects is not
  // dropped and retried a second later while the loop catches up.
  int backlog = kMaxBacklog;
  static constexpr int kMaxBacklog = 65535;
  // SO_REUSEPORT: one listener per loop on the same port, balanced by the
  // kernel (an alternative to one acceptor handing fds to a group).
  bool reuse_port = false;
  // IPV6_V6ONLY for an IPv6 listener; false lets "::" take IPv4 too.
  bool v6_only = false;
};

class TcpListener {
 public:
  // An accepted socket: non-blocking, close-on-exec, TCP_NODELAY set (TCP).
  // For a unix listener `peer` is usually unnamed ("unix:").
  using AcceptCallback =
      absl::AnyInvocable<void(ScopedFd fd, const SocketAddress& peer)>;

  // Binds `address` (port 0: the kernel picks; see local_port()) with
  // SO_REUSEADDR, listens, and accepts on `loop` until destroyed. A unix
  // address: a socket file already at the path is unlinked first (any other
  // file makes bind fail), and the listener unlinks its file when destroyed
  // (if it is still the one it made). Call on the loop thread; `on_accept`
  // runs there, once per connection, and may destroy the listener. Errors: the
  // errno of socket, bind or listen (absl::ErrnoToStatus), the message naming
  // the address.
  static absl::StatusOr<std::unique_ptr<TcpListener>> Listen(
      EventLoop* loop, const SocketAddress& address, AcceptCallback on_accept,
      const TcpListenerOptions& options = TcpListenerOptions());
  ~TcpListener();

  TcpListener(const TcpListener&) = delete;
  TcpListener& operator=(const TcpListener&) = delete;

  const SocketAddress& local_address() const { return local_; }
  // 0 for a unix listener.
  uint16_t local_port() const { return local_.port(); }
  // Connections closed unaccepted because the process ran out of fds.
  uint64_t rejected_for_fd_limit() const { return rejected_; }

 private:
  TcpListener(EventLoop* loop, ScopedFd fd, AcceptCallback on_accept);
  void OnReadable();

  EventLoop* const loop_;
  ScopedFd fd_;
  SocketAddress local_;
  AcceptCallback on_accept_;
  // Held open so that at EMFILE one fd can be freed to accept-and-close,
  // draining the queue instead of spinning on it.
  ScopedFd spare_fd_;
  // A unix listener's socket file, removed on destruction if still ours.
  struct UnixSocketFile {
    std::string path;  // empty: not a unix listener
    dev_t dev = 0;
    ino_t ino = 0;
  };
  UnixSocketFile socket_file_;
  uint64_t rejected_ = 0;
  bool* destroyed_ = nullptr;
};

// Receives the connected endpoint, or why there is none: kDeadlineExceeded
// after the timeout, else the connect errno (ECONNREFUSED: kUnavailable...).
using ConnectCallback =
    absl::AnyInvocable<void(absl::StatusOr<std::unique_ptr<TcpEndpoint>>)>;

// Refers to one outgoing connect (TcpConnect, TlsConnect) so that its owner
// can abandon it: a subchannel shut down, a channel destroyed while it
// connects. Move-only; a default-constructed (or moved-from) handle refers
// to nothing. The handle does not own the attempt (the loop does): destroying
// it without Cancel() leaves the attempt running exactly as if no handle had
// been kept, so callers that ignore the handle behave as before (the attempt
// ends by itself, with `done` called once, or with the loop).
class ConnectHandle {
 public:
  // What an attempt implements for its handle (TcpConnect's, TlsConnect's).
  class Attempt {
   public:
    // Loop thread. As ConnectHandle::Cancel.
    virtual bool Cancel() = 0;

   protected:
    ~Attempt() = default;
  };

  ConnectHandle() = default;
  explicit ConnectHandle(std::weak_ptr<Attempt> attempt)
      : attempt_(std::move(attempt)) {}
  ConnectHandle(ConnectHandle&&) = default;
  ConnectHandle& operator=(ConnectHandle&&) = default;
  ConnectHandle(const ConnectHandle&) = delete;
  ConnectHandle& operator=(const ConnectHandle&) = delete;

  // Loop thread only (the attempt's loop). If the attempt's `done` has not
  // been called yet (nor started running), ends the attempt now, before
  // returning: its socket is unwatched and closed (a TCP connect in progress
  // is abandoned; a TLS handshake stops where it is and the peer sees the
  // connection close), its timeout timer is cancelled, and `done` is
  // destroyed uncalled, also when the attempt had already failed and only
  // the report was pending (an immediate error is reported from a deferred
  // task: that task then does nothing). So the "exactly once" of TcpConnect
  // and TlsConnect becomes "at most once, and never after Cancel() returned".
  // Returns true when it cancelled; false (and does nothing) when `done` was
  // already called or is running (Cancel() from inside `done` is harmless),
  // when the loop was destroyed, when cancelled before, or for an empty
  // handle. The handle is empty afterwards.
  bool Cancel();

  // True while the handle refers to an attempt that still exists: false for
  // an empty (default, moved-from or cancelled) handle and once the loop
  // freed the attempt. An attempt whose `done` ran may still count until the
  // end of that iteration, so an owner that asserts "none in flight" empties
  // its handle inside `done` (as rpc's Subchannel does).
  bool active() const { return !attempt_.expired(); }

 private:
  std::weak_ptr<Attempt> attempt_;
};

// Connects to `address` without blocking and calls `done` exactly once on
// the loop thread, never from inside TcpConnect, unless the returned handle
// is cancelled first (ConnectHandle::Cancel: then never). `timeout`
// (InfiniteDuration: none) is measured with a loop timer. Call on the loop
// thread. The attempt is owned by the loop: destroying the loop first
// destroys `done` uncalled. The handle may be dropped (the attempt goes on).
ConnectHandle TcpConnect(EventLoop* loop, const SocketAddress& address,
                         absl::Duration timeout, ConnectCallback done);

}  // namespace transport

#endif  // TRANSPORT_IO_TCP_H_
