#include "rpc/internal/channel_impl.h"

#include <pthread.h>
#include <unistd.h>

#include <algorithm>
#include <climits>
#include <cstdint>
#include <limits>
#include <memory>
#include <thread>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/notification.h"
#include "rpc/wire/content_type.h"

namespace rpc {
namespace internal {

namespace {

size_t Limit(int v) { return v < 0 ? SIZE_MAX : static_cast<size_t>(v); }

BackoffOptions BackoffFrom(const ChannelArguments& args) {
  BackoffOptions b;
  // A zero delay would retry in a busy loop: at least 1 ms.
  b.initial_backoff = std::max(args.initial_backoff, absl::Milliseconds(1));
  b.multiplier = args.backoff_multiplier;
  b.jitter = args.backoff_jitter;
  b.max_backoff = std::max(args.max_backoff, absl::Milliseconds(1));
  b.min_connect_timeout = args.min_connect_timeout;
  return b;
}

// The process-wide group and its lock. A plain pthread mutex, constant
// initialized (no guard of a function-local static, which a fork could also
// copy held), because fork() must never copy it held: a child whose parent
// forked while another thread was in DefaultLoopGroup would wait forever
// for an owner that does not exist in it. The fork handlers below take it
// around fork() (prepare), release it in the parent, and in the child,
// whose only thread is the one that took it, release it too.
pthread_mutex_t g_group_mu = PTHREAD_MUTEX_INITIALIZER;
// Never destroyed: channels may live in static objects, and loop threads
// idle in epoll_wait at exit cost nothing.
std::shared_ptr<LoopGroup>* g_group = nullptr;
// fork() copies the group but none of its threads: a child's channels would
// wait forever for loops nobody runs. A child makes a group of its own; the
// parent's copy is leaked (its threads do not exist there, so it cannot be
// stopped or joined; channels made before the fork keep it). The pid also
// catches a child made without the fork handlers (a raw clone).
pid_t g_group_pid = 0;

void LockGroupForFork() { pthread_mutex_lock(&g_group_mu); }
void UnlockGroupInParent() { pthread_mutex_unlock(&g_group_mu); }
void UnlockGroupInChild() {
  g_group = nullptr;
  pthread_mutex_unlock(&g_group_mu);
}

// Registered when the library loads, before any thread can hold the lock.
const bool g_fork_handlers = [] {
  return pthread_atfork(&LockGroupForFork, &UnlockGroupInParent,
                        &UnlockGroupInChild) == 0;
}();

}  // namespace

absl::StatusOr<std::shared_ptr<LoopGroup>> DefaultLoopGroup() {
  (void)g_fork_handlers;  // (Without them a forked child may hang here.)
  const pid_t pid = getpid();
  // Under the lock only pointer work (the fork handlers wait for it): the
  // group is made outside it, when there was none, and kept if there still
  // is none (callers racing to make it each make one; the others stop).
  const auto current = [pid]() -> std::shared_ptr<LoopGroup> {
    if (g_group != nullptr && g_group_pid != pid) g_group = nullptr;
    return g_group != nullptr ? *g_group : nullptr;
  };
  pthread_mutex_lock(&g_group_mu);
  std::shared_ptr<LoopGroup> group = current();
  pthread_mutex_unlock(&g_group_mu);
  if (group != nullptr) return group;

  transport::EventLoopGroup::Options options;
  options.num_threads = 0;  // One per CPU.
  options.name_prefix = "rpc-channel-";
  absl::StatusOr<std::unique_ptr<transport::EventLoopGroup>> g =
      transport::EventLoopGroup::Create(options);
  if (!g.ok()) return g.status();
  auto made = std::make_unique<std::shared_ptr<LoopGroup>>(
      LoopGroupAccess::Make(std::move(*g)));
  pthread_mutex_lock(&g_group_mu);
  group = current();
  if (group == nullptr) {
    group = *made;
    g_group = made.release();
    g_group_pid = pid;
  }
  pthread_mutex_unlock(&g_group_mu);
  return group;  // (`made`, if another caller's group won, stops here.)
}

absl::StatusOr<ChannelLoop> AcquireChannelLoop(const ChannelArguments& args) {
  ChannelLoop result;
  if (args.busy_poll > absl::ZeroDuration()) {
    absl::StatusOr<std::unique_ptr<transport::EventLoopThread>> thread =
        transport::EventLoopThread::Start("rpc-channel-bp");
    if (!thread.ok()) return thread.status();
    result.own = std::move(*thread);
    result.loop = result.own->loop();
    result.loop->SetBusyPoll(args.busy_poll);
    return result;
  }
  if (args.loop_group != nullptr) {
    result.group = args.loop_group;
  } else {
    absl::StatusOr<std::shared_ptr<LoopGroup>> group = DefaultLoopGroup();
    if (!group.ok()) return group.status();
    result.group = *std::move(group);
  }
  result.loop = LoopGroupAccess::Group(*result.group).Next();
  return result;
}

ChannelImpl::ChannelImpl(std::string target,
                         std::shared_ptr<ChannelCredentials> creds,
                         const ChannelArguments& args,
                         absl::StatusOr<ChannelLoop> loop)
    : target_(std::move(target)),
      // As grpc++: null credentials make a channel whose calls fail with
      // INVALID_ARGUMENT.
      creds_(creds != nullptr ? creds
                              : std::make_shared<ChannelCredentials>(
                                    nullptr, absl::InvalidArgumentError(
                                                 "Invalid credentials (null "
                                                 "ChannelCredentials)"))),
      args_(args),
      user_agent_(BuildUserAgent(args.user_agent_prefix)),
      round_robin_(args.load_balancing_policy_name == "round_robin"),
      channel_loop_(loop.ok() ? std::move(*loop) : ChannelLoop()),
      loop_(channel_loop_.loop),
      resolve_backoff_(std::make_unique<Backoff>(BackoffFrom(args))),
      keepalive_time_(args.keepalive_time),
      self_(std::make_shared<ChannelImpl*>(this)) {
  call_options_.max_receive_message_size = Limit(args.max_receive_message_size);
  call_options_.max_send_message_size = Limit(args.max_send_message_size);
  call_options_.encoding = args.compression_algorithm;
  call_options_.compression_threshold = args.compression_threshold;
  call_options_.transparent_retry = args.enable_retries;
  call_options_.retry_buffer_size = args.per_rpc_retry_buffer_size;
  absl::StatusOr<Target> parsed = ParseTarget(target_);
  if (parsed.ok()) {
    parsed_ = std::move(*parsed);
  } else {
    target_status_ = parsed.status();
    parsed_.authority = target_;
  }
  if (target_status_.ok() && !creds_->status().ok()) {
    target_status_ = creds_->status();
    if (creds == nullptr) bad_channel_code_ = StatusCode::INVALID_ARGUMENT;
  }
  if (target_status_.ok() && args.load_balancing_policy_name != "pick_first" &&
      !round_robin_) {
    target_status_ = absl::InvalidArgumentError(
        absl::StrCat("unknown load balancing policy \"",
                     args.load_balancing_policy_name, "\""));
  }
  if (target_status_.ok() && !loop.ok()) {
    target_status_ = absl::UnavailableError(absl::StrCat(
        "cannot start the channel's loop thread: ", loop.status().message()));
  }
  subchannel_options_.backoff = BackoffFrom(args);
  subchannel_options_.tls = creds_->tls_context();
  subchannel_options_.tls_name = args.ssl_target_name_override.empty()
                                     ? parsed_.host
                                     : args.ssl_target_name_override;
  if (!target_status_.ok()) {
    last_error_ = target_status_;
    absl::MutexLock lock(&state_mu_);
    state_ = ConnectivityState::kTransientFailure;
  }
}

ChannelImpl::~ChannelImpl() {
  if (loop_ == nullptr) return;  // No loop: no call ever reached the channel.
  if (loop_->IsInLoopThread()) {
    // The last reference went away on the loop thread, but not through
    // CreateCustomChannel's deleter (which closes from a task of its own
    // and frees from a later one): no channel method is on the stack.
    LoopClose();
    if (channel_loop_.own != nullptr) {
      // Our own thread cannot join itself: a detached thread does.
      std::thread([thread = std::move(channel_loop_.own)]() mutable {
        thread.reset();
      }).detach();
    }
    return;  // Nothing touches `this` after.
  }
  // Close, then wait one more iteration: work the closing iteration deferred
  // (a call leaving a dying connection to retry) finds the channel closed,
  // not freed. Later tasks never name the channel: its own callbacks check
  // self_, its calls' only way back (a start or a retry) is done.
  absl::Notification done;
  loop_->Post([this, &done] {
    LoopClose();
    loop_->Post([&done] { done.Notify(); });
  });
  done.WaitForNotification();
  channel_loop_.own.reset();
}

void ChannelImpl::LoopClose() {
  if (closing_) return;
  closing_ = true;
  *self_ = nullptr;
  if (resolve_timer_ != transport::EventLoop::kInvalidTimer) {
    loop_->Cancel(resolve_timer_);
    resolve_timer_ = transport::EventLoop::kInvalidTimer;
  }
  dns_.reset();
  auto queue = std::move(queue_);
  for (auto& call : queue) {
    call->LoopFail(Status(StatusCode::UNAVAILABLE, "channel closed"));
  }
  selected_ = nullptr;
  // No owner notifications any more; destroying them fails their calls.
  for (auto& sc : subchannels_) sc->Shutdown(/*notify_closed=*/false);
  for (auto& sc : retired_) sc->Shutdown(/*notify_closed=*/false);
  subchannels_.clear();
  retired_.clear();
  LoopSetState(ConnectivityState::kShutdown);
}

// ---- Connectivity ----

ConnectivityState ChannelImpl::GetState(bool try_to_connect) {
  ConnectivityState state;
  {
    absl::MutexLock lock(&state_mu_);
    state = state_;
  }
  if (try_to_connect && state == ConnectivityState::kIdle) {
    loop_->Post([self = self_] {
      if (*self != nullptr) (*self)->LoopExitIdle();
    });
  }
  return state;
}

bool ChannelImpl::WaitForStateChange(ConnectivityState last_observed,
                                     absl::Time deadline) {
  absl::MutexLock lock(&state_mu_);
  while (state_ == last_observed) {
    if (state_cv_.WaitWithDeadline(&state_mu_, deadline)) {
      return state_ != last_observed;
    }
  }
  return true;
}

void ChannelImpl::LoopSetState(ConnectivityState state) {
  absl::MutexLock lock(&state_mu_);
  if (state_ == state) return;
  state_ = state;
  state_cv_.SignalAll();
}

// ---- Calls ----

std::shared_ptr<ClientCall> ChannelImpl::CreateCall(
    const std::string& path, absl::Time deadline, const Metadata& metadata,
    std::optional<compression::Encoding> encoding) {
  if (loop_ == nullptr) {
    // No loop thread: the call fails now, before anyone else sees it (it
    // then ignores what it is asked to do; ClientCall::Start).
    auto call = std::make_shared<ClientCall>(this, nullptr, path, deadline,
                                             metadata, call_options_);
    call->LoopFail(LoopUnavailable());
    return call;
  }
  if (encoding.has_value()) {
    ClientCallOptions options = call_options_;
    options.encoding = *encoding;
    return std::make_shared<ClientCall>(this, loop_, path, deadline, metadata,
                                        options);
  }
  return std::make_shared<ClientCall>(this, loop_, path, deadline, metadata,
                                      call_options_);
}

Status ChannelImpl::LoopUnavailable() const {
  if (closing_) return Status(StatusCode::UNAVAILABLE, "channel closed");
  return Status(
      target_status_.ok() ? StatusCode::UNAVAILABLE : bad_channel_code_,
      std::string(last_error_.message()));
}

void ChannelImpl::LoopStartCall(std::shared_ptr<ClientCall> call) {
  if (call->loop_done()) return;
  if (closing_) {
    call->LoopFail(LoopUnavailable());
    return;
  }
  if (!target_status_.ok()) {
    call->LoopFail(LoopUnavailable());
    return;
  }
  if (idle_) LoopExitIdle();
  if (ClientTransport* t = LoopPick()) {
    call->LoopStart(t);
    return;
  }
  // A bad target fails every call; TRANSIENT_FAILURE the fail-fast ones.
  if (!target_status_.ok() || (LoopFailing() && !call->wait_for_ready())) {
    call->LoopFail(LoopUnavailable());
    return;
  }
  // Calls whose deadline passed while queued are dropped now and then.
  if (queue_.size() >= 64 && queue_.size() % 64 == 0) {
    queue_.erase(std::remove_if(queue_.begin(), queue_.end(),
                                [](const auto& c) { return c->loop_done(); }),
                 queue_.end());
  }
  queue_.push_back(std::move(call));
}

void ChannelImpl::LoopDrainQueue() {
  if (queue_.empty() || closing_) return;
  if (idle_) {
    LoopExitIdle();  // Drains the queue again.
    return;
  }
  auto queue = std::move(queue_);
  queue_.clear();
  for (auto& call : queue) {
    if (call->loop_done()) continue;
    if (ClientTransport* t = LoopPick()) {
      call->LoopStart(t);
    } else if (!target_status_.ok() ||
               (LoopFailing() && !call->wait_for_ready())) {
      call->LoopFail(LoopUnavailable());
    } else {
      queue_.push_back(std::move(call));
    }
  }
}

// ---- Resolution ----

void ChannelImpl::LoopExitIdle() {
  if (closing_ || !idle_ || !target_status_.ok()) return;
  idle_ = false;
  if (!resolved_once_) {
    LoopResolve(/*now=*/true);
  } else if (round_robin_) {
    for (auto& sc : subchannels_) sc->Connect();
  } else {
    LoopPickFirstFrom(0);
  }
  LoopUpdateState();
}

void ChannelImpl::LoopResolve(bool now) {
  // Never from the handling of a result: with a zero interval and an answer
  // that comes at once, the loop would do nothing else.
  if (closing_ || resolving_ || handling_resolution_) return;
  if (parsed_.scheme != Target::Scheme::kDns) {
    // ipv4:, ipv6:, unix: fixed addresses, which do not change.
    if (resolved_once_) return;
    LoopOnResolved(parsed_.addresses);
    return;
  }
  if (!now) {
    // At least 1 ms apart (a zero interval must not spin).
    const absl::Time earliest =
        last_resolution_ +
        std::max(args_.dns_min_time_between_resolutions, absl::Milliseconds(1));
    if (absl::Now() < earliest) {
      if (resolve_timer_ == transport::EventLoop::kInvalidTimer) {
        resolve_timer_ =
            loop_->RunAfter(earliest - absl::Now(), [self = self_] {
              if (*self == nullptr) return;
              (*self)->resolve_timer_ = transport::EventLoop::kInvalidTimer;
              (*self)->LoopResolve(/*now=*/true);
            });
      }
      return;
    }
  }
  if (resolve_timer_ != transport::EventLoop::kInvalidTimer) {
    loop_->Cancel(resolve_timer_);
    resolve_timer_ = transport::EventLoop::kInvalidTimer;
  }
  if (dns_ == nullptr) {
    transport::DnsResolverOptions options;
    options.server = parsed_.dns_server;
    absl::StatusOr<std::unique_ptr<transport::DnsResolver>> dns =
        transport::DnsResolver::Create(loop_, options);
    if (!dns.ok()) {
      if (absl::IsInvalidArgument(dns.status())) {
        // A bad dns://AUTHORITY/: the target is wrong, retrying is useless.
        target_status_ = absl::InvalidArgumentError(absl::StrCat(
            "bad target \"", target_, "\": ", dns.status().message()));
        last_error_ = target_status_;
        LoopUpdateState();
        return;
      }
      LoopOnResolved(dns.status());
      return;
    }
    dns_ = std::move(*dns);
  }
  resolving_ = true;
  last_resolution_ = absl::Now();
  dns_->Resolve(
      parsed_.host, parsed_.port,
      [self = self_](
          absl::StatusOr<std::vector<transport::SocketAddress>> addresses) {
        if (*self != nullptr) (*self)->LoopOnResolved(std::move(addresses));
      });
}

void ChannelImpl::LoopOnResolved(
    absl::StatusOr<std::vector<transport::SocketAddress>> addresses) {
  resolving_ = false;
  if (closing_) return;
  handling_resolution_ = true;
  LoopHandleResolution(std::move(addresses));
  handling_resolution_ = false;
  LoopUpdateState();
}

void ChannelImpl::LoopHandleResolution(
    absl::StatusOr<std::vector<transport::SocketAddress>> addresses) {
  if (addresses.ok() && addresses->empty()) {
    addresses = absl::UnavailableError(absl::StrCat(
        "DNS resolution failed for ", parsed_.host, ": no addresses"));
  }
  if (!addresses.ok()) {
    last_error_ = addresses.status();
    if (subchannels_.empty()) resolver_failure_ = true;
    const absl::Duration delay = resolve_backoff_->NextAttemptDelay();
    if (parsed_.scheme == Target::Scheme::kDns &&
        resolve_timer_ == transport::EventLoop::kInvalidTimer) {
      resolve_timer_ = loop_->RunAfter(delay, [self = self_] {
        if (*self == nullptr) return;
        (*self)->resolve_timer_ = transport::EventLoop::kInvalidTimer;
        (*self)->LoopResolve(/*now=*/true);
      });
    }
    return;
  }
  resolve_backoff_->Reset();
  resolved_once_ = true;
  // The DNS error is over (a failed pass keeps its own error).
  resolver_failure_ = false;
  if (!transient_failure_) last_error_ = absl::OkStatus();
  // One subchannel per address, in the new order; existing ones are kept.
  std::vector<std::unique_ptr<Subchannel>> next;
  for (const transport::SocketAddress& address : *addresses) {
    auto it = std::find_if(subchannels_.begin(), subchannels_.end(),
                           [&](const auto& sc) {
                             return sc != nullptr && sc->address() == address;
                           });
    if (it != subchannels_.end()) {
      next.push_back(std::move(*it));
    } else {
      Subchannel::Owner* owner = this;
      next.push_back(std::make_unique<Subchannel>(owner, loop_, address,
                                                  subchannel_options_));
    }
  }
  for (auto& old : subchannels_) {
    if (old == nullptr) continue;
    if (selected_ == old.get()) selected_ = nullptr;
    // The address is gone: its calls finish, then the connection closes
    // (OnSubchannelClosed); one still connecting is cancelled at once.
    old->Shutdown(/*notify_closed=*/false);
    if (old->open_transports() > 0) {
      retired_.push_back(std::move(old));
      retired_.back()->Shutdown(/*notify_closed=*/true);
    }
  }
  subchannels_ = std::move(next);
  if (!idle_) {
    if (round_robin_) {
      for (auto& sc : subchannels_) sc->Connect();
    } else if (selected_ == nullptr) {
      LoopPickFirstFrom(0);
    }
  }
}

// ---- Load balancing ----

ClientTransport* ChannelImpl::LoopPick() {
  if (round_robin_) {
    const size_t n = subchannels_.size();
    for (size_t k = 0; k < n; ++k) {
      const size_t i = (round_robin_next_ + k) % n;
      ClientTransport* t = subchannels_[i]->transport();
      if (t != nullptr && t->accepting()) {
        round_robin_next_ = i + 1;
        return t;
      }
    }
    return nullptr;
  }
  if (selected_ == nullptr) return nullptr;
  ClientTransport* t = selected_->transport();
  return t != nullptr && t->accepting() ? t : nullptr;
}

void ChannelImpl::LoopPickFirstFrom(size_t i) {
  pick_first_trying_ = true;
  for (; i < subchannels_.size(); ++i) {
    Subchannel* sc = subchannels_[i].get();
    switch (sc->state()) {
      case ConnectivityState::kReady:
        LoopPickFirstSelect(sc);
        return;
      case ConnectivityState::kIdle:
        pick_first_index_ = i;
        sc->Connect();
        return;
      case ConnectivityState::kConnecting:
        pick_first_index_ = i;
        return;
      default:
        break;  // In backoff after a failure: the next one.
    }
  }
  // Every address failed: TRANSIENT_FAILURE until one connects; each is
  // tried again when its backoff delay passed.
  pick_first_trying_ = false;
  transient_failure_ = true;
  LoopResolve(/*now=*/false);  // Not while handling a resolution result.
  for (auto& sc : subchannels_) sc->Connect();
}

void ChannelImpl::LoopPickFirstSelect(Subchannel* sc) {
  selected_ = sc;
  pick_first_trying_ = false;
  // After a pass where every address failed, all were retried: keep the
  // first that connected, close the others.
  for (auto& other : subchannels_) {
    if (other.get() != sc) other->Disconnect();
  }
}

void ChannelImpl::OnSubchannelStateChange(Subchannel* sc) {
  if (closing_) return;
  if (std::none_of(subchannels_.begin(), subchannels_.end(),
                   [sc](const auto& s) { return s.get() == sc; })) {
    return;  // Retired.
  }
  const ConnectivityState state = sc->state();
  if (state == ConnectivityState::kTransientFailure) {
    last_error_ = absl::UnavailableError(
        absl::StrCat("failed to connect to all addresses; last error: ",
                     sc->last_error().message()));
  }
  const bool lost = state == ConnectivityState::kIdle &&
                    sc->previous_state() == ConnectivityState::kReady;
  // Re-resolve (rate-limited) when a connection was lost and, as gRPC, when
  // an attempt failed: round_robin always, pick_first once its pass over
  // every address failed (the addresses may be stale).
  const bool failed =
      state == ConnectivityState::kTransientFailure &&
      (round_robin_ || (selected_ == nullptr && !pick_first_trying_ && !idle_));
  if (lost || failed) LoopResolve(/*now=*/false);
  if (round_robin_) {
    if (state == ConnectivityState::kIdle && !idle_) sc->Connect();
  } else if (sc == selected_) {
    if (state != ConnectivityState::kReady) {
      // The connection was lost: IDLE until the next call.
      selected_ = nullptr;
      idle_ = true;
      transient_failure_ = false;
    }
  } else if (selected_ != nullptr) {
    // pick_first keeps one connection: one that came up late is closed.
    if (state == ConnectivityState::kReady) sc->Disconnect();
  } else if (!idle_) {
    if (state == ConnectivityState::kReady) {
      LoopPickFirstSelect(sc);
    } else if (pick_first_trying_) {
      if (state == ConnectivityState::kTransientFailure &&
          pick_first_index_ < subchannels_.size() &&
          subchannels_[pick_first_index_].get() == sc) {
        LoopPickFirstFrom(pick_first_index_ + 1);
      }
    } else if (state == ConnectivityState::kIdle) {
      sc->Connect();  // Retrying every address after a failed pass.
    }
  } else if (state == ConnectivityState::kReady) {
    // The channel went IDLE while this one was still connecting: nothing
    // wants it.
    sc->Disconnect();
  }
  LoopUpdateState();
}

void ChannelImpl::LoopUpdateState() {
  if (closing_) return;
  ConnectivityState state;
  bool ready = false;
  if (round_robin_) {
    ready = std::any_of(subchannels_.begin(), subchannels_.end(),
                        [](const auto& sc) {
                          return sc->state() == ConnectivityState::kReady;
                        });
    if (!ready && !subchannels_.empty() &&
        std::all_of(subchannels_.begin(), subchannels_.end(),
                    [](const auto& sc) { return sc->failed_since_ready(); })) {
      transient_failure_ = true;
    }
  } else {
    ready =
        selected_ != nullptr && selected_->state() == ConnectivityState::kReady;
  }
  if (!target_status_.ok()) {
    state = ConnectivityState::kTransientFailure;
  } else if (ready) {
    transient_failure_ = false;
    state = ConnectivityState::kReady;
  } else if (idle_) {
    state = ConnectivityState::kIdle;
  } else if (LoopFailing()) {
    state = ConnectivityState::kTransientFailure;
  } else {
    state = ConnectivityState::kConnecting;
  }
  LoopSetState(state);
  LoopDrainQueue();
}

// ---- Subchannel::Owner ----

ClientTransportOptions ChannelImpl::SubchannelTransportOptions() {
  ClientTransportOptions options;
  options.connection.role = transport::Role::kClient;
  options.connection.first_local_stream_id = first_stream_id_for_test_;
  // Calls over the server's MAX_CONCURRENT_STREAMS wait for a stream until
  // their deadline: no count limit (each costs what it holds, README).
  options.connection.max_pending_streams = std::numeric_limits<uint32_t>::max();
  options.keepalive_time = keepalive_time_;
  options.keepalive_timeout = args_.keepalive_timeout;
  options.keepalive_permit_without_calls = args_.keepalive_permit_without_calls;
  options.metadata = MetadataLimits::FromArgs(args_.max_metadata_size,
                                              args_.absolute_max_metadata_size);
  return options;
}

void ChannelImpl::OnSubchannelClosed(Subchannel* subchannel) {
  // A retired subchannel's last connection closed.
  retired_.erase(std::remove_if(retired_.begin(), retired_.end(),
                                [subchannel](const auto& sc) {
                                  return sc.get() == subchannel;
                                }),
                 retired_.end());
}

void ChannelImpl::OnSubchannelTooManyPings() {
  // As gRPC: the server wants fewer pings; later connections ping half as
  // often.
  if (keepalive_time_ != absl::InfiniteDuration()) keepalive_time_ *= 2;
}

}  // namespace internal

// ---- rpc::LoopGroup (rpc/channel.h) ----

LoopGroup::LoopGroup(std::unique_ptr<internal::LoopGroupImpl> impl)
    : impl_(std::move(impl)) {}

LoopGroup::~LoopGroup() {
  transport::EventLoopGroup& group = impl_->group();
  for (size_t i = 0; i < group.size(); ++i) {
    if (group.loop(i)->IsInLoopThread()) {
      // A thread cannot join itself.
      std::thread([impl = std::move(impl_)]() mutable {
        impl.reset();
      }).detach();
      return;
    }
  }
}

size_t LoopGroup::size() const { return impl_->group().size(); }

absl::StatusOr<std::shared_ptr<LoopGroup>> LoopGroup::Create(int num_loops) {
  transport::EventLoopGroup::Options options;
  options.num_threads = num_loops;
  options.name_prefix = "rpc-loops-";
  absl::StatusOr<std::unique_ptr<transport::EventLoopGroup>> group =
      transport::EventLoopGroup::Create(options);
  if (!group.ok()) return group.status();
  return internal::LoopGroupAccess::Make(std::move(*group));
}

}  // namespace rpc
