// rpc::Server: serves registered services over HTTP/2, in grpc++'s shape.
// Built and started by ServerBuilder (server_builder.h):
//
//   GreeterImpl service;
//   int port = 0;
//   std::unique_ptr<rpc::Server> server =
//       rpc::ServerBuilder()
//           .AddListeningPort("0.0.0.0:0", rpc::InsecureServerCredentials(),
//                             &port)
//           .RegisterService(&service)
//           .BuildAndStart();
//   ...
//   server->Shutdown(absl::Now() + absl::Seconds(5));   // or from a signal
//   server->Wait();
//
// Threading (rpc/README.md): accepted connections are spread round-robin over
// the I/O loops (one thread each); each connection lives on one loop. Handlers
// run on the worker pool. Services must outlive the server.

#ifndef RPC_SERVER_H_
#define RPC_SERVER_H_

#include <atomic>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "absl/time/time.h"
#include "rpc/credentials.h"
#include "rpc/health_check_service_interface.h"
#include "rpc/internal/server_call.h"
#include "rpc/internal/server_connection.h"
#include "rpc/internal/worker_pool.h"
#include "rpc/service.h"
#include "transport/io/event_loop.h"
#include "transport/io/tcp.h"
#include "transport/tls/tls.h"

namespace rpc {

class ServerBuilder;

class Server final : private internal::ServerConnection::Host {
 public:
  ~Server() override;  // Shutdown(now) if still running, then Wait.
  Server(const Server&) = delete;
  Server& operator=(const Server&) = delete;

  // Graceful shutdown: stops accepting, sends GOAWAY on every connection and
  // lets in-flight calls finish until `deadline`; then cancels the rest
  // (handlers see IsCancelled) and closes every connection. Returns when all
  // connections are closed and all handlers returned. Idempotent; any thread
  // but a handler's.
  void Shutdown(absl::Time deadline);
  void Shutdown() { Shutdown(absl::InfiniteFuture()); }
  // Blocks until Shutdown completed.
  void Wait();

  // The ports bound, in AddListeningPort order.
  const std::vector<int>& ports() const { return ports_; }

  // The default grpc.health.v1.Health service
  // (rpc::EnableDefaultHealthCheckService(true) before BuildAndStart), else
  // nullptr. Shutdown() shuts it down first (Watches get NOT_SERVING and end).
  HealthCheckServiceInterface* GetHealthCheckService() const {
    return health_check_service_.get();
  }

 private:
  friend class ServerBuilder;
  struct Options {
    int num_loops = 1;
    int min_workers = 2;
    int max_workers = 256;
    absl::Duration worker_idle_time = internal::WorkerPool::kDefaultIdleTime;
    internal::ServerCallLimits limits;
    // Keepalive pings, ping enforcement, max connection idle/age.
    internal::ServerKeepaliveOptions keepalive;
    // SETTINGS_MAX_CONCURRENT_STREAMS; kSettingUnlimited: none advertised.
    uint32_t max_concurrent_streams = transport::kSettingUnlimited;
  };
  // Per loop: its connections (loop thread only).
  struct LoopState {
    transport::EventLoop* loop;
    absl::flat_hash_map<internal::ServerConnection*,
                        std::unique_ptr<internal::ServerConnection>>
        connections;
    // TLS endpoints still in their handshake.
    absl::flat_hash_map<transport::Endpoint*,
                        std::unique_ptr<transport::Endpoint>>
        handshaking;
  };

  Server(const Options& options, std::vector<Service*> services);
  absl::Status Start(
      const std::vector<std::string>& addresses,
      const std::vector<std::shared_ptr<ServerCredentials>>& credentials,
      std::vector<int*> selected_ports);
  void Accept(transport::ScopedFd fd,
              std::shared_ptr<const transport::TlsContext> tls);
  // Loop thread: serves HTTP/2 on an open endpoint.
  void StartConnection(LoopState* state,
                       std::unique_ptr<transport::Endpoint> endpoint);
  // Runs `fn(state)` on every loop and waits for all.
  void ForEachLoop(std::function<void(LoopState*)> fn);

  // ---- ServerConnection::Host ----
  const Service::Method* FindMethod(std::string_view path) override;
  void Dispatch(std::shared_ptr<internal::ServerCall> call) override;
  const internal::ServerCallLimits& limits() const override {
    return options_.limits;
  }
  void OnConnectionClosed(internal::ServerConnection* connection) override;

  const Options options_;
  absl::flat_hash_map<std::string, const Service::Method*> methods_;
  std::unique_ptr<transport::EventLoopGroup> loops_;
  std::vector<std::unique_ptr<LoopState>> loop_states_;
  std::unique_ptr<internal::WorkerPool> workers_;
  std::vector<std::unique_ptr<transport::TcpListener>> listeners_;  // loop 0
  std::vector<int> ports_;
  std::atomic<size_t> next_loop_{0};
  std::atomic<int> num_connections_{0};
  std::atomic<bool> shutting_down_{false};
  absl::Mutex shutdown_mu_;
  bool shutdown_started_ ABSL_GUARDED_BY(shutdown_mu_) = false;
  absl::Notification shutdown_done_;
  // Set by ServerBuilder before Start; its service is among the methods.
  std::unique_ptr<internal::DefaultHealthCheckService> health_check_service_;
};

}  // namespace rpc

#endif  // RPC_SERVER_H_
