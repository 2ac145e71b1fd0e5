#include "rpc/server_callback.h"

#include <utility>

#include "rpc/internal/server_call.h"

namespace rpc {
namespace internal {

namespace {
// The call whose method runs on this thread and has no reactor yet: the
// first server reactor constructed binds to it.
thread_local ServerCall* t_unbound_call = nullptr;
}  // namespace

ServerReactorBase::ServerReactorBase() : call_(t_unbound_call) {
  t_unbound_call = nullptr;
}

void ServerReactorBase::StartSendInitialMetadataBase() {
  if (call_ == nullptr) {
    used_unbound_ = true;
    return;
  }
  call_->ReactorSendInitialMetadata();
}

void ServerReactorBase::StartReadBase(google::protobuf::MessageLite* msg) {
  if (call_ == nullptr) {
    used_unbound_ = true;
    return;
  }
  call_->ReactorRead(msg);
}

void ServerReactorBase::StartWriteBase(const google::protobuf::MessageLite* msg,
                                       WriteOptions options) {
  if (call_ == nullptr) {
    used_unbound_ = true;
    return;
  }
  call_->ReactorWrite(msg, options);
}

void ServerReactorBase::FinishBase(Status status) {
  if (call_ == nullptr) {
    used_unbound_ = true;
    return;
  }
  call_->ReactorFinish(std::move(status));
}

void ServerReactorBase::StartWriteAndFinishBase(
    const google::protobuf::MessageLite* msg, WriteOptions options,
    Status status) {
  if (call_ == nullptr) {
    used_unbound_ = true;
    return;
  }
  call_->ReactorWriteAndFinish(msg, options, std::move(status));
}

void CallbackCallOps::Start(std::shared_ptr<ServerCall> call,
                            CallbackCallState* state,
                            google::protobuf::MessageLite* request,
                            const google::protobuf::MessageLite* response,
                            absl::FunctionRef<ServerReactorBase*()> method) {
  ServerCall* c = call.get();
  // The state's context holds `call`: the call lives until the state is
  // released (after OnDone).
  c->callback_state_ = {
      state, CallbackStateDeleter{[](CallbackCallState* s) { delete s; }}};
  if (c->live_callback_calls != nullptr) {
    c->live_callback_calls->fetch_add(1, std::memory_order_relaxed);
  }
  if (request != nullptr) {
    if (Status s = c->LoopTakeRequest(request); !s.ok()) {
      c->LoopAbort(s);
      c->ReleaseCallbackState();
      return;
    }
  }
  c->unary_response_ = response;
  // Operations the method (or the reactor's constructor) starts apply now;
  // their reactions wait until it returned.
  c->in_pump_ = true;
  ServerCall* const outer = t_unbound_call;
  t_unbound_call = c;
  ServerReactorBase* reactor = method();
  t_unbound_call = outer;
  c->in_pump_ = false;
  c->LoopBind(reactor);
  c->Pump();
}

}  // namespace internal

CallbackServerContext::CallbackServerContext(
    std::shared_ptr<internal::ServerCall> call)
    : ServerContext(std::move(call)) {}

CallbackServerContext::~CallbackServerContext() = default;

ServerUnaryReactor* CallbackServerContext::DefaultReactor() {
  if (default_reactor_ == nullptr) {
    default_reactor_ = std::make_unique<internal::DefaultServerUnaryReactor>();
    default_reactor_->call_ = call();
  }
  return default_reactor_.get();
}

}  // namespace rpc
