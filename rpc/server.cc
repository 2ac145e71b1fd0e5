#include "rpc/server.h"

#include <algorithm>
#include <atomic>
#include <functional>
#include <memory>
#include <string_view>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/synchronization/blocking_counter.h"
#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "rpc/internal/server_call.h"
#include "rpc/internal/server_connection.h"
#include "rpc/internal/server_options.h"
#include "rpc/internal/worker_pool.h"
#include "rpc/server_context.h"
#include "transport/io/event_loop.h"
#include "transport/io/tcp.h"
#include "transport/tls/tls.h"
#include "transport/tls/tls_endpoint.h"

namespace rpc {

// What a Server is: its loops (each with its connections), listeners and
// worker pool. It is the host of its connections (ServerConnection::Host),
// privately: Server's public face has none of this.
class Server::Impl final : private internal::ServerConnection::Host {
 public:
  Impl(const internal::ServerOptions& options, std::vector<Service*> services,
       std::unique_ptr<internal::DefaultHealthCheckService> health);
  ~Impl() override;  // Shutdown(now) if still running, then Wait.

  absl::Status Start(
      const std::vector<std::string>& addresses,
      const std::vector<std::shared_ptr<ServerCredentials>>& credentials,
      const std::vector<int*>& selected_ports);
  void Shutdown(absl::Time deadline);
  void Wait();
  const std::vector<int>& ports() const { return ports_; }
  HealthCheckServiceInterface* GetHealthCheckService() const {
    return health_check_service_.get();
  }

 private:
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
  // Loop thread: runs a blocking handler on a worker, or queues the call for
  // one (SetWorkerThreads in server_builder.h).
  void DispatchToWorker(std::shared_ptr<internal::ServerCall> call);
  // The loop whose thread this is (Dispatch runs on one).
  transport::EventLoop* CurrentLoop() const;
  const internal::ServerCallLimits& limits() const override {
    return options_.limits;
  }
  void OnConnectionClosed(internal::ServerConnection* connection) override;
  std::atomic<int>* live_callback_calls() override {
    return &live_callback_calls_;
  }

