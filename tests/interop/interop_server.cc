// interop_server: grpc.testing.TestService on our stack, as grpc's
// doc/interop-test-descriptions.md specifies the server. Built a second time
// with -DINTEROP_GRPCPP against Debian's grpc++ (grpcpp_interop_server, the
// peer the acceptance test drives our client against): the two APIs have the
// same shapes, the few differences are marked.
//   interop_server [--port=N] [--use_tls --tls_cert=F --tls_key=F]
//                  [--callback]
// --port=0 picks a free port; the server prints "listening on port N" and
// serves until SIGINT/SIGTERM. --callback serves the same behaviour through
// the callback API (TestService::CallbackService and its reactors; the same
// source for both stacks).

#include <csignal>
#include <cstring>
#include <fstream>
#include <iostream>
#include <memory>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "absl/time/clock.h"
#include "absl/time/time.h"
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

// Echoes the two interop metadata keys back: initial and trailing. (A
// grpc++ CallbackServerContext is no ServerContext: hence the template.)
template <typename Context>
void EchoMetadata(Context* ctx) {
#ifdef INTEROP_GRPCPP
  const auto& md = ctx->client_metadata();
  auto it = md.find(kEchoInitial);
  if (it != md.end()) {
    ctx->AddInitialMetadata(kEchoInitial,
                            std::string(it->second.data(), it->second.size()));
  }
  it = md.find(kEchoTrailing);
  if (it != md.end()) {
    ctx->AddTrailingMetadata(kEchoTrailing,
                             std::string(it->second.data(), it->second.size()));
  }
#else
  if (auto v = ctx->client_metadata().Get(kEchoInitial)) {
    ctx->AddInitialMetadata(kEchoInitial, std::string(*v));
  }
  if (auto v = ctx->client_metadata().Get(kEchoTrailing)) {
    ctx->AddTrailingMetadata(kEchoTrailing, std::string(*v));
  }
#endif
}

api::Status ToStatus(const grpc::testing::EchoStatus& s) {
  return api::Status(static_cast<api::StatusCode>(s.code()), s.message());
}

api::Status UnaryAnswer(const SimpleRequest& req, SimpleResponse* resp) {
  if (req.response_status().code() != 0) {
    return ToStatus(req.response_status());
  }
  if (req.response_size() < 0) {
    return api::Status(api::StatusCode::INVALID_ARGUMENT,
                       "negative response_size");
  }
  resp->mutable_payload()->set_type(req.response_type());
  resp->mutable_payload()->set_body(
      std::string(static_cast<size_t>(req.response_size()), '\0'));
  return api::Status::OK;
}

StreamingOutputCallResponse Response(
    const grpc::testing::ResponseParameters& p) {
  StreamingOutputCallResponse r;
  r.mutable_payload()->set_body(
      std::string(static_cast<size_t>(p.size()), '\0'));
  return r;
}

class TestServiceImpl final : public grpc::testing::TestService::Service {
 public:
  api::Status EmptyCall(api::ServerContext* ctx, const Empty*,
                        Empty*) override {
    EchoMetadata(ctx);
    return api::Status::OK;
  }

  api::Status UnaryCall(api::ServerContext* ctx, const SimpleRequest* req,
                        SimpleResponse* resp) override {
    EchoMetadata(ctx);
    return UnaryAnswer(*req, resp);
  }

  api::Status CacheableUnaryCall(api::ServerContext* ctx,
                                 const SimpleRequest* req,
                                 SimpleResponse* resp) override {
    return UnaryCall(ctx, req, resp);
  }

  api::Status StreamingOutputCall(
      api::ServerContext* ctx, const StreamingOutputCallRequest* req,
      api::ServerWriter<StreamingOutputCallResponse>* writer) override {
    EchoMetadata(ctx);
    for (const auto& p : req->response_parameters()) {
      if (p.interval_us() > 0)
        absl::SleepFor(absl::Microseconds(p.interval_us()));
      if (!writer->Write(Response(p))) {
        return api::Status(api::StatusCode::CANCELLED, "write failed");
      }
    }
    if (req->response_status().code() != 0) {
      return ToStatus(req->response_status());
    }
    return api::Status::OK;
  }

