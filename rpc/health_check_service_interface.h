// rpc::HealthCheckServiceInterface: the server's handle on its default
// grpc.health.v1.Health service, in grpc++'s shape
// (grpc::HealthCheckServiceInterface).
//
//   #include "rpc/health/health_check_service.h"   // links the service
//   rpc::EnableDefaultHealthCheckService(true);     // before BuildAndStart
//   std::unique_ptr<rpc::Server> server = builder.BuildAndStart();
//   server->GetHealthCheckService()->SetServingStatus("pkg.Foo", false);
//
// The implementation lives in //rpc/health (which depends on this library);
// EnableDefaultHealthCheckService installs its factory here, and
// ServerBuilder::BuildAndStart asks the factory for one service per server.
// See rpc/README.md, "Health checking".

#ifndef RPC_HEALTH_CHECK_SERVICE_INTERFACE_H_
#define RPC_HEALTH_CHECK_SERVICE_INTERFACE_H_

#include <memory>
#include <string>
#include <vector>

#include "rpc/service.h"

namespace rpc {

class HealthCheckServiceInterface {
 public:
  virtual ~HealthCheckServiceInterface() = default;
  // Sets the status of `service_name` ("" is the whole server), adding it if
  // new. Ignored after Shutdown.
  virtual void SetServingStatus(const std::string& service_name,
                                bool serving) = 0;
  // Sets the status of every service known so far (including "").
  virtual void SetServingStatus(bool serving) = 0;
  // Every service NOT_SERVING, and no more changes.
  virtual void Shutdown() = 0;
};

namespace internal {

// What a server owns when the default health service is enabled.
class DefaultHealthCheckService : public HealthCheckServiceInterface {
 public:
  // The service that answers /grpc.health.v1.Health/*; lives as long as
  // this object.
  virtual Service* service() = 0;
  // The server starts shutting down: Shutdown(), and every Watch sends
  // NOT_SERVING and ends, so that it does not hold the shutdown up.
  virtual void OnServerShutdown() = 0;
};

using DefaultHealthCheckServiceFactory =
    std::unique_ptr<DefaultHealthCheckService> (*)();

// nullptr disables. Set by rpc::EnableDefaultHealthCheckService; read once
// per BuildAndStart. Any thread.
void SetDefaultHealthCheckServiceFactory(
    DefaultHealthCheckServiceFactory factory);
// A new default service for a server whose other services are `services`,
// or nullptr when disabled or when one of `services` already answers
// /grpc.health.v1.Health/Check (an explicitly registered health service).
std::unique_ptr<DefaultHealthCheckService> MakeDefaultHealthCheckService(
    const std::vector<Service*>& services);

}  // namespace internal
}  // namespace rpc

#endif  // RPC_HEALTH_CHECK_SERVICE_INTERFACE_H_
