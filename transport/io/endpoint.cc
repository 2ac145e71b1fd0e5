#include "transport/io/endpoint.h"

#include <algorithm>

namespace transport {

std::string_view IoOutcomeName(IoOutcome outcome) {
  switch (outcome) {
    case IoOutcome::kOk:
      return "ok";
    case IoOutcome::kWouldBlock:
      return "would block";
    case IoOutcome::kEof:
      return "end of stream";
    case IoOutcome::kError:
      return "error";
  }
  return "unknown";
}

Endpoint::~Endpoint() {
  if (destroyed_ != nullptr) *destroyed_ = true;
}

void Endpoint::SetCallbacks(Callback on_readable, Callback on_writable) {
  if (callbacks_dropped_) return;
  on_readable_ = std::move(on_readable);
  on_writable_ = std::move(on_writable);
}

void Endpoint::DropCallbacks() {
  callbacks_dropped_ = true;
  on_readable_ = nullptr;
  on_writable_ = nullptr;
}

bool Endpoint::RunCallback(Callback* cb) {
  if (!*cb) return true;
  bool destroyed = false;
  bool* outer = destroyed_;
  destroyed_ = &destroyed;
  // Run a moved-out closure: whatever the callback does to the endpoint
  // (SetCallbacks, Close, delete) cannot free the closure while it runs.
  Callback running = std::move(*cb);
  running();
  if (destroyed) {
    if (outer != nullptr) *outer = true;
    return false;
  }
  destroyed_ = outer;
  if (!*cb && !callbacks_dropped_) *cb = std::move(running);
  return true;
}

IoResult Endpoint::ReadSome(std::string* out, size_t max_bytes) {
  constexpr size_t kChunk = 64 * 1024;
  size_t total = 0;
  while (total < max_bytes) {
    const size_t old_size = out->size();
    const size_t want = std::min(kChunk, max_bytes - total);
    out->resize(old_size + want);
    IoResult r = Read(absl::Span<char>(out->data() + old_size, want));
    out->resize(old_size + r.bytes);
    total += r.bytes;
    if (!r.ok()) {
      r.bytes = total;
      return r;
    }
  }
  return IoResult::Ok(total);
}

}  // namespace transport
