// A fault-injecting TCP proxy on loopback, for the chaos suite.
//
//   chaos::FaultProxy proxy(backend_port, chaos::FaultProxy::RandomPlanner(
//                                             seed, /*fault_share=*/0.5));
//   ASSERT_TRUE(proxy.Start().ok());
//   auto channel = rpc::CreateChannel(
//       "127.0.0.1:" + std::to_string(proxy.port()), ...);
//
// The proxy listens on 127.0.0.1 with an OS-chosen port and forwards each
// accepted connection to 127.0.0.1:target_port. Each connection gets a
// FaultPlan from the planner, by its index (0, 1, ... in accept order), so
// one seed gives the same plans to the same connections: print the seed on
// failure and the run reproduces (as far as thread scheduling lets it).
//
// Plans (one per connection, in one direction):
//   kNone      forward untouched
//   kDelay     hold every chunk `delay` before forwarding it (latency)
//   kCut       forward `after_bytes`, then reset both sides (RST)
//   kTruncate  forward `after_bytes`, then end that direction (FIN) mid-stream
//              and drop what follows; the other direction goes on
//   kStall     forward `after_bytes`, then stop reading that direction's
//              source for `delay`, then reset both sides
//
// When the target refuses a connection (a server being restarted), the proxy
// keeps trying, with whatever SetTargetPort says, for up to 5 s before it
// resets the client: a restart looks like latency to new connections.
//
// One thread accepts; one thread per connection pumps both directions. Every
// wait is bounded; the destructor resets every connection and joins.
#ifndef TESTS_CHAOS_FAULT_PROXY_H_
#define TESTS_CHAOS_FAULT_PROXY_H_

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"

namespace chaos {

struct FaultPlan {
  enum class Kind { kNone, kDelay, kCut, kTruncate, kStall };
  enum class Direction { kToServer, kToClient };

  Kind kind = Kind::kNone;
  Direction direction = Direction::kToServer;
  uint64_t after_bytes = 0;
  absl::Duration delay = absl::ZeroDuration();

  // Calls on a healthy connection must behave as on a direct one.
  bool healthy() const { return kind == Kind::kNone || kind == Kind::kDelay; }
  std::string ToString() const;
};

class FaultProxy {
 public:
  using Planner = std::function<FaultPlan(int connection_index)>;

  // No faults.
  static Planner CleanPlanner();
  // Latency of 0-`max_delay` per connection, nothing else: healthy.
  static Planner DelayPlanner(uint64_t seed, absl::Duration max_delay);
  // A fault plan for `fault_share` of the connections (cut, truncate, stall,
  // either direction, after 0-64 KiB), latency for the others; from `seed`.
  static Planner RandomPlanner(uint64_t seed, double fault_share);

  FaultProxy(int target_port, Planner planner);
  ~FaultProxy();
  FaultProxy(const FaultProxy&) = delete;
  FaultProxy& operator=(const FaultProxy&) = delete;

  absl::Status Start();
  int port() const { return port_; }

  // Where connections accepted from now on go (a restarted server).
  void SetTargetPort(int port) { target_port_.store(port); }
  // Resets every open connection now.
  void CutAll();

  int connections_accepted() const;
  // Octets forwarded to clients so far, over all connections.
  uint64_t bytes_to_client() const { return bytes_to_client_.load(); }
  // Waits until every connection that was forwarded to `target_port` has
  // ended (both sides closed: the client saw the end). False at the
  // deadline.
  bool WaitClosedTo(int target_port, absl::Time deadline);
  // "#index: plan" for every connection so far, for failure reports.
  std::string PlansSummary() const;

 private:
  struct Conn;
  void AcceptLoop();
  void Pump(Conn* conn);

  std::atomic<int> target_port_;
  const Planner planner_;
  int listen_fd_ = -1;
  int port_ = 0;
  std::atomic<bool> stop_{false};
  std::atomic<uint64_t> bytes_to_client_{0};
  std::thread acceptor_;
  mutable absl::Mutex mu_;
  std::vector<std::unique_ptr<Conn>> conns_ ABSL_GUARDED_BY(mu_);
};

}  // namespace chaos

#endif  // TESTS_CHAOS_FAULT_PROXY_H_
