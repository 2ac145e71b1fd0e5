// Leader/follower on the sync server (rpc/README.md, "Threading model"): a
// worker whose last call ran alone co-polls the server's loop, reads the
// next request itself and runs its handler there (no hand-off from the loop
// thread); calls that arrive together still spread over the workers instead
// of queueing behind the one that read them. Every wait is bounded.

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "gtest/gtest.h"
#include "rpc/rpc.h"
#include "rpc/testdata/test_service.rpc.pb.h"
#include "transport/io/event_loop.h"
#include "transport/testing/thread_probe.h"

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
    // I/O handlers this thread ran as a co-poller since its previous
    // handler ended: the request of this call among them when the worker
    // read it itself (a worker that is handed the call by the loop thread
    // ran none). It counts any co-polled I/O in that time, not this call's
    // request: a co-poll round that read only other frames (a WINDOW_UPDATE,
    // a PING) and then went back to the queue counts too. With one call at
    // a time on one connection that is rare, and with leader/follower off
    // no handler thread co-polls at all (0).
    thread_local uint64_t co_polled_before = 0;
    const uint64_t co_polled =
        transport::EventLoop::CoPolledEventsOnThisThread();
    if (co_polled > co_polled_before) ++read_by_handler_thread;
    if (req->message() == "burst") {
      // Held until `burst_size` handlers run at once (bounded): calls read
      // in one co-poll round that queued behind its reader, which runs one
      // handler at a time, would never get there. The first that gives up
      // lets the others through at once (the test then fails in seconds).
      absl::MutexLock lock(&mu);
      ++burst_running;
      max_burst_running = std::max(max_burst_running, burst_running);
      const absl::Time deadline = absl::Now() + absl::Seconds(10);
      while (max_burst_running < burst_size && !gave_up &&
             !cv.WaitWithDeadline(&mu, deadline)) {
      }
      if (max_burst_running < burst_size) gave_up = true;
      cv.SignalAll();
      --burst_running;
    }
    resp->set_message(req->message());
    co_polled_before = transport::EventLoop::CoPolledEventsOnThisThread();
    return Status::OK;
  }

  std::atomic<int> read_by_handler_thread{0};
  int burst_size = 0;
  absl::Mutex mu;
  absl::CondVar cv;
  int burst_running ABSL_GUARDED_BY(mu) = 0;
  int max_burst_running ABSL_GUARDED_BY(mu) = 0;
  bool gave_up ABSL_GUARDED_BY(mu) = false;
};

class LeaderFollowerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    int port = 0;
    ServerBuilder builder;
    builder.AddListeningPort("127.0.0.1:0", InsecureServerCredentials(), &port)
        .RegisterService(&service_)
        .SetWorkerThreads(2, 64)
        .SetWorkerLeaderFollower(leader_follower_);
    server_ = builder.BuildAndStart();
    ASSERT_NE(server_, nullptr);
    channel_ = CreateChannel("127.0.0.1:" + std::to_string(port),
                             InsecureChannelCredentials());
    stub_ = EchoService::NewStub(channel_);
  }
  void TearDown() override {
    if (server_ != nullptr) server_->Shutdown(absl::Now() + absl::Seconds(5));
  }

  // `n` sequential calls; returns how many handlers ran on the thread that
  // read their request (Service::read_by_handler_thread).
  int SequentialCalls(int n) {
    const int before = service_.read_by_handler_thread.load();
    for (int i = 0; i < n; ++i) {
      ClientContext ctx;
      ctx.set_deadline(absl::Now() + kHangGuard);
      EchoRequest req;
      req.set_message("seq");
      EchoResponse resp;
      EXPECT_TRUE(stub_->Echo(&ctx, req, &resp).ok());
    }
    return service_.read_by_handler_thread.load() - before;
  }

  bool leader_follower_ = true;  // SetWorkerLeaderFollower
  Service service_;
  std::unique_ptr<Server> server_;
  std::shared_ptr<Channel> channel_;
  std::unique_ptr<EchoService::Stub> stub_;
};

class LeaderFollowerOffTest : public LeaderFollowerTest {
 protected:
  LeaderFollowerOffTest() { leader_follower_ = false; }
};

