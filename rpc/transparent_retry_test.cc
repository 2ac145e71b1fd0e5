// Transparent retry (issue 11, bug 4; gRPC's A6): a call the server did not
// process (RST_STREAM REFUSED_STREAM, or a GOAWAY whose last stream id
// excludes it) is made again without the application seeing it, bounded;
// and calls queued for the server's MAX_CONCURRENT_STREAMS follow
// wait-for-ready semantics when their connection fails. The server is
// scripted: a sans-IO transport::Connection over a loopback socket on a
// thread of the test. Every wait is bounded. Also gRPC's cardinality rule
// (a second response message on a unary call), with the same server.

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "absl/time/clock.h"
#include "gtest/gtest.h"
#include "rpc/rpc.h"
#include "rpc/testdata/test_service.rpc.pb.h"
#include "rpc/testing/fan_out.h"
#include "transport/connection/connection.h"
#include "transport/frame/frame_writer.h"

namespace rpc {
namespace {

using test::EchoRequest;
using test::EchoResponse;
using test::EchoService;

int64_t NowNs() { return absl::GetCurrentTimeNanos(); }

bool WriteAll(int fd, const transport::SliceBuffer& out) {
  for (size_t i = 0; i < out.num_slices(); ++i) {
    const transport::Slice& s = out.slice(i);
    size_t done = 0;
    while (done < s.size()) {
      // No SIGPIPE when the client closed first (it may end a call, and
      // close, while we still write: the cardinality tests).
      const ssize_t n =
          send(fd, s.data() + done, s.size() - done, MSG_NOSIGNAL);
      if (n <= 0) return false;
      done += static_cast<size_t>(n);
    }
  }
  return true;
}

// A raw HTTP/2 server answering gRPC calls with an empty message and OK,
// one connection at a time, each following a Plan (the last one repeats).
class ScriptedServer {
 public:
  struct Plan {
    uint32_t max_concurrent_streams = transport::kSettingUnlimited;
    // Refuse (RST_STREAM REFUSED_STREAM) the first `refuse` requests.
    int refuse = 0;
    // Once this many requests are open: GOAWAY(NO_ERROR, last stream id =
    // the first of them), answer that one only, close.
    int goaway_when_open = 0;
    // Answer nothing; the connection closes on CloseHeld().
    bool hold = false;
    // As hold, and once a request arrived, read nothing more (no PING ACK).
    bool stall = false;
    // The answer's response messages and the octets of each (a unary call
    // takes one: more break gRPC's cardinality rule).
    int response_messages = 1;
    size_t response_bytes = 0;
    // Set: each request ended is answered with these frames instead (for
    // its stream id; HPACK literals without indexing only), written after
    // our own output.
    std::function<void(uint32_t, transport::SliceBuffer*)> raw_answer;
  };

  // A plan that refuses the first `n` requests, then answers.
  static Plan Refusing(int n) {
    Plan plan;
    plan.refuse = n;
    return plan;
  }

  explicit ScriptedServer(std::vector<Plan> plans) : plans_(std::move(plans)) {
    listen_fd_ = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in addr = {};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof(addr);
    if (bind(listen_fd_, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) !=
            0 ||
        listen(listen_fd_, 16) != 0 ||
        getsockname(listen_fd_, reinterpret_cast<sockaddr*>(&addr), &len) !=
            0) {
      ADD_FAILURE() << "cannot listen";
      return;
    }
    port_ = ntohs(addr.sin_port);
    thread_ = std::thread([this] { Run(); });
  }
  ~ScriptedServer() {
    stop_ = true;
    if (thread_.joinable()) thread_.join();
    close(listen_fd_);
  }

