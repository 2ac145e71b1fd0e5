// interop_client: the client side of grpc's doc/interop-test-descriptions.md
// on our stack; one test case per run, exit 0 when it passes.
//   interop_client --server_host=H --server_port=P --test_case=NAME
//       [--use_tls [--server_host_override=N] [--ca_file=F]] [--callback]
// --callback runs the case on the callback API (stub->async() and the
// client reactors) instead of the blocking one.
// Built a second time with -DINTEROP_GRPCPP against Debian's grpc++
// (grpcpp_interop_client, the peer the acceptance test drives our server
// with): the two APIs have the same shapes, the few differences are marked.

#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <functional>
#include <iostream>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "tests/interop/cli_util.h"

#ifdef INTEROP_GRPCPP
#include <grpcpp/grpcpp.h>

#include "tests/interop/test.grpc.pb.h"
namespace api = ::grpc;
#else
#include "rpc/rpc.h"
#include "tests/interop/test.rpc.pb.h"
namespace api = ::rpc;
#endif

namespace {

using grpc::testing::Empty;
using grpc::testing::SimpleRequest;
using grpc::testing::SimpleResponse;
using grpc::testing::StreamingInputCallRequest;
using grpc::testing::StreamingInputCallResponse;
using grpc::testing::StreamingOutputCallRequest;
using grpc::testing::StreamingOutputCallResponse;

constexpr char kEchoInitial[] = "x-grpc-test-echo-initial";
constexpr char kEchoTrailing[] = "x-grpc-test-echo-trailing-bin";
const int kRequestSizes[] = {27182, 8, 1828, 45904};
const int kResponseSizes[] = {31415, 9, 2653, 58979};

// A failed check: the message says what and the case fails.
struct Failure {
  std::string what;
};

void Check(bool ok, const std::string& what) {
  if (!ok) throw Failure{what};
}

std::string Describe(const api::Status& s) {
  return std::to_string(static_cast<int>(s.error_code())) + " \"" +
         s.error_message() + "\"";
}

void CheckOk(const api::Status& s, const std::string& what) {
  Check(s.ok(), what + ": status " + Describe(s));
}

void CheckCode(const api::Status& s, api::StatusCode code,
               const std::string& what) {
  Check(s.error_code() == code, what + ": want code " +
                                    std::to_string(static_cast<int>(code)) +
                                    ", got " + Describe(s));
}

void CheckZeros(const std::string& body, size_t size, const std::string& what) {
  Check(body.size() == size, what + ": payload of " +
                                 std::to_string(body.size()) +
                                 " octets, want " + std::to_string(size));
  Check(body == std::string(size, '\0'), what + ": payload is not all zeros");
}

#ifdef INTEROP_GRPCPP
std::optional<std::string> Lookup(
    const std::multimap<grpc::string_ref, grpc::string_ref>& md,
    const std::string& key) {
  auto it = md.find(key);
  if (it == md.end()) return std::nullopt;
  return std::string(it->second.data(), it->second.size());
}
#else
std::optional<std::string> Lookup(const rpc::Metadata& md,
                                  const std::string& key) {
  auto v = md.Get(key);
  if (!v) return std::nullopt;
  return std::string(*v);
}
#endif

void SetTimeout(api::ClientContext* ctx, std::chrono::milliseconds timeout) {
  ctx->set_deadline(std::chrono::system_clock::now() + timeout);
}

// Every call but timeout_on_sleeping_server gets a generous deadline so that
// a hung peer fails the case instead of the test runner's timeout.
void Bound(api::ClientContext* ctx) {
  SetTimeout(ctx, std::chrono::seconds(20));
}

void CheckMetadata(const api::ClientContext& ctx, const std::string& initial,
                   const std::string& trailing, const std::string& what) {
  auto got_initial = Lookup(ctx.GetServerInitialMetadata(), kEchoInitial);
  Check(got_initial == initial, what + ": initial metadata not echoed");
  auto got_trailing = Lookup(ctx.GetServerTrailingMetadata(), kEchoTrailing);
  Check(got_trailing == trailing, what + ": trailing metadata not echoed");
}

// The initial and trailing metadata of custom_metadata.
constexpr char kInitialValue[] = "test_initial_metadata_value";
const std::string& TrailingValue() {
  static const std::string* const v =
      new std::string("\x0a\x0b\x0a\x0b\x0a\x0b");
  return *v;
}

// The messages of status_code_and_message and special_status_message.
constexpr char kStatusMessage[] = "test status message";
constexpr char kSpecialStatusMessage[] =
    "\t\ntest with whitespace\r\nand Unicode BMP \xe2\x98\xba and non-BMP "
    "\xf0\x9f\x98\x88\t\n";

// large_unary's request (and custom_metadata's).
SimpleRequest LargeRequest() {
  SimpleRequest req;
  req.set_response_size(314159);
  req.mutable_payload()->set_body(std::string(271828, '\0'));
  return req;
}

void AddEchoMetadata(api::ClientContext* ctx) {
  ctx->AddMetadata(kEchoInitial, kInitialValue);
  ctx->AddMetadata(kEchoTrailing, TrailingValue());
}

// client_streaming's requests, one per size, and the check of its answer.
std::vector<StreamingInputCallRequest> ClientStreamingRequests() {
  std::vector<StreamingInputCallRequest> reqs;
  for (int size : kRequestSizes) {
    reqs.emplace_back();
    reqs.back().mutable_payload()->set_body(std::string(size, '\0'));
  }
  return reqs;
}

void CheckAggregated(const StreamingInputCallResponse& resp) {
  Check(resp.aggregated_payload_size() == 74922,
        "StreamingInputCall: aggregated_payload_size " +
            std::to_string(resp.aggregated_payload_size()));
}

// server_streaming's request: a response per size.
StreamingOutputCallRequest ServerStreamingRequest() {
  StreamingOutputCallRequest req;
  for (int size : kResponseSizes) {
    req.add_response_parameters()->set_size(size);
  }
  return req;
}

// A FullDuplexCall request: one response of `response_size` (none if 0)
// to a payload of `request_size` zeros.
StreamingOutputCallRequest DuplexRequest(int response_size, int request_size) {
  StreamingOutputCallRequest req;
  if (response_size > 0) req.add_response_parameters()->set_size(response_size);
  req.mutable_payload()->set_body(std::string(request_size, '\0'));
  return req;
}

// status_code_and_message / special_status_message: a request (SimpleRequest
// or StreamingOutputCallRequest) asking for UNKNOWN + `message`, and the
// check of the status it ends with.
template <typename Request>
Request StatusRequest(const std::string& message) {
  Request req;
  req.mutable_response_status()->set_code(2);
  req.mutable_response_status()->set_message(message);
  return req;
}

void CheckEchoedStatus(const api::Status& s, const std::string& message,
                       const std::string& what) {
  CheckCode(s, api::StatusCode::UNKNOWN, what);
  Check(s.error_message() == message,
        what + ": message \"" + s.error_message() + "\"");
}

class Client {
 public:
  explicit Client(std::shared_ptr<api::Channel> channel)
      : channel_(channel),
        stub_(grpc::testing::TestService::NewStub(channel)) {}

