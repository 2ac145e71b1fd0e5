#include "transport/testing/full_backlog_listener.h"

#include <netinet/in.h>
#include <sys/socket.h>

#include <algorithm>
#include <cstdio>
#include <utility>

namespace transport {
namespace testing {

namespace {

// With backlog 0 the queue holds one connection; eight connects fill it and
// leave the rest in SYN_SENT.
constexpr int kFillers = 8;

constexpr unsigned kSynSent = 2;  // /proc/net/tcp's "st" column

}  // namespace

FullBacklogListener::FullBacklogListener() {
  listen_fd_.reset(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
  if (!listen_fd_.valid()) return;
  const SocketAddress any = SocketAddress::Loopback(AF_INET, 0);
  if (::bind(listen_fd_.get(), any.addr(), any.len()) != 0 ||
      ::listen(listen_fd_.get(), 0) != 0) {
    listen_fd_.reset();
    return;
  }
  auto local = SocketAddress::LocalOf(listen_fd_.get());
  if (!local.ok()) {
    listen_fd_.reset();
    return;
  }
  address_ = *std::move(local);
  for (int i = 0; i < kFillers; ++i) {
    ScopedFd fd(
        ::socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0));
    if (!fd.valid()) continue;
    // EINPROGRESS for those left waiting; the local port is bound either way.
    ::connect(fd.get(), address_.addr(), address_.len());
    auto mine = SocketAddress::LocalOf(fd.get());
    if (!mine.ok()) continue;
    filler_ports_.push_back(mine->port());
    fillers_.push_back(std::move(fd));
  }
}

bool FullBacklogListener::Holds() const {
  return listen_fd_.valid() && SynSentToListener(/*fillers=*/true) > 0;
}

int FullBacklogListener::SynSentToListener(bool fillers) const {
  if (!listen_fd_.valid()) return -1;
  FILE* f = std::fopen("/proc/net/tcp", "r");
  if (f == nullptr) return -1;
  // 127.0.0.1 as /proc/net/tcp prints it: the address in host order of the
  // network-order bytes (little-endian: 0100007F).
  const unsigned loopback = htonl(INADDR_LOOPBACK);
  char line[512];
  int n = 0;
  while (std::fgets(line, sizeof(line), f) != nullptr) {
    unsigned local_ip, local_port, remote_ip, remote_port, state;
    if (std::sscanf(line, " %*d: %x:%x %x:%x %x", &local_ip, &local_port,
                    &remote_ip, &remote_port, &state) != 5) {
      continue;  // the header line
    }
    if (state != kSynSent || remote_ip != loopback ||
        remote_port != address_.port()) {
      continue;
    }
    const bool is_filler = std::find(filler_ports_.begin(), filler_ports_.end(),
                                     local_port) != filler_ports_.end();
    if (is_filler == fillers) ++n;
  }
  std::fclose(f);
  return n;
}

}  // namespace testing
}  // namespace transport
