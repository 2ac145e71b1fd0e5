#include "tests/chaos/fault_proxy.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <deque>
#include <random>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"

namespace chaos {
namespace {

constexpr size_t kChunk = 16 * 1024;
constexpr size_t kMaxQueued = 256 * 1024;  // per direction, then stop reading
constexpr absl::Duration kPollSlice = absl::Milliseconds(50);
constexpr absl::Duration kConnectPatience = absl::Seconds(5);

const char* KindName(FaultPlan::Kind kind) {
  switch (kind) {
    case FaultPlan::Kind::kNone:
      return "none";
    case FaultPlan::Kind::kDelay:
      return "delay";
    case FaultPlan::Kind::kCut:
      return "cut";
    case FaultPlan::Kind::kTruncate:
      return "truncate";
    case FaultPlan::Kind::kStall:
      return "stall";
  }
  return "?";
}

// Closes with RST rather than FIN.
void Reset(int* fd) {
  if (*fd < 0) return;
  struct linger l = {1, 0};
  setsockopt(*fd, SOL_SOCKET, SO_LINGER, &l, sizeof(l));
  close(*fd);
  *fd = -1;
}

void CloseFd(int* fd) {
  if (*fd < 0) return;
  close(*fd);
  *fd = -1;
}

void SetNonBlocking(int fd) {
  fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
  int one = 1;
  setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
}

sockaddr_in LoopbackAddr(int port) {
  sockaddr_in a = {};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  a.sin_port = htons(static_cast<uint16_t>(port));
  return a;
}

// One direction of a connection.
struct Half {
  int* src = nullptr;
  int* dst = nullptr;
  bool faulty = false;  // the plan applies to this direction
  std::deque<std::pair<absl::Time, std::string>> queue;
  size_t queued = 0;
  uint64_t taken = 0;  // octets read from src and not dropped
  bool src_eof = false;
  bool dst_shut = false;
  bool dropping = false;  // truncated: what src sends is discarded
  absl::Time stall_until = absl::InfiniteFuture();
};

}  // namespace

std::string FaultPlan::ToString() const {
  std::string s = KindName(kind);
  if (kind == Kind::kNone) return s;
  if (kind != Kind::kDelay) {
    absl::StrAppend(
        &s, direction == Direction::kToServer ? " to-server" : " to-client",
        " after ", after_bytes, " B");
  }
  if (kind == Kind::kDelay || kind == Kind::kStall) {
    absl::StrAppend(&s, " for ", absl::FormatDuration(delay));
  }
  return s;
}

struct FaultProxy::Conn {
  int index = 0;
  FaultPlan plan;
  int client_fd = -1;
  int server_fd = -1;
  std::atomic<bool> cut{false};
  std::atomic<int> connected_port{0};
  bool done = false;  // guarded by the proxy's mu_
  std::thread thread;
};

FaultProxy::Planner FaultProxy::CleanPlanner() {
  return [](int) { return FaultPlan(); };
}

FaultProxy::Planner FaultProxy::DelayPlanner(uint64_t seed,
                                             absl::Duration max_delay) {
  return [seed, max_delay](int index) {
    std::mt19937_64 rng(seed * 1000003 + static_cast<uint64_t>(index));
    FaultPlan p;
    p.kind = FaultPlan::Kind::kDelay;
    p.delay = max_delay * std::uniform_real_distribution<double>(0, 1)(rng);
    return p;
  };
}

FaultProxy::Planner FaultProxy::RandomPlanner(uint64_t seed,
                                              double fault_share) {
  return [seed, fault_share](int index) {
    std::mt19937_64 rng(seed * 1000003 + static_cast<uint64_t>(index));
    std::uniform_real_distribution<double> unit(0, 1);
    FaultPlan p;
    if (unit(rng) >= fault_share) {
      p.kind = FaultPlan::Kind::kDelay;
      p.delay = absl::Milliseconds(5) * unit(rng);
      return p;
    }
    const FaultPlan::Kind kinds[] = {FaultPlan::Kind::kCut,
                                     FaultPlan::Kind::kTruncate,
                                     FaultPlan::Kind::kStall};
    p.kind = kinds[rng() % 3];
    p.direction = rng() % 2 ? FaultPlan::Direction::kToServer
                            : FaultPlan::Direction::kToClient;
    // Mostly past the preface and settings, sometimes inside them.
    p.after_bytes = rng() % 8 == 0 ? rng() % 100 : rng() % (64 * 1024);
    p.delay = absl::Milliseconds(20 + rng() % 300);
    return p;
  };
}

FaultProxy::FaultProxy(int target_port, Planner planner)
    : target_port_(target_port), planner_(std::move(planner)) {}

FaultProxy::~FaultProxy() {
  stop_.store(true);
  if (acceptor_.joinable()) acceptor_.join();
  std::vector<std::unique_ptr<Conn>> conns;
  {
    absl::MutexLock lock(&mu_);
    conns.swap(conns_);
  }
  for (auto& c : conns) {
    if (c->thread.joinable()) c->thread.join();
  }
  CloseFd(&listen_fd_);
}

absl::Status FaultProxy::Start() {
  listen_fd_ = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (listen_fd_ < 0) return absl::InternalError("socket");
  sockaddr_in a = LoopbackAddr(0);
  if (bind(listen_fd_, reinterpret_cast<sockaddr*>(&a), sizeof(a)) != 0 ||
      listen(listen_fd_, 512) != 0) {
    return absl::InternalError(absl::StrCat("bind/listen: errno ", errno));
  }
  socklen_t len = sizeof(a);
  getsockname(listen_fd_, reinterpret_cast<sockaddr*>(&a), &len);
  port_ = ntohs(a.sin_port);
  SetNonBlocking(listen_fd_);
  acceptor_ = std::thread([this] { AcceptLoop(); });
  return absl::OkStatus();
}

void FaultProxy::AcceptLoop() {
  while (!stop_.load()) {
    pollfd p = {listen_fd_, POLLIN, 0};
    if (poll(&p, 1, absl::ToInt64Milliseconds(kPollSlice)) <= 0) continue;
    const int fd = accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC);
    if (fd < 0) continue;
    absl::MutexLock lock(&mu_);
    auto conn = std::make_unique<Conn>();
    conn->index = static_cast<int>(conns_.size());
    conn->plan = planner_(conn->index);
    conn->client_fd = fd;
    Conn* raw = conn.get();
    conns_.push_back(std::move(conn));
    raw->thread = std::thread([this, raw] { Pump(raw); });
  }
}