  api::Status StreamingInputCall(
      api::ServerContext* ctx,
      api::ServerReader<StreamingInputCallRequest>* reader,
      StreamingInputCallResponse* resp) override {
    EchoMetadata(ctx);
    StreamingInputCallRequest req;
    int64_t total = 0;
    while (reader->Read(&req)) total += req.payload().body().size();
    if (ctx->IsCancelled()) {
      return api::Status(api::StatusCode::CANCELLED, "cancelled");
    }
    resp->set_aggregated_payload_size(static_cast<int32_t>(total));
    return api::Status::OK;
  }

  api::Status FullDuplexCall(
      api::ServerContext* ctx,
      api::ServerReaderWriter<StreamingOutputCallResponse,
                              StreamingOutputCallRequest>* stream) override {
    EchoMetadata(ctx);
    StreamingOutputCallRequest req;
    while (stream->Read(&req)) {
      if (req.response_status().code() != 0) {
        return ToStatus(req.response_status());
      }
      for (const auto& p : req.response_parameters()) {
        if (p.interval_us() > 0) {
          absl::SleepFor(absl::Microseconds(p.interval_us()));
        }
        if (!stream->Write(Response(p))) {
          return api::Status(api::StatusCode::CANCELLED, "write failed");
        }
      }
    }
    if (ctx->IsCancelled()) {
      return api::Status(api::StatusCode::CANCELLED, "cancelled");
    }
    return api::Status::OK;
  }

  api::Status HalfDuplexCall(
      api::ServerContext* ctx,
      api::ServerReaderWriter<StreamingOutputCallResponse,
                              StreamingOutputCallRequest>* stream) override {
    EchoMetadata(ctx);
    std::vector<StreamingOutputCallRequest> requests;
    StreamingOutputCallRequest req;
    while (stream->Read(&req)) requests.push_back(req);
    for (const auto& r : requests) {
      for (const auto& p : r.response_parameters()) {
        if (!stream->Write(Response(p))) {
          return api::Status(api::StatusCode::CANCELLED, "write failed");
        }
      }
    }
    return api::Status::OK;
  }
  // UnimplementedCall: the base class answers UNIMPLEMENTED.
};

