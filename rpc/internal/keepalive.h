// Keepalive pings and the server's ping policy (gRPC's doc/keepalive.md,
// proposals A8 client-side keepalive and A9 server-side connection
// management). Shared by ClientTransport and ServerConnection.
//
// KeepalivePinger: on one connection, sends a PING once `time` passed without
// reading anything from the peer, and closes the connection (the owner's
// on_timeout) when nothing arrives within `timeout` of it: neither the ACK nor
// any other octet (an ACK may sit behind DATA the peer already wrote, and any
// read proves the peer alive). Without calls in flight it pings only with
// permit_without_calls. One loop timer, re-armed lazily: reads only record the
// time (no timer churn per read).
//
// PingPolicy: the server's enforcement. A PING that arrives sooner than the
// allowed interval after the previous one is a strike; the interval is
// min_ping_interval_without_data while there are calls (or
// permit_without_calls), 2 hours otherwise. The strikes and the interval's
// start reset whenever the server sent HEADERS or DATA since (the
// Connection's headers_or_data_sent counter). More than max_ping_strikes
// strikes (0: no limit): GOAWAY ENHANCE_YOUR_CALM "too_many_pings", and the
// connection closes.
//
// Threading: the connection's loop thread.

#ifndef RPC_INTERNAL_KEEPALIVE_H_
#define RPC_INTERNAL_KEEPALIVE_H_

#include <cstdint>
#include <string_view>

#include "absl/functional/any_invocable.h"
#include "absl/time/time.h"
#include "transport/driver/connection_driver.h"
#include "transport/frame/http2_error.h"
#include "transport/io/event_loop.h"

namespace rpc {
namespace internal {

// The debug data of the GOAWAY a server sends to a client that pings too
// often (gRPC's, which clients recognize).
inline constexpr std::string_view kTooManyPingsDebug = "too_many_pings";

// A GOAWAY that tells the client to ping less often.
inline bool IsTooManyPings(transport::Http2ErrorCode code,
                           std::string_view debug) {
  return code == transport::Http2ErrorCode::kEnhanceYourCalm &&
         debug == kTooManyPingsDebug;
}

struct KeepaliveOptions {
  // Infinite (or <= 0): no pings.
  absl::Duration time = absl::InfiniteDuration();
  absl::Duration timeout = absl::Seconds(20);
  bool permit_without_calls = false;
};

class KeepalivePinger {
 public:
  // `driver` is used until it closes; its loop must outlive the pinger (the
  // driver may be destroyed first). `has_calls` tells whether calls are in
  // flight; `on_timeout` closes the connection (runs from a loop timer, never
  // inside a driver or listener call).
  KeepalivePinger(transport::ConnectionDriver* driver,
                  const KeepaliveOptions& options,
                  absl::AnyInvocable<bool() const> has_calls,
                  absl::AnyInvocable<void()> on_timeout);
  ~KeepalivePinger();  // Cancels the timer.
  KeepalivePinger(const KeepalivePinger&) = delete;
  KeepalivePinger& operator=(const KeepalivePinger&) = delete;

  // Starts the clock (after the driver started). No-op when disabled.
  void Start();
  // From the owner's OnDriverProgress: notes read activity. Cheap.
  void OnProgress();
  // From OnPingAck: returns true when it was our ping.
  bool OnPingAck(uint64_t opaque);
  bool enabled() const { return enabled_; }
  // Keepalive PINGs sent so far (tests).
  uint64_t pings_sent() const { return pings_sent_; }

 private:
  void Arm(int64_t deadline_ns);
  void OnTimer();

  transport::ConnectionDriver* const driver_;
  transport::EventLoop* const loop_;  // Outlives the driver.
  const bool enabled_;
  const int64_t time_ns_;
  const int64_t timeout_ns_;
  const bool permit_without_calls_;
  absl::AnyInvocable<bool() const> has_calls_;
  absl::AnyInvocable<void()> on_timeout_;

  transport::EventLoop::TimerId timer_ = transport::EventLoop::kInvalidTimer;
  uint64_t bytes_read_seen_ = 0;
  int64_t last_read_ns_ = 0;
  bool ping_outstanding_ = false;
  bool ping_acked_ = false;
  int64_t ping_sent_ns_ = 0;
  uint64_t pings_sent_ = 0;
};

struct PingPolicyOptions {
  absl::Duration min_ping_interval_without_data = absl::Minutes(5);
  int max_ping_strikes = 2;  // 0: any number of bad pings.
  bool permit_without_calls = false;
};

class PingPolicy {
 public:
  explicit PingPolicy(const PingPolicyOptions& options);
  // A PING arrived at now_ns; `headers_or_data_sent` is the Connection's
  // counter, `has_calls` whether calls are in flight. Returns true when the
  // peer struck out: send GOAWAY ENHANCE_YOUR_CALM "too_many_pings".
  bool OnPing(int64_t now_ns, uint64_t headers_or_data_sent, bool has_calls);
  int strikes() const { return strikes_; }

 private:
  const int64_t min_interval_ns_;
  const int max_strikes_;
  const bool permit_without_calls_;
  bool have_last_ping_ = false;
  int64_t last_ping_ns_ = 0;
  uint64_t sent_seen_ = 0;
  int strikes_ = 0;
};

// Nanoseconds of `d`, saturating (infinite: INT64_MAX).
int64_t ToNanosSaturated(absl::Duration d);

}  // namespace internal
}  // namespace rpc

#endif  // RPC_INTERNAL_KEEPALIVE_H_
