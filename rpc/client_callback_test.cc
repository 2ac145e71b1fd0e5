// The client's callback API (rpc/client_callback.h) against our server and a
// grpc++ server: every call kind, the order of the reactions, holds,
// cancellation from another thread and from a reaction, deadlines, errors
// with trailing metadata, flow control both ways, misuse, reactors deleted
// in OnDone, and many calls on one channel without a thread per call.

#include <grpcpp/grpcpp.h>

#include <atomic>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "absl/cleanup/cleanup.h"
#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "absl/time/clock.h"
#include "gtest/gtest.h"
#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/lsan_interface.h>
#endif
#include "rpc/internal/server_call.h"
#include "rpc/rpc.h"
#include "rpc/testdata/test_service.grpc.pb.h"
#include "rpc/testdata/test_service.rpc.pb.h"
#include "transport/io/event_loop.h"
#include "transport/testing/thread_probe.h"
#include "transport/testing/wait_until.h"

namespace rpc {
namespace {

using test::EchoRequest;
using test::EchoResponse;
using test::EchoService;
using transport::testing::WaitUntil;

// What both servers count.
struct Counters {
  std::atomic<int> written{0};  // ServerStream messages written, all calls.
  std::atomic<int> read{0};     // Bidi and ClientStream messages read.
  std::atomic<size_t> compressed{0};  // ClientStream's compressed requests.
  std::atomic<int> echo_entered{0};   // Echo handlers started.
};

class OurEcho final : public EchoService::Service {
 public:
  explicit OurEcho(Counters* c) : c_(c) {}
  Status Echo(ServerContext* ctx, const EchoRequest* req,
              EchoResponse* resp) override {
    ++c_->echo_entered;
    if (auto v = ctx->client_metadata().Get("x-in")) {
      ctx->AddInitialMetadata("x-initial", std::string(*v));
      ctx->AddTrailingMetadata("x-trailing", std::string(*v));
    }
    if (req->sleep_ms() > 0) {
      const absl::Time until =
          absl::Now() + absl::Milliseconds(req->sleep_ms());
      while (absl::Now() < until && !ctx->IsCancelled()) {
        absl::SleepFor(absl::Milliseconds(2));
      }
    }
    if (req->status_code() != 0) {
      return Status(static_cast<StatusCode>(req->status_code()),
                    req->status_message());
    }
    resp->set_message(req->message());
    return Status::OK;
  }
  Status ServerStream(ServerContext* /*ctx*/, const EchoRequest* req,
                      ServerWriter<EchoResponse>* writer) override {
    EchoResponse r;
    r.set_payload(std::string(req->response_size(), 's'));
    for (int i = 0; i < req->count(); ++i) {
      r.set_index(i);
      if (!writer->Write(r)) return Status(StatusCode::CANCELLED, "gone");
      ++c_->written;
    }
    if (req->status_code() != 0) {
      return Status(static_cast<StatusCode>(req->status_code()),
                    req->status_message());
    }
    return Status::OK;
  }
  Status ClientStream(ServerContext* ctx, ServerReader<EchoRequest>* reader,
                      EchoResponse* resp) override {
    EchoRequest req;
    int n = 0;
    std::string all;
    while (reader->Read(&req)) {
      ++n;
      ++c_->read;
      all += req.message();
    }
    c_->compressed = ctx->call()->compressed_requests();
    resp->set_index(n);
    resp->set_message(all);
    return Status::OK;
  }
  Status Bidi(ServerContext* /*ctx*/,
              ServerReaderWriter<EchoResponse, EchoRequest>* stream) override {
    EchoRequest req;
    int n = 0;
    while (stream->Read(&req)) {
      ++c_->read;
      EchoResponse r;
      r.set_message(req.message());
      r.set_index(n++);
      if (!stream->Write(r)) break;
    }
    return Status::OK;
  }

 private:
  Counters* const c_;
};

class GrpcEcho final : public test::grpcpeer::EchoService::Service {
 public:
  explicit GrpcEcho(Counters* c) : c_(c) {}
  grpc::Status Echo(grpc::ServerContext* ctx, const EchoRequest* req,
                    EchoResponse* resp) override {
    ++c_->echo_entered;
    auto it = ctx->client_metadata().find("x-in");
    if (it != ctx->client_metadata().end()) {
      std::string v(it->second.data(), it->second.size());
      ctx->AddInitialMetadata("x-initial", v);
      ctx->AddTrailingMetadata("x-trailing", v);
    }
    if (req->sleep_ms() > 0) {
      const absl::Time until =
          absl::Now() + absl::Milliseconds(req->sleep_ms());
      while (absl::Now() < until && !ctx->IsCancelled()) {
        absl::SleepFor(absl::Milliseconds(2));
      }
    }
    if (req->status_code() != 0) {
      return grpc::Status(static_cast<grpc::StatusCode>(req->status_code()),
                          req->status_message());
    }
    resp->set_message(req->message());
    return grpc::Status::OK;
  }
  grpc::Status ServerStream(grpc::ServerContext* /*ctx*/,
                            const EchoRequest* req,
                            grpc::ServerWriter<EchoResponse>* writer) override {
    EchoResponse r;
    r.set_payload(std::string(req->response_size(), 's'));
    for (int i = 0; i < req->count(); ++i) {
      r.set_index(i);
      if (!writer->Write(r)) return grpc::Status(grpc::CANCELLED, "gone");
      ++c_->written;
    }
    if (req->status_code() != 0) {
      return grpc::Status(static_cast<grpc::StatusCode>(req->status_code()),
                          req->status_message());
    }
    return grpc::Status::OK;
  }
  grpc::Status ClientStream(grpc::ServerContext* /*ctx*/,
                            grpc::ServerReader<EchoRequest>* reader,
                            EchoResponse* resp) override {
    EchoRequest req;
    int n = 0;
    std::string all;
    while (reader->Read(&req)) {
      ++n;
      ++c_->read;
      all += req.message();
    }
    resp->set_index(n);
    resp->set_message(all);
    return grpc::Status::OK;
  }
  grpc::Status Bidi(
      grpc::ServerContext* /*ctx*/,
      grpc::ServerReaderWriter<EchoResponse, EchoRequest>* stream) override {
    EchoRequest req;
    int n = 0;
    while (stream->Read(&req)) {
      ++c_->read;
      EchoResponse r;
      r.set_message(req.message());
      r.set_index(n++);
      if (!stream->Write(r)) break;
    }
    return grpc::Status::OK;
  }