  int port() const { return port_; }
  std::string target() const { return absl::StrCat("127.0.0.1:", port_); }
  void CloseHeld() { close_held_ = true; }
  // Waits (bounded) until `n` requests arrived in all and the client ACKed
  // the PING that follows our SETTINGS (it has applied them).
  bool WaitRequests(int n) {
    absl::MutexLock lock(&mu_);
    const absl::Time give_up = absl::Now() + absl::Seconds(30);
    while (requests_ < n || !settings_applied_) {
      if (cv_.WaitWithDeadline(&mu_, give_up)) return false;
    }
    return true;
  }
  int connections() {
    absl::MutexLock lock(&mu_);
    return connections_;
  }
  int refused() {
    absl::MutexLock lock(&mu_);
    return refused_;
  }
  int answered() {
    absl::MutexLock lock(&mu_);
    return answered_;
  }
  // The request body octets of each answered call.
  std::vector<size_t> answered_body_bytes() {
    absl::MutexLock lock(&mu_);
    return answered_body_bytes_;
  }

 private:
  class Listener final : public transport::ConnectionListener {
   public:
    void OnHeaders(uint32_t id, const hpack::HeaderList&,
                   bool end_stream) override {
      opened.push_back(id);
      if (end_stream) ended.push_back(id);
    }
    void OnTrailers(uint32_t id, const hpack::HeaderList&) override {
      ended.push_back(id);
    }
    void OnData(uint32_t id, transport::Slice data) override {
      body_bytes[id] += data.size();
      conn->ConsumeData(id, data.size());
    }
    void OnEndStream(uint32_t id) override { ended.push_back(id); }
    void OnStreamReset(uint32_t, transport::Http2ErrorCode, bool) override {}
    void OnPingAck(uint64_t) override { ping_acked = true; }
    transport::Connection* conn = nullptr;
    std::vector<uint32_t> opened;
    std::vector<uint32_t> ended;
    bool ping_acked = false;
    std::map<uint32_t, size_t> body_bytes;
  };

  void Run() {
    while (!stop_) {
      pollfd p = {listen_fd_, POLLIN, 0};
      if (poll(&p, 1, 20) <= 0) continue;
      const int fd = accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC);
      if (fd < 0) continue;
      Plan plan;
      {
        absl::MutexLock lock(&mu_);
        plan = plans_[std::min<size_t>(connections_, plans_.size() - 1)];
        ++connections_;
      }
      // Each connection on a thread of its own: a held one does not keep
      // the next from being served.
      connection_threads_.emplace_back([this, fd, plan] {
        Serve(fd, plan);
        close(fd);
      });
    }
    for (std::thread& t : connection_threads_) t.join();
  }

  // Ends our side and reads until the client closes (bounded), so that
  // what we wrote is not lost to a TCP reset for unread input.
  void CloseGracefully(int fd) {
    shutdown(fd, SHUT_WR);
    char buf[4096];
    const absl::Time give_up = absl::Now() + absl::Seconds(10);
    while (!stop_ && absl::Now() < give_up) {
      pollfd p = {fd, POLLIN, 0};
      if (poll(&p, 1, 20) <= 0) continue;
      if (read(fd, buf, sizeof(buf)) <= 0) return;
    }
  }

  void Answer(transport::Connection* conn, const Plan& plan, uint32_t id,
              size_t body_bytes) {
    const hpack::HeaderField headers[] = {{":status", "200"},
                                          {"content-type", "application/grpc"}};
    const hpack::HeaderField trailers[] = {{"grpc-status", "0"}};
    if (!conn->SubmitHeaders(id, headers, false).ok()) return;
    for (int i = 0; i < plan.response_messages; ++i) {
      // Zeros (not a valid EchoResponse unless empty: only the cardinality
      // tests send more, and their calls fail before parsing).
      const size_t n = plan.response_bytes;
      std::string message(5 + n, '\0');
      message[1] = static_cast<char>(n >> 24);
      message[2] = static_cast<char>(n >> 16);
      message[3] = static_cast<char>(n >> 8);
      message[4] = static_cast<char>(n);
      transport::SliceBuffer framed;
      framed.Append(std::string_view(message));
      conn->SubmitData(id, std::move(framed), false).IgnoreError();
    }
    conn->SubmitTrailers(id, trailers).IgnoreError();
    absl::MutexLock lock(&mu_);
    ++answered_;
    answered_body_bytes_.push_back(body_bytes);
  }

