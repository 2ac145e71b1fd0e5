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
//   faster than the client reads may arrive as the latest one only. Only
//   changes are sent: a status equal to the last one sent is not sent again.
//   It ends when the client cancels (or its deadline passes), or when the
//   server owning the default service shuts down (UNAVAILABLE, after the
//   NOT_SERVING that Shutdown made, if that was a change). An explicitly
//   registered service's Watches end like any other call, at the server's
//   shutdown deadline.
// * As in grpc++, a watched name is in the service's map while watched
//   (SERVICE_UNKNOWN until set; Check still answers NOT_FOUND), so the
//   all-names SetServingStatus(serving) and Shutdown change it too.
// * Shutdown makes every name set or watched NOT_SERVING (the Watches stay
//   open); a later SetServingStatus records NOT_SERVING whatever it asks.
//
// Cost: both methods are callback handlers (rpc/server_callback.h): they run
// on the connection's loop thread and hold no thread. An open Watch is a
// ServerWriteReactor waiting for a change: a change starts a write on every
// Watch of its name (one outstanding each; a newer status waits for the
// previous OnWriteDone and replaces any older one not yet sent). The
// service's lock is held only to record a change and reference its Watches
// (a pointer each); their writes start after it is released, each under its
// Watch's own lock (as grpc++'s WatchReactor), so Check and the other
// Watches' reactions do not wait for the writes of a change to 10,000
// Watches to be posted. At most `max_watchers` are open at once (default
// 10,000, a bound on memory); more are refused with RESOURCE_EXHAUSTED (clients
// retry with backoff).

#ifndef RPC_HEALTH_HEALTH_CHECK_SERVICE_H_
#define RPC_HEALTH_HEALTH_CHECK_SERVICE_H_

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/synchronization/mutex.h"
#include "rpc/health/health.pb.h"
#include "rpc/health/health.rpc.pb.h"
#include "rpc/health_check_service_interface.h"
#include "rpc/rpc.h"

namespace rpc {

// Whether servers built from now on (BuildAndStart) get the default health
// service. Off by default (the Health methods are then UNIMPLEMENTED).
void EnableDefaultHealthCheckService(bool enable);
bool DefaultHealthCheckServiceEnabled();

class HealthCheckService final
    : public grpc::health::v1::Health::CallbackService,
      public internal::DefaultHealthCheckService {
 public:
  using ServingStatus = grpc::health::v1::HealthCheckResponse::ServingStatus;

  explicit HealthCheckService(int max_watchers = 10000);
  ~HealthCheckService() override;

  // ---- HealthCheckServiceInterface ----
  void SetServingStatus(const std::string& service_name, bool serving) override;
  void SetServingStatus(bool serving) override;
  void Shutdown() override;

  // The status Check would answer; SERVICE_UNKNOWN for an unknown name.
  ServingStatus GetServingStatus(const std::string& service_name) const;
  // Watches open now (until their OnDone).
  int num_watchers() const;

  // ---- grpc.health.v1.Health ----
  ServerUnaryReactor* Check(
      CallbackServerContext* context,
      const grpc::health::v1::HealthCheckRequest* request,
      grpc::health::v1::HealthCheckResponse* response) override;
  ServerWriteReactor<grpc::health::v1::HealthCheckResponse>* Watch(
      CallbackServerContext* context,
      const grpc::health::v1::HealthCheckRequest* request) override;

  // ---- internal::DefaultHealthCheckService ----
  rpc::Service* service() override { return this; }
  void OnServerShutdown() override;

 private:
  class Watcher;

  ServingStatus StatusLocked(const std::string& service_name) const
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  // The statuses to deliver to the open Watches after a change, each
  // Watcher referenced until its delivery.
  struct Changes {
    std::vector<std::pair<Watcher*, ServingStatus>> to;
    uint64_t version = 0;
    bool end = false;  // The server shut down: end each Watch after its send.
  };
  // The Watches of `service_name` (every Watch when null), with their
  // names' statuses, as the change just made.
  Changes CollectLocked(const std::string* service_name)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Hands each its status, outside mu_ (each Watcher starts its write under
  // its own lock), then drops the references.
  void Deliver(Changes changes) ABSL_LOCKS_EXCLUDED(mu_);
  // A Watcher's OnDone.
  void RemoveWatcher(Watcher* watcher) ABSL_LOCKS_EXCLUDED(mu_);

  const int max_watchers_;
  mutable absl::Mutex mu_;
  // Every name set, and every name watched (SERVICE_UNKNOWN until set).
  absl::flat_hash_map<std::string, ServingStatus> statuses_
      ABSL_GUARDED_BY(mu_);
  // The open Watches by name (a Watcher leaves in its OnDone).
  absl::flat_hash_map<std::string, absl::flat_hash_set<Watcher*>> watchers_
      ABSL_GUARDED_BY(mu_);
  bool shutdown_ ABSL_GUARDED_BY(mu_) = false;
  bool server_shutdown_ ABSL_GUARDED_BY(mu_) = false;
  // Counts the changes: orders deliveries made outside mu_.
  uint64_t version_ ABSL_GUARDED_BY(mu_) = 1;
  int num_watchers_ ABSL_GUARDED_BY(mu_) = 0;
};

}  // namespace rpc

#endif  // RPC_HEALTH_HEALTH_CHECK_SERVICE_H_