  void EmptyUnary() {
    api::ClientContext ctx;
    Bound(&ctx);
    Empty req, resp;
    CheckOk(stub_->EmptyCall(&ctx, req, &resp), "EmptyCall");
    Check(resp.ByteSizeLong() == 0, "EmptyCall: response not empty");
  }

  void LargeUnary() {
    api::ClientContext ctx;
    Bound(&ctx);
    SimpleRequest req = LargeRequest();
    SimpleResponse resp;
    CheckOk(stub_->UnaryCall(&ctx, req, &resp), "UnaryCall");
    CheckZeros(resp.payload().body(), 314159, "UnaryCall");
  }

  void ClientStreaming() {
    api::ClientContext ctx;
    Bound(&ctx);
    StreamingInputCallResponse resp;
    auto writer = stub_->StreamingInputCall(&ctx, &resp);
    for (const StreamingInputCallRequest& req : ClientStreamingRequests()) {
      Check(writer->Write(req), "StreamingInputCall: Write failed");
    }
    writer->WritesDone();
    CheckOk(writer->Finish(), "StreamingInputCall");
    CheckAggregated(resp);
  }

  void ServerStreaming() {
    api::ClientContext ctx;
    Bound(&ctx);
    auto reader = stub_->StreamingOutputCall(&ctx, ServerStreamingRequest());
    StreamingOutputCallResponse resp;
    for (int size : kResponseSizes) {
      Check(reader->Read(&resp), "StreamingOutputCall: too few responses");
      CheckZeros(resp.payload().body(), size, "StreamingOutputCall");
    }
    Check(!reader->Read(&resp), "StreamingOutputCall: too many responses");
    CheckOk(reader->Finish(), "StreamingOutputCall");
  }

