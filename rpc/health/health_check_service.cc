#include "rpc/health/health_check_service.h"

#include <atomic>
#include <utility>

namespace rpc {

using grpc::health::v1::HealthCheckRequest;
using grpc::health::v1::HealthCheckResponse;

namespace {

std::atomic<bool> g_enabled{false};

std::unique_ptr<internal::DefaultHealthCheckService> MakeDefault() {
  return std::make_unique<HealthCheckService>();
}

}  // namespace

void EnableDefaultHealthCheckService(bool enable) {
  g_enabled.store(enable);
  internal::SetDefaultHealthCheckServiceFactory(enable ? &MakeDefault
                                                       : nullptr);
}

bool DefaultHealthCheckServiceEnabled() { return g_enabled.load(); }

HealthCheckService::HealthCheckService(int max_watchers)
    : max_watchers_(max_watchers) {
  statuses_[""] = HealthCheckResponse::SERVING;
}

HealthCheckService::~HealthCheckService() = default;

void HealthCheckService::SetServingStatus(const std::string& service_name,
                                          bool serving) {
  absl::MutexLock lock(&mu_);
  if (shutdown_) return;
  statuses_[service_name] =
      serving ? HealthCheckResponse::SERVING : HealthCheckResponse::NOT_SERVING;
  changed_.SignalAll();
}

void HealthCheckService::SetServingStatus(bool serving) {
  absl::MutexLock lock(&mu_);
  if (shutdown_) return;
  for (auto& [name, status] : statuses_) {
    status = serving ? HealthCheckResponse::SERVING
                     : HealthCheckResponse::NOT_SERVING;
  }
  changed_.SignalAll();
}

void HealthCheckService::Shutdown() {
  absl::MutexLock lock(&mu_);
  if (shutdown_) return;
  shutdown_ = true;
  for (auto& [name, status] : statuses_) {
    status = HealthCheckResponse::NOT_SERVING;
  }
  changed_.SignalAll();
}

void HealthCheckService::OnServerShutdown() {
  Shutdown();
  absl::MutexLock lock(&mu_);
  server_shutdown_ = true;
  changed_.SignalAll();
}

HealthCheckService::ServingStatus HealthCheckService::StatusLocked(
    const std::string& service_name) const {
  auto it = statuses_.find(service_name);
  return it == statuses_.end() ? HealthCheckResponse::SERVICE_UNKNOWN
                               : it->second;
}

HealthCheckService::ServingStatus HealthCheckService::GetServingStatus(
    const std::string& service_name) const {
  absl::MutexLock lock(&mu_);
  return StatusLocked(service_name);
}

int HealthCheckService::num_watchers() const {
  absl::MutexLock lock(&mu_);
  return num_watchers_;
}

Status HealthCheckService::Check(ServerContext* /*context*/,
                                 const HealthCheckRequest* request,
                                 HealthCheckResponse* response) {
  ServingStatus status = GetServingStatus(request->service());
  if (status == HealthCheckResponse::SERVICE_UNKNOWN) {
    return Status(StatusCode::NOT_FOUND, "unknown service");
  }
  response->set_status(status);
  return Status::OK;
}

Status HealthCheckService::Watch(ServerContext* context,
                                 const HealthCheckRequest* request,
                                 ServerWriter<HealthCheckResponse>* writer) {
  const std::string& name = request->service();
  absl::MutexLock lock(&mu_);
  if (num_watchers_ >= max_watchers_) {
    return Status(StatusCode::RESOURCE_EXHAUSTED, "too many health watchers");
  }
  ++num_watchers_;
  bool sent = false;
  ServingStatus last = HealthCheckResponse::UNKNOWN;
  Status result;
  while (true) {
    const ServingStatus current = StatusLocked(name);
    const bool ending = server_shutdown_;
    if (!sent || current != last) {
      HealthCheckResponse response;
      response.set_status(current);
      // Write blocks on flow control: not under the lock.
      mu_.Unlock();
      const bool ok = writer->Write(response);
      mu_.Lock();
      if (!ok) {
        result = Status(StatusCode::CANCELLED, "call ended");
        break;
      }
      sent = true;
      last = current;
      continue;  // The status may have changed meanwhile.
    }
    if (ending) {
      result = Status(StatusCode::UNAVAILABLE, "server shutting down");
      break;
    }
    if (context->IsCancelled()) {
      result = Status(StatusCode::CANCELLED, "call cancelled");
      break;
    }
    changed_.WaitWithTimeout(&mu_, kWatchPollInterval);
  }
  --num_watchers_;
  return result;
}

}  // namespace rpc
