#include "tests/chaos/chaos_servers.h"

#include <grpcpp/grpcpp.h>

#include <chrono>
#include <string>
#include <utility>

#include "absl/time/clock.h"
#include "rpc/rpc.h"
#include "tests/chaos/chaos.grpc.pb.h"
#include "tests/chaos/chaos.rpc.pb.h"
#include "tests/chaos/chaos_messages.h"

namespace chaos {
namespace {

// What the handlers need from each library.
struct OurTypes {
  using Status = rpc::Status;
  using Code = rpc::StatusCode;
  static Status Ok() { return rpc::Status::OK; }
};
struct GrpcppTypes {
  using Status = grpc::Status;
  using Code = grpc::StatusCode;
  static Status Ok() { return grpc::Status::OK; }
};

// Sleeps `ms`, in slices, until the call is cancelled. False if it was.
template <typename Ctx>
bool Pause(Ctx* ctx, uint32_t ms) {
  const absl::Time until = absl::Now() + absl::Milliseconds(ms);
  while (absl::Now() < until) {
    if (ctx->IsCancelled()) return false;
    absl::SleepFor(std::min(absl::Milliseconds(2), until - absl::Now()));
  }
  return !ctx->IsCancelled();
}

// The four handlers, written once over the library's types.
template <typename T>
class Handlers {
 public:
  using Status = typename T::Status;
  using Code = typename T::Code;

  explicit Handlers(ChaosServer* server) : server_(server) {}

  template <typename Ctx>
  Status Unary(Ctx* ctx, const ChaosRequest& req, ChaosResponse* resp) {
    ++server_->calls;
    if (Status s = Check(req, req.call_id(), 0); !s.ok()) return s;
    if (!Pause(ctx, req.server_delay_ms())) return Cancelled();
    if (req.abort_after() != 0) return Aborted();
    Seal(resp, req.call_id(), 0, req.response_size());
    resp->set_received(1);
    resp->set_received_digest(ChaosFold(0, req.checksum()));
    return T::Ok();
  }

  template <typename Ctx, typename Reader>
  Status ClientStream(Ctx* ctx, Reader* reader, ChaosResponse* resp) {
    ++server_->calls;
    ChaosRequest first;
    ChaosRequest req;
    uint32_t n = 0;
    uint32_t digest = 0;
    while (reader->Read(&req)) {
      if (n == 0) first = req;
      if (Status s = Check(req, first.call_id(), n); !s.ok()) return s;
      digest = ChaosFold(digest, req.checksum());
      ++n;
      if (first.abort_after() != 0 && n == first.abort_after()) {
        return Aborted();
      }
      if (!Pause(ctx, first.server_delay_ms())) return Cancelled();
    }
    if (ctx->IsCancelled()) return Cancelled();
    Seal(resp, first.call_id(), 0, first.response_size());
    resp->set_received(n);
    resp->set_received_digest(digest);
    return T::Ok();
  }

  template <typename Ctx, typename Writer>
  Status ServerStream(Ctx* ctx, const ChaosRequest& req, Writer* writer) {
    ++server_->calls;
    if (Status s = Check(req, req.call_id(), 0); !s.ok()) return s;
    for (uint32_t i = 0; i < req.response_count(); ++i) {
      if (req.abort_after() != 0 && i + 1 == req.abort_after()) {
        return Aborted();
      }
      if (!Pause(ctx, req.server_delay_ms())) return Cancelled();
      ChaosResponse resp;
      Seal(&resp, req.call_id(), i, req.response_size());
      if (!writer->Write(resp)) return Cancelled();
    }
    return T::Ok();
  }

  template <typename Ctx, typename Stream>
  Status Bidi(Ctx* ctx, Stream* stream) {
    ++server_->calls;
    ChaosRequest first;
    ChaosRequest req;
    uint32_t n = 0;
    while (stream->Read(&req)) {
      if (n == 0) first = req;
      if (Status s = Check(req, first.call_id(), n); !s.ok()) return s;
      if (first.abort_after() != 0 && n + 1 == first.abort_after()) {
        return Aborted();
      }
      if (!Pause(ctx, first.server_delay_ms())) return Cancelled();
      ChaosResponse resp;
      Seal(&resp, first.call_id(), n, first.response_size());
      if (!stream->Write(resp)) return Cancelled();
      ++n;
    }
    return ctx->IsCancelled() ? Cancelled() : T::Ok();
  }

 private:
  Status Check(const ChaosRequest& req, uint64_t call_id, uint32_t seq) {
    std::string error = CheckMessage(req, call_id, seq);
    if (error.empty()) return T::Ok();
    ++server_->damaged_requests;
    return Status(Code::DATA_LOSS, "server: " + error);
  }
  static Status Aborted() { return Status(Code::ABORTED, "chaos: abort"); }
  static Status Cancelled() { return Status(Code::CANCELLED, "cancelled"); }

