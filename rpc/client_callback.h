// The client's callback API, in grpc++'s shapes (grpcpp/support/
// client_callback.h): a reactor per call, bound by the generated
// `stub->async()` methods and driven by reactions on the channel's loop.
//
//   class Reader : public rpc::ClientReadReactor<Feature> {
//    public:
//     Reader(RouteGuide::Stub* stub, const Rectangle& rect) {
//       stub->async()->ListFeatures(&ctx_, &rect, this);
//       StartRead(&feature_);
//       StartCall();
//     }
//     void OnReadDone(bool ok) override {
//       if (ok) { Use(feature_); StartRead(&feature_); }
//     }
//     void OnDone(const rpc::Status& s) override { ...; delete this; }
//    private:
//     rpc::ClientContext ctx_;
//     Feature feature_;
//   };
//
// Kinds (the generated methods; request, response and context are the
// caller's and must stay alive until OnDone):
// clang-format off
//   unary              M(ctx, const Req*, Resp*, std::function<void(Status)>)
//                      M(ctx, const Req*, Resp*, ClientUnaryReactor*)
//   server streaming   M(ctx, const Req*, ClientReadReactor<Resp>*)
//   client streaming   M(ctx, Resp*, ClientWriteReactor<Req>*)
//   bidi streaming     M(ctx, ClientBidiReactor<Req, Resp>*)
// clang-format on
// The request of a unary or server-streaming call is serialized when the
// method binds the reactor (it may go once the method returned).
//
// Operations. StartCall starts the call (once; nothing is sent before it).
// StartRead(Resp*), StartWrite(const Req*[, WriteOptions]), StartWriteLast
// (the message and the end of the requests in one frame) and StartWritesDone
// may be called before StartCall (they apply when it runs), from any thread,
// and from reactions. At most one read and one write are outstanding: the
// next StartRead comes after the previous OnReadDone, the next StartWrite
// after the previous OnWriteDone. Misuse is reported, not undefined: a
// second StartRead (StartWrite) before the previous reaction, a write after
// the end of the requests, StartWritesDone or StartCall twice end the call
// with INTERNAL naming the mistake (the operation itself gets no reaction).
// A write's message is serialized when StartWrite is called; OnWriteDone
// comes once the octets written and still queued in the connection are
// within the channel's write bound (256 KiB; the blocking Write's rule), so a
// server that reads slowly holds the writer back. A reader that does not
// call StartRead holds the server back: unread messages of more than the
// read bound (256 KiB) stop the stream's window from reopening.
// WriteOptions: no_compression sends the message uncompressed; buffer_hint
// is accepted (every write of a loop iteration goes out in one flush anyway).
//
// Reactions run on the loop thread of the connection that carries the call,
// inline (no hand-off, no lock), and therefore:
//   * a reaction must not block, and must not wait for anything that needs
//     that loop: a blocking call on the same channel (a sync stub method,
//     ClientReader::Read, WaitForConnected) made from a reaction deadlocks;
//     start another callback call instead;
//   * an operation made from a reaction of the same call applies at once
//     (its reaction comes after the current one returns); one made from
//     another thread, or from the loop thread outside this call's reactions
//     (a reaction of another call), is posted to the loop (in the order
//     made): no reaction ever runs inside a Start* (a reaction may call
//     another call's Start* while holding a mutex its reactions take);
//   * reactions of one call never overlap or nest: one that becomes due while
//     another runs (StartRead inside OnReadDone with a message already there)
//     comes after it returns.
// Order, for each call:
//   * OnReadInitialMetadataDone(ok) once, before the first OnReadDone and
//     before OnDone (ok false: no response headers came; the call ends with
//     no message);
//   * each started operation gets exactly one reaction (OnReadDone,
//     OnWriteDone, OnWritesDoneDone); ok false when the call ended first;
//     a read after the server's last message gets OnReadDone(false);
//   * OnDone(status) last and exactly once, after the status arrived, after
//     every started operation's reaction, and after every hold was removed.
//     The reactor (and the context) may be deleted in OnDone; nothing of the
//     call touches either afterwards.
// Holds (streaming reactors): AddHold / AddMultipleHolds before StartCall (or
// from a reaction, or while another hold is held) keep OnDone from running
// while the application may still start operations from outside a reaction
// (another thread); RemoveHold (any thread) releases one. A hold never
// removed means OnDone never comes; RemoveHold without a hold is misuse
// (INTERNAL).
//
// Lifetimes. The call keeps its channel until after OnDone: stub and
// channel may be dropped once the method bound the reactor (the channel may
// then be released on the loop thread). A call bound and never started is
// leaked (never OnDone), also when its context is destroyed; it never
// touches the destroyed context. A channel that has no loop (it could not
// be created: an invalid target) fails its calls at creation: StartCall
// then runs OnReadInitialMetadataDone(false) and OnDone on the calling
// thread, before it returns (the one case of a reaction inside a Start*).
//
// Cancellation: ClientContext::TryCancel, any thread, also from a reaction,
// also before the stub method (the call then ends CANCELLED):
// outstanding operations end with ok false and OnDone gets CANCELLED (unless
// the status came first). The context's deadline, wait_for_ready and
// transparent retries apply as for blocking calls.

