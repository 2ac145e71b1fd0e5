// The floor of //benchmarks:rpc_benchmark: a raw loopback TCP ping-pong of
// 64-octet messages between two processes, TCP_NODELAY on both ends, no rpc
// stack. What one sequential round trip costs the kernel and the scheduler,
// against which (a) is read.
//
//   pingpong --mode=server [--port=N] [--spin=1]
//     listens on 127.0.0.1:N (0: any), prints "PORT <n>", accepts one
//     connection and echoes every 64-octet message until EOF.
//   pingpong --mode=client --port=N [--server_pid=PID] [--duration=S]
//            [--spin=1]
//     sends a message and waits for its echo, for S seconds (3) after a
//     warm-up, measured as workload (a) is (rpcbench::RunSequential): prints
//     the RESULT lines of (a) (a_calls_per_s, a_p50_us, a_p99_us, context
//     switches per round trip), which the driver files under the floor rows.
//
// --spin=0 (default) blocks in read(); --spin=1 makes the socket non-blocking
// and retries read() on EAGAIN without sleeping, on both ends.

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "benchmarks/rpc_bench/bench_util.h"

namespace {

constexpr size_t kMessage = 64;

struct Options {
  std::string mode;
  int port = 0;
  int server_pid = 0;
  double duration_s = 3;
  bool spin = false;
};

Options Parse(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    const char* a = argv[i];
    auto val = [&](const char* name) { return rpcbench::FlagValue(a, name); };
    if (const char* v = val("--mode")) {
      o.mode = v;
    } else if (const char* v = val("--port")) {
      o.port = std::atoi(v);
    } else if (const char* v = val("--server_pid")) {
      o.server_pid = std::atoi(v);
    } else if (const char* v = val("--duration")) {
      o.duration_s = std::atof(v);
    } else if (const char* v = val("--spin")) {
      o.spin = std::strcmp(v, "1") == 0;
    } else {
      std::fprintf(stderr, "unknown flag %s\n", a);
      std::exit(2);
    }
  }
  if (o.mode != "server" && o.mode != "client") {
    std::fprintf(stderr, "--mode=server or --mode=client is required\n");
    std::exit(2);
  }
  if (o.mode == "client" && o.port <= 0) {
    std::fprintf(stderr, "--port is required\n");
    std::exit(2);
  }
  return o;
}

void Die(const char* what) {
  std::perror(what);
  std::exit(1);
}

void Configure(int fd, bool spin) {
  int one = 1;
  if (setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one)) != 0) {
    Die("TCP_NODELAY");
  }
  if (spin && fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK) != 0) {
    Die("O_NONBLOCK");
  }
}

// Reads exactly kMessage octets; false on EOF or error. Spins on EAGAIN when
// the socket is non-blocking.
bool ReadMessage(int fd, char* buf) {
  size_t got = 0;
  while (got < kMessage) {
    ssize_t n = read(fd, buf + got, kMessage - got);
    if (n > 0) {
      got += n;
    } else if (n == 0) {
      return false;
    } else if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) {
      return false;
    }
  }
  return true;
}

// Writes kMessage octets; 64 octets fit in any socket buffer, so a
// non-blocking write only retries on EINTR (or a full buffer, spinning).
bool WriteMessage(int fd, const char* buf) {
  size_t put = 0;
  while (put < kMessage) {
    ssize_t n = write(fd, buf + put, kMessage - put);
    if (n > 0) {
      put += n;
    } else if (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK &&
               errno != EINTR) {
      return false;
    }
  }
  return true;
}

sockaddr_in Loopback(int port) {
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = htons(static_cast<uint16_t>(port));
  return addr;
}

int Server(const Options& o) {
  int lfd = socket(AF_INET, SOCK_STREAM, 0);
  if (lfd < 0) Die("socket");
  int one = 1;
  setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
  sockaddr_in addr = Loopback(o.port);
  if (bind(lfd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) {
    Die("bind");
  }
  if (listen(lfd, 1) != 0) Die("listen");
  socklen_t len = sizeof(addr);
  getsockname(lfd, reinterpret_cast<sockaddr*>(&addr), &len);
  std::printf("PORT %d\n", ntohs(addr.sin_port));
  std::fflush(stdout);
  int fd = accept(lfd, nullptr, nullptr);
  if (fd < 0) Die("accept");
  close(lfd);
  Configure(fd, o.spin);
  char buf[kMessage];
  while (ReadMessage(fd, buf)) {
    if (!WriteMessage(fd, buf)) break;
  }
  close(fd);
  return 0;
}

int Client(const Options& o) {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) Die("socket");
  sockaddr_in addr = Loopback(o.port);
  if (connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) {
    Die("connect");
  }
  Configure(fd, o.spin);
  char out[kMessage], in[kMessage];
  std::memset(out, 'x', sizeof(out));
  auto round_trip = [&] {
    if (!WriteMessage(fd, out) || !ReadMessage(fd, in)) {
      std::fprintf(stderr, "pingpong: connection lost\n");
      return false;
    }
    return true;
  };
  rpcbench::Flags flags;
  flags.port = o.port;
  flags.server_pid = o.server_pid;
  flags.duration_s = o.duration_s;
  const bool ok = rpcbench::RunSequential(flags, round_trip);
  close(fd);  // the server sees EOF and exits
  return ok ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  const Options o = Parse(argc, argv);
  return o.mode == "server" ? Server(o) : Client(o);
}