 private:
  Counters* const c_;
};

enum class Peer { kOurs, kGrpc };

class ClientCallbackTest : public ::testing::TestWithParam<Peer> {
 protected:
  void SetUp() override {
    int port = 0;
    if (GetParam() == Peer::kOurs) {
      ours_ = ServerBuilder()
                  .AddListeningPort("127.0.0.1:0", InsecureServerCredentials(),
                                    &port)
                  .RegisterService(&our_service_)
                  .BuildAndStart();
      ASSERT_NE(ours_, nullptr);
    } else {
      grpc::ServerBuilder builder;
      builder.AddListeningPort("127.0.0.1:0", grpc::InsecureServerCredentials(),
                               &port);
      builder.RegisterService(&grpc_service_);
      grpc_ = builder.BuildAndStart();
      ASSERT_NE(grpc_, nullptr);
    }
    ASSERT_GT(port, 0);
    target_ = "127.0.0.1:" + std::to_string(port);
    channel_ = CreateChannel(target_, InsecureChannelCredentials());
    stub_ = EchoService::NewStub(channel_);
  }
  void TearDown() override {
    stub_.reset();
    channel_.reset();
    if (ours_ != nullptr) ours_->Shutdown(absl::Now() + absl::Seconds(5));
    if (grpc_ != nullptr) {
      grpc_->Shutdown(std::chrono::system_clock::now() +
                      std::chrono::seconds(5));
    }
  }
  // A blocking round trip through both loops: what a reactor had due by
  // now has run.
  void RoundTrip() {
    ClientContext ctx;
    ctx.set_deadline(absl::Now() + absl::Seconds(10));
    EchoResponse resp;
    ASSERT_TRUE(stub_->Echo(&ctx, EchoRequest(), &resp).ok());
  }

  Counters counters_;
  OurEcho our_service_{&counters_};
  GrpcEcho grpc_service_{&counters_};
  std::unique_ptr<Server> ours_;
  std::unique_ptr<grpc::Server> grpc_;
  std::string target_;
  std::shared_ptr<Channel> channel_;
  std::unique_ptr<EchoService::Stub> stub_;
};

// Records the reactions of a call in order; OnDone notifies.
struct Log {
  absl::Mutex mu;
  std::vector<std::string> events;
  absl::Notification done;
  Status status;
  std::thread::id thread;
  bool reentered = false;
  bool in_reaction = false;

  void Add(std::string e) {
    absl::MutexLock lock(&mu);
    events.push_back(std::move(e));
  }
  void Enter() {
    if (in_reaction) reentered = true;
    in_reaction = true;
    thread = std::this_thread::get_id();
  }
  void Leave() { in_reaction = false; }
  bool Wait() { return done.WaitForNotificationWithTimeout(absl::Seconds(30)); }
};

// The end of every reactor's OnDone: records the status, deletes the
// reactor (with its context: nothing touches either afterwards), leaves the
// reaction (Log::Enter), then notifies.
void DeleteAndNotify(internal::ClientReactor* reactor, Log* log,
                     const Status& s) {
  log->status = s;
  delete reactor;
  log->Leave();
  log->done.Notify();
}

TEST_P(ClientCallbackTest, UnaryWithFunction) {
  ClientContext ctx;
  ctx.set_deadline(absl::Now() + absl::Seconds(10));
  EchoRequest req;
  req.set_message("hello");
  EchoResponse resp;
  absl::Notification done;
  Status status;
  std::thread::id thread;
  stub_->async()->Echo(&ctx, &req, &resp, [&](Status s) {
    status = std::move(s);
    thread = std::this_thread::get_id();
    done.Notify();
  });
  ASSERT_TRUE(done.WaitForNotificationWithTimeout(absl::Seconds(30)));
  EXPECT_TRUE(status.ok()) << status;
  EXPECT_EQ(resp.message(), "hello");
  EXPECT_NE(thread, std::this_thread::get_id()) << "runs on the loop";
}

class UnaryReactor final : public ClientUnaryReactor {
 public:
  UnaryReactor(EchoService::Stub* stub, const EchoRequest& req, Log* log)
      : log_(log) {
    ctx_.set_deadline(absl::Now() + absl::Seconds(10));
    ctx_.AddMetadata("x-in", "v1");
    stub->async()->Echo(&ctx_, &req, &resp_, this);
  }
  void OnReadInitialMetadataDone(bool ok) override {
    log_->Enter();
    auto v = ctx_.GetServerInitialMetadata().Get("x-initial");
    log_->Add(std::string("initial ") + (ok ? "ok " : "fail ") +
              (v ? std::string(*v) : "-"));
    log_->Leave();
  }
  void OnDone(const Status& s) override {
    log_->Enter();
    auto v = ctx_.GetServerTrailingMetadata().Get("x-trailing");
    log_->Add("done " + std::to_string(static_cast<int>(s.error_code())) + " " +
              resp_.message() + " " + (v ? std::string(*v) : "-"));
    DeleteAndNotify(this, log_, s);
  }

 private:
  ClientContext ctx_;
  EchoResponse resp_;
  Log* const log_;
};

TEST_P(ClientCallbackTest, UnaryReactorWithMetadata) {
  Log log;
  EchoRequest req;
  req.set_message("m");
  auto* r = new UnaryReactor(stub_.get(), req, &log);
  r->StartCall();
  ASSERT_TRUE(log.Wait());
  EXPECT_EQ(log.events,
            (std::vector<std::string>{"initial ok v1", "done 0 m v1"}));
  EXPECT_FALSE(log.reentered);
}

TEST_P(ClientCallbackTest, UnaryErrorWithTrailingMetadata) {
  Log log;
  EchoRequest req;
  req.set_status_code(static_cast<int>(StatusCode::FAILED_PRECONDITION));
  req.set_status_message("no way");
  auto* r = new UnaryReactor(stub_.get(), req, &log);
  r->StartCall();
  ASSERT_TRUE(log.Wait());
  EXPECT_EQ(log.status.error_code(), StatusCode::FAILED_PRECONDITION);
  EXPECT_EQ(log.status.error_message(), "no way");
  ASSERT_EQ(log.events.size(), 2u);
  EXPECT_EQ(log.events[1], "done 9  v1");  // Trailers-Only carries it too.
}

// Reads every message of a server stream; optionally stops reading after
// the first until Resume (then it needs a hold), or cancels from a reaction.
class StreamReader final : public ClientReadReactor<EchoResponse> {
 public:
  StreamReader(EchoService::Stub* stub, const EchoRequest& req, Log* log,
               int pause_after = -1, int cancel_after = -1)
      : log_(log), pause_after_(pause_after), cancel_after_(cancel_after) {
    ctx_.set_deadline(absl::Now() + absl::Seconds(60));
    stub->async()->ServerStream(&ctx_, &req, this);
    if (pause_after_ >= 0) AddHold();
    StartRead(&resp_);
    StartCall();
  }
  void OnReadInitialMetadataDone(bool ok) override {
    log_->Enter();
    log_->Add(ok ? "initial" : "initial fail");
    log_->Leave();
  }
  void OnReadDone(bool ok) override {
    log_->Enter();
    if (!ok) {
      log_->Add("end");
      read_end_ = true;
      log_->Leave();
      return;
    }
    if (resp_.index() != reads_) log_->Add("out of order");
    ++reads_;
    if (reads_ == cancel_after_) ctx_.TryCancel();
    if (reads_ == pause_after_) {
      paused_ = true;
    } else {
      StartRead(&resp_);
    }
    log_->Leave();
  }
  void OnDone(const Status& s) override {
    log_->Enter();
    log_->Add("done " + std::to_string(reads_));
    DeleteAndNotify(this, log_, s);
  }
  void Cancel() { ctx_.TryCancel(); }
  // From another thread, once paused: read the rest.
  void Resume() {
    StartRead(&resp_);
    RemoveHold();
  }
  int reads() const { return reads_; }
  std::atomic<bool> paused_{false};
  std::atomic<bool> read_end_{false};

