#include "rpc/internal/subchannel.h"

#include <algorithm>
#include <cassert>
#include <utility>

#include "absl/strings/str_cat.h"
#include "transport/io/tcp.h"
#include "transport/tls/tls_endpoint.h"

namespace rpc {
namespace internal {

Subchannel::Subchannel(Owner* owner, transport::EventLoop* loop,
                       transport::SocketAddress address, const Options& options)
    : owner_(owner),
      loop_(loop),
      address_(std::move(address)),
      options_(options),
      backoff_(options.backoff),
      self_(std::make_shared<Subchannel*>(this)) {}

Subchannel::~Subchannel() {
  *self_ = nullptr;
  if (backoff_timer_ != transport::EventLoop::kInvalidTimer) {
    loop_->Cancel(backoff_timer_);
  }
  attempt_.Cancel();
  current_ = nullptr;
  auto transports = std::move(transports_);
  transports.clear();  // Fails their calls.
}

void Subchannel::SetState(ConnectivityState state) {
  if (state_ == state) return;
  previous_state_ = state_;
  state_ = state;
  if (!shut_down_) owner_->OnSubchannelStateChange(this);
}

void Subchannel::Shutdown(bool notify_closed) {
  notify_closed_ = notify_closed;
  if (!shut_down_) {
    shut_down_ = true;
    if (backoff_timer_ != transport::EventLoop::kInvalidTimer) {
      loop_->Cancel(backoff_timer_);
      backoff_timer_ = transport::EventLoop::kInvalidTimer;
    }
    // Closes the socket of an attempt in flight now; its callback never runs.
    attempt_.Cancel();
    ClientTransport* transport = current_;
    current_ = nullptr;
    previous_state_ = state_;
    state_ = ConnectivityState::kIdle;
    if (transport != nullptr) transport->GracefulClose();
  }
  MaybeNotifyClosed();  // Last: may destroy the subchannel.
}

void Subchannel::MaybeNotifyClosed() {
  if (!shut_down_ || !notify_closed_ || closed_notified_ ||
      !transports_.empty()) {
    return;
  }
  closed_notified_ = true;
  owner_->OnSubchannelClosed(this);
}

void Subchannel::Connect() {
  if (shut_down_ || state_ != ConnectivityState::kIdle) return;
  SetState(ConnectivityState::kConnecting);
  const absl::Duration wait = earliest_attempt_ - absl::Now();
  if (wait > absl::ZeroDuration()) {
    // The last connection was lost soon after it was made: attempts still
    // start at least initial_backoff apart.
    backoff_timer_ = loop_->RunAfter(wait, [self = self_] {
      if (*self == nullptr) return;
      (*self)->backoff_timer_ = transport::EventLoop::kInvalidTimer;
      (*self)->StartAttempt();
    });
    return;
  }
  StartAttempt();
}

void Subchannel::Disconnect() {
  if (current_ == nullptr) return;
  ClientTransport* transport = current_;
  current_ = nullptr;
  previous_state_ = state_;
  state_ = ConnectivityState::kIdle;
  transport->GracefulClose();  // OnTransportDraining: no longer current.
}

void Subchannel::StartAttempt() {
  const absl::Time now = absl::Now();
  const absl::Duration delay = backoff_.NextAttemptDelay();
  attempt_start_ = now;
  next_attempt_ = now + delay;
  const absl::Duration timeout = backoff_.ConnectTimeout(delay);
  // Either connect's result as a plain Endpoint, for OnConnected.
  auto done = [self = self_](auto endpoint) {
    if (*self == nullptr) return;
    (*self)->attempt_ = transport::ConnectHandle();
    if (!endpoint.ok()) {
      (*self)->OnConnected(endpoint.status());
    } else {
      (*self)->OnConnected(
          std::unique_ptr<transport::Endpoint>(std::move(*endpoint)));
    }
  };
  // One attempt at a time: `done` empties the handle, Shutdown cancels it.
  assert(!attempt_.active());
  if (options_.tls != nullptr) {
    attempt_ =
        transport::TlsConnect(loop_, address_, options_.tls, options_.tls_name,
                              timeout, std::move(done));
    return;
  }
  attempt_ = transport::TcpConnect(loop_, address_, timeout, std::move(done));
}

void Subchannel::OnAttemptFailed(absl::Status error) {
  failed_since_ready_ = true;
  last_error_ = std::move(error);
  // At least 1 ms: a zero delay must not turn into a busy loop.
  const absl::Duration wait =
      std::max(next_attempt_ - absl::Now(), absl::Milliseconds(1));
  backoff_timer_ = loop_->RunAfter(wait, [self = self_] {
    if (*self == nullptr) return;
    (*self)->backoff_timer_ = transport::EventLoop::kInvalidTimer;
    (*self)->SetState(ConnectivityState::kIdle);
  });
  SetState(ConnectivityState::kTransientFailure);
}

void Subchannel::OnConnected(
    absl::StatusOr<std::unique_ptr<transport::Endpoint>> endpoint) {
  // Shutdown cancels the attempt, so this is not reached after it; kept as a
  // guard: a connection made after Shutdown is closed at once (dropped).
  if (shut_down_) return;
  if (!endpoint.ok()) {
    OnAttemptFailed(absl::UnavailableError(
        absl::StrCat("failed to connect to ", address_.ToString(), ": ",
                     endpoint.status().message())));
    return;
  }
  ClientTransport::Host* host = this;
  auto t = std::make_unique<ClientTransport>(
      host, std::move(*endpoint), owner_->SubchannelTransportOptions());
  current_ = t.get();
  transports_[current_] = std::move(t);
  starting_ = true;
  current_->Start();
  starting_ = false;
  if (current_ == nullptr) {
    // Drained or closed before it was READY (Start read a buffered GOAWAY or
    // EOF): a failed attempt, with backoff.
    OnAttemptFailed(absl::UnavailableError(absl::StrCat(
        "connection to ", address_.ToString(), " closed before it was ready")));
    return;
  }
  backoff_.Reset();
  earliest_attempt_ = attempt_start_ + options_.backoff.initial_backoff;
  failed_since_ready_ = false;
  last_error_ = absl::OkStatus();
  SetState(ConnectivityState::kReady);
}

void Subchannel::OnTransportDraining(ClientTransport* transport) {
  if (current_ != transport) return;
  current_ = nullptr;
  if (starting_) return;  // OnConnected: a failed attempt.
  SetState(ConnectivityState::kIdle);
}

void Subchannel::OnTransportClosed(ClientTransport* transport) {
  OnTransportDraining(transport);
  loop_->Post([self = self_, transport] {
    if (*self == nullptr) return;
    (*self)->transports_.erase(transport);
    (*self)->MaybeNotifyClosed();  // Last: may destroy the subchannel.
  });
}

void Subchannel::OnTransportTooManyPings(ClientTransport* /*transport*/) {
  if (!shut_down_) owner_->OnSubchannelTooManyPings();
}

}  // namespace internal
}  // namespace rpc
