// The server's callback API (rpc/server_callback.h), all four kinds, against
// our blocking client and Debian's grpc++ client: answers, errors with
// metadata, cancellation (client, deadline, shutdown), flow control with a
// slow reader and a reactor that does not read, misuse, threads and memory
// per call, and 10,000 streams on one connection with only the loop threads.
// Every reactor deletes itself in OnDone (ASan checks nothing touches it
// after). Waits are on conditions, bounded by 30 s.

#include <arpa/inet.h>
#include <grpcpp/grpcpp.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <new>
#include <string>
#include <thread>
#include <vector>

#include "absl/cleanup/cleanup.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "gtest/gtest.h"
#include "rpc/internal/server_call.h"
#include "rpc/rpc.h"
#include "rpc/testdata/test_service.grpc.pb.h"
#include "rpc/testdata/test_service.rpc.pb.h"
#include "rpc/testing/fan_out.h"
#include "transport/connection/connection.h"
#include "transport/testing/thread_probe.h"
#include "transport/testing/wait_until.h"

#if !defined(__SANITIZE_ADDRESS__)
// Live heap octets allocated by the server's loop threads ("rpc-loop-N"),
// for IdleCallMemory: every operator new carries a header with its size and
// whether a server loop made it.
namespace {
std::atomic<int64_t> g_server_heap{0};
bool OnServerLoop() {
  thread_local int on_loop = -1;
  if (on_loop < 0) {
    char name[32] = {};
    pthread_getname_np(pthread_self(), name, sizeof(name));
    on_loop = std::strncmp(name, "rpc-loop-", 9) == 0 ? 1 : 0;
  }
  return on_loop == 1;
}
struct alignas(16) AllocHeader {
  size_t size;
  bool server;
};
}  // namespace

void* operator new(size_t n) {
  auto* h = static_cast<AllocHeader*>(std::malloc(n + sizeof(AllocHeader)));
  if (h == nullptr) throw std::bad_alloc();
  h->size = n;
  h->server = OnServerLoop();
  if (h->server) g_server_heap += static_cast<int64_t>(n);
  return h + 1;
}
void operator delete(void* p) noexcept {
  if (p == nullptr) return;
  AllocHeader* h = static_cast<AllocHeader*>(p) - 1;
  if (h->server) g_server_heap -= static_cast<int64_t>(h->size);
  std::free(h);
}
void operator delete(void* p, size_t) noexcept { operator delete(p); }
void* operator new[](size_t n) { return operator new(n); }
void operator delete[](void* p) noexcept { operator delete(p); }
void operator delete[](void* p, size_t) noexcept { operator delete(p); }
#endif

namespace rpc {
namespace {

using test::EchoRequest;
using test::EchoResponse;
using test::EchoService;

constexpr absl::Duration kBound = absl::Seconds(30);

using transport::testing::ThreadCount;

std::string MetadataValue(const ServerContext* ctx, const char* key) {
  auto v = ctx->client_metadata().Get(key);
  return v.has_value() ? std::string(*v) : std::string();
}

// What the reactors saw, for the tests to wait on.
struct Events {
  absl::Mutex mu;
  int cancels ABSL_GUARDED_BY(mu) = 0;
  int dones ABSL_GUARDED_BY(mu) = 0;
  std::atomic<int> writes_ok{0};
  std::atomic<int> writes_failed{0};
  std::atomic<int> reads_ok{0};
  // A reaction that began while another of the same call ran.
  std::atomic<int> nested_reactions{0};
  std::atomic<int> compressed_responses{-1};

  void Cancel() {
    absl::MutexLock lock(&mu);
    ++cancels;
  }
  void Done() {
    absl::MutexLock lock(&mu);
    ++dones;
  }
  int Cancels() {
    absl::MutexLock lock(&mu);
    return cancels;
  }
  int Dones() {
    absl::MutexLock lock(&mu);
    return dones;
  }
};

// Waits (bounded) for `pred`.
template <typename P>
bool WaitFor(P pred) {
  return transport::testing::WaitUntil(pred, kBound);
}

// Reactors that wait for the test to let them go register here.
class HeldSet {
 public:
  void Add(void* r) {
    absl::MutexLock lock(&mu_);
    held_.insert(r);
    size_.store(static_cast<int>(held_.size()));
  }
  void Remove(void* r) {
    absl::MutexLock lock(&mu_);
    held_.erase(r);
    size_.store(static_cast<int>(held_.size()));
  }
  int size() { return size_.load(); }
  // Runs `fn` on every registered reactor still alive (under the lock: a
  // reactor's OnDone, which removes it, waits).
  template <typename T, typename F>
  void ForEach(F fn) {
    absl::MutexLock lock(&mu_);
    for (void* h : held_) fn(static_cast<T*>(h));
  }

 private:
  absl::Mutex mu_;
  absl::flat_hash_set<void*> held_ ABSL_GUARDED_BY(mu_);
  std::atomic<int> size_{0};
};

// Counts a reaction entered while another of the same reactor runs.
class ReactionGuard {
 public:
  ReactionGuard(bool* in_reaction, Events* events) : in_(in_reaction) {
    if (*in_) ++events->nested_reactions;
    *in_ = true;
  }
  ~ReactionGuard() { *in_ = false; }

 private:
  bool* const in_;
};

class CallbackEcho final : public EchoService::CallbackService {
 public:
  Events events;
  HeldSet held;

  // Unary. "hold": finishes only when cancelled or released (Release);
  // "thread": finishes from another thread; status_code: that status.
  class HeldUnary final : public ServerUnaryReactor {
   public:
    explicit HeldUnary(CallbackEcho* s) : s_(s) { s_->held.Add(this); }
    void OnCancel() override {
      s_->events.Cancel();
      Finish(Status(StatusCode::CANCELLED, "held call cancelled"));
    }
    void OnDone() override {
      s_->held.Remove(this);
      s_->events.Done();
      delete this;
    }

   private:
    CallbackEcho* const s_;
  };

  ServerUnaryReactor* Echo(CallbackServerContext* ctx, const EchoRequest* req,
                           EchoResponse* resp) override {
    if (!MetadataValue(ctx, "x-big-initial").empty()) {
      ctx->AddInitialMetadata("x-big", std::string(64 << 10, 'b'));
    }
    const std::string in = MetadataValue(ctx, "x-in");
    if (!in.empty()) {
      ctx->AddInitialMetadata("x-initial", in);
      ctx->AddTrailingMetadata("x-trailing-bin", in + '\0');
    }
    if (req->message() == "hold") return new HeldUnary(this);
    ServerUnaryReactor* reactor = ctx->DefaultReactor();
    if (req->status_code() != 0) {
      reactor->Finish(Status(static_cast<StatusCode>(req->status_code()),
                             req->status_message()));
      return reactor;
    }
    resp->set_message(req->message());
    resp->set_payload(req->payload() + std::string(req->response_size(), 'p'));
    if (req->message() == "thread") {
      std::thread([reactor] { reactor->Finish(Status::OK); }).detach();
      return reactor;
    }
    reactor->Finish(Status::OK);
    return reactor;
  }