// The same service on the callback API. Reactions never block: a response
// with an interval is written from a thread of its own after it.
class CallbackTestServiceImpl final
    : public grpc::testing::TestService::CallbackService {
 public:
  api::ServerUnaryReactor* EmptyCall(api::CallbackServerContext* ctx,
                                     const Empty*, Empty*) override {
    EchoMetadata(ctx);
    api::ServerUnaryReactor* reactor = ctx->DefaultReactor();
    reactor->Finish(api::Status::OK);
    return reactor;
  }

  api::ServerUnaryReactor* UnaryCall(api::CallbackServerContext* ctx,
                                     const SimpleRequest* req,
                                     SimpleResponse* resp) override {
    EchoMetadata(ctx);
    api::ServerUnaryReactor* reactor = ctx->DefaultReactor();
    reactor->Finish(UnaryAnswer(*req, resp));
    return reactor;
  }

  api::ServerUnaryReactor* CacheableUnaryCall(api::CallbackServerContext* ctx,
                                              const SimpleRequest* req,
                                              SimpleResponse* resp) override {
    return UnaryCall(ctx, req, resp);
  }

  // Writes the responses of `params` one after the other (Start, then Next
  // until it returns false); `Reactor` is a write or bidi reactor.
  template <typename Reactor>
  class ResponseWriter {
   public:
    explicit ResponseWriter(Reactor* reactor) : reactor_(reactor) {}
    void Start(std::vector<grpc::testing::ResponseParameters> params) {
      params_ = std::move(params);
      next_ = 0;
    }
    // From OnWriteDone(true): the next one; false when all were written.
    bool Next() {
      if (next_ == params_.size()) return false;
      const grpc::testing::ResponseParameters& p = params_[next_++];
      response_ = Response(p);
      if (p.interval_us() > 0) {
        const int64_t us = p.interval_us();
        std::thread([this, us] {
          absl::SleepFor(absl::Microseconds(us));
          reactor_->StartWrite(&response_);
        }).detach();
      } else {
        reactor_->StartWrite(&response_);
      }
      return true;
    }

   private:
    Reactor* const reactor_;
    std::vector<grpc::testing::ResponseParameters> params_;
    size_t next_ = 0;
    StreamingOutputCallResponse response_;
  };

  class OutputWriter final
      : public api::ServerWriteReactor<StreamingOutputCallResponse> {
   public:
    explicit OutputWriter(const StreamingOutputCallRequest* req)
        : req_(req), writer_(this) {
      writer_.Start({req->response_parameters().begin(),
                     req->response_parameters().end()});
      if (!writer_.Next()) FinishWithStatus();
    }
    void OnWriteDone(bool ok) override {
      if (!ok) {
        Finish(api::Status(api::StatusCode::CANCELLED, "write failed"));
        return;
      }
      if (!writer_.Next()) FinishWithStatus();
    }
    void OnDone() override { delete this; }

   private:
    void FinishWithStatus() {
      Finish(req_->response_status().code() != 0
                 ? ToStatus(req_->response_status())
                 : api::Status::OK);
    }

    const StreamingOutputCallRequest* const req_;
    ResponseWriter<OutputWriter> writer_;
  };

  api::ServerWriteReactor<StreamingOutputCallResponse>* StreamingOutputCall(
      api::CallbackServerContext* ctx,
      const StreamingOutputCallRequest* req) override {
    EchoMetadata(ctx);
    return new OutputWriter(req);
  }

  class InputReader final
      : public api::ServerReadReactor<StreamingInputCallRequest> {
   public:
    InputReader(api::CallbackServerContext* ctx,
                StreamingInputCallResponse* resp)
        : ctx_(ctx), resp_(resp) {
      StartRead(&req_);
    }
    void OnReadDone(bool ok) override {
      if (ok) {
        total_ += req_.payload().body().size();
        StartRead(&req_);
        return;
      }
      if (ctx_->IsCancelled()) {
        Finish(api::Status(api::StatusCode::CANCELLED, "cancelled"));
        return;
      }
      resp_->set_aggregated_payload_size(static_cast<int32_t>(total_));
      Finish(api::Status::OK);
    }
    void OnDone() override { delete this; }

   private:
    api::CallbackServerContext* const ctx_;
    StreamingInputCallResponse* const resp_;
    StreamingInputCallRequest req_;
    int64_t total_ = 0;
  };

  api::ServerReadReactor<StreamingInputCallRequest>* StreamingInputCall(
      api::CallbackServerContext* ctx,
      StreamingInputCallResponse* resp) override {
    EchoMetadata(ctx);
    return new InputReader(ctx, resp);
  }

  // FullDuplexCall answers each request as it comes; HalfDuplexCall (`half`)
  // answers them all after the client half-closed.
  class Duplex final
      : public api::ServerBidiReactor<StreamingOutputCallRequest,
                                      StreamingOutputCallResponse> {
   public:
    Duplex(api::CallbackServerContext* ctx, bool half)
        : ctx_(ctx), half_(half), writer_(this) {
      StartRead(&req_);
    }
    void OnReadDone(bool ok) override {
      if (!ok) {
        if (ctx_->IsCancelled()) {
          Finish(api::Status(api::StatusCode::CANCELLED, "cancelled"));
          return;
        }
        if (!half_) {
          Finish(api::Status::OK);
          return;
        }
        reading_done_ = true;
        writer_.Start(std::move(pending_));
        if (!writer_.Next()) Finish(api::Status::OK);
        return;
      }
      if (half_) {
        pending_.insert(pending_.end(), req_.response_parameters().begin(),
                        req_.response_parameters().end());
        StartRead(&req_);
        return;
      }
      if (req_.response_status().code() != 0) {
        Finish(ToStatus(req_.response_status()));
        return;
      }
      writer_.Start({req_.response_parameters().begin(),
                     req_.response_parameters().end()});
      if (!writer_.Next()) StartRead(&req_);
    }
    void OnWriteDone(bool ok) override {
      if (!ok) {
        Finish(api::Status(api::StatusCode::CANCELLED, "write failed"));
        return;
      }
      if (writer_.Next()) return;
      if (reading_done_) {
        Finish(api::Status::OK);
      } else {
        StartRead(&req_);
      }
    }
    void OnDone() override { delete this; }

   private:
    api::CallbackServerContext* const ctx_;
    const bool half_;
    StreamingOutputCallRequest req_;
    std::vector<grpc::testing::ResponseParameters> pending_;
    bool reading_done_ = false;
    ResponseWriter<Duplex> writer_;
  };

  api::ServerBidiReactor<StreamingOutputCallRequest,
                         StreamingOutputCallResponse>*
  FullDuplexCall(api::CallbackServerContext* ctx) override {
    EchoMetadata(ctx);
    return new Duplex(ctx, false);
  }

  api::ServerBidiReactor<StreamingOutputCallRequest,
                         StreamingOutputCallResponse>*
  HalfDuplexCall(api::CallbackServerContext* ctx) override {
    EchoMetadata(ctx);
    return new Duplex(ctx, true);
  }
  // UnimplementedCall: the base class answers UNIMPLEMENTED.
};

