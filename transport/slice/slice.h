// Slice and SliceBuffer: the zero-copy byte containers of the transport and
// everything above it (rpc messages are parsed straight out of a SliceBuffer).
//
// A *block* is one heap allocation: a small header (reference count, capacity,
// fill mark) followed by the bytes. A Slice is an immutable view of bytes
// inside one block (block pointer + data pointer + length); copying a Slice
// bumps the block's reference count, and the last Slice (or SliceBuffer) to let
// go frees the block. A SliceBuffer is a chain of Slices with a total length:
// the read side appends the Slices it was handed (DATA payloads sliced from the
// socket's read block), the write side appends frame headers by copying them
// into the spare room at the end of a block it owns, and message payloads as
// Slices (no copy).
//
// Immutability and the fill mark. Bytes below a block's fill mark (`used`) are
// never written again, so every Slice stays valid and unchanged for as long as
// it lives. Bytes at and above the mark are free: whoever appends there moves
// the mark first. That is what lets a SliceBuffer append in place to a block
// that Slices elsewhere still reference, and lets a reader fill the rest of a
// block that earlier frames' DATA Slices still point into.
//
// Threads. A block may be released on any thread: its reference count is
// atomic (a relaxed increment; a decrement with acquire-release order, skipped
// when the releaser holds the last reference), so a received message crosses
// from the loop thread to a handler without a copy, while the loop goes on
// slicing and filling the same read block. What stays single-threaded: a
// Slice or SliceBuffer object itself (one thread at a time), and a block's
// fill mark and spare room, which only the one SliceBuffer holding the block
// as its append block writes (no other Slice reads them; moving a SliceBuffer
// moves that role, copying it does not). See README.md for the cost.
//
// Static slices (Slice::FromStatic) view memory the Slice does not own (string
// literals, test data): no block, no counting; the caller keeps the bytes
// alive.

#ifndef TRANSPORT_SLICE_SLICE_H_
#define TRANSPORT_SLICE_SLICE_H_

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <utility>

#include "absl/container/inlined_vector.h"

namespace transport {

namespace slice_internal {

// The header of a block; the bytes follow it (16-byte aligned).
struct alignas(16) Block {
  std::atomic<uint32_t> refs;  // Slices and SliceBuffers holding this block.
  size_t capacity;             // Octets of storage after the header.
  size_t used;                 // Fill mark: octets [0, used) are immutable.

  uint8_t* data() { return reinterpret_cast<uint8_t*>(this + 1); }
  size_t spare() const { return capacity - used; }

  // A block of `capacity` octets with refs == 1 and used == 0.
  static Block* New(size_t capacity);
  // Only a holder of a reference copies it, so the new one needs no order.
  void Ref() { refs.fetch_add(1, std::memory_order_relaxed); }
  // The last reference frees the block. Every holder's writes happen before
  // the free: each release is a release operation, and the acquire (the load
  // or the decrement's) of the last one sees them. A holder that reads 1
  // holds the only reference (nobody else can copy it), so it frees without
  // the locked decrement: the common case of a block used by one message.
  void Unref() {
    if (refs.load(std::memory_order_acquire) == 1 ||
        refs.fetch_sub(1, std::memory_order_acq_rel) == 1) {
      Free();
    }
  }
  void Free();
};

}  // namespace slice_internal

class Slice {
 public:
  // An empty slice (no block).
  Slice() = default;

  // A new block holding a copy of `n` octets.
  static Slice Copy(const void* data, size_t n);
  static Slice Copy(std::string_view s) { return Copy(s.data(), s.size()); }
  // A view of memory the caller keeps alive and unchanged (literals, test
  // vectors).
  static Slice FromStatic(std::string_view s) {
    return Slice(nullptr, reinterpret_cast<const uint8_t*>(s.data()), s.size());
  }

  Slice(const Slice& other)
      : block_(other.block_), data_(other.data_), size_(other.size_) {
    if (block_ != nullptr) block_->Ref();
  }
  Slice(Slice&& other) noexcept
      : block_(other.block_), data_(other.data_), size_(other.size_) {
    other.block_ = nullptr;
    other.data_ = nullptr;
    other.size_ = 0;
  }
  Slice& operator=(const Slice& other) {
    Slice copy(other);
    Swap(copy);
    return *this;
  }
  Slice& operator=(Slice&& other) noexcept {
    Slice moved(std::move(other));
    Swap(moved);
    return *this;
  }
  ~Slice() {
    if (block_ != nullptr) block_->Unref();
  }

  const uint8_t* data() const { return data_; }
  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  const uint8_t* begin() const { return data_; }
  const uint8_t* end() const { return data_ + size_; }
  uint8_t operator[](size_t i) const { return data_[i]; }
  std::string_view view() const {
    return std::string_view(reinterpret_cast<const char*>(data_), size_);
  }
  std::string ToString() const { return std::string(view()); }

  // Octets [pos, pos + n) of this slice, sharing its block. pos + n <= size().
  Slice Sub(size_t pos, size_t n) const {
    if (block_ != nullptr) block_->Ref();
    return Slice(block_, data_ + pos, n);
  }
  // Drops the first / last n octets (n <= size()).
  void RemovePrefix(size_t n) {
    data_ += n;
    size_ -= n;
  }
  void RemoveSuffix(size_t n) { size_ -= n; }

