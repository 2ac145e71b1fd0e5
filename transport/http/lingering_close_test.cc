// The driver's lingering close against a raw client over loopback TCP: a
// server that fails or aborts a connection writes its GOAWAY and lets the
// client read it (no RST that would make the client's kernel drop it), even
// while the client is still sending.

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>

#include "absl/synchronization/notification.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "gtest/gtest.h"
#include "transport/connection/connection_error.h"
#include "transport/http/http2_server.h"

namespace transport {
namespace {

constexpr char kPreface[] = "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n";

std::string FrameHeader(uint32_t length, uint8_t type, uint8_t flags,
                        uint32_t stream_id) {
  const char h[9] = {
      static_cast<char>(length >> 16),    static_cast<char>(length >> 8),
      static_cast<char>(length),          static_cast<char>(type),
      static_cast<char>(flags),           static_cast<char>(stream_id >> 24),
      static_cast<char>(stream_id >> 16), static_cast<char>(stream_id >> 8),
      static_cast<char>(stream_id)};
  return std::string(h, 9);
}

std::string Ping() { return FrameHeader(8, 6, 0, 0) + std::string(8, 'p'); }

// The client's preface and an empty SETTINGS.
std::string ClientStart() {
  return std::string(kPreface, 24) + FrameHeader(0, 4, 0, 0);
}

// HEADERS (END_STREAM | END_HEADERS) for GET http://a/ on `stream_id`.
std::string Get(uint32_t stream_id) {
  const std::string block =
      "\x82\x86\x84\x41\x01"
      "a";
  return FrameHeader(static_cast<uint32_t>(block.size()), 1, 0x5, stream_id) +
         block;
}

int Connect(uint16_t port) {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  EXPECT_GE(fd, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(port);
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  EXPECT_EQ(::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), 0)
      << std::strerror(errno);
  return fd;
}

// Sends all of `data` (blocking); false when the peer reset or closed.
bool SendAll(int fd, const std::string& data) {
  size_t sent = 0;
  while (sent < data.size()) {
    const ssize_t n =
        ::send(fd, data.data() + sent, data.size() - sent, MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    sent += static_cast<size_t>(n);
  }
  return true;
}

struct GoAwayFrame {
  bool seen = false;
  uint32_t last_stream_id = 0;
  uint32_t code = 0;
  std::string debug;
};

struct ReadResult {
  GoAwayFrame goaway;       // The first one.
  GoAwayFrame last_goaway;  // The last one.
  int error = 0;            // errno of the read that ended it (0: EOF).
};

// Reads until EOF or an error and parses the frames.
ReadResult ReadFrames(int fd) {
  ReadResult result;
  std::string in;
  char buf[16384];
  for (;;) {
    const ssize_t n = ::read(fd, buf, sizeof(buf));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) result.error = errno;
    if (n <= 0) break;
    in.append(buf, static_cast<size_t>(n));
  }
  size_t pos = 0;
  while (in.size() - pos >= 9) {
    const auto* p = reinterpret_cast<const uint8_t*>(in.data() + pos);
    const uint32_t length = (p[0] << 16) | (p[1] << 8) | p[2];
    if (in.size() - pos - 9 < length) break;
    if (p[3] == 7 && length >= 8) {
      const uint8_t* q = p + 9;
      GoAwayFrame& g = result.last_goaway;
      g.seen = true;
      g.last_stream_id =
          ((q[0] & 0x7fu) << 24) | (q[1] << 16) | (q[2] << 8) | q[3];
      g.code = (uint32_t{q[4]} << 24) | (q[5] << 16) | (q[6] << 8) | q[7];
      g.debug.assign(reinterpret_cast<const char*>(q + 8), length - 8);
      if (!result.goaway.seen) result.goaway = g;
    }
    pos += 9 + length;
  }
  return result;
}

class NoResponse : public Http2Handler {
 public:
  void OnRequest(Http2ServerStream* /*stream*/) override {
    if (requests.fetch_add(1) == 0) first.Notify();
  }
  std::atomic<int> requests{0};
  absl::Notification first;
};

TEST(LingeringCloseTest, FloodGoAwayReachesAClientThatKeepsSending) {
  NoResponse handler;
  Http2ServerOptions options;
  options.connection.pings = {10, 1};
  // Only a hang reaches these: the client's EOF ends the linger.
  options.driver.linger = absl::Seconds(30);
  auto server = Http2Server::Start(options, &handler);
  ASSERT_TRUE(server.ok()) << server.status();

  const int fd = Connect((*server)->port());
  // The flood trips after 10 PINGs; the client goes on sending 8 MiB of
  // them before it reads anything (a client that is still writing a large
  // request when the server fails).
  std::string out = ClientStart() + Get(1);
  const std::string ping = Ping();
  while (out.size() < (8u << 20)) out += ping;
  const bool sent_all = SendAll(fd, out);
  ::shutdown(fd, SHUT_WR);
  const ReadResult r = ReadFrames(fd);
  ::close(fd);

  EXPECT_TRUE(sent_all) << "the server reset the connection";
  EXPECT_EQ(r.error, 0) << std::strerror(r.error);
  ASSERT_TRUE(r.goaway.seen) << "no GOAWAY before the end";
  EXPECT_EQ(r.goaway.code, 0xbu);  // ENHANCE_YOUR_CALM
  EXPECT_EQ(r.goaway.debug, Name(ConnectionErrorReason::kPingFlood));
  EXPECT_EQ(r.goaway.last_stream_id, 1u);
  (*server)->Shutdown(absl::ZeroDuration());
}

TEST(LingeringCloseTest, ShutdownPastItsDeadlineStillSendsTheFinalGoAway) {
  NoResponse handler;
  auto server = Http2Server::Start(Http2ServerOptions(), &handler);
  ASSERT_TRUE(server.ok()) << server.status();

  const int fd = Connect((*server)->port());
  ASSERT_TRUE(SendAll(fd, ClientStart() + Get(1)));
  ASSERT_TRUE(handler.first.WaitForNotificationWithTimeout(absl::Seconds(30)));
  // The client never answers the shutdown PING nor ends its stream: the
  // zero grace passes at once and the connection is aborted.
  (*server)->Shutdown(absl::ZeroDuration());
  const ReadResult r = ReadFrames(fd);
  ::close(fd);

  EXPECT_EQ(r.error, 0) << std::strerror(r.error);
  ASSERT_TRUE(r.last_goaway.seen);
  // The last GOAWAY names the stream the server accepted (RFC 9113 6.8);
  // the first one of a graceful shutdown says 2^31-1.
  EXPECT_EQ(r.last_goaway.last_stream_id, 1u);
  EXPECT_EQ(r.last_goaway.code, 0u);
  EXPECT_EQ(r.last_goaway.debug, "server shutdown");
}

}  // namespace
}  // namespace transport
