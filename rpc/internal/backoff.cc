#include "rpc/internal/backoff.h"

#include <algorithm>
#include <utility>

#include "absl/time/clock.h"

namespace rpc {
namespace internal {

Backoff::Backoff(const BackoffOptions& options)
    : options_(options),
      state_(static_cast<uint64_t>(absl::ToUnixNanos(absl::Now())) ^
             reinterpret_cast<uintptr_t>(this)) {
  uniform_ = [this] {
    // splitmix64.
    uint64_t z = (state_ += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    z ^= z >> 31;
    return static_cast<double>(z >> 11) * 0x1.0p-53;
  };
}

Backoff::Backoff(const BackoffOptions& options, Uniform uniform)
    : options_(options), uniform_(std::move(uniform)) {}

absl::Duration Backoff::NextAttemptDelay() {
  if (!started_) {
    started_ = true;
    current_ = options_.initial_backoff;
    return current_;
  }
  current_ = std::min(current_ * options_.multiplier, options_.max_backoff);
  const double spread = options_.jitter * (2.0 * uniform_() - 1.0);
  return std::max(absl::ZeroDuration(), current_ + current_ * spread);
}

}  // namespace internal
}  // namespace rpc
