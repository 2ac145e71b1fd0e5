// grpc.health.v1.Health on our server, called by our client and by Debian's
// grpc++ client (stubs from grpc_cpp_plugin, namespace
// grpc::health::v1::grpcpeer). Every wait is bounded by a deadline.

#include <grpcpp/grpcpp.h>

#include <atomic>
#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/cleanup/cleanup.h"
#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "absl/time/clock.h"
#include "gtest/gtest.h"
#include "rpc/health/health.grpc.pb.h"
#include "rpc/health/health.pb.h"
#include "rpc/health/health.rpc.pb.h"
#include "rpc/health/health_check_service.h"
#include "rpc/rpc.h"
#include "transport/testing/thread_probe.h"
#include "transport/testing/wait_until.h"

namespace rpc {
namespace {

using grpc::health::v1::Health;
using grpc::health::v1::HealthCheckRequest;
using grpc::health::v1::HealthCheckResponse;
using GrpcHealth = grpc::health::v1::grpcpeer::Health;

// Polls `done` until it holds or `timeout` passed.
bool WaitFor(const std::function<bool()>& done,
             absl::Duration timeout = absl::Seconds(5)) {
  return transport::testing::WaitUntil(done, timeout);
}

HealthCheckRequest Request(const std::string& service) {
  HealthCheckRequest req;
  req.set_service(service);
  return req;
}

class HealthTest : public ::testing::Test {
 protected:
  void TearDown() override {
    stub_.reset();
    channel_.reset();
    if (server_ != nullptr) server_->Shutdown(absl::Now() + absl::Seconds(5));
    server_.reset();
    EnableDefaultHealthCheckService(false);
  }

  // Starts a server with the default health service when `enable`, plus
  // `extra` if given.
  void StartServer(bool enable, Service* extra = nullptr, int max_workers = 0) {
    EnableDefaultHealthCheckService(enable);
    ServerBuilder builder;
    if (max_workers > 0) builder.SetWorkerThreads(1, max_workers);
    builder.AddListeningPort("127.0.0.1:0", InsecureServerCredentials(),
                             &port_);
    if (extra != nullptr) builder.RegisterService(extra);
    server_ = builder.BuildAndStart();
    ASSERT_NE(server_, nullptr);
    ASSERT_GT(port_, 0);
    channel_ = CreateChannel(Target(), InsecureChannelCredentials());
    stub_ = Health::NewStub(channel_);
  }

  std::string Target() const { return "127.0.0.1:" + std::to_string(port_); }

  static void Bound(ClientContext* ctx) {
    ctx->set_deadline(absl::Now() + absl::Seconds(10));
  }

  Status Check(const std::string& service, HealthCheckResponse* resp) {
    ClientContext ctx;
    Bound(&ctx);
    return stub_->Check(&ctx, Request(service), resp);
  }

  HealthCheckService* Default() {
    return static_cast<HealthCheckService*>(server_->GetHealthCheckService());
  }

