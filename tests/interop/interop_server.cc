// interop_server: grpc.testing.TestService on our stack, as grpc's
// doc/interop-test-descriptions.md specifies the server. Built a second time
// with -DINTEROP_GRPCPP against Debian's grpc++ (grpcpp_interop_server, the
// peer the acceptance test drives our client against): the two APIs have the
// same shapes, the few differences are marked.
//   interop_server [--port=N] [--use_tls --tls_cert=F --tls_key=F]
// --port=0 picks a free port; the server prints "listening on port N" and
// serves until SIGINT/SIGTERM.

#include <csignal>
#include <cstring>
#include <fstream>
#include <iostream>
#include <memory>
#include <sstream>
#include <string>
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

// Echoes the two interop metadata keys back: initial and trailing.
void EchoMetadata(api::ServerContext* ctx) {
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
    if (req->response_status().code() != 0) {
      return ToStatus(req->response_status());
    }
    if (req->response_size() < 0) {
      return api::Status(api::StatusCode::INVALID_ARGUMENT,
                         "negative response_size");
    }
    resp->mutable_payload()->set_type(req->response_type());
    resp->mutable_payload()->set_body(
        std::string(static_cast<size_t>(req->response_size()), '\0'));
    return api::Status::OK;
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
      StreamingOutputCallResponse r;
      r.mutable_payload()->set_body(
          std::string(static_cast<size_t>(p.size()), '\0'));
      if (!writer->Write(r)) {
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
        StreamingOutputCallResponse r;
        r.mutable_payload()->set_body(
            std::string(static_cast<size_t>(p.size()), '\0'));
        if (!stream->Write(r)) {
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
        StreamingOutputCallResponse out;
        out.mutable_payload()->set_body(
            std::string(static_cast<size_t>(p.size()), '\0'));
        if (!stream->Write(out)) {
          return api::Status(api::StatusCode::CANCELLED, "write failed");
        }
      }
    }
    return api::Status::OK;
  }
  // UnimplementedCall: the base class answers UNIMPLEMENTED.
};

using interop::FlagValue;
using interop::ReadFile;

}  // namespace

int main(int argc, char** argv) {
  int port = 0;
  bool use_tls = false;
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
  int selected_port = 0;
  api::ServerBuilder builder;
  builder.AddListeningPort("0.0.0.0:" + std::to_string(port), creds,
                           &selected_port);
  builder.RegisterService(&service);
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
