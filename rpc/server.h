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
// run on the worker pool; a worker whose last call came alone reads the next
// request itself and runs its handler (leader/follower, on by default:
// ServerBuilder::SetWorkerLeaderFollower). Services must outlive the server.

#ifndef RPC_SERVER_H_
#define RPC_SERVER_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/time/time.h"
#include "rpc/credentials.h"
#include "rpc/health_check_service_interface.h"
#include "rpc/service.h"

namespace rpc {

class ServerBuilder;
namespace internal {
struct ServerOptions;
}  // namespace internal

class Server final {
 public:
  ~Server();  // Shutdown(now) if still running, then Wait.
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
  const std::vector<int>& ports() const;

  // The default grpc.health.v1.Health service
  // (rpc::EnableDefaultHealthCheckService(true) before BuildAndStart), else
  // nullptr. Shutdown() shuts it down first (Watches get NOT_SERVING and end).
  HealthCheckServiceInterface* GetHealthCheckService() const;

 private:
  friend class ServerBuilder;
  // The loops, listeners, connections and workers (server.cc).
  class Impl;

  explicit Server(std::unique_ptr<Impl> impl);
  // ServerBuilder::BuildAndStart's work: nullptr when a port could not be
  // bound (or the loops could not start).
  static std::unique_ptr<Server> Start(
      const internal::ServerOptions& options, std::vector<Service*> services,
      std::unique_ptr<internal::DefaultHealthCheckService> health,
      const std::vector<std::string>& addresses,
      const std::vector<std::shared_ptr<ServerCredentials>>& credentials,
      const std::vector<int*>& selected_ports);

  const std::unique_ptr<Impl> impl_;
};

}  // namespace rpc

#endif  // RPC_SERVER_H_