  void PingPong() {
    api::ClientContext ctx;
    Bound(&ctx);
    auto stream = stub_->FullDuplexCall(&ctx);
    for (int i = 0; i < 4; ++i) {
      Check(stream->Write(DuplexRequest(kResponseSizes[i], kRequestSizes[i])),
            "FullDuplexCall: Write failed");
      StreamingOutputCallResponse resp;
      Check(stream->Read(&resp), "FullDuplexCall: no response");
      CheckZeros(resp.payload().body(), kResponseSizes[i], "FullDuplexCall");
    }
    stream->WritesDone();
    StreamingOutputCallResponse resp;
    Check(!stream->Read(&resp), "FullDuplexCall: extra response");
    CheckOk(stream->Finish(), "FullDuplexCall");
  }

  void EmptyStream() {
    api::ClientContext ctx;
    Bound(&ctx);
    auto stream = stub_->FullDuplexCall(&ctx);
    stream->WritesDone();
    StreamingOutputCallResponse resp;
    Check(!stream->Read(&resp), "FullDuplexCall: unexpected response");
    CheckOk(stream->Finish(), "FullDuplexCall");
  }

  void CustomMetadata() {
    const std::string initial = kInitialValue;
    const std::string& trailing = TrailingValue();
    {
      api::ClientContext ctx;
      Bound(&ctx);
      AddEchoMetadata(&ctx);
      SimpleRequest req = LargeRequest();
      SimpleResponse resp;
      CheckOk(stub_->UnaryCall(&ctx, req, &resp), "UnaryCall");
      CheckZeros(resp.payload().body(), 314159, "UnaryCall");
      CheckMetadata(ctx, initial, trailing, "UnaryCall");
    }
    {
      api::ClientContext ctx;
      Bound(&ctx);
      AddEchoMetadata(&ctx);
      auto stream = stub_->FullDuplexCall(&ctx);
      Check(stream->Write(DuplexRequest(314159, 271828)),
            "FullDuplexCall: Write failed");
      StreamingOutputCallResponse resp;
      Check(stream->Read(&resp), "FullDuplexCall: no response");
      CheckZeros(resp.payload().body(), 314159, "FullDuplexCall");
      stream->WritesDone();
      Check(!stream->Read(&resp), "FullDuplexCall: extra response");
      CheckOk(stream->Finish(), "FullDuplexCall");
      CheckMetadata(ctx, initial, trailing, "FullDuplexCall");
    }
  }

  void StatusCodeAndMessage() { EchoStatus(kStatusMessage, true); }
  void SpecialStatusMessage() { EchoStatus(kSpecialStatusMessage, false); }

  void UnimplementedMethod() {
    api::ClientContext ctx;
    Bound(&ctx);
    Empty req, resp;
    CheckCode(stub_->UnimplementedCall(&ctx, req, &resp),
              api::StatusCode::UNIMPLEMENTED, "TestService.UnimplementedCall");
  }

