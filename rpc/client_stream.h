// Client-side calls for generated stubs, in grpc++'s shapes: the blocking
// unary call, and grpc::ClientReader, ClientWriter, ClientReaderWriter.
//
//   rpc::ClientContext ctx;
//   std::unique_ptr<rpc::ClientReader<Feature>> reader =
//       stub->ListFeatures(&ctx, rect);
//   Feature f;
//   while (reader->Read(&f)) ...;
//   rpc::Status s = reader->Finish();
//
// A stream object is used by one thread (ClientReaderWriter: one reader and
// one writer thread may use it at once). Read returns false at the end of the
// server's messages; Finish then returns the status. Write returns false once
// the call is over (Finish tells why) and blocks while the server reads
// slower than we write. A response that does not parse ends the call with
// INTERNAL; a request over the max send message size with RESOURCE_EXHAUSTED.

#ifndef RPC_CLIENT_STREAM_H_
#define RPC_CLIENT_STREAM_H_

#include <functional>
#include <memory>
#include <string>
#include <utility>

#include "rpc/channel.h"
#include "rpc/client_context.h"
#include "rpc/internal/client_call.h"
#include "rpc/internal/proto_utils.h"
#include "rpc/wire/status.h"
#include "transport/slice/slice.h"

namespace rpc {

namespace internal {

// Creates the call for `ctx` and starts it, with `first` as the first message
// (nullptr: none; moved from) and `end` to end the requests.
inline std::shared_ptr<ClientCall> StartCall(
    const std::shared_ptr<Channel>& channel, const std::string& path,
    ClientContext* ctx, transport::SliceBuffer* first, bool end) {
  std::shared_ptr<ClientCall> call =
      channel->CreateCall(path, ctx->deadline(), ctx->send_metadata(),
                          ctx->compression_algorithm());
  ctx->set_call(call, channel);
  if (!ctx->grpc_encoding_header_for_test().empty()) {
    call->set_grpc_encoding_header_for_test(
        ctx->grpc_encoding_header_for_test());
  }
  call->Start(first, end);
  return call;
}

template <typename R>
bool ClientRead(ClientCall* call, R* msg) {
  transport::SliceBuffer payload;
  if (!call->Read(&payload)) return false;
  if (!Parse(payload, msg)) {
    call->Cancel(Status(StatusCode::INTERNAL, "error parsing response"));
    return false;
  }
  return true;
}

template <typename W>
bool ClientWrite(ClientCall* call, const W& msg, bool end) {
  transport::SliceBuffer payload;
  if (!Serialize(msg, &payload)) return false;
  return call->Write(std::move(payload), end);
}

// Reads the single response of a unary or client-streaming call, then the
// status.
template <typename R>
Status FinishSingleResponse(ClientContext* ctx, ClientCall* call, R* response) {
  transport::SliceBuffer payload;
  const bool got = call->Read(&payload);
  Status status = ctx->FinishCall();
  if (!status.ok()) return status;
  if (!got) return Status(StatusCode::INTERNAL, "no response message");
  if (!Parse(payload, response)) {
    return Status(StatusCode::INTERNAL, "error parsing response message");
  }
  return status;
}

}  // namespace internal

// A blocking unary call (what generated Stub methods do).
template <typename Req, typename Resp>
Status BlockingUnaryCall(const std::shared_ptr<Channel>& channel,
                         const std::string& path, ClientContext* ctx,
                         const Req& request, Resp* response) {
  transport::SliceBuffer payload;
  if (!internal::Serialize(request, &payload)) {
    return Status(StatusCode::INTERNAL, "error serializing request");
  }
  std::shared_ptr<internal::ClientCall> call =
      internal::StartCall(channel, path, ctx, &payload, /*end=*/true);
  return internal::FinishSingleResponse(ctx, call.get(), response);
}

// An asynchronous unary call (what generated Stub::Async methods do): returns
// at once; `done(status)` runs on the channel's loop thread when the call
// ends, with *response filled when the status is OK. `done` must not block.
// `ctx`, `response` and the channel must stay alive until `done` ran.
template <typename Req, typename Resp>
void AsyncUnaryCall(const std::shared_ptr<Channel>& channel,
                    const std::string& path, ClientContext* ctx,
                    const Req& request, Resp* response,
                    std::function<void(Status)> done) {
  transport::SliceBuffer payload;
  if (!internal::Serialize(request, &payload)) {
    done(Status(StatusCode::INTERNAL, "error serializing request"));
    return;
  }
  std::shared_ptr<internal::ClientCall> call =
      channel->CreateCall(path, ctx->deadline(), ctx->send_metadata(),
                          ctx->compression_algorithm());
  internal::ClientCall* raw = call.get();
  call->SetOnDone([raw, ctx, response, done = std::move(done)] {
    transport::SliceBuffer message;
    const bool got = raw->Read(&message);  // Does not block: the call ended.
    Status status = ctx->FinishCall();
    if (status.ok() && !got) {
      status = Status(StatusCode::INTERNAL, "no response message");
    } else if (status.ok() && !internal::Parse(message, response)) {
      status = Status(StatusCode::INTERNAL, "error parsing response message");
    }
    done(std::move(status));
  });
  // The context does not keep the channel (the caller does, until `done`);
  // dropping its last reference inside `done` is fine (channel.h).
  ctx->set_call(call, nullptr);
  call->Start(&payload, /*end=*/true);
}

template <typename R>
class ClientReader {
 public:
  // Starts a server-streaming call with its one request.
  template <typename Req>
  ClientReader(const std::shared_ptr<Channel>& channel, const std::string& path,
               ClientContext* ctx, const Req& request)
      : ctx_(ctx) {
    transport::SliceBuffer payload;
    internal::Serialize(request, &payload);
    call_ = internal::StartCall(channel, path, ctx, &payload, /*end=*/true);
  }
  // Blocks until the response headers arrived (GetServerInitialMetadata).
  void WaitForInitialMetadata() { ctx_->FetchInitialMetadata(); }
  bool Read(R* msg) { return internal::ClientRead(call_.get(), msg); }
  Status Finish() { return ctx_->FinishCall(); }

