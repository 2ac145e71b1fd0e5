// Blocking handlers beyond the worker limit (issue 14, section 2): with
// SetWorkerThreads(min, max) and `max` streaming handlers blocked on their
// clients, a new call waits for a worker up to (just before) its deadline
// and then ends RESOURCE_EXHAUSTED, which is what its client sees; a call
// without a deadline waits until a worker is free; a call cancelled while it
// waits leaves the queue and its handler never runs; SetMaxPendingCalls
// bounds the queue. Every wait is bounded.

#include <atomic>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "gtest/gtest.h"
#include "rpc/rpc.h"
#include "rpc/testdata/test_service.rpc.pb.h"

namespace rpc {
namespace {

using test::EchoRequest;
using test::EchoResponse;
using test::EchoService;

constexpr absl::Duration kHangGuard = absl::Seconds(30);

class Service final : public EchoService::Service {
 public:
  Status Echo(ServerContext* /*ctx*/, const EchoRequest* req,
              EchoResponse* resp) override {
    if (req->message() == "must not run") ++must_not_run;
    resp->set_message(req->message());
    return Status::OK;
  }
  Status ServerStream(ServerContext* /*ctx*/, const EchoRequest* req,
                      ServerWriter<EchoResponse>* /*writer*/) override {
    if (req->message() == "must not run") ++must_not_run;
    if (req->message() == "waits") ++waits_ran;
    return Status::OK;
  }
  // Echoes until the client half-closes: blocked on its client meanwhile.
  Status Bidi(ServerContext* /*ctx*/,
              ServerReaderWriter<EchoResponse, EchoRequest>* stream) override {
    EchoRequest req;
    while (stream->Read(&req)) {
      EchoResponse resp;
      resp.set_message(req.message());
      if (!stream->Write(resp)) break;
    }
    return Status::OK;
  }
  std::atomic<int> must_not_run{0};
  std::atomic<int> waits_ran{0};
};

// A bidi call whose handler holds a worker until Release.
class BlockedStream {
 public:
  explicit BlockedStream(EchoService::Stub* stub) {
    ctx_.set_deadline(absl::Now() + kHangGuard);
    stream_ = stub->Bidi(&ctx_);
  }
  // True once the handler runs (it echoed a message).
  bool WaitRunning() {
    EchoRequest req;
    req.set_message("hello");
    EchoResponse resp;
    return stream_->Write(req) && stream_->Read(&resp) &&
           resp.message() == "hello";
  }
  Status Release() {
    stream_->WritesDone();
    EchoResponse resp;
    while (stream_->Read(&resp)) {
    }
    return stream_->Finish();
  }

 private:
  ClientContext ctx_;
  std::unique_ptr<ClientReaderWriter<EchoRequest, EchoResponse>> stream_;
};

class WorkerLimitTest : public ::testing::Test {
 protected:
  void Start(int max_pending = 0) {
    int port = 0;
    ServerBuilder builder;
    builder.AddListeningPort("127.0.0.1:0", InsecureServerCredentials(), &port)
        .RegisterService(&service_)
        .SetWorkerThreads(2, 2);
    if (max_pending > 0) builder.SetMaxPendingCalls(max_pending);
    server_ = builder.BuildAndStart();
    ASSERT_NE(server_, nullptr);
    channel_ = CreateChannel("127.0.0.1:" + std::to_string(port),
                             InsecureChannelCredentials());
    stub_ = EchoService::NewStub(channel_);
  }
  void TearDown() override {
    if (server_ != nullptr) server_->Shutdown(absl::Now() + absl::Seconds(5));
  }

  // Both workers held by streaming handlers blocked on their clients.
  void BlockBothWorkers() {
    for (int i = 0; i < 2; ++i) {
      blocked_.push_back(std::make_unique<BlockedStream>(stub_.get()));
      ASSERT_TRUE(blocked_.back()->WaitRunning());
    }
  }

  Status Echo(const std::string& message, absl::Duration timeout,
              EchoResponse* resp) {
    ClientContext ctx;
    ctx.set_deadline(absl::Now() + timeout);
    EchoRequest req;
    req.set_message(message);
    return stub_->Echo(&ctx, req, resp);
  }