#ifndef RPC_CLIENT_CALLBACK_H_
#define RPC_CLIENT_CALLBACK_H_

#include <functional>
#include <memory>
#include <string>

#include "rpc/channel_interface.h"
#include "rpc/client_context.h"
#include "rpc/wire/status.h"
#include "rpc/write_options.h"

namespace google::protobuf {
class MessageLite;
}  // namespace google::protobuf

namespace rpc {
namespace internal {

class ClientReactorCall;

enum class ClientReactorKind {
  kUnary,
  kServerStreaming,
  kClientStreaming,
  kBidi,
};

// The non-template base of the four reactors: the reactions (called by the
// library on the loop thread) and the operations, on untyped messages.
class ClientReactor {
 public:
  virtual ~ClientReactor() = default;

  // The reactions (the file comment), to override; the ones a kind never
  // gets (OnReadDone of a unary call) are never called.
  virtual void OnDone(const Status& /*status*/) {}
  virtual void OnReadInitialMetadataDone(bool /*ok*/) {}
  virtual void OnReadDone(bool /*ok*/) {}
  virtual void OnWriteDone(bool /*ok*/) {}
  virtual void OnWritesDoneDone(bool /*ok*/) {}

 protected:
  // No effect before the reactor is bound (the stub's async() method).
  void StartCallImpl();
  void StartReadImpl(google::protobuf::MessageLite* msg);
  void StartWriteImpl(const google::protobuf::MessageLite& msg,
                      WriteOptions options);
  void StartWritesDoneImpl();
  void AddHoldImpl(int holds);
  void RemoveHoldImpl();

 private:
  friend class ClientReactorCall;
  ClientReactorCall* call_ = nullptr;  // Lives until OnDone.
};

// What generated stub->async() methods call: creates the call of `method`
// for `ctx` and binds `reactor` to it (StartCall starts it). `request`: the
// unary or server-streaming request (serialized now); `response`: the
// single response of a unary or client-streaming call.
void BindClientReactor(const std::shared_ptr<ChannelInterface>& channel,
                       const std::string& method, ClientContext* ctx,
                       ClientReactorKind kind,
                       const google::protobuf::MessageLite* request,
                       google::protobuf::MessageLite* response,
                       ClientReactor* reactor);

// The std::function form of a unary call: starts it at once; `done` runs on
// the loop thread (it must not block).
void CallbackUnaryCall(const std::shared_ptr<ChannelInterface>& channel,
                       const std::string& method, ClientContext* ctx,
                       const google::protobuf::MessageLite* request,
                       google::protobuf::MessageLite* response,
                       std::function<void(Status)> done);

}  // namespace internal

// A unary call's reactor (grpc::ClientUnaryReactor): StartCall, then
// OnReadInitialMetadataDone and OnDone, with the response in the Resp* given
// to the method when the status is OK.
class ClientUnaryReactor : public internal::ClientReactor {
 public:
  void StartCall() { StartCallImpl(); }
};

namespace internal {

// What every streaming reactor has: StartCall and the holds.
class ClientStreamingReactor : public ClientReactor {
 public:
  void StartCall() { StartCallImpl(); }
  void AddHold() { AddMultipleHolds(1); }
  void AddMultipleHolds(int holds) { AddHoldImpl(holds); }
  void RemoveHold() { RemoveHoldImpl(); }
};

// The write side of the client-streaming and bidi reactors.
template <typename Request>
class ClientWritingReactor : public ClientStreamingReactor {
 public:
  void StartWrite(const Request* req) { StartWrite(req, WriteOptions()); }
  void StartWrite(const Request* req, WriteOptions options) {
    StartWriteImpl(*req, options);
  }
  // The message and the end of the requests (one DATA frame with
  // END_STREAM); no StartWritesDone (nor OnWritesDoneDone) then.
  void StartWriteLast(const Request* req, WriteOptions options) {
    StartWrite(req, options.set_last_message());
  }
  void StartWritesDone() { StartWritesDoneImpl(); }
};

}  // namespace internal

// A server-streaming call's reactor (grpc::ClientReadReactor).
template <typename Response>
class ClientReadReactor : public internal::ClientStreamingReactor {
 public:
  // The next response message into *resp (alive until OnReadDone).
  void StartRead(Response* resp) { StartReadImpl(resp); }
};

// A client-streaming call's reactor (grpc::ClientWriteReactor); the single
// response goes to the Resp* given to the method.
template <typename Request>
class ClientWriteReactor : public internal::ClientWritingReactor<Request> {};

// A bidi-streaming call's reactor (grpc::ClientBidiReactor).
template <typename Request, typename Response>
class ClientBidiReactor : public internal::ClientWritingReactor<Request> {
 public:
  void StartRead(Response* resp) { this->StartReadImpl(resp); }
};

}  // namespace rpc

#endif  // RPC_CLIENT_CALLBACK_H_