  int port_ = 0;
  std::unique_ptr<Server> server_;
  std::shared_ptr<Channel> channel_;
  std::unique_ptr<Health::Stub> stub_;
};

TEST_F(HealthTest, DisabledByDefault) {
  StartServer(false);
  EXPECT_EQ(server_->GetHealthCheckService(), nullptr);
  HealthCheckResponse resp;
  EXPECT_EQ(Check("", &resp).error_code(), StatusCode::UNIMPLEMENTED);
}

TEST_F(HealthTest, CheckServerAndNamedServices) {
  StartServer(true);
  ASSERT_TRUE(DefaultHealthCheckServiceEnabled());
  HealthCheckServiceInterface* health = server_->GetHealthCheckService();
  ASSERT_NE(health, nullptr);

  HealthCheckResponse resp;
  ASSERT_TRUE(Check("", &resp).ok());
  EXPECT_EQ(resp.status(), HealthCheckResponse::SERVING);

  Status s = Check("pkg.Foo", &resp);
  EXPECT_EQ(s.error_code(), StatusCode::NOT_FOUND);

  health->SetServingStatus("pkg.Foo", true);
  health->SetServingStatus("pkg.Bar", false);
  ASSERT_TRUE(Check("pkg.Foo", &resp).ok());
  EXPECT_EQ(resp.status(), HealthCheckResponse::SERVING);
  ASSERT_TRUE(Check("pkg.Bar", &resp).ok());
  EXPECT_EQ(resp.status(), HealthCheckResponse::NOT_SERVING);

  // All at once.
  health->SetServingStatus(false);
  for (const char* name : {"", "pkg.Foo", "pkg.Bar"}) {
    ASSERT_TRUE(Check(name, &resp).ok()) << name;
    EXPECT_EQ(resp.status(), HealthCheckResponse::NOT_SERVING) << name;
  }
  health->SetServingStatus(true);
  ASSERT_TRUE(Check("pkg.Bar", &resp).ok());
  EXPECT_EQ(resp.status(), HealthCheckResponse::SERVING);

  // Shutdown: NOT_SERVING, and later changes record NOT_SERVING (as in
  // grpc++).
  health->Shutdown();
  health->SetServingStatus("", true);
  health->SetServingStatus("pkg.New", true);
  for (const char* name : {"", "pkg.Foo", "pkg.New"}) {
    ASSERT_TRUE(Check(name, &resp).ok()) << name;
    EXPECT_EQ(resp.status(), HealthCheckResponse::NOT_SERVING) << name;
  }
}

TEST_F(HealthTest, WatchInitialChangeAndCancel) {
  StartServer(true);
  HealthCheckService* health = Default();
  ClientContext ctx;
  Bound(&ctx);
  std::unique_ptr<ClientReader<HealthCheckResponse>> reader =
      stub_->Watch(&ctx, Request(""));
  HealthCheckResponse resp;
  ASSERT_TRUE(reader->Read(&resp));
  EXPECT_EQ(resp.status(), HealthCheckResponse::SERVING);
  ASSERT_TRUE(WaitFor([&] { return health->num_watchers() == 1; }));

  health->SetServingStatus("", false);
  ASSERT_TRUE(reader->Read(&resp));
  EXPECT_EQ(resp.status(), HealthCheckResponse::NOT_SERVING);

  // Another service's change is not sent to this watcher.
  health->SetServingStatus("pkg.Other", true);
  health->SetServingStatus("", true);
  ASSERT_TRUE(reader->Read(&resp));
  EXPECT_EQ(resp.status(), HealthCheckResponse::SERVING);

  ctx.TryCancel();
  EXPECT_FALSE(reader->Read(&resp));
  EXPECT_EQ(reader->Finish().error_code(), StatusCode::CANCELLED);
  // The Watch's reactor learns it (OnCancel) and ends.
  ASSERT_TRUE(WaitFor([&] { return health->num_watchers() == 0; }));
}

TEST_F(HealthTest, WatchUnknownServiceThenKnown) {
  StartServer(true);
  ClientContext ctx;
  Bound(&ctx);
  auto reader = stub_->Watch(&ctx, Request("pkg.Later"));
  HealthCheckResponse resp;
  ASSERT_TRUE(reader->Read(&resp));
  EXPECT_EQ(resp.status(), HealthCheckResponse::SERVICE_UNKNOWN);
  server_->GetHealthCheckService()->SetServingStatus("pkg.Later", true);
  ASSERT_TRUE(reader->Read(&resp));
  EXPECT_EQ(resp.status(), HealthCheckResponse::SERVING);
  ctx.TryCancel();
  EXPECT_FALSE(reader->Read(&resp));
  reader->Finish();
}

// As in grpc++, a watched name is in the service's map while watched: the
// all-names SetServingStatus and Shutdown change it too, though Check still
// answers NOT_FOUND until a status is set; a name never set leaves the map
// with its last Watch.
TEST_F(HealthTest, WatchedNamesAreChangedByAllAtOnceAndShutdown) {
  StartServer(true);
  HealthCheckService* health = Default();
  HealthCheckResponse resp;

  // Watched, never set, then no longer watched: unknown again.
  {
    ClientContext ctx;
    Bound(&ctx);
    auto reader = stub_->Watch(&ctx, Request("pkg.Gone"));
    ASSERT_TRUE(reader->Read(&resp));
    EXPECT_EQ(resp.status(), HealthCheckResponse::SERVICE_UNKNOWN);
    EXPECT_EQ(Check("pkg.Gone", &resp).error_code(), StatusCode::NOT_FOUND);
    ctx.TryCancel();
    EXPECT_FALSE(reader->Read(&resp));
    reader->Finish();
    ASSERT_TRUE(WaitFor([&] { return health->num_watchers() == 0; }));
  }
  EXPECT_EQ(Check("pkg.Gone", &resp).error_code(), StatusCode::NOT_FOUND);
  health->SetServingStatus(true);
  EXPECT_EQ(Check("pkg.Gone", &resp).error_code(), StatusCode::NOT_FOUND);

  ClientContext ctx_a;
  Bound(&ctx_a);
  auto reader_a = stub_->Watch(&ctx_a, Request("pkg.A"));
  ASSERT_TRUE(reader_a->Read(&resp));
  EXPECT_EQ(resp.status(), HealthCheckResponse::SERVICE_UNKNOWN);
  ClientContext ctx_b;
  Bound(&ctx_b);
  auto reader_b = stub_->Watch(&ctx_b, Request("pkg.B"));
  ASSERT_TRUE(reader_b->Read(&resp));
  EXPECT_EQ(resp.status(), HealthCheckResponse::SERVICE_UNKNOWN);

  // All at once reaches the watched names.
  health->SetServingStatus(false);
  ASSERT_TRUE(reader_a->Read(&resp));
  EXPECT_EQ(resp.status(), HealthCheckResponse::NOT_SERVING);
  ASSERT_TRUE(reader_b->Read(&resp));
  EXPECT_EQ(resp.status(), HealthCheckResponse::NOT_SERVING);
  ASSERT_TRUE(Check("pkg.A", &resp).ok());
  EXPECT_EQ(resp.status(), HealthCheckResponse::NOT_SERVING);

  // Shutdown makes a watched name NOT_SERVING even if it was never set.
  ClientContext ctx_c;
  Bound(&ctx_c);
  auto reader_c = stub_->Watch(&ctx_c, Request("pkg.C"));
  ASSERT_TRUE(reader_c->Read(&resp));
  EXPECT_EQ(resp.status(), HealthCheckResponse::SERVICE_UNKNOWN);
  health->SetServingStatus("pkg.A", true);
  ASSERT_TRUE(reader_a->Read(&resp));
  EXPECT_EQ(resp.status(), HealthCheckResponse::SERVING);
  health->Shutdown();
  ASSERT_TRUE(reader_a->Read(&resp));
  EXPECT_EQ(resp.status(), HealthCheckResponse::NOT_SERVING);
  ASSERT_TRUE(reader_c->Read(&resp));
  EXPECT_EQ(resp.status(), HealthCheckResponse::NOT_SERVING);
  // After Shutdown a change records NOT_SERVING.
  health->SetServingStatus("pkg.D", true);
  ASSERT_TRUE(Check("pkg.D", &resp).ok());
  EXPECT_EQ(resp.status(), HealthCheckResponse::NOT_SERVING);

  for (ClientContext* ctx : {&ctx_a, &ctx_b, &ctx_c}) ctx->TryCancel();
  for (auto* reader : {reader_a.get(), reader_b.get(), reader_c.get()}) {
    EXPECT_FALSE(reader->Read(&resp));
    reader->Finish();
  }
}

TEST_F(HealthTest, ServerShutdownEndsWatches) {
  StartServer(true);
  ClientContext ctx;
  Bound(&ctx);
  auto reader = stub_->Watch(&ctx, Request(""));
  ClientContext ctx2;
  Bound(&ctx2);
  auto reader2 = stub_->Watch(&ctx2, Request("pkg.Unknown"));
  HealthCheckResponse resp;
  ASSERT_TRUE(reader->Read(&resp));
  EXPECT_EQ(resp.status(), HealthCheckResponse::SERVING);
  ASSERT_TRUE(reader2->Read(&resp));
  EXPECT_EQ(resp.status(), HealthCheckResponse::SERVICE_UNKNOWN);

  // A graceful shutdown with a long deadline: the watches must not hold it
  // (it returns within a safety bound far below the deadline).
  absl::Notification done;
  std::thread shutdown([&] {
    server_->Shutdown(absl::Now() + absl::Seconds(300));
    done.Notify();
  });
  absl::Cleanup join_shutdown = [&] { shutdown.join(); };
  ASSERT_TRUE(reader->Read(&resp));
  EXPECT_EQ(resp.status(), HealthCheckResponse::NOT_SERVING);
  EXPECT_FALSE(reader->Read(&resp));
  EXPECT_EQ(reader->Finish().error_code(), StatusCode::UNAVAILABLE);
  // A watched name is known to Shutdown even if never set (as in grpc++).
  ASSERT_TRUE(reader2->Read(&resp));
  EXPECT_EQ(resp.status(), HealthCheckResponse::NOT_SERVING);
  EXPECT_FALSE(reader2->Read(&resp));
  EXPECT_EQ(reader2->Finish().error_code(), StatusCode::UNAVAILABLE);
  EXPECT_TRUE(done.WaitForNotificationWithTimeout(absl::Seconds(60)));
}

TEST_F(HealthTest, ExplicitServiceAndWatcherLimit) {
  HealthCheckService health(/*max_watchers=*/1);
  // Enabled, but an explicitly registered one takes the place of the default.
  StartServer(true, &health);
  EXPECT_EQ(server_->GetHealthCheckService(), nullptr);
  health.SetServingStatus("pkg.Foo", false);
  HealthCheckResponse resp;
  ASSERT_TRUE(Check("pkg.Foo", &resp).ok());
  EXPECT_EQ(resp.status(), HealthCheckResponse::NOT_SERVING);

  ClientContext ctx;
  Bound(&ctx);
  auto reader = stub_->Watch(&ctx, Request("pkg.Foo"));
  ASSERT_TRUE(reader->Read(&resp));
  EXPECT_EQ(resp.status(), HealthCheckResponse::NOT_SERVING);
  ASSERT_TRUE(WaitFor([&] { return health.num_watchers() == 1; }));

  ClientContext ctx2;
  Bound(&ctx2);
  auto reader2 = stub_->Watch(&ctx2, Request("pkg.Foo"));
  EXPECT_FALSE(reader2->Read(&resp));
  EXPECT_EQ(reader2->Finish().error_code(), StatusCode::RESOURCE_EXHAUSTED);

  ctx.TryCancel();
  EXPECT_FALSE(reader->Read(&resp));
  reader->Finish();
  ASSERT_TRUE(WaitFor([&] { return health.num_watchers() == 0; }));
  // The explicit service is shut down by its owner, before the server.
  health.Shutdown();
  ASSERT_TRUE(Check("", &resp).ok());
  EXPECT_EQ(resp.status(), HealthCheckResponse::NOT_SERVING);
  stub_.reset();
  channel_.reset();
  server_->Shutdown(absl::Now() + absl::Seconds(5));
}

// A Watch through the callback client: keeps the last status it read and
// its final status.
class WatchReactor final : public ClientReadReactor<HealthCheckResponse> {
 public:
  WatchReactor(Health::Stub* stub, const std::string& service) {
    request_ = Request(service);
    ctx_.set_deadline(absl::Now() + absl::Seconds(60));
    stub->async()->Watch(&ctx_, &request_, this);
    StartRead(&response_);
    StartCall();
  }
  void OnReadDone(bool ok) override {
    if (!ok) return;
    last_.store(response_.status());
    reads_.fetch_add(1);
    StartRead(&response_);
  }
  void OnDone(const Status& status) override {
    absl::MutexLock lock(&mu_);
    status_ = status;
    done_.Notify();
  }
  void Cancel() { ctx_.TryCancel(); }
  bool finished() const { return done_.HasBeenNotified(); }
  int last() const { return last_.load(); }
  int reads() const { return reads_.load(); }
  bool WaitDone() {
    return done_.WaitForNotificationWithTimeout(absl::Seconds(30));
  }
  StatusCode code() {
    absl::MutexLock lock(&mu_);
    return status_.error_code();
  }

