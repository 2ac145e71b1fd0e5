// What rpc/channel_*_test.cc share: named backends (our servers answering
// with their name and counting their calls), one unary call, an async
// call's state, the channel arguments of fast reconnects, a bounded wait for
// a connectivity state, plain listeners nobody serves, a dead port and the
// established or connecting connections to an address (/proc/net/tcp).

#ifndef RPC_TESTING_CHANNEL_TESTING_H_
#define RPC_TESTING_CHANNEL_TESTING_H_

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <memory>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/notification.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "rpc/rpc.h"
#include "rpc/testdata/test_service.rpc.pb.h"

namespace rpc {
namespace channel_testing {

using test::EchoRequest;
using test::EchoResponse;
using test::EchoService;

// Answers with its name and counts its calls.
class NamedService final : public EchoService::Service {
 public:
  explicit NamedService(std::string name) : name_(std::move(name)) {}
  Status Echo(ServerContext* /*ctx*/, const EchoRequest* req,
              EchoResponse* resp) override {
    ++calls;
    if (req->sleep_ms() > 0)
      absl::SleepFor(absl::Milliseconds(req->sleep_ms()));
    resp->set_message(name_);
    return Status::OK;
  }
  std::atomic<int> calls{0};

 private:
  const std::string name_;
};

struct Backend {
  std::unique_ptr<NamedService> service;
  std::unique_ptr<Server> server;
};

// A server on `address` ("host:port", port 0: any); nullptr server when the
// port is taken.
inline Backend StartBackend(const std::string& name, const std::string& address,
                            int* port) {
  Backend b;
  b.service = std::make_unique<NamedService>(name);
  int selected = 0;
  b.server =
      ServerBuilder()
          .AddListeningPort(address, InsecureServerCredentials(), &selected)
          .RegisterService(b.service.get())
          .BuildAndStart();
  const bool unix = address.rfind("unix:", 0) == 0;  // No port.
  if (b.server != nullptr && selected == 0 && !unix) b.server.reset();
  if (port != nullptr) *port = selected;
  return b;
}

// Two servers, "a" on 127.0.0.2:P and "b" on 127.0.0.3:P.
inline bool StartPair(Backend* a, Backend* b, int* port) {
  for (int attempt = 0; attempt < 20; ++attempt) {
    *a = StartBackend("a", "127.0.0.2:0", port);
    if (a->server == nullptr) continue;
    *b = StartBackend("b", absl::StrCat("127.0.0.3:", *port), nullptr);
    if (b->server != nullptr) return true;
    a->server->Shutdown(absl::Now());
  }
  return false;
}

// One unary call; *who gets the server's name.
inline Status Call(EchoService::Stub* stub, bool wait_for_ready,
                   absl::Duration timeout, std::string* who = nullptr) {
  ClientContext ctx;
  ctx.set_deadline(absl::Now() + timeout);
  ctx.set_wait_for_ready(wait_for_ready);
  EchoRequest req;
  EchoResponse resp;
  Status s = stub->Echo(&ctx, req, &resp);
  if (who != nullptr) *who = resp.message();
  return s;
}

// Fast reconnects for tests.
inline ChannelArguments TestArgs(const std::string& policy) {
  ChannelArguments args;
  args.SetLoadBalancingPolicyName(policy);
  args.initial_backoff = absl::Milliseconds(100);
  args.max_backoff = absl::Milliseconds(300);
  args.min_connect_timeout = absl::Seconds(2);
  args.dns_min_time_between_resolutions = absl::Milliseconds(200);
  return args;
}

// A TCP socket listening on `ip` (its port in *port) that nobody serves; -1
// on failure. The caller closes it.
inline int Listener(const char* ip, int backlog, int* port) {
  const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return -1;
  sockaddr_in addr = {};
  addr.sin_family = AF_INET;
  inet_pton(AF_INET, ip, &addr.sin_addr);
  socklen_t len = sizeof(addr);
  if (bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0 ||
      listen(fd, backlog) != 0 ||
      getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
    close(fd);
    return -1;
  }
  *port = ntohs(addr.sin_port);
  return fd;
}

inline int LoopbackListener(int backlog, int* port) {
  return Listener("127.0.0.1", backlog, port);
}

// A port where nothing listens (a server's, after it stopped).
inline int DeadPort() {
  int port = 0;
  Backend b = StartBackend("x", "127.0.0.1:0", &port);
  b.server->Shutdown(absl::Now());
  return port;
}

// TCP sockets in `state` (/proc/net/tcp's hex: 1 ESTABLISHED, 2 SYN_SENT)
// whose local end (`remote` false) or remote end (`remote` true) is
// `ip`:`port`.
inline int TcpSocketsAt(const char* ip, int port, bool remote, unsigned state) {
  in_addr a;
  inet_pton(AF_INET, ip, &a);
  char end[32];
  snprintf(end, sizeof(end), "%08X:%04X", a.s_addr, port);
  FILE* f = fopen("/proc/net/tcp", "r");
  if (f == nullptr) return -1;
  char line[512];
  int n = 0;
  while (fgets(line, sizeof(line), f) != nullptr) {
    char l[64], r[64];
    unsigned st = 0;
    if (sscanf(line, " %*d: %63s %63s %x", l, r, &st) == 3 &&
        std::string(remote ? r : l) == end && st == state) {
      ++n;
    }
  }
  fclose(f);
  return n;
}

// Established connections whose local end is `ip`:`port` (the server's
// side).
inline int EstablishedTo(const char* ip, int port) {
  return TcpSocketsAt(ip, port, /*remote=*/false, 1 /* ESTABLISHED */);
}

// Waits (bounded) until the channel is in `want` (asking an IDLE channel to
// connect first when `try_to_connect`).
inline bool WaitForState(Channel* channel, ConnectivityState want,
                         absl::Duration timeout, bool try_to_connect = true) {
  const absl::Time deadline = absl::Now() + timeout;
  ConnectivityState s = channel->GetState(try_to_connect);
  while (s != want) {
    if (!channel->WaitForStateChange(s, deadline)) return false;
    s = channel->GetState(false);
  }
  return true;
}

// An async unary call's state, on the heap: a test that gives up on a stuck
// loop leaks it rather than freeing what the loop may still touch.
struct AsyncEcho {
  ClientContext ctx;
  EchoRequest req;
  EchoResponse resp;
  Status status;
  absl::Notification done;
};

}  // namespace channel_testing
}  // namespace rpc

#endif  // RPC_TESTING_CHANNEL_TESTING_H_
