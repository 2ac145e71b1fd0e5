#include "rpc/internal/call_core.h"

#include <memory>
#include <utility>

namespace rpc {
namespace internal {

size_t CallCore::OnDataBytes(size_t n) {
  transport::MutexLock lock(&mu_);
  if (cancelled_ || queued_bytes_ < read_bound_) return n;
  owed_bytes_ += n;
  return 0;
}

void CallCore::PushMessage(transport::SliceBuffer payload) {
  transport::MutexLock lock(&mu_);
  if (cancelled_) return;
  queued_bytes_ += payload.size() + kMessageCharge;
  const bool zero_copy =
      packed_ == nullptr && messages_.size() - head_ < kMaxZeroCopyQueued &&
      payload.num_slices() <= 2 + payload.size() / kOctetsPerPiece;
  if (zero_copy) {
    // No copy: the slices still share blocks with the connection's read
    // buffer, and block reference counts are safe to release on the reader's
    // thread (transport/slice/slice.h).
    if (head_ > 0 && messages_.size() == kMaxZeroCopyQueued) {
      messages_.erase(messages_.begin(), messages_.begin() + head_);
      head_ = 0;
    }
    messages_.push_back(std::move(payload));
  } else {
    // The reader is behind (or the message is cut too fine): copy it, so
    // that it pins no read block while it waits.
    if (packed_ == nullptr) packed_ = std::make_unique<Packed>();
    for (const transport::Slice& s : payload) {
      packed_->bytes.Append(s.data(), s.size());
    }
    packed_->sizes.push_back(static_cast<uint32_t>(payload.size()));
  }
  cv_.SignalAll();
}

void CallCore::PushEnd() {
  transport::MutexLock lock(&mu_);
  ended_ = true;
  cv_.SignalAll();
}

void CallCore::Cancel() {
  absl::AnyInvocable<void()> hook;
  {
    transport::MutexLock lock(&mu_);
    cancelled_ = true;
    messages_.clear();
    head_ = 0;
    packed_ = nullptr;
    queued_bytes_ = 0;
    hook = std::move(cancel_hook_);
    cancel_hook_ = nullptr;
    cv_.SignalAll();
  }
  if (hook) hook();
}

void CallCore::SetCancelHook(absl::AnyInvocable<void()> hook) {
  {
    transport::MutexLock lock(&mu_);
    if (!cancelled_) {
      cancel_hook_ = std::move(hook);
      return;
    }
  }
  if (hook) hook();
}

void CallCore::ReleaseWriteCredit() {
  transport::MutexLock lock(&mu_);
  inflight_ = 0;
  cv_.SignalAll();
}

void CallCore::CloseWrites() {
  transport::MutexLock lock(&mu_);
  writes_closed_ = true;
  inflight_ = 0;
  cv_.SignalAll();
}

bool CallCore::HasWriteCredit() const {
  transport::MutexLock lock(&mu_);
  return inflight_ > 0;
}

CallCore::ReadResult CallCore::Read(transport::SliceBuffer* out,
                                    size_t* consume) {
  *consume = 0;
  transport::MutexLock lock(&mu_);
  auto empty = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    return head_ == messages_.size() && packed_ == nullptr;
  };
  while (empty() && !ended_ && !cancelled_) cv_.Wait(&mu_);
  if (cancelled_) return ReadResult::kCancelled;
  if (empty()) return ReadResult::kEnd;
  if (head_ < messages_.size()) {
    *out = std::move(messages_[head_]);
    ++head_;
    if (head_ == messages_.size()) {
      messages_.clear();
      head_ = 0;
      // After a burst, keep only what a reader that keeps up needs.
      if (messages_.capacity() > kKeptSlots) messages_.shrink_to_fit();
    }
  } else {
    out->Clear();
    packed_->bytes.MoveFrontTo(packed_->sizes[packed_->head++], out);
    // Drained: the packed queue goes (its blocks with the last reader).
    if (packed_->head == packed_->sizes.size()) packed_ = nullptr;
  }
  queued_bytes_ -= out->size() + kMessageCharge;
  if (owed_bytes_ > 0 && queued_bytes_ <= read_bound_ / 2) {
    *consume = owed_bytes_;
    owed_bytes_ = 0;
  }
  return ReadResult::kMessage;
}

bool CallCore::AcquireWriteCredit(size_t n) {
  transport::MutexLock lock(&mu_);
  while (inflight_ > write_bound_ && !cancelled_ && !writes_closed_) {
    cv_.Wait(&mu_);
  }
  if (cancelled_ || writes_closed_) return false;
  inflight_ += n;
  return true;
}

bool CallCore::cancelled() const {
  transport::MutexLock lock(&mu_);
  return cancelled_;
}

size_t CallCore::zero_copy_queued() const {
  transport::MutexLock lock(&mu_);
  return messages_.size() - head_;
}

size_t CallCore::packed_queued() const {
  transport::MutexLock lock(&mu_);
  return packed_ == nullptr ? 0 : packed_->sizes.size() - packed_->head;
}

size_t CallCore::queue_slots() const {
  transport::MutexLock lock(&mu_);
  return messages_.capacity() +
         (packed_ == nullptr ? 0 : packed_->sizes.capacity());
}

bool CallCore::readable() const {
  transport::MutexLock lock(&mu_);
  return head_ < messages_.size() || packed_ != nullptr || ended_ || cancelled_;
}

bool CallCore::input_complete() const {
  transport::MutexLock lock(&mu_);
  return ended_ || cancelled_;
}

}  // namespace internal
}  // namespace rpc
