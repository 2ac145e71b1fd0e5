// ServerOptions: what ServerBuilder collects for the Server it starts
// (rpc/server_builder.h documents each setting).

#ifndef RPC_INTERNAL_SERVER_OPTIONS_H_
#define RPC_INTERNAL_SERVER_OPTIONS_H_

#include <cstdint>

#include "absl/time/time.h"
#include "rpc/internal/server_call.h"
#include "rpc/internal/server_connection.h"
#include "rpc/internal/worker_pool.h"
#include "transport/connection/connection.h"

namespace rpc {
namespace internal {

struct ServerOptions {
  int num_loops = 1;
  // EventLoop::SetBusyPoll on every loop (ServerBuilder::SetBusyPoll).
  absl::Duration busy_poll = absl::ZeroDuration();
  int min_workers = 2;
  int max_workers = 256;
  absl::Duration worker_idle_time = WorkerPool::kDefaultIdleTime;
  // WorkerPool::set_co_poll (ServerBuilder::SetWorkerLeaderFollower).
  bool worker_leader_follower = true;
  // Calls waiting for a worker once max_workers are busy; 0: no bound.
  size_t max_pending_calls = 0;
  ServerCallLimits limits;
  // Keepalive pings, ping enforcement, max connection idle/age.
  ServerKeepaliveOptions keepalive;
  // SETTINGS_MAX_CONCURRENT_STREAMS; transport::kSettingUnlimited (from the
  // connection's settings): none advertised.
  uint32_t max_concurrent_streams = transport::kSettingUnlimited;
};

}  // namespace internal
}  // namespace rpc

#endif  // RPC_INTERNAL_SERVER_OPTIONS_H_