  ChaosServer* const server_;
};

class OurService final : public Chaos::Service {
 public:
  explicit OurService(ChaosServer* server) : h_(server) {}
  rpc::Status Unary(rpc::ServerContext* ctx, const ChaosRequest* req,
                    ChaosResponse* resp) override {
    return h_.Unary(ctx, *req, resp);
  }
  rpc::Status ClientStream(rpc::ServerContext* ctx,
                           rpc::ServerReader<ChaosRequest>* reader,
                           ChaosResponse* resp) override {
    return h_.ClientStream(ctx, reader, resp);
  }
  rpc::Status ServerStream(rpc::ServerContext* ctx, const ChaosRequest* req,
                           rpc::ServerWriter<ChaosResponse>* writer) override {
    return h_.ServerStream(ctx, *req, writer);
  }
  rpc::Status Bidi(
      rpc::ServerContext* ctx,
      rpc::ServerReaderWriter<ChaosResponse, ChaosRequest>* stream) override {
    return h_.Bidi(ctx, stream);
  }

 private:
  Handlers<OurTypes> h_;
};

class GrpcppService final : public grpcpeer::Chaos::Service {
 public:
  explicit GrpcppService(ChaosServer* server) : h_(server) {}
  grpc::Status Unary(grpc::ServerContext* ctx, const ChaosRequest* req,
                     ChaosResponse* resp) override {
    return h_.Unary(ctx, *req, resp);
  }
  grpc::Status ClientStream(grpc::ServerContext* ctx,
                            grpc::ServerReader<ChaosRequest>* reader,
                            ChaosResponse* resp) override {
    return h_.ClientStream(ctx, reader, resp);
  }
  grpc::Status ServerStream(
      grpc::ServerContext* ctx, const ChaosRequest* req,
      grpc::ServerWriter<ChaosResponse>* writer) override {
    return h_.ServerStream(ctx, *req, writer);
  }
  grpc::Status Bidi(
      grpc::ServerContext* ctx,
      grpc::ServerReaderWriter<ChaosResponse, ChaosRequest>* stream) override {
    return h_.Bidi(ctx, stream);
  }

 private:
  Handlers<GrpcppTypes> h_;
};

class OurServer final : public ChaosServer {
 public:
  OurServer() : service_(this) {}
  ~OurServer() override { Kill(); }
  ServerKind kind() const override { return ServerKind::kOurs; }
  int port() const override { return port_; }
  void Kill() override {
    if (server_ == nullptr) return;
    server_->Shutdown(absl::Now());
    server_->Wait();
    server_.reset();
    port_ = 0;
  }
  bool Restart() override {
    Kill();
    int port = 0;
    server_ = rpc::ServerBuilder()
                  .AddListeningPort("127.0.0.1:0",
                                    rpc::InsecureServerCredentials(), &port)
                  .RegisterService(&service_)
                  .SetWorkerThreads(4, 1024)
                  .BuildAndStart();
    port_ = server_ != nullptr ? port : 0;
    return port_ > 0;
  }

 private:
  OurService service_;
  std::unique_ptr<rpc::Server> server_;
  int port_ = 0;
};

class GrpcppServer final : public ChaosServer {
 public:
  GrpcppServer() : service_(this) {}
  ~GrpcppServer() override { Kill(); }
  ServerKind kind() const override { return ServerKind::kGrpcpp; }
  int port() const override { return port_; }
  void Kill() override {
    if (server_ == nullptr) return;
    server_->Shutdown(std::chrono::system_clock::now());
    server_->Wait();
    server_.reset();
    port_ = 0;
  }
  bool Restart() override {
    Kill();
    int port = 0;
    grpc::ServerBuilder builder;
    builder.AddListeningPort("127.0.0.1:0", grpc::InsecureServerCredentials(),
                             &port);
    builder.RegisterService(&service_);
    server_ = builder.BuildAndStart();
    port_ = server_ != nullptr ? port : 0;
    return port_ > 0;
  }

 private:
  GrpcppService service_;
  std::unique_ptr<grpc::Server> server_;
  int port_ = 0;
};

}  // namespace

const char* ServerKindName(ServerKind kind) {
  return kind == ServerKind::kOurs ? "ours" : "grpcpp";
}

std::unique_ptr<ChaosServer> StartChaosServer(ServerKind kind) {
  std::unique_ptr<ChaosServer> server;
  if (kind == ServerKind::kOurs) {
    server = std::make_unique<OurServer>();
  } else {
    server = std::make_unique<GrpcppServer>();
  }
  if (!server->Restart()) return nullptr;
  return server;
}

}  // namespace chaos
