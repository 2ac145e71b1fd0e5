// Services beyond the generated blocking form: a CallbackService (answers
// later, from another thread), a blocking service with one method in callback
// form (WithCallbackMethod_Echo), and a hand-registered raw method (answers
// bytes that do not parse; a raw HTTP/2 server answers a callback call with
// a message that does not parse, read by a co-poller).

#include <atomic>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "absl/time/clock.h"
#include "gtest/gtest.h"
#include "rpc/internal/channel_impl.h"
#include "rpc/internal/server_call.h"
#include "rpc/rpc.h"
#include "rpc/testdata/test_service.rpc.pb.h"
#include "rpc/testing/scripted_server.h"
#include "transport/io/event_loop.h"
#include "transport/testing/thread_probe.h"
#include "transport/testing/wait_until.h"

namespace rpc {
namespace {

using test::EchoRequest;
using test::EchoResponse;
using test::EchoService;

// A server on a loopback port for `service`; `max_workers` > 0 sets the
// worker pool to 1..max_workers.
std::unique_ptr<Server> Serve(Service* service, int* port,
                              int max_workers = 0) {
  ServerBuilder builder;
  builder.AddListeningPort("127.0.0.1:0", InsecureServerCredentials(), port)
      .RegisterService(service);
  if (max_workers > 0) builder.SetWorkerThreads(1, max_workers);
  return builder.BuildAndStart();
}

std::unique_ptr<EchoService::Stub> StubFor(int port) {
  return EchoService::NewStub(CreateChannel("127.0.0.1:" + std::to_string(port),
                                            InsecureChannelCredentials()));
}

// A CallbackService answers from another thread without holding a worker.
class CallbackEcho final : public EchoService::CallbackService {
 public:
  ~CallbackEcho() override {
    for (auto& t : threads_) t.join();
  }
  ServerUnaryReactor* Echo(CallbackServerContext* ctx, const EchoRequest* req,
                           EchoResponse* resp) override {
    ctx->AddTrailingMetadata("x-async", "yes");
    ServerUnaryReactor* reactor = ctx->DefaultReactor();
    absl::MutexLock lock(&mu_);
    threads_.emplace_back([req, resp, reactor] {
      absl::SleepFor(absl::Milliseconds(req->sleep_ms()));
      if (req->status_code() != 0) {
        reactor->Finish(
            Status(static_cast<StatusCode>(req->status_code()), "async"));
        return;
      }
      resp->set_message("async " + req->message());
      reactor->Finish(Status::OK);
    });
    return reactor;
  }

