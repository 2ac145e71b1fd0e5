// Our client against our server over loopback: every call kind, metadata,
// status, deadlines, cancellation, limits, concurrency and shutdown.

#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "absl/time/clock.h"
#include "gtest/gtest.h"
#include "rpc/internal/channel_impl.h"
#include "rpc/rpc.h"
#include "rpc/testdata/test_service.rpc.pb.h"
#include "transport/http/blocking_http2_client.h"
#include "transport/io/socket.h"
#include "transport/testing/wait_until.h"

namespace rpc {
namespace internal {

// Reaches ClientContext's library-only members.
class ClientContextTestPeer {
 public:
  static void SetCall(ClientContext* ctx, std::shared_ptr<ClientCall> call,
                      std::shared_ptr<ChannelInterface> channel) {
    ctx->set_call(std::move(call), std::move(channel));
  }
  static Status FinishCall(ClientContext* ctx) { return ctx->FinishCall(); }
};

}  // namespace internal
namespace {

using test::EchoRequest;
using test::EchoResponse;
using test::EchoService;

using transport::testing::WaitUntil;

class EchoServiceImpl final : public EchoService::Service {
 public:
  Status Echo(ServerContext* ctx, const EchoRequest* req,
              EchoResponse* resp) override {
    ++echo_entered_;
    for (const auto& [k, v] : ctx->client_metadata()) {
      if (k.rfind("echo-", 0) == 0) {
        ctx->AddInitialMetadata("initial-" + k, v);
        ctx->AddTrailingMetadata("trailing-" + k, v);
      }
    }
    if (req->sleep_ms() > 0) {
      // Sleep in slices, watching for cancellation.
      const absl::Time until =
          absl::Now() + absl::Milliseconds(req->sleep_ms());
      while (absl::Now() < until) {
        if (ctx->IsCancelled()) {
          saw_cancel_.Notify();
          return Status(StatusCode::CANCELLED, "noticed");
        }
        absl::SleepFor(absl::Milliseconds(2));
      }
    }
    if (req->status_code() != 0) {
      return Status(static_cast<StatusCode>(req->status_code()),
                    req->status_message());
    }
    resp->set_message(req->message());
    resp->set_payload(std::string(req->response_size(), 'r'));
    return Status::OK;
  }

  Status ServerStream(ServerContext* ctx, const EchoRequest* req,
                      ServerWriter<EchoResponse>* writer) override {
    EchoResponse resp;
    resp.set_payload(std::string(req->response_size(), 's'));
    for (int i = 0; i < req->count(); ++i) {
      resp.set_index(i);
      resp.set_message(req->message());
      if (!writer->Write(resp)) {
        if (!writes_failed_once_.exchange(true)) writes_failed_.Notify();
        return Status(StatusCode::CANCELLED, "client went away");
      }
      max_written_ = i + 1;
      ++total_written_;
    }
    (void)ctx;
    if (req->status_code() != 0) {
      return Status(static_cast<StatusCode>(req->status_code()),
                    req->status_message());
    }
    return Status::OK;
  }

  Status ClientStream(ServerContext* /*ctx*/, ServerReader<EchoRequest>* reader,
                      EchoResponse* resp) override {
    EchoRequest req;
    int n = 0;
    std::string all;
    while (reader->Read(&req)) {
      ++n;
      all += req.message();
    }
    resp->set_index(n);
    resp->set_message(all);
    return Status::OK;
  }

  Status Bidi(ServerContext* /*ctx*/,
              ServerReaderWriter<EchoResponse, EchoRequest>* stream) override {
    EchoRequest req;
    int n = 0;
    while (stream->Read(&req)) {
      EchoResponse resp;
      resp.set_message(req.message());
      resp.set_index(n++);
      if (!stream->Write(resp)) break;
    }
    return Status::OK;
  }

  absl::Notification saw_cancel_;
  absl::Notification writes_failed_;
  std::atomic<int> echo_entered_{0};
  std::atomic<bool> writes_failed_once_{false};
  std::atomic<int> max_written_{0};
  std::atomic<int> total_written_{0};  // Over every ServerStream call.
};

class EndToEndTest : public ::testing::Test {
 protected:
  void SetUp() override { StartServer(ServerBuilder()); }

  void StartServer(ServerBuilder builder) {
    server_.reset();
    int port = 0;
    server_ =
        builder
            .AddListeningPort("127.0.0.1:0", InsecureServerCredentials(), &port)
            .RegisterService(&service_)
            .BuildAndStart();
    ASSERT_NE(server_, nullptr);
    ASSERT_GT(port, 0);
    port_ = port;
    channel_ = CreateChannel("127.0.0.1:" + std::to_string(port),
                             InsecureChannelCredentials());
    stub_ = EchoService::NewStub(channel_);
  }

