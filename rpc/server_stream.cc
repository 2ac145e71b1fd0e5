#include "rpc/server_stream.h"

#include <utility>

#include "google/protobuf/message_lite.h"
#include "rpc/internal/server_call.h"
#include "rpc/wire/zero_copy_stream.h"
#include "transport/slice/slice.h"

namespace rpc {
namespace internal {

Status ServerCallBase::ReadSingleRequest(
    ServerContext* ctx, google::protobuf::MessageLite* request) {
  transport::SliceBuffer payload;
  if (!ctx->call()->Read(&payload)) {
    return ctx->IsCancelled()
               ? Status(StatusCode::CANCELLED, "Cancelled")
               : Status(StatusCode::INTERNAL, "missing request message");
  }
  if (!ParseFromSliceBuffer(payload, request)) {
    return Status(StatusCode::INTERNAL, "error parsing request message");
  }
  return Status();
}

bool ServerCallBase::WriteResponse(
    ServerContext* ctx, const google::protobuf::MessageLite& response) {
  transport::SliceBuffer payload;
  if (!SerializeToSliceBuffer(response, &payload)) {
    ctx->call()->SetError(
        Status(StatusCode::INTERNAL, "error serializing response message"));
    return false;
  }
  return ctx->call()->Write(std::move(payload),
                            ctx->mutable_initial_metadata());
}

void ServerCallBase::SendInitialMetadata() {
  ctx_->call()->SendInitialMetadata(ctx_->mutable_initial_metadata());
}

bool ServerCallBase::Read(google::protobuf::MessageLite* msg) {
  transport::SliceBuffer payload;
  if (!ctx_->call()->Read(&payload)) return false;
  if (!ParseFromSliceBuffer(payload, msg)) {
    ctx_->call()->SetError(
        Status(StatusCode::INTERNAL, "error parsing request message"));
    return false;
  }
  return true;
}

}  // namespace internal
}  // namespace rpc