  void UnimplementedService() {
    auto stub = grpc::testing::UnimplementedService::NewStub(channel_);
    api::ClientContext ctx;
    Bound(&ctx);
    Empty req, resp;
    CheckCode(stub->UnimplementedCall(&ctx, req, &resp),
              api::StatusCode::UNIMPLEMENTED,
              "UnimplementedService.UnimplementedCall");
  }

  void CancelAfterBegin() {
    api::ClientContext ctx;
    Bound(&ctx);
    StreamingInputCallResponse resp;
    auto writer = stub_->StreamingInputCall(&ctx, &resp);
    ctx.TryCancel();
    CheckCode(writer->Finish(), api::StatusCode::CANCELLED,
              "StreamingInputCall cancelled after begin");
  }

  void CancelAfterFirstResponse() {
    api::ClientContext ctx;
    Bound(&ctx);
    auto stream = stub_->FullDuplexCall(&ctx);
    Check(stream->Write(DuplexRequest(31415, 27182)),
          "FullDuplexCall: Write failed");
    StreamingOutputCallResponse resp;
    Check(stream->Read(&resp), "FullDuplexCall: no response");
    CheckZeros(resp.payload().body(), 31415, "FullDuplexCall");
    ctx.TryCancel();
    CheckCode(stream->Finish(), api::StatusCode::CANCELLED,
              "FullDuplexCall cancelled after first response");
  }

  void TimeoutOnSleepingServer() {
    api::ClientContext ctx;
    SetTimeout(&ctx, std::chrono::milliseconds(1));
    auto stream = stub_->FullDuplexCall(&ctx);
    stream->Write(DuplexRequest(0, 27182));  // may fail: the deadline first
    CheckCode(stream->Finish(), api::StatusCode::DEADLINE_EXCEEDED,
              "FullDuplexCall with a 1 ms deadline");
  }

 private:
  // status_code_and_message / special_status_message: UnaryCall (and
  // FullDuplexCall when `streaming`) asked to answer UNKNOWN + `message`.
  void EchoStatus(const std::string& message, bool streaming) {
    {
      api::ClientContext ctx;
      Bound(&ctx);
      SimpleResponse resp;
      CheckEchoedStatus(
          stub_->UnaryCall(&ctx, StatusRequest<SimpleRequest>(message), &resp),
          message, "UnaryCall");
    }
    if (!streaming) return;
    api::ClientContext ctx;
    Bound(&ctx);
    auto stream = stub_->FullDuplexCall(&ctx);
    Check(stream->Write(StatusRequest<StreamingOutputCallRequest>(message)),
          "FullDuplexCall: Write failed");
    stream->WritesDone();
    CheckEchoedStatus(stream->Finish(), message, "FullDuplexCall");
  }

