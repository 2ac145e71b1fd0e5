// A process that exits while a loop thread is in a TLS handshake: the
// process-wide loop group is never stopped, so a channel still connecting
// at exit (one never destroyed: a static, a leak) leaves the handshake going
// on its loop, and the next step of the handshake may come while exit()
// runs. (A destroyed channel cancels its TLS connect: channel_connect_test.)
// OpenSSL must not free its global state at exit then (its at-exit cleanup,
// which tls.cc turns off with OPENSSL_INIT_NO_ATEXIT; ours_to_grpcpp_tls_test
// and ours_to_ours_tls_test crashed there in cancel_after_begin and
// timeout_on_sleeping_server).
//
// Two checks in a child that exits during its handshake. Its OPENSSL_atexit
// handler tells the parent if OpenSSL's cleanup runs at all ('X' on the pipe
// before its EOF), whatever the order of the at-exit handlers: tls.cc
// initializes OpenSSL before main, so a cleanup would be registered before
// the child's own at-exit handler and run after it. That handler holds
// exit() while the parent lets the server's first flight through (a proxy
// in front of a TLS server) and waits for the child's answer: its Finished
// when OpenSSL works during exit(), an alert (or a crash, as the interop
// client's) when it does not.
//
// The child's channel is leaked on purpose (a static or leaked channel
// still connecting at exit is realistic), so after its Finished (TLS 1.3) the
// handshake is complete during exit(): the loop thread goes on into the
// subchannel's OnConnected and starts a ClientTransport (its preface and
// SETTINGS) while the main thread runs the remaining at-exit handlers and
// static destructors. That must not crash either: it is part of what is
// tested. The child's exit status tells a crash, and the 'X' tells whether
// OpenSSL's cleanup ran before it, so the failure says which of the two it
// most likely was (no finer: both run on in the same exit()).
//
// Its own binary: it forks, and the child must carry no other test's
// threads, servers or channels.

#include <errno.h>
#include <netinet/in.h>
#include <openssl/crypto.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <memory>
#include <string>

#include "absl/cleanup/cleanup.h"
#include "absl/time/clock.h"
#include "gtest/gtest.h"
#include "rpc/rpc.h"
#include "transport/testing/subprocess.h"
#include "transport/testing/test_certs.h"

namespace rpc {
namespace {

constexpr int kWaitMs = 20000;  // Every wait: only a hang reaches it.

// One byte from `fd` within kWaitMs; -1 on timeout, EOF or error.
int ReadByte(int fd) {
  pollfd p{fd, POLLIN, 0};
  if (poll(&p, 1, kWaitMs) != 1) return -1;
  unsigned char c = 0;
  return read(fd, &c, 1) == 1 ? c : -1;
}

bool WriteAll(int fd, const void* data, size_t size) {
  const char* p = static_cast<const char*>(data);
  while (size > 0) {
    const ssize_t n = write(fd, p, size);
    if (n <= 0) return false;
    p += n;
    size -= static_cast<size_t>(n);
  }
  return true;
}

int g_to_parent = -1;
int g_from_parent = -1;
// The child's channel, never destroyed: still connecting when exit() runs.
std::shared_ptr<Channel>* g_channel = nullptr;

// Runs first in OpenSSL's cleanup, if it runs.
void OnOpenSslCleanup() {
  const char c = 'X';
  WriteAll(g_to_parent, &c, 1);
}

// The child's at-exit handler: the parent lets the server's flight reach the
// child's loop now, and says when the child reacted to it (or its
// connection closed). Then exit() goes on, through OpenSSL's cleanup if it
// has one.
void DuringExit() {
  const char c = 'c';
  WriteAll(g_to_parent, &c, 1);
  ReadByte(g_from_parent);
}

[[noreturn]] void Child(const int (&to_parent)[2], const int (&to_child)[2]) {
  close(to_parent[0]);
  close(to_child[1]);
  const int from_parent = to_child[0];
  g_to_parent = to_parent[1];
  g_from_parent = from_parent;
  if (OPENSSL_atexit(&OnOpenSslCleanup) != 1) _exit(4);
  atexit(&DuringExit);
  // The proxy's port (2 octets), the CA's length (4), the CA (PEM).
  uint32_t h[6];
  for (uint32_t& b : h) {
    const int c = ReadByte(from_parent);
    if (c < 0) _exit(2);
    b = static_cast<uint32_t>(c);
  }
  const int port = static_cast<int>(h[0] << 8 | h[1]);
  const uint32_t ca_size = h[2] << 24 | h[3] << 16 | h[4] << 8 | h[5];
  SslCredentialsOptions options;
  options.pem_root_certs.resize(ca_size);
  for (char& c : options.pem_root_certs) {
    const int b = ReadByte(from_parent);
    if (b < 0) _exit(2);
    c = static_cast<char>(b);
  }
  g_channel = new std::shared_ptr<Channel>(CreateChannel(
      "127.0.0.1:" + std::to_string(port), SslCredentials(options)));
  (*g_channel)->GetState(/*try_to_connect=*/true);
  // The parent holds the ClientHello: the handshake waits for the server.
  if (ReadByte(from_parent) != 'h') _exit(3);
  exit(0);  // The channel lives on: its TLS connect goes on, on the loop.
}

int Listen(int* port) {
  const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof(a);
  if (fd < 0 || bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof(a)) != 0 ||
      listen(fd, 1) != 0 ||
      getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len) != 0) {
    return -1;
  }
  *port = ntohs(a.sin_port);
  return fd;
}

