#include "rpc/wire/zero_copy_stream.h"

#include <algorithm>
#include <climits>

#include "google/protobuf/io/coded_stream.h"

namespace rpc {

using transport::Slice;
using transport::SliceBuffer;

namespace {
constexpr size_t kMaxChunk = INT_MAX;  // protobuf speaks int sizes
constexpr size_t kMinBlockSize = 4096;
}  // namespace

bool SliceBufferInputStream::Next(const void** data, int* size) {
  const size_t n = buffer_->num_slices();
  while (index_ < n && offset_ == buffer_->slice(index_).size()) {
    ++index_;
    offset_ = 0;
  }
  if (index_ == n) return false;
  const Slice& s = buffer_->slice(index_);
  const size_t k = std::min(s.size() - offset_, kMaxChunk);
  *data = s.data() + offset_;
  *size = static_cast<int>(k);
  offset_ += k;
  byte_count_ += static_cast<int64_t>(k);
  return true;
}

void SliceBufferInputStream::BackUp(int count) {
  // The contract allows backing up only within the last Next() chunk, which
  // lies in slice index_ and ends at offset_.
  offset_ -= static_cast<size_t>(count);
  byte_count_ -= count;
}

bool SliceBufferInputStream::Skip(int count) {
  if (count < 0) return false;
  size_t left = static_cast<size_t>(count);
  const size_t n = buffer_->num_slices();
  while (left > 0) {
    while (index_ < n && offset_ == buffer_->slice(index_).size()) {
      ++index_;
      offset_ = 0;
    }
    if (index_ == n) return false;
    const size_t k = std::min(left, buffer_->slice(index_).size() - offset_);
    offset_ += k;
    byte_count_ += static_cast<int64_t>(k);
    left -= k;
  }
  return true;
}

bool SliceBufferOutputStream::Next(void** data, int* size) {
  Flush();
  // First call: any size, so the spare room after what the buffer already
  // holds (e.g. the message prefix) is used. Then blocks sized to what is
  // left of the hint, or doubling, within [kMinBlockSize, kMaxBlockSize].
  size_t want = next_block_;
  if (want == 0) {
    want = 1;
    next_block_ = kMinBlockSize;
  } else {
    if (hint_left_ > 0) want = std::max(hint_left_, kMinBlockSize);
    want = std::min(want, kMaxBlockSize);
    next_block_ = std::min(next_block_ * 2, kMaxBlockSize);
  }
  size_t available = 0;
  uint8_t* p = buffer_->PrepareAppend(want, &available);
  available = std::min(available, kMaxChunk);
  *data = p;
  *size = static_cast<int>(available);
  pending_ = available;
  byte_count_ += static_cast<int64_t>(available);
  hint_left_ -= std::min(hint_left_, available);
  return true;
}

void SliceBufferOutputStream::BackUp(int count) {
  const size_t k = std::min(static_cast<size_t>(count), pending_);
  pending_ -= k;
  byte_count_ -= static_cast<int64_t>(k);
  hint_left_ += k;
  Flush();
}

void SliceBufferOutputStream::Flush() {
  if (pending_ == 0) return;
  buffer_->CommitAppend(pending_);
  pending_ = 0;
}

bool SerializeToSliceBuffer(const google::protobuf::MessageLite& message,
                            SliceBuffer* out) {
  return SerializeWithCachedSizesToSliceBuffer(message, message.ByteSizeLong(),
                                               out);
}

bool SerializeWithCachedSizesToSliceBuffer(
    const google::protobuf::MessageLite& message, size_t size,
    SliceBuffer* out) {
  if (size > kMaxChunk) return false;
  if (size == 0) return true;
  if (size <= kContiguousSerializeLimit) {
    uint8_t* start = size <= kExactBlockMax
                         ? out->AppendUninitializedExact(size)
                         : out->AppendUninitialized(size);
    return message.SerializeWithCachedSizesToArray(start) == start + size;
  }
  SliceBufferOutputStream stream(out, size);
  {
    google::protobuf::io::CodedOutputStream coded(&stream);
    message.SerializeWithCachedSizes(&coded);
    if (coded.HadError()) return false;
  }
  return stream.ByteCount() == static_cast<int64_t>(size);
}

bool ParseFromSliceBuffer(const SliceBuffer& in,
                          google::protobuf::MessageLite* message) {
  if (in.size() > kMaxChunk) return false;
  if (in.num_slices() <= 1) {
    const Slice* s = in.begin();
    return in.empty() ? message->ParseFromArray(nullptr, 0)
                      : message->ParseFromArray(s->data(),
                                                static_cast<int>(s->size()));
  }
  SliceBufferInputStream stream(&in);
  return message->ParseFromZeroCopyStream(&stream);
}

}  // namespace rpc
