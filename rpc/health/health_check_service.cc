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

// One open Watch. It has a lock of its own (as grpc++'s WatchReactor): a
// change reaches it from any thread (SetServingStatus, outside the service's
// lock) and its reactions run on its loop thread. Its operations are started
// under its lock, which is safe: no reaction ever runs inside a Start* or
// Finish (rpc/server_callback.h). It is reference counted: the service's
// registration holds one reference (dropped in OnDone) and each change being
// delivered one, so a delivery never meets a deleted Watcher.
class HealthCheckService::Watcher final
    : public ServerWriteReactor<HealthCheckResponse> {
 public:
  Watcher(HealthCheckService* service, std::string name)
      : service_(service), name_(std::move(name)) {}

  const std::string& name() const { return name_; }

  void Ref() { refs_.fetch_add(1, std::memory_order_relaxed); }
  void Unref() {
    if (refs_.fetch_sub(1, std::memory_order_acq_rel) == 1) delete this;
  }

  // The status as of change `version` (deliveries made outside the
  // service's lock may arrive out of order: an older one is ignored), and
  // with `end` that the server shut down. Sends the status if it changed
  // since the last one sent (the first time: at once), unless a write is
  // outstanding (its OnWriteDone comes back here); with nothing to send
  // after the server's shutdown, ends the call.
  void Update(ServingStatus status, uint64_t version, bool end) {
    absl::MutexLock lock(&mu_);
    if (version >= version_) {
      version_ = version;
      status_ = status;
    }
    if (end) end_ = true;
    PumpLocked();
  }

  void OnWriteDone(bool ok) override {
    absl::MutexLock lock(&mu_);
    writing_ = false;
    if (!ok) {
      FinishLocked(Status(StatusCode::CANCELLED, "call ended"));
      return;
    }
    PumpLocked();  // The status may have changed meanwhile.
  }

  void OnCancel() override {
    absl::MutexLock lock(&mu_);
    FinishLocked(Status(StatusCode::CANCELLED, "call cancelled"));
  }

  void OnDone() override {
    service_->RemoveWatcher(this);
    Unref();
  }

 private:
  void PumpLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    if (finishing_ || writing_ || version_ == 0) return;
    if (!sent_ || status_ != last_) {
      sent_ = true;
      last_ = status_;
      response_.set_status(status_);
      writing_ = true;
      StartWrite(&response_);
      return;
    }
    if (end_) {
      FinishLocked(Status(StatusCode::UNAVAILABLE, "server shutting down"));
    }
  }

  void FinishLocked(Status status) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    if (finishing_) return;
    finishing_ = true;
    Finish(std::move(status));
  }

  HealthCheckService* const service_;
  const std::string name_;
  std::atomic<int> refs_{1};
  absl::Mutex mu_;
  // The latest status delivered and the change it is from (0: none yet).
  ServingStatus status_ ABSL_GUARDED_BY(mu_) = HealthCheckResponse::UNKNOWN;
  uint64_t version_ ABSL_GUARDED_BY(mu_) = 0;
  bool end_ ABSL_GUARDED_BY(mu_) = false;
  // Alive until its OnWriteDone.
  HealthCheckResponse response_ ABSL_GUARDED_BY(mu_);
  ServingStatus last_ ABSL_GUARDED_BY(mu_) = HealthCheckResponse::UNKNOWN;
  bool sent_ ABSL_GUARDED_BY(mu_) = false;
  bool writing_ ABSL_GUARDED_BY(mu_) = false;
  bool finishing_ ABSL_GUARDED_BY(mu_) = false;
};

HealthCheckService::HealthCheckService(int max_watchers)
    : max_watchers_(max_watchers) {
  statuses_[""] = HealthCheckResponse::SERVING;
}

HealthCheckService::~HealthCheckService() = default;