 private:
  ClientContext* const ctx_;
  std::shared_ptr<internal::ClientCall> call_;
};

template <typename W>
class ClientWriter {
 public:
  // Starts a client-streaming call; Finish stores the response in *response.
  template <typename Resp>
  ClientWriter(const std::shared_ptr<Channel>& channel, const std::string& path,
               ClientContext* ctx, Resp* response)
      : ctx_(ctx), finish_([this, response] {
          return internal::FinishSingleResponse(ctx_, call_.get(), response);
        }) {
    call_ = internal::StartCall(channel, path, ctx, nullptr, /*end=*/false);
  }
  void WaitForInitialMetadata() { ctx_->FetchInitialMetadata(); }
  bool Write(const W& msg) {
    return internal::ClientWrite(call_.get(), msg, false);
  }
  bool WritesDone() {
    call_->WritesDone();
    return true;
  }
  // Ends the requests if not yet done, then waits for the response and the
  // status.
  Status Finish() {
    call_->WritesDone();
    return finish_();
  }

 private:
  ClientContext* const ctx_;
  std::function<Status()> finish_;
  std::shared_ptr<internal::ClientCall> call_;
};

template <typename W, typename R>
class ClientReaderWriter {
 public:
  ClientReaderWriter(const std::shared_ptr<Channel>& channel,
                     const std::string& path, ClientContext* ctx)
      : ctx_(ctx) {
    call_ = internal::StartCall(channel, path, ctx, nullptr, /*end=*/false);
  }
  void WaitForInitialMetadata() { ctx_->FetchInitialMetadata(); }
  bool Write(const W& msg) {
    return internal::ClientWrite(call_.get(), msg, false);
  }
  bool WritesDone() {
    call_->WritesDone();
    return true;
  }
  bool Read(R* msg) { return internal::ClientRead(call_.get(), msg); }
  Status Finish() { return ctx_->FinishCall(); }

 private:
  ClientContext* const ctx_;
  std::shared_ptr<internal::ClientCall> call_;
};

}  // namespace rpc

#endif  // RPC_CLIENT_STREAM_H_