  void Serve(int fd, const Plan& plan) {
    Listener l;
    transport::ConnectionOptions options;
    options.role = transport::Role::kServer;
    options.local_settings.max_concurrent_streams = plan.max_concurrent_streams;
    transport::Connection conn(options, &l, NowNs());
    l.conn = &conn;
    conn.SendPing(1);  // Its ACK says the client applied our SETTINGS.
    int refused = 0;
    uint32_t goaway_keep = 0;  // The one stream answered after our GOAWAY.
    bool close_after_answer = false;
    char buf[16384];
    while (!stop_) {
      transport::SliceBuffer out;
      conn.TakeOutput(&out);
      if (!WriteAll(fd, out)) return;
      if (conn.done() || ((plan.hold || plan.stall) && close_held_)) return;
      if (close_after_answer) {
        CloseGracefully(fd);
        return;
      }
      if (plan.stall && conn.last_accepted_stream_id() != 0 && l.ping_acked) {
        absl::SleepFor(absl::Milliseconds(5));  // Polling close_held_.
        continue;
      }
      pollfd p = {fd, POLLIN, 0};
      if (poll(&p, 1, 20) <= 0) continue;
      const ssize_t n = read(fd, buf, sizeof(buf));
      if (n <= 0) return;
      conn.Receive(transport::Slice::Copy(buf, static_cast<size_t>(n)),
                   NowNs());
      {
        absl::MutexLock lock(&mu_);
        requests_ += static_cast<int>(l.opened.size());
        if (l.ping_acked) settings_applied_ = true;
        cv_.SignalAll();
      }
      std::vector<uint32_t> opened = std::move(l.opened);
      l.opened.clear();
      for (const uint32_t id : opened) {
        if (refused < plan.refuse) {
          ++refused;
          conn.ResetStream(id, transport::Http2ErrorCode::kRefusedStream);
          absl::MutexLock lock(&mu_);
          ++refused_;
        }
      }
      if (plan.goaway_when_open > 0 && goaway_keep == 0 &&
          conn.num_active_streams() >=
              static_cast<size_t>(plan.goaway_when_open)) {
        // Our GOAWAY names the lowest open stream as the last processed:
        // the others are excluded (the client may retry them).
        goaway_keep = conn.last_accepted_stream_id() -
                      2 * (static_cast<uint32_t>(plan.goaway_when_open) - 1);
        transport::SliceBuffer goaway;
        conn.TakeOutput(&goaway);
        transport::WriteGoAway(goaway_keep, transport::Http2ErrorCode::kNoError,
                               "scripted", &goaway);
        if (!WriteAll(fd, goaway)) return;
      }
      // A GOAWAY plan answers nothing before its GOAWAY, then the one
      // stream it kept.
      if (plan.hold || plan.stall ||
          (plan.goaway_when_open > 0 && goaway_keep == 0)) {
        continue;
      }
      std::vector<uint32_t> ended = std::move(l.ended);
      l.ended.clear();
      for (const uint32_t id : ended) {
        if (plan.raw_answer) {
          transport::SliceBuffer raw;
          conn.TakeOutput(&raw);
          plan.raw_answer(id, &raw);
          if (!WriteAll(fd, raw)) return;
          continue;
        }
        if (goaway_keep != 0 && id != goaway_keep) continue;
        Answer(&conn, plan, id, l.body_bytes[id]);
        if (goaway_keep != 0) close_after_answer = true;
      }
    }
  }