  const internal::ServerOptions options_;
  absl::flat_hash_map<std::string, const Service::Method*> methods_;
  std::unique_ptr<transport::EventLoopGroup> loops_;
  std::vector<std::unique_ptr<LoopState>> loop_states_;
  std::unique_ptr<internal::WorkerPool> workers_;
  std::vector<std::unique_ptr<transport::TcpListener>> listeners_;  // loop 0
  std::vector<int> ports_;
  std::atomic<size_t> next_loop_{0};
  std::atomic<int> num_connections_{0};
  // Callback calls whose reactor has not had OnDone (Shutdown waits).
  std::atomic<int> live_callback_calls_{0};
  std::atomic<bool> shutting_down_{false};
  absl::Mutex shutdown_mu_;
  bool shutdown_started_ ABSL_GUARDED_BY(shutdown_mu_) = false;
  absl::Notification shutdown_done_;
  // Its service is among the methods.
  std::unique_ptr<internal::DefaultHealthCheckService> health_check_service_;
};

Server::Impl::Impl(const internal::ServerOptions& options,
                   std::vector<Service*> services,
                   std::unique_ptr<internal::DefaultHealthCheckService> health)
    : options_(options), health_check_service_(std::move(health)) {
  for (Service* service : services) {
    for (const auto& m : service->methods()) methods_[m->path] = m.get();
  }
}

Server::Impl::~Impl() {
  Shutdown(absl::Now());
  Wait();
}

absl::Status Server::Impl::Start(
    const std::vector<std::string>& addresses,
    const std::vector<std::shared_ptr<ServerCredentials>>& credentials,
    const std::vector<int*>& selected_ports) {
  for (const auto& creds : credentials) {
    if (creds != nullptr && !creds->status().ok()) {
      for (int* port : selected_ports) {
        if (port != nullptr) *port = 0;
      }
      return creds->status();
    }
  }
  transport::EventLoopGroup::Options group_options;
  group_options.num_threads = options_.num_loops;
  group_options.name_prefix = "rpc-loop-";
  group_options.busy_poll = options_.busy_poll;
  absl::StatusOr<std::unique_ptr<transport::EventLoopGroup>> group =
      transport::EventLoopGroup::Create(group_options);
  if (!group.ok()) return group.status();
  loops_ = std::move(*group);
  for (size_t i = 0; i < loops_->size(); ++i) {
    loop_states_.push_back(
        std::unique_ptr<LoopState>(new LoopState{loops_->loop(i), {}, {}}));
  }
  workers_ = std::make_unique<internal::WorkerPool>(
      options_.min_workers, options_.max_workers, options_.worker_idle_time,
      options_.max_pending_calls);
  // Leader/follower: a worker whose last call ran alone reads the next
  // request of its loop itself and runs its handler (one wake-up per
  // sequential call instead of two); calls that come in batches keep the
  // hand-off (rpc/README.md, "Threading model"). The loops outlive the
  // pool's Shutdown (below). On by default; SetWorkerLeaderFollower.
  workers_->set_co_poll(options_.worker_leader_follower);
  absl::Status status;
  ForEachLoop([&](LoopState* state) {
    if (state != loop_states_[0].get()) return;
    for (size_t i = 0; i < addresses.size() && status.ok(); ++i) {
      // "unix:/path" (or "unix:///path"): a unix domain socket.
      absl::StatusOr<transport::SocketAddress> addr =
          addresses[i].rfind("unix:", 0) == 0
              ? transport::SocketAddress::ParseUnix(addresses[i])
              : transport::SocketAddress::ParseHostPort(addresses[i]);
      if (!addr.ok()) {
        status = addr.status();
        break;
      }
      std::shared_ptr<const transport::TlsContext> tls =
          credentials[i] != nullptr ? credentials[i]->tls_context() : nullptr;
      absl::StatusOr<std::unique_ptr<transport::TcpListener>> listener =
          transport::TcpListener::Listen(
              state->loop, *addr,
              [this, tls](transport::ScopedFd fd,
                          const transport::SocketAddress&) {
                Accept(std::move(fd), tls);
              });
      if (!listener.ok()) {
        status = listener.status();
        break;
      }
      ports_.push_back((*listener)->local_port());
      listeners_.push_back(std::move(*listener));
    }
  });
  for (size_t i = 0; i < selected_ports.size(); ++i) {
    if (selected_ports[i] != nullptr) {
      *selected_ports[i] = status.ok() ? ports_[i] : 0;
    }
  }
  if (!status.ok()) {
    ForEachLoop([&](LoopState* state) {
      if (state == loop_states_[0].get()) listeners_.clear();
    });
  }
  return status;
}

void Server::Impl::ForEachLoop(std::function<void(LoopState*)> fn) {
  absl::BlockingCounter counter(static_cast<int>(loop_states_.size()));
  for (auto& state : loop_states_) {
    LoopState* s = state.get();
    s->loop->Post([&fn, s, &counter] {
      fn(s);
      counter.DecrementCount();
    });
  }
  counter.Wait();
}

void Server::Impl::Accept(transport::ScopedFd fd,
                          std::shared_ptr<const transport::TlsContext> tls) {
  if (shutting_down_.load()) return;
  LoopState* state = loop_states_[next_loop_++ % loop_states_.size()].get();
  ++num_connections_;
  state->loop->Post([this, state, fd = std::move(fd),
                     tls = std::move(tls)]() mutable {
    absl::StatusOr<std::unique_ptr<transport::TcpEndpoint>> tcp =
        transport::TcpEndpoint::Create(state->loop, std::move(fd));
    if (!tcp.ok() || shutting_down_.load()) {
      --num_connections_;
      return;
    }
    if (tls == nullptr) {
      StartConnection(state, std::move(*tcp));
      return;
    }
    absl::StatusOr<std::unique_ptr<transport::TlsSession>> session =
        transport::TlsSession::CreateServer(tls);
    if (!session.ok()) {
      --num_connections_;
      return;
    }
    // The handshake result arrives inside the endpoint's own call: continue
    // from a task of our own.
    auto key = std::make_shared<transport::Endpoint*>(nullptr);
    std::unique_ptr<transport::TlsEndpoint> endpoint =
        transport::TlsEndpoint::Create(
            std::move(*tcp), std::move(*session),
            [this, state, key](absl::Status status) {
              state->loop->Post([this, state, key, status] {
                auto it = state->handshaking.find(*key);
                if (it == state->handshaking.end()) return;
                std::unique_ptr<transport::Endpoint> ep = std::move(it->second);
                state->handshaking.erase(it);
                *key = nullptr;
                if (!status.ok() || shutting_down_.load()) {
                  --num_connections_;
                  return;
                }
                StartConnection(state, std::move(ep));
              });
            });
    *key = endpoint.get();
    state->handshaking[*key] = std::move(endpoint);
    // A peer that never finishes its handshake is dropped.
    state->loop->RunAfter(absl::Seconds(10), [this, state, key] {
      if (*key != nullptr && state->handshaking.erase(*key) > 0) {
        *key = nullptr;
        --num_connections_;
      }
    });
  });
}

void Server::Impl::StartConnection(
    LoopState* state, std::unique_ptr<transport::Endpoint> endpoint) {
  transport::ConnectionOptions options;
  options.role = transport::Role::kServer;
  options_.limits.metadata.ApplyTo(&options);
  options.local_settings.max_concurrent_streams =
      options_.max_concurrent_streams;
  internal::ServerConnection::Host* host = this;
  auto conn = std::make_unique<internal::ServerConnection>(
      host, std::move(endpoint), options, options_.keepalive);
  internal::ServerConnection* raw = conn.get();
  state->connections[raw] = std::move(conn);
  raw->Start();
}

const Service::Method* Server::Impl::FindMethod(std::string_view path) {
  auto it = methods_.find(absl::string_view(path.data(), path.size()));
  return it == methods_.end() ? nullptr : it->second;
}

void Server::Impl::Dispatch(std::shared_ptr<internal::ServerCall> call) {
  // Callback handlers return at once: they run inline on this loop thread
  // and never hold or grow the worker pool.
  if (call->method()->callback_handler) {
    if (transport::EventLoop::RunningInline()) {
      // Never user code on an inline runner (a sync handler's or a blocking
      // caller's thread, maybe holding a user lock): the loop's thread.
      CurrentLoop()->Post([this, call = std::move(call)]() mutable {
        Dispatch(std::move(call));
      });
      return;
    }
    const Service::Method* method = call->method();
    method->callback_handler(std::move(call));
    return;
  }
  DispatchToWorker(std::move(call));
}

void Server::Impl::DispatchToWorker(
    std::shared_ptr<internal::ServerCall> call) {
  // The connection holds the call meanwhile (Dispatch runs inside its
  // callback), so `raw` stays valid whoever drops the task.
  internal::ServerCall* raw = call.get();
  const absl::Time deadline = call->deadline;
  std::weak_ptr<internal::ServerCall> weak = call;
  internal::WorkerPool::Ticket ticket =
      workers_->Submit([call = std::move(call)] {
        ServerContext ctx(call);
        Status status = call->method()->handler(&ctx);
        call->Finish(status, ctx.mutable_initial_metadata(),
                     ctx.mutable_trailing_metadata());
      });
  if (ticket.rejected) {
    raw->LoopAbort(ticket.stopped
                       ? Status(StatusCode::UNAVAILABLE, "server shutting down")
                       : Status(StatusCode::RESOURCE_EXHAUSTED,
                                "too many calls waiting for a worker thread"));
    return;
  }
  if (!ticket.waits) return;
  // Every worker is busy: the call waits for one. Cancelled meanwhile (by
  // the client, its deadline, shutdown), it leaves the queue unrun. With a
  // deadline, the server gives up a little before it (a tenth of the time
  // left, at most 1 s) so that its verdict reaches the client before the
  // client's own timer ends the call DEADLINE_EXCEEDED. The pool outlives
  // both callbacks (Shutdown stops it; it is destroyed with the server,
  // after the loops); a call that got its worker makes them no-ops.
  internal::WorkerPool* pool = workers_.get();
  const internal::WorkerPool::TaskId id = ticket.id;
  if (deadline == absl::InfiniteFuture()) {
    raw->core()->SetCancelHook([pool, id] { pool->Cancel(id); });
    return;
  }
  const absl::Duration left = deadline - absl::Now();
  const absl::Duration wait = left - std::min(left / 10, absl::Seconds(1));
  transport::EventLoop* loop = CurrentLoop();
  const transport::EventLoop::TimerId timer = loop->RunAfter(wait, [pool, id,
                                                                    weak] {
    std::shared_ptr<internal::ServerCall> call = weak.lock();
    if (call == nullptr || !pool->Cancel(id)) return;
    call->LoopAbort(Status(StatusCode::RESOURCE_EXHAUSTED,
                           "no worker thread available within the deadline"));
  });
  // The timer goes as soon as the wait ends, the call got its worker or was
  // cancelled: its weak_ptr would keep the call's allocation (make_shared:
  // object and control block) until about 0.9 x the deadline. The loops
  // outlive the workers (Shutdown joins them first), so a worker may post.
  auto cancel_timer = [loop, timer] {
    if (loop->IsInLoopThread()) {
      loop->Cancel(timer);
    } else {
      loop->Post([loop, timer] { loop->Cancel(timer); });
    }
  };
  if (!pool->OnStart(id, cancel_timer)) {
    loop->Cancel(timer);  // a worker took it meanwhile
    return;
  }
  raw->core()->SetCancelHook([pool, id, cancel_timer] {
    if (pool->Cancel(id)) cancel_timer();
  });
}

transport::EventLoop* Server::Impl::CurrentLoop() const {
  // The one loop this thread runs (IsInLoopThread alone could be true for a
  // second loop whose task it runs inline).
  return transport::EventLoop::Current();
}

void Server::Impl::OnConnectionClosed(internal::ServerConnection* connection) {
  transport::EventLoop* const current = CurrentLoop();
  for (auto& state : loop_states_) {
    if (state->loop != current) continue;
    LoopState* s = state.get();
    s->loop->Post([this, s, connection] {
      if (s->connections.erase(connection) > 0) --num_connections_;
    });
    return;
  }
}

void Server::Impl::Shutdown(absl::Time deadline) {
  {
    absl::MutexLock lock(&shutdown_mu_);
    if (shutdown_started_) return;
    shutdown_started_ = true;
  }
  // Watches would hold the graceful shutdown up to its deadline: end them.
  if (health_check_service_ != nullptr) {
    health_check_service_->OnServerShutdown();
  }
  shutting_down_ = true;
  if (loops_ != nullptr) {
    ForEachLoop([&](LoopState* state) {
      if (state == loop_states_[0].get()) listeners_.clear();
      num_connections_ -= static_cast<int>(state->handshaking.size());
      state->handshaking.clear();
      for (auto& [raw, conn] : state->connections) conn->GracefulShutdown();
    });
    while (num_connections_.load() > 0 && absl::Now() < deadline) {
      absl::SleepFor(absl::Milliseconds(1));
    }
    if (num_connections_.load() > 0) {
      ForEachLoop([](LoopState* state) {
        for (auto& [raw, conn] : state->connections) conn->Abort();
      });
      const absl::Time limit = absl::Now() + absl::Seconds(5);
      while (num_connections_.load() > 0 && absl::Now() < limit) {
        absl::SleepFor(absl::Milliseconds(1));
      }
    }
    // Handlers may still run (their calls are cancelled): wait for them. The
    // pool object stays (calls and timers may still Cancel on it) until the
    // server is destroyed, after its loops.
    workers_->Shutdown();
    ForEachLoop([](LoopState* state) { state->connections.clear(); });
    // Their calls are cancelled: reactors finish from the loops (or their
    // own threads, through the loops), which run until every OnDone came.
    while (live_callback_calls_.load(std::memory_order_acquire) > 0) {
      absl::SleepFor(absl::Milliseconds(1));
    }
    loops_.reset();
  }
  shutdown_done_.Notify();
}

void Server::Impl::Wait() { shutdown_done_.WaitForNotification(); }

// ---- Server ----

Server::Server(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

Server::~Server() = default;

std::unique_ptr<Server> Server::Start(
    const internal::ServerOptions& options, std::vector<Service*> services,
    std::unique_ptr<internal::DefaultHealthCheckService> health,
    const std::vector<std::string>& addresses,
    const std::vector<std::shared_ptr<ServerCredentials>>& credentials,
    const std::vector<int*>& selected_ports) {
  std::unique_ptr<Server> server(new Server(
      std::make_unique<Impl>(options, std::move(services), std::move(health))));
  if (!server->impl_->Start(addresses, credentials, selected_ports).ok()) {
    return nullptr;
  }
  return server;
}

void Server::Shutdown(absl::Time deadline) { impl_->Shutdown(deadline); }

void Server::Wait() { impl_->Wait(); }

const std::vector<int>& Server::ports() const { return impl_->ports(); }

HealthCheckServiceInterface* Server::GetHealthCheckService() const {
  return impl_->GetHealthCheckService();
}

}  // namespace rpc