  // True when both views lie in the same block (or both are static).
  bool SharesBlockWith(const Slice& other) const {
    return block_ == other.block_;
  }
  // References held on this slice's block (0 for static and empty slices); for
  // tests.
  uint32_t block_refs() const {
    return block_ != nullptr ? block_->refs.load(std::memory_order_relaxed) : 0;
  }

  void Swap(Slice& other) noexcept {
    std::swap(block_, other.block_);
    std::swap(data_, other.data_);
    std::swap(size_, other.size_);
  }

 private:
  friend class SliceBuffer;
  // Adopts one reference on `block` (may be null).
  Slice(slice_internal::Block* block, const uint8_t* data, size_t size)
      : block_(block), data_(data), size_(size) {}

  slice_internal::Block* block_ = nullptr;
  const uint8_t* data_ = nullptr;
  size_t size_ = 0;
};

// Content equality.
inline bool operator==(const Slice& a, const Slice& b) {
  return a.view() == b.view();
}
inline bool operator!=(const Slice& a, const Slice& b) { return !(a == b); }

class SliceBuffer {
 public:
  // Size of the blocks Append(bytes) allocates when it needs room (header
  // included): big enough for a burst of control frames, small enough to waste
  // little.
  static constexpr size_t kDefaultBlockSize = 4096;

  SliceBuffer() = default;
  // Copies share the blocks (refcount bumps). The copy appends into blocks of
  // its own.
  SliceBuffer(const SliceBuffer& other);
  SliceBuffer& operator=(const SliceBuffer& other);
  SliceBuffer(SliceBuffer&& other) noexcept;
  SliceBuffer& operator=(SliceBuffer&& other) noexcept;
  ~SliceBuffer();

  // Total octets.
  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }

  // The pieces, in order (for writev and zero-copy input streams). Never empty
  // slices.
  size_t num_slices() const { return slices_.size() - head_; }
  const Slice& slice(size_t i) const { return slices_[head_ + i]; }
  const Slice* begin() const { return slices_.data() + head_; }
  const Slice* end() const { return slices_.data() + slices_.size(); }
  // The first piece; the buffer must not be empty.
  const Slice& front() const { return slices_[head_]; }

  // Appends a slice (no copy). Empty slices are dropped.
  void Append(const Slice& slice);
  void Append(Slice&& slice);
  // Appends every slice of `other` (no copy of the bytes).
  void Append(const SliceBuffer& other);
  void Append(SliceBuffer&& other);
  // Copies `n` octets to the end: into the spare room of the block this buffer
  // last appended to (extending its last slice when that ends there), then new
  // blocks.
  void Append(const void* data, size_t n);
  void Append(std::string_view s) { Append(s.data(), s.size()); }

  // Appends `n` uninitialised contiguous octets and returns them for the caller
  // to fill before anything reads the buffer (frame headers are written this
  // way). May leave the previous block's spare room unused to stay contiguous.
  uint8_t* AppendUninitialized(size_t n);
  // The same, but a new block, when one is needed, holds exactly `n` octets:
  // for a small message built on its own (a gRPC message's prefix and
  // payload), one small allocation instead of a kDefaultBlockSize one. When
  // the current block has `n` octets of spare room they are used, as
  // AppendUninitialized does; a new exact block is full, so the append after
  // it starts another block.
  uint8_t* AppendUninitializedExact(size_t n);

  // For reads: returns at least `min_size` contiguous writable octets at the
  // end (the spare room of the current block if large enough, else a new block
  // of at least max(min_size, kDefaultBlockSize - header)); *available receives
  // their number. Call CommitAppend(n), n <= *available, once n of them hold
  // data. Any non-const call in between discards the reservation.
  uint8_t* PrepareAppend(size_t min_size, size_t* available);
  void CommitAppend(size_t n);

  // Drops the first n octets (n <= size()).
  void TrimFront(size_t n);
  // Moves the first n octets (n <= size()) to the end of *dest: whole slices
  // move, a slice straddling the boundary is split (no copy).
  void MoveFrontTo(size_t n, SliceBuffer* dest);
  // Removes and returns the first slice; the buffer must not be empty.
  Slice PopFront();
  void Clear();

  // Copies octets [offset, offset + n) to `dest` (offset + n <= size()).
  void CopyTo(void* dest, size_t n, size_t offset = 0) const;
  // When octets [0, n) lie in the first slice, returns them; else nullptr.
  const uint8_t* ContiguousPrefix(size_t n) const {
    return (num_slices() > 0 && front().size() >= n) ? front().data() : nullptr;
  }
  // All octets in one new block (size 0: an empty slice).
  Slice CopyToNewBlock() const;
  std::string ToString() const;

 private:
  void DropAppendBlock();
  // Makes append_block_ a block with >= n spare octets.
  void EnsureAppendRoom(size_t n);
  // Appends [data, data + n) of append_block_ (just filled) as a slice,
  // extending the last slice when it ends exactly there.
  void AppendFilled(uint8_t* data, size_t n);
  void MaybeCompact();

  // slices_[head_, end) are live; slices_[0, head_) are empty husks, compacted
  // lazily.
  absl::InlinedVector<Slice, 4> slices_;
  size_t head_ = 0;
  size_t size_ = 0;
  // The block Append(bytes) fills (one reference held), or null.
  slice_internal::Block* append_block_ = nullptr;
};

// Content equality (piece boundaries do not matter).
bool operator==(const SliceBuffer& a, const SliceBuffer& b);
inline bool operator!=(const SliceBuffer& a, const SliceBuffer& b) {
  return !(a == b);
}

}  // namespace transport

#endif  // TRANSPORT_SLICE_SLICE_H_
