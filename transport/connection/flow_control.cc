#include "transport/connection/flow_control.h"

#include <algorithm>

#include "transport/frame/settings.h"

namespace transport {

bool SendWindow::Increase(uint32_t increment) {
  const int64_t next = window_ + increment;
  if (next > kMaxWindowSize) return false;
  window_ = next;
  return true;
}

bool SendWindow::Adjust(int64_t delta) {
  const int64_t next = window_ + delta;
  if (next > kMaxWindowSize) return false;
  window_ = next;
  return true;
}

ReceiveWindow::ReceiveWindow(uint32_t initial, uint32_t target)
    : window_(initial), target_(target) {
  // Credit beyond what the peer starts with waits to be announced.
  unannounced_ = target_ > window_ ? target_ - window_ : 0;
}

bool ReceiveWindow::OnReceived(uint32_t length) {
  // (An empty frame is fine even when a settings change left the window
  // negative.)
  if (length > 0 && length > window_) return false;
  window_ -= length;
  unconsumed_ += length;
  return true;
}

uint32_t ReceiveWindow::Consume(size_t n) {
  n = std::min(n, unconsumed_);
  unconsumed_ -= n;
  unannounced_ += static_cast<int64_t>(n);
  // Announce once half the target is free (and never past 2^31-1).
  const int64_t threshold = std::max<int64_t>(1, target_ / 2);
  if (unannounced_ < threshold) return 0;
  return Announce();
}

uint32_t ReceiveWindow::TakeUpdate() {
  if (unannounced_ <= 0) return 0;
  return Announce();
}

uint32_t ReceiveWindow::Announce() {
  int64_t increment = unannounced_;
  // A window already at (or past, after a target cut) the target needs no
  // credit; otherwise give what was consumed, capped at 2^31-1 overall.
  increment = std::min<int64_t>(increment, kMaxWindowSize - window_);
  if (increment <= 0) {
    if (window_ >= target_) unannounced_ = 0;
    return 0;
  }
  window_ += increment;
  unannounced_ -= increment;
  return static_cast<uint32_t>(increment);
}

void ReceiveWindow::Adjust(int64_t delta) {
  window_ += delta;
  target_ += delta;
  if (target_ < 0) target_ = 0;
}

bool ConnectionReceiveWindow::OnReceived(uint32_t length, uint32_t* increment) {
  *increment = 0;
  if (!window_.OnReceived(length)) return false;
  buffered_ += length;
  *increment = Release();
  return true;
}

uint32_t ConnectionReceiveWindow::Consume(size_t n) {
  buffered_ -= std::min(n, buffered_);
  return Release();
}

uint32_t ConnectionReceiveWindow::Release() {
  const size_t keep = buffered_ > buffer_limit_ ? buffered_ - buffer_limit_ : 0;
  const size_t held = window_.unconsumed();
  if (held <= keep) return 0;
  return window_.Consume(held - keep);
}

WindowUpdateAction ConsumeReceived(ConnectionReceiveWindow* connection,
                                   ReceiveWindow* stream,
                                   bool stream_wants_updates, size_t n) {
  WindowUpdateAction action;
  if (stream != nullptr) {
    n = std::min(n, stream->unconsumed());
    const uint32_t inc = stream->Consume(n);
    if (stream_wants_updates) action.stream_increment = inc;
  }
  action.connection_increment = connection->Consume(n);
  return action;
}

}  // namespace transport