  // Server streaming: `count` responses of `response_size` octets, then OK.
  // "hold": waits for Go() (from the test's thread) before the first;
  // metadata x-last: the last one by StartWriteAndFinish, with the status
  // of the request (status_code, status_message).
  class Writer final : public ServerWriteReactor<EchoResponse> {
   public:
    Writer(CallbackEcho* s, CallbackServerContext* ctx, const EchoRequest* req)
        : s_(s),
          ctx_(ctx),
          count_(req->count()),
          last_(!MetadataValue(ctx, "x-last").empty()),
          final_status_(static_cast<StatusCode>(req->status_code()),
                        req->status_message()) {
      resp_.set_payload(std::string(req->response_size(), 'w'));
      if (!MetadataValue(ctx, "x-gzip").empty()) {
        ctx->set_compression_algorithm(compression::Encoding::kGzip);
      }
      if (!MetadataValue(ctx, "x-no-compression").empty()) {
        options_.set_no_compression();
      }
      if (req->message() == "hold") {
        s_->held.Add(this);
        held_ = true;
        return;
      }
      Next();
    }
    void Go() { Next(); }
    void OnWriteDone(bool ok) override {
      ReactionGuard guard(&in_reaction_, &s_->events);
      if (!ok) {
        ++s_->events.writes_failed;
        Finish(Status(StatusCode::CANCELLED, "write failed"));
        return;
      }
      ++s_->events.writes_ok;
      Next();
    }
    void OnCancel() override { s_->events.Cancel(); }
    void OnDone() override {
      s_->events.compressed_responses =
          static_cast<int>(ctx_->call()->compressed_responses());
      if (held_) s_->held.Remove(this);
      s_->events.Done();
      delete this;
    }

   private:
    void Next() {
      if (sent_ == count_) {
        Finish(Status::OK);
        return;
      }
      resp_.set_index(sent_++);
      if (last_ && sent_ == count_) {
        StartWriteAndFinish(&resp_, options_, final_status_);
        return;
      }
      StartWrite(&resp_, options_);
    }

    CallbackEcho* const s_;
    CallbackServerContext* const ctx_;
    WriteOptions options_;
    bool in_reaction_ = false;
    const int count_;
    const bool last_;
    // With x-last: the status_code and status_message of the request.
    const Status final_status_;
    bool held_ = false;
    int sent_ = 0;
    EchoResponse resp_;
  };

  ServerWriteReactor<EchoResponse>* ServerStream(
      CallbackServerContext* ctx, const EchoRequest* req) override {
    return new Writer(this, ctx, req);
  }

  // Client streaming: counts the requests (message: their number, payload
  // octets in index). Metadata x-no-read: reads nothing until Resume().
  class Reader final : public ServerReadReactor<EchoRequest> {
   public:
    Reader(CallbackEcho* s, CallbackServerContext* ctx, EchoResponse* resp)
        : s_(s), resp_(resp) {
      if (!MetadataValue(ctx, "x-no-read").empty()) {
        s_->held.Add(this);
        held_ = true;
        return;
      }
      StartRead(&req_);
    }
    void Resume() { StartRead(&req_); }
    void OnReadDone(bool ok) override {
      ReactionGuard guard(&in_reaction_, &s_->events);
      if (!ok) {
        resp_->set_message(std::to_string(count_));
        resp_->set_index(static_cast<int>(octets_));
        Finish(Status::OK);
        return;
      }
      ++s_->events.reads_ok;
      ++count_;
      octets_ += req_.payload().size();
      StartRead(&req_);
    }
    void OnCancel() override { s_->events.Cancel(); }
    void OnDone() override {
      if (held_) s_->held.Remove(this);
      s_->events.Done();
      delete this;
    }

   private:
    CallbackEcho* const s_;
    EchoResponse* const resp_;
    EchoRequest req_;
    bool held_ = false;
    bool in_reaction_ = false;
    int count_ = 0;
    size_t octets_ = 0;
  };

  ServerReadReactor<EchoRequest>* ClientStream(CallbackServerContext* ctx,
                                               EchoResponse* resp) override {
    return new Reader(this, ctx, resp);
  }

  // Bidi: echoes each request until the client half-closes, then OK (or the
  // status_code of a request). Metadata x-misuse: write-twice, read-twice,
  // finish-twice, write-after-finish, initial-twice, write-300.
  class BidiEcho final : public ServerBidiReactor<EchoRequest, EchoResponse> {
   public:
    BidiEcho(CallbackEcho* s, CallbackServerContext* ctx) : s_(s) {
      const std::string misuse = MetadataValue(ctx, "x-misuse");
      if (misuse == "write-twice") {
        StartWrite(&resp_);
        StartWrite(&resp2_);
        Finish(Status::OK);
      } else if (misuse == "read-twice") {
        StartRead(&req_);
        StartRead(&req2_);
        Finish(Status::OK);
      } else if (misuse == "finish-twice") {
        Finish(Status(StatusCode::ABORTED, "first"));
        Finish(Status(StatusCode::OK, "second"));
      } else if (misuse == "initial-twice") {
        StartSendInitialMetadata();
        StartSendInitialMetadata();
        Finish(Status::OK);
      } else if (misuse == "write-300") {
        for (int i = 0; i < 300; ++i) StartWrite(&resp_);
        Finish(Status::OK);
      } else if (misuse == "write-after-finish") {
        Finish(Status(StatusCode::ABORTED, "finished"));
        StartWrite(&resp_);
      } else {
        if (!MetadataValue(ctx, "x-big-initial").empty()) {
          ctx->AddInitialMetadata("x-big", std::string(64 << 10, 'b'));
        }
        StartSendInitialMetadata();
        StartRead(&req_);
      }
    }
    void OnSendInitialMetadataDone(bool ok) override { sent_headers_ = ok; }
    void OnReadDone(bool ok) override {
      ReactionGuard guard(&in_reaction_, &s_->events);
      if (!ok) {
        Finish(Status::OK);
        return;
      }
      ++s_->events.reads_ok;
      if (req_.status_code() != 0) {
        Finish(Status(static_cast<StatusCode>(req_.status_code()),
                      req_.status_message()));
        return;
      }
      resp_.set_message(req_.message());
      StartWrite(&resp_);
    }
    void OnWriteDone(bool ok) override {
      ReactionGuard guard(&in_reaction_, &s_->events);
      if (!ok) {
        ++s_->events.writes_failed;
        return;
      }
      ++s_->events.writes_ok;
      StartRead(&req_);
    }
    void OnCancel() override {
      s_->events.Cancel();
      Finish(Status(StatusCode::CANCELLED, "cancelled"));
    }
    void OnDone() override {
      s_->events.Done();
      delete this;
    }

   private:
    CallbackEcho* const s_;
    EchoRequest req_, req2_;
    EchoResponse resp_, resp2_;
    bool sent_headers_ = false;
    bool in_reaction_ = false;
  };

  // Bidi with metadata x-room: "member" waits in the room (room_member) for
  // a "speaker", whose OnReadDone writes the request to the member and
  // finishes it, then finishes itself. The member's reactions count whether
  // they ran inside the speaker's reaction (they must not: grpc++ never runs
  // a reaction inside a Start*).
  class RoomMember final : public ServerBidiReactor<EchoRequest, EchoResponse> {
   public:
    explicit RoomMember(CallbackEcho* s) : s_(s) { s_->room_member = this; }
    void Say(const std::string& text) {
      resp_.set_message(text);
      StartWrite(&resp_);
      Finish(Status::OK);
    }
    void OnWriteDone(bool ok) override {
      if (s_->speaker_in_reaction) ++s_->reactions_inside_start;
      if (ok) ++s_->events.writes_ok;
    }
    void OnDone() override {
      if (s_->speaker_in_reaction) ++s_->reactions_inside_start;
      s_->events.Done();
      delete this;
    }

   private:
    CallbackEcho* const s_;
    EchoResponse resp_;
  };
  class RoomSpeaker final
      : public ServerBidiReactor<EchoRequest, EchoResponse> {
   public:
    explicit RoomSpeaker(CallbackEcho* s) : s_(s) { StartRead(&req_); }
    void OnReadDone(bool ok) override {
      if (ok) {
        s_->speaker_in_reaction = true;
        if (RoomMember* m = s_->room_member.exchange(nullptr)) {
          m->Say(req_.message());
        }
        s_->speaker_in_reaction = false;
      }
      Finish(Status::OK);
    }
    void OnDone() override {
      s_->events.Done();
      delete this;
    }

   private:
    CallbackEcho* const s_;
    EchoRequest req_;
  };
  std::atomic<RoomMember*> room_member{nullptr};
  std::atomic<bool> speaker_in_reaction{false};
  std::atomic<int> reactions_inside_start{0};

