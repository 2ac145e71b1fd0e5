// Protobuf over SliceBuffers, without intermediate copies: received messages
// are parsed straight from the DATA slices the deframer hands out, and
// outgoing messages are serialized once, into the output chain.
//
//   transport::SliceBuffer out;
//   rpc::SerializeToSliceBuffer(request, &out);        // appends
//   ...
//   if (!rpc::ParseFromSliceBuffer(msg.payload, &reply)) -> INTERNAL
//
// SliceBufferInputStream and SliceBufferOutputStream are the
// google::protobuf::io zero-copy streams underneath, for callers that drive a
// CodedInputStream/CodedOutputStream themselves. Both borrow their buffer:
// keep it alive, and leave it alone, while the stream lives.
//
// Parsing malformed input fails (returns false); it never crashes or reads
// past the buffer.

#ifndef RPC_WIRE_ZERO_COPY_STREAM_H_
#define RPC_WIRE_ZERO_COPY_STREAM_H_

#include <cstddef>
#include <cstdint>

#include "google/protobuf/io/zero_copy_stream.h"
#include "google/protobuf/message_lite.h"
#include "transport/slice/slice.h"

namespace rpc {

// Reads the octets of a SliceBuffer, one slice per Next() (without consuming
// the buffer).
class SliceBufferInputStream final
    : public google::protobuf::io::ZeroCopyInputStream {
 public:
  explicit SliceBufferInputStream(const transport::SliceBuffer* buffer)
      : buffer_(buffer) {}

  bool Next(const void** data, int* size) override;
  void BackUp(int count) override;
  bool Skip(int count) override;
  int64_t ByteCount() const override { return byte_count_; }

 private:
  const transport::SliceBuffer* buffer_;
  size_t index_ = 0;   // slice holding the next unread octet
  size_t offset_ = 0;  // within slice index_
  int64_t byte_count_ = 0;
};

// Appends to a SliceBuffer: Next() hands out the spare room of the buffer's
// append block (SliceBuffer::PrepareAppend), then new blocks; what the caller
// fills is committed on the next call, on BackUp, or at destruction.
class SliceBufferOutputStream final
    : public google::protobuf::io::ZeroCopyOutputStream {
 public:
  // Blocks grow up to this size (a large message is not one huge block).
  static constexpr size_t kMaxBlockSize = 256 * 1024;

  // `size_hint`: octets the caller expects to write (0: unknown); sizes the
  // blocks so that a message of known size takes few of them.
  explicit SliceBufferOutputStream(transport::SliceBuffer* buffer,
                                   size_t size_hint = 0)
      : buffer_(buffer), hint_left_(size_hint) {}
  ~SliceBufferOutputStream() override { Flush(); }

  SliceBufferOutputStream(const SliceBufferOutputStream&) = delete;
  SliceBufferOutputStream& operator=(const SliceBufferOutputStream&) = delete;

  bool Next(void** data, int* size) override;
  void BackUp(int count) override;
  int64_t ByteCount() const override { return byte_count_; }

  // Commits the region last handed out (all of it); the buffer may be used
  // again after this, and the stream too.
  void Flush();

 private:
  transport::SliceBuffer* buffer_;
  size_t hint_left_;
  size_t pending_ = 0;  // octets handed out by the last Next, not committed
  size_t next_block_ = 0;
  int64_t byte_count_ = 0;
};

// Messages up to this size are serialized into one contiguous run of the
// output chain (a single SerializeWithCachedSizesToArray); larger ones through
// SliceBufferOutputStream.
inline constexpr size_t kContiguousSerializeLimit = 64 * 1024;
// Messages of up to this many octets, this size included, are serialized into
// a block of exactly their size
// (SliceBuffer::AppendUninitializedExact): a small allocation where a
// kDefaultBlockSize block would be a larger, slower one for a few octets.
// WriteMessage (message_framer.h) copies such a payload behind its prefix.
inline constexpr size_t kExactBlockMax = 512;

// Appends the serialization of `message` to *out. False when it is over 2 GiB
// (protobuf's limit) or the message changed while being serialized; *out then
// holds a partial serialization and must be discarded.
bool SerializeToSliceBuffer(const google::protobuf::MessageLite& message,
                            transport::SliceBuffer* out);
// The same when message.ByteSizeLong() has just been called and returned
// `size` (e.g. to write the gRPC message prefix first).
bool SerializeWithCachedSizesToSliceBuffer(
    const google::protobuf::MessageLite& message, size_t size,
    transport::SliceBuffer* out);

// Parses all of `in` into *message (cleared first). False on malformed input,
// missing required fields, or input over 2 GiB.
bool ParseFromSliceBuffer(const transport::SliceBuffer& in,
                          google::protobuf::MessageLite* message);

}  // namespace rpc

#endif  // RPC_WIRE_ZERO_COPY_STREAM_H_
