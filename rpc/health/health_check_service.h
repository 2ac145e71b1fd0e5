// rpc::HealthCheckService: the standard grpc.health.v1.Health service
// (gRPC's doc/health-checking.md), and rpc::EnableDefaultHealthCheckService.
//
// Default form, as in grpc++: every server built afterwards owns one.
//
//   rpc::EnableDefaultHealthCheckService(true);
//   std::unique_ptr<rpc::Server> server = builder.BuildAndStart();
//   rpc::HealthCheckServiceInterface* health = server->GetHealthCheckService();
//   health->SetServingStatus("helloworld.Greeter", true);
//
// Explicit form (the server then creates no default one):
//
//   rpc::HealthCheckService health;
//   builder.RegisterService(&health);
//   ...
//   health.Shutdown();                 // before server->Shutdown(deadline)
//
// Semantics:
// * The server as a whole ("") is SERVING from the start; other names are
//   known once SetServingStatus named them.
// * Check answers the status, or NOT_FOUND for an unknown name.
// * Watch sends the status at once (SERVICE_UNKNOWN for an unknown name, the
//   call stays open), then each change; changes that follow each other
//   faster than the client reads may arrive as the latest one only. It ends
//   when the client cancels (or its deadline passes), or when the server owning
//   the default service shuts down (the last status again: NOT_SERVING, or
//   SERVICE_UNKNOWN for a name never set; then UNAVAILABLE). An
//   explicitly registered service's Watches end like any other call, at the
//   server's shutdown deadline.
// * Shutdown makes every name NOT_SERVING and ignores later changes (the
//   Watches stay open).
//
// Cost: a Watch is a blocking server-streaming handler, so it holds one
// worker thread (ServerBuilder::SetWorkerThreads) for as long as it is open;
// it wakes on each change and every kWatchPollInterval to notice a
// cancelled call. At most `max_watchers` run at once (default 100);
// more are refused with RESOURCE_EXHAUSTED (clients retry with backoff), so
// that watchers cannot take every worker. A callback (non-blocking)
// server-streaming form would remove the thread per Watch.

#ifndef RPC_HEALTH_HEALTH_CHECK_SERVICE_H_
#define RPC_HEALTH_HEALTH_CHECK_SERVICE_H_

#include <memory>
#include <string>

#include "absl/container/flat_hash_map.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "rpc/health/health.pb.h"
#include "rpc/health/health.rpc.pb.h"
#include "rpc/health_check_service_interface.h"
#include "rpc/rpc.h"

namespace rpc {

// Whether servers built from now on (BuildAndStart) get the default health
// service. Off by default (the Health methods are then UNIMPLEMENTED).
void EnableDefaultHealthCheckService(bool enable);
bool DefaultHealthCheckServiceEnabled();

class HealthCheckService final : public grpc::health::v1::Health::Service,
                                 public internal::DefaultHealthCheckService {
 public:
  using ServingStatus = grpc::health::v1::HealthCheckResponse::ServingStatus;
  // How often a waiting Watch checks whether its call was cancelled.
  static constexpr absl::Duration kWatchPollInterval = absl::Milliseconds(50);

  explicit HealthCheckService(int max_watchers = 100);
  ~HealthCheckService() override;

  // ---- HealthCheckServiceInterface ----
  void SetServingStatus(const std::string& service_name, bool serving) override;
  void SetServingStatus(bool serving) override;
  void Shutdown() override;

  // The status Check would answer; SERVICE_UNKNOWN for an unknown name.
  ServingStatus GetServingStatus(const std::string& service_name) const;
  // Watches running now.
  int num_watchers() const;

  // ---- grpc.health.v1.Health ----
  Status Check(ServerContext* context,
               const grpc::health::v1::HealthCheckRequest* request,
               grpc::health::v1::HealthCheckResponse* response) override;
  Status Watch(
      ServerContext* context,
      const grpc::health::v1::HealthCheckRequest* request,
      ServerWriter<grpc::health::v1::HealthCheckResponse>* writer) override;

  // ---- internal::DefaultHealthCheckService ----
  rpc::Service* service() override { return this; }
  void OnServerShutdown() override;

 private:
  ServingStatus StatusLocked(const std::string& service_name) const
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  const int max_watchers_;
  mutable absl::Mutex mu_;
  absl::CondVar changed_;  // Signalled on every change and at server shutdown.
  absl::flat_hash_map<std::string, ServingStatus> statuses_
      ABSL_GUARDED_BY(mu_);
  bool shutdown_ ABSL_GUARDED_BY(mu_) = false;
  bool server_shutdown_ ABSL_GUARDED_BY(mu_) = false;
  int num_watchers_ ABSL_GUARDED_BY(mu_) = 0;
};

}  // namespace rpc

#endif  // RPC_HEALTH_HEALTH_CHECK_SERVICE_H_