  ServerBidiReactor<EchoRequest, EchoResponse>* Bidi(
      CallbackServerContext* ctx) override {
    const std::string room = MetadataValue(ctx, "x-room");
    if (room == "member") return new RoomMember(this);
    if (room == "speaker") return new RoomSpeaker(this);
    return new BidiEcho(this, ctx);
  }
};

class CallbackServerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ServerBuilder builder;
    builder.AddListeningPort("127.0.0.1:0", InsecureServerCredentials(),
                             &port_);
    builder.RegisterService(&service_);
    builder.SetMaxConcurrentStreams(20000);
    server_ = builder.BuildAndStart();
    ASSERT_NE(server_, nullptr);
    channel_ = CreateChannel(absl::StrCat("127.0.0.1:", port_),
                             InsecureChannelCredentials());
    stub_ = EchoService::NewStub(channel_);
  }
  void TearDown() override {
    stub_.reset();
    channel_.reset();
    server_->Shutdown(absl::Now() + absl::Seconds(5));
  }

  std::unique_ptr<::rpc::test::grpcpeer::EchoService::Stub> GrpcStub() {
    return ::rpc::test::grpcpeer::EchoService::NewStub(grpc::CreateChannel(
        absl::StrCat("127.0.0.1:", port_), grpc::InsecureChannelCredentials()));
  }

  CallbackEcho service_;
  int port_ = 0;
  std::unique_ptr<Server> server_;
  std::shared_ptr<Channel> channel_;
  std::unique_ptr<EchoService::Stub> stub_;
};

// Writes `n` requests on a bidi stream (ours or grpc++'s), each echoed back.
template <typename Stream>
void ExpectEchoes(Stream* stream, int n) {
  for (int i = 0; i < n; ++i) {
    EchoRequest req;
    req.set_message(std::to_string(i));
    ASSERT_TRUE(stream->Write(req));
    EchoResponse resp;
    ASSERT_TRUE(stream->Read(&resp));
    EXPECT_EQ(resp.message(), std::to_string(i));
  }
}

ClientContext* WithDeadline(ClientContext* ctx,
                            absl::Duration d = absl::Seconds(30)) {
  ctx->set_deadline(absl::Now() + d);
  return ctx;
}

TEST_F(CallbackServerTest, UnaryAnswersWithMetadata) {
  ClientContext ctx;
  WithDeadline(&ctx)->AddMetadata("x-in", "v1");
  EchoRequest req;
  req.set_message("hi");
  req.set_response_size(3);
  EchoResponse resp;
  Status s = stub_->Echo(&ctx, req, &resp);
  ASSERT_TRUE(s.ok()) << s;
  EXPECT_EQ(resp.message(), "hi");
  EXPECT_EQ(resp.payload(), "ppp");
  EXPECT_EQ(ctx.GetServerInitialMetadata().Get("x-initial"), "v1");
  EXPECT_EQ(ctx.GetServerTrailingMetadata().Get("x-trailing-bin"),
            std::string("v1") + '\0');
}

TEST_F(CallbackServerTest, UnaryFinishedFromAnotherThread) {
  for (int i = 0; i < 20; ++i) {
    ClientContext ctx;
    EchoRequest req;
    req.set_message("thread");
    EchoResponse resp;
    Status s = stub_->Echo(WithDeadline(&ctx), req, &resp);
    ASSERT_TRUE(s.ok()) << s;
    EXPECT_EQ(resp.message(), "thread");
  }
}

TEST_F(CallbackServerTest, UnaryErrorWithTrailingMetadata) {
  ClientContext ctx;
  WithDeadline(&ctx)->AddMetadata("x-in", "e");
  EchoRequest req;
  req.set_status_code(StatusCode::FAILED_PRECONDITION);
  req.set_status_message("nope 100%");
  EchoResponse resp;
  Status s = stub_->Echo(&ctx, req, &resp);
  EXPECT_EQ(s.error_code(), StatusCode::FAILED_PRECONDITION);
  EXPECT_EQ(s.error_message(), "nope 100%");
  EXPECT_EQ(ctx.GetServerTrailingMetadata().Get("x-trailing-bin"),
            std::string("e") + '\0');
}

TEST_F(CallbackServerTest, ServerStreaming) {
  for (bool last : {false, true}) {
    ClientContext ctx;
    if (last) ctx.AddMetadata("x-last", "1");
    EchoRequest req;
    req.set_count(50);
    req.set_response_size(100);
    auto reader = stub_->ServerStream(WithDeadline(&ctx), req);
    EchoResponse resp;
    int n = 0;
    while (reader->Read(&resp)) {
      EXPECT_EQ(resp.index(), n);
      EXPECT_EQ(resp.payload().size(), 100u);
      ++n;
    }
    Status s = reader->Finish();
    EXPECT_TRUE(s.ok()) << s;
    EXPECT_EQ(n, 50);
    EXPECT_TRUE(
        WaitFor([&] { return service_.events.Dones() == (last ? 2 : 1); }));
    // StartWriteAndFinish has no OnWriteDone (grpc++'s: it completes at
    // OnDone).
    EXPECT_EQ(service_.events.writes_ok.load(), last ? 50 + 49 : 50);
  }
  EXPECT_EQ(service_.events.Cancels(), 0);
}

// A streaming error status after StartWriteAndFinish: the message goes out,
// then the status (only a unary or client-streaming response is dropped on
// an error).
TEST_F(CallbackServerTest, WriteAndFinishWithAnErrorSendsTheMessage) {
  ClientContext ctx;
  WithDeadline(&ctx)->AddMetadata("x-last", "1");
  EchoRequest req;
  req.set_count(3);
  req.set_status_code(StatusCode::ABORTED);
  req.set_status_message("after the last");
  auto reader = stub_->ServerStream(&ctx, req);
  EchoResponse resp;
  int n = 0;
  while (reader->Read(&resp)) {
    EXPECT_EQ(resp.index(), n);
    ++n;
  }
  Status s = reader->Finish();
  EXPECT_EQ(s.error_code(), StatusCode::ABORTED) << s;
  EXPECT_EQ(s.error_message(), "after the last");
  EXPECT_EQ(n, 3);
}

TEST_F(CallbackServerTest, ClientStreaming) {
  ClientContext ctx;
  EchoResponse resp;
  auto writer = stub_->ClientStream(WithDeadline(&ctx), &resp);
  EchoRequest req;
  req.set_payload(std::string(1000, 'x'));
  for (int i = 0; i < 100; ++i) ASSERT_TRUE(writer->Write(req));
  ASSERT_TRUE(writer->WritesDone());
  Status s = writer->Finish();
  ASSERT_TRUE(s.ok()) << s;
  EXPECT_EQ(resp.message(), "100");
  EXPECT_EQ(resp.index(), 100000);
  // StartRead in OnReadDone with the next message already here: answered
  // after the reaction returned, never inside it.
  EXPECT_EQ(service_.events.nested_reactions.load(), 0);
}