  std::shared_ptr<api::Channel> channel_;
  std::unique_ptr<grpc::testing::TestService::Stub> stub_;
};

// ---- The callback API (--callback) ----

// The end of a callback call: OnDone (or `done`) stores the status; the
// caller waits for it (bounded by the call's deadline).
class Done {
 public:
  void Set(const api::Status& s) {
    std::lock_guard<std::mutex> lock(mu_);
    status_ = s;
    done_ = true;
    cv_.notify_all();
  }
  api::Status Wait() {
    std::unique_lock<std::mutex> lock(mu_);
    cv_.wait(lock, [this] { return done_; });
    return status_;
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  bool done_ = false;
  api::Status status_;
};

// Reads every response of a server stream.
class ReadAll final
    : public api::ClientReadReactor<StreamingOutputCallResponse> {
 public:
  void Go() {
    StartRead(&resp_);
    StartCall();
  }
  void OnReadDone(bool ok) override {
    if (!ok) return;
    got.push_back(resp_);
    StartRead(&resp_);
  }
  void OnDone(const api::Status& s) override { done.Set(s); }
  std::vector<StreamingOutputCallResponse> got;
  Done done;

 private:
  StreamingOutputCallResponse resp_;
};

// Writes each request after the previous OnWriteDone, then ends the
// requests (unless `end` is false).
class WriteAll final
    : public api::ClientWriteReactor<StreamingInputCallRequest> {
 public:
  WriteAll(std::vector<StreamingInputCallRequest> reqs, bool end)
      : reqs_(std::move(reqs)), end_(end) {}
  void Go() {
    Next();
    StartCall();
  }
  void OnWriteDone(bool ok) override {
    if (ok) Next();
  }
  void OnDone(const api::Status& s) override { done.Set(s); }
  Done done;

 private:
  void Next() {
    if (next_ < reqs_.size()) {
      StartWrite(&reqs_[next_++]);
    } else if (end_ && !ended_) {
      ended_ = true;
      StartWritesDone();
    }
  }
  std::vector<StreamingInputCallRequest> reqs_;
  const bool end_;
  size_t next_ = 0;
  bool ended_ = false;
};

// A bidi call: writes the requests one at a time (in kPingPong each after
// the answer to the previous one), then ends the requests (not in kNoEnd),
// and reads until the end; `cancel_after_first` cancels from the reaction
// to the first response. grpc++ may run a call's read and write reactions
// at once: the state is under a mutex, the operations start outside it.
class Duplex final
    : public api::ClientBidiReactor<StreamingOutputCallRequest,
                                    StreamingOutputCallResponse> {
 public:
  enum class Mode { kPingPong, kWriteAll, kNoEnd };
  Duplex(api::ClientContext* ctx, std::vector<StreamingOutputCallRequest> reqs,
         Mode mode, bool cancel_after_first = false)
      : ctx_(ctx),
        reqs_(std::move(reqs)),
        mode_(mode),
        cancel_after_first_(cancel_after_first) {}
  void Go() {
    StartRead(&resp_);
    Next(false);
    StartCall();
  }
  void OnWriteDone(bool ok) override {
    if (ok) Next(true);
  }
  void OnReadDone(bool ok) override {
    if (!ok) return;
    {
      std::lock_guard<std::mutex> lock(mu_);
      got.push_back(resp_);
    }
    if (cancel_after_first_) {
      ctx_->TryCancel();  // From a reaction.
      return;
    }
    StartRead(&resp_);
    Next(false);
  }
  void OnDone(const api::Status& s) override { done.Set(s); }
  std::vector<StreamingOutputCallResponse> got;
  Done done;

 private:
  // `write_done`: the write in flight finished.
  void Next(bool write_done) {
    const StreamingOutputCallRequest* write = nullptr;
    bool end = false;
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (write_done) writing_ = false;
      if (writing_ || ended_) return;
      if (mode_ == Mode::kPingPong && got.size() < next_) return;
      if (next_ < reqs_.size()) {
        writing_ = true;
        write = &reqs_[next_++];
      } else if (mode_ != Mode::kNoEnd) {
        ended_ = true;
        end = true;
      }
    }
    if (write != nullptr) StartWrite(write);
    if (end) StartWritesDone();
  }
  api::ClientContext* const ctx_;
  std::vector<StreamingOutputCallRequest> reqs_;
  const Mode mode_;
  const bool cancel_after_first_;
  StreamingOutputCallResponse resp_;
  std::mutex mu_;
  size_t next_ = 0;
  bool writing_ = false;
  bool ended_ = false;
};

// The responses of a streaming call: one per size, all zeros.
void CheckResponses(const std::vector<StreamingOutputCallResponse>& got,
                    const std::vector<int>& sizes, const std::string& what) {
  Check(got.size() == sizes.size(), what + ": " + std::to_string(got.size()) +
                                        " responses, want " +
                                        std::to_string(sizes.size()));
  for (size_t i = 0; i < sizes.size(); ++i) {
    CheckZeros(got[i].payload().body(), static_cast<size_t>(sizes[i]), what);
  }
}

// The 14 cases again, on the callback API.
class CallbackClient {
 public:
  explicit CallbackClient(std::shared_ptr<api::Channel> channel)
      : channel_(channel),
        stub_(grpc::testing::TestService::NewStub(channel)) {}

