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

// One open Watch. Its state is the service's (under mu_): a change reaches
// it from any thread (SetServingStatus) and its reactions run on its loop
// thread. Its operations are started under mu_, which is safe: no reaction
// ever runs inside a Start* or Finish (rpc/server_callback.h).
class HealthCheckService::Watcher final
    : public ServerWriteReactor<HealthCheckResponse> {
 public:
  Watcher(HealthCheckService* service, std::string name)
      : service_(service), name_(std::move(name)) {}

  const std::string& name() const { return name_; }

  // Sends the status if it changed since the last one sent (the first time:
  // at once), unless a write is outstanding (its OnWriteDone comes back
  // here); with nothing to send after the server's shutdown, ends the call.
  void UpdateLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(service_->mu_) {
    if (finishing_ || writing_) return;
    const ServingStatus current = service_->StatusLocked(name_);
    if (!sent_ || current != last_) {
      sent_ = true;
      last_ = current;
      response_.set_status(current);
      writing_ = true;
      StartWrite(&response_);
      return;
    }
    if (service_->server_shutdown_) {
      FinishLocked(Status(StatusCode::UNAVAILABLE, "server shutting down"));
    }
  }

  void OnWriteDone(bool ok) override {
    absl::MutexLock lock(&service_->mu_);
    writing_ = false;
    if (!ok) {
      FinishLocked(Status(StatusCode::CANCELLED, "call ended"));
      return;
    }
    UpdateLocked();  // The status may have changed meanwhile.
  }

  void OnCancel() override {
    absl::MutexLock lock(&service_->mu_);
    FinishLocked(Status(StatusCode::CANCELLED, "call cancelled"));
  }

  void OnDone() override {
    {
      absl::MutexLock lock(&service_->mu_);
      auto it = service_->watchers_.find(name_);
      it->second.erase(this);
      if (it->second.empty()) {
        service_->watchers_.erase(it);
        // A name watched but never set leaves with its last Watch.
        auto status = service_->statuses_.find(name_);
        if (status != service_->statuses_.end() &&
            status->second == HealthCheckResponse::SERVICE_UNKNOWN) {
          service_->statuses_.erase(status);
        }
      }
      --service_->num_watchers_;
    }
    delete this;
  }

 private:
  void FinishLocked(Status status)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(service_->mu_) {
    if (finishing_) return;
    finishing_ = true;
    Finish(std::move(status));
  }

  HealthCheckService* const service_;
  const std::string name_;
  HealthCheckResponse response_;  // Alive until its OnWriteDone.
  ServingStatus last_ = HealthCheckResponse::UNKNOWN;
  bool sent_ = false;
  bool writing_ = false;
  bool finishing_ = false;
};

HealthCheckService::HealthCheckService(int max_watchers)
    : max_watchers_(max_watchers) {
  statuses_[""] = HealthCheckResponse::SERVING;
}

HealthCheckService::~HealthCheckService() = default;

void HealthCheckService::NotifyLocked(const std::string* service_name) {
  if (service_name != nullptr) {
    auto it = watchers_.find(*service_name);
    if (it == watchers_.end()) return;
    for (Watcher* w : it->second) w->UpdateLocked();
    return;
  }
  for (auto& [name, set] : watchers_) {
    for (Watcher* w : set) w->UpdateLocked();
  }
}

void HealthCheckService::SetServingStatus(const std::string& service_name,
                                          bool serving) {
  absl::MutexLock lock(&mu_);
  if (shutdown_) serving = false;  // As in grpc++: recorded, NOT_SERVING.
  statuses_[service_name] =
      serving ? HealthCheckResponse::SERVING : HealthCheckResponse::NOT_SERVING;
  NotifyLocked(&service_name);
}

void HealthCheckService::SetServingStatus(bool serving) {
  absl::MutexLock lock(&mu_);
  if (shutdown_) serving = false;
  // Every name in the map: those set and those watched.
  for (auto& [name, status] : statuses_) {
    status = serving ? HealthCheckResponse::SERVING
                     : HealthCheckResponse::NOT_SERVING;
  }
  NotifyLocked(nullptr);
}

void HealthCheckService::Shutdown() {
  absl::MutexLock lock(&mu_);
  if (shutdown_) return;
  shutdown_ = true;
  for (auto& [name, status] : statuses_) {
    status = HealthCheckResponse::NOT_SERVING;
  }
  NotifyLocked(nullptr);
}

void HealthCheckService::OnServerShutdown() {
  Shutdown();
  absl::MutexLock lock(&mu_);
  server_shutdown_ = true;
  NotifyLocked(nullptr);
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

ServerUnaryReactor* HealthCheckService::Check(CallbackServerContext* context,
                                              const HealthCheckRequest* request,
                                              HealthCheckResponse* response) {
  ServerUnaryReactor* reactor = context->DefaultReactor();
  ServingStatus status = GetServingStatus(request->service());
  if (status == HealthCheckResponse::SERVICE_UNKNOWN) {
    reactor->Finish(Status(StatusCode::NOT_FOUND, "unknown service"));
    return reactor;
  }
  response->set_status(status);
  reactor->Finish(Status::OK);
  return reactor;
}

namespace {

// Ends a Watch that is refused at once.
class RefusedWatch final : public ServerWriteReactor<HealthCheckResponse> {
 public:
  explicit RefusedWatch(Status status) { Finish(std::move(status)); }
  void OnDone() override { delete this; }
};

}  // namespace

ServerWriteReactor<HealthCheckResponse>* HealthCheckService::Watch(
    CallbackServerContext* /*context*/, const HealthCheckRequest* request) {
  absl::MutexLock lock(&mu_);
  if (num_watchers_ >= max_watchers_) {
    return new RefusedWatch(
        Status(StatusCode::RESOURCE_EXHAUSTED, "too many health watchers"));
  }
  ++num_watchers_;
  auto* watcher = new Watcher(this, request->service());
  watchers_[watcher->name()].insert(watcher);
  // As in grpc++, a watched name is in the map (unknown until set), so the
  // all-names SetServingStatus and Shutdown change it too.
  statuses_.try_emplace(watcher->name(), HealthCheckResponse::SERVICE_UNKNOWN);
  watcher->UpdateLocked();  // The first status, at once.
  return watcher;
}

}  // namespace rpc
