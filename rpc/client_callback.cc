#include "rpc/client_callback.h"

#include <atomic>
#include <utility>
#include <vector>

#include "google/protobuf/message_lite.h"
#include "rpc/client_stream.h"
#include "rpc/internal/client_call.h"
#include "rpc/wire/zero_copy_stream.h"
#include "transport/io/event_loop.h"
#include "transport/slice/slice.h"

namespace rpc {
namespace internal {

// One callback call: the ClientCall's observer and the reactor's driver.
// Everything but the hold count is the loop thread's (operations from other
// threads, and from reactions of other calls, are posted). It keeps itself
// and its channel alive (self_, channel_) until OnDone.
class ClientReactorCall final
    : public ClientCallObserver,
      public std::enable_shared_from_this<ClientReactorCall> {
 public:
  ClientReactorCall(std::shared_ptr<ChannelInterface> channel,
                    std::shared_ptr<ClientCall> call, ClientContext* ctx,
                    ClientReactorKind kind, google::protobuf::MessageLite* resp,
                    ClientReactor* reactor)
      : channel_(std::move(channel)),
        call_(std::move(call)),
        ctx_(ctx),
        reactor_(reactor),
        response_(resp),
        kind_(kind) {}

  // Before the call is bound to its context (ClientCallBase::BindCall): a
  // context cancelled already cancels the call then, and that must reach
  // this observer, posted (SetObserver makes the call's tasks async).
  void Bind(transport::SliceBuffer request, bool has_request) {
    self_ = shared_from_this();
    request_ = std::move(request);
    has_request_ = has_request;
    reactor_->call_ = this;
    call_->SetObserver(this);
  }

  // ---- Operations (any thread) ----
  void StartCall() {
    Run([](ClientReactorCall* c) { c->LoopStartCall(); });
  }
  void StartRead(google::protobuf::MessageLite* msg) {
    Run([msg](ClientReactorCall* c) { c->LoopStartRead(msg); });
  }
  void StartWrite(const google::protobuf::MessageLite& msg,
                  WriteOptions options) {
    transport::SliceBuffer payload;
    const bool ok = SerializeToSliceBuffer(msg, &payload);
    Run([ok, options,
         payload = std::move(payload)](ClientReactorCall* c) mutable {
      c->LoopStartWrite(ok, std::move(payload), options);
    });
  }
  void StartWritesDone() {
    Run([](ClientReactorCall* c) { c->LoopStartWritesDone(); });
  }
  void AddHolds(int n) { holds_.fetch_add(n, std::memory_order_relaxed); }
  // On the loop, in order with the operations made before it: a StartRead
  // then RemoveHold from another thread must not let OnDone in between.
  // More RemoveHold than holds added is misuse: the call ends with INTERNAL.
  void RemoveHold() {
    Run([](ClientReactorCall* c) {
      if (c->holds_.fetch_sub(1, std::memory_order_acq_rel) <= 0) {
        c->holds_.fetch_add(1, std::memory_order_relaxed);
        c->LoopFail("RemoveHold without a hold");
      }
    });
  }

  // ---- ClientCallObserver (loop thread) ----
  void LoopOnInitialMetadata() override {
    ctx_->FetchInitialMetadata();  // Does not wait: the headers are here.
    initial_ready_ = true;
    initial_ok_ = true;
    LoopDeliver();
  }
  void LoopOnMessage(transport::SliceBuffer payload) override {
    if (kind_ == ClientReactorKind::kUnary ||
        kind_ == ClientReactorKind::kClientStreaming) {
      const size_t size = payload.size();
      if (!got_response_) {
        got_response_ = true;
        response_ok_ = ParseFromSliceBuffer(payload, response_);
      }
      payload.Clear();
      call_->LoopMessageConsumed(size);
      if (!response_ok_) LoopFail("error parsing response message");
      return;
    }
    queued_.push_back(std::move(payload));
    LoopDeliver();
  }
  void LoopOnWriteCredit() override {
    if (!write_waiting_) return;
    write_waiting_ = false;
    write_ready_ = true;
    write_ok_ = true;
    LoopDeliver();
  }
  void LoopOnStatus(bool clean) override {
    if (!started_) {
      // Cancelled before StartCall (a context cancelled first, or destroyed
      // with the call never started): the context may be gone; StartCall
      // takes the status.
      status_pending_ = true;
      status_pending_clean_ = clean;
      return;
    }
    LoopTakeStatus(clean);
  }

 private:
  void LoopTakeStatus(bool clean) {
    if (!clean) {
      // Cancelled, reset, past its deadline: a read now ends the stream,
      // as a blocking Read does.
      queued_.clear();
      queued_head_ = 0;
    }
    status_ = ctx_->FinishCall();  // Does not wait: the call has its status.
    if (status_.ok() && (kind_ == ClientReactorKind::kUnary ||
                         kind_ == ClientReactorKind::kClientStreaming)) {
      if (!got_response_) {
        status_ = Status(StatusCode::INTERNAL, "no response message");
      } else if (!response_ok_) {
        // The status landed before the posted message failed to parse (a
        // co-poller read both; the parse's LoopFail came too late).
        status_ =
            Status(StatusCode::INTERNAL, "error parsing response message");
      }
    }
    status_ready_ = true;
    initial_ready_ = true;  // ok stays false when no headers came.
    if (write_waiting_) {
      write_waiting_ = false;
      write_ready_ = true;
      write_ok_ = false;
    }
    LoopDeliver();
  }

  // An operation applies at once only inside a reaction of this call (the
  // running LoopDeliver delivers what it made due, after the reaction
  // returns). From another thread, and from the loop thread outside this
  // call's reactions (a reaction of another call, a task), it is posted: no
  // reaction ever runs inside a Start* (grpc++'s rule; a proxy holding its
  // mutex around B's StartWrite in A's OnReadDone must not deadlock).
  template <typename F>
  void Run(F f) {
    transport::EventLoop* loop = call_->loop();
    if (loop == nullptr) {
      // No loop: a call failed at its creation (the header: its reactions
      // run on the thread that calls StartCall, inside it).
      Operate(f);
      return;
    }
    // (An inline runner, RunningInline, never runs reactions: posted.)
    if (loop->IsInLoopThread() && !transport::EventLoop::RunningInline() &&
        in_reaction_) {
      f(this);
      return;
    }
    loop->Post([self = shared_from_this(), f = std::move(f)]() mutable {
      self->Operate(f);
    });
  }

  // Runs an operation's body with reactions held back (a failure inside it
  // ends the call through LoopOnStatus before the body recorded its own
  // reaction), then delivers what is due, once.
  template <typename F>
  void Operate(F& f) {
    if (in_reaction_) {
      f(this);
      return;
    }
    in_reaction_ = true;
    f(this);
    in_reaction_ = false;
    LoopDeliver();
  }

  // Misuse and local errors: the call ends with INTERNAL.
  void LoopFail(const char* what) {
    if (call_->loop() == nullptr) return;  // Failed already.
    call_->LoopFail(Status(StatusCode::INTERNAL, what));
  }

  void LoopStartCall() {
    if (started_) {
      LoopFail("StartCall called twice");
      return;
    }
    started_ = true;
    if (call_->loop() == nullptr) {
      // The call failed at its creation: its status is there.
      LoopTakeStatus(/*clean=*/false);
      return;
    }
    if (status_pending_) {
      LoopTakeStatus(status_pending_clean_);  // Cancelled before StartCall.
      return;
    }
    const bool end = kind_ == ClientReactorKind::kUnary ||
                     kind_ == ClientReactorKind::kServerStreaming;
    call_->LoopBegin(has_request_ ? &request_ : nullptr, end);
    request_.Clear();
    LoopDeliver();
  }

  void LoopStartRead(google::protobuf::MessageLite* msg) {
    if (read_target_ != nullptr) {
      LoopFail("StartRead before the previous OnReadDone");
      return;
    }
    read_target_ = msg;
    LoopDeliver();
  }

  void LoopStartWrite(bool serialized, transport::SliceBuffer payload,
                      WriteOptions options) {
    if (write_waiting_ || write_ready_) {
      LoopFail("StartWrite before the previous OnWriteDone");
      return;
    }
    if (writes_closed_) {
      LoopFail("StartWrite after the end of the requests");
      return;
    }
    writes_closed_ = options.is_last_message();
    if (status_ready_ || call_->loop() == nullptr) {
      write_ready_ = true;
      write_ok_ = false;
    } else if (!serialized) {
      LoopFail("error serializing request");
      write_ready_ = true;
      write_ok_ = false;
    } else if (!call_->LoopSend(std::move(payload), options.is_last_message(),
                                options.get_no_compression())) {
      write_ready_ = true;
      write_ok_ = false;
    } else if (call_->loop_write_within_bound()) {
      write_ready_ = true;
      write_ok_ = true;
    } else {
      write_waiting_ = true;
    }
    LoopDeliver();
  }

  void LoopStartWritesDone() {
    if (writes_done_started_ || writes_closed_) {
      LoopFail(writes_done_started_ ? "StartWritesDone called twice"
                                    : "StartWritesDone after StartWriteLast");
      return;
    }
    writes_done_started_ = true;
    writes_closed_ = true;
    writes_done_ok_ = !status_ready_;
    if (!status_ready_ && call_->loop() != nullptr) call_->LoopHalfClose();
    writes_done_ready_ = true;
    LoopDeliver();
  }

  // Runs the reactions that are due, one at a time, in the header's order;
  // never from inside another reaction of this call.
  void LoopDeliver() {
    if (in_reaction_ || !started_ || done_) return;
    in_reaction_ = true;
    for (;;) {
      if (initial_ready_ && !initial_done_) {
        initial_done_ = true;
        reactor_->OnReadInitialMetadataDone(initial_ok_);
        continue;
      }
      if (read_target_ != nullptr && initial_done_ &&
          (queued_head_ < queued_.size() || status_ready_)) {
        google::protobuf::MessageLite* target = read_target_;
        read_target_ = nullptr;
        bool ok = false;
        if (queued_head_ < queued_.size()) {
          transport::SliceBuffer payload = std::move(queued_[queued_head_]);
          if (++queued_head_ == queued_.size()) {
            queued_.clear();
            queued_head_ = 0;
          } else if (queued_head_ >= 16 && queued_head_ * 2 >= queued_.size()) {
            // A reader that never quite catches up: drop the read slots.
            queued_.erase(
                queued_.begin(),
                queued_.begin() + static_cast<ptrdiff_t>(queued_head_));
            queued_head_ = 0;
          }
          const size_t size = payload.size();
          ok = ParseFromSliceBuffer(payload, target);
          payload.Clear();
          call_->LoopMessageConsumed(size);
          if (!ok) {
            LoopFail("error parsing response message");
            queued_.clear();
            queued_head_ = 0;
          }
        }
        reactor_->OnReadDone(ok);
        continue;
      }
      if (write_ready_) {
        write_ready_ = false;
        reactor_->OnWriteDone(write_ok_);
        continue;
      }
      if (writes_done_ready_) {
        writes_done_ready_ = false;
        reactor_->OnWritesDoneDone(writes_done_ok_);
        continue;
      }
      if (status_ready_ && initial_done_ && read_target_ == nullptr &&
          !write_waiting_ && holds_.load(std::memory_order_acquire) <= 0) {
        done_ = true;
        call_->SetObserver(nullptr);
        queued_.clear();
        // The reactor may delete itself (and the context) in OnDone; this
        // object goes at the end of this scope.
        std::shared_ptr<ClientReactorCall> self = std::move(self_);
        ClientReactor* reactor = reactor_;
        reactor->OnDone(status_);
        return;
      }
      break;
    }
    in_reaction_ = false;
  }

  std::shared_ptr<ClientReactorCall> self_;
  // The call keeps its channel (the application may drop stub and channel
  // once the reactor is bound); destroyed after call_.
  const std::shared_ptr<ChannelInterface> channel_;
  const std::shared_ptr<ClientCall> call_;
  ClientContext* const ctx_;
  ClientReactor* const reactor_;
  google::protobuf::MessageLite* const response_;
  const ClientReactorKind kind_;
  transport::SliceBuffer request_;
  bool has_request_ = false;
  std::atomic<int> holds_{0};

  // Loop only.
  // Arrived, not yet read: queued_[queued_head_...] (a std::deque would
  // allocate for every call, unary ones too).
  std::vector<transport::SliceBuffer> queued_;
  size_t queued_head_ = 0;
  google::protobuf::MessageLite* read_target_ = nullptr;  // StartRead's.
  Status status_;
  bool started_ = false;
  bool in_reaction_ = false;
  bool done_ = false;
  bool initial_ready_ = false;
  bool initial_ok_ = false;
  bool initial_done_ = false;
  bool status_ready_ = false;
  bool status_pending_ = false;  // The status came before StartCall.
  bool status_pending_clean_ = false;
  bool got_response_ = false;
  bool response_ok_ = false;
  bool write_waiting_ = false;  // Sent, over the write bound.
  bool write_ready_ = false;    // OnWriteDone(write_ok_) is due.
  bool write_ok_ = false;
  bool writes_closed_ = false;  // StartWritesDone or StartWriteLast.
  bool writes_done_started_ = false;
  bool writes_done_ready_ = false;
  bool writes_done_ok_ = false;
};

void ClientReactor::StartCallImpl() {
  if (call_ != nullptr) call_->StartCall();
}
void ClientReactor::StartReadImpl(google::protobuf::MessageLite* msg) {
  if (call_ != nullptr) call_->StartRead(msg);
}
void ClientReactor::StartWriteImpl(const google::protobuf::MessageLite& msg,
                                   WriteOptions options) {
  if (call_ != nullptr) call_->StartWrite(msg, options);
}
void ClientReactor::StartWritesDoneImpl() {
  if (call_ != nullptr) call_->StartWritesDone();
}
void ClientReactor::AddHoldImpl(int holds) {
  if (call_ != nullptr) call_->AddHolds(holds);
}
void ClientReactor::RemoveHoldImpl() {
  if (call_ != nullptr) call_->RemoveHold();
}

void BindClientReactor(const std::shared_ptr<ChannelInterface>& channel,
                       const std::string& method, ClientContext* ctx,
                       ClientReactorKind kind,
                       const google::protobuf::MessageLite* request,
                       google::protobuf::MessageLite* response,
                       ClientReactor* reactor) {
  transport::SliceBuffer payload;
  bool serialized = true;
  if (request != nullptr)
    serialized = SerializeToSliceBuffer(*request, &payload);
  std::shared_ptr<ClientCall> call =
      ClientCallBase::NewCall(channel, method, ctx);
  if (kind == ClientReactorKind::kUnary ||
      kind == ClientReactorKind::kClientStreaming) {
    call->set_single_response();
  }
  auto c = std::make_shared<ClientReactorCall>(channel, call, ctx, kind,
                                               response, reactor);
  c->Bind(std::move(payload), request != nullptr);
  ClientCallBase::BindCall(call, ctx);
  if (!serialized && call->loop() != nullptr) {
    call->Cancel(Status(StatusCode::INTERNAL, "error serializing request"));
  }
}

namespace {

// The std::function form: a reactor of its own, deleted when done.
class FunctionUnaryReactor final : public ClientUnaryReactor {
 public:
  explicit FunctionUnaryReactor(std::function<void(Status)> done)
      : done_(std::move(done)) {}
  void OnDone(const Status& status) override {
    std::function<void(Status)> done = std::move(done_);
    delete this;
    done(status);
  }

 private:
  std::function<void(Status)> done_;
};

}  // namespace

void CallbackUnaryCall(const std::shared_ptr<ChannelInterface>& channel,
                       const std::string& method, ClientContext* ctx,
                       const google::protobuf::MessageLite* request,
                       google::protobuf::MessageLite* response,
                       std::function<void(Status)> done) {
  auto* reactor = new FunctionUnaryReactor(std::move(done));
  BindClientReactor(channel, method, ctx, ClientReactorKind::kUnary, request,
                    response, reactor);
  reactor->StartCall();
}

}  // namespace internal
}  // namespace rpc
