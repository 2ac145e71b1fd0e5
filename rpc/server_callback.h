// The server's callback API, in grpc++'s shapes (grpcpp/support/
// server_callback.h): a `Foo::CallbackService` method returns a reactor that
// drives the call by starting operations (StartRead, StartWrite, Finish, ...)
// and is told of their completion through reactions (OnReadDone,
// OnWriteDone, ...). No thread is held while a call waits.
//
//   class Greeter final : public helloworld::Greeter::CallbackService {
//     rpc::ServerUnaryReactor* SayHello(rpc::CallbackServerContext* ctx,
//                                       const HelloRequest* req,
//                                       HelloReply* reply) override {
//       reply->set_message("Hello " + req->name());
//       rpc::ServerUnaryReactor* r = ctx->DefaultReactor();
//       r->Finish(rpc::Status::OK);
//       return r;
//     }
//   };
//
// The four reactors: ServerUnaryReactor (one request, one response, given to
// the method), ServerReadReactor<Req> (client streaming: StartRead the
// requests, Finish sends the response given to the method),
// ServerWriteReactor<Resp> (server streaming: the request is given to the
// method, StartWrite the responses), ServerBidiReactor<Req, Resp>.
//
// Threading. Reactions run inline on the call's connection loop thread (the
// thread that reads the socket), one at a time per call. A reaction must
// never block (no waiting on locks held long, no blocking calls, no sleeps):
// the loop serves every other call of its connections meanwhile. Hand long
// work to a thread of your own and call Start*/Finish from there.
// * Start* and Finish may be called from any thread. Called on the loop
//   thread (in a reaction, in the method, in the reactor's constructor) they
//   apply at once; from another thread they are posted to the loop, in the
//   order they were made.
// * No reaction runs inside another reaction of the same call: a StartRead
//   in OnReadDone whose message is already here gets its OnReadDone after
//   the current reaction returned.
// * No reaction runs inside a Start* or Finish made outside the call's own
//   reactions (as in grpc++): one call's reaction may start operations on
//   another call of the same loop (a chat room writing to every member under
//   its lock); they apply at once, and the other call's reactions (its
//   OnWriteDone, its OnDone) come after the current reaction returned, at
//   the end of the loop's iteration.
// * A reactor may call Start* in its constructor when the method constructs
//   it (the call is bound to the first server reactor constructed while the
//   method runs, on its thread); reactions come only after the method
//   returned.
//
// Order and lifetime.
// * At most one read and one write may be outstanding: StartRead before the
//   previous OnReadDone, StartWrite before the previous OnWriteDone, or a
//   StartWrite after StartWriteLast, is misuse, and so is a second
//   StartSendInitialMetadata: the call ends with INTERNAL naming it
//   ("StartWrite before the previous OnWriteDone") and each such operation
//   still gets its reaction (false). After Finish a StartWrite
//   fails (OnWriteDone(false)) and a second Finish is ignored: the first
//   status already went out.
// * OnReadDone(false): no more requests (the client half-closed, or the call
//   is over). OnWriteDone(true): the message is on its way (its octets left
//   the connection's queue or fit within the write bound, so a client that
//   does not read stops the OnWriteDone's: memory stays bounded).
//   OnSendInitialMetadataDone(ok) likewise for the response headers.
// * Flow control is end to end: request messages are read only as fast as
//   the reactor calls StartRead; a reactor that does not read holds the
//   client back through the HTTP/2 stream window once about the server's
//   read bound of octets waits.
// * OnCancel: at most once, when the call ends without the reactor's status
//   (the client cancelled or reset the stream, its deadline passed, the
//   connection failed, the server shut down, or the library ended the call
//   for misuse or a malformed request), and only if Finish had not already
//   sent a status. The reactor must still call Finish (it then sends nothing).
// * OnDone: exactly once, last: after Finish was called and every started
//   operation had its reaction. The reactor may be deleted in OnDone (`delete
//   this`) or any time after; the library never touches it once OnDone
//   returned. The context, request and response given to the method live
//   until OnDone returns.
// * The server's Shutdown cancels the calls in flight (OnCancel) and waits
//   for their reactors' OnDone: a reactor that never calls Finish holds it.

#ifndef RPC_SERVER_CALLBACK_H_
#define RPC_SERVER_CALLBACK_H_

#include <memory>

#include "absl/functional/function_ref.h"
#include "rpc/server_context.h"
#include "rpc/wire/status.h"
#include "rpc/write_options.h"

namespace google::protobuf {
class MessageLite;
}  // namespace google::protobuf