void FaultProxy::CutAll() {
  absl::MutexLock lock(&mu_);
  for (auto& c : conns_) c->cut.store(true);
}

int FaultProxy::connections_accepted() const {
  absl::MutexLock lock(&mu_);
  return static_cast<int>(conns_.size());
}

bool FaultProxy::WaitClosedTo(int target_port, absl::Time deadline) {
  auto closed = [this, target_port]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    for (auto& c : conns_) {
      if (!c->done && c->connected_port.load() == target_port) return false;
    }
    return true;
  };
  absl::MutexLock lock(&mu_);
  return mu_.AwaitWithDeadline(absl::Condition(&closed), deadline);
}

std::string FaultProxy::PlansSummary() const {
  absl::MutexLock lock(&mu_);
  std::string s;
  for (auto& c : conns_) {
    absl::StrAppend(&s, s.empty() ? "" : "; ", "#", c->index, ": ",
                    c->plan.ToString());
  }
  return s;
}

void FaultProxy::Pump(Conn* conn) {
  // Connect to the target, waiting out a restart.
  const absl::Time give_up = absl::Now() + kConnectPatience;
  while (!stop_.load() && !conn->cut.load() && absl::Now() < give_up) {
    const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    const int port = target_port_.load();
    sockaddr_in a = LoopbackAddr(port);
    if (connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof(a)) == 0) {
      conn->server_fd = fd;
      conn->connected_port.store(port);
      break;
    }
    close(fd);
    absl::SleepFor(absl::Milliseconds(5));
  }
  const FaultPlan plan = conn->plan;
  Half halves[2];
  halves[0].src = &conn->client_fd;
  halves[0].dst = &conn->server_fd;
  halves[0].faulty = plan.direction == FaultPlan::Direction::kToServer;
  halves[1].src = &conn->server_fd;
  halves[1].dst = &conn->client_fd;
  halves[1].faulty = plan.direction == FaultPlan::Direction::kToClient;
  const bool limited = plan.kind == FaultPlan::Kind::kCut ||
                       plan.kind == FaultPlan::Kind::kTruncate ||
                       plan.kind == FaultPlan::Kind::kStall;
  bool reset = conn->server_fd < 0;
  if (!reset) {
    SetNonBlocking(conn->client_fd);
    SetNonBlocking(conn->server_fd);
  }

  while (!reset) {
    if (stop_.load() || conn->cut.load()) {
      reset = true;
      break;
    }
    const absl::Time now = absl::Now();
    absl::Time wake = now + kPollSlice;
    bool want_read[2] = {false, false};
    bool want_write[2] = {false, false};
    for (int d = 0; d < 2; ++d) {
      Half& h = halves[d];
      const bool at_limit = h.faulty && limited && h.taken >= plan.after_bytes;
      if (at_limit && h.queue.empty()) {
        if (plan.kind == FaultPlan::Kind::kCut) reset = true;
        if (plan.kind == FaultPlan::Kind::kTruncate && !h.dropping) {
          h.dropping = true;
          shutdown(*h.dst, SHUT_WR);
          h.dst_shut = true;
        }
        if (plan.kind == FaultPlan::Kind::kStall) {
          if (h.stall_until == absl::InfiniteFuture()) {
            h.stall_until = now + plan.delay;
          }
          if (now >= h.stall_until) reset = true;
          wake = std::min(wake, h.stall_until);
        }
      }
      const bool stalled = at_limit && plan.kind == FaultPlan::Kind::kStall;
      want_read[d] = !h.src_eof && !stalled && h.queued < kMaxQueued;
      if (!h.queue.empty()) {
        if (h.queue.front().first <= now) {
          want_write[d] = true;
        } else {
          wake = std::min(wake, h.queue.front().first);
        }
      } else if (h.src_eof && !h.dst_shut) {
        shutdown(*h.dst, SHUT_WR);
        h.dst_shut = true;
      }
    }
    if (reset) break;
    if (halves[0].src_eof && halves[1].src_eof && halves[0].queue.empty() &&
        halves[1].queue.empty()) {
      break;  // both sides said all they had to say
    }
    // halves[0] reads client_fd and writes server_fd; halves[1] the reverse.
    pollfd fds[2] = {{conn->client_fd, 0, 0}, {conn->server_fd, 0, 0}};
    if (want_read[0]) fds[0].events |= POLLIN;
    if (want_write[1]) fds[0].events |= POLLOUT;
    if (want_read[1]) fds[1].events |= POLLIN;
    if (want_write[0]) fds[1].events |= POLLOUT;
    const int64_t ms =
        std::max<int64_t>(0, absl::ToInt64Milliseconds(wake - now) + 1);
    const int ready = poll(fds, 2, static_cast<int>(ms));
    if (ready < 0 && errno != EINTR) {
      reset = true;
      break;
    }
    if (ready > 0 && !(fds[0].revents & fds[0].events) &&
        !(fds[1].revents & fds[1].events)) {
      // Only a hang-up or error on a side we do not read now (stalled, or
      // its queue is full): do not spin on it.
      absl::SleepFor(absl::Milliseconds(1));
    }
    for (int d = 0; d < 2 && !reset; ++d) {
      Half& h = halves[d];
      const short revents = fds[d].revents;  // fds[d] is h.src
      if (want_read[d] && (revents & (POLLIN | POLLHUP | POLLERR))) {
        size_t room = kChunk;
        if (h.faulty && limited && !h.dropping) {
          room = std::min<uint64_t>(room, plan.after_bytes - h.taken);
        }
        if (h.dropping) room = kChunk;
        if (room > 0) {
          std::string buf(room, '\0');
          const ssize_t n = recv(*h.src, buf.data(), room, 0);
          if (n > 0) {
            if (!h.dropping) {
              buf.resize(static_cast<size_t>(n));
              const absl::Duration delay = plan.kind == FaultPlan::Kind::kDelay
                                               ? plan.delay
                                               : absl::ZeroDuration();
              h.queued += buf.size();
              h.taken += buf.size();
              h.queue.emplace_back(absl::Now() + delay, std::move(buf));
            }
          } else if (n == 0) {
            h.src_eof = true;
          } else if (errno != EAGAIN && errno != EINTR) {
            // The server vanished: tell the client with a FIN, so that the
            // connection ends when the client has seen it. The client
            // vanished: nobody is left to tell.
            if (d == 1) {
              h.src_eof = true;
            } else {
              reset = true;
            }
          }
        }
      }
    }
    for (int d = 0; d < 2 && !reset; ++d) {
      Half& h = halves[d];
      if (!want_write[d]) continue;
      const short revents = fds[1 - d].revents;  // fds[1 - d] is h.dst
      if (!(revents & (POLLOUT | POLLERR | POLLHUP))) continue;
      while (!h.queue.empty() && h.queue.front().first <= absl::Now()) {
        std::string& front = h.queue.front().second;
        const ssize_t n =
            send(*h.dst, front.data(), front.size(), MSG_NOSIGNAL);
        if (n < 0) {
          if (errno == EAGAIN || errno == EINTR) break;
          if (d == 0) {  // the server is gone: drop what it will not read
            h.queue.clear();
            h.queued = 0;
            halves[1].src_eof = true;
            h.src_eof = true;
            break;
          }
          reset = true;
          break;
        }
        h.queued -= static_cast<size_t>(n);
        if (d == 1) bytes_to_client_ += static_cast<uint64_t>(n);
        if (static_cast<size_t>(n) < front.size()) {
          front.erase(0, static_cast<size_t>(n));
          break;
        }
        h.queue.pop_front();
      }
    }
  }
  if (reset) {
    Reset(&conn->client_fd);
    Reset(&conn->server_fd);
  } else {
    CloseFd(&conn->client_fd);
    CloseFd(&conn->server_fd);
  }
  absl::MutexLock lock(&mu_);
  conn->done = true;
}

}  // namespace chaos