// WriteOptions::set_no_compression: a gzip call's messages go out with flag 0.
TEST_F(CallbackServerTest, WriteOptionsNoCompression) {
  for (bool no_compression : {false, true}) {
    SCOPED_TRACE(no_compression);
    service_.events.compressed_responses = -1;
    ClientContext ctx;
    WithDeadline(&ctx)->AddMetadata("x-gzip", "1");
    if (no_compression) ctx.AddMetadata("x-no-compression", "1");
    EchoRequest req;
    req.set_count(4);
    req.set_response_size(8192);
    auto reader = stub_->ServerStream(&ctx, req);
    EchoResponse resp;
    int n = 0;
    while (reader->Read(&resp)) n += resp.payload().size() == 8192;
    EXPECT_TRUE(reader->Finish().ok());
    EXPECT_EQ(n, 4);
    ASSERT_TRUE(
        WaitFor([&] { return service_.events.compressed_responses >= 0; }));
    EXPECT_EQ(service_.events.compressed_responses.load(),
              no_compression ? 0 : 4);
  }
}

TEST_F(CallbackServerTest, BidiEchoesAndSendsHeadersFirst) {
  ClientContext ctx;
  auto stream = stub_->Bidi(WithDeadline(&ctx));
  // StartSendInitialMetadata: the headers come before any message.
  stream->WaitForInitialMetadata();
  ExpectEchoes(stream.get(), 20);
  ASSERT_TRUE(stream->WritesDone());
  EchoResponse resp;
  EXPECT_FALSE(stream->Read(&resp));
  Status s = stream->Finish();
  EXPECT_TRUE(s.ok()) << s;
  EXPECT_EQ(service_.events.nested_reactions.load(), 0);
}

TEST_F(CallbackServerTest, BidiErrorStatus) {
  ClientContext ctx;
  auto stream = stub_->Bidi(WithDeadline(&ctx));
  EchoRequest req;
  req.set_status_code(StatusCode::OUT_OF_RANGE);
  req.set_status_message("range");
  ASSERT_TRUE(stream->Write(req));
  EchoResponse resp;
  EXPECT_FALSE(stream->Read(&resp));
  Status s = stream->Finish();
  EXPECT_EQ(s.error_code(), StatusCode::OUT_OF_RANGE);
  EXPECT_EQ(s.error_message(), "range");
}

TEST_F(CallbackServerTest, ClientCancelGivesOnCancelThenOnDone) {
  ClientContext ctx;
  auto stream = stub_->Bidi(WithDeadline(&ctx));
  EchoRequest req;
  req.set_message("a");
  ASSERT_TRUE(stream->Write(req));
  EchoResponse resp;
  ASSERT_TRUE(stream->Read(&resp));
  ctx.TryCancel();
  EXPECT_TRUE(WaitFor([&] { return service_.events.Dones() == 1; }));
  EXPECT_EQ(service_.events.Cancels(), 1);
  EXPECT_EQ(stream->Finish().error_code(), StatusCode::CANCELLED);
}

TEST_F(CallbackServerTest, DeadlineCancelsAHeldUnaryCall) {
  ClientContext ctx;
  EchoRequest req;
  req.set_message("hold");
  EchoResponse resp;
  Status s =
      stub_->Echo(WithDeadline(&ctx, absl::Milliseconds(200)), req, &resp);
  EXPECT_EQ(s.error_code(), StatusCode::DEADLINE_EXCEEDED);
  EXPECT_TRUE(WaitFor([&] { return service_.events.Dones() == 1; }));
  EXPECT_EQ(service_.events.Cancels(), 1);
}

TEST_F(CallbackServerTest, ShutdownCancelsHeldCallsAndWaitsForOnDone) {
  std::vector<std::thread> clients;
  std::atomic<int> cancelled{0};
  for (int i = 0; i < 10; ++i) {
    clients.emplace_back([&] {
      ClientContext ctx;
      EchoRequest req;
      req.set_message("hold");
      EchoResponse resp;
      if (!stub_->Echo(WithDeadline(&ctx), req, &resp).ok()) ++cancelled;
    });
  }
  ASSERT_TRUE(WaitFor([&] { return service_.held.size() == 10; }));
  server_->Shutdown(absl::Now());
  // Shutdown returned after every reactor's OnDone.
  EXPECT_EQ(service_.events.Dones(), 10);
  EXPECT_EQ(service_.events.Cancels(), 10);
  for (auto& t : clients) t.join();
  EXPECT_EQ(cancelled.load(), 10);
}

TEST_F(CallbackServerTest, HeldUnaryFinishedFromTheTestThread) {
  std::vector<std::thread> clients;
  std::atomic<int> ok{0};
  for (int i = 0; i < 10; ++i) {
    clients.emplace_back([&] {
      ClientContext ctx;
      EchoRequest req;
      req.set_message("hold");
      EchoResponse resp;
      if (stub_->Echo(WithDeadline(&ctx), req, &resp).error_code() ==
          StatusCode::ALREADY_EXISTS) {
        ++ok;
      }
    });
  }
  ASSERT_TRUE(WaitFor([&] { return service_.held.size() == 10; }));
  service_.held.ForEach<CallbackEcho::HeldUnary>([](auto* r) {
    r->Finish(Status(StatusCode::ALREADY_EXISTS, "released"));
  });
  for (auto& t : clients) t.join();
  EXPECT_EQ(ok.load(), 10);
  EXPECT_TRUE(WaitFor([&] { return service_.events.Dones() == 10; }));
  EXPECT_EQ(service_.events.Cancels(), 0);
}

// A client that does not read stops the writer's OnWriteDone: the server
// holds about its write bound plus the windows, not the whole stream.
TEST_F(CallbackServerTest, SlowReaderStopsOnWriteDone) {
  constexpr int kCount = 2000;
  constexpr int kSize = 16 << 10;  // 32 MiB in all.
  ClientContext ctx;
  EchoRequest req;
  req.set_count(kCount);
  req.set_response_size(kSize);
  auto reader = stub_->ServerStream(WithDeadline(&ctx), req);
  ASSERT_TRUE(WaitFor([&] { return service_.events.writes_ok.load() > 4; }));
  // Given time, it does not run ahead (what a slow machine can only help).
  absl::SleepFor(absl::Seconds(1));
  const int ahead = service_.events.writes_ok.load();
  EXPECT_LT(ahead, (16 << 20) / kSize) << "written without a reader";
  EchoResponse resp;
  int n = 0;
  while (reader->Read(&resp)) ++n;
  EXPECT_TRUE(reader->Finish().ok());
  EXPECT_EQ(n, kCount);
}

// A reactor that does not StartRead holds the client's writes back through
// the stream window; once it reads (StartRead from another thread), the
// client's writes go through.
TEST_F(CallbackServerTest, ReactorThatDoesNotReadHoldsTheClientBack) {
  constexpr int kCount = 2000;
  constexpr int kSize = 16 << 10;
  std::atomic<int> written{0};
  EchoResponse resp;
  Status status;
  std::thread client([&] {
    ClientContext ctx;
    WithDeadline(&ctx)->AddMetadata("x-no-read", "1");
    auto writer = stub_->ClientStream(&ctx, &resp);
    EchoRequest req;
    req.set_payload(std::string(kSize, 'r'));
    for (int i = 0; i < kCount; ++i) {
      if (!writer->Write(req)) break;
      ++written;
    }
    writer->WritesDone();
    status = writer->Finish();
  });
  ASSERT_TRUE(WaitFor([&] { return service_.held.size() == 1; }));
  ASSERT_TRUE(WaitFor([&] { return written.load() > 4; }));
  absl::SleepFor(absl::Seconds(1));
  EXPECT_LT(written.load(), (16 << 20) / kSize) << "the client was not held";
  service_.held.ForEach<CallbackEcho::Reader>([](auto* r) { r->Resume(); });
  client.join();
  ASSERT_TRUE(status.ok()) << status;
  EXPECT_EQ(resp.message(), std::to_string(kCount));
  EXPECT_EQ(written.load(), kCount);
}