 private:
  ClientContext ctx_;
  HealthCheckRequest request_;
  HealthCheckResponse response_;
  std::atomic<int> last_{-1};
  std::atomic<int> reads_{0};
  absl::Mutex mu_;
  Status status_ ABSL_GUARDED_BY(mu_);
  absl::Notification done_;
};

// Watches are reactors: 300 at once on a server with at most 4 worker
// threads all get their first status, every change, and their end (client
// cancellation; the server's shutdown: NOT_SERVING, then UNAVAILABLE), and
// the process keeps the threads it had with none. (A blocking Watch held a
// worker each: at most 4 were served, and 100 at most were admitted.)
TEST_F(HealthTest, ManyWatchesHoldNoThread) {
  if (transport::testing::ThreadCount() < 0) {
    GTEST_SKIP() << "/proc/self/task cannot be listed";
  }
  constexpr int kWatches = 300;
  StartServer(true, nullptr, /*max_workers=*/4);
  HealthCheckService* health = Default();
  HealthCheckResponse resp;
  ASSERT_TRUE(Check("", &resp).ok());
  const int threads = transport::testing::ThreadCount();

  std::vector<std::unique_ptr<WatchReactor>> watches;
  // On any exit (an ASSERT too) no reactor is freed while its call runs:
  // each is cancelled and its OnDone waited for; one that never ends is
  // leaked instead.
  absl::Cleanup end_watches = [&] {
    for (auto& w : watches) {
      if (!w->finished()) w->Cancel();
    }
    for (auto& w : watches) {
      if (!w->WaitDone()) {
        ADD_FAILURE() << "a Watch never ended";
        w.release();
      }
    }
  };
  for (int i = 0; i < kWatches; ++i) {
    // A third watch a name not known yet.
    watches.push_back(
        std::make_unique<WatchReactor>(stub_.get(), i % 3 == 0 ? "pkg.W" : ""));
  }
  const auto all = [&](int from, int to, auto pred) {
    return WaitFor([&] {
      for (int i = from; i < to; ++i) {
        if (!pred(*watches[i], i)) return false;
      }
      return true;
    });
  };
  const auto expected = [](int i, int known, int unknown) {
    return i % 3 == 0 ? unknown : known;
  };
  ASSERT_TRUE(all(0, kWatches, [&](WatchReactor& w, int i) {
    return w.last() == expected(i, HealthCheckResponse::SERVING,
                                HealthCheckResponse::SERVICE_UNKNOWN);
  }));
  EXPECT_EQ(health->num_watchers(), kWatches);
  EXPECT_LE(transport::testing::ThreadCount(), threads);

  health->SetServingStatus("", false);
  health->SetServingStatus("pkg.W", true);
  ASSERT_TRUE(all(0, kWatches, [&](WatchReactor& w, int i) {
    return w.last() == expected(i, HealthCheckResponse::NOT_SERVING,
                                HealthCheckResponse::SERVING);
  }));
  EXPECT_LE(transport::testing::ThreadCount(), threads);

  // The client cancels the first 100: their calls end, the others go on.
  for (int i = 0; i < 100; ++i) watches[i]->Cancel();
  for (int i = 0; i < 100; ++i) {
    ASSERT_TRUE(watches[i]->WaitDone()) << i;
    EXPECT_EQ(watches[i]->code(), StatusCode::CANCELLED) << i;
  }
  ASSERT_TRUE(WaitFor([&] { return health->num_watchers() == kWatches - 100; }))
      << health->num_watchers();
  health->SetServingStatus("", true);
  ASSERT_TRUE(all(100, kWatches, [&](WatchReactor& w, int i) {
    return w.last() == expected(i, HealthCheckResponse::SERVING,
                                HealthCheckResponse::SERVING);
  }));

  // The server's shutdown: NOT_SERVING for every name, then UNAVAILABLE.
  server_->Shutdown(absl::Now() + absl::Seconds(20));
  for (int i = 100; i < kWatches; ++i) {
    ASSERT_TRUE(watches[i]->WaitDone()) << i;
    EXPECT_EQ(watches[i]->code(), StatusCode::UNAVAILABLE) << i;
    EXPECT_EQ(watches[i]->last(), HealthCheckResponse::NOT_SERVING) << i;
  }
  EXPECT_EQ(health->num_watchers(), 0);
}

// ---- Debian's grpc++ client against our server ----

class GrpcClientHealthTest : public HealthTest {
 protected:
  void StartGrpc() {
    StartServer(true);
    grpc_channel_ =
        grpc::CreateChannel(Target(), grpc::InsecureChannelCredentials());
    grpc_stub_ = GrpcHealth::NewStub(grpc_channel_);
  }
  void TearDown() override {
    grpc_stub_.reset();
    grpc_channel_.reset();
    HealthTest::TearDown();
  }
  static void Bound(grpc::ClientContext* ctx) {
    ctx->set_deadline(std::chrono::system_clock::now() +
                      std::chrono::seconds(10));
  }