int Connect(int port) {
  const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  a.sin_port = htons(static_cast<uint16_t>(port));
  if (fd < 0 || connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof(a)) != 0) {
    return -1;
  }
  return fd;
}

TEST(TlsExitTest, ExitDuringAHandshakeOnTheLoop) {
  int to_child[2], to_parent[2];
  ASSERT_EQ(pipe(to_child), 0);
  ASSERT_EQ(pipe(to_parent), 0);
  // No thread yet in this process (its own binary).
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) Child(to_parent, to_child);
  close(to_parent[1]);
  close(to_child[0]);
  // Closes this side's pipe ends, and kills and reaps the child if an
  // ASSERT below returns before WaitForChild did.
  bool reaped = false;
  const auto cleanup = absl::MakeCleanup([&] {
    close(to_child[1]);
    close(to_parent[0]);
    if (reaped) return;
    kill(child, SIGKILL);
    while (waitpid(child, nullptr, 0) < 0 && errno == EINTR) {
    }
  });

  const auto& certs = transport::testing::GetTestCertificates();
  ASSERT_TRUE(certs.ok()) << certs.status();
  SslServerCredentialsOptions options;
  options.pem_key_cert_pairs.push_back(
      {certs->server_key_pem, certs->server_chain_pem});
  int server_port = 0;
  std::unique_ptr<Server> server =
      ServerBuilder()
          .AddListeningPort("127.0.0.1:0", SslServerCredentials(options),
                            &server_port)
          .BuildAndStart();
  ASSERT_NE(server, nullptr);
  int proxy_port = 0;
  const int listener = Listen(&proxy_port);
  ASSERT_GE(listener, 0);
  const uint32_t ca_size = static_cast<uint32_t>(certs->ca_pem.size());
  const unsigned char header[6] = {
      static_cast<unsigned char>(proxy_port >> 8),
      static_cast<unsigned char>(proxy_port & 0xff),
      static_cast<unsigned char>(ca_size >> 24),
      static_cast<unsigned char>(ca_size >> 16 & 0xff),
      static_cast<unsigned char>(ca_size >> 8 & 0xff),
      static_cast<unsigned char>(ca_size & 0xff)};
  ASSERT_TRUE(WriteAll(to_child[1], header, sizeof(header)));
  ASSERT_TRUE(WriteAll(to_child[1], certs->ca_pem.data(), ca_size));

  pollfd p{listener, POLLIN, 0};
  ASSERT_EQ(poll(&p, 1, kWaitMs), 1) << "the child did not connect";
  const int from_client = accept4(listener, nullptr, nullptr, SOCK_CLOEXEC);
  ASSERT_GE(from_client, 0);
  std::string hello(16 << 10, '\0');
  p = pollfd{from_client, POLLIN, 0};
  ASSERT_EQ(poll(&p, 1, kWaitMs), 1) << "no ClientHello";
  const ssize_t got = read(from_client, &hello[0], hello.size());
  ASSERT_GT(got, 0);
  hello.resize(static_cast<size_t>(got));
  ASSERT_TRUE(WriteAll(to_child[1], "h", 1));
  // The child's exit has begun.
  const int exiting = ReadByte(to_parent[0]);
  ASSERT_NE(exiting, 'X') << "OpenSSL's at-exit cleanup ran";
  ASSERT_EQ(exiting, 'c');

  // Now the handshake goes on: the ClientHello to the server, the server's
  // flight to the child's loop, until the child answers it or closes.
  const int to_server = Connect(server_port);
  ASSERT_GE(to_server, 0);
  ASSERT_TRUE(WriteAll(to_server, hello.data(), hello.size()));
  bool server_spoke = false, client_reacted = false;
  int answer = -1;  // The first octet the child sent after the server's.
  const absl::Time deadline = absl::Now() + absl::Milliseconds(kWaitMs);
  char buf[16 << 10];
  while (!client_reacted && absl::Now() < deadline) {
    pollfd fds[2] = {{from_client, POLLIN, 0}, {to_server, POLLIN, 0}};
    if (poll(fds, 2, 100) <= 0) continue;
    if (fds[1].revents != 0) {
      const ssize_t n = read(to_server, buf, sizeof(buf));
      if (n <= 0) break;
      server_spoke = true;
      if (!WriteAll(from_client, buf, static_cast<size_t>(n))) {
        client_reacted = true;  // Closed.
      }
    }
    if (fds[0].revents != 0) {
      const ssize_t n = read(from_client, buf, sizeof(buf));
      if (server_spoke) {
        client_reacted = true;  // Answered, or closed.
        if (n > 0) answer = static_cast<unsigned char>(buf[0]);
      }
      if (n <= 0) break;
      WriteAll(to_server, buf, static_cast<size_t>(n));
    }
  }
  EXPECT_TRUE(server_spoke);
  // A record: 0x14 (ChangeCipherSpec) or 0x17 (the encrypted Finished), not
  // 0x15 (an alert: OpenSSL failed the handshake, its state freed).
  EXPECT_TRUE(answer == 0x14 || answer == 0x17)
      << "the child answered the server's flight with " << answer;
  WriteAll(to_child[1], "d", 1);
  // What the child writes until its exit closes the pipe.
  std::string rest;
  for (int c; (c = ReadByte(to_parent[0])) >= 0;) rest += static_cast<char>(c);
  const bool cleanup_ran = rest.find('X') != std::string::npos;
  EXPECT_FALSE(cleanup_ran) << "OpenSSL's at-exit cleanup ran";
  const int code =
      transport::testing::WaitForChild(child, absl::Milliseconds(kWaitMs));
  reaped = true;
  EXPECT_EQ(code, 0)
      << "the child crashed (or hung) exiting during its handshake, "
      << (cleanup_ran
              ? "after OpenSSL's at-exit cleanup ran: in OpenSSL cleanup, "
                "likely"
              : "without OpenSSL's at-exit cleanup: in the channel's work at "
                "exit (the handshake done, its transport starting on the "
                "loop thread while static destructors run), likely");
  close(from_client);
  close(to_server);
  close(listener);
  server->Shutdown(absl::Now());
}

}  // namespace
}  // namespace rpc