 private:
  ClientContext ctx_;
  EchoResponse resp_;
  Log* const log_;
  const int pause_after_;
  const int cancel_after_;
  std::atomic<int> reads_{0};
};

TEST_P(ClientCallbackTest, ServerStreaming) {
  Log log;
  EchoRequest req;
  req.set_count(100);
  req.set_response_size(100);
  new StreamReader(stub_.get(), req, &log);
  ASSERT_TRUE(log.Wait());
  EXPECT_TRUE(log.status.ok()) << log.status;
  ASSERT_EQ(log.events.size(), 3u);
  EXPECT_EQ(log.events[0], "initial");
  EXPECT_EQ(log.events[1], "end");
  EXPECT_EQ(log.events[2], "done 100");
  EXPECT_FALSE(log.reentered);
  EXPECT_NE(log.thread, std::this_thread::get_id());
}

TEST_P(ClientCallbackTest, ServerStreamingThenError) {
  Log log;
  EchoRequest req;
  req.set_count(3);
  req.set_status_code(static_cast<int>(StatusCode::ABORTED));
  req.set_status_message("after three");
  new StreamReader(stub_.get(), req, &log);
  ASSERT_TRUE(log.Wait());
  EXPECT_EQ(log.status.error_code(), StatusCode::ABORTED);
  EXPECT_EQ(log.events.back(), "done 3");
}

// A reader that stops calling StartRead holds the server back through the
// stream window (memory stays bounded), and OnDone waits for its hold.
TEST_P(ClientCallbackTest, SlowReaderHoldsTheServerBackAndHoldsDelayOnDone) {
  Log log;
  EchoRequest req;
  constexpr int kCount = 1000;
  req.set_count(kCount);
  req.set_response_size(16 << 10);  // 16 MiB in all.
  auto* r = new StreamReader(stub_.get(), req, &log, /*pause_after=*/1);
  ASSERT_TRUE(WaitUntil([&] { return r->paused_.load(); }));
  // Stalled: the server wrote nothing during three round trips of other
  // calls on the connection.
  int stalled_at = -1;
  for (int i = 0; i < 5000 && stalled_at < 0; ++i) {
    const int before = counters_.written.load();
    for (int j = 0; j < 3; ++j) RoundTrip();
    // (grpc++'s Write may return after the client read the message.)
    if (before > 0 && counters_.written.load() == before) stalled_at = before;
  }
  EXPECT_GT(stalled_at, 0);
  // Windows (stream 1 MiB or grpc++'s), the read bound and the server's
  // own buffers: a few MiB at most, not 16.
  EXPECT_LT(stalled_at, kCount / 2) << "the server was not held back";
  r->Resume();
  // Reads everything; the status arrives; OnDone waits for nothing else.
  ASSERT_TRUE(log.Wait());
  EXPECT_TRUE(log.status.ok()) << log.status;
  EXPECT_EQ(log.events.back(), "done " + std::to_string(kCount));
}

// A cancelled call's unread messages are gone: the next read ends the
// stream (as a blocking Read after TryCancel), though many had arrived.
// RoundTrip's blocking caller co-polls and reads some of the stream's
// messages; their notifications are posted, and the loop thread may read
// more behind the cancel. The cancel still reaches the reactor before the
// StartRead posted after it (it once came behind them: "done 910"). A race,
// so a few rounds per run.
TEST_P(ClientCallbackTest, CancelDropsUnreadMessages) {
  for (int round = 0; round < 8; ++round) {
    SCOPED_TRACE(round);
    Log log;
    EchoRequest req;
    req.set_count(100000);  // 100 MiB: more than any window lets through.
    req.set_response_size(1 << 10);
    const int written = counters_.written.load();
    auto* r = new StreamReader(stub_.get(), req, &log, /*pause_after=*/1);
    ASSERT_TRUE(WaitUntil([&] { return r->paused_.load(); }));
    ASSERT_TRUE(
        WaitUntil([&] { return counters_.written.load() >= written + 100; }));
    RoundTrip();  // What the server wrote before has reached the client.
    r->Cancel();
    r->Resume();  // Posted after the cancel: its read sees the call ended.
    ASSERT_TRUE(log.Wait());
    EXPECT_EQ(log.status.error_code(), StatusCode::CANCELLED);
    EXPECT_EQ(log.events,
              (std::vector<std::string>{"initial", "end", "done 1"}));
  }
}

class HeldReader final : public ClientReadReactor<EchoResponse> {
 public:
  HeldReader(EchoService::Stub* stub, const EchoRequest& req, Log* log)
      : log_(log) {
    ctx_.set_deadline(absl::Now() + absl::Seconds(30));
    stub->async()->ServerStream(&ctx_, &req, this);
    AddMultipleHolds(2);
    StartRead(&resp_);
    StartCall();
  }
  void OnReadDone(bool ok) override {
    if (ok) {
      StartRead(&resp_);
    } else {
      ended_ = true;
    }
  }
  void OnDone(const Status& s) override { DeleteAndNotify(this, log_, s); }
  std::atomic<bool> ended_{false};

