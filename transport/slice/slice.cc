#include "transport/slice/slice.h"

#include <algorithm>
#include <new>
#include <type_traits>

namespace transport {

namespace slice_internal {

Block* Block::New(size_t capacity) {
  void* memory = ::operator new(sizeof(Block) + capacity);
  Block* block = new (memory) Block;
  block->refs.store(1, std::memory_order_relaxed);
  block->capacity = capacity;
  block->used = 0;
  return block;
}

void Block::Free() {
  static_assert(std::is_trivially_destructible<Block>::value, "raw storage");
  ::operator delete(static_cast<void*>(this));
}

}  // namespace slice_internal

using slice_internal::Block;

Slice Slice::Copy(const void* data, size_t n) {
  if (n == 0) return Slice();
  Block* block = Block::New(n);
  std::memcpy(block->data(), data, n);
  block->used = n;
  return Slice(block, block->data(), n);
}

SliceBuffer::SliceBuffer(const SliceBuffer& other) : size_(other.size_) {
  slices_.assign(other.begin(), other.end());
}

SliceBuffer& SliceBuffer::operator=(const SliceBuffer& other) {
  if (this != &other) {
    SliceBuffer copy(other);
    *this = std::move(copy);
  }
  return *this;
}

SliceBuffer::SliceBuffer(SliceBuffer&& other) noexcept
    : slices_(std::move(other.slices_)),
      head_(other.head_),
      size_(other.size_),
      append_block_(other.append_block_) {
  other.slices_.clear();
  other.head_ = 0;
  other.size_ = 0;
  other.append_block_ = nullptr;
}

SliceBuffer& SliceBuffer::operator=(SliceBuffer&& other) noexcept {
  if (this != &other) {
    DropAppendBlock();
    slices_ = std::move(other.slices_);
    head_ = other.head_;
    size_ = other.size_;
    append_block_ = other.append_block_;
    other.slices_.clear();
    other.head_ = 0;
    other.size_ = 0;
    other.append_block_ = nullptr;
  }
  return *this;
}

SliceBuffer::~SliceBuffer() { DropAppendBlock(); }

void SliceBuffer::DropAppendBlock() {
  if (append_block_ != nullptr) {
    append_block_->Unref();
    append_block_ = nullptr;
  }
}

void SliceBuffer::Append(const Slice& slice) {
  if (slice.empty()) return;
  size_ += slice.size();
  slices_.push_back(slice);
}

void SliceBuffer::Append(Slice&& slice) {
  if (slice.empty()) return;
  size_ += slice.size();
  slices_.push_back(std::move(slice));
}

void SliceBuffer::Append(const SliceBuffer& other) {
  if (&other == this) {
    const SliceBuffer copy(other);
    Append(copy);
    return;
  }
  for (const Slice& s : other) Append(s);
}

void SliceBuffer::Append(SliceBuffer&& other) {
  if (&other == this) {
    Append(static_cast<const SliceBuffer&>(other));
    return;
  }
  if (empty()) {
    // Take the other's storage whole, but keep our own append block.
    Block* keep = append_block_;
    append_block_ = nullptr;
    *this = std::move(other);
    if (keep != nullptr) {
      if (append_block_ == nullptr) {
        append_block_ = keep;
      } else {
        keep->Unref();
      }
    }
    return;
  }
  for (size_t i = other.head_; i < other.slices_.size(); ++i) {
    Append(std::move(other.slices_[i]));
  }
  other.Clear();
}

void SliceBuffer::EnsureAppendRoom(size_t n) {
  if (append_block_ != nullptr && append_block_->spare() >= n) return;
  DropAppendBlock();
  append_block_ = Block::New(std::max(n, kDefaultBlockSize - sizeof(Block)));
}

void SliceBuffer::AppendFilled(uint8_t* data, size_t n) {
  size_ += n;
  if (num_slices() > 0) {
    Slice& last = slices_.back();
    if (last.block_ == append_block_ && last.data_ + last.size_ == data) {
      last.size_ += n;
      return;
    }
  }
  append_block_->Ref();
  slices_.push_back(Slice(append_block_, data, n));
}

void SliceBuffer::Append(const void* data, size_t n) {
  const uint8_t* src = static_cast<const uint8_t*>(data);
  while (n > 0) {
    if (append_block_ == nullptr || append_block_->spare() == 0)
      EnsureAppendRoom(n);
    const size_t k = std::min(n, append_block_->spare());
    uint8_t* dst = append_block_->data() + append_block_->used;
    std::memcpy(dst, src, k);
    append_block_->used += k;
    AppendFilled(dst, k);
    src += k;
    n -= k;
  }
}

uint8_t* SliceBuffer::AppendUninitialized(size_t n) {
  if (n == 0) return nullptr;
  EnsureAppendRoom(n);
  uint8_t* dst = append_block_->data() + append_block_->used;
  append_block_->used += n;
  AppendFilled(dst, n);
  return dst;
}

uint8_t* SliceBuffer::AppendUninitializedExact(size_t n) {
  if (n == 0) return nullptr;
  if (append_block_ == nullptr || append_block_->spare() < n) {
    DropAppendBlock();
    append_block_ = Block::New(n);
  }
  uint8_t* dst = append_block_->data() + append_block_->used;
  append_block_->used += n;
  AppendFilled(dst, n);
  return dst;
}

uint8_t* SliceBuffer::PrepareAppend(size_t min_size, size_t* available) {
  EnsureAppendRoom(std::max<size_t>(min_size, 1));
  *available = append_block_->spare();
  return append_block_->data() + append_block_->used;
}

void SliceBuffer::CommitAppend(size_t n) {
  if (n == 0) return;
  uint8_t* dst = append_block_->data() + append_block_->used;
  append_block_->used += n;
  AppendFilled(dst, n);
}

void SliceBuffer::MaybeCompact() {
  if (head_ == slices_.size()) {
    slices_.clear();
    head_ = 0;
  } else if (head_ >= 16 && head_ * 2 >= slices_.size()) {
    slices_.erase(slices_.begin(), slices_.begin() + head_);
    head_ = 0;
  }
}

void SliceBuffer::TrimFront(size_t n) {
  size_ -= n;
  while (n > 0) {
    Slice& s = slices_[head_];
    if (s.size() > n) {
      s.RemovePrefix(n);
      break;
    }
    n -= s.size();
    s = Slice();
    ++head_;
  }
  MaybeCompact();
}

void SliceBuffer::MoveFrontTo(size_t n, SliceBuffer* dest) {
  size_ -= n;
  while (n > 0) {
    Slice& s = slices_[head_];
    if (s.size() > n) {
      dest->Append(s.Sub(0, n));
      s.RemovePrefix(n);
      break;
    }
    n -= s.size();
    dest->Append(std::move(s));
    s = Slice();
    ++head_;
  }
  MaybeCompact();
}

Slice SliceBuffer::PopFront() {
  Slice s = std::move(slices_[head_]);
  ++head_;
  size_ -= s.size();
  MaybeCompact();
  return s;
}

void SliceBuffer::Clear() {
  slices_.clear();
  head_ = 0;
  size_ = 0;
  DropAppendBlock();
}

void SliceBuffer::CopyTo(void* dest, size_t n, size_t offset) const {
  uint8_t* out = static_cast<uint8_t*>(dest);
  for (const Slice& s : *this) {
    if (n == 0) break;
    if (offset >= s.size()) {
      offset -= s.size();
      continue;
    }
    const size_t k = std::min(n, s.size() - offset);
    std::memcpy(out, s.data() + offset, k);
    out += k;
    n -= k;
    offset = 0;
  }
}

Slice SliceBuffer::CopyToNewBlock() const {
  if (size_ == 0) return Slice();
  Block* block = Block::New(size_);
  CopyTo(block->data(), size_);
  block->used = size_;
  return Slice(block, block->data(), size_);
}

std::string SliceBuffer::ToString() const {
  std::string out(size_, '\0');
  CopyTo(out.data(), size_);
  return out;
}

bool operator==(const SliceBuffer& a, const SliceBuffer& b) {
  if (a.size() != b.size()) return false;
  const Slice* ia = a.begin();
  const Slice* ib = b.begin();
  size_t oa = 0;
  size_t ob = 0;
  while (ia != a.end() && ib != b.end()) {
    const size_t k = std::min(ia->size() - oa, ib->size() - ob);
    if (std::memcmp(ia->data() + oa, ib->data() + ob, k) != 0) return false;
    oa += k;
    ob += k;
    if (oa == ia->size()) {
      ++ia;
      oa = 0;
    }
    if (ob == ib->size()) {
      ++ib;
      ob = 0;
    }
  }
  return true;
}

}  // namespace transport
