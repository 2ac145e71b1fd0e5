// Serialization of protobuf messages to and from call payloads.

#ifndef RPC_INTERNAL_PROTO_UTILS_H_
#define RPC_INTERNAL_PROTO_UTILS_H_

#include "google/protobuf/message_lite.h"
#include "rpc/wire/zero_copy_stream.h"
#include "transport/slice/slice.h"

namespace rpc {
namespace internal {

// False when the message cannot be serialized (over 2 GiB).
inline bool Serialize(const google::protobuf::MessageLite& message,
                      transport::SliceBuffer* out) {
  return SerializeToSliceBuffer(message, out);
}

// False on malformed input.
inline bool Parse(const transport::SliceBuffer& in,
                  google::protobuf::MessageLite* message) {
  return ParseFromSliceBuffer(in, message);
}

}  // namespace internal
}  // namespace rpc

#endif  // RPC_INTERNAL_PROTO_UTILS_H_