 private:
  ClientContext ctx_;
  EchoResponse resp_;
  Log* const log_;
};

TEST_P(ClientCallbackTest, OnDoneWaitsForEveryHold) {
  Log log;
  EchoRequest req;
  req.set_count(3);
  auto* r = new HeldReader(stub_.get(), req, &log);
  ASSERT_TRUE(WaitUntil([&] { return r->ended_.load(); }));
  RoundTrip();  // Anything due on the loop has run.
  EXPECT_FALSE(log.done.HasBeenNotified());
  r->RemoveHold();
  RoundTrip();
  EXPECT_FALSE(log.done.HasBeenNotified());
  r->RemoveHold();  // From this thread: OnDone follows on the loop.
  ASSERT_TRUE(log.Wait());
  EXPECT_TRUE(log.status.ok()) << log.status;
}

TEST_P(ClientCallbackTest, CancelFromAReaction) {
  Log log;
  EchoRequest req;
  req.set_count(100000);
  req.set_response_size(100);
  new StreamReader(stub_.get(), req, &log, -1, /*cancel_after=*/5);
  ASSERT_TRUE(log.Wait());
  EXPECT_EQ(log.status.error_code(), StatusCode::CANCELLED);
  EXPECT_FALSE(log.reentered);
}

// Writes `n` messages, each from the previous OnWriteDone, then ends the
// requests (StartWritesDone, or StartWriteLast for the last one).
class StreamWriter final : public ClientWriteReactor<EchoRequest> {
 public:
  StreamWriter(EchoService::Stub* stub, int n, bool last, size_t size, Log* log)
      : n_(n), last_(last), log_(log) {
    ctx_.set_deadline(absl::Now() + absl::Seconds(60));
    stub->async()->ClientStream(&ctx_, &resp_, this);
    req_.set_payload(std::string(size, 'w'));
    Next();
    StartCall();
  }
  void OnWriteDone(bool ok) override {
    log_->Enter();
    if (!ok) {
      log_->Add("write failed");
    } else {
      ++written_;
      if (written_ < n_) Next();
    }
    log_->Leave();
  }
  void OnWritesDoneDone(bool ok) override {
    log_->Add(ok ? "writes done" : "writes done failed");
  }
  void OnDone(const Status& s) override {
    log_->Enter();
    log_->Add("done " + std::to_string(resp_.index()) + " " +
              std::to_string(resp_.message().size()));
    DeleteAndNotify(this, log_, s);
  }
  std::atomic<int> written_{0};

 private:
  void Next() {
    req_.set_message("x");
    if (written_ + 1 == n_ && last_) {
      StartWriteLast(&req_, WriteOptions());
      return;
    }
    StartWrite(&req_);
    if (written_ + 1 == n_) StartWritesDone();
  }
  ClientContext ctx_;
  EchoRequest req_;
  EchoResponse resp_;
  const int n_;
  const bool last_;
  Log* const log_;
};

TEST_P(ClientCallbackTest, ClientStreaming) {
  Log log;
  new StreamWriter(stub_.get(), 50, /*last=*/false, 10, &log);
  ASSERT_TRUE(log.Wait());
  EXPECT_TRUE(log.status.ok()) << log.status;
  EXPECT_EQ(log.events,
            (std::vector<std::string>{"writes done", "done 50 50"}));
}

TEST_P(ClientCallbackTest, ClientStreamingWithWriteLast) {
  Log log;
  new StreamWriter(stub_.get(), 7, /*last=*/true, 10, &log);
  ASSERT_TRUE(log.Wait());
  EXPECT_TRUE(log.status.ok()) << log.status;
  EXPECT_EQ(log.events, (std::vector<std::string>{"done 7 7"}));
}

// A server that reads slowly (the bidi handler writes each answer, which
// nobody reads) holds a writer back: OnWriteDone stops coming.
class BidiFlood final : public ClientBidiReactor<EchoRequest, EchoResponse> {
 public:
  BidiFlood(EchoService::Stub* stub, Log* log) : log_(log) {
    ctx_.set_deadline(absl::Now() + absl::Seconds(60));
    stub->async()->Bidi(&ctx_, this);
    req_.set_message(std::string(64 << 10, 'f'));
    StartWrite(&req_);
    StartCall();
  }
  void OnWriteDone(bool ok) override {
    if (!ok) return;
    ++writes_;
    StartWrite(&req_);
  }
  void OnDone(const Status& s) override { DeleteAndNotify(this, log_, s); }
  void Cancel() { ctx_.TryCancel(); }
  std::atomic<int> writes_{0};

 private:
  ClientContext ctx_;
  EchoRequest req_;
  Log* const log_;
};

TEST_P(ClientCallbackTest, SlowServerHoldsTheWriterBackAndCancelFromAThread) {
  Log log;
  auto* r = new BidiFlood(stub_.get(), &log);
  int stalled_at = -1;
  for (int i = 0; i < 5000 && stalled_at < 0; ++i) {
    const int before = r->writes_.load();
    for (int j = 0; j < 3; ++j) RoundTrip();
    if (before > 0 && r->writes_.load() == before) stalled_at = before;
  }
  EXPECT_GT(stalled_at, 0);
  EXPECT_LT(stalled_at, 400) << "the writer was not held back (25 MiB)";
  r->Cancel();  // From this thread, while a write waits.
  ASSERT_TRUE(log.Wait());
  EXPECT_EQ(log.status.error_code(), StatusCode::CANCELLED);
}

// Ping-pong from the reactions: a write, its answer, the next write.
class PingPong final : public ClientBidiReactor<EchoRequest, EchoResponse> {
 public:
  PingPong(EchoService::Stub* stub, int rounds, Log* log)
      : rounds_(rounds), log_(log) {
    ctx_.set_deadline(absl::Now() + absl::Seconds(60));
    stub->async()->Bidi(&ctx_, this);
    req_.set_message("0");
    StartWrite(&req_);
    StartRead(&resp_);
    StartCall();
  }
  void OnReadInitialMetadataDone(bool ok) override {
    log_->Enter();
    if (!ok || reads_ != 0) log_->Add("bad initial");
    log_->Leave();
  }
  void OnWriteDone(bool ok) override {
    log_->Enter();
    if (!ok) log_->Add("write failed");
    log_->Leave();
  }
  void OnReadDone(bool ok) override {
    log_->Enter();
    if (!ok) {
      log_->Add("end");
      log_->Leave();
      return;
    }
    if (resp_.message() != std::to_string(reads_)) log_->Add("mismatch");
    ++reads_;
    if (reads_ == rounds_) {
      StartWritesDone();
    } else {
      req_.set_message(std::to_string(reads_));
      StartWrite(&req_);
    }
    StartRead(&resp_);
    log_->Leave();
  }
  void OnWritesDoneDone(bool ok) override {
    if (!ok) log_->Add("writes done failed");
  }
  void OnDone(const Status& s) override {
    log_->Enter();
    log_->Add("done " + std::to_string(reads_));
    DeleteAndNotify(this, log_, s);
  }