// Blocking client writers held back by reactors that do not read, when the
// reactors Finish early: every Write returns (false once the status is in)
// and another call on the connection streams 8 MiB through. (32 writers of
// 2.5 MiB each stall the connection: more than its receive buffer limit of
// 16 MiB plus its 4 MiB window waits unread.) A Write that got its credit
// back from the finished call just before the call's status was recorded
// once waited for good: a few of the 32 did.
TEST_F(CallbackServerTest, EarlyFinishEndsBlockedClientWrites) {
  constexpr int kHogs = 32;
  constexpr int kSize = 64 << 10;
  constexpr int kHogMessages = 40;     // 2.5 MiB each: more than fits.
  constexpr int kProbeMessages = 128;  // 8 MiB.
  EchoRequest big;
  big.set_payload(std::string(kSize, 'h'));
  // Shared with the writers' threads, which are detached if one never
  // returns (a failure: they must not touch this frame then).
  struct Shared {
    std::atomic<int> written{0};
    std::atomic<int> aborted{0};
    std::atomic<int> returned{0};
  };
  auto shared = std::make_shared<Shared>();
  std::vector<std::thread> hogs;
  for (int i = 0; i < kHogs; ++i) {
    hogs.emplace_back([shared, big, stub = stub_.get()] {
      ClientContext ctx;
      WithDeadline(&ctx)->AddMetadata("x-no-read", "1");
      EchoResponse resp;
      auto writer = stub->ClientStream(&ctx, &resp);
      for (int m = 0; m < kHogMessages; ++m) {
        if (!writer->Write(big)) break;
        ++shared->written;
      }
      // No WritesDone: the client's side stays open.
      if (writer->Finish().error_code() == StatusCode::ABORTED) {
        ++shared->aborted;
      }
      ++shared->returned;
    });
  }
  const auto give_up = [&] {
    for (auto& t : hogs) t.detach();
  };
  if (!WaitFor([&] { return service_.held.size() == kHogs; })) {
    give_up();
    FAIL() << service_.held.size();
  }
  // The stream windows (1 MiB) let 32 MiB in, the connection only 20 MiB:
  // the writers run dry.
  if (!WaitFor([&] { return shared->written.load() >= (16 << 20) / kSize; })) {
    give_up();
    FAIL() << shared->written.load();
  }
  // The stall is complete once `written` stays put across a few round trips
  // on a connection of its own (the loops had turns meanwhile), however slow
  // the machine.
  auto other = EchoService::NewStub(CreateChannel(
      absl::StrCat("127.0.0.1:", port_), InsecureChannelCredentials()));
  int steady = 0;
  int last = -1;
  if (!WaitFor([&] {
        EchoResponse resp;
        ClientContext ctx;
        if (!other->Echo(WithDeadline(&ctx), EchoRequest(), &resp).ok()) {
          return false;
        }
        const int now = shared->written.load();
        steady = now == last ? steady + 1 : 0;
        last = now;
        return steady >= 3;
      })) {
    give_up();
    FAIL() << "the writers never settled: " << shared->written.load();
  }
  EXPECT_LT(shared->written.load(), kHogs * kHogMessages) << "nothing held";
  service_.held.ForEach<CallbackEcho::Reader>([](auto* r) {
    r->Finish(Status(StatusCode::ABORTED, "finished early"));
  });
  // A blocked Write returns (false) once the status is in: it once waited
  // for good when the status came just after it was given credit.
  if (!WaitFor([&] { return shared->returned.load() == kHogs; })) {
    give_up();
    FAIL() << (kHogs - shared->returned.load()) << " writers never returned";
  }
  for (auto& t : hogs) t.join();
  EXPECT_EQ(shared->aborted.load(), kHogs);

  ClientContext ctx;
  EchoResponse resp;
  auto writer = stub_->ClientStream(WithDeadline(&ctx), &resp);
  for (int m = 0; m < kProbeMessages; ++m) ASSERT_TRUE(writer->Write(big)) << m;
  ASSERT_TRUE(writer->WritesDone());
  Status s = writer->Finish();
  ASSERT_TRUE(s.ok()) << s;
  EXPECT_EQ(resp.message(), std::to_string(kProbeMessages));
  EXPECT_TRUE(WaitFor([&] { return service_.events.Dones() == kHogs + 1; }));
}

// Response headers over the client's header list limit, from Finish
// (unary) and from StartSendInitialMetadata (bidi): the call ends
// RESOURCE_EXHAUSTED, the reactor gets OnDone, the connection carries on.
TEST_F(CallbackServerTest, OversizedInitialMetadataEndsTheCall) {
  ClientContext warm;
  EchoResponse resp;
  ASSERT_TRUE(stub_->Echo(WithDeadline(&warm), EchoRequest(), &resp).ok());
  {
    ClientContext ctx;
    WithDeadline(&ctx)->AddMetadata("x-big-initial", "1");
    Status s = stub_->Echo(&ctx, EchoRequest(), &resp);
    EXPECT_EQ(s.error_code(), StatusCode::RESOURCE_EXHAUSTED) << s;
  }
  {
    ClientContext ctx;
    WithDeadline(&ctx)->AddMetadata("x-big-initial", "1");
    auto stream = stub_->Bidi(&ctx);
    while (stream->Read(&resp)) {
    }
    Status s = stream->Finish();
    EXPECT_EQ(s.error_code(), StatusCode::RESOURCE_EXHAUSTED) << s;
  }
  EXPECT_TRUE(WaitFor([&] { return service_.events.Dones() == 1; }));
  ClientContext after;
  EXPECT_TRUE(stub_->Echo(WithDeadline(&after), EchoRequest(), &resp).ok());
}

TEST_F(CallbackServerTest, MisuseEndsTheCallWithInternal) {
  struct Case {
    const char* misuse;
    StatusCode code;
    const char* message;
  };
  const Case cases[] = {
      {"write-twice", StatusCode::INTERNAL,
       "StartWrite before the previous OnWriteDone"},
      {"read-twice", StatusCode::INTERNAL,
       "StartRead before the previous OnReadDone"},
      {"initial-twice", StatusCode::INTERNAL,
       "StartSendInitialMetadata called twice"},
      // The second Finish is ignored: the first status went out.
      {"finish-twice", StatusCode::ABORTED, "first"},
      // A write after Finish fails (OnWriteDone(false)); the status stands.
      {"write-after-finish", StatusCode::ABORTED, "finished"},
  };
  int dones = 0;
  for (const Case& c : cases) {
    SCOPED_TRACE(c.misuse);
    ClientContext ctx;
    WithDeadline(&ctx)->AddMetadata("x-misuse", c.misuse);
    auto stream = stub_->Bidi(&ctx);
    EchoResponse resp;
    while (stream->Read(&resp)) {
    }
    Status s = stream->Finish();
    EXPECT_EQ(s.error_code(), c.code) << s;
    EXPECT_EQ(s.error_message(), c.message);
    ++dones;
    EXPECT_TRUE(WaitFor([&] { return service_.events.Dones() == dones; }));
  }
}

// A reaction of one call starting operations on another call of the same
// loop (the chat-room pattern: the speaker holds the room's lock while it
// writes to every member): the member's OnWriteDone and OnDone come after
// the speaker's reaction returned, never inside its StartWrite or Finish.
TEST_F(CallbackServerTest, StartOnAnotherCallNeverRunsItsReactionsInline) {
  ClientContext member_ctx;
  WithDeadline(&member_ctx)->AddMetadata("x-room", "member");
  auto member = stub_->Bidi(&member_ctx);
  ASSERT_TRUE(WaitFor([&] { return service_.room_member.load() != nullptr; }));
  ClientContext speaker_ctx;
  WithDeadline(&speaker_ctx)->AddMetadata("x-room", "speaker");
  auto speaker = stub_->Bidi(&speaker_ctx);
  EchoRequest req;
  req.set_message("hello");
  ASSERT_TRUE(speaker->Write(req));
  EchoResponse resp;
  ASSERT_TRUE(member->Read(&resp));
  EXPECT_EQ(resp.message(), "hello");
  EXPECT_FALSE(member->Read(&resp));
  EXPECT_TRUE(member->Finish().ok());
  EXPECT_FALSE(speaker->Read(&resp));
  EXPECT_TRUE(speaker->Finish().ok());
  EXPECT_TRUE(WaitFor([&] { return service_.events.Dones() == 2; }));
  EXPECT_EQ(service_.events.writes_ok.load(), 1);
  EXPECT_EQ(service_.reactions_inside_start.load(), 0);
}

