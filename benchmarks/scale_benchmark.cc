// //benchmarks:scale_benchmark: what a server costs at scale, ours against
// Debian's gRPC C++ (grpc++), both serving rpc_bench/echo.proto in a child
// process on 127.0.0.1 (rpc_bench/ours_server.cc, rpc_bench/grpc_server.cc).
// This program is the client: plain HTTP/2 over non-blocking sockets on one
// epoll, the same octets for both servers, so the client's own cost is equal
// on both sides. Per repetition, ours then grpc++ (the order alternates):
//   (1) accept: --conns connections opened at once; the time from the first
//       connect() until every one has completed the preface and SETTINGS
//       exchange (server SETTINGS received, ours acknowledged), and the
//       server's CPU time (user + system, /proc/PID/stat) over that span;
//   (2) idle memory: the server's RSS (VmRSS) with those connections open
//       and idle minus its RSS before they were opened, per connection;
//   (3) sync burst: --sync_streams bidi streams (Echo.Stream, a blocking
//       handler each) held open at once, 50 per connection, until each has
//       echoed one message; the server's thread count then; all ended, and
//       the thread count --idle_ms + 1 s later (our server runs with
//       --worker_idle_ms=--idle_ms; grpc++ has no such setting);
//   (4) callback burst: on a fresh server with Echo.Unary in callback form,
//       --callback_calls unary calls sent at once, 50 per connection; the
//       server's thread count after all are answered;
//   (5) held calls: on a fresh server with the Hold service (--hold=1,
//       callback methods on both stacks; echo.proto), --held_calls calls
//       (unary, then server streaming) sent at once on one connection, and
//       again spread over --held_conns connections, which the server holds
//       without answering: once its Stats say every call reached its
//       handler, the server's RSS growth and heap growth (glibc mallinfo2,
//       asked through Stats) per call since the connections were ready, its
//       thread count; then a Release call answers them all (a message, then
//       OK) and the time until every call ended is the release time. Both
//       stacks hold both kinds (a held stream is a ServerWriteReactor that
//       writes nothing until Release); a call that ends before Release is
//       a failure.
// Prints the medians as tables with the ratio ours / grpc++. Exits 1 when a
// phase does not complete in 60 s or a call fails.
//
// Flags: --conns=N (5000), --reps=N (3), --sync_streams=N (200),
// --callback_calls=N (1000), --idle_ms=N (500), --held_calls=N (10000; 0:
// no (5)), --held_conns=N (100), --held_only=1 (only (5)), and the binaries
// (--ours_server= --grpc_server=, set by BUILD).

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <signal.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