namespace rpc {

class CallbackServerContext;

namespace internal {

class ServerCall;
class CallbackCallOps;

// The non-template core of every server reactor: the operations (on
// MessageLite, which the typed reactors pass on) and the reactions. The call
// (internal::ServerCall, opaque here) implements them.
class ServerReactorBase {
 public:
  // Inline, like every virtual here: no key function, so the vtable and
  // typeinfo are emitted wherever used (//rpc/internal, which drives the
  // reactions, never links against //rpc's server_callback.cc).
  virtual ~ServerReactorBase() = default;
  ServerReactorBase(const ServerReactorBase&) = delete;
  ServerReactorBase& operator=(const ServerReactorBase&) = delete;

  virtual void OnDone() = 0;
  virtual void OnCancel() {}
  virtual void OnSendInitialMetadataDone(bool /*ok*/) {}

 protected:
  // Binds to the call whose method runs on this thread, if any.
  ServerReactorBase();

  void StartSendInitialMetadataBase();
  void StartReadBase(google::protobuf::MessageLite* msg);
  void StartWriteBase(const google::protobuf::MessageLite* msg,
                      WriteOptions options);
  void FinishBase(Status status);
  void StartWriteAndFinishBase(const google::protobuf::MessageLite* msg,
                               WriteOptions options, Status status);

 private:
  friend class ServerCall;
  friend class CallbackCallOps;
  friend class ::rpc::CallbackServerContext;
  // Reactions of the streaming reactors (the typed classes override them as
  // public virtuals).
  virtual void OnReadDoneBase(bool /*ok*/) {}
  virtual void OnWriteDoneBase(bool /*ok*/) {}

  ServerCall* call_ = nullptr;
  // A Start* before the reactor was bound to its call (constructed outside
  // the method and used before the method returned it): misuse, reported at
  // bind time.
  bool used_unbound_ = false;
};

}  // namespace internal

// A unary call: the response is the method's `response`, sent by Finish(OK).
class ServerUnaryReactor : public internal::ServerReactorBase {
 public:
  ServerUnaryReactor() = default;
  // Sends the response headers now (with the context's initial metadata).
  void StartSendInitialMetadata() { StartSendInitialMetadataBase(); }
  // Sends the response (when `status` is OK) and the status.
  void Finish(Status status) { FinishBase(std::move(status)); }
};

// Client streaming: requests by StartRead, the response (the method's
// `response`) by Finish(OK).
template <typename Request>
class ServerReadReactor : public internal::ServerReactorBase {
 public:
  ServerReadReactor() = default;
  void StartSendInitialMetadata() { StartSendInitialMetadataBase(); }
  // Reads the next request into *req (which must live until OnReadDone).
  void StartRead(Request* req) { StartReadBase(req); }
  void Finish(Status status) { FinishBase(std::move(status)); }

  virtual void OnReadDone(bool /*ok*/) {}

 private:
  void OnReadDoneBase(bool ok) final { OnReadDone(ok); }
};

namespace internal {

// The writing side that server streaming and bidi share.
template <typename Response>
class ServerWriterReactorBase : public ServerReactorBase {
 public:
  void StartSendInitialMetadata() { StartSendInitialMetadataBase(); }
  // Sends *resp (which must live until OnWriteDone); the response headers
  // go with the first one.
  void StartWrite(const Response* resp) { StartWrite(resp, WriteOptions()); }
  void StartWrite(const Response* resp, WriteOptions options) {
    StartWriteBase(resp, options);
  }
  // The last message: it and the status leave in one flush once Finish is
  // called (its OnWriteDone comes before), the message first whatever the
  // status (an error too, as grpc++ streams it).
  void StartWriteLast(const Response* resp, WriteOptions options) {
    StartWrite(resp, options.set_last_message());
  }
  // StartWriteLast and Finish(status) in one operation, with no OnWriteDone
  // of its own (as in grpc++): it completes at OnDone, until which *resp
  // must live.
  void StartWriteAndFinish(const Response* resp, WriteOptions options,
                           Status status) {
    StartWriteAndFinishBase(resp, options, std::move(status));
  }
  void Finish(Status status) { FinishBase(std::move(status)); }

  virtual void OnWriteDone(bool /*ok*/) {}

 protected:
  ServerWriterReactorBase() = default;

 private:
  void OnWriteDoneBase(bool ok) final { OnWriteDone(ok); }
};

}  // namespace internal

// Server streaming: the request is the method's `request`; responses by
// StartWrite, then Finish.
template <typename Response>
class ServerWriteReactor : public internal::ServerWriterReactorBase<Response> {
 public:
  ServerWriteReactor() = default;
};

// Bidirectional streaming: StartRead and StartWrite independently (one of
// each outstanding at a time), then Finish.
template <typename Request, typename Response>
class ServerBidiReactor : public internal::ServerWriterReactorBase<Response> {
 public:
  ServerBidiReactor() = default;
  // Reads the next request into *req (which must live until OnReadDone).
  void StartRead(Request* req) { this->StartReadBase(req); }