  const std::vector<Plan> plans_;
  int listen_fd_ = -1;
  int port_ = 0;
  std::atomic<bool> stop_{false};
  std::atomic<bool> close_held_{false};
  std::thread thread_;
  std::vector<std::thread> connection_threads_;  // Run's only.
  absl::Mutex mu_;
  absl::CondVar cv_;
  int connections_ = 0;
  int requests_ = 0;
  int refused_ = 0;
  int answered_ = 0;
  std::vector<size_t> answered_body_bytes_;
  bool settings_applied_ = false;
};

ChannelArguments QuickReconnect() {
  ChannelArguments args;
  args.initial_backoff = absl::Milliseconds(20);
  args.max_backoff = absl::Milliseconds(100);
  return args;
}

// An async unary call's state, on the heap.
struct AsyncEcho {
  ClientContext ctx;
  EchoRequest req;
  EchoResponse resp;
  Status status;
  absl::Notification done;
};

AsyncEcho* StartEcho(EchoService::Stub* stub, bool wait_for_ready = false) {
  auto* call = new AsyncEcho;
  call->ctx.set_deadline(absl::Now() + absl::Seconds(30));
  call->ctx.set_wait_for_ready(wait_for_ready);
  call->req.set_message("hello");
  stub->async()->Echo(&call->ctx, &call->req, &call->resp, [call](Status s) {
    call->status = std::move(s);
    call->done.Notify();
  });
  return call;
}

Status Finish(AsyncEcho* call) {
  if (!call->done.WaitForNotificationWithTimeout(absl::Seconds(30))) {
    return Status(StatusCode::INTERNAL, "test: the call did not end");
  }
  Status s = call->status;
  delete call;
  return s;
}

// gRPC's cardinality rule: a unary call takes one response message; a
// second fails the call with INTERNAL and resets the stream.
ScriptedServer::Plan TwoResponses(size_t bytes) {
  ScriptedServer::Plan plan;
  plan.response_messages = 2;
  plan.response_bytes = bytes;
  return plan;
}

Status BlockingEcho(EchoService::Stub* stub) {
  ClientContext ctx;
  ctx.set_deadline(absl::Now() + absl::Seconds(30));
  EchoRequest req;
  EchoResponse resp;
  return stub->Echo(&ctx, req, &resp);
}

TEST(CardinalityTest, ASecondResponseMessageFailsAUnaryCall) {
  ScriptedServer server({TwoResponses(0)});
  auto stub = EchoService::NewStub(
      CreateChannel(server.target(), InsecureChannelCredentials()));
  Status s = BlockingEcho(stub.get());
  EXPECT_EQ(s.error_code(), StatusCode::INTERNAL) << s.error_message();
  EXPECT_NE(s.error_message().find("cardinality"), std::string::npos)
      << s.error_message();
  s = Finish(StartEcho(stub.get()));
  EXPECT_EQ(s.error_code(), StatusCode::INTERNAL) << s.error_message();
}

TEST(CardinalityTest, ASecondMessageBeyondTheReadBoundDoesNotStallTheCall) {
  // Once the first message (at least read_bound, 256 KiB) is queued, the
  // octets that follow are owed until the caller reads, and a blocking
  // unary call reads after the status: a second message larger than the
  // stream window (1 MiB) would hold the trailers back until the deadline.
  // Its first octets must end the call at once.
  ScriptedServer server({TwoResponses(1536 << 10)});
  auto stub = EchoService::NewStub(
      CreateChannel(server.target(), InsecureChannelCredentials()));
  const Status s = BlockingEcho(stub.get());
  EXPECT_EQ(s.error_code(), StatusCode::INTERNAL) << s.error_message();
  EXPECT_NE(s.error_message().find("cardinality"), std::string::npos)
      << s.error_message();
}

TEST(TransparentRetryTest, RefusedStreamIsRetriedOnTheSameConnection) {
  ScriptedServer server({ScriptedServer::Refusing(2)});
  auto channel = CreateChannel(server.target(), InsecureChannelCredentials());
  auto stub = EchoService::NewStub(channel);
  Status s = Finish(StartEcho(stub.get()));
  EXPECT_TRUE(s.ok()) << s.error_code() << " " << s.error_message();
  EXPECT_EQ(server.refused(), 2);
  EXPECT_EQ(server.answered(), 1);
  EXPECT_EQ(server.connections(), 1);
}

TEST(TransparentRetryTest, RetryReplaysEveryRequestMessage) {
  // A client-streaming call refused once: the retry sends the messages
  // written so far (kept by the call) and those written after.
  ScriptedServer server({ScriptedServer::Refusing(1)});
  auto channel = CreateChannel(server.target(), InsecureChannelCredentials());
  auto stub = EchoService::NewStub(channel);
  ClientContext ctx;
  ctx.set_deadline(absl::Now() + absl::Seconds(30));
  EchoResponse resp;
  auto writer = stub->ClientStream(&ctx, &resp);
  EchoRequest req;
  req.set_message(std::string(100, 'x'));
  constexpr int kMessages = 3;
  for (int i = 0; i < kMessages; ++i) ASSERT_TRUE(writer->Write(req));
  writer->WritesDone();
  Status s = writer->Finish();
  EXPECT_TRUE(s.ok()) << s.error_code() << " " << s.error_message();
  EXPECT_EQ(server.refused(), 1);
  EXPECT_EQ(server.answered_body_bytes(),
            std::vector<size_t>{kMessages * (5 + req.ByteSizeLong())});
}

// A server that refuses the first request, and a channel set with `arg`:
// the call ends UNAVAILABLE without a retry.
void ExpectNoRetryWith(const char* arg, int value) {
  ScriptedServer server({ScriptedServer::Refusing(1)});
  ChannelArguments args;
  ASSERT_TRUE(args.SetInt(arg, value));
  auto channel =
      CreateCustomChannel(server.target(), InsecureChannelCredentials(), args);
  auto stub = EchoService::NewStub(channel);
  Status s = Finish(StartEcho(stub.get()));
  EXPECT_EQ(s.error_code(), StatusCode::UNAVAILABLE) << s.error_message();
  EXPECT_EQ(server.refused(), 1);
  EXPECT_EQ(server.answered(), 0);
}

TEST(TransparentRetryTest, RequestsBeyondTheRetryBufferAreNotRetried) {
  // The call's request outgrew per_rpc_retry_buffer_size: it is committed
  // (nothing kept to replay), so a refusal ends it.
  ExpectNoRetryWith("grpc.per_rpc_retry_buffer_size", 4);
}

TEST(TransparentRetryTest, RetriesCanBeTurnedOff) {
  ExpectNoRetryWith("grpc.enable_retries", 0);
}

TEST(TransparentRetryTest, RefusalsAreRetriedABoundedNumberOfTimes) {
  // A server that refuses everything: the call fails after a few attempts
  // instead of retrying until its deadline.
  ScriptedServer server({ScriptedServer::Refusing(1000)});
  auto channel = CreateChannel(server.target(), InsecureChannelCredentials());
  auto stub = EchoService::NewStub(channel);
  Status s = Finish(StartEcho(stub.get()));
  EXPECT_EQ(s.error_code(), StatusCode::UNAVAILABLE) << s.error_message();
  EXPECT_EQ(server.refused(), 1 + internal::kMaxRefusedAttempts);
}

TEST(TransparentRetryTest, CallsExcludedByGoAwayAreRetriedOnANewConnection) {
  ScriptedServer::Plan first;
  first.goaway_when_open = 3;
  ScriptedServer server({first, ScriptedServer::Plan()});
  auto channel = CreateCustomChannel(
      server.target(), InsecureChannelCredentials(), QuickReconnect());
  auto stub = EchoService::NewStub(channel);
  std::vector<AsyncEcho*> calls;
  for (int i = 0; i < 3; ++i) calls.push_back(StartEcho(stub.get()));
  for (AsyncEcho* call : calls) {
    Status s = Finish(call);
    EXPECT_TRUE(s.ok()) << s.error_code() << " " << s.error_message();
  }
  EXPECT_EQ(server.connections(), 2);
  EXPECT_EQ(server.answered(), 3);
}

// The first connection of a server on `first` (one call at a time, never
// answered) carries a sent call, and a fail-fast and a wait-for-ready call
// queued behind it. The connection is lost (closed by the server with
// `close`, else by the client's keepalive): the sent and the fail-fast
// calls fail UNAVAILABLE with `why` in their message; the wait-for-ready
// one, never sent, waits for the next connection and succeeds there.
void ExpectQueuedCallsFollowWaitForReady(ScriptedServer::Plan first,
                                         const ChannelArguments& args,
                                         bool close, const char* why) {
  first.max_concurrent_streams = 1;
  ScriptedServer server({first, ScriptedServer::Plan()});
  auto channel =
      CreateCustomChannel(server.target(), InsecureChannelCredentials(), args);
  auto stub = EchoService::NewStub(channel);
  AsyncEcho* sent = StartEcho(stub.get());
  ASSERT_TRUE(server.WaitRequests(1));
  AsyncEcho* fail_fast = StartEcho(stub.get());
  AsyncEcho* wait_for_ready = StartEcho(stub.get(), /*wait_for_ready=*/true);
  ASSERT_TRUE(testing::WaitCallsStarted(channel.get()));  // Both queued.
  if (close) server.CloseHeld();
  for (AsyncEcho* call : {sent, fail_fast}) {
    Status s = Finish(call);
    EXPECT_EQ(s.error_code(), StatusCode::UNAVAILABLE) << s.error_message();
    EXPECT_NE(s.error_message().find(why), std::string::npos)
        << s.error_message();
  }
  Status s = Finish(wait_for_ready);
  EXPECT_TRUE(s.ok()) << s.error_code() << " " << s.error_message();
  EXPECT_EQ(server.connections(), 2);
  EXPECT_EQ(server.answered(), 1);
}

TEST(TransparentRetryTest, QueuedCallsWhenTheConnectionFails) {
  ScriptedServer::Plan held;
  held.hold = true;
  ExpectQueuedCallsFollowWaitForReady(held, QuickReconnect(), /*close=*/true,
                                      "connection failed");
}

TEST(TransparentRetryTest, QueuedCallsWhenKeepaliveGivesUp) {
  // The server stops reading once the first call arrived, so our PING goes
  // unanswered.
  ScriptedServer::Plan stalled;
  stalled.stall = true;
  ChannelArguments args = QuickReconnect();
  args.keepalive_time = absl::Milliseconds(100);
  args.keepalive_timeout = absl::Milliseconds(100);
  ExpectQueuedCallsFollowWaitForReady(stalled, args, /*close=*/false,
                                      "keepalive timeout");
}

// A call that dies with a connection error our client found names it: the
// reason's name and the GOAWAY we sent.
TEST(TransparentRetryTest, OurConnectionErrorNamesItsReason) {
  ScriptedServer::Plan push;
  push.raw_answer = [](uint32_t id, transport::SliceBuffer* out) {
    transport::WritePushPromise(id, 2, "", transport::kDefaultMaxFrameSize,
                                std::nullopt, out);
  };
  ScriptedServer server({push});
  auto channel = CreateChannel(server.target(), InsecureChannelCredentials());
  auto stub = EchoService::NewStub(channel);
  Status s = Finish(StartEcho(stub.get()));
  EXPECT_EQ(s.error_code(), StatusCode::UNAVAILABLE) << s.error_message();
  EXPECT_EQ(s.error_message(),
            "connection failed: push_promise (GOAWAY PROTOCOL_ERROR sent)");
}

// A response our client resets (it breaks a header rule) names the rule.
TEST(TransparentRetryTest, OurStreamErrorNamesTheHeaderRule) {
  ScriptedServer::Plan bad_status;
  bad_status.raw_answer = [](uint32_t id, transport::SliceBuffer* out) {
    // :status (static index 8's name) "2xx", a literal without indexing.
    transport::WriteHeaders(id,
                            std::string_view("\x08\x03"
                                             "2xx",
                                             5),
                            /*end_stream=*/true,
                            transport::kDefaultMaxFrameSize, out);
  };
  ScriptedServer server({bad_status});
  auto channel = CreateChannel(server.target(), InsecureChannelCredentials());
  auto stub = EchoService::NewStub(channel);
  Status s = Finish(StartEcho(stub.get()));
  EXPECT_EQ(s.error_code(), StatusCode::UNAVAILABLE) << s.error_message();
  EXPECT_EQ(s.error_message(),
            "stream reset by the client: header_rule: bad_status "
            "(RST_STREAM PROTOCOL_ERROR sent)");
}

}  // namespace
}  // namespace rpc