// Every misused operation gets its reaction, however many (300 StartWrite
// in a row: 299 of them before the previous OnWriteDone).
TEST_F(CallbackServerTest, EveryMisusedWriteGetsItsReaction) {
  ClientContext ctx;
  WithDeadline(&ctx)->AddMetadata("x-misuse", "write-300");
  auto stream = stub_->Bidi(&ctx);
  EchoResponse resp;
  while (stream->Read(&resp)) {
  }
  EXPECT_EQ(stream->Finish().error_code(), StatusCode::INTERNAL);
  ASSERT_TRUE(WaitFor([&] { return service_.events.Dones() == 1; }));
  EXPECT_GE(service_.events.writes_failed.load(), 299);
  EXPECT_EQ(
      service_.events.writes_ok.load() + service_.events.writes_failed.load(),
      300);
}

// Streaming callback handlers hold no thread: 200 open bidi streams, each
// echoing, with the thread count of one.
TEST_F(CallbackServerTest, StreamsHoldNoThread) {
  if (ThreadCount() < 0) GTEST_SKIP() << "/proc/self/task cannot be listed";
  std::vector<std::unique_ptr<ClientContext>> contexts;
  std::vector<std::unique_ptr<ClientReaderWriter<EchoRequest, EchoResponse>>>
      streams;
  int threads_with_one = 0;
  for (int i = 0; i < 200; ++i) {
    contexts.push_back(std::make_unique<ClientContext>());
    streams.push_back(stub_->Bidi(WithDeadline(contexts.back().get())));
    EchoRequest req;
    req.set_message("x");
    ASSERT_TRUE(streams.back()->Write(req));
    EchoResponse resp;
    ASSERT_TRUE(streams.back()->Read(&resp));
    if (i == 0) threads_with_one = ThreadCount();
  }
  EXPECT_EQ(ThreadCount(), threads_with_one);
  for (auto& stream : streams) {
    ASSERT_TRUE(stream->WritesDone());
    EXPECT_TRUE(stream->Finish().ok());
  }
}

// 10,000 server-streaming calls at once on one connection, every one held
// until all started, then released from this thread: all finish with their
// messages, with the threads the server and channel had for one call.
// Under the first inline-run design one call in 10,000 sometimes never
// ended (cause not isolated); it passed 11 runs in a row once inline runners
// ran only their own task and the DATA pump became O(1).
TEST_F(CallbackServerTest, TenThousandStreamsOnOneConnection) {
  if (ThreadCount() < 0) GTEST_SKIP() << "/proc/self/task cannot be listed";
  constexpr int kCalls = 10000;
  ASSERT_TRUE(channel_->WaitForConnected(absl::Now() + kBound));
  const int threads = ThreadCount();
  EchoRequest req;
  req.set_message("hold");
  req.set_count(3);
  std::vector<std::unique_ptr<testing::StreamCall>> calls;
  calls.reserve(kCalls);
  for (int i = 0; i < kCalls; ++i) {
    calls.push_back(testing::StartServerStream(
        channel_.get(), req, absl::Now() + absl::Seconds(120)));
  }
  const absl::Time t0 = absl::Now();
  ASSERT_TRUE(WaitFor([&] { return service_.held.size() == kCalls; }))
      << service_.held.size();
  std::printf("held after %s\n",
              absl::FormatDuration(absl::Now() - t0).c_str());
  EXPECT_EQ(ThreadCount(), threads);
  service_.held.ForEach<CallbackEcho::Writer>([](auto* w) { w->Go(); });
  std::string first_error;
  EXPECT_EQ(testing::CountSucceeded(calls, 3, &first_error), kCalls)
      << first_error;
  std::printf("done after %s\n",
              absl::FormatDuration(absl::Now() - t0).c_str());
  EXPECT_TRUE(WaitFor([&] { return service_.events.Dones() == kCalls; }));
  EXPECT_EQ(ThreadCount(), threads);
}

// A raw HTTP/2 client on a socket of its own (transport::Connection, role
// client), whose connection the test can drop abruptly (a TCP reset).
class RawClient {
 public:
  explicit RawClient(int port) {
    fd_ = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in addr = {};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(static_cast<uint16_t>(port));
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    connected_ = fd_ >= 0 && connect(fd_, reinterpret_cast<sockaddr*>(&addr),
                                     sizeof(addr)) == 0;
    transport::ConnectionOptions options;
    options.role = transport::Role::kClient;
    conn_ = std::make_unique<transport::Connection>(
        options, &listener_, absl::GetCurrentTimeNanos());
  }
  ~RawClient() {
    if (fd_ >= 0) close(fd_);
  }
  bool connected() const { return connected_; }

  // A call of `method` with one request (and its end when `end`); returns
  // its stream id (0 on failure). `metadata`: one more header, if given.
  uint32_t Start(const char* method, const EchoRequest& req, bool end,
                 const char* metadata = nullptr) {
    const std::string path = absl::StrCat("/rpc.test.EchoService/", method);
    const hpack::HeaderField headers[] = {
        {":method", "POST"},
        {":scheme", "http"},
        {":path", path},
        {":authority", "raw"},
        {"content-type", "application/grpc"},
        {"te", "trailers"},
        {metadata != nullptr ? metadata : "x-none", "1"}};
    absl::StatusOr<uint32_t> id = conn_->SubmitRequest(headers, false);
    if (!id.ok()) return 0;
    if (!Send(*id, req, 1, end)) return 0;
    return *id;
  }

  // `count` copies of `req` on stream `id` (and its end when `end`); what
  // the windows do not let through yet waits in the connection.
  bool Send(uint32_t id, const EchoRequest& req, int count, bool end) {
    const std::string body = req.SerializeAsString();
    std::string framed(5, '\0');
    framed[1] = static_cast<char>(body.size() >> 24);
    framed[2] = static_cast<char>(body.size() >> 16);
    framed[3] = static_cast<char>(body.size() >> 8);
    framed[4] = static_cast<char>(body.size());
    framed += body;
    transport::SliceBuffer data;
    for (int i = 0; i < count; ++i) data.Append(std::string_view(framed));
    if (!conn_->SubmitData(id, std::move(data), end).ok()) return false;
    return Flush();
  }

  // Writes what the connection has to send, and takes in what came.
  bool Flush() {
    transport::SliceBuffer out;
    conn_->TakeOutput(&out);
    for (size_t i = 0; i < out.num_slices(); ++i) {
      const transport::Slice& sl = out.slice(i);
      size_t done = 0;
      while (done < sl.size()) {
        const ssize_t n = write(fd_, sl.data() + done, sl.size() - done);
        if (n <= 0) return false;
        done += static_cast<size_t>(n);
      }
    }
    char buf[16384];
    pollfd p = {fd_, POLLIN, 0};
    while (poll(&p, 1, 0) > 0) {
      const ssize_t n = read(fd_, buf, sizeof(buf));
      if (n <= 0) break;
      conn_->Receive(transport::Slice::Copy(buf, static_cast<size_t>(n)),
                     absl::GetCurrentTimeNanos());
    }
    return true;
  }

  // What the connection may still send (the server's credit).
  int64_t connection_send_window() const {
    return conn_->connection_send_window();
  }

