// Backoff: the delays between connection attempts of gRPC's
// connection-backoff.md.
//
//   attempt 1 starts at once; attempt k+1 starts delay(k) after attempt k
//   started, where delay(1) = initial_backoff and
//   delay(k+1) = min(backoff(k) * multiplier, max_backoff) ± jitter,
//   jitter uniform in [-jitter, +jitter] times that backoff.
//   An attempt may take max(min_connect_timeout, its delay) to connect.
//
//   Backoff backoff(options);
//   absl::Duration delay = backoff.NextAttemptDelay();   // initial_backoff
//   ... attempt fails ...; wait until start + delay; try again
//   backoff.Reset();                                    // after a success
//
// The random source is injectable so that tests see a fixed sequence.

#ifndef RPC_INTERNAL_BACKOFF_H_
#define RPC_INTERNAL_BACKOFF_H_

#include <algorithm>
#include <cstdint>
#include <functional>

#include "absl/time/time.h"

namespace rpc {
namespace internal {

struct BackoffOptions {
  absl::Duration initial_backoff = absl::Seconds(1);
  double multiplier = 1.6;
  double jitter = 0.2;
  absl::Duration max_backoff = absl::Seconds(120);
  absl::Duration min_connect_timeout = absl::Seconds(20);
};

class Backoff {
 public:
  // Returns a uniformly distributed value in [0, 1).
  using Uniform = std::function<double()>;

  // Seeds its own generator from the clock and the object's address.
  explicit Backoff(const BackoffOptions& options);
  Backoff(const BackoffOptions& options, Uniform uniform);
  Backoff(const Backoff&) = delete;
  Backoff& operator=(const Backoff&) = delete;

  // The delay from the start of the attempt about to be made until the next
  // one may start: initial_backoff for the first attempt after Reset, then
  // the previous backoff times the multiplier (at most max_backoff), with
  // jitter.
  absl::Duration NextAttemptDelay();
  // How long the attempt whose delay is `delay` may take to connect.
  absl::Duration ConnectTimeout(absl::Duration delay) const {
    return std::max(options_.min_connect_timeout, delay);
  }
  // After a successful connection: the next attempt starts over.
  void Reset() { started_ = false; }

 private:
  const BackoffOptions options_;
  Uniform uniform_;
  uint64_t state_ = 0;  // The default generator's (splitmix64).
  bool started_ = false;
  absl::Duration current_;
};

}  // namespace internal
}  // namespace rpc

#endif  // RPC_INTERNAL_BACKOFF_H_
