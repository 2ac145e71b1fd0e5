// Per-message compression for one call: frames an outgoing message (compressed
// with the call's Compressor when the call's encoding is not identity and the
// message reaches the threshold) and unpacks an incoming one (decompressed
// with the call's Decompressor, bounded by the max receive message size).

#ifndef RPC_INTERNAL_MESSAGE_COMPRESSION_H_
#define RPC_INTERNAL_MESSAGE_COMPRESSION_H_

#include <atomic>
#include <cstddef>
#include <optional>

#include "absl/status/status.h"
#include "rpc/compression/codec.h"
#include "rpc/compression/encoding.h"
#include "rpc/wire/message_framer.h"
#include "transport/slice/slice.h"

namespace rpc {
namespace internal {

// What we decode (and advertise in grpc-accept-encoding): all four.
inline constexpr compression::EncodingSet kSupportedEncodings =
    compression::EncodingSet::All();

// One direction's compressor; the codec context lives as long as the call.
class MessageCompressor {
 public:
  MessageCompressor(compression::Encoding encoding, size_t threshold)
      : encoding_(encoding), threshold_(threshold) {}

  compression::Encoding encoding() const { return encoding_; }
  // Before the first message only.
  void set_encoding(compression::Encoding encoding) { encoding_ = encoding; }

  // Appends the framed message (prefix + payload) to *out.
  absl::Status Frame(transport::SliceBuffer payload,
                     transport::SliceBuffer* out);

  // For tests: messages sent with the compressed flag.
  size_t compressed_messages() const { return compressed_messages_.load(); }

 private:
  compression::Encoding encoding_;
  size_t threshold_;
  std::optional<compression::Compressor> compressor_;
  std::atomic<size_t> compressed_messages_{0};
};

class MessageDecompressor {
 public:
  explicit MessageDecompressor(size_t max_size) : max_size_(max_size) {}

  // The encoding the peer's grpc-encoding named (identity when absent).
  void set_encoding(compression::Encoding encoding) { encoding_ = encoding; }
  compression::Encoding encoding() const { return encoding_; }

  // The message's payload, decompressed when its flag is set. INTERNAL for a
  // compressed flag on an identity call or corrupt data; RESOURCE_EXHAUSTED
  // past the max receive message size.
  absl::Status Unpack(ReceivedMessage* message,
                      transport::SliceBuffer* payload);

  // For tests: messages received with the compressed flag (any thread).
  size_t compressed_messages() const { return compressed_messages_.load(); }

 private:
  std::atomic<size_t> compressed_messages_{0};
  const size_t max_size_;
  compression::Encoding encoding_ = compression::Encoding::kIdentity;
  std::optional<compression::Decompressor> decompressor_;
};

}  // namespace internal
}  // namespace rpc

#endif  // RPC_INTERNAL_MESSAGE_COMPRESSION_H_