 private:
  ClientContext ctx_;
  EchoRequest req_;
  EchoResponse resp_;
  const int rounds_;
  Log* const log_;
  int reads_ = 0;
};

TEST_P(ClientCallbackTest, BidiPingPongFromReactions) {
  Log log;
  new PingPong(stub_.get(), 100, &log);
  ASSERT_TRUE(log.Wait());
  EXPECT_TRUE(log.status.ok()) << log.status;
  EXPECT_EQ(log.events, (std::vector<std::string>{"end", "done 100"}));
  EXPECT_FALSE(log.reentered);
}

// WriteOptions::set_no_compression: that message goes out uncompressed in a
// call that compresses (the others are compressed).
class OptionsWriter final : public ClientWriteReactor<EchoRequest> {
 public:
  OptionsWriter(EchoService::Stub* stub, Log* log) : log_(log) {
    ctx_.set_deadline(absl::Now() + absl::Seconds(30));
    ctx_.set_compression_algorithm(compression::Encoding::kGzip);
    stub->async()->ClientStream(&ctx_, &resp_, this);
    req_.set_message(std::string(4096, 'c'));
    StartWrite(&req_, WriteOptions().set_no_compression());
    StartCall();
  }
  void OnWriteDone(bool ok) override {
    if (!ok) return;
    if (++writes_ == 1) {
      StartWrite(&req_);  // Compressed.
    } else if (writes_ == 2) {
      StartWriteLast(&req_, WriteOptions().set_no_compression());
    }
  }
  void OnDone(const Status& s) override {
    log_->Add(std::to_string(resp_.index()));
    DeleteAndNotify(this, log_, s);
  }

 private:
  ClientContext ctx_;
  EchoRequest req_;
  EchoResponse resp_;
  Log* const log_;
  int writes_ = 0;
};

TEST_P(ClientCallbackTest, WriteOptionsNoCompression) {
  if (GetParam() == Peer::kGrpc) GTEST_SKIP() << "counted by our server";
  Log log;
  new OptionsWriter(stub_.get(), &log);
  ASSERT_TRUE(log.Wait());
  EXPECT_TRUE(log.status.ok()) << log.status;
  EXPECT_EQ(log.events, (std::vector<std::string>{"3"}));
  EXPECT_EQ(counters_.compressed.load(), 1u);
}

TEST_P(ClientCallbackTest, Deadline) {
  ClientContext ctx;
  ctx.set_deadline(absl::Now() + absl::Milliseconds(50));
  EchoRequest req;
  req.set_sleep_ms(5000);
  EchoResponse resp;
  absl::Notification done;
  Status status;
  stub_->async()->Echo(&ctx, &req, &resp, [&](Status s) {
    status = std::move(s);
    done.Notify();
  });
  ASSERT_TRUE(done.WaitForNotificationWithTimeout(absl::Seconds(30)));
  EXPECT_EQ(status.error_code(), StatusCode::DEADLINE_EXCEEDED);
}

// Misuse ends the call with INTERNAL naming it; the first operation still
// gets its reaction, OnDone still comes once.
class Misuser final : public ClientBidiReactor<EchoRequest, EchoResponse> {
 public:
  enum class Mistake { kTwoWrites, kTwoReads, kWriteAfterDone, kStartTwice };
  Misuser(EchoService::Stub* stub, Mistake m, Log* log) : m_(m), log_(log) {
    ctx_.set_deadline(absl::Now() + absl::Seconds(30));
    stub->async()->Bidi(&ctx_, this);
    StartWrite(&req_);
    // Once started the call may end and delete this reactor at any time
    // (the other mistakes are made in a reaction): `m`, not `m_`. With
    // kStartTwice the call cannot end before the second StartCall.
    StartCall();
    if (m == Mistake::kStartTwice) StartCall();
  }
  void OnWriteDone(bool ok) override {
    log_->Add(ok ? "write" : "write failed");
    if (!ok || first_done_) return;
    first_done_ = true;
    // Inside a reaction: the first operation's reaction cannot have run.
    switch (m_) {
      case Mistake::kTwoWrites:
        StartWrite(&req_);
        StartWrite(&req_);
        break;
      case Mistake::kTwoReads:
        StartRead(&resp_);
        StartRead(&resp_);
        break;
      case Mistake::kWriteAfterDone:
        StartWritesDone();
        StartWrite(&req_);
        break;
      case Mistake::kStartTwice:
        break;
    }
  }
  void OnReadDone(bool ok) override { log_->Add(ok ? "read" : "read failed"); }
  void OnDone(const Status& s) override { DeleteAndNotify(this, log_, s); }