  // Drops the connection with a TCP reset (no GOAWAY, no RST_STREAM).
  void Abort() {
    linger l = {1, 0};
    setsockopt(fd_, SOL_SOCKET, SO_LINGER, &l, sizeof(l));
    close(fd_);
    fd_ = -1;
  }

 private:
  class Listener final : public transport::ConnectionListener {
   public:
    void OnHeaders(uint32_t, const hpack::HeaderList&, bool) override {}
    void OnTrailers(uint32_t, const hpack::HeaderList&) override {}
    void OnData(uint32_t, transport::Slice) override {}
    void OnEndStream(uint32_t) override {}
    void OnStreamReset(uint32_t, transport::Http2ErrorCode, bool) override {}
  };
  int fd_ = -1;
  bool connected_ = false;
  Listener listener_;
  std::unique_ptr<transport::Connection> conn_;
};

EchoRequest Message(const std::string& text) {
  EchoRequest req;
  req.set_message(text);
  return req;
}

// Reactors that Finish early with requests unread give the connection
// window back, also while the client keeps sending on those streams (a raw
// client that neither half-closes nor resets them after their status): 32
// streams whose reactors never read get 1.25 MiB each, more than the
// connection lets wait unread (its 16 MiB receive buffer limit plus its 4
// MiB window), so the connection stalls; their reactors Finish; then
// another stream on the same connection sends 8 MiB, which arrives only if
// the octets owed for the unread requests went back to the connection
// window.
TEST_F(CallbackServerTest, EarlyFinishWithUnreadRequestsFreesTheConnection) {
  constexpr int kHogs = 32;
  EchoRequest big;
  big.set_payload(std::string(64 << 10, 'h'));
  RawClient raw(port_);
  ASSERT_TRUE(raw.connected());
  for (int i = 0; i < kHogs; ++i) {
    const uint32_t id = raw.Start("ClientStream", big, false, "x-no-read");
    ASSERT_NE(id, 0u);
    ASSERT_TRUE(raw.Send(id, big, 19, /*end=*/false));
  }
  ASSERT_TRUE(WaitFor([&] {
    raw.Flush();
    return service_.held.size() == kHogs;
  }));
  // Everything the windows let through went out: the connection's send
  // window stays used up across a few round trips on a connection of its
  // own (the server's loops had turns to give credit back), however slow
  // the machine.
  auto other = EchoService::NewStub(CreateChannel(
      absl::StrCat("127.0.0.1:", port_), InsecureChannelCredentials()));
  int steady = 0;
  ASSERT_TRUE(WaitFor([&] {
    EchoResponse resp;
    ClientContext ctx;
    if (!raw.Flush() ||
        !other->Echo(WithDeadline(&ctx), EchoRequest(), &resp).ok() ||
        !raw.Flush()) {
      return false;
    }
    steady = raw.connection_send_window() <= 0 ? steady + 1 : 0;
    return steady >= 3;
  })) << raw.connection_send_window();
  service_.held.ForEach<CallbackEcho::Reader>([](auto* r) {
    r->Finish(Status(StatusCode::ABORTED, "finished early"));
  });
  ASSERT_TRUE(WaitFor([&] {
    raw.Flush();
    return service_.events.Dones() == kHogs;
  }));
  // 128 messages of 64 KiB, then the end: the reactor reads them all and
  // finishes OK.
  const uint32_t probe = raw.Start("ClientStream", big, false);
  ASSERT_NE(probe, 0u);
  ASSERT_TRUE(raw.Send(probe, big, 127, /*end=*/true));
  EXPECT_TRUE(WaitFor([&] {
    raw.Flush();
    return service_.events.Dones() == kHogs + 1;
  })) << "the connection stalled";
  EXPECT_EQ(service_.events.reads_ok.load(), 128);
}

// A reactor's Finish from another thread racing the end of its call: the
// client's RST_STREAM (TryCancel) or its connection dropped (a TCP reset),
// started together, many times. Every reactor gets exactly one OnDone (the
// count; ASan sees a second one touch the deleted reactor), OnCancel at most
// once, and the server serves on.
TEST_F(CallbackServerTest, FinishFromAThreadRacesCancelAndConnectionClose) {
  constexpr int kIterations = 150;
  for (int i = 0; i < kIterations; ++i) {
    SCOPED_TRACE(i);
    const bool drop_connection = i % 3 == 2;
    ClientContext ctx;
    std::unique_ptr<RawClient> raw;
    std::thread client;
    std::thread ender;
    std::atomic<bool> go{false};
    // On any exit (an ASSERT too) both threads end and are joined.
    absl::Cleanup join_threads = [&] {
      go = true;
      if (ender.joinable()) ender.join();
      if (client.joinable()) {
        ctx.TryCancel();
        client.join();
      }
    };
    if (drop_connection) {
      raw = std::make_unique<RawClient>(port_);
      ASSERT_TRUE(raw->connected());
      ASSERT_TRUE(raw->Start("Echo", Message("hold"), /*end=*/true));
    } else {
      client = std::thread([&] {
        EchoResponse resp;
        (void)stub_->Echo(WithDeadline(&ctx), Message("hold"), &resp);
      });
    }
    ASSERT_TRUE(WaitFor([&] { return service_.held.size() == 1; }));
    ender = std::thread([&] {
      while (!go.load()) {
      }
      if (drop_connection) {
        raw->Abort();
      } else {
        ctx.TryCancel();
      }
    });
    // Finish from this thread (posted to the loop) as the other one ends
    // the call.
    service_.held.ForEach<CallbackEcho::HeldUnary>([&](auto* r) {
      go = true;
      r->Finish(Status(StatusCode::ALREADY_EXISTS, "finished"));
    });
    ender.join();
    if (client.joinable()) client.join();
    ASSERT_TRUE(WaitFor([&] { return service_.events.Dones() == i + 1; }));
    EXPECT_LE(service_.events.Cancels(), i + 1);
    EXPECT_EQ(service_.held.size(), 0);
  }
  // No second OnDone came meanwhile, and the server still answers.
  EchoResponse resp;
  ClientContext after;
  EXPECT_TRUE(stub_->Echo(WithDeadline(&after), Message("x"), &resp).ok());
  EXPECT_EQ(service_.events.Dones(), kIterations);
}

