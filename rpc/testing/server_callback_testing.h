// The fixture of the server callback API's tests (server_callback_test,
// server_callback_cancel_test, server_callback_limits_test): CallbackEcho, a
// CallbackService whose reactors cover the four kinds and the behaviours the
// tests ask for by request fields and metadata (hold, do not read, misuse,
// rooms), with the Events they saw; CallbackServerTest, a server of it on a
// loopback port with our channel and stub (GrpcStub: grpc++'s); and the
// waits they share, bounded by kBound. Test-only.

#ifndef RPC_TESTING_SERVER_CALLBACK_TESTING_H_
#define RPC_TESTING_SERVER_CALLBACK_TESTING_H_

#include <grpcpp/grpcpp.h>

#include <atomic>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "gtest/gtest.h"
#include "rpc/internal/server_call.h"
#include "rpc/rpc.h"
#include "rpc/testdata/test_service.grpc.pb.h"
#include "rpc/testdata/test_service.rpc.pb.h"
#include "transport/testing/wait_until.h"

// In namespace rpc itself (not a namespace of its own): only these three
// test binaries include it, and their tests name its types unqualified.
namespace rpc {

using test::EchoRequest;
using test::EchoResponse;
using test::EchoService;

inline constexpr absl::Duration kBound = absl::Seconds(30);

inline std::string MetadataValue(const ServerContext* ctx, const char* key) {
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

inline ClientContext* WithDeadline(ClientContext* ctx,
                                   absl::Duration d = absl::Seconds(30)) {
  ctx->set_deadline(absl::Now() + d);
  return ctx;
}

}  // namespace rpc

#endif  // RPC_TESTING_SERVER_CALLBACK_TESTING_H_