 private:
  const Mistake m_;
  bool first_done_ = false;
  ClientContext ctx_;
  EchoRequest req_;
  EchoResponse resp_;
  Log* const log_;
};

TEST_P(ClientCallbackTest, MisuseIsReported) {
  struct Case {
    Misuser::Mistake m;
    const char* message;
  };
  const Case cases[] = {
      {Misuser::Mistake::kTwoWrites,
       "StartWrite before the previous OnWriteDone"},
      {Misuser::Mistake::kTwoReads, "StartRead before the previous OnReadDone"},
      {Misuser::Mistake::kWriteAfterDone,
       "StartWrite after the end of the requests"},
      {Misuser::Mistake::kStartTwice, "StartCall called twice"},
  };
  for (const Case& c : cases) {
    Log log;
    new Misuser(stub_.get(), c.m, &log);
    ASSERT_TRUE(log.Wait()) << c.message;
    EXPECT_EQ(log.status.error_code(), StatusCode::INTERNAL) << c.message;
    EXPECT_EQ(log.status.error_message(), c.message);
    if (c.m == Misuser::Mistake::kTwoWrites) {
      // The first write of the reaction was sent before the second ended
      // the call: it succeeded.
      EXPECT_EQ(log.events, (std::vector<std::string>{"write", "write"}));
    }
    if (c.m == Misuser::Mistake::kTwoReads) {
      EXPECT_EQ(log.events, (std::vector<std::string>{"write", "read failed"}));
    }
  }
}

// The process's threads but grpc++'s sync server pool (grpc names its
// threads "grpcpp_sync_server", cut to 15 characters): that pool grows with
// the calls in flight when the machine is busy (895 threads for 2,000 calls
// seen under load), which says nothing of the client. Our server's pool
// stops at its max_workers (256).
// -1 when /proc/self/task cannot be listed.
int ThreadCountButGrpcServers() {
  const std::optional<std::vector<std::string>> names =
      transport::testing::ThreadNames();
  if (!names.has_value()) return -1;
  int n = 0;
  for (const std::string& name : *names) {
    if (name.rfind("grpcpp_sync", 0) != 0) ++n;
  }
  return n;
}

TEST_P(ClientCallbackTest, ManyConcurrentCallsOnOneChannelWithoutThreads) {
  constexpr int kCalls = 2000;
  std::atomic<int> done{0}, ok{0};
  std::vector<std::unique_ptr<ClientContext>> contexts(kCalls);
  std::vector<EchoRequest> requests(kCalls);
  std::vector<EchoResponse> responses(kCalls);
  absl::Notification all;
  const int threads_before = ThreadCountButGrpcServers();
  if (threads_before < 0) GTEST_SKIP() << "/proc/self/task cannot be listed";
  for (int i = 0; i < kCalls; ++i) {
    contexts[i] = std::make_unique<ClientContext>();
    contexts[i]->set_deadline(absl::Now() + absl::Seconds(60));
    requests[i].set_message(std::to_string(i));
    stub_->async()->Echo(
        contexts[i].get(), &requests[i], &responses[i], [&, i](Status s) {
          if (s.ok() && responses[i].message() == std::to_string(i)) {
            ++ok;
          }
          if (++done == kCalls) all.Notify();
        });
  }
  ASSERT_TRUE(all.WaitForNotificationWithTimeout(absl::Seconds(60)));
  EXPECT_EQ(ok.load(), kCalls);
  // The client adds no thread per call (the server's worker pool may grow,
  // to far fewer than the calls).
  EXPECT_LT(ThreadCountButGrpcServers() - threads_before, kCalls / 4);
}

// A context cancelled before the stub method (grpc++ allows it): the call
// ends with CANCELLED through the reaction, for both forms.
class CancelledFirst final : public ClientUnaryReactor {
 public:
  CancelledFirst(EchoService::Stub* stub, Log* log) : log_(log) {
    ctx_.TryCancel();
    stub->async()->Echo(&ctx_, &req_, &resp_, this);
    StartCall();
  }
  void OnDone(const Status& s) override { DeleteAndNotify(this, log_, s); }

 private:
  ClientContext ctx_;
  EchoRequest req_;
  EchoResponse resp_;
  Log* const log_;
};

TEST_P(ClientCallbackTest, ContextCancelledBeforeTheCall) {
  ClientContext ctx;
  ctx.TryCancel();
  EchoRequest req;
  EchoResponse resp;
  absl::Notification done;
  Status status;
  stub_->async()->Echo(&ctx, &req, &resp, [&](Status s) {
    status = std::move(s);
    done.Notify();
  });
  ASSERT_TRUE(done.WaitForNotificationWithTimeout(absl::Seconds(30)));
  EXPECT_EQ(status.error_code(), StatusCode::CANCELLED) << status;

  Log log;
  new CancelledFirst(stub_.get(), &log);
  ASSERT_TRUE(log.Wait());
  EXPECT_EQ(log.status.error_code(), StatusCode::CANCELLED) << log.status;
}

// B: a client-streaming writer whose writes another call's reactions start.
class OuterWriter final : public ClientWriteReactor<EchoRequest> {
 public:
  OuterWriter(EchoService::Stub* stub, Log* log) : log_(log) {
    ctx_.set_deadline(absl::Now() + absl::Seconds(30));
    stub->async()->ClientStream(&ctx_, &resp_, this);
    StartCall();
  }
  void OnWriteDone(bool ok) override {
    log_->Add(std::string("write ") + (ok ? "ok" : "fail") +
              (inside_other_ ? " inside" : ""));
    StartWritesDone();
  }
  void OnDone(const Status& s) override { DeleteAndNotify(this, log_, s); }
  // Set by A around its StartWrite (A's reaction, the loop thread).
  bool inside_other_ = false;
  EchoRequest req_;

 private:
  ClientContext ctx_;
  EchoResponse resp_;
  Log* const log_;
};

// A: a unary call whose OnReadInitialMetadataDone starts B's write, as a
// proxy holding its mutex would.
class StartsOther final : public ClientUnaryReactor {
 public:
  StartsOther(EchoService::Stub* stub, OuterWriter* other, Log* log)
      : other_(other), log_(log) {
    ctx_.set_deadline(absl::Now() + absl::Seconds(30));
    stub->async()->Echo(&ctx_, &req_, &resp_, this);
    StartCall();
  }
  void OnReadInitialMetadataDone(bool /*ok*/) override {
    other_->inside_other_ = true;
    other_->StartWrite(&other_->req_);
    other_->inside_other_ = false;
  }
  void OnDone(const Status& s) override { DeleteAndNotify(this, log_, s); }

 private:
  ClientContext ctx_;
  EchoRequest req_;
  EchoResponse resp_;
  OuterWriter* const other_;
  Log* const log_;
};

TEST_P(ClientCallbackTest, StartFromAnotherCallsReactionDoesNotReactInside) {
  Log b_log, a_log;
  auto* b = new OuterWriter(stub_.get(), &b_log);
  new StartsOther(stub_.get(), b, &a_log);
  ASSERT_TRUE(a_log.Wait());
  ASSERT_TRUE(b_log.Wait());
  EXPECT_TRUE(a_log.status.ok()) << a_log.status;
  EXPECT_TRUE(b_log.status.ok()) << b_log.status;
  EXPECT_EQ(b_log.events, std::vector<std::string>{"write ok"});
}

// The application reads the initial metadata after OnReadInitialMetadataDone
// (from any thread): the end of the call must not assign it again.
class KeepsInitial final : public ClientUnaryReactor {
 public:
  KeepsInitial(EchoService::Stub* stub, Log* log) : log_(log) {
    ctx_.set_deadline(absl::Now() + absl::Seconds(30));
    ctx_.AddMetadata("x-in", std::string(100, 'v'));
    stub->async()->Echo(&ctx_, &req_, &resp_, this);
    StartCall();
  }
  void OnReadInitialMetadataDone(bool /*ok*/) override {
    auto v = ctx_.GetServerInitialMetadata().Get("x-initial");
    if (v) data_ = v->data();
  }
  void OnDone(const Status& s) override {
    auto v = ctx_.GetServerInitialMetadata().Get("x-initial");
    log_->Add(v && v->data() == data_ ? "same" : "assigned again");
    DeleteAndNotify(this, log_, s);
  }

