// FullBacklogListener: a loopback listener nobody accepts from, with the
// smallest backlog, its accept queue filled by connects of its own: the kernel
// then drops every further SYN, so a connect to it stays in SYN_SENT (the SYN
// is retried for minutes, net.ipv4.tcp_syn_retries) until it is abandoned or
// times out. For tests of connect timeouts and of cancelled connects.
//
//   FullBacklogListener hanging;
//   ASSERT_TRUE(hanging.Holds()) << "the backlog does not hold a SYN";
//   TcpConnect(loop, hanging.address(), ...);   // hangs
//   EXPECT_EQ(hanging.PendingConnects(), 1);    // that connect, in SYN_SENT
//
// The fillers left in SYN_SENT expire after tcp_syn_retries too, so
// PendingConnects() counts only sockets that are not fillers (by local port).
// IPv4 (127.0.0.1) only; /proc/net/tcp is read for the states.

#ifndef TRANSPORT_TESTING_FULL_BACKLOG_LISTENER_H_
#define TRANSPORT_TESTING_FULL_BACKLOG_LISTENER_H_

#include <cstdint>
#include <vector>

#include "transport/io/socket.h"

namespace transport {
namespace testing {

class FullBacklogListener {
 public:
  // Sets up (errors show in Holds()).
  FullBacklogListener();

  const SocketAddress& address() const { return address_; }
  uint16_t port() const { return address_.port(); }

  // True when the listener was set up and its queue is full: at least one of
  // its own connects is left in SYN_SENT, so the next one is dropped too.
  bool Holds() const;

  // Connects in progress (SYN_SENT) to the listener other than its fillers:
  // the code under test's. -1 where /proc/net/tcp cannot be read.
  int PendingConnects() const { return SynSentToListener(/*fillers=*/false); }

 private:
  // SYN_SENT sockets to the listener whose local port is (`fillers`) or is
  // not (!`fillers`) a filler's.
  int SynSentToListener(bool fillers) const;

  ScopedFd listen_fd_;
  SocketAddress address_;
  std::vector<ScopedFd> fillers_;
  std::vector<uint16_t> filler_ports_;
};

}  // namespace testing
}  // namespace transport

#endif  // TRANSPORT_TESTING_FULL_BACKLOG_LISTENER_H_