  Service service_;
  std::unique_ptr<Server> server_;
  std::shared_ptr<Channel> channel_;
  std::unique_ptr<EchoService::Stub> stub_;
  std::vector<std::unique_ptr<BlockedStream>> blocked_;
};

// The third call, with a deadline, gets the server's RESOURCE_EXHAUSTED (not
// its own DEADLINE_EXCEEDED: the server gives up a tenth of the time left
// before the deadline); its handler never runs; once a handler returns, a
// fourth call runs.
TEST_F(WorkerLimitTest, CallBeyondTheLimitEndsResourceExhaustedAtItsDeadline) {
  Start();
  BlockBothWorkers();
  EchoResponse resp;
  const absl::Time start = absl::Now();
  // 10 s: the server gives up 1 s (its cap) before the client's own timer,
  // a margin no loaded or sanitized run eats.
  const Status third = Echo("must not run", absl::Seconds(10), &resp);
  EXPECT_EQ(third.error_code(), StatusCode::RESOURCE_EXHAUSTED)
      << third.error_message();
  EXPECT_EQ(third.error_message(),
            "no worker thread available within the deadline");
  // It waited for a worker (about 9 s), not failed at once.
  EXPECT_GE(absl::Now() - start, absl::Seconds(5));

  EXPECT_TRUE(blocked_[0]->Release().ok());
  const Status fourth = Echo("fourth", kHangGuard, &resp);
  EXPECT_TRUE(fourth.ok()) << fourth.error_message();
  EXPECT_EQ(resp.message(), "fourth");
  EXPECT_EQ(service_.must_not_run.load(), 0);
  EXPECT_TRUE(blocked_[1]->Release().ok());
}

// A call without a deadline waits for a worker however long it takes: a
// call with a deadline made after it gives up (RESOURCE_EXHAUSTED) while it
// goes on waiting, which the queue bound shows without any sleep (with room
// for two waiting calls, a third is refused at once); once a worker is free
// it runs.
TEST_F(WorkerLimitTest, CallWithoutADeadlineWaitsForAWorker) {
  Start(/*max_pending=*/2);
  BlockBothWorkers();
  ClientContext ctx;  // no deadline
  EchoRequest req;
  req.set_message("waits");
  auto waiting = stub_->ServerStream(&ctx, req);
  // Made after it on the same connection, so queued behind it; 10 s: the
  // server's verdict comes 1 s before the client's own timer.
  EchoResponse resp;
  EXPECT_EQ(Echo("probe", absl::Seconds(10), &resp).error_code(),
            StatusCode::RESOURCE_EXHAUSTED);
  // It still waits: beside a second waiting call the queue is full.
  ClientContext filler_ctx;
  filler_ctx.set_deadline(absl::Now() + kHangGuard);
  EchoRequest filler_req;
  filler_req.set_message("filler");
  auto filler = stub_->ServerStream(&filler_ctx, filler_req);
  EXPECT_EQ(Echo("probe", kHangGuard, &resp).error_message(),
            "too many calls waiting for a worker thread");
  EXPECT_EQ(service_.waits_ran.load(), 0);
  EXPECT_TRUE(blocked_[0]->Release().ok());
  const Status waited = waiting->Finish();
  EXPECT_TRUE(waited.ok()) << waited.error_message();
  EXPECT_EQ(service_.waits_ran.load(), 1);
  EXPECT_TRUE(blocked_[1]->Release().ok());
  EXPECT_TRUE(filler->Finish().ok());
}

// A call cancelled by its client while it waits leaves the queue at once:
// with room for one waiting call, the call made after the cancel takes its
// place (it is not refused) and runs when a worker frees up, while the
// cancelled call's handler never runs.
TEST_F(WorkerLimitTest, CallCancelledWhileWaitingLeavesTheQueue) {
  Start(/*max_pending=*/1);
  BlockBothWorkers();
  ClientContext ctx;  // no deadline: only the cancel ends it
  EchoRequest req;
  req.set_message("must not run");
  auto cancelled = stub_->ServerStream(&ctx, req);
  // Made after it on the same connection: refused, since it waits.
  EchoResponse resp;
  EXPECT_EQ(Echo("probe", kHangGuard, &resp).error_message(),
            "too many calls waiting for a worker thread");
  ctx.TryCancel();
  EXPECT_EQ(cancelled->Finish().error_code(), StatusCode::CANCELLED);
  // Its RST_STREAM goes out before the next call's HEADERS.
  ClientContext next_ctx;
  next_ctx.set_deadline(absl::Now() + kHangGuard);
  req.set_message("next");
  auto next = stub_->ServerStream(&next_ctx, req);
  // The next call holds the one place now: a probe after it is refused.
  EXPECT_EQ(Echo("probe", kHangGuard, &resp).error_message(),
            "too many calls waiting for a worker thread");
  EXPECT_TRUE(blocked_[0]->Release().ok());
  const Status ran = next->Finish();
  EXPECT_TRUE(ran.ok()) << ran.error_message();
  EXPECT_EQ(service_.must_not_run.load(), 0);
  EXPECT_TRUE(blocked_[1]->Release().ok());
}

// SetMaxPendingCalls(1): one call may wait; the next one ends at once with
// RESOURCE_EXHAUSTED (its deadline is far away); the one waiting runs once a
// worker is free.
TEST_F(WorkerLimitTest, QueueBoundRefusesAtOnce) {
  Start(/*max_pending=*/1);
  BlockBothWorkers();
  ClientContext ctx;
  ctx.set_deadline(absl::Now() + kHangGuard);
  EchoRequest req;
  req.set_message("waits");
  auto waiting = stub_->ServerStream(&ctx, req);  // started before the next
  EchoResponse resp;
  const Status refused = Echo("refused", kHangGuard, &resp);
  EXPECT_EQ(refused.error_code(), StatusCode::RESOURCE_EXHAUSTED);
  EXPECT_EQ(refused.error_message(),
            "too many calls waiting for a worker thread");
  EXPECT_TRUE(blocked_[0]->Release().ok());
  const Status ran = waiting->Finish();
  EXPECT_TRUE(ran.ok()) << ran.error_message();
  EXPECT_TRUE(blocked_[1]->Release().ok());
}

}  // namespace
}  // namespace rpc
