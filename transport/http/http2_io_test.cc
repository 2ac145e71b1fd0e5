// Our client (http2_client.h) against our server (http2_server.h) over
// loopback TCP and TLS: the ConnectionDriver's read and write paths, flow
// control end to end (large bodies, an echo with backpressure), many
// concurrent streams over several loops, trailers, resets, and graceful
// shutdown.

#include <atomic>
#include <functional>
#include <memory>
#include <random>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "gtest/gtest.h"
#include "transport/http/blocking_http2_client.h"
#include "transport/http/http2_client.h"
#include "transport/http/http2_server.h"
#include "transport/io/absl_view.h"
#include "transport/testing/test_certs.h"
#include "transport/tls/tls.h"

namespace transport {
namespace {

std::string RandomBytes(size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::string s(n, '\0');
  for (char& c : s) c = static_cast<char>(rng());
  return s;
}

// /bytes/N: N pseudo-random octets (seed 1); /echo: the body back, released
// to the window only once echoed; /trailers: a body and trailers; /reset:
// RST_STREAM; /slow: answers after 50 ms from a timer; /hold: no response
// until the test calls Release().
class TestHandler : public Http2Handler {
 public:
  void OnRequest(Http2ServerStream* stream) override {
    ++requests;
    const std::string_view path = stream->path();
    if (path.substr(0, 7) == "/bytes/") {
      size_t n = 0;
      if (!absl::SimpleAtoi(ToAbsl(path.substr(7)), &n)) {
        n = 0;
      }
      const hpack::HeaderField h[] = {{":status", "200"}};
      ASSERT_TRUE(stream->Respond(h, false).ok());
      SliceBuffer body;
      body.Append(RandomBytes(n, 1));
      ASSERT_TRUE(stream->Write(std::move(body), true).ok());
    } else if (path == "/echo") {
      const hpack::HeaderField h[] = {{":status", "200"}};
      ASSERT_TRUE(stream->Respond(h, false).ok());
      auto unreleased = std::make_shared<size_t>(0);
      Http2ServerStream::Callbacks cb;
      cb.on_data = [stream, unreleased](Slice piece) {
        *unreleased += piece.size();
        SliceBuffer b;
        b.Append(std::move(piece));
        ASSERT_TRUE(stream->Write(std::move(b), false).ok());
        if (!stream->write_blocked()) {
          stream->ConsumeData(*unreleased);
          *unreleased = 0;
        }
      };
      cb.on_writable = [stream, unreleased] {
        stream->ConsumeData(*unreleased);
        *unreleased = 0;
      };
      cb.on_end = [stream] {
        ASSERT_TRUE(stream->Write(SliceBuffer(), true).ok());
      };
      stream->SetCallbacks(std::move(cb), /*manual_flow_control=*/true);
    } else if (path == "/trailers") {
      const hpack::HeaderField h[] = {{":status", "200"}};
      ASSERT_TRUE(stream->Respond(h, false).ok());
      SliceBuffer body;
      body.Append("body");
      ASSERT_TRUE(stream->Write(std::move(body), false).ok());
      const hpack::HeaderField t[] = {{"grpc-status", "0"}};
      ASSERT_TRUE(stream->WriteTrailers(t).ok());
    } else if (path == "/reset") {
      stream->Reset(Http2ErrorCode::kRefusedStream);
    } else if (path == "/slow") {
      Http2ServerStream::Callbacks cb;
      auto alive = std::make_shared<bool>(true);
      cb.on_close = [alive](Http2ErrorCode) { *alive = false; };
      stream->SetCallbacks(std::move(cb));
      stream->loop()->RunAfter(absl::Milliseconds(50), [stream, alive] {
        if (!*alive) return;
        const hpack::HeaderField h[] = {{":status", "204"}};
        stream->Respond(h, true).IgnoreError();
      });
    } else if (path == "/hold") {
      Http2ServerStream::Callbacks cb;
      auto alive = std::make_shared<bool>(true);
      cb.on_close = [alive](Http2ErrorCode) { *alive = false; };
      stream->SetCallbacks(std::move(cb));
      absl::MutexLock lock(&mu_);
      held_.push_back({stream->loop(), [stream, alive] {
                         if (!*alive) return;
                         const hpack::HeaderField h[] = {{":status", "204"}};
                         stream->Respond(h, true).IgnoreError();
                       }});
    } else {
      const hpack::HeaderField h[] = {{":status", "404"}};
      ASSERT_TRUE(stream->Respond(h, true).ok());
    }
  }