// Prints the fraction of `n` calls whose request their handler's thread read.
void PrintReadByHandlerThread(int read_by_handler_thread, int n) {
  std::printf("%d of %d calls (%.0f%%) read by their handler's thread\n",
              read_by_handler_thread, n, 100.0 * read_by_handler_thread / n);
}

TEST_F(LeaderFollowerTest, SequentialCallsRunOnTheThreadThatReadTheRequest) {
  // The first call is handed over by the loop thread; from then on the
  // worker that ran the last call reads the next. A co-poll is declined
  // while the loop thread is still awake from the call before, and the next
  // call then goes through the hand-off, so how many are read there depends
  // on the scheduling (45-97% in 100 runs on 2 CPUs): the test asks for one,
  // which off never gives (LeaderFollowerOffTest). The pool's co-poll tests
  // skip where the thread probe cannot read /proc/self/task/TID/syscall
  // (gVisor, ptrace restrictions), a kernel whose epoll may not wake the
  // latest waiter, the co-poller, first; so does this one.
  if (!transport::testing::ThreadSyscallReadable()) {
    GTEST_SKIP() << transport::testing::kNoThreadSyscall;
  }
  constexpr int kCalls = 100;
  const int read_by_handler_thread = SequentialCalls(kCalls);
  PrintReadByHandlerThread(read_by_handler_thread, kCalls);
  EXPECT_GT(read_by_handler_thread, 0);
}

TEST_F(LeaderFollowerOffTest, EveryCallIsHandedOver) {
  // SetWorkerLeaderFollower(false): no worker co-polls, every request is
  // read by the loop thread.
  constexpr int kCalls = 100;
  const int read_by_handler_thread = SequentialCalls(kCalls);
  PrintReadByHandlerThread(read_by_handler_thread, kCalls);
  EXPECT_EQ(read_by_handler_thread, 0);
}

TEST_F(LeaderFollowerTest, ABurstSpreadsOverTheWorkers) {
  // A worker leads (sequential calls), then 32 calls come at once: the
  // leader keeps one and the pool runs the others on other workers, all 32
  // at the same time (each handler waits for the others).
  // A worker co-polls: one read the request of the last call (bounded).
  bool leads = false;
  for (int i = 0; i < 1000 && !leads; ++i) leads = SequentialCalls(1) > 0;
  ASSERT_TRUE(leads);
  constexpr int kBurst = 32;
  service_.burst_size = kBurst;
  struct Call {
    ClientContext ctx;
    EchoRequest req;
    EchoResponse resp;
    Status status;
  };
  std::vector<std::unique_ptr<Call>> calls;
  absl::Mutex mu;
  int done = 0;
  for (int i = 0; i < kBurst; ++i) {
    calls.push_back(std::make_unique<Call>());
    Call* c = calls.back().get();
    c->ctx.set_deadline(absl::Now() + 2 * kHangGuard);
    c->req.set_message("burst");
    stub_->async()->Echo(&c->ctx, &c->req, &c->resp, [&, c](Status status) {
      absl::MutexLock lock(&mu);
      c->status = status;
      ++done;
    });
  }
  {
    absl::MutexLock lock(&mu);
    const absl::Time deadline = absl::Now() + 3 * kHangGuard;
    auto all_done = [&] { return done == kBurst; };
    mu.AwaitWithDeadline(absl::Condition(&all_done), deadline);
    ASSERT_EQ(done, kBurst);
  }
  for (const auto& c : calls) EXPECT_TRUE(c->status.ok());
  {
    absl::MutexLock lock(&service_.mu);
    EXPECT_EQ(service_.max_burst_running, kBurst);
  }
  // And a worker leads again once calls come one at a time. Bounded by
  // calls, as the first wait above: whether a given call's co-poll is
  // declined (the loop thread still awake) is scheduling, so 50 calls once
  // saw none in about 100 runs, while a pool that never leads again fails
  // here after 1,000.
  leads = false;
  for (int i = 0; i < 1000 && !leads; ++i) leads = SequentialCalls(1) > 0;
  EXPECT_TRUE(leads);
}

}  // namespace
}  // namespace rpc
