#include "rpc/internal/call_core.h"

#include <utility>

namespace rpc {
namespace internal {

size_t CallCore::OnDataBytes(size_t n) {
  absl::MutexLock lock(&mu_);
  if (cancelled_ || queued_bytes_ < read_bound_) return n;
  owed_bytes_ += n;
  return 0;
}

void CallCore::PushMessage(transport::SliceBuffer payload) {
  // No copy: the payload's slices still share blocks with the connection's
  // read buffer, and block reference counts are safe to release on the
  // reader's thread (transport/slice/slice.h).
  absl::MutexLock lock(&mu_);
  if (cancelled_) return;
  queued_bytes_ += payload.size() + 5;
  messages_.push_back(std::move(payload));
  cv_.SignalAll();
}

void CallCore::PushEnd() {
  absl::MutexLock lock(&mu_);
  ended_ = true;
  cv_.SignalAll();
}

void CallCore::Cancel() {
  absl::AnyInvocable<void()> hook;
  {
    absl::MutexLock lock(&mu_);
    cancelled_ = true;
    messages_.clear();
    head_ = 0;
    queued_bytes_ = 0;
    hook = std::move(cancel_hook_);
    cancel_hook_ = nullptr;
    cv_.SignalAll();
  }
  if (hook) hook();
}

void CallCore::SetCancelHook(absl::AnyInvocable<void()> hook) {
  {
    absl::MutexLock lock(&mu_);
    if (!cancelled_) {
      cancel_hook_ = std::move(hook);
      return;
    }
  }
  if (hook) hook();
}

void CallCore::ReleaseWriteCredit() {
  absl::MutexLock lock(&mu_);
  inflight_ = 0;
  cv_.SignalAll();
}

bool CallCore::HasWriteCredit() const {
  absl::MutexLock lock(&mu_);
  return inflight_ > 0;
}

CallCore::ReadResult CallCore::Read(transport::SliceBuffer* out,
                                    size_t* consume) {
  *consume = 0;
  absl::MutexLock lock(&mu_);
  while (head_ == messages_.size() && !ended_ && !cancelled_) cv_.Wait(&mu_);
  if (cancelled_) return ReadResult::kCancelled;
  if (head_ == messages_.size()) return ReadResult::kEnd;
  *out = std::move(messages_[head_]);
  ++head_;
  if (head_ == messages_.size()) {
    messages_.clear();  // keeps the capacity for the next message
    head_ = 0;
  } else if (head_ >= 16 && head_ * 2 >= messages_.size()) {
    messages_.erase(messages_.begin(), messages_.begin() + head_);
    head_ = 0;
  }
  queued_bytes_ -= out->size() + 5;
  if (owed_bytes_ > 0 && queued_bytes_ <= read_bound_ / 2) {
    *consume = owed_bytes_;
    owed_bytes_ = 0;
  }
  return ReadResult::kMessage;
}

bool CallCore::AcquireWriteCredit(size_t n) {
  absl::MutexLock lock(&mu_);
  while (inflight_ > write_bound_ && !cancelled_) cv_.Wait(&mu_);
  if (cancelled_) return false;
  inflight_ += n;
  return true;
}

bool CallCore::cancelled() const {
  absl::MutexLock lock(&mu_);
  return cancelled_;
}

bool CallCore::input_complete() const {
  absl::MutexLock lock(&mu_);
  return ended_ || cancelled_;
}

}  // namespace internal
}  // namespace rpc