 private:
  absl::Mutex mu_;
  std::vector<std::thread> threads_;
};

TEST(CallbackServiceTest, UnaryAnsweredLater) {
  CallbackEcho service;
  int port = 0;
  // One worker: the 20 calls in flight at once do not hold it.
  std::unique_ptr<Server> server = Serve(&service, &port, 1);
  ASSERT_NE(server, nullptr);
  auto stub = StubFor(port);
  std::vector<std::thread> clients;
  std::atomic<int> ok{0};
  for (int i = 0; i < 20; ++i) {
    clients.emplace_back([&, i] {
      ClientContext ctx;
      ctx.set_deadline(absl::Now() + absl::Seconds(10));
      EchoRequest req;
      req.set_message(std::to_string(i));
      req.set_sleep_ms(200);
      EchoResponse resp;
      Status s = stub->Echo(&ctx, req, &resp);
      if (s.ok() && resp.message() == "async " + std::to_string(i) &&
          ctx.GetServerTrailingMetadata().Get("x-async") == "yes") {
        ++ok;
      }
    });
  }
  const absl::Time start = absl::Now();
  for (auto& t : clients) t.join();
  EXPECT_EQ(ok.load(), 20);
  EXPECT_LT(absl::Now() - start, absl::Seconds(3));  // Not 20 x 200 ms.
  {
    ClientContext ctx;
    ctx.set_deadline(absl::Now() + absl::Seconds(10));
    EchoRequest req;
    req.set_status_code(StatusCode::ABORTED);
    EchoResponse resp;
    EXPECT_EQ(stub->Echo(&ctx, req, &resp).error_code(), StatusCode::ABORTED);
  }
  // The methods it does not override answer UNIMPLEMENTED.
  ClientContext ctx;
  ctx.set_deadline(absl::Now() + absl::Seconds(10));
  auto reader = stub->ServerStream(&ctx, EchoRequest());
  EXPECT_EQ(reader->Finish().error_code(), StatusCode::UNIMPLEMENTED);
  stub.reset();
  server->Shutdown(absl::Now() + absl::Seconds(5));
}

// Callback unary handlers answering at once, beside a blocking Bidi that
// echoes until its client half-closes.
class InlineEcho final
    : public EchoService::WithCallbackMethod_Echo<EchoService::Service> {
 public:
  ServerUnaryReactor* Echo(CallbackServerContext* ctx, const EchoRequest* req,
                           EchoResponse* resp) override {
    resp->set_message(req->message());
    ServerUnaryReactor* reactor = ctx->DefaultReactor();
    reactor->Finish(Status::OK);
    return reactor;
  }
  Status Bidi(ServerContext*,
              ServerReaderWriter<EchoResponse, EchoRequest>* stream) override {
    EchoRequest req;
    while (stream->Read(&req)) {
      EchoResponse resp;
      resp.set_message(req.message());
      if (!stream->Write(resp)) break;
    }
    return Status::OK;
  }
};

// Callback handlers need no worker thread: with the only worker held by a
// blocking stream, unary callback calls are still answered (they used to
// queue behind it until their deadline).
TEST(CallbackServiceTest, DoesNotNeedAWorker) {
  InlineEcho service;
  int port = 0;
  std::unique_ptr<Server> server = Serve(&service, &port, 1);
  ASSERT_NE(server, nullptr);
  auto stub = StubFor(port);
  ClientContext stream_ctx;
  stream_ctx.set_deadline(absl::Now() + absl::Seconds(30));
  auto stream = stub->Bidi(&stream_ctx);
  EchoRequest hello;
  hello.set_message("hold");
  ASSERT_TRUE(stream->Write(hello));
  EchoResponse echoed;
  ASSERT_TRUE(stream->Read(&echoed));  // The handler holds the worker now.
  for (int i = 0; i < 50; ++i) {
    ClientContext ctx;
    ctx.set_deadline(absl::Now() + absl::Seconds(10));  // hang guard
    EchoRequest req;
    req.set_message(std::to_string(i));
    EchoResponse resp;
    Status s = stub->Echo(&ctx, req, &resp);
    ASSERT_TRUE(s.ok()) << s;
    EXPECT_EQ(resp.message(), std::to_string(i));
  }
  ASSERT_TRUE(stream->WritesDone());
  EXPECT_TRUE(stream->Finish().ok());
  stub.reset();
  server->Shutdown(absl::Now() + absl::Seconds(5));
}

// A raw service whose Echo answers bytes that are not an EchoResponse.
class GarbageService final : public Service {
 public:
  GarbageService() {
    AddMethod("/rpc.test.EchoService/Echo", RpcType::kUnary,
              [](ServerContext* ctx) {
                transport::SliceBuffer request;
                ctx->call()->Read(&request);
                transport::SliceBuffer garbage;
                garbage.Append(std::string("\xff\xff\xff\xff", 4));
                ctx->call()->Write(std::move(garbage),
                                   ctx->mutable_initial_metadata());
                return Status::OK;
              });
  }
};

TEST(MalformedResponseTest, IsInternal) {
  GarbageService service;
  int port = 0;
  std::unique_ptr<Server> server = Serve(&service, &port);
  ASSERT_NE(server, nullptr);
  auto stub = StubFor(port);
  ClientContext ctx;
  ctx.set_deadline(absl::Now() + absl::Seconds(10));
  EchoResponse resp;
  Status s = stub->Echo(&ctx, EchoRequest(), &resp);
  EXPECT_EQ(s.error_code(), StatusCode::INTERNAL) << s;
  stub.reset();
  server->Shutdown(absl::Now() + absl::Seconds(5));
}

// A callback unary Echo of an empty request, started at construction; the
// context outlives it (the test waits for `done`).
struct AsyncEcho {
  explicit AsyncEcho(EchoService::Stub* stub) {
    ctx.set_deadline(absl::Now() + absl::Seconds(30));
    stub->async()->Echo(&ctx, &req, &resp, [this](Status s) {
      status = std::move(s);
      done.Notify();
    });
  }
  ClientContext ctx;
  EchoRequest req;
  EchoResponse resp;
  absl::Notification done;
  Status status;
};

// A callback call's response that does not parse ends INTERNAL, never OK.
// No other call: the loop thread reads the response and fails the call as
// the message parses, before the trailers are handled.
TEST(MalformedResponseTest, IsInternalForACallbackCall) {
  GarbageService service;
  int port = 0;
  std::unique_ptr<Server> server = Serve(&service, &port);
  ASSERT_NE(server, nullptr);
  auto stub = StubFor(port);
  AsyncEcho call(stub.get());
  ASSERT_TRUE(call.done.WaitForNotificationWithTimeout(absl::Seconds(20)));
  EXPECT_EQ(call.status.error_code(), StatusCode::INTERNAL) << call.status;
  EXPECT_EQ(call.status.error_message(), "error parsing response message");
  stub.reset();
  server->Shutdown(absl::Now() + absl::Seconds(5));
}

// The same when a blocking call's caller co-polls the channel's loop and
// reads the callback call's response: HEADERS, a message that does not
// parse and the trailers (grpc-status 0) in one write, so in one read. The
// co-poller posts the message's reaction and then the status's (reactions
// never run on it), so the status lands before the parse fails, and the
// failure must still win (OK without the fix of d016382). A raw server
// holds both calls, then answers both in one write once the blocking
// caller sleeps in epoll_wait (it co-polls: a caller waiting on its call
// sleeps in a futex). A caller that found the loop awake does not co-poll:
// it is cancelled and another tried, a bounded number of times.
TEST(MalformedResponseTest, IsInternalForACallbackCallReadByACoPoller) {
  if (!transport::testing::ThreadSyscallReadable()) {
    GTEST_SKIP() << transport::testing::kNoThreadSyscall;
  }
  testing::ScriptedServer::Plan plan;
  plan.hold = true;
  plan.response_bytes = 4;  // Zeros: field number 0 does not parse.
  testing::ScriptedServer raw({plan});
  // The channel on a loop of ours, whose thread we know.
  absl::StatusOr<std::shared_ptr<LoopGroup>> group = LoopGroup::Create(1);
  ASSERT_TRUE(group.ok()) << group.status();
  transport::EventLoop* loop =
      internal::LoopGroupAccess::Group(**group).loop(0);
  std::atomic<pid_t> loop_tid{0};
  loop->Post([&] { loop_tid = transport::testing::ThreadId(); });
  ChannelArguments args;
  args.SetLoopGroup(*group);
  auto stub = EchoService::NewStub(
      CreateCustomChannel(raw.target(), InsecureChannelCredentials(), args));
  AsyncEcho call(stub.get());
  ASSERT_TRUE(raw.WaitRequests(1));
  ASSERT_TRUE(transport::testing::WaitUntil([&] { return loop_tid != 0; }));
  Status blocking_status;
  uint64_t co_polled = 0;
  bool polling = false;
  for (int attempt = 0; attempt < 10 && !polling; ++attempt) {
    ASSERT_TRUE(transport::testing::WaitAsleepInEpoll(loop_tid.load()));
    std::atomic<pid_t> blocking_tid{0};
    ClientContext bctx;
    bctx.set_deadline(absl::Now() + absl::Seconds(30));
    std::thread blocking([&] {
      blocking_tid = transport::testing::ThreadId();
      const uint64_t before =
          transport::EventLoop::CoPolledEventsOnThisThread();
      EchoResponse bresp;
      blocking_status = stub->Echo(&bctx, EchoRequest(), &bresp);
      co_polled = transport::EventLoop::CoPolledEventsOnThisThread() - before;
    });
    ASSERT_TRUE(raw.WaitRequests(2 + attempt));
    while (blocking_tid.load() == 0) std::this_thread::yield();
    polling = transport::testing::WaitAsleepInEpoll(blocking_tid.load(),
                                                    absl::Seconds(1));
    if (polling) raw.AnswerHeld();
    if (!polling) bctx.TryCancel();
    blocking.join();
  }
  ASSERT_TRUE(polling) << "the blocking caller never co-polled";
  EXPECT_TRUE(call.done.WaitForNotificationWithTimeout(absl::Seconds(30)));
  EXPECT_GT(co_polled, 0u) << "the blocking caller did not read the answers";
  EXPECT_EQ(call.status.error_code(), StatusCode::INTERNAL) << call.status;
  EXPECT_EQ(call.status.error_message(), "error parsing response message");
  EXPECT_EQ(blocking_status.error_code(), StatusCode::INTERNAL)
      << blocking_status;
  raw.CloseHeld();
}

}  // namespace
}  // namespace rpc