 private:
  ClientContext ctx_;
  EchoRequest req_;
  EchoResponse resp_;
  const char* data_ = nullptr;
  Log* const log_;
};

TEST_P(ClientCallbackTest, InitialMetadataNotAssignedAgainAtTheEnd) {
  Log log;
  new KeepsInitial(stub_.get(), &log);
  ASSERT_TRUE(log.Wait());
  EXPECT_TRUE(log.status.ok()) << log.status;
  EXPECT_EQ(log.events, std::vector<std::string>{"same"});
}

// The call keeps its channel: stub and channel dropped between the bind and
// StartCall (ASan: the freed ChannelImpl and loop).
TEST_P(ClientCallbackTest, CallKeepsTheChannel) {
  Log log;
  EchoRequest req;
  req.set_message("kept");
  UnaryReactor* r;
  {
    auto channel = CreateChannel(target_, InsecureChannelCredentials());
    auto stub = EchoService::NewStub(channel);
    r = new UnaryReactor(stub.get(), req, &log);
  }
  r->StartCall();
  ASSERT_TRUE(log.Wait());
  EXPECT_TRUE(log.status.ok()) << log.status;
}

// Records the threads its reactions run on; OnDone cancels `other`.
struct ReactionThreads {
  std::thread::id initial;
  std::thread::id done;
};
class RecordsThreads final : public ClientUnaryReactor {
 public:
  RecordsThreads(EchoService::Stub* stub, int sleep_ms, ClientContext* other,
                 ReactionThreads* threads, Log* log)
      : other_(other), threads_(threads), log_(log) {
    ctx_.set_deadline(absl::Now() + absl::Seconds(30));
    req_.set_sleep_ms(sleep_ms);
    stub->async()->Echo(&ctx_, &req_, &resp_, this);
  }
  void OnReadInitialMetadataDone(bool /*ok*/) override {
    threads_->initial = std::this_thread::get_id();
  }
  void OnDone(const Status& s) override {
    threads_->done = std::this_thread::get_id();
    other_->TryCancel();
    DeleteAndNotify(this, log_, s);
  }

 private:
  ClientContext ctx_;
  EchoRequest req_;
  EchoResponse resp_;
  ClientContext* const other_;
  ReactionThreads* const threads_;
  Log* const log_;
};

// A blocking call's caller drives the channel's loop while it waits
// (EventLoop::CoPollUntil): the response of a callback call on the same
// channel that comes meanwhile is read on the caller's thread, and its
// reactions must still run on the loop's own thread (the caller may hold a
// user lock). The callback call's OnDone ends the blocking one.
//
// The test proves something only if the caller did run I/O handlers as a
// co-poller meanwhile (CoPolledEventsOnThisThread): the frames the
// connection brings in that time are the callback call's response (the
// blocking call's handler waits; a small request moves no window) and, from
// grpc++, maybe a PING, after which the co-poller keeps polling and reads
// the response. A caller that finds the loop awake (grpc++'s PING being
// handled) waits on its call instead: that round checks nothing and is
// tried again, a bounded number of times.
TEST_P(ClientCallbackTest, ReactionsNeverRunOnACoPollingBlockingCaller) {
  RoundTrip();  // Connected.
  int co_polled_rounds = 0;
  for (int round = 0; round < 20 && co_polled_rounds == 0; ++round) {
    ClientContext blocking;
    blocking.set_deadline(absl::Now() + absl::Seconds(30));
    ReactionThreads threads;
    Log log;
    const int entered = counters_.echo_entered.load();
    auto* r = new RecordsThreads(stub_.get(), /*sleep_ms=*/100, &blocking,
                                 &threads, &log);
    r->StartCall();
    // Its request reached the server: the loop sleeps again, and the
    // blocking call below submits and co-polls on this thread.
    ASSERT_TRUE(WaitUntil(
        [&] { return counters_.echo_entered.load() == entered + 1; }));
    EchoRequest req;
    req.set_sleep_ms(20000);
    EchoResponse resp;
    const uint64_t co_polled =
        transport::EventLoop::CoPolledEventsOnThisThread();
    const Status s = stub_->Echo(&blocking, req, &resp);
    EXPECT_EQ(s.error_code(), StatusCode::CANCELLED) << s;
    if (transport::EventLoop::CoPolledEventsOnThisThread() > co_polled) {
      ++co_polled_rounds;
    }
    ASSERT_TRUE(log.Wait());
    EXPECT_TRUE(log.status.ok()) << log.status;
    EXPECT_NE(threads.initial, std::this_thread::get_id()) << round;
    EXPECT_NE(threads.done, std::this_thread::get_id()) << round;
    EXPECT_EQ(threads.initial, threads.done) << "both on the loop's thread";
  }
  EXPECT_EQ(co_polled_rounds, 1)
      << "the blocking caller never co-polled: the test checked nothing";
}

class NeverStarted final : public ClientUnaryReactor {};

// A call bound and never started, its context destroyed (which cancels
// it): a leak at worst, never a use of the freed context (ASan).
TEST_P(ClientCallbackTest, NeverStartedCallWithItsContextGone) {
  NeverStarted reactor;
  EchoRequest req;
  EchoResponse resp;
  {
#if defined(__SANITIZE_ADDRESS__)
    __lsan::ScopedDisabler leaks_expected;
#endif
    auto ctx = std::make_unique<ClientContext>();
    stub_->async()->Echo(ctx.get(), &req, &resp, &reactor);
  }
  RoundTrip();  // The posted cancel has run.
  RoundTrip();
}

// A write over the max send size: OnWriteDone(false), then OnDone.
class OversizeWriter final : public ClientWriteReactor<EchoRequest> {
 public:
  OversizeWriter(EchoService::Stub* stub, Log* log) : log_(log) {
    ctx_.set_deadline(absl::Now() + absl::Seconds(30));
    stub->async()->ClientStream(&ctx_, &resp_, this);
    req_.set_message(std::string(4096, 'x'));
    StartCall();
    StartWrite(&req_);
  }
  void OnWriteDone(bool ok) override {
    log_->Add(std::string("write ") + (ok ? "ok" : "fail"));
  }
  void OnDone(const Status& s) override {
    log_->Add("done " + std::to_string(static_cast<int>(s.error_code())));
    DeleteAndNotify(this, log_, s);
  }