namespace {

using Clock = std::chrono::steady_clock;

[[noreturn]] void Die(const std::string& what) {
  std::fprintf(stderr, "scale_benchmark: %s\n", what.c_str());
  std::exit(1);
}

// ---- The server process ----

struct Server {
  pid_t pid = -1;
  int port = 0;
};

Server StartServer(const std::vector<std::string>& args) {
  int fds[2];
  if (pipe(fds) != 0) Die("pipe");
  const pid_t pid = fork();
  if (pid < 0) Die("fork");
  if (pid == 0) {
    dup2(fds[1], 1);
    close(fds[0]);
    close(fds[1]);
    std::vector<char*> argv;
    for (const std::string& a : args) {
      argv.push_back(const_cast<char*>(a.c_str()));
    }
    argv.push_back(nullptr);
    execv(argv[0], argv.data());
    _exit(127);
  }
  close(fds[1]);
  std::string line;
  pollfd p{fds[0], POLLIN, 0};
  while (line.find('\n') == std::string::npos) {
    if (poll(&p, 1, 30000) <= 0) Die("no PORT line from " + args[0]);
    char buf[256];
    const ssize_t n = read(fds[0], buf, sizeof(buf));
    if (n <= 0) Die("server exited: " + args[0]);
    line.append(buf, static_cast<size_t>(n));
  }
  close(fds[0]);
  Server s;
  s.pid = pid;
  if (std::sscanf(line.c_str(), "PORT %d", &s.port) != 1) Die("bad PORT line");
  return s;
}

// SIGTERM (a profiler around the server writes its report), then SIGKILL
// after 10 s.
void StopServer(Server* s) {
  kill(s->pid, SIGTERM);
  for (int i = 0; i < 1000; ++i) {
    if (waitpid(s->pid, nullptr, WNOHANG) == s->pid) return;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  kill(s->pid, SIGKILL);
  waitpid(s->pid, nullptr, 0);
}

// A "Name:  value" line of /proc/PID/status.
long ProcStatus(pid_t pid, const char* name) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/status");
  std::string line;
  const size_t n = std::strlen(name);
  while (std::getline(in, line)) {
    if (line.compare(0, n, name) == 0) return std::atol(line.c_str() + n);
  }
  Die(std::string("no ") + name);
}

long RssKiB(pid_t pid) { return ProcStatus(pid, "VmRSS:"); }
long Threads(pid_t pid) { return ProcStatus(pid, "Threads:"); }

// User + system CPU seconds of the process.
double CpuSeconds(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string all((std::istreambuf_iterator<char>(in)),
                  std::istreambuf_iterator<char>());
  std::istringstream rest(all.substr(all.rfind(')') + 2));
  std::string field;
  double ticks = 0;
  for (int i = 3; i <= 15 && rest >> field; ++i) {
    if (i == 14 || i == 15) ticks += std::atof(field.c_str());
  }
  return ticks / static_cast<double>(sysconf(_SC_CLK_TCK));
}

// ---- A minimal HTTP/2 client connection ----

constexpr uint8_t kData = 0, kHeaders = 1, kRstStream = 3, kSettings = 4,
                  kPing = 6, kGoaway = 7, kWindowUpdate = 8;
constexpr uint8_t kEndStream = 1, kAck = 1, kEndHeaders = 4;

void AppendFrame(std::string* out, uint8_t type, uint8_t flags, uint32_t id,
                 const std::string& payload) {
  const size_t n = payload.size();
  const char h[9] = {static_cast<char>(n >> 16),  static_cast<char>(n >> 8),
                     static_cast<char>(n),        static_cast<char>(type),
                     static_cast<char>(flags),    static_cast<char>(id >> 24),
                     static_cast<char>(id >> 16), static_cast<char>(id >> 8),
                     static_cast<char>(id)};
  out->append(h, 9);
  out->append(payload);
}

// HPACK (RFC 7541) without Huffman or indexing: a gRPC request for `path`.
std::string RequestHeaders(const std::string& path) {
  std::string b;
  b += '\x83';  // :method POST
  b += '\x86';  // :scheme http
  auto literal = [&b](const std::string& name_prefix, const std::string& v) {
    b += name_prefix;
    b += static_cast<char>(v.size());
    b += v;
  };
  literal("\x04", path);                    // :path
  literal("\x01", "127.0.0.1");             // :authority
  literal("\x0f\x10", "application/grpc");  // content-type (index 31)
  literal(std::string("\x00\x02te", 4), "trailers");
  return b;
}

// A gRPC message frame (uncompressed) carrying EchoMessage{payload}.
std::string GrpcMessage(const std::string& payload) {
  std::string m;
  if (!payload.empty()) {
    m += '\x0a';
    m += static_cast<char>(payload.size());
    m += payload;
  }
  std::string out(1, '\0');
  const uint32_t n = static_cast<uint32_t>(m.size());
  out += static_cast<char>(n >> 24);
  out += static_cast<char>(n >> 16);
  out += static_cast<char>(n >> 8);
  out += static_cast<char>(n);
  return out + m;
}

struct Conn {
  int fd = -1;
  bool got_settings = false;
  bool got_ack = false;
  bool failed = false;
  std::string in;
  std::string out;
  int streams_with_data = 0;  // streams that got a DATA payload
  int ended = 0;              // streams ended (END_STREAM or RST_STREAM)
  int resets = 0;
  std::vector<uint32_t> data_seen;  // stream ids that got DATA
  // Whether received DATA octets are returned (WINDOW_UPDATE) at once.
  bool return_credit = true;
  // The server's SETTINGS_MAX_CONCURRENT_STREAMS (none: no limit).
  uint32_t max_streams = UINT32_MAX;
  // Connection-level send window (RFC 9113 6.9): DATA frames beyond it wait
  // in `blocked` (frame, payload length) until WINDOW_UPDATEs on stream 0.
  int64_t send_window = 65535;
  std::vector<std::pair<std::string, size_t>> blocked;
  size_t blocked_next = 0;
  // The DATA payload of stream `capture_id` (0: none) and whether that
  // stream ended.
  uint32_t capture_id = 0;
  std::string captured;
  bool capture_ended = false;

