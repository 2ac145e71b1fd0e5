#include "rpc/client_context.h"

#include <utility>

#include "rpc/channel_interface.h"
#include "rpc/internal/client_call.h"

namespace rpc {

ClientContext::ClientContext() = default;

ClientContext::~ClientContext() {
  std::shared_ptr<internal::ClientCall> call;
  {
    absl::MutexLock lock(&mu_);
    call = std::move(call_);
  }
  // A call abandoned before its status (a reader not finished) is cancelled
  // so that its stream does not linger.
  if (call != nullptr && !call->has_status()) {
    call->Cancel(Status(StatusCode::CANCELLED, "abandoned"));
  }
  call.reset();
  // The channel (and its loop) must outlive the posted cancel: channel_ is
  // released last, and Channel's destructor runs queued tasks first.
}

void ClientContext::TryCancel() {
  std::shared_ptr<internal::ClientCall> call;
  {
    absl::MutexLock lock(&mu_);
    cancel_requested_ = true;
    call = call_;
  }
  if (call != nullptr) call->Cancel(Status(StatusCode::CANCELLED, "Cancelled"));
}

const Metadata& ClientContext::GetServerInitialMetadata() const {
  return received_initial_;
}

const Metadata& ClientContext::GetServerTrailingMetadata() const {
  return received_trailing_;
}

std::string ClientContext::peer() const {
  absl::MutexLock lock(&mu_);
  return call_ != nullptr ? call_->peer() : std::string();
}

std::shared_ptr<const AuthContext> ClientContext::auth_context() const {
  absl::MutexLock lock(&mu_);
  return call_ != nullptr ? call_->auth_context() : nullptr;
}

void ClientContext::set_call(std::shared_ptr<internal::ClientCall> call,
                             std::shared_ptr<ChannelInterface> channel) {
  bool cancel;
  call->set_wait_for_ready(wait_for_ready_);
  {
    absl::MutexLock lock(&mu_);
    call_ = call;
    cancel = cancel_requested_;
  }
  channel_ = std::move(channel);
  if (cancel) call->Cancel(Status(StatusCode::CANCELLED, "Cancelled"));
}

std::shared_ptr<internal::ClientCall> ClientContext::call() const {
  absl::MutexLock lock(&mu_);
  return call_;
}

Status ClientContext::FinishCall() {
  std::shared_ptr<internal::ClientCall> c = call();
  if (c == nullptr) return Status(StatusCode::INTERNAL, "call not started");
  // Initial metadata fetched already is final, and the application may be
  // reading it (a callback call after OnReadInitialMetadataDone).
  return c->Finish(initial_fetched_ ? nullptr : &received_initial_,
                   &received_trailing_);
}

void ClientContext::FetchInitialMetadata() {
  std::shared_ptr<internal::ClientCall> c = call();
  if (c == nullptr) return;
  c->WaitForInitialMetadata();
  if (initial_fetched_) return;
  c->CopyInitialMetadata(&received_initial_);
  initial_fetched_ = true;
}

}  // namespace rpc
