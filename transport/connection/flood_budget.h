// FloodBudget: a token bucket that counts frames a peer may send for free
// (each valid, each costing us work) and says when it sent too many. The
// Connection keeps one per kind of frame (ConnectionOptions' FloodLimit
// fields); running out is a connection error ENHANCE_YOUR_CALM.
//
// Time comes in as an argument (nanoseconds of any monotonic clock), so the
// bucket is pure arithmetic: `burst` tokens to start with, `per_second` more
// per second, never more than `burst`.

#ifndef TRANSPORT_CONNECTION_FLOOD_BUDGET_H_
#define TRANSPORT_CONNECTION_FLOOD_BUDGET_H_

#include <algorithm>
#include <cstdint>

namespace transport {

class FloodBudget {
 public:
  FloodBudget(uint32_t burst, uint32_t per_second, int64_t now_ns)
      : burst_(burst),
        per_second_(per_second),
        tokens_(burst),
        last_ns_(now_ns) {}

  // Takes one token at now_ns. False when none is left (the flood).
  [[nodiscard]] bool Take(int64_t now_ns) {
    Refill(now_ns);
    if (tokens_ < 1) return false;
    --tokens_;
    return true;
  }
  uint32_t tokens() const { return static_cast<uint32_t>(tokens_); }

 private:
  static constexpr int64_t kNsPerSecond = 1000 * 1000 * 1000;

  void Refill(int64_t now_ns) {
    if (now_ns <= last_ns_ || per_second_ == 0) return;
    const int64_t elapsed = now_ns - last_ns_;
    // Whole tokens earned; the remainder of the interval carries over.
    const int64_t ns_per_token =
        std::max<int64_t>(1, kNsPerSecond / per_second_);
    const int64_t earned = elapsed / ns_per_token;
    if (earned == 0) return;
    tokens_ = std::min<int64_t>(burst_, tokens_ + earned);
    last_ns_ = tokens_ == burst_ ? now_ns : last_ns_ + earned * ns_per_token;
  }

  uint32_t burst_;
  uint32_t per_second_;
  int64_t tokens_;
  int64_t last_ns_;
};

}  // namespace transport

#endif  // TRANSPORT_CONNECTION_FLOOD_BUDGET_H_
