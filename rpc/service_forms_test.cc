// Services beyond the generated blocking form: a CallbackService (answers
// later, from another thread), a blocking service with one method in callback
// form (WithCallbackMethod_Echo), and a hand-registered raw method (answers
// bytes that do not parse).

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
#include "rpc/internal/server_call.h"
#include "rpc/rpc.h"
#include "rpc/testdata/test_service.rpc.pb.h"

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

// A raw service whose Echo answers bytes that are not an EchoResponse; a
// non-empty request answers only once release() (bounded).
class GarbageService final : public Service {
 public:
  GarbageService() {
    AddMethod("/rpc.test.EchoService/Echo", RpcType::kUnary,
              [this](ServerContext* ctx) {
                transport::SliceBuffer request;
                ctx->call()->Read(&request);
                if (request.size() > 0) {
                  held_.fetch_add(1);
                  release_.WaitForNotificationWithTimeout(absl::Seconds(30));
                }
                transport::SliceBuffer garbage;
                garbage.Append(std::string("\xff\xff\xff\xff", 4));
                ctx->call()->Write(std::move(garbage),
                                   ctx->mutable_initial_metadata());
                return Status::OK;
              });
  }
  int held() const { return held_.load(); }
  void release() { release_.Notify(); }

 private:
  std::atomic<int> held_{0};
  absl::Notification release_;
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

// A callback call's response that does not parse ends INTERNAL, never OK,
// also when a blocking caller co-polls the channel's loop (it reads the
// response, headers, message and trailers, and posts the message's reaction:
// the status landed before the parse failed, which then changed nothing).
TEST(MalformedResponseTest, IsInternalForACallbackCall) {
  GarbageService service;
  int port = 0;
  std::unique_ptr<Server> server = Serve(&service, &port, 4);
  ASSERT_NE(server, nullptr);
  auto stub = StubFor(port);
  auto callback_call = [&] {
    ClientContext ctx;
    ctx.set_deadline(absl::Now() + absl::Seconds(10));
    EchoRequest req;
    EchoResponse resp;
    absl::Notification done;
    Status status;
    stub->async()->Echo(&ctx, &req, &resp, [&](Status s) {
      status = std::move(s);
      done.Notify();
    });
    EXPECT_TRUE(done.WaitForNotificationWithTimeout(absl::Seconds(20)));
    return status;
  };
  // No other call: the loop thread reads the response.
  Status alone = callback_call();
  EXPECT_EQ(alone.error_code(), StatusCode::INTERNAL) << alone;
  EXPECT_EQ(alone.error_message(), "error parsing response message");
  // A blocking call waits (co-polls) while callback calls get answers.
  Status blocking_status;
  std::thread blocking([&] {
    ClientContext ctx;
    ctx.set_deadline(absl::Now() + absl::Seconds(30));
    EchoRequest req;
    req.set_message("hold");
    EchoResponse resp;
    blocking_status = stub->Echo(&ctx, req, &resp);
  });
  const absl::Time limit = absl::Now() + absl::Seconds(20);
  while (service.held() == 0 && absl::Now() < limit) {
    absl::SleepFor(absl::Milliseconds(1));
  }
  EXPECT_EQ(service.held(), 1);
  for (int i = 0; i < 200; ++i) {
    Status s = callback_call();
    EXPECT_EQ(s.error_code(), StatusCode::INTERNAL) << i << ": " << s;
  }
  service.release();
  blocking.join();
  EXPECT_EQ(blocking_status.error_code(), StatusCode::INTERNAL)
      << blocking_status;
  stub.reset();
  server->Shutdown(absl::Now() + absl::Seconds(5));
}

}  // namespace
}  // namespace rpc