  void EmptyUnary() {
    api::ClientContext ctx;
    Bound(&ctx);
    Empty req, resp;
    Done done;
    stub_->async()->EmptyCall(&ctx, &req, &resp,
                              [&](api::Status s) { done.Set(s); });
    CheckOk(done.Wait(), "EmptyCall");
    Check(resp.ByteSizeLong() == 0, "EmptyCall: response not empty");
  }

  void LargeUnary() {
    api::ClientContext ctx;
    Bound(&ctx);
    SimpleRequest req = LargeRequest();
    SimpleResponse resp;
    // The reactor form (the other unary cases use the std::function one).
    class Unary final : public api::ClientUnaryReactor {
     public:
      void OnReadInitialMetadataDone(bool ok) override { initial = ok; }
      void OnDone(const api::Status& s) override { done.Set(s); }
      bool initial = false;
      Done done;
    } reactor;
    stub_->async()->UnaryCall(&ctx, &req, &resp, &reactor);
    reactor.StartCall();
    CheckOk(reactor.done.Wait(), "UnaryCall");
    Check(reactor.initial, "UnaryCall: no OnReadInitialMetadataDone(true)");
    CheckZeros(resp.payload().body(), 314159, "UnaryCall");
  }

  void ClientStreaming() {
    api::ClientContext ctx;
    Bound(&ctx);
    StreamingInputCallResponse resp;
    WriteAll writer(ClientStreamingRequests(), /*end=*/true);
    stub_->async()->StreamingInputCall(&ctx, &resp, &writer);
    writer.Go();
    CheckOk(writer.done.Wait(), "StreamingInputCall");
    CheckAggregated(resp);
  }

  void ServerStreaming() {
    api::ClientContext ctx;
    Bound(&ctx);
    const StreamingOutputCallRequest req = ServerStreamingRequest();
    ReadAll reader;
    stub_->async()->StreamingOutputCall(&ctx, &req, &reader);
    reader.Go();
    CheckOk(reader.done.Wait(), "StreamingOutputCall");
    CheckResponses(reader.got,
                   {std::begin(kResponseSizes), std::end(kResponseSizes)},
                   "StreamingOutputCall");
  }

  void PingPong() {
    api::ClientContext ctx;
    Bound(&ctx);
    std::vector<StreamingOutputCallRequest> reqs;
    for (int i = 0; i < 4; ++i) {
      reqs.push_back(DuplexRequest(kResponseSizes[i], kRequestSizes[i]));
    }
    Duplex stream(&ctx, std::move(reqs), Duplex::Mode::kPingPong);
    stub_->async()->FullDuplexCall(&ctx, &stream);
    stream.Go();
    CheckOk(stream.done.Wait(), "FullDuplexCall");
    CheckResponses(stream.got,
                   {std::begin(kResponseSizes), std::end(kResponseSizes)},
                   "FullDuplexCall");
  }

  void EmptyStream() {
    api::ClientContext ctx;
    Bound(&ctx);
    Duplex stream(&ctx, {}, Duplex::Mode::kWriteAll);
    stub_->async()->FullDuplexCall(&ctx, &stream);
    stream.Go();
    CheckOk(stream.done.Wait(), "FullDuplexCall");
    Check(stream.got.empty(), "FullDuplexCall: unexpected response");
  }

  void CustomMetadata() {
    const std::string initial = kInitialValue;
    const std::string& trailing = TrailingValue();
    {
      api::ClientContext ctx;
      Bound(&ctx);
      AddEchoMetadata(&ctx);
      SimpleRequest req = LargeRequest();
      SimpleResponse resp;
      Done done;
      stub_->async()->UnaryCall(&ctx, &req, &resp,
                                [&](api::Status s) { done.Set(s); });
      CheckOk(done.Wait(), "UnaryCall");
      CheckZeros(resp.payload().body(), 314159, "UnaryCall");
      CheckMetadata(ctx, initial, trailing, "UnaryCall");
    }
    api::ClientContext ctx;
    Bound(&ctx);
    AddEchoMetadata(&ctx);
    Duplex stream(&ctx, {DuplexRequest(314159, 271828)},
                  Duplex::Mode::kPingPong);
    stub_->async()->FullDuplexCall(&ctx, &stream);
    stream.Go();
    CheckOk(stream.done.Wait(), "FullDuplexCall");
    CheckResponses(stream.got, {314159}, "FullDuplexCall");
    CheckMetadata(ctx, initial, trailing, "FullDuplexCall");
  }