  virtual void OnReadDone(bool /*ok*/) {}

 private:
  void OnReadDoneBase(bool ok) final { OnReadDone(ok); }
};

namespace internal {

// DefaultReactor's: nothing to do in OnDone (the context owns it).
class DefaultServerUnaryReactor final : public ServerUnaryReactor {
 public:
  void OnDone() override {}
};

}  // namespace internal

// The context of a callback call: a ServerContext (metadata, deadline, peer,
// IsCancelled, ...) with the default unary reactor. Lives until the
// reactor's OnDone returns.
class CallbackServerContext : public ServerContext {
 public:
  explicit CallbackServerContext(std::shared_ptr<internal::ServerCall> call);
  ~CallbackServerContext();

  // A unary reactor that only finishes (its OnDone does nothing), for
  // methods that answer with Finish and need no reactions: construct none,
  // call Finish (now or later, from any thread) and return it.
  ServerUnaryReactor* DefaultReactor();

 private:
  std::unique_ptr<internal::DefaultServerUnaryReactor> default_reactor_;
};

namespace internal {

// Ends the call with `status` at once and deletes itself in OnDone: the
// generated methods' default (UNIMPLEMENTED) for the streaming kinds.
template <typename Reactor>
class FinishOnlyReactor final : public Reactor {
 public:
  explicit FinishOnlyReactor(Status status) { this->Finish(std::move(status)); }
  void OnDone() override { delete this; }
};

// What the library keeps of a callback call besides its ServerCall: the
// context and messages the method was given (freed after OnDone).
class CallbackCallState {
 public:
  explicit CallbackCallState(std::shared_ptr<ServerCall> call)
      : ctx(std::move(call)) {}
  virtual ~CallbackCallState() = default;
  CallbackServerContext ctx;
};

// For generated code: starts a callback call. Takes `state` (owned by the
// call from here); `request` is read before the method runs (unary and
// server streaming), `response` is sent by Finish(OK) (unary and client
// streaming). `method` returns the reactor.
class CallbackCallOps {
 public:
  static void Start(std::shared_ptr<ServerCall> call, CallbackCallState* state,
                    google::protobuf::MessageLite* request,
                    const google::protobuf::MessageLite* response,
                    absl::FunctionRef<ServerReactorBase*()> method);
};

template <typename Req, typename Resp>
class CallbackCallStateWith final : public CallbackCallState {
 public:
  using CallbackCallState::CallbackCallState;
  Req request;
  Resp response;
};

// `fn(CallbackServerContext*, const Req*, Resp*) -> ServerUnaryReactor*`.
template <typename Req, typename Resp, typename F>
void RunCallbackUnary(std::shared_ptr<ServerCall> call, F&& fn) {
  auto* s = new CallbackCallStateWith<Req, Resp>(call);
  CallbackCallOps::Start(std::move(call), s, &s->request, &s->response, [&] {
    return fn(&s->ctx, &s->request, &s->response);
  });
}

// `fn(CallbackServerContext*, Resp*) -> ServerReadReactor<Req>*`.
template <typename Req, typename Resp, typename F>
void RunCallbackClientStreaming(std::shared_ptr<ServerCall> call, F&& fn) {
  struct State final : CallbackCallState {
    using CallbackCallState::CallbackCallState;
    Resp response;
  };
  auto* s = new State(call);
  CallbackCallOps::Start(std::move(call), s, nullptr, &s->response,
                         [&] { return fn(&s->ctx, &s->response); });
}

// `fn(CallbackServerContext*, const Req*) -> ServerWriteReactor<Resp>*`.
template <typename Req, typename Resp, typename F>
void RunCallbackServerStreaming(std::shared_ptr<ServerCall> call, F&& fn) {
  struct State final : CallbackCallState {
    using CallbackCallState::CallbackCallState;
    Req request;
  };
  auto* s = new State(call);
  CallbackCallOps::Start(std::move(call), s, &s->request, nullptr,
                         [&] { return fn(&s->ctx, &s->request); });
}

// `fn(CallbackServerContext*) -> ServerBidiReactor<Req, Resp>*`.
template <typename Req, typename Resp, typename F>
void RunCallbackBidiStreaming(std::shared_ptr<ServerCall> call, F&& fn) {
  auto* s = new CallbackCallState(call);
  CallbackCallOps::Start(std::move(call), s, nullptr, nullptr,
                         [&] { return fn(&s->ctx); });
}

}  // namespace internal
}  // namespace rpc

#endif  // RPC_SERVER_CALLBACK_H_