 private:
  ClientContext ctx_;
  EchoRequest req_;
  EchoResponse resp_;
  Log* const log_;
};

TEST_P(ClientCallbackTest, WriteOverMaxSendSizeReactsBeforeOnDone) {
  ChannelArguments args;
  args.SetMaxSendMessageSize(1024);
  auto channel =
      CreateCustomChannel(target_, InsecureChannelCredentials(), args);
  auto stub = EchoService::NewStub(channel);
  Log log;
  new OversizeWriter(stub.get(), &log);
  ASSERT_TRUE(log.Wait());
  EXPECT_EQ(log.status.error_code(), StatusCode::RESOURCE_EXHAUSTED)
      << log.status;
  EXPECT_EQ(log.events, (std::vector<std::string>{"write fail", "done 8"}));
}

// RemoveHold without a hold: misuse, reported (INTERNAL), OnDone comes.
// The stream cannot end before the posted RemoveHold applies: the server
// has far more to write than the windows let through, and the reactor
// reads one message at most (a short stream could end, and OnDone delete
// the reactor, before the RemoveHold made after StartCall).
class Unheld final : public ClientReadReactor<EchoResponse> {
 public:
  Unheld(EchoService::Stub* stub, const EchoRequest& req, Log* log)
      : log_(log) {
    ctx_.set_deadline(absl::Now() + absl::Seconds(30));
    stub->async()->ServerStream(&ctx_, &req, this);
    StartRead(&resp_);
    StartCall();
    RemoveHold();
  }
  void OnReadDone(bool ok) override { log_->Add(ok ? "read" : "read failed"); }
  void OnDone(const Status& s) override { DeleteAndNotify(this, log_, s); }

 private:
  ClientContext ctx_;
  EchoResponse resp_;
  Log* const log_;
};

TEST_P(ClientCallbackTest, RemoveHoldWithoutAHoldIsReported) {
  Log log;
  EchoRequest req;
  req.set_count(100000);  // 100 MiB: more than any window lets through.
  req.set_response_size(1 << 10);
  new Unheld(stub_.get(), req, &log);
  ASSERT_TRUE(log.Wait());
  EXPECT_EQ(log.status.error_code(), StatusCode::INTERNAL) << log.status;
  EXPECT_EQ(log.status.error_message(), "RemoveHold without a hold");
  EXPECT_EQ(log.events.size(), 1u);  // The read's reaction, ok or not.
}

// Writes and reads 16 KiB messages until the call ends; every reaction
// after OnDone (or after the status was delivered) is counted in the log.
class BidiPump final : public ClientBidiReactor<EchoRequest, EchoResponse> {
 public:
  struct Shared {
    std::atomic<bool> ended{false};
    std::atomic<int> late_reactions{0};
    std::atomic<int> starts{0};
    std::atomic<int> write_reactions{0};
    absl::Notification done;
  };
  BidiPump(EchoService::Stub* stub, absl::Duration deadline, Shared* shared)
      : shared_(shared) {
    ctx_.set_deadline(absl::Now() + deadline);
    stub->async()->Bidi(&ctx_, this);
    req_.set_message(std::string(16 << 10, 'p'));
    Write();
    StartRead(&resp_);
    StartCall();
  }
  void Cancel() { ctx_.TryCancel(); }
  void OnReadDone(bool ok) override {
    if (shared_->ended.load()) ++shared_->late_reactions;
    if (ok) StartRead(&resp_);
  }
  void OnWriteDone(bool ok) override {
    if (shared_->ended.load()) ++shared_->late_reactions;
    ++shared_->write_reactions;
    if (ok) Write();
  }
  void OnDone(const Status& /*s*/) override {
    Shared* shared = shared_;
    shared->ended.store(true);
    delete this;
    shared->done.Notify();
  }

 private:
  void Write() {
    ++shared_->starts;
    StartWrite(&req_);
  }
  ClientContext ctx_;
  EchoRequest req_;
  EchoResponse resp_;
  Shared* const shared_;
};

// Write credit released on an inline runner (a blocking call's thread on the
// same channel flushing the connection) is posted to the loop: it must never
// turn into an OnWriteDone after the status (OnDone). Streams kept busy
// writing while another thread makes blocking calls on the channel end by
// their deadline (a different one each time) or by a cancel from a thread:
// every write gets exactly one OnWriteDone, none after OnDone (the reactor
// is deleted there: ASan also sees a late one).
TEST_P(ClientCallbackTest, WriteCreditNeverReactsAfterTheStatus) {
  // One counter block per pump, each at an address of its own and alive to
  // the end of the test: a late reaction of an earlier pump counts in its
  // own block whenever it comes (a block reused by the next pump, as a
  // per-iteration stack object was, took it as the new pump's reaction).
  std::vector<std::unique_ptr<BidiPump::Shared>> blocks;
  std::atomic<bool> stop{false};
  std::thread blocking([&] {
    while (!stop.load()) {
      ClientContext ctx;
      ctx.set_deadline(absl::Now() + absl::Seconds(10));
      EchoRequest req;
      req.set_message(std::string(8 << 10, 'b'));
      EchoResponse resp;
      (void)stub_->Echo(&ctx, req, &resp);
    }
  });
  // On any exit (an ASSERT too) the thread stops and is joined.
  absl::Cleanup join_blocking = [&] {
    stop = true;
    blocking.join();
  };
  constexpr int kIterations = 40;
  for (int i = 0; i < kIterations; ++i) {
    SCOPED_TRACE(i);
    blocks.push_back(std::make_unique<BidiPump::Shared>());
    BidiPump::Shared& shared = *blocks.back();
    const bool cancel = i % 2 == 1;
    auto* pump = new BidiPump(
        stub_.get(), cancel ? absl::Seconds(30) : absl::Milliseconds(5 + i),
        &shared);
    // Past a failed ASSERT the pump still runs until its deadline: the test
    // must outlive it.
    absl::Cleanup wait_pump = [&] {
      EXPECT_TRUE(
          shared.done.WaitForNotificationWithTimeout(absl::Seconds(60)));
    };
    if (cancel) {
      ASSERT_TRUE(WaitUntil([&] { return shared.write_reactions.load() > i; },
                            absl::Seconds(30)));
      pump->Cancel();  // Alive: its OnDone needs the cancel or the deadline.
    }
    ASSERT_TRUE(shared.done.WaitForNotificationWithTimeout(absl::Seconds(30)));
    EXPECT_EQ(shared.late_reactions.load(), 0);
    EXPECT_EQ(shared.write_reactions.load(), shared.starts.load());
    // Whatever was posted for the call has run by the next round trip.
    RoundTrip();
    EXPECT_EQ(shared.late_reactions.load(), 0);
  }
  // Nor did any come later, during another pump's turn.
  RoundTrip();
  for (int i = 0; i < kIterations; ++i) {
    EXPECT_EQ(blocks[i]->late_reactions.load(), 0) << i;
  }
}

INSTANTIATE_TEST_SUITE_P(Peers, ClientCallbackTest,
                         ::testing::Values(Peer::kOurs, Peer::kGrpc),
                         [](const ::testing::TestParamInfo<Peer>& info) {
                           return info.param == Peer::kOurs ? "Ours" : "Grpc";
                         });

}  // namespace
}  // namespace rpc
