#include "rpc/internal/message_compression.h"

#include <string>
#include <string_view>
#include <utility>

namespace rpc {
namespace internal {

namespace {

std::string Flatten(const transport::SliceBuffer& buffer) {
  std::string out;
  out.reserve(buffer.size());
  for (const transport::Slice& s : buffer) out.append(s.view());
  return out;
}

}  // namespace

absl::Status MessageCompressor::Frame(transport::SliceBuffer payload,
                                      transport::SliceBuffer* out) {
  if (!compression::ShouldCompress(encoding_, payload.size(), threshold_)) {
    return WriteMessage(std::move(payload), false, out);
  }
  if (!compressor_.has_value() || compressor_->encoding() != encoding_) {
    compressor_.emplace(encoding_);
  }
  const std::string flat = Flatten(payload);
  std::string compressed;
  if (absl::Status s = compressor_->Compress(flat, &compressed); !s.ok()) {
    return s;
  }
  ++compressed_messages_;
  // Copied once, behind its prefix (a small one into one exactly sized block).
  return WriteMessage(std::string_view(compressed), true, out);
}

absl::Status MessageDecompressor::Unpack(ReceivedMessage* message,
                                         transport::SliceBuffer* payload) {
  if (!message->compressed) {
    *payload = std::move(message->payload);
    return absl::OkStatus();
  }
  if (encoding_ == compression::Encoding::kIdentity) {
    return absl::InternalError("compressed message without grpc-encoding");
  }
  ++compressed_messages_;
  if (!decompressor_.has_value()) decompressor_.emplace(encoding_);
  const std::string flat = Flatten(message->payload);
  std::string out;
  if (absl::Status s = decompressor_->Decompress(flat, max_size_, &out);
      !s.ok()) {
    return s;
  }
  transport::SliceBuffer result;
  result.Append(out);
  *payload = std::move(result);
  return absl::OkStatus();
}

}  // namespace internal
}  // namespace rpc