  void StatusCodeAndMessage() { EchoStatus(kStatusMessage, true); }
  void SpecialStatusMessage() { EchoStatus(kSpecialStatusMessage, false); }

  void UnimplementedMethod() {
    api::ClientContext ctx;
    Bound(&ctx);
    Empty req, resp;
    Done done;
    stub_->async()->UnimplementedCall(&ctx, &req, &resp,
                                      [&](api::Status s) { done.Set(s); });
    CheckCode(done.Wait(), api::StatusCode::UNIMPLEMENTED,
              "TestService.UnimplementedCall");
  }

  void UnimplementedService() {
    auto stub = grpc::testing::UnimplementedService::NewStub(channel_);
    api::ClientContext ctx;
    Bound(&ctx);
    Empty req, resp;
    Done done;
    stub->async()->UnimplementedCall(&ctx, &req, &resp,
                                     [&](api::Status s) { done.Set(s); });
    CheckCode(done.Wait(), api::StatusCode::UNIMPLEMENTED,
              "UnimplementedService.UnimplementedCall");
  }

  void CancelAfterBegin() {
    api::ClientContext ctx;
    Bound(&ctx);
    StreamingInputCallResponse resp;
    WriteAll writer({}, /*end=*/false);
    stub_->async()->StreamingInputCall(&ctx, &resp, &writer);
    writer.Go();
    ctx.TryCancel();  // From this thread.
    CheckCode(writer.done.Wait(), api::StatusCode::CANCELLED,
              "StreamingInputCall cancelled after begin");
  }

  void CancelAfterFirstResponse() {
    api::ClientContext ctx;
    Bound(&ctx);
    Duplex stream(&ctx, {DuplexRequest(31415, 27182)}, Duplex::Mode::kNoEnd,
                  /*cancel_after_first=*/true);
    stub_->async()->FullDuplexCall(&ctx, &stream);
    stream.Go();
    CheckCode(stream.done.Wait(), api::StatusCode::CANCELLED,
              "FullDuplexCall cancelled after first response");
    CheckResponses(stream.got, {31415}, "FullDuplexCall");
  }

  void TimeoutOnSleepingServer() {
    api::ClientContext ctx;
    SetTimeout(&ctx, std::chrono::milliseconds(1));
    Duplex stream(&ctx, {DuplexRequest(0, 27182)}, Duplex::Mode::kNoEnd);
    stub_->async()->FullDuplexCall(&ctx, &stream);
    stream.Go();
    CheckCode(stream.done.Wait(), api::StatusCode::DEADLINE_EXCEEDED,
              "FullDuplexCall with a 1 ms deadline");
  }

 private:
  void EchoStatus(const std::string& message, bool streaming) {
    {
      api::ClientContext ctx;
      Bound(&ctx);
      const SimpleRequest req = StatusRequest<SimpleRequest>(message);
      SimpleResponse resp;
      Done done;
      stub_->async()->UnaryCall(&ctx, &req, &resp,
                                [&](api::Status s) { done.Set(s); });
      CheckEchoedStatus(done.Wait(), message, "UnaryCall");
    }
    if (!streaming) return;
    api::ClientContext ctx;
    Bound(&ctx);
    Duplex stream(&ctx, {StatusRequest<StreamingOutputCallRequest>(message)},
                  Duplex::Mode::kWriteAll);
    stub_->async()->FullDuplexCall(&ctx, &stream);
    stream.Go();
    CheckEchoedStatus(stream.done.Wait(), message, "FullDuplexCall");
  }