using interop::FlagValue;
using interop::ReadFile;

}  // namespace

int main(int argc, char** argv) {
  int port = 0;
  bool use_tls = false;
  bool callback = false;
  std::string tls_cert, tls_key;
  for (int i = 1; i < argc; ++i) {
    std::string v;
    if (FlagValue(argv[i], "--port", &v)) {
      port = std::atoi(v.c_str());
    } else if (FlagValue(argv[i], "--use_tls", &v)) {
      use_tls = v == "true" || v == "1";
    } else if (FlagValue(argv[i], "--tls_cert", &v)) {
      tls_cert = v;
    } else if (FlagValue(argv[i], "--tls_key", &v)) {
      tls_key = v;
    } else if (std::strcmp(argv[i], "--callback") == 0) {
      callback = true;
    } else {
      std::cerr << "unknown flag " << argv[i] << "\n";
      return 2;
    }
  }
  std::shared_ptr<api::ServerCredentials> creds =
      api::InsecureServerCredentials();
  if (use_tls) {
    api::SslServerCredentialsOptions::PemKeyCertPair pair;
    if (tls_cert.empty() || tls_key.empty() ||
        !ReadFile(tls_cert, &pair.cert_chain) ||
        !ReadFile(tls_key, &pair.private_key)) {
      std::cerr << "--use_tls needs readable --tls_cert and --tls_key\n";
      return 2;
    }
    api::SslServerCredentialsOptions options;
    options.pem_key_cert_pairs.push_back(pair);
    creds = api::SslServerCredentials(options);
  }

  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGINT);
  sigaddset(&signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);

  TestServiceImpl service;
  CallbackTestServiceImpl callback_service;
  int selected_port = 0;
  api::ServerBuilder builder;
  builder.AddListeningPort("0.0.0.0:" + std::to_string(port), creds,
                           &selected_port);
  if (callback) {
    builder.RegisterService(&callback_service);
  } else {
    builder.RegisterService(&service);
  }
  std::unique_ptr<api::Server> server = builder.BuildAndStart();
  if (server == nullptr) {
    std::cerr << "cannot listen on port " << port << "\n";
    return 1;
  }
  std::cout << "listening on port " << selected_port << std::endl;
  int sig = 0;
  sigwait(&signals, &sig);
#ifdef INTEROP_GRPCPP
  server->Shutdown(std::chrono::system_clock::now() + std::chrono::seconds(2));
#else
  server->Shutdown(absl::Now() + absl::Seconds(2));
#endif
  server->Wait();
  return 0;
}