  bool ready() const { return got_settings && got_ack; }
};

class Client {
 public:
  explicit Client(int port) : port_(port), epfd_(epoll_create1(0)) {
    if (epfd_ < 0) Die("epoll_create1");
  }
  ~Client() {
    CloseAll();
    close(epfd_);
  }

  // Opens `n` connections at once; they complete as Run() runs. With a
  // `receive_window` (> 65,535) the connection-level receive window is
  // raised to it at once (as grpc++'s clients raise theirs) and never
  // returned; without one each received DATA frame's octets are returned
  // at once.
  void Open(int n, uint32_t receive_window = 0) {
    for (int i = 0; i < n; ++i) {
      auto c = std::make_unique<Conn>();
      c->fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
      if (c->fd < 0) Die(std::string("socket: ") + std::strerror(errno));
      int one = 1;
      setsockopt(c->fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
      sockaddr_in a{};
      a.sin_family = AF_INET;
      a.sin_port = htons(static_cast<uint16_t>(port_));
      a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
      if (connect(c->fd, reinterpret_cast<sockaddr*>(&a), sizeof(a)) != 0 &&
          errno != EINPROGRESS) {
        Die(std::string("connect: ") + std::strerror(errno));
      }
      c->out = "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n";
      AppendFrame(&c->out, kSettings, 0, 0, "");
      if (receive_window > 65535) {
        c->return_credit = false;
        const uint32_t inc = receive_window - 65535;
        const char w[4] = {static_cast<char>(inc >> 24),
                           static_cast<char>(inc >> 16),
                           static_cast<char>(inc >> 8), static_cast<char>(inc)};
        AppendFrame(&c->out, kWindowUpdate, 0, 0, std::string(w, 4));
      }
      epoll_event ev{};
      ev.events = EPOLLIN | EPOLLOUT;
      ev.data.ptr = c.get();
      epoll_ctl(epfd_, EPOLL_CTL_ADD, c->fd, &ev);
      conns_.push_back(std::move(c));
    }
  }

  // Runs until `done()` or 60 s (then exits the program naming `what`).
  template <typename F>
  void Run(const char* what, F done) {
    const Clock::time_point limit = Clock::now() + std::chrono::seconds(60);
    std::vector<epoll_event> evs(1024);
    while (!done()) {
      if (Clock::now() > limit) Die(std::string("timed out: ") + what);
      const int n = epoll_wait(epfd_, evs.data(), 1024, 100);
      for (int i = 0; i < n; ++i) {
        Conn* c = static_cast<Conn*>(evs[i].data.ptr);
        if (evs[i].events & (EPOLLOUT | EPOLLERR | EPOLLHUP)) Flush(c);
        if (evs[i].events & (EPOLLIN | EPOLLERR | EPOLLHUP)) Receive(c);
      }
    }
  }

  bool AllReady() const {
    for (const auto& c : conns_) {
      if (!c->ready()) return false;
    }
    return true;
  }

  std::vector<std::unique_ptr<Conn>>& conns() { return conns_; }

  void Send(Conn* c, const std::string& octets) {
    c->out += octets;
    Flush(c);
  }

  // Appends a DATA frame to `*out` when the connection's send window has room
  // (and nothing waits before it), else queues it until WINDOW_UPDATEs.
  static void AppendData(Conn* c, std::string* out, uint32_t id, uint8_t flags,
                         const std::string& payload) {
    const int64_t n = static_cast<int64_t>(payload.size());
    if (c->blocked_next == c->blocked.size() && c->send_window >= n) {
      c->send_window -= n;
      AppendFrame(out, kData, flags, id, payload);
      return;
    }
    std::string frame;
    AppendFrame(&frame, kData, flags, id, payload);
    c->blocked.emplace_back(std::move(frame), payload.size());
  }

  void CloseAll() {
    for (auto& c : conns_) close(c->fd);
    conns_.clear();
  }

 private:
  void Flush(Conn* c) {
    while (!c->out.empty()) {
      const ssize_t n = send(c->fd, c->out.data(), c->out.size(), MSG_NOSIGNAL);
      if (n < 0) {
        if (errno == EAGAIN || errno == EINTR) break;
        if (errno == ENOTCONN) return;  // connect still in progress
        c->failed = true;
        return;
      }
      c->out.erase(0, static_cast<size_t>(n));
    }
    epoll_event ev{};
    ev.events = EPOLLIN | (c->out.empty() ? 0u : uint32_t{EPOLLOUT});
    ev.data.ptr = c;
    epoll_ctl(epfd_, EPOLL_CTL_MOD, c->fd, &ev);
  }

  void Receive(Conn* c) {
    char buf[16384];
    for (;;) {
      const ssize_t n = read(c->fd, buf, sizeof(buf));
      if (n > 0) {
        c->in.append(buf, static_cast<size_t>(n));
        continue;
      }
      if (n == 0 || (errno != EAGAIN && errno != EINTR)) c->failed = true;
      break;
    }
    size_t pos = 0;
    std::string reply;
    while (c->in.size() - pos >= 9) {
      const uint8_t* h = reinterpret_cast<const uint8_t*>(c->in.data() + pos);
      const size_t len = (size_t{h[0]} << 16) | (size_t{h[1]} << 8) | h[2];
      if (c->in.size() - pos < 9 + len) break;
      const uint8_t type = h[3], flags = h[4];
      const uint32_t id = ((uint32_t{h[5]} & 0x7f) << 24) |
                          (uint32_t{h[6]} << 16) | (uint32_t{h[7]} << 8) | h[8];
      const std::string payload = c->in.substr(pos + 9, len);
      pos += 9 + len;
      if (type == kSettings) {
        if (flags & kAck) {
          c->got_ack = true;
        } else {
          c->got_settings = true;
          for (size_t i = 0; i + 6 <= payload.size(); i += 6) {
            const uint8_t* e =
                reinterpret_cast<const uint8_t*>(payload.data() + i);
            if (((e[0] << 8) | e[1]) == 3) {  // MAX_CONCURRENT_STREAMS
              c->max_streams = (uint32_t{e[2]} << 24) | (uint32_t{e[3]} << 16) |
                               (uint32_t{e[4]} << 8) | e[5];
            }
          }
          AppendFrame(&reply, kSettings, kAck, 0, "");
        }
      } else if (type == kPing && !(flags & kAck)) {
        AppendFrame(&reply, kPing, kAck, 0, payload);
      } else if (type == kWindowUpdate && id == 0 && len == 4) {
        const uint8_t* w = reinterpret_cast<const uint8_t*>(payload.data());
        c->send_window += ((int64_t{w[0]} & 0x7f) << 24) |
                          (int64_t{w[1]} << 16) | (int64_t{w[2]} << 8) | w[3];
        while (c->blocked_next < c->blocked.size() &&
               c->send_window >=
                   static_cast<int64_t>(c->blocked[c->blocked_next].second)) {
          auto& [frame, n] = c->blocked[c->blocked_next++];
          c->send_window -= static_cast<int64_t>(n);
          reply += frame;
          std::string().swap(frame);
        }
      } else if (type == kData || type == kHeaders) {
        if (type == kData && len > 0 && c->return_credit) {
          // Give the connection's receive window back at once.
          const uint32_t n = static_cast<uint32_t>(len);
          const char inc[4] = {static_cast<char>(n >> 24),
                               static_cast<char>(n >> 16),
                               static_cast<char>(n >> 8), static_cast<char>(n)};
          AppendFrame(&reply, kWindowUpdate, 0, 0, std::string(inc, 4));
        }
        if (id != 0 && id == c->capture_id) {
          if (type == kData) c->captured += payload;
          if (flags & kEndStream) c->capture_ended = true;
        }
        if (type == kData && len > 0 &&
            std::find(c->data_seen.begin(), c->data_seen.end(), id) ==
                c->data_seen.end()) {
          c->data_seen.push_back(id);
          ++c->streams_with_data;
        }
        if (flags & kEndStream) ++c->ended;
      } else if (type == kRstStream) {
        ++c->ended;
        ++c->resets;
        if (id == c->capture_id) c->capture_ended = true;
      } else if (type == kGoaway) {
        c->failed = true;
      }
    }
    c->in.erase(0, pos);
    if (!reply.empty()) Send(c, reply);
  }

  const int port_;
  const int epfd_;
  std::vector<std::unique_ptr<Conn>> conns_;
};

// ---- The measurements ----

struct Flags {
  int held_calls = 10000;
  int held_conns = 100;
  bool held_only = false;
  int conns = 5000;
  int reps = 3;
  int sync_streams = 200;
  int callback_calls = 1000;
  int idle_ms = 500;
  std::string ours_server, grpc_server;
};

constexpr int kStreamsPerConnection = 50;

struct Result {
  double accept_s = 0;
  double accept_cpu_ms = 0;
  double idle_kib = 0;
  double threads_start = 0;
  double threads_sync_burst = 0;
  double threads_after_idle = 0;
  double threads_callback_burst = 0;
};

// Sends `calls` requests for `path` over connections of 50 streams (the
// message, then END_STREAM unless `hold`), all at once.
void StartCalls(Client* client, int calls, const std::string& path,
                const std::string& payload, bool hold) {
  const int nconn = (calls + kStreamsPerConnection - 1) / kStreamsPerConnection;
  client->Open(nconn);
  client->Run("connections", [&] { return client->AllReady(); });
  const std::string headers = RequestHeaders(path);
  const std::string message = GrpcMessage(payload);
  int left = calls;
  for (auto& c : client->conns()) {
    std::string out;
    for (int i = 0; i < kStreamsPerConnection && left > 0; ++i, --left) {
      const uint32_t id = 1 + 2 * static_cast<uint32_t>(i);
      AppendFrame(&out, kHeaders, kEndHeaders, id, headers);
      Client::AppendData(c.get(), &out, id, hold ? 0 : kEndStream, message);
    }
    client->Send(c.get(), out);
  }
}

int Sum(Client* client, int Conn::*field) {
  int n = 0;
  for (auto& c : client->conns()) {
    if (c->failed) Die("a connection failed");
    n += (*c).*field;
  }
  return n;
}

Result Measure(const Flags& f, bool ours) {
  Result r;
  const std::string& bin = ours ? f.ours_server : f.grpc_server;
  std::vector<std::string> args = {bin};
  if (ours) args.push_back("--worker_idle_ms=" + std::to_string(f.idle_ms));
  Server server = StartServer(args);
  r.threads_start = static_cast<double>(Threads(server.pid));
  {
    // (1), (2)
    Client client(server.port);
    const long rss0 = RssKiB(server.pid);
    const double cpu0 = CpuSeconds(server.pid);
    const Clock::time_point t0 = Clock::now();
    client.Open(f.conns);
    client.Run("accept", [&] { return client.AllReady(); });
    r.accept_s = std::chrono::duration<double>(Clock::now() - t0).count();
    r.accept_cpu_ms = (CpuSeconds(server.pid) - cpu0) * 1e3;
    // Let the server finish what the last SETTINGS ACK started.
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    r.idle_kib = static_cast<double>(RssKiB(server.pid) - rss0) / f.conns;
  }
  {
    // (3)
    Client client(server.port);
    StartCalls(&client, f.sync_streams, "/rpcbench.Echo/Stream", "x", true);
    client.Run("sync streams", [&] {
      return Sum(&client, &Conn::streams_with_data) == f.sync_streams;
    });
    r.threads_sync_burst = static_cast<double>(Threads(server.pid));
    int left = f.sync_streams;
    for (auto& c : client.conns()) {
      std::string out;
      for (int i = 0; i < kStreamsPerConnection && left > 0; ++i, --left) {
        AppendFrame(&out, kData, kEndStream, 1 + 2 * static_cast<uint32_t>(i),
                    "");
      }
      client.Send(c.get(), out);
    }
    client.Run("sync streams end",
               [&] { return Sum(&client, &Conn::ended) == f.sync_streams; });
    if (Sum(&client, &Conn::resets) != 0) Die("sync streams reset");
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(f.idle_ms + 1000));
  r.threads_after_idle = static_cast<double>(Threads(server.pid));
  StopServer(&server);

  // (4)
  args.push_back("--callback=1");
  server = StartServer(args);
  {
    Client client(server.port);
    StartCalls(&client, f.callback_calls, "/rpcbench.Echo/Unary", "", false);
    client.Run("callback calls",
               [&] { return Sum(&client, &Conn::ended) == f.callback_calls; });
    if (Sum(&client, &Conn::resets) != 0) Die("callback calls reset");
    r.threads_callback_burst = static_cast<double>(Threads(server.pid));
  }
  StopServer(&server);
  return r;
}

// ---- (5) Held calls ----

// A unary call on `c` (stream `id`) to `path` with an empty request, run to
// its end; the response message's payload field.
std::string UnaryCall(Client* client, Conn* c, uint32_t id,
                      const std::string& path) {
  c->capture_id = id;
  c->captured.clear();
  c->capture_ended = false;
  std::string out;
  AppendFrame(&out, kHeaders, kEndHeaders, id, RequestHeaders(path));
  Client::AppendData(c, &out, id, kEndStream, GrpcMessage(""));
  client->Send(c, out);
  client->Run(path.c_str(), [&] {
    if (c->failed) Die("the stats connection failed");
    return c->capture_ended;
  });
  // The gRPC message: a 5-octet prefix, then field 1 (0x0a), a varint
  // length and the octets.
  const std::string& m = c->captured;
  if (m.size() < 7 || m[5] != '\x0a') return "";
  size_t pos = 6, len = 0;
  for (int shift = 0; pos < m.size(); shift += 7) {
    const uint8_t b = static_cast<uint8_t>(m[pos++]);
    len |= size_t{b & 0x7fu} << shift;
    if ((b & 0x80) == 0) break;
  }
  return m.substr(pos, len);
}

struct HeldStats {
  long held = 0;
  long heap = 0;
};

// Asks the Hold service for its "held=N heap=B".
HeldStats Stats(Client* client, Conn* c, uint32_t* next_id) {
  const std::string text =
      UnaryCall(client, c, *next_id, "/rpcbench.Hold/Stats");
  *next_id += 2;
  HeldStats s;
  if (std::sscanf(text.c_str(), "held=%ld heap=%ld", &s.held, &s.heap) != 2) {
    Die("bad Stats answer '" + text + "'");
  }
  return s;
}

// One held-call variant: unary or server-streaming, on 1 or --held_conns
// connections.
struct HeldResult {
  double rss_kib = 0;
  double heap_kib = 0;
  double threads = 0;
  double release_ms = 0;
};

constexpr const char* kHeldPaths[2] = {"/rpcbench.Hold/Unary",
                                       "/rpcbench.Hold/ServerStream"};

HeldResult MeasureHeld(const Flags& f, bool ours, bool streaming, int nconn) {
  HeldResult r;
  Server server =
      StartServer({ours ? f.ours_server : f.grpc_server, "--hold=1"});
  {
    Client client(server.port);
    // conns()[0] asks for the stats. A 1 GiB receive window (as grpc++'s
    // clients raise theirs): the answers never wait for credit.
    client.Open(nconn + 1, 1u << 30);
    client.Run("held connections", [&] { return client.AllReady(); });
    auto& conns = client.conns();
    Conn* stats = conns[0].get();
    uint32_t stats_id = 1;
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    const HeldStats s0 = Stats(&client, stats, &stats_id);
    const long rss0 = RssKiB(server.pid);
    // The calls, spread evenly, all at once.
    const std::string headers = RequestHeaders(kHeldPaths[streaming ? 1 : 0]);
    const std::string message = GrpcMessage("");
    const int per_conn = (f.held_calls + nconn - 1) / nconn;
    int left = f.held_calls;
    for (int i = 1; i <= nconn; ++i) {
      Conn* c = conns[i].get();
      if (static_cast<uint32_t>(per_conn) > c->max_streams) {
        Die("the server allows " + std::to_string(c->max_streams) +
            " streams per connection, below " + std::to_string(per_conn));
      }
      std::string out;
      for (int k = 0; k < per_conn && left > 0; ++k, --left) {
        const uint32_t id = 1 + 2 * static_cast<uint32_t>(k);
        AppendFrame(&out, kHeaders, kEndHeaders, id, headers);
        Client::AppendData(c, &out, id, kEndStream, message);
      }
      client.Send(c, out);
    }
    auto calls_ended = [&] {
      int n = 0;
      for (size_t i = 1; i < conns.size(); ++i) {
        if (conns[i]->failed) Die("a held-call connection failed");
        n += conns[i]->ended;
      }
      return n;
    };
    // Until every call reached its handler; none may end before Release.
    const Clock::time_point limit = Clock::now() + std::chrono::seconds(60);
    for (;;) {
      const Clock::time_point poll =
          Clock::now() + std::chrono::milliseconds(50);
      client.Run("held calls", [&] { return Clock::now() >= poll; });
      if (calls_ended() > 0) Die("held calls: one ended before Release");
      if (Stats(&client, stats, &stats_id).held - s0.held >= f.held_calls) {
        break;
      }
      if (Clock::now() > limit) Die("held calls: not all held in 60 s");
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    const HeldStats s1 = Stats(&client, stats, &stats_id);
    r.rss_kib = static_cast<double>(RssKiB(server.pid) - rss0) / f.held_calls;
    r.heap_kib = static_cast<double>(s1.heap - s0.heap) / 1024.0 / f.held_calls;
    r.threads = static_cast<double>(Threads(server.pid));
    // Progress: Release answers every held call (a message, then OK).
    const Clock::time_point t0 = Clock::now();
    UnaryCall(&client, stats, stats_id, "/rpcbench.Hold/Release");
    client.Run("held calls released",
               [&] { return calls_ended() == f.held_calls; });
    r.release_ms =
        std::chrono::duration<double>(Clock::now() - t0).count() * 1e3;
    int resets = 0, with_data = 0;
    for (size_t i = 1; i < conns.size(); ++i) {
      resets += conns[i]->resets;
      with_data += conns[i]->streams_with_data;
    }
    if (resets != 0 || with_data != f.held_calls) {
      Die("released held calls: " + std::to_string(resets) + " reset, " +
          std::to_string(with_data) + " of " + std::to_string(f.held_calls) +
          " answered");
    }
  }
  StopServer(&server);
  return r;
}

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

void RaiseNofile(int needed) {
  rlimit rl{};
  getrlimit(RLIMIT_NOFILE, &rl);
  rl.rlim_cur = rl.rlim_max;
  setrlimit(RLIMIT_NOFILE, &rl);
  if (rl.rlim_cur < static_cast<rlim_t>(needed)) {
    Die("RLIMIT_NOFILE hard limit " + std::to_string(rl.rlim_max) +
        " is below " + std::to_string(needed));
  }
}

}  // namespace

int main(int argc, char** argv) {
  Flags f;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto val = [&a](const char* name) -> const char* {
      const size_t n = std::strlen(name);
      return a.compare(0, n, name) == 0 ? a.c_str() + n : nullptr;
    };
    if (const char* v = val("--conns=")) f.conns = std::atoi(v);
    if (const char* v = val("--held_calls=")) f.held_calls = std::atoi(v);
    if (const char* v = val("--held_conns=")) f.held_conns = std::atoi(v);
    if (const char* v = val("--held_only=")) f.held_only = std::atoi(v) != 0;
    if (const char* v = val("--reps=")) f.reps = std::atoi(v);
    if (const char* v = val("--sync_streams=")) f.sync_streams = std::atoi(v);
    if (const char* v = val("--callback_calls=")) {
      f.callback_calls = std::atoi(v);
    }
    if (const char* v = val("--idle_ms=")) f.idle_ms = std::atoi(v);
    if (const char* v = val("--ours_server=")) f.ours_server = v;
    if (const char* v = val("--grpc_server=")) f.grpc_server = v;
  }
  if (f.ours_server.empty() || f.grpc_server.empty()) {
    Die("--ours_server= and --grpc_server= are required");
  }
  // Ours and the server (a child, which inherits the limit) each hold one
  // fd per connection.
  RaiseNofile(std::max(f.conns, f.held_conns) + 256);
  signal(SIGPIPE, SIG_IGN);
  // (5)'s variants: unary or server streaming, on 1 or --held_conns
  // connections.
  struct HeldVariant {
    bool streaming;
    int conns;
  };
  std::vector<HeldVariant> variants;
  if (f.held_calls > 0) {
    for (bool streaming : {false, true}) {
      variants.push_back({streaming, 1});
      if (f.held_conns > 1) variants.push_back({streaming, f.held_conns});
    }
  }
  std::vector<Result> ours, grpc;
  std::vector<std::vector<HeldResult>> ours_held(variants.size()),
      grpc_held(variants.size());
  for (int rep = 0; rep < f.reps; ++rep) {
    for (bool first_ours : {rep % 2 == 0, rep % 2 != 0}) {
      if (!f.held_only)
        (first_ours ? ours : grpc).push_back(Measure(f, first_ours));
      for (size_t v = 0; v < variants.size(); ++v) {
        (first_ours ? ours_held : grpc_held)[v].push_back(MeasureHeld(
            f, first_ours, variants[v].streaming, variants[v].conns));
      }
    }
  }
  auto med = [](const std::vector<Result>& v, double Result::*field) {
    std::vector<double> x;
    for (const Result& r : v) x.push_back(r.*field);
    return Median(x);
  };
  struct Row {
    std::string name;
    double Result::*field;
    const char* format;
  };
  const std::vector<Row> rows = {
      {"accept " + std::to_string(f.conns) + " connections, s",
       &Result::accept_s, "%.3f"},
      {"server CPU for those, ms", &Result::accept_cpu_ms, "%.0f"},
      {"server RSS per idle connection, KiB", &Result::idle_kib, "%.1f"},
      {"server threads at start", &Result::threads_start, "%.0f"},
      {"threads with " + std::to_string(f.sync_streams) + " sync streams open",
       &Result::threads_sync_burst, "%.0f"},
      {"threads " + std::to_string(f.idle_ms + 1000) + " ms after them",
       &Result::threads_after_idle, "%.0f"},
      {"threads after " + std::to_string(f.callback_calls) +
           " callback unary calls",
       &Result::threads_callback_burst, "%.0f"},
  };
  std::printf("median of %d repetitions (interleaved)\n\n", f.reps);
  if (!f.held_only) {
    std::printf("| workload | ours | grpc++ | ours / grpc++ |\n");
    std::printf("|---|---:|---:|---:|\n");
    for (const Row& row : rows) {
      const double a = med(ours, row.field), b = med(grpc, row.field);
      char sa[32], sb[32];
      std::snprintf(sa, sizeof(sa), row.format, a);
      std::snprintf(sb, sizeof(sb), row.format, b);
      std::printf("| %s | %s | %s | %.2f |\n", row.name.c_str(), sa, sb,
                  b != 0 ? a / b : 0.0);
    }
  }
  if (variants.empty()) return 0;
  // (5)
  auto held_med = [](const std::vector<HeldResult>& v,
                     double HeldResult::*field) {
    std::vector<double> x;
    for (const HeldResult& r : v) x.push_back(r.*field);
    return Median(x);
  };
  struct HeldColumn {
    const char* title;
    double HeldResult::*field;
    const char* format;
  };
  const HeldColumn columns[] = {
      {"RSS KiB/call", &HeldResult::rss_kib, "%.2f"},
      {"heap KiB/call", &HeldResult::heap_kib, "%.2f"},
      {"threads", &HeldResult::threads, "%.0f"},
      {"release ms", &HeldResult::release_ms, "%.0f"},
  };
  std::printf("\n| held calls (idle, server) | ");
  for (const HeldColumn& c : columns) {
    std::printf("ours %s | grpc++ %s | ours / grpc++ | ", c.title, c.title);
  }
  std::printf("\n|---|");
  for (size_t i = 0; i < 3 * (sizeof(columns) / sizeof(columns[0])); ++i) {
    std::printf("---:|");
  }
  std::printf("\n");
  for (size_t v = 0; v < variants.size(); ++v) {
    std::printf("| %s, %d on %d connection%s | ",
                variants[v].streaming ? "server streaming" : "unary",
                f.held_calls, variants[v].conns,
                variants[v].conns == 1 ? "" : "s");
    for (const HeldColumn& c : columns) {
      const double a = held_med(ours_held[v], c.field);
      const double b = held_med(grpc_held[v], c.field);
      for (double x : {a, b}) {
        std::printf(c.format, x);
        std::printf(" | ");
      }
      if (b == 0) {
        std::printf("- | ");
      } else {
        std::printf("%.2f | ", a / b);
      }
    }
    std::printf("\n");
  }
  return 0;
}
