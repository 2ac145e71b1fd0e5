#include "rpc/internal/keepalive.h"

#include <chrono>
#include <limits>
#include <utility>

namespace rpc {
namespace internal {
namespace {

// The opaque data of keepalive PINGs ("keepaliv"); the Connection's graceful
// shutdown uses another.
constexpr uint64_t kKeepaliveOpaque = 0x6b656570616c6976ULL;
// Without calls and without permit_without_calls, gRPC allows one PING per
// 2 hours (its keepalive default).
constexpr int64_t kIdlePingIntervalNs = int64_t{2} * 3600 * 1000 * 1000 * 1000;

int64_t SaturatedAdd(int64_t a, int64_t b) {
  return a > std::numeric_limits<int64_t>::max() - b
             ? std::numeric_limits<int64_t>::max()
             : a + b;
}

}  // namespace

int64_t ToNanosSaturated(absl::Duration d) {
  if (d >= absl::Nanoseconds(std::numeric_limits<int64_t>::max())) {
    return std::numeric_limits<int64_t>::max();
  }
  if (d <= absl::ZeroDuration()) return 0;
  return absl::ToInt64Nanoseconds(d);
}

KeepalivePinger::KeepalivePinger(transport::ConnectionDriver* driver,
                                 const KeepaliveOptions& options,
                                 absl::AnyInvocable<bool() const> has_calls,
                                 absl::AnyInvocable<void()> on_timeout)
    : driver_(driver),
      loop_(driver->loop()),
      enabled_(options.time != absl::InfiniteDuration() &&
               options.time > absl::ZeroDuration()),
      time_ns_(ToNanosSaturated(options.time)),
      timeout_ns_(ToNanosSaturated(options.timeout)),
      permit_without_calls_(options.permit_without_calls),
      has_calls_(std::move(has_calls)),
      on_timeout_(std::move(on_timeout)) {}

KeepalivePinger::~KeepalivePinger() {
  if (timer_ != transport::EventLoop::kInvalidTimer) {
    loop_->Cancel(timer_);
  }
}

void KeepalivePinger::Start() {
  if (!enabled_) return;
  last_read_ns_ = driver_->NowNs();
  bytes_read_seen_ = driver_->bytes_read();
  Arm(SaturatedAdd(last_read_ns_, time_ns_));
}

void KeepalivePinger::OnProgress() {
  if (!enabled_ || driver_->bytes_read() == bytes_read_seen_) return;
  bytes_read_seen_ = driver_->bytes_read();
  last_read_ns_ = driver_->NowNs();
  if (ping_outstanding_ && last_read_ns_ > ping_sent_ns_) {
    // Answered: the timer waits for the timeout; count from this read now.
    ping_outstanding_ = false;
    Arm(SaturatedAdd(last_read_ns_, time_ns_));
  }
}

bool KeepalivePinger::OnPingAck(uint64_t opaque) {
  if (opaque != kKeepaliveOpaque) return false;
  ping_acked_ = true;
  if (ping_outstanding_) {
    ping_outstanding_ = false;
    last_read_ns_ = driver_->NowNs();
    Arm(SaturatedAdd(last_read_ns_, time_ns_));
  }
  return true;
}

void KeepalivePinger::Arm(int64_t deadline_ns) {
  if (timer_ != transport::EventLoop::kInvalidTimer) {
    loop_->Cancel(timer_);
  }
  const transport::EventLoop::Clock::time_point when(
      std::chrono::duration_cast<transport::EventLoop::Clock::duration>(
          std::chrono::nanoseconds(deadline_ns)));
  // The pinger cancels its timer when destroyed, and its owner destroys it
  // in the same destructor as the driver: `this` and the driver are valid
  // whenever the timer fires.
  timer_ = loop_->RunAt(when, [this] {
    timer_ = transport::EventLoop::kInvalidTimer;
    OnTimer();
  });
}

void KeepalivePinger::OnTimer() {
  if (driver_->closed()) return;
  OnProgress();
  const int64_t now = driver_->NowNs();
  if (ping_outstanding_) {
    if (ping_acked_ || last_read_ns_ > ping_sent_ns_) {
      ping_outstanding_ = false;  // The peer is alive.
    } else if (now - ping_sent_ns_ >= timeout_ns_) {
      on_timeout_();
      return;
    } else {
      Arm(SaturatedAdd(ping_sent_ns_, timeout_ns_));
      return;
    }
  }
  const int64_t due = SaturatedAdd(last_read_ns_, time_ns_);
  if (now < due) {
    Arm(due);
    return;
  }
  if (!permit_without_calls_ && !has_calls_()) {
    // Nothing to keep alive; look again later (a call may start meanwhile).
    Arm(SaturatedAdd(now, time_ns_));
    return;
  }
  driver_->connection().SendPing(kKeepaliveOpaque);
  driver_->ScheduleFlush();
  ++pings_sent_;
  ping_outstanding_ = true;
  ping_acked_ = false;
  ping_sent_ns_ = now;
  Arm(SaturatedAdd(now, timeout_ns_));
}

PingPolicy::PingPolicy(const PingPolicyOptions& options)
    : min_interval_ns_(
          ToNanosSaturated(options.min_ping_interval_without_data)),
      max_strikes_(options.max_ping_strikes),
      permit_without_calls_(options.permit_without_calls) {}

bool PingPolicy::OnPing(int64_t now_ns, uint64_t headers_or_data_sent,
                        bool has_calls) {
  if (headers_or_data_sent != sent_seen_) {
    // We sent HEADERS or DATA since the last PING: pings are welcome again.
    sent_seen_ = headers_or_data_sent;
    strikes_ = 0;
    have_last_ping_ = false;
  }
  const int64_t min_interval = has_calls || permit_without_calls_
                                   ? min_interval_ns_
                                   : kIdlePingIntervalNs;
  if (have_last_ping_ && now_ns - last_ping_ns_ < min_interval) ++strikes_;
  have_last_ping_ = true;
  last_ping_ns_ = now_ns;
  return max_strikes_ > 0 && strikes_ > max_strikes_;
}

}  // namespace internal
}  // namespace rpc