  // Waits (bounded: only a hang reaches the bound) until `n` /hold requests
  // have reached the handler.
  bool WaitForHeld(size_t n) {
    absl::MutexLock lock(&mu_);
    auto enough = [this, n]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
      return held_.size() >= n;
    };
    return mu_.AwaitWithTimeout(absl::Condition(&enough), absl::Seconds(30));
  }
  // Answers every held request (204) from its loop; any thread.
  void Release() {
    absl::MutexLock lock(&mu_);
    for (auto& [loop, respond] : held_) loop->Post(std::move(respond));
    held_.clear();
  }

  std::atomic<int> requests{0};

 private:
  absl::Mutex mu_;
  std::vector<std::pair<EventLoop*, std::function<void()>>> held_
      ABSL_GUARDED_BY(mu_);
};

// Polls `condition` until it holds; false only after 30 s (a hang).
template <typename Condition>
bool WaitUntil(Condition condition) {
  const absl::Time deadline = absl::Now() + absl::Seconds(30);
  while (!condition()) {
    if (absl::Now() > deadline) return false;
    absl::SleepFor(absl::Milliseconds(1));
  }
  return true;
}

class Http2IoTest : public ::testing::TestWithParam<bool> {
 protected:
  void SetUp() override {
    Http2ServerOptions options;
    options.num_threads = 2;
    Http2ClientOptions client_options;
    if (GetParam()) {
      const auto& certs = testing::GetTestCertificates();
      ASSERT_TRUE(certs.ok()) << certs.status();
      TlsServerOptions server_tls;
      server_tls.certificate_chain_pem = certs->server_chain_pem;
      server_tls.private_key_pem = certs->server_key_pem;
      auto server_context = TlsContext::CreateServer(server_tls);
      ASSERT_TRUE(server_context.ok()) << server_context.status();
      options.tls = *server_context;
      TlsClientOptions client_tls;
      client_tls.root_certificates_pem = certs->ca_pem;
      auto client_context = TlsContext::CreateClient(client_tls);
      ASSERT_TRUE(client_context.ok()) << client_context.status();
      client_options.tls = *client_context;
      client_options.server_name = "localhost";
    }
    client_options_ = client_options;
    auto server = Http2Server::Start(options, &handler_);
    ASSERT_TRUE(server.ok()) << server.status();
    server_ = *std::move(server);
    ASSERT_NE(server_->port(), 0);
  }

  std::unique_ptr<BlockingHttp2Client> Connect() {
    auto client = BlockingHttp2Client::Connect(
        SocketAddress::Loopback(AF_INET, server_->port()), client_options_);
    EXPECT_TRUE(client.ok()) << client.status();
    return client.ok() ? *std::move(client) : nullptr;
  }