  std::shared_ptr<api::Channel> channel_;
  std::unique_ptr<grpc::testing::TestService::Stub> stub_;
};

// The case table of either client.
template <typename C>
std::map<std::string, std::function<void()>> Cases(C* client) {
  return {
      {"empty_unary", [client] { client->EmptyUnary(); }},
      {"large_unary", [client] { client->LargeUnary(); }},
      {"client_streaming", [client] { client->ClientStreaming(); }},
      {"server_streaming", [client] { client->ServerStreaming(); }},
      {"ping_pong", [client] { client->PingPong(); }},
      {"empty_stream", [client] { client->EmptyStream(); }},
      {"custom_metadata", [client] { client->CustomMetadata(); }},
      {"status_code_and_message", [client] { client->StatusCodeAndMessage(); }},
      {"special_status_message", [client] { client->SpecialStatusMessage(); }},
      {"unimplemented_method", [client] { client->UnimplementedMethod(); }},
      {"unimplemented_service", [client] { client->UnimplementedService(); }},
      {"cancel_after_begin", [client] { client->CancelAfterBegin(); }},
      {"cancel_after_first_response",
       [client] { client->CancelAfterFirstResponse(); }},
      {"timeout_on_sleeping_server",
       [client] { client->TimeoutOnSleepingServer(); }},
  };
}

using interop::FlagValue;
using interop::ReadFile;

}  // namespace

int main(int argc, char** argv) {
  std::string host = "localhost";
  int port = 0;
  std::string test_case;
  bool use_tls = false;
  bool callback = false;
  std::string host_override, ca_file;
  for (int i = 1; i < argc; ++i) {
    std::string v;
    if (FlagValue(argv[i], "--server_host_override", &v)) {
      host_override = v;
    } else if (FlagValue(argv[i], "--server_host", &v)) {
      host = v;
    } else if (FlagValue(argv[i], "--server_port", &v)) {
      port = std::atoi(v.c_str());
    } else if (FlagValue(argv[i], "--test_case", &v)) {
      test_case = v;
    } else if (FlagValue(argv[i], "--use_tls", &v)) {
      use_tls = v == "true" || v == "1";
    } else if (FlagValue(argv[i], "--callback", &v)) {
      callback = v == "true" || v == "1";
    } else if (FlagValue(argv[i], "--use_test_ca", &v)) {
      // The CA comes from --ca_file (there is no built-in test CA).
    } else if (FlagValue(argv[i], "--ca_file", &v)) {
      ca_file = v;
    } else {
      std::cerr << "unknown flag " << argv[i] << "\n";
      return 2;
    }
  }
  if (port <= 0 || test_case.empty()) {
    std::cerr << "need --server_port and --test_case\n";
    return 2;
  }

  const std::string target = host + ":" + std::to_string(port);
  std::shared_ptr<api::Channel> channel;
  if (use_tls) {
    api::SslCredentialsOptions options;
    if (!ca_file.empty() && !ReadFile(ca_file, &options.pem_root_certs)) {
      std::cerr << "cannot read --ca_file " << ca_file << "\n";
      return 2;
    }
    api::ChannelArguments args;
    if (!host_override.empty()) args.SetSslTargetNameOverride(host_override);
    channel =
        api::CreateCustomChannel(target, api::SslCredentials(options), args);
  } else {
    channel = api::CreateChannel(target, api::InsecureChannelCredentials());
  }

  Client client(channel);
  CallbackClient callback_client(channel);
  const std::map<std::string, std::function<void()>> cases =
      callback ? Cases(&callback_client) : Cases(&client);
  auto it = cases.find(test_case);
  if (it == cases.end()) {
    std::cerr << "unknown --test_case " << test_case << "\n";
    return 2;
  }
  try {
    it->second();
  } catch (const Failure& f) {
    std::cerr << test_case << " FAILED: " << f.what << "\n";
    return 1;
  }
  std::cout << test_case << " passed\n";
  return 0;
}