  std::shared_ptr<grpc::Channel> grpc_channel_;
  std::unique_ptr<GrpcHealth::Stub> grpc_stub_;
};

TEST_F(GrpcClientHealthTest, Check) {
  StartGrpc();
  HealthCheckResponse resp;
  {
    grpc::ClientContext ctx;
    Bound(&ctx);
    ASSERT_TRUE(grpc_stub_->Check(&ctx, Request(""), &resp).ok());
    EXPECT_EQ(resp.status(), HealthCheckResponse::SERVING);
  }
  server_->GetHealthCheckService()->SetServingStatus("pkg.Foo", false);
  {
    grpc::ClientContext ctx;
    Bound(&ctx);
    ASSERT_TRUE(grpc_stub_->Check(&ctx, Request("pkg.Foo"), &resp).ok());
    EXPECT_EQ(resp.status(), HealthCheckResponse::NOT_SERVING);
  }
  {
    grpc::ClientContext ctx;
    Bound(&ctx);
    grpc::Status s = grpc_stub_->Check(&ctx, Request("pkg.Nope"), &resp);
    EXPECT_EQ(s.error_code(), grpc::StatusCode::NOT_FOUND);
  }
}

TEST_F(GrpcClientHealthTest, WatchChangeAndCancel) {
  StartGrpc();
  HealthCheckService* health = Default();
  grpc::ClientContext ctx;
  Bound(&ctx);
  std::unique_ptr<grpc::ClientReader<HealthCheckResponse>> reader =
      grpc_stub_->Watch(&ctx, Request(""));
  HealthCheckResponse resp;
  ASSERT_TRUE(reader->Read(&resp));
  EXPECT_EQ(resp.status(), HealthCheckResponse::SERVING);
  health->SetServingStatus("", false);
  ASSERT_TRUE(reader->Read(&resp));
  EXPECT_EQ(resp.status(), HealthCheckResponse::NOT_SERVING);

  ctx.TryCancel();
  EXPECT_FALSE(reader->Read(&resp));
  EXPECT_EQ(reader->Finish().error_code(), grpc::StatusCode::CANCELLED);
  ASSERT_TRUE(WaitFor([&] { return health->num_watchers() == 0; }));
}

TEST_F(GrpcClientHealthTest, ServerShutdownEndsWatch) {
  StartGrpc();
  grpc::ClientContext ctx;
  Bound(&ctx);
  auto reader = grpc_stub_->Watch(&ctx, Request(""));
  HealthCheckResponse resp;
  ASSERT_TRUE(reader->Read(&resp));
  EXPECT_EQ(resp.status(), HealthCheckResponse::SERVING);
  absl::Notification done;
  std::thread shutdown([&] {
    server_->Shutdown(absl::Now() + absl::Seconds(300));
    done.Notify();
  });
  absl::Cleanup join_shutdown = [&] { shutdown.join(); };
  ASSERT_TRUE(reader->Read(&resp));
  EXPECT_EQ(resp.status(), HealthCheckResponse::NOT_SERVING);
  EXPECT_FALSE(reader->Read(&resp));
  EXPECT_EQ(reader->Finish().error_code(), grpc::StatusCode::UNAVAILABLE);
  // Far before the 300 s deadline (a safety bound, not a speed check): the
  // Watch did not hold the shutdown. The graceful GOAWAY still waits for the
  // client's PING ACK, which an idle grpc++ 1.51 client sends from its 5 s
  // backup poller (up to the 5 s shutdown_ping_timeout).
  EXPECT_TRUE(done.WaitForNotificationWithTimeout(absl::Seconds(60)));
}

TEST_F(GrpcClientHealthTest, DisabledIsUnimplemented) {
  StartServer(false);
  auto stub = GrpcHealth::NewStub(
      grpc::CreateChannel(Target(), grpc::InsecureChannelCredentials()));
  grpc::ClientContext ctx;
  Bound(&ctx);
  HealthCheckResponse resp;
  EXPECT_EQ(stub->Check(&ctx, Request(""), &resp).error_code(),
            grpc::StatusCode::UNIMPLEMENTED);
}

}  // namespace
}  // namespace rpc