// The connection of live callback calls goes away under them: a client's
// connection dropped abruptly (a TCP reset) with bidi reactors mid-stream,
// held unary ones and writers held back by the client's windows, then the
// server's Shutdown with reactors mid-stream on another connection (bidi
// streams waiting for requests, writers held back by a client that does not
// read). Every reactor's OnDone runs exactly once (counted; ASan sees a second
// one, or a reaction after it, touch the deleted reactor), before Shutdown
// returns.
TEST_F(CallbackServerTest, ConnectionGoneWithLiveReactorsEndsEachOnce) {
  constexpr int kEach = 20;
  {
    RawClient raw(port_);
    ASSERT_TRUE(raw.connected());
    // Writers held back: this client never consumes what it receives.
    EchoRequest stream;
    stream.set_count(1000);
    stream.set_response_size(64 << 10);
    for (int i = 0; i < kEach; ++i) {
      ASSERT_TRUE(raw.Start("Bidi", Message("a"), /*end=*/false));
      ASSERT_TRUE(raw.Start("Echo", Message("hold"), /*end=*/true));
      ASSERT_TRUE(raw.Start("ServerStream", stream, /*end=*/true));
    }
    ASSERT_TRUE(WaitFor([&] {
      raw.Flush();
      return service_.held.size() == kEach &&
             service_.events.reads_ok.load() == kEach &&
             service_.events.writes_ok.load() >= 2 * kEach;
    }));
    raw.Abort();
  }
  ASSERT_TRUE(WaitFor([&] { return service_.events.Dones() == 3 * kEach; }))
      << service_.events.Dones();
  EXPECT_EQ(service_.events.Cancels(), 3 * kEach);
  EXPECT_EQ(service_.held.size(), 0);

  // Mid-stream on our channel when the server shuts down.
  std::vector<std::unique_ptr<ClientContext>> contexts;
  std::vector<std::unique_ptr<ClientReaderWriter<EchoRequest, EchoResponse>>>
      bidis;
  std::vector<std::unique_ptr<ClientReader<EchoResponse>>> readers;
  for (int i = 0; i < kEach; ++i) {
    contexts.push_back(std::make_unique<ClientContext>());
    bidis.push_back(stub_->Bidi(WithDeadline(contexts.back().get())));
    ASSERT_TRUE(bidis.back()->Write(Message("b")));
    EchoResponse resp;
    ASSERT_TRUE(bidis.back()->Read(&resp));
    EchoRequest big;
    big.set_count(1000);
    big.set_response_size(64 << 10);
    contexts.push_back(std::make_unique<ClientContext>());
    readers.push_back(
        stub_->ServerStream(WithDeadline(contexts.back().get()), big));
    ASSERT_TRUE(readers.back()->Read(&resp));  // Its reactor runs.
  }
  const int before = service_.events.Dones();
  server_->Shutdown(absl::Now());
  EXPECT_EQ(service_.events.Dones(), before + 2 * kEach);
  for (auto& b : bidis) EXPECT_FALSE(b->Finish().ok());
  for (auto& r : readers) EXPECT_FALSE(r->Finish().ok());
  EXPECT_EQ(service_.events.Dones(), before + 2 * kEach);
}

// ---- grpc++'s client ----

TEST_F(CallbackServerTest, GrpcClientAllKinds) {
  auto stub = GrpcStub();
  {
    grpc::ClientContext ctx;
    ctx.set_deadline(std::chrono::system_clock::now() +
                     std::chrono::seconds(30));
    ctx.AddMetadata("x-in", "g");
    EchoRequest req;
    req.set_message("grpc");
    EchoResponse resp;
    grpc::Status s = stub->Echo(&ctx, req, &resp);
    ASSERT_TRUE(s.ok()) << s.error_message();
    EXPECT_EQ(resp.message(), "grpc");
    auto it = ctx.GetServerTrailingMetadata().find("x-trailing-bin");
    ASSERT_NE(it, ctx.GetServerTrailingMetadata().end());
    EXPECT_EQ(std::string(it->second.data(), it->second.size()),
              std::string("g") + '\0');
  }
  {
    grpc::ClientContext ctx;
    EchoRequest req;
    req.set_status_code(StatusCode::NOT_FOUND);
    req.set_status_message("missing");
    EchoResponse resp;
    grpc::Status s = stub->Echo(&ctx, req, &resp);
    EXPECT_EQ(s.error_code(), grpc::StatusCode::NOT_FOUND);
    EXPECT_EQ(s.error_message(), "missing");
  }
  {
    grpc::ClientContext ctx;
    EchoRequest req;
    req.set_count(30);
    req.set_response_size(10);
    auto reader = stub->ServerStream(&ctx, req);
    EchoResponse resp;
    int n = 0;
    while (reader->Read(&resp)) ++n;
    EXPECT_TRUE(reader->Finish().ok());
    EXPECT_EQ(n, 30);
  }
  {
    grpc::ClientContext ctx;
    EchoResponse resp;
    auto writer = stub->ClientStream(&ctx, &resp);
    EchoRequest req;
    req.set_payload("abc");
    for (int i = 0; i < 7; ++i) ASSERT_TRUE(writer->Write(req));
    ASSERT_TRUE(writer->WritesDone());
    EXPECT_TRUE(writer->Finish().ok());
    EXPECT_EQ(resp.message(), "7");
  }
  {
    grpc::ClientContext ctx;
    auto stream = stub->Bidi(&ctx);
    ExpectEchoes(stream.get(), 5);
    ASSERT_TRUE(stream->WritesDone());
    EXPECT_TRUE(stream->Finish().ok());
  }
}

TEST_F(CallbackServerTest, GrpcClientCancelAndDeadline) {
  auto stub = GrpcStub();
  {
    grpc::ClientContext ctx;
    auto stream = stub->Bidi(&ctx);
    EchoRequest req;
    ASSERT_TRUE(stream->Write(req));
    EchoResponse resp;
    ASSERT_TRUE(stream->Read(&resp));
    ctx.TryCancel();
    EXPECT_EQ(stream->Finish().error_code(), grpc::StatusCode::CANCELLED);
  }
  EXPECT_TRUE(WaitFor([&] { return service_.events.Dones() == 1; }));
  EXPECT_EQ(service_.events.Cancels(), 1);
  {
    grpc::ClientContext ctx;
    ctx.set_deadline(std::chrono::system_clock::now() +
                     std::chrono::milliseconds(200));
    EchoRequest req;
    req.set_message("hold");
    EchoResponse resp;
    EXPECT_EQ(stub->Echo(&ctx, req, &resp).error_code(),
              grpc::StatusCode::DEADLINE_EXCEEDED);
  }
  EXPECT_TRUE(WaitFor([&] { return service_.events.Dones() == 2; }));
  EXPECT_EQ(service_.events.Cancels(), 2);
}

// Memory of an idle (held) unary callback call on the server: the objects
// the library keeps for it (sizeof), and the live heap the server's loop
// threads allocated for 2,000 held calls (the call, its context, request and
// response, the reactor, the HTTP/2 stream, the request's metadata), per
// call: at most 2 KiB (issue 14, section 4).
TEST_F(CallbackServerTest, IdleCallMemory) {
  const size_t objects =
      sizeof(internal::ServerCall) +
      sizeof(internal::CallbackCallStateWith<EchoRequest, EchoResponse>) +
      sizeof(CallbackEcho::HeldUnary);
  std::printf(
      "ServerCall %zu + state %zu + reactor %zu = %zu octets\n",
      sizeof(internal::ServerCall),
      sizeof(internal::CallbackCallStateWith<EchoRequest, EchoResponse>),
      sizeof(CallbackEcho::HeldUnary), objects);
  EXPECT_LE(objects, 1024u);
#if !defined(__SANITIZE_ADDRESS__)
  constexpr int kCalls = 2000;
  ASSERT_TRUE(channel_->WaitForConnected(absl::Now() + kBound));
  EchoRequest req;
  req.set_message("hold");
  std::vector<std::unique_ptr<ClientContext>> contexts;
  std::vector<std::unique_ptr<EchoResponse>> responses;
  std::atomic<int> finished{0};
  // Warm up (the connection's tables grow once).
  const auto hold = [&](int n) {
    for (int i = 0; i < n; ++i) {
      contexts.push_back(std::make_unique<ClientContext>());
      responses.push_back(std::make_unique<EchoResponse>());
      stub_->async()->Echo(WithDeadline(contexts.back().get()), &req,
                           responses.back().get(), [&](Status) { ++finished; });
    }
  };
  hold(100);
  ASSERT_TRUE(WaitFor([&] { return service_.held.size() == 100; }));
  const int64_t before = g_server_heap.load();
  hold(kCalls);
  ASSERT_TRUE(WaitFor([&] { return service_.held.size() == 100 + kCalls; }));
  const int64_t per_call = (g_server_heap.load() - before) / kCalls;
  std::printf("server heap per idle unary callback call: %lld octets\n",
              static_cast<long long>(per_call));
  EXPECT_LE(per_call, 2048);
  service_.held.ForEach<CallbackEcho::HeldUnary>(
      [](auto* r) { r->Finish(Status::OK); });
  ASSERT_TRUE(WaitFor([&] { return finished.load() == 100 + kCalls; }));
#endif
}

}  // namespace
}  // namespace rpc
