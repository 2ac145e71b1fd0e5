// Server-side streams for the streaming handlers of generated services, in
// grpc++'s shapes (grpc::ServerReader, ServerWriter, ServerReaderWriter), and
// the runners that generated code uses to bridge a call to a typed handler.
//
//   rpc::Status RecordRoute(rpc::ServerContext* ctx,
//                           rpc::ServerReader<Point>* reader,
//                           RouteSummary* summary) override {
//     Point p;
//     while (reader->Read(&p)) ...;
//     return rpc::Status::OK;
//   }
//
// All of them are used from the handler's thread only. Read blocks for the
// next message and returns false at the end of the client's messages (or when
// the call is cancelled); Write blocks while the client reads slower than the
// handler writes (the flow-control bound) and returns false once the call is
// cancelled or over. A request that does not parse ends the call with
// INTERNAL, a response over the max send message size with
// RESOURCE_EXHAUSTED.

#ifndef RPC_SERVER_STREAM_H_
#define RPC_SERVER_STREAM_H_

#include <utility>

#include "rpc/internal/proto_utils.h"
#include "rpc/internal/server_call.h"
#include "rpc/server_context.h"
#include "rpc/wire/status.h"
#include "transport/slice/slice.h"

namespace rpc {

namespace internal {

template <typename R>
bool ServerRead(ServerContext* ctx, R* msg) {
  transport::SliceBuffer payload;
  if (!ctx->call()->Read(&payload)) return false;
  if (!Parse(payload, msg)) {
    ctx->call()->SetError(
        Status(StatusCode::INTERNAL, "error parsing request message"));
    return false;
  }
  return true;
}

template <typename W>
bool ServerWrite(ServerContext* ctx, const W& msg) {
  transport::SliceBuffer payload;
  if (!Serialize(msg, &payload)) {
    ctx->call()->SetError(
        Status(StatusCode::INTERNAL, "error serializing response message"));
    return false;
  }
  return ctx->call()->Write(std::move(payload),
                            ctx->mutable_initial_metadata());
}

}  // namespace internal

template <typename R>
class ServerReader {
 public:
  explicit ServerReader(ServerContext* ctx) : ctx_(ctx) {}
  // Sends the response headers now (with the initial metadata added so far).
  void SendInitialMetadata() {
    ctx_->call()->SendInitialMetadata(ctx_->mutable_initial_metadata());
  }
  bool Read(R* msg) { return internal::ServerRead(ctx_, msg); }

 private:
  ServerContext* const ctx_;
};

template <typename W>
class ServerWriter {
 public:
  explicit ServerWriter(ServerContext* ctx) : ctx_(ctx) {}
  void SendInitialMetadata() {
    ctx_->call()->SendInitialMetadata(ctx_->mutable_initial_metadata());
  }
  bool Write(const W& msg) { return internal::ServerWrite(ctx_, msg); }

 private:
  ServerContext* const ctx_;
};

template <typename W, typename R>
class ServerReaderWriter {
 public:
  explicit ServerReaderWriter(ServerContext* ctx) : ctx_(ctx) {}
  void SendInitialMetadata() {
    ctx_->call()->SendInitialMetadata(ctx_->mutable_initial_metadata());
  }
  bool Read(R* msg) { return internal::ServerRead(ctx_, msg); }
  bool Write(const W& msg) { return internal::ServerWrite(ctx_, msg); }

 private:
  ServerContext* const ctx_;
};

namespace internal {

// Reads the one request of a unary or server-streaming call.
template <typename Req>
Status ReadSingleRequest(ServerContext* ctx, Req* req) {
  transport::SliceBuffer payload;
  if (!ctx->call()->Read(&payload)) {
    return ctx->IsCancelled()
               ? Status(StatusCode::CANCELLED, "Cancelled")
               : Status(StatusCode::INTERNAL, "missing request message");
  }
  if (!Parse(payload, req)) {
    return Status(StatusCode::INTERNAL, "error parsing request message");
  }
  return Status();
}

// `fn(ServerContext*, const Req*, Resp*) -> Status`.
template <typename Req, typename Resp, typename F>
Status RunUnary(ServerContext* ctx, F&& fn) {
  Req req;
  Status s = ReadSingleRequest(ctx, &req);
  if (!s.ok()) return s;
  Resp resp;
  s = fn(ctx, &req, &resp);
  if (s.ok()) ServerWrite(ctx, resp);
  return s;
}

// `fn(ServerContext*, const Req*, ServerWriter<Resp>*) -> Status`.
template <typename Req, typename Resp, typename F>
Status RunServerStreaming(ServerContext* ctx, F&& fn) {
  Req req;
  Status s = ReadSingleRequest(ctx, &req);
  if (!s.ok()) return s;
  ServerWriter<Resp> writer(ctx);
  return fn(ctx, &req, &writer);
}

// `fn(ServerContext*, ServerReader<Req>*, Resp*) -> Status`.
template <typename Req, typename Resp, typename F>
Status RunClientStreaming(ServerContext* ctx, F&& fn) {
  ServerReader<Req> reader(ctx);
  Resp resp;
  Status s = fn(ctx, &reader, &resp);
  if (s.ok()) ServerWrite(ctx, resp);
  return s;
}

// `fn(ServerContext*, ServerReaderWriter<Resp, Req>*) -> Status`.
template <typename Req, typename Resp, typename F>
Status RunBidiStreaming(ServerContext* ctx, F&& fn) {
  ServerReaderWriter<Resp, Req> stream(ctx);
  return fn(ctx, &stream);
}

// The asynchronous unary form (CallbackService): `fn(ServerContext*, const
// Req*, Resp*, std::function<void(Status)> done)` returns at once; `done`
// (called once, from any thread) sends *resp (when OK) and the status. The
// context, request and response live until then.
template <typename Req, typename Resp, typename F>
void RunAsyncUnary(std::shared_ptr<ServerCall> call, F&& fn) {
  struct State {
    explicit State(std::shared_ptr<ServerCall> c) : ctx(std::move(c)) {}
    ServerContext ctx;
    Req req;
    Resp resp;
  };
  auto* state = new State(std::move(call));
  auto finish = [state](const Status& status) {
    if (status.ok()) ServerWrite(&state->ctx, state->resp);
    state->ctx.call()->Finish(status, state->ctx.mutable_initial_metadata(),
                              state->ctx.mutable_trailing_metadata());
    delete state;
  };
  Status s = ReadSingleRequest(&state->ctx, &state->req);
  if (!s.ok()) {
    finish(s);
    return;
  }
  fn(&state->ctx, &state->req, &state->resp,
     std::function<void(Status)>(std::move(finish)));
}

}  // namespace internal
}  // namespace rpc

#endif  // RPC_SERVER_STREAM_H_
