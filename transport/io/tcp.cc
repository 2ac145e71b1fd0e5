#include "transport/io/tcp.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <netinet/in.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

#include <algorithm>
#include <cassert>
#include <utility>

#include "absl/strings/str_cat.h"

namespace transport {
namespace {

constexpr uint32_t kReadEvents = EPOLLIN | EPOLLRDHUP;
constexpr uint32_t kHangupEvents = EPOLLRDHUP | EPOLLHUP | EPOLLERR;
// sendmsg takes at most IOV_MAX (1024) buffers; more is split into calls.
constexpr size_t kMaxIov = IOV_MAX;

}  // namespace

// ---- TcpEndpoint ----

absl::StatusOr<std::unique_ptr<TcpEndpoint>> TcpEndpoint::Create(
    EventLoop* loop, ScopedFd fd) {
  if (!fd.valid()) return absl::InvalidArgumentError("invalid fd");
  if (absl::Status s = SetNonBlocking(fd.get()); !s.ok()) return s;
  if (IsInetFamily(SocketFamily(fd.get()))) {
    if (absl::Status s = SetTcpNoDelay(fd.get()); !s.ok()) return s;
  }
  std::unique_ptr<TcpEndpoint> ep(new TcpEndpoint(loop, std::move(fd)));
  TcpEndpoint* self = ep.get();
  absl::Status s =
      loop->Watch(self->fd(), kReadEvents,
                  [self](uint32_t events) { self->OnEvents(events); });
  if (!s.ok()) {
    self->fd_.reset();  // not watched: nothing for Close() to unwatch
    return s;
  }
  return ep;
}

TcpEndpoint::TcpEndpoint(EventLoop* loop, ScopedFd fd)
    : loop_(loop), fd_(std::move(fd)) {
  if (auto a = SocketAddress::PeerOf(fd_.get()); a.ok()) peer_ = *a;
  if (auto a = SocketAddress::LocalOf(fd_.get()); a.ok()) local_ = *a;
}

TcpEndpoint::~TcpEndpoint() { Close(); }

void TcpEndpoint::Close() {
  if (!fd_.valid()) return;
  loop_->Unwatch(fd_.get()).IgnoreError();
  fd_.reset();
  DropCallbacks();
}

void TcpEndpoint::OnEvents(uint32_t events) {
  if (events & (EPOLLIN | kHangupEvents)) {
    readable_ = true;
    if (events & kHangupEvents) peer_hangup_ = true;
    if (!NotifyReadable()) return;
  }
  if (!fd_.valid()) return;
  if (events & (EPOLLOUT | EPOLLHUP | EPOLLERR)) {
    if (write_blocked_) {
      write_blocked_ = false;
      if (!NotifyWritable()) return;
    }
    // Nothing pending any more: stop EPOLLOUT so read events don't carry it.
    if (fd_.valid() && !write_blocked_) SetWriteInterest(false);
  }
}

void TcpEndpoint::SetWriteInterest(bool on) {
  if (epollout_armed_ == on) return;
  absl::Status s =
      loop_->Modify(fd_.get(), on ? kReadEvents | EPOLLOUT : kReadEvents);
  if (s.ok()) {
    epollout_armed_ = on;
  } else if (error_.ok()) {
    error_ = s;
  }
}

IoResult TcpEndpoint::Read(absl::Span<char> buffer) {
  if (!fd_.valid()) {
    return IoResult::Error(absl::FailedPreconditionError("endpoint closed"));
  }
  // Only a read error ends reads: after a write error (the peer reset the
  // connection) the octets it sent before are still here, then EOF or the
  // reset.
  if (!read_error_.ok()) return IoResult::Error(read_error_);
  if (eof_) return IoResult::Eof();
  if (buffer.empty()) return IoResult::Ok(0);
  if (!readable_) return IoResult::WouldBlock();
  for (;;) {
    const ssize_t n = ::read(fd_.get(), buffer.data(), buffer.size());
    if (n > 0) {
      if (static_cast<size_t>(n) < buffer.size() && !peer_hangup_) {
        readable_ = false;
      }
      return IoResult::Ok(static_cast<size_t>(n));
    }
    if (n == 0) {
      eof_ = true;
      return IoResult::Eof();
    }
    if (errno == EINTR) continue;
    if (errno == EAGAIN || errno == EWOULDBLOCK) {
      readable_ = false;
      return IoResult::WouldBlock();
    }
    read_error_ = absl::ErrnoToStatus(
        errno, absl::StrCat("read from ", peer_.ToString()));
    return IoResult::Error(read_error_);
  }
}

IoResult TcpEndpoint::Writev(absl::Span<const std::string_view> buffers) {
  if (!fd_.valid()) {
    return IoResult::Error(absl::FailedPreconditionError("endpoint closed"));
  }
  if (!error_.ok()) return IoResult::Error(error_);
  if (!read_error_.ok()) return IoResult::Error(read_error_);
  if (write_shut_) {
    return IoResult::Error(
        absl::FailedPreconditionError("write after ShutdownWrite"));
  }
  size_t total = 0;
  for (std::string_view b : buffers) total += b.size();
  if (total == 0) return IoResult::Ok(0);

  iovec iov[kMaxIov];
  size_t index = 0;   // first buffer not fully written
  size_t offset = 0;  // bytes of buffers[index] already written
  size_t written = 0;
  while (written < total) {
    size_t count = 0;
    size_t batch = 0;
    for (size_t i = index; i < buffers.size() && count < kMaxIov; ++i) {
      const size_t skip = i == index ? offset : 0;
      if (buffers[i].size() == skip) continue;
      iov[count].iov_base = const_cast<char*>(buffers[i].data() + skip);
      iov[count].iov_len = buffers[i].size() - skip;
      batch += iov[count].iov_len;
      ++count;
    }
    msghdr msg{};
    msg.msg_iov = iov;
    msg.msg_iovlen = count;
    const ssize_t n = ::sendmsg(fd_.get(), &msg, MSG_NOSIGNAL);
    if (n < 0) {
      if (errno == EINTR) continue;
      if (errno == EAGAIN || errno == EWOULDBLOCK) break;
      error_ = absl::ErrnoToStatus(errno,
                                   absl::StrCat("write to ", peer_.ToString()));
      // What the peer sent before is read without waiting for an edge (its
      // reset's may have been consumed already): until EOF or the error.
      readable_ = true;
      peer_hangup_ = true;
      return IoResult::Error(error_);
    }
    written += static_cast<size_t>(n);
    // Advance (index, offset) by n.
    size_t left = static_cast<size_t>(n);
    while (left > 0) {
      const size_t avail = buffers[index].size() - offset;
      if (left < avail) {
        offset += left;
        left = 0;
      } else {
        left -= avail;
        ++index;
        offset = 0;
      }
    }
    // A short write means the socket buffer is full: the next call would
    // only return EAGAIN.
    if (static_cast<size_t>(n) < batch) break;
  }
  if (written < total) {
    write_blocked_ = true;
    SetWriteInterest(true);
    if (!error_.ok()) return IoResult::Error(error_);
  } else {
    write_blocked_ = false;
  }
  return IoResult::Ok(written);
}

void TcpEndpoint::ShutdownWrite() {
  if (!fd_.valid() || write_shut_) return;
  write_shut_ = true;
  ::shutdown(fd_.get(), SHUT_WR);
}

// ---- TcpListener ----

absl::StatusOr<std::unique_ptr<TcpListener>> TcpListener::Listen(
    EventLoop* loop, const SocketAddress& address, AcceptCallback on_accept,
    const TcpListenerOptions& options) {
  if (address.empty()) return absl::InvalidArgumentError("empty address");
  const std::string where = address.ToString();
  ScopedFd fd(::socket(address.family(),
                       SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0));
  if (!fd.valid()) return absl::ErrnoToStatus(errno, "socket");
  int one = 1;
  if (setsockopt(fd.get(), SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) != 0) {
    return absl::ErrnoToStatus(errno, "setsockopt(SO_REUSEADDR)");
  }
  if (options.reuse_port &&
      setsockopt(fd.get(), SOL_SOCKET, SO_REUSEPORT, &one, sizeof(one)) != 0) {
    return absl::ErrnoToStatus(errno, "setsockopt(SO_REUSEPORT)");
  }
  if (address.family() == AF_INET6) {
    int v6only = options.v6_only ? 1 : 0;
    if (setsockopt(fd.get(), IPPROTO_IPV6, IPV6_V6ONLY, &v6only,
                   sizeof(v6only)) != 0) {
      return absl::ErrnoToStatus(errno, "setsockopt(IPV6_V6ONLY)");
    }
  }
  const bool unix_socket = address.family() == AF_UNIX;
  if (unix_socket) {
    // A socket file left by an earlier process makes bind fail with
    // EADDRINUSE: remove it. Anything that is not a socket stays (and bind
    // fails).
    struct stat st;
    const std::string path = address.HostString();
    if (::lstat(path.c_str(), &st) == 0 && S_ISSOCK(st.st_mode)) {
      ::unlink(path.c_str());
    }
  }
  if (::bind(fd.get(), address.addr(), address.len()) != 0) {
    return absl::ErrnoToStatus(errno, absl::StrCat("bind ", where));
  }
  UnixSocketFile socket_file;
  if (unix_socket) {
    socket_file.path = address.HostString();
    struct stat st;
    if (::stat(socket_file.path.c_str(), &st) == 0) {
      socket_file.dev = st.st_dev;
      socket_file.ino = st.st_ino;
    }
  }
  if (::listen(fd.get(), options.backlog) != 0) {
    return absl::ErrnoToStatus(errno, absl::StrCat("listen on ", where));
  }
  std::unique_ptr<TcpListener> listener(
      new TcpListener(loop, std::move(fd), std::move(on_accept)));
  auto local = SocketAddress::LocalOf(listener->fd_.get());
  if (!local.ok()) return local.status();
  listener->local_ = *local;
  listener->socket_file_ = std::move(socket_file);
  TcpListener* self = listener.get();
  absl::Status s = loop->Watch(self->fd_.get(), EPOLLIN,
                               [self](uint32_t) { self->OnReadable(); });
  if (!s.ok()) {
    self->fd_.reset();
    return s;
  }
  return listener;
}

TcpListener::TcpListener(EventLoop* loop, ScopedFd fd, AcceptCallback on_accept)
    : loop_(loop),
      fd_(std::move(fd)),
      on_accept_(std::move(on_accept)),
      spare_fd_(::open("/dev/null", O_RDONLY | O_CLOEXEC)) {}

TcpListener::~TcpListener() {
  if (destroyed_ != nullptr) *destroyed_ = true;
  if (fd_.valid()) loop_->Unwatch(fd_.get()).IgnoreError();
  if (!socket_file_.path.empty()) {
    // Only our own socket file: another listener may have replaced it.
    struct stat st;
    if (::lstat(socket_file_.path.c_str(), &st) == 0 && S_ISSOCK(st.st_mode) &&
        st.st_dev == socket_file_.dev && st.st_ino == socket_file_.ino) {
      ::unlink(socket_file_.path.c_str());
    }
  }
}

void TcpListener::OnReadable() {
  bool destroyed = false;
  destroyed_ = &destroyed;
  // Edge-triggered: accept until EAGAIN, or the edge is lost.
  for (;;) {
    sockaddr_storage ss;
    socklen_t len = sizeof(ss);
    const int fd = ::accept4(fd_.get(), reinterpret_cast<sockaddr*>(&ss), &len,
                             SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (fd < 0) {
      const int err = errno;
      if (err == EAGAIN || err == EWOULDBLOCK) break;
      if (err == EMFILE || err == ENFILE) {
        // Out of fds: accept with the spare and close at once, so the
        // connection is refused instead of clogging the queue forever.
        if (!spare_fd_.valid()) break;
        spare_fd_.reset();
        const int victim = ::accept4(fd_.get(), nullptr, nullptr, SOCK_CLOEXEC);
        if (victim >= 0) {
          ::close(victim);
          ++rejected_;
        }
        spare_fd_.reset(::open("/dev/null", O_RDONLY | O_CLOEXEC));
        if (victim < 0) break;
        continue;
      }
      // EINTR, ECONNABORTED, EPROTO, ENOBUFS...: that connection is gone;
      // keep draining the queue.
      if (err == EINTR || err == ECONNABORTED || err == EPROTO ||
          err == EPERM || err == ENOBUFS || err == ENOMEM) {
        continue;
      }
      break;
    }
    ScopedFd conn(fd);
    if (IsInetFamily(local_.family())) SetTcpNoDelay(conn.get()).IgnoreError();
    const SocketAddress peer =
        SocketAddress::FromSockaddr(reinterpret_cast<sockaddr*>(&ss), len);
    on_accept_(std::move(conn), peer);
    if (destroyed) return;
  }
  destroyed_ = nullptr;
}

// ---- TcpConnect ----

bool ConnectHandle::Cancel() {
  std::shared_ptr<Attempt> attempt = attempt_.lock();
  attempt_.reset();
  // The reference keeps the attempt alive while it unwatches the handler or
  // cancels the task that owns it.
  return attempt != nullptr && attempt->Cancel();
}

namespace {

// One connect in flight. Owned by its watch handler (so by the loop), or,
// when it failed at once, by the deferred task that reports it; the timer
// refers to it by pointer and is cancelled when it finishes; the handle holds
// a weak reference.
class ConnectAttempt final : public ConnectHandle::Attempt {
 public:
  ConnectAttempt(EventLoop* loop, SocketAddress address, ConnectCallback done)
      : loop_(loop), address_(std::move(address)), done_(std::move(done)) {}
  ~ConnectAttempt() {
    if (timer_ != EventLoop::kInvalidTimer) loop_->Cancel(timer_);
  }

  void set_fd(ScopedFd fd) { fd_ = std::move(fd); }
  void set_timer(EventLoop::TimerId timer) { timer_ = timer; }

  void OnWritable() {
    int err = 0;
    socklen_t len = sizeof(err);
    if (getsockopt(fd_.get(), SOL_SOCKET, SO_ERROR, &err, &len) != 0) {
      err = errno;
    }
    if (err == EINPROGRESS) return;  // spurious
    Finish(err == 0
               ? absl::OkStatus()
               : absl::ErrnoToStatus(
                     err, absl::StrCat("connect to ", address_.ToString())));
  }

  void OnTimeout() {
    timer_ = EventLoop::kInvalidTimer;
    Finish(absl::DeadlineExceededError(
        absl::StrCat("connect to ", address_.ToString(), " timed out")));
  }

  // Runs at most once, and not after Cancel. `this` stays alive until the end
  // of the iteration (the loop retires the unwatched handler that owns it).
  void Finish(absl::Status status) {
    if (!done_) return;
    ConnectCallback done = TakeDone();
    if (!status.ok()) {
      fd_.reset();
      done(std::move(status));
      return;
    }
    done(TcpEndpoint::Create(loop_, std::move(fd_)));
  }

  bool Cancel() override {
    assert(loop_->IsInLoopThread());
    if (!done_) return false;
    ConnectCallback done = TakeDone();
    fd_.reset();  // the connect is abandoned
    return true;  // `done` is destroyed last: its captures may be anything
  }

 private:
  // Stops the timer and the watch, and hands out `done_` (left empty).
  ConnectCallback TakeDone() {
    if (timer_ != EventLoop::kInvalidTimer) {
      loop_->Cancel(timer_);
      timer_ = EventLoop::kInvalidTimer;
    }
    if (fd_.valid()) loop_->Unwatch(fd_.get()).IgnoreError();
    ConnectCallback done = std::move(done_);
    done_ = nullptr;
    return done;
  }

  EventLoop* const loop_;
  ScopedFd fd_;
  const SocketAddress address_;
  ConnectCallback done_;
  EventLoop::TimerId timer_ = EventLoop::kInvalidTimer;
};

}  // namespace

ConnectHandle TcpConnect(EventLoop* loop, const SocketAddress& address,
                         absl::Duration timeout, ConnectCallback done) {
  auto attempt =
      std::make_shared<ConnectAttempt>(loop, address, std::move(done));
  ConnectHandle handle{std::weak_ptr<ConnectAttempt>(attempt)};
  // An immediate failure is reported from a deferred task, which owns the
  // attempt (a Cancel before it runs leaves it nothing to report).
  auto fail = [loop, &attempt](absl::Status status) {
    loop->Defer(
        [attempt = std::move(attempt), status = std::move(status)]() mutable {
          attempt->Finish(std::move(status));
        });
  };
  if (address.empty()) {
    fail(absl::InvalidArgumentError("connect: empty address"));
    return handle;
  }
  ScopedFd fd(::socket(address.family(),
                       SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0));
  if (!fd.valid()) {
    fail(absl::ErrnoToStatus(errno, "socket"));
    return handle;
  }
  if (IsInetFamily(address.family())) SetTcpNoDelay(fd.get()).IgnoreError();
  int rc;
  do {
    rc = ::connect(fd.get(), address.addr(), address.len());
  } while (rc != 0 && errno == EINTR);
  if (rc != 0 && errno != EINPROGRESS) {
    fail(absl::ErrnoToStatus(errno,
                             absl::StrCat("connect to ", address.ToString())));
    return handle;
  }
  // Connected at once or in progress: either way completion is reported by
  // EPOLLOUT (an already connected socket reports it immediately).
  const int raw_fd = fd.get();
  ConnectAttempt* a = attempt.get();
  absl::Status s = loop->Watch(raw_fd, EPOLLOUT,
                               [attempt](uint32_t) { attempt->OnWritable(); });
  if (!s.ok()) {
    fail(std::move(s));  // `fd` closes when this returns
    return handle;
  }
  a->set_fd(std::move(fd));
  if (timeout != absl::InfiniteDuration()) {
    a->set_timer(loop->RunAfter(timeout, [a] { a->OnTimeout(); }));
  }
  return handle;
}

}  // namespace transport