  TestHandler handler_;
  std::unique_ptr<Http2Server> server_;
  Http2ClientOptions client_options_;
};

TEST_P(Http2IoTest, GetSmallAndLarge) {
  auto client = Connect();
  ASSERT_NE(client, nullptr);
  for (size_t n : {size_t{0}, size_t{15}, size_t{70000}, size_t{5} << 20}) {
    auto r = client->Fetch("GET", absl::StrCat("/bytes/", n));
    ASSERT_TRUE(r.ok()) << r.status();
    ASSERT_TRUE(r->error.ok()) << r->error;
    EXPECT_EQ(r->status, 200);
    EXPECT_TRUE(r->body == RandomBytes(n, 1)) << n;
  }
  auto missing = client->Fetch("GET", "/nothing");
  ASSERT_TRUE(missing.ok());
  EXPECT_EQ(missing->status, 404);
}

TEST_P(Http2IoTest, EchoLargeUploadWithBackpressure) {
  auto client = Connect();
  ASSERT_NE(client, nullptr);
  FetchRequest request;
  request.method = "POST";
  request.path = "/echo";
  request.body = RandomBytes(6 << 20, 3);  // > every window: must wait.
  auto r = client->Fetch(request, absl::Seconds(5));
  if (!r.ok()) {
    client->RunInLoop([](Http2Client* c) {
      Connection& k = c->connection();
      std::cerr << "client state: queued=" << k.queued_send_bytes()
                << " conn_send=" << k.connection_send_window()
                << " s1_send=" << k.stream_send_window(1)
                << " unconsumed=" << k.unconsumed_receive_bytes()
                << " output=" << k.output().size()
                << " active=" << k.num_active_streams()
                << " written=" << c->driver().bytes_written()
                << " read=" << c->driver().bytes_read() << "\n";
    });
  }
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_TRUE(r->error.ok()) << r->error;
  EXPECT_EQ(r->body.size(), request.body.size());
  EXPECT_TRUE(r->body == request.body);
}

// The server recycles Http2ServerStreams: a stream that had callbacks and
// manual flow control (/echo) must leave nothing behind for the next request on
// the same connection (/bytes, then /echo again, with other headers).
TEST_P(Http2IoTest, RecycledStreamsStartClean) {
  auto client = Connect();
  ASSERT_NE(client, nullptr);
  for (int i = 0; i < 40; ++i) {
    FetchRequest echo;
    echo.method = "POST";
    echo.path = "/echo";
    echo.body = RandomBytes(100 + i, i);
    auto e = client->Fetch(echo, absl::Seconds(5));
    ASSERT_TRUE(e.ok()) << e.status();
    ASSERT_TRUE(e->error.ok()) << e->error;
    EXPECT_TRUE(e->body == echo.body) << i;
    auto b = client->Fetch("GET", absl::StrCat("/bytes/", i));
    ASSERT_TRUE(b.ok()) << b.status();
    ASSERT_TRUE(b->error.ok()) << b->error;
    EXPECT_EQ(b->status, 200);
    EXPECT_TRUE(b->body == RandomBytes(i, 1)) << i;
  }
}

TEST_P(Http2IoTest, ManyConcurrentStreamsAndConnections) {
  std::vector<std::unique_ptr<BlockingHttp2Client>> clients;
  for (int i = 0; i < 4; ++i) clients.push_back(Connect());
  std::vector<FetchRequest> requests;
  for (int i = 0; i < 300; ++i) {  // Over MAX_CONCURRENT_STREAMS (100).
    FetchRequest r;
    r.path = absl::StrCat("/bytes/", i * 37);
    if (i % 10 == 0) {
      r.method = "POST";
      r.path = "/echo";
      r.body = RandomBytes(i * 100, i);
    }
    requests.push_back(r);
  }
  for (auto& client : clients) {
    ASSERT_NE(client, nullptr);
    auto all = client->FetchAll(requests, absl::Seconds(30));
    ASSERT_TRUE(all.ok()) << all.status();
    for (size_t i = 0; i < requests.size(); ++i) {
      const FetchedResponse& r = (*all)[i];
      ASSERT_TRUE(r.error.ok()) << i << ": " << r.error;
      EXPECT_EQ(r.status, 200);
      const std::string expected = requests[i].method == "POST"
                                       ? requests[i].body
                                       : RandomBytes(i * 37, 1);
      EXPECT_TRUE(r.body == expected) << i;
    }
  }
  EXPECT_EQ(server_->num_connections(), 4u);
}

TEST_P(Http2IoTest, TrailersResetAndTimerResponse) {
  auto client = Connect();
  ASSERT_NE(client, nullptr);
  auto t = client->Fetch("GET", "/trailers");
  ASSERT_TRUE(t.ok());
  ASSERT_TRUE(t->error.ok()) << t->error;
  EXPECT_EQ(t->body, "body");
  ASSERT_EQ(t->trailers.size(), 1u);
  EXPECT_EQ(t->trailers[0].first, "grpc-status");

  auto reset = client->Fetch("GET", "/reset");
  ASSERT_TRUE(reset.ok());
  EXPECT_TRUE(absl::IsUnavailable(reset->error)) << reset->error;

  auto slow = client->Fetch("GET", "/slow");
  ASSERT_TRUE(slow.ok());
  ASSERT_TRUE(slow->error.ok()) << slow->error;
  EXPECT_EQ(slow->status, 204);
}

TEST_P(Http2IoTest, GracefulShutdownLetsStreamsFinish) {
  auto client = Connect();
  ASSERT_NE(client, nullptr);
  auto warm = client->Fetch("GET", "/bytes/10");
  ASSERT_TRUE(warm.ok());
  // A response that is still being produced when the server starts to shut
  // down completes; then the connection closes.
  absl::StatusOr<FetchedResponse> held;
  std::thread fetcher([&] { held = client->Fetch("GET", "/hold"); });
  ASSERT_TRUE(handler_.WaitForHeld(1));
  std::thread shutdown([&] { server_->Shutdown(absl::Seconds(30)); });
  // The server's GOAWAY has reached the client: the shutdown is under way.
  EXPECT_TRUE(WaitUntil([&] {
    bool goaway = false;
    client->RunInLoop(
        [&](Http2Client* c) { goaway = c->connection().goaway_received(); });
    return goaway;
  }));
  handler_.Release();
  fetcher.join();
  shutdown.join();
  ASSERT_TRUE(held.ok()) << held.status();
  EXPECT_TRUE(held->error.ok()) << held->error;
  EXPECT_EQ(held->status, 204);
  EXPECT_TRUE(WaitUntil([&] { return client->closed(); }));
}

// The server closing a connection with a stream open (no grace) fails the
// stream on the client: UNAVAILABLE, no response.
TEST_P(Http2IoTest, ServerSideCloseFailsOpenStreams) {
  auto client = Connect();
  ASSERT_NE(client, nullptr);
  absl::StatusOr<FetchedResponse> held;
  std::thread fetcher(
      [&] { held = client->Fetch("GET", "/hold", absl::Seconds(30)); });
  ASSERT_TRUE(handler_.WaitForHeld(1));
  server_->Shutdown(absl::ZeroDuration());
  fetcher.join();
  ASSERT_TRUE(held.ok()) << held.status();
  EXPECT_TRUE(absl::IsUnavailable(held->error)) << held->error;
  EXPECT_EQ(held->status, 0);
}

// The write path coalesces: many small responses produced in one loop
// iteration leave in far fewer writev calls than responses.
TEST_P(Http2IoTest, ClientWritesAreCoalesced) {
  auto client = Connect();
  ASSERT_NE(client, nullptr);
  uint64_t before = 0, after = 0;
  client->RunInLoop(
      [&](Http2Client* c) { before = c->driver().writev_calls(); });
  std::vector<FetchRequest> requests(50);
  for (auto& r : requests) r.path = "/bytes/1";
  auto all = client->FetchAll(requests);
  ASSERT_TRUE(all.ok());
  client->RunInLoop(
      [&](Http2Client* c) { after = c->driver().writev_calls(); });
  // 50 HEADERS submitted in one task: one writev for the lot, plus a few for
  // WINDOW_UPDATEs / SETTINGS ACKs as responses arrive.
  EXPECT_LT(after - before, 25u);
}

INSTANTIATE_TEST_SUITE_P(H2cAndTls, Http2IoTest, ::testing::Bool(),
                         [](const ::testing::TestParamInfo<bool>& info) {
                           return info.param ? "Tls" : "H2c";
                         });

}  // namespace
}  // namespace transport
