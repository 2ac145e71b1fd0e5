#include "rpc/client_stream.h"

#include <utility>

#include "google/protobuf/message_lite.h"
#include "rpc/client_callback.h"
#include "rpc/internal/client_call.h"
#include "rpc/wire/zero_copy_stream.h"
#include "transport/slice/slice.h"

namespace rpc {
namespace internal {

void ClientCallBase::StartCall(const std::shared_ptr<ClientCall>& call,
                               const std::shared_ptr<ChannelInterface>& channel,
                               ClientContext* ctx,
                               transport::SliceBuffer* first, bool end) {
  ctx->set_call(call, channel);
  if (!ctx->grpc_encoding_header_for_test().empty()) {
    call->set_grpc_encoding_header_for_test(
        ctx->grpc_encoding_header_for_test());
  }
  call->Start(first, end);
}

Status ClientCallBase::FinishSingleResponse(
    ClientContext* ctx, ClientCall* call,
    google::protobuf::MessageLite* response) {
  // One wait, for the status: the message (if any) is queued by then, so
  // Read does not block (a Read first would wake once for the message and
  // again for the trailers).
  Status status = ctx->FinishCall();
  transport::SliceBuffer payload;
  const bool got = call->Read(&payload);
  if (!status.ok()) return status;
  if (!got) return Status(StatusCode::INTERNAL, "no response message");
  if (!ParseFromSliceBuffer(payload, response)) {
    return Status(StatusCode::INTERNAL, "error parsing response message");
  }
  return status;
}

Status ClientCallBase::BlockingUnary(
    const std::shared_ptr<ChannelInterface>& channel, const std::string& method,
    ClientContext* ctx, const google::protobuf::MessageLite& request,
    google::protobuf::MessageLite* response) {
  transport::SliceBuffer payload;
  if (!SerializeToSliceBuffer(request, &payload)) {
    return Status(StatusCode::INTERNAL, "error serializing request");
  }
  std::shared_ptr<ClientCall> call = channel->CreateCall(method, ctx);
  call->set_single_response();
  StartCall(call, channel, ctx, &payload, /*end=*/true);
  return FinishSingleResponse(ctx, call.get(), response);
}

void ClientCallBase::AsyncUnary(
    const std::shared_ptr<ChannelInterface>& channel, const std::string& method,
    ClientContext* ctx, const google::protobuf::MessageLite& request,
    google::protobuf::MessageLite* response, std::function<void(Status)> done) {
  CallbackUnaryCall(channel, method, ctx, &request, response, std::move(done));
}

std::shared_ptr<ClientCall> ClientCallBase::NewCall(
    const std::shared_ptr<ChannelInterface>& channel, const std::string& method,
    ClientContext* ctx) {
  return channel->CreateCall(method, ctx);
}

void ClientCallBase::BindCall(const std::shared_ptr<ClientCall>& call,
                              ClientContext* ctx) {
  // The context does not keep the channel (the callback call does, until
  // after OnDone; releasing it on the loop thread is fine, channel.h).
  ctx->set_call(call, nullptr);
  if (!ctx->grpc_encoding_header_for_test().empty()) {
    call->set_grpc_encoding_header_for_test(
        ctx->grpc_encoding_header_for_test());
  }
}

ClientCallBase::ClientCallBase(const std::shared_ptr<ChannelInterface>& channel,
                               const std::string& method, ClientContext* ctx,
                               const google::protobuf::MessageLite* first,
                               bool end, bool single_response)
    : ctx_(ctx) {
  transport::SliceBuffer payload;
  if (first != nullptr) SerializeToSliceBuffer(*first, &payload);
  call_ = channel->CreateCall(method, ctx);
  if (single_response) call_->set_single_response();
  StartCall(call_, channel, ctx, first != nullptr ? &payload : nullptr, end);
}

ClientCallBase::~ClientCallBase() = default;

void ClientCallBase::WaitForInitialMetadata() { ctx_->FetchInitialMetadata(); }

bool ClientCallBase::Read(google::protobuf::MessageLite* msg) {
  transport::SliceBuffer payload;
  if (!call_->Read(&payload)) return false;
  if (!ParseFromSliceBuffer(payload, msg)) {
    call_->Cancel(Status(StatusCode::INTERNAL, "error parsing response"));
    return false;
  }
  return true;
}

bool ClientCallBase::Write(const google::protobuf::MessageLite& msg) {
  transport::SliceBuffer payload;
  if (!SerializeToSliceBuffer(msg, &payload)) return false;
  return call_->Write(std::move(payload), /*end=*/false);
}

void ClientCallBase::WritesDone() { call_->WritesDone(); }

Status ClientCallBase::Finish() { return ctx_->FinishCall(); }

Status ClientCallBase::FinishWithResponse(
    google::protobuf::MessageLite* response) {
  call_->WritesDone();
  return FinishSingleResponse(ctx_, call_.get(), response);
}

}  // namespace internal
}  // namespace rpc