  void TearDown() override {
    stub_.reset();
    channel_.reset();
    if (server_ != nullptr) server_->Shutdown(absl::Now() + absl::Seconds(5));
  }

  static void Bound(ClientContext* ctx, int seconds = 10) {
    ctx->set_deadline(absl::Now() + absl::Seconds(seconds));
  }

  EchoServiceImpl service_;
  std::unique_ptr<Server> server_;
  int port_ = 0;
  std::shared_ptr<Channel> channel_;
  std::unique_ptr<EchoService::Stub> stub_;
};

// Reads what a client sends on `fd` until a HEADERS frame (after the
// connection preface) arrived; false on EOF or after 20 s.
bool ReadUntilHeadersFrame(int fd) {
  std::string in;
  size_t frame = 24;  // The preface's octets, then frame headers.
  const absl::Time limit = absl::Now() + absl::Seconds(20);
  while (absl::Now() < limit) {
    while (in.size() >= frame + 9) {
      const auto at = [&](size_t i) { return static_cast<uint8_t>(in[i]); };
      if (at(frame + 3) == 0x1) return true;  // HEADERS.
      frame += 9 + (at(frame) << 16 | at(frame + 1) << 8 | at(frame + 2));
    }
    pollfd p = {fd, POLLIN, 0};
    if (poll(&p, 1, 100) != 1) continue;
    char buf[4096];
    const ssize_t n = read(fd, buf, sizeof(buf));
    if (n <= 0) return false;
    in.append(buf, static_cast<size_t>(n));
  }
  return false;
}

// A call in flight when its channel goes away ends UNAVAILABLE ("channel
// closed"), as channel.h promises. (Stubs and contexts keep a channel alive;
// the internal call API does not, which is how this test gets there.)
TEST(ChannelShutdownTest, CallInFlightFailsUnavailable) {
  // A peer that reads and never answers: the call's HEADERS go out and no
  // answer ever comes.
  transport::ScopedFd listener(socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
  ASSERT_TRUE(listener.valid());
  const transport::SocketAddress any =
      transport::SocketAddress::Loopback(AF_INET, 0);
  ASSERT_EQ(bind(listener.get(), any.addr(), any.len()), 0);
  ASSERT_EQ(listen(listener.get(), 16), 0);
  auto local = transport::SocketAddress::LocalOf(listener.get());
  ASSERT_TRUE(local.ok());
  std::shared_ptr<Channel> channel =
      CreateChannel("ipv4:" + local->ToString(), InsecureChannelCredentials());
  std::shared_ptr<internal::ClientCall> call =
      internal::ChannelAccess::Impl(channel.get())
          ->CreateCall("/test.EchoService/Echo",
                       absl::Now() + absl::Seconds(30), {});
  call->Start(nullptr, true);
  ASSERT_TRUE(channel->WaitForConnected(absl::Now() + absl::Seconds(5)));
  pollfd p = {listener.get(), POLLIN, 0};
  ASSERT_EQ(poll(&p, 1, 20000), 1);
  transport::ScopedFd peer(
      accept4(listener.get(), nullptr, nullptr, SOCK_CLOEXEC));
  ASSERT_TRUE(peer.valid());
  ASSERT_TRUE(ReadUntilHeadersFrame(peer.get()));  // On the connection.
  EXPECT_FALSE(call->has_status());
  channel.reset();
  const Status s = call->Finish(nullptr, nullptr);
  EXPECT_EQ(s.error_code(), StatusCode::UNAVAILABLE) << s;
  EXPECT_EQ(s.error_message(), "channel closed");
}

TEST_F(EndToEndTest, UnaryRoundTrip) {
  for (int i = 0; i < 3; ++i) {
    ClientContext ctx;
    ctx.set_deadline(std::chrono::system_clock::now() +
                     std::chrono::seconds(10));
    EchoRequest req;
    req.set_message("hello " + std::to_string(i));
    req.set_response_size(100);
    EchoResponse resp;
    Status s = stub_->Echo(&ctx, req, &resp);
    ASSERT_TRUE(s.ok()) << s;
    EXPECT_EQ(resp.message(), req.message());
    EXPECT_EQ(resp.payload().size(), 100u);
    EXPECT_EQ(ctx.peer().rfind("ipv4:127.0.0.1:", 0), 0u) << ctx.peer();
  }
}

TEST_F(EndToEndTest, EmptyMessages) {
  ClientContext ctx;
  Bound(&ctx);
  EchoResponse resp;
  Status s = stub_->Echo(&ctx, EchoRequest(), &resp);
  ASSERT_TRUE(s.ok()) << s;
  EXPECT_EQ(resp.ByteSizeLong(), 0u);
}

TEST_F(EndToEndTest, MetadataBothWays) {
  ClientContext ctx;
  Bound(&ctx);
  const std::string binary("\x00\x01\xfe\xff", 4);
  ctx.AddMetadata("echo-text", "value one");
  ctx.AddMetadata("echo-data-bin", binary);
  EchoRequest req;
  req.set_message("md");
  EchoResponse resp;
  Status s = stub_->Echo(&ctx, req, &resp);
  ASSERT_TRUE(s.ok()) << s;
  EXPECT_EQ(ctx.GetServerInitialMetadata().Get("initial-echo-text"),
            "value one");
  EXPECT_EQ(ctx.GetServerInitialMetadata().Get("initial-echo-data-bin"),
            binary);
  EXPECT_EQ(ctx.GetServerTrailingMetadata().Get("trailing-echo-text"),
            "value one");
  EXPECT_EQ(ctx.GetServerTrailingMetadata().Get("trailing-echo-data-bin"),
            binary);
}

TEST_F(EndToEndTest, MetadataOnTrailersOnlyError) {
  ClientContext ctx;
  Bound(&ctx);
  ctx.AddMetadata("echo-x", "y");
  EchoRequest req;
  req.set_status_code(StatusCode::NOT_FOUND);
  EchoResponse resp;
  Status s = stub_->Echo(&ctx, req, &resp);
  EXPECT_EQ(s.error_code(), StatusCode::NOT_FOUND);
  // A Trailers-Only response carries both kinds in one block.
  EXPECT_EQ(ctx.GetServerTrailingMetadata().Get("trailing-echo-x"), "y");
}

TEST_F(EndToEndTest, InvalidMetadataFailsLocally) {
  ClientContext ctx;
  Bound(&ctx);
  ctx.AddMetadata("Bad Key", "v");
  EchoResponse resp;
  Status s = stub_->Echo(&ctx, EchoRequest(), &resp);
  EXPECT_EQ(s.error_code(), StatusCode::INTERNAL) << s;
}

TEST_F(EndToEndTest, StatusCodesAndMessages) {
  const std::string special = "t\xc3\xa9st 100% \"done\"\n\t\x01 ok";
  for (int code = 1; code <= 16; ++code) {
    ClientContext ctx;
    Bound(&ctx);
    EchoRequest req;
    req.set_status_code(code);
    req.set_status_message(code == 2 ? special
                                     : "code " + std::to_string(code));
    EchoResponse resp;
    Status s = stub_->Echo(&ctx, req, &resp);
    EXPECT_EQ(s.error_code(), code);
    EXPECT_EQ(s.error_message(), req.status_message());
  }
}

TEST_F(EndToEndTest, DeadlineExceeded) {
  ClientContext ctx;
  ctx.set_deadline(absl::Now() + absl::Milliseconds(100));
  EchoRequest req;
  req.set_sleep_ms(3000);
  EchoResponse resp;
  const absl::Time start = absl::Now();
  Status s = stub_->Echo(&ctx, req, &resp);
  EXPECT_EQ(s.error_code(), StatusCode::DEADLINE_EXCEEDED) << s;
  EXPECT_LT(absl::Now() - start, absl::Seconds(2));
  // The server enforces it too: its handler sees the cancellation.
  EXPECT_TRUE(
      service_.saw_cancel_.WaitForNotificationWithTimeout(absl::Seconds(5)));
}

// A peer that does not cancel at its deadline (raw HTTP/2: grpc-timeout
// 100m, the request stream left open): the server's own timer ends the call,
// DEADLINE_EXCEEDED in Trailers-Only and a reset of the stream, and the
// handler sees IsCancelled.
TEST_F(EndToEndTest, ServerEnforcesTheDeadlineOfAPeerThatDoesNotCancel) {
  auto client = transport::BlockingHttp2Client::Connect(
      transport::SocketAddress::Loopback(AF_INET, port_), {});
  ASSERT_TRUE(client.ok()) << client.status();
  EchoRequest req;
  req.set_sleep_ms(20000);  // Until cancelled (20 s bound it).
  const std::string message = req.SerializeAsString();
  std::string framed(5, '\0');
  for (int i = 0; i < 4; ++i) {
    framed[1 + i] = static_cast<char>(message.size() >> (24 - 8 * i));
  }
  framed += message;
  struct Seen {
    absl::Mutex mu;
    std::string grpc_status, grpc_message;
    bool closed = false;
    absl::Status close_status;
  };
  auto seen = std::make_shared<Seen>();
  const absl::Time start = absl::Now();
  (*client)->RunInLoop([&](transport::Http2Client* c) {
    const std::vector<hpack::HeaderField> headers = {
        {":method", "POST"},
        {":scheme", "http"},
        {":path", "/rpc.test.EchoService/Echo"},
        {":authority", c->authority()},
        {"content-type", "application/grpc"},
        {"te", "trailers"},
        {"grpc-timeout", "100m"}};
    auto status_from = [seen](const hpack::HeaderList& fields) {
      absl::MutexLock lock(&seen->mu);
      for (size_t i = 0; i < fields.size(); ++i) {
        if (fields[i].name == "grpc-status") {
          seen->grpc_status = std::string(fields[i].value);
        } else if (fields[i].name == "grpc-message") {
          seen->grpc_message = std::string(fields[i].value);
        }
      }
    };
    transport::Http2Client::StreamCallbacks callbacks;
    callbacks.on_headers = [status_from](const hpack::HeaderList& h, bool) {
      status_from(h);  // Trailers-Only.
    };
    callbacks.on_trailers = status_from;
    callbacks.on_close = [seen](absl::Status status) {
      absl::MutexLock lock(&seen->mu);
      seen->closed = true;
      seen->close_status = std::move(status);
    };
    absl::StatusOr<uint32_t> id =
        c->StartRequest(headers, false, std::move(callbacks));
    ASSERT_TRUE(id.ok()) << id.status();
    transport::SliceBuffer body;
    body.Append(framed);
    ASSERT_TRUE(c->SendData(*id, std::move(body), false).ok());
  });
  ASSERT_TRUE(WaitUntil([&] {
    absl::MutexLock lock(&seen->mu);
    return seen->closed;
  })) << "the server never ended the call";
  // Not before the deadline (the server counts from when it read the
  // headers, after `start`).
  EXPECT_GE(absl::Now() - start, absl::Milliseconds(100));
  {
    absl::MutexLock lock(&seen->mu);
    EXPECT_EQ(seen->grpc_status, "4");  // DEADLINE_EXCEEDED
    EXPECT_EQ(seen->grpc_message, "Deadline Exceeded");
    EXPECT_EQ(seen->close_status.code(), absl::StatusCode::kAborted)
        << seen->close_status;
    // The response is complete, so the reset only asks us to stop sending
    // (RFC 9113 8.1): NO_ERROR, which grpc++ never reports over the status.
    EXPECT_EQ(std::string(seen->close_status.message()),
              "stream reset by the peer: NO_ERROR")
        << seen->close_status;
  }
  EXPECT_TRUE(
      service_.saw_cancel_.WaitForNotificationWithTimeout(absl::Seconds(20)));
}

TEST_F(EndToEndTest, ExpiredDeadlineFailsAtOnce) {
  ClientContext ctx;
  ctx.set_deadline(absl::Now() - absl::Seconds(1));
  EchoResponse resp;
  Status s = stub_->Echo(&ctx, EchoRequest(), &resp);
  EXPECT_EQ(s.error_code(), StatusCode::DEADLINE_EXCEEDED) << s;
}

TEST_F(EndToEndTest, ClientCancel) {
  ClientContext ctx;
  Bound(&ctx);
  EchoRequest req;
  req.set_sleep_ms(5000);
  EchoResponse resp;
  std::thread canceller([&] {
    // Once the handler runs (so that it can see the cancel).
    WaitUntil([&] { return service_.echo_entered_ > 0; });
    ctx.TryCancel();
  });
  Status s = stub_->Echo(&ctx, req, &resp);
  canceller.join();
  EXPECT_EQ(s.error_code(), StatusCode::CANCELLED) << s;
  EXPECT_TRUE(
      service_.saw_cancel_.WaitForNotificationWithTimeout(absl::Seconds(5)));
}

TEST_F(EndToEndTest, UnknownMethodAndService) {
  {
    ClientContext ctx;
    Bound(&ctx);
    auto stub = test::Unregistered::NewStub(channel_);
    EchoResponse resp;
    Status s = stub->Nothing(&ctx, EchoRequest(), &resp);
    EXPECT_EQ(s.error_code(), StatusCode::UNIMPLEMENTED) << s;
  }
  {
    ClientContext ctx;
    Bound(&ctx);
    EchoResponse resp;
    Status s = BlockingUnaryCall(channel_, "/rpc.test.EchoService/Missing",
                                 &ctx, EchoRequest(), &resp);
    EXPECT_EQ(s.error_code(), StatusCode::UNIMPLEMENTED) << s;
  }
}

TEST_F(EndToEndTest, MaxReceiveSizeOnServer) {
  ServerBuilder builder;
  builder.SetMaxReceiveMessageSize(1000);
  StartServer(std::move(builder));
  ClientContext ctx;
  Bound(&ctx);
  EchoRequest req;
  req.set_payload(std::string(5000, 'x'));
  EchoResponse resp;
  Status s = stub_->Echo(&ctx, req, &resp);
  EXPECT_EQ(s.error_code(), StatusCode::RESOURCE_EXHAUSTED) << s;
  // The connection stays usable.
  ClientContext ctx2;
  Bound(&ctx2);
  EXPECT_TRUE(stub_->Echo(&ctx2, EchoRequest(), &resp).ok());
}

TEST_F(EndToEndTest, MaxReceiveSizeOnClient) {
  ChannelArguments args;
  args.SetMaxReceiveMessageSize(1000);
  auto channel = CreateCustomChannel("127.0.0.1:" + std::to_string(port_),
                                     InsecureChannelCredentials(), args);
  auto stub = EchoService::NewStub(channel);
  ClientContext ctx;
  Bound(&ctx);
  EchoRequest req;
  req.set_response_size(5000);
  EchoResponse resp;
  Status s = stub->Echo(&ctx, req, &resp);
  EXPECT_EQ(s.error_code(), StatusCode::RESOURCE_EXHAUSTED) << s;
}

TEST_F(EndToEndTest, MaxSendSize) {
  ChannelArguments args;
  args.SetMaxSendMessageSize(1000);
  auto channel = CreateCustomChannel("127.0.0.1:" + std::to_string(port_),
                                     InsecureChannelCredentials(), args);
  auto stub = EchoService::NewStub(channel);
  ClientContext ctx;
  Bound(&ctx);
  EchoRequest req;
  req.set_payload(std::string(5000, 'x'));
  EchoResponse resp;
  Status s = stub->Echo(&ctx, req, &resp);
  EXPECT_EQ(s.error_code(), StatusCode::RESOURCE_EXHAUSTED) << s;

  ServerBuilder builder;
  builder.SetMaxSendMessageSize(1000);
  StartServer(std::move(builder));
  ClientContext ctx2;
  Bound(&ctx2);
  EchoRequest req2;
  req2.set_response_size(5000);
  s = stub_->Echo(&ctx2, req2, &resp);
  EXPECT_EQ(s.error_code(), StatusCode::RESOURCE_EXHAUSTED) << s;
}

TEST_F(EndToEndTest, MalformedRequestIsInternal) {
  ClientContext ctx;
  Bound(&ctx);
  std::shared_ptr<internal::ClientCall> call =
      internal::ChannelAccess::Impl(channel_.get())
          ->CreateCall("/rpc.test.EchoService/Echo", ctx.deadline(),
                       ctx.send_metadata());
  internal::ClientContextTestPeer::SetCall(&ctx, call, channel_);
  transport::SliceBuffer garbage;
  garbage.Append(std::string("\xff\xff\xff\xff", 4));
  call->Start(&garbage, true);
  transport::SliceBuffer out;
  EXPECT_FALSE(call->Read(&out));
  Status s = internal::ClientContextTestPeer::FinishCall(&ctx);
  EXPECT_EQ(s.error_code(), StatusCode::INTERNAL) << s;
}

TEST_F(EndToEndTest, ManyConcurrentCallsOnOneChannel) {
  constexpr int kThreads = 8;
  constexpr int kCallsPerThread = 50;
  std::atomic<int> ok{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < kCallsPerThread; ++i) {
        ClientContext ctx;
        Bound(&ctx);
        EchoRequest req;
        req.set_message(std::to_string(t) + "/" + std::to_string(i));
        EchoResponse resp;
        if (stub_->Echo(&ctx, req, &resp).ok() &&
            resp.message() == req.message()) {
          ++ok;
        }
      }
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(ok.load(), kThreads * kCallsPerThread);
}

TEST_F(EndToEndTest, AsyncUnary) {
  constexpr int kCalls = 100;
  std::vector<std::unique_ptr<ClientContext>> contexts(kCalls);
  std::vector<EchoResponse> responses(kCalls);
  std::vector<Status> statuses(kCalls);
  absl::Mutex mu;
  int done = 0;
  for (int i = 0; i < kCalls; ++i) {
    contexts[i] = std::make_unique<ClientContext>();
    Bound(contexts[i].get());
    EchoRequest req;
    req.set_message(std::to_string(i));
    if (i % 10 == 9) req.set_status_code(StatusCode::OUT_OF_RANGE);
    stub_->async()->Echo(contexts[i].get(), &req, &responses[i],
                         [&, i](Status s) {
                           absl::MutexLock lock(&mu);
                           statuses[i] = std::move(s);
                           ++done;
                         });
  }
  {
    absl::MutexLock lock(&mu);
    auto all_done = [&]() ABSL_SHARED_LOCKS_REQUIRED(mu) {
      return done == kCalls;
    };
    ASSERT_TRUE(
        mu.AwaitWithTimeout(absl::Condition(&all_done), absl::Seconds(10)));
  }
  for (int i = 0; i < kCalls; ++i) {
    if (i % 10 == 9) {
      EXPECT_EQ(statuses[i].error_code(), StatusCode::OUT_OF_RANGE);
    } else {
      EXPECT_TRUE(statuses[i].ok()) << statuses[i];
      EXPECT_EQ(responses[i].message(), std::to_string(i));
    }
  }
}

TEST_F(EndToEndTest, AsyncUnaryDeadline) {
  ClientContext ctx;
  ctx.set_deadline(absl::Now() + absl::Milliseconds(50));
  EchoRequest req;
  req.set_sleep_ms(2000);
  EchoResponse resp;
  absl::Notification done;
  Status status;
  stub_->async()->Echo(&ctx, &req, &resp, [&](Status s) {
    status = std::move(s);
    done.Notify();
  });
  ASSERT_TRUE(done.WaitForNotificationWithTimeout(absl::Seconds(5)));
  EXPECT_EQ(status.error_code(), StatusCode::DEADLINE_EXCEEDED);
}

TEST_F(EndToEndTest, ServerStreaming) {
  ClientContext ctx;
  Bound(&ctx);
  EchoRequest req;
  req.set_message("s");
  req.set_count(20);
  auto reader = stub_->ServerStream(&ctx, req);
  EchoResponse resp;
  int n = 0;
  while (reader->Read(&resp)) {
    EXPECT_EQ(resp.index(), n);
    ++n;
  }
  Status s = reader->Finish();
  EXPECT_TRUE(s.ok()) << s;
  EXPECT_EQ(n, 20);
}

TEST_F(EndToEndTest, ServerStreamingThenError) {
  ClientContext ctx;
  Bound(&ctx);
  EchoRequest req;
  req.set_count(3);
  req.set_status_code(StatusCode::ABORTED);
  req.set_status_message("after three");
  auto reader = stub_->ServerStream(&ctx, req);
  EchoResponse resp;
  int n = 0;
  while (reader->Read(&resp)) ++n;
  Status s = reader->Finish();
  EXPECT_EQ(n, 3);
  EXPECT_EQ(s.error_code(), StatusCode::ABORTED);
  EXPECT_EQ(s.error_message(), "after three");
}

TEST_F(EndToEndTest, ClientStreaming) {
  ClientContext ctx;
  Bound(&ctx);
  EchoResponse resp;
  auto writer = stub_->ClientStream(&ctx, &resp);
  for (int i = 0; i < 10; ++i) {
    EchoRequest req;
    req.set_message(std::to_string(i));
    ASSERT_TRUE(writer->Write(req));
  }
  ASSERT_TRUE(writer->WritesDone());
  Status s = writer->Finish();
  ASSERT_TRUE(s.ok()) << s;
  EXPECT_EQ(resp.index(), 10);
  EXPECT_EQ(resp.message(), "0123456789");
}

TEST_F(EndToEndTest, ClientStreamingEmpty) {
  ClientContext ctx;
  Bound(&ctx);
  EchoResponse resp;
  auto writer = stub_->ClientStream(&ctx, &resp);
  Status s = writer->Finish();
  ASSERT_TRUE(s.ok()) << s;
  EXPECT_EQ(resp.index(), 0);
}

TEST_F(EndToEndTest, BidiPingPong) {
  ClientContext ctx;
  Bound(&ctx);
  auto stream = stub_->Bidi(&ctx);
  for (int i = 0; i < 10; ++i) {
    EchoRequest req;
    req.set_message("ping " + std::to_string(i));
    ASSERT_TRUE(stream->Write(req));
    EchoResponse resp;
    ASSERT_TRUE(stream->Read(&resp));
    EXPECT_EQ(resp.message(), req.message());
    EXPECT_EQ(resp.index(), i);
  }
  stream->WritesDone();
  EchoResponse resp;
  EXPECT_FALSE(stream->Read(&resp));
  Status s = stream->Finish();
  EXPECT_TRUE(s.ok()) << s;
}

// A client that reads slowly holds a fast server writer back: the server's
// Write blocks instead of buffering the whole stream.
TEST_F(EndToEndTest, ServerStreamingBackpressure) {
  ClientContext ctx;
  Bound(&ctx, 30);
  EchoRequest req;
  req.set_count(2000);
  req.set_response_size(16 << 10);  // 32 MiB in all
  auto reader = stub_->ServerStream(&ctx, req);
  EchoResponse resp;
  ASSERT_TRUE(reader->Read(&resp));
  absl::SleepFor(absl::Milliseconds(300));
  // Windows (1 MiB stream, 4 MiB connection), the output high-water mark and
  // the call's write bound let only a few MiB through while we do not read.
  const int written = service_.max_written_.load();
  EXPECT_LT(written, 500) << "the writer was not held back";
  int n = 1;
  while (reader->Read(&resp)) ++n;
  EXPECT_TRUE(reader->Finish().ok());
  EXPECT_EQ(n, 2000);
}

// A stalled stream holds back only its own writer: another call on the same
// connection streams at full speed meanwhile.
TEST_F(EndToEndTest, StalledStreamDoesNotBlockOthers) {
  ClientContext stalled_ctx;
  Bound(&stalled_ctx, 30);
  EchoRequest big;
  big.set_count(1000);
  big.set_response_size(16 << 10);
  auto stalled = stub_->ServerStream(&stalled_ctx, big);
  EchoResponse resp;
  ASSERT_TRUE(stalled->Read(&resp));  // Started; then not read for a while.

  ClientContext ctx;
  Bound(&ctx, 10);
  EchoRequest req;
  req.set_count(300);
  req.set_response_size(16 << 10);
  auto reader = stub_->ServerStream(&ctx, req);
  int n = 0;
  while (reader->Read(&resp)) ++n;
  EXPECT_TRUE(reader->Finish().ok());
  EXPECT_EQ(n, 300);

  stalled_ctx.TryCancel();
  while (stalled->Read(&resp)) {
  }
  EXPECT_EQ(stalled->Finish().error_code(), StatusCode::CANCELLED);
}

// Streams whose application does not read hold back only themselves, through
// their stream windows: a unary call on the same channel goes through (with
// the connection window given back only as calls read, four unread streams of
// 64 KiB messages stalled it past its deadline). The deadlines only guard
// against a hang.
TEST_F(EndToEndTest, UnreadStreamsDoNotStallOtherCalls) {
  constexpr int kUnread = 4;
  EchoRequest big;
  big.set_count(1000);
  big.set_response_size(64 << 10);
  std::vector<std::unique_ptr<ClientContext>> contexts;
  std::vector<std::unique_ptr<ClientReader<EchoResponse>>> unread;
  EchoResponse resp;
  for (int i = 0; i < kUnread; ++i) {
    contexts.push_back(std::make_unique<ClientContext>());
    Bound(contexts.back().get(), 60);
    unread.push_back(stub_->ServerStream(contexts.back().get(), big));
    ASSERT_TRUE(unread.back()->Read(&resp));  // Started; then never read.
  }
  // The server's writers fill about a stream window each.
  EXPECT_TRUE(WaitUntil(
      [&] { return service_.total_written_.load() >= kUnread * 16; }));

  ClientContext ctx;
  Bound(&ctx, 20);
  EchoRequest req;
  req.set_message("through");
  req.set_response_size(64 << 10);
  EchoResponse out;
  const Status s = stub_->Echo(&ctx, req, &out);
  EXPECT_TRUE(s.ok()) << s;
  EXPECT_EQ(out.message(), "through");
  EXPECT_EQ(out.payload().size(), 64u << 10);

  for (int i = 0; i < kUnread; ++i) {
    contexts[i]->TryCancel();
    while (unread[i]->Read(&resp)) {
    }
    EXPECT_EQ(unread[i]->Finish().error_code(), StatusCode::CANCELLED);
  }
}

// The reverse: a slow server reader holds a fast client writer back.
TEST_F(EndToEndTest, ClientStreamingBackpressureAndCancel) {
  ClientContext ctx;
  Bound(&ctx, 30);
  EchoResponse resp;
  auto stream = stub_->Bidi(&ctx);  // The server reads one, writes one...
  EchoRequest req;
  req.set_message(std::string(64 << 10, 'w'));
  // 25 MiB, many times what the windows and the calls' bounds can hold.
  constexpr int kMaxWrites = 400;
  std::atomic<int> writes{0};
  std::thread writer([&] {
    while (writes < kMaxWrites && stream->Write(req)) ++writes;
  });
  // Nobody reads the responses: the server's writes block, so it stops
  // reading, so our writes block. Stalled: no write returned during round
  // trips of other calls on the connection (each one passes both loops).
  int stalled_at = -1;
  for (int i = 0; i < 5000 && stalled_at < 0; ++i) {
    const int before = writes.load();
    bool ok = true;
    for (int j = 0; j < 3 && ok; ++j) {
      ClientContext other;
      Bound(&other);
      EchoResponse r;
      ok = stub_->Echo(&other, EchoRequest(), &r).ok();
    }
    EXPECT_TRUE(ok) << "other calls on the connection keep going";
    if (!ok) break;
    if (before > 0 && writes.load() == before) stalled_at = before;
  }
  EXPECT_GT(stalled_at, 0);
  EXPECT_LT(stalled_at, kMaxWrites) << "the writer was not held back";
  ctx.TryCancel();
  writer.join();
  EXPECT_EQ(stream->Finish().error_code(), StatusCode::CANCELLED);
}

TEST_F(EndToEndTest, ShutdownWithCallsInFlight) {
  std::vector<std::thread> threads;
  std::atomic<int> ok{0}, failed{0};
  for (int i = 0; i < 4; ++i) {
    threads.emplace_back([&] {
      ClientContext ctx;
      Bound(&ctx);
      EchoRequest req;
      req.set_sleep_ms(200);
      EchoResponse resp;
      if (stub_->Echo(&ctx, req, &resp).ok()) {
        ++ok;
      } else {
        ++failed;
      }
    });
  }
  EXPECT_TRUE(WaitUntil([&] { return service_.echo_entered_ == 4; }));
  // Graceful: the calls in flight finish.
  server_->Shutdown(absl::Now() + absl::Seconds(5));
  for (auto& t : threads) t.join();
  EXPECT_EQ(ok.load(), 4);
  // New calls fail.
  ClientContext ctx;
  Bound(&ctx);
  EchoResponse resp;
  EXPECT_EQ(stub_->Echo(&ctx, EchoRequest(), &resp).error_code(),
            StatusCode::UNAVAILABLE);
}

TEST_F(EndToEndTest, ShutdownDeadlineCancelsLongCalls) {
  std::atomic<int> code{-1};
  std::string message;
  std::thread t([&] {
    ClientContext ctx;
    Bound(&ctx, 60);
    EchoRequest req;
    req.set_sleep_ms(30000);  // Until cancelled.
    EchoResponse resp;
    const Status status = stub_->Echo(&ctx, req, &resp);
    message = status.error_message();
    code = status.error_code();
  });
  EXPECT_TRUE(WaitUntil([&] { return service_.echo_entered_ == 1; }));
  server_->Shutdown(absl::Now() + absl::Milliseconds(100));
  t.join();
  // Not OK (the handler ran to its end) nor DEADLINE_EXCEEDED (the client
  // gave up): the server cancelled the call at its shutdown deadline.
  EXPECT_EQ(code.load(), StatusCode::UNAVAILABLE);
  // The status names the server's final GOAWAY, then the close.
  EXPECT_NE(message.find("GOAWAY NO_ERROR"), std::string::npos) << message;
  EXPECT_TRUE(
      service_.saw_cancel_.WaitForNotificationWithTimeout(absl::Seconds(20)));
}

TEST_F(EndToEndTest, ConnectFailureThenReconnect) {
  // Nothing listens on this port: UNAVAILABLE.
  server_->Shutdown(absl::Now());
  const int port = port_;
  {
    ClientContext ctx;
    Bound(&ctx);
    EchoResponse resp;
    auto channel = CreateChannel("127.0.0.1:" + std::to_string(port),
                                 InsecureChannelCredentials());
    auto stub = EchoService::NewStub(channel);
    EXPECT_EQ(stub->Echo(&ctx, EchoRequest(), &resp).error_code(),
              StatusCode::UNAVAILABLE);
  }
}

TEST_F(EndToEndTest, ChannelSurvivesServerRestart) {
  ClientContext ctx;
  Bound(&ctx);
  EchoResponse resp;
  ASSERT_TRUE(stub_->Echo(&ctx, EchoRequest(), &resp).ok());
  const int port = port_;
  server_->Shutdown(absl::Now() + absl::Seconds(2));
  server_.reset();
  int new_port = 0;
  server_ = ServerBuilder()
                .AddListeningPort("127.0.0.1:" + std::to_string(port),
                                  InsecureServerCredentials(), &new_port)
                .RegisterService(&service_)
                .BuildAndStart();
  ASSERT_NE(server_, nullptr);
  // The channel reconnects (maybe after a backoff).
  bool ok = false;
  for (int i = 0; i < 100 && !ok; ++i) {
    ClientContext ctx2;
    Bound(&ctx2);
    ok = stub_->Echo(&ctx2, EchoRequest(), &resp).ok();
    if (!ok) absl::SleepFor(absl::Milliseconds(50));
  }
  EXPECT_TRUE(ok);
}

}  // namespace
}  // namespace rpc