HealthCheckService::Changes HealthCheckService::CollectLocked(
    const std::string* service_name) {
  Changes changes;
  changes.version = ++version_;
  changes.end = server_shutdown_;
  const auto add = [&](const std::string& name,
                       const absl::flat_hash_set<Watcher*>& set) {
    const ServingStatus status = StatusLocked(name);
    for (Watcher* w : set) {
      w->Ref();
      changes.to.emplace_back(w, status);
    }
  };
  if (service_name != nullptr) {
    auto it = watchers_.find(*service_name);
    if (it != watchers_.end()) add(it->first, it->second);
    return changes;
  }
  changes.to.reserve(num_watchers_);
  for (const auto& [name, set] : watchers_) add(name, set);
  return changes;
}

void HealthCheckService::Deliver(Changes changes) {
  for (auto& [watcher, status] : changes.to) {
    watcher->Update(status, changes.version, changes.end);
    watcher->Unref();
  }
}

void HealthCheckService::RemoveWatcher(Watcher* watcher) {
  absl::MutexLock lock(&mu_);
  auto it = watchers_.find(watcher->name());
  it->second.erase(watcher);
  if (it->second.empty()) {
    watchers_.erase(it);
    // A name watched but never set leaves with its last Watch.
    auto status = statuses_.find(watcher->name());
    if (status != statuses_.end() &&
        status->second == HealthCheckResponse::SERVICE_UNKNOWN) {
      statuses_.erase(status);
    }
  }
  --num_watchers_;
}

void HealthCheckService::SetServingStatus(const std::string& service_name,
                                          bool serving) {
  Changes changes;
  {
    absl::MutexLock lock(&mu_);
    if (shutdown_) serving = false;  // As in grpc++: recorded, NOT_SERVING.
    statuses_[service_name] = serving ? HealthCheckResponse::SERVING
                                      : HealthCheckResponse::NOT_SERVING;
    changes = CollectLocked(&service_name);
  }
  Deliver(std::move(changes));
}

void HealthCheckService::SetServingStatus(bool serving) {
  Changes changes;
  {
    absl::MutexLock lock(&mu_);
    if (shutdown_) serving = false;
    // Every name in the map: those set and those watched.
    for (auto& [name, status] : statuses_) {
      status = serving ? HealthCheckResponse::SERVING
                       : HealthCheckResponse::NOT_SERVING;
    }
    changes = CollectLocked(nullptr);
  }
  Deliver(std::move(changes));
}

void HealthCheckService::Shutdown() {
  Changes changes;
  {
    absl::MutexLock lock(&mu_);
    if (shutdown_) return;
    shutdown_ = true;
    for (auto& [name, status] : statuses_) {
      status = HealthCheckResponse::NOT_SERVING;
    }
    changes = CollectLocked(nullptr);
  }
  Deliver(std::move(changes));
}

void HealthCheckService::OnServerShutdown() {
  Shutdown();
  Changes changes;
  {
    absl::MutexLock lock(&mu_);
    server_shutdown_ = true;
    changes = CollectLocked(nullptr);
  }
  Deliver(std::move(changes));
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
  Watcher* watcher;
  ServingStatus status;
  uint64_t version;
  bool end;
  {
    absl::MutexLock lock(&mu_);
    if (num_watchers_ >= max_watchers_) {
      return new RefusedWatch(
          Status(StatusCode::RESOURCE_EXHAUSTED, "too many health watchers"));
    }
    ++num_watchers_;
    watcher = new Watcher(this, request->service());
    watchers_[watcher->name()].insert(watcher);
    // As in grpc++, a watched name is in the map (unknown until set), so the
    // all-names SetServingStatus and Shutdown change it too.
    statuses_.try_emplace(watcher->name(),
                          HealthCheckResponse::SERVICE_UNKNOWN);
    status = StatusLocked(watcher->name());
    version = version_;
    end = server_shutdown_;
  }
  // The first status, at once. The Watcher cannot go meanwhile: its OnDone
  // comes only after this method returned.
  watcher->Update(status, version, end);
  return watcher;
}

}  // namespace rpc
