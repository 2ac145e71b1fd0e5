#include "rpc/health_check_service_interface.h"

#include <atomic>

namespace rpc {
namespace internal {
namespace {

std::atomic<DefaultHealthCheckServiceFactory> g_factory{nullptr};

}  // namespace

void SetDefaultHealthCheckServiceFactory(
    DefaultHealthCheckServiceFactory factory) {
  g_factory.store(factory);
}

std::unique_ptr<DefaultHealthCheckService> MakeDefaultHealthCheckService(
    const std::vector<Service*>& services) {
  DefaultHealthCheckServiceFactory factory = g_factory.load();
  if (factory == nullptr) return nullptr;
  for (const Service* service : services) {
    for (const auto& method : service->methods()) {
      if (method->path == "/grpc.health.v1.Health/Check") return nullptr;
    }
  }
  return factory();
}

}  // namespace internal
}  // namespace rpc
