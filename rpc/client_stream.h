// Client-side calls for generated stubs, in grpc++'s shapes: the blocking
// unary call, and grpc::ClientReader, ClientWriter, ClientReaderWriter.
//
//   rpc::ClientContext ctx;
//   std::unique_ptr<rpc::ClientReader<Feature>> reader =
//       stub->ListFeatures(&ctx, rect);
//   Feature f;
//   while (reader->Read(&f)) ...;
//   rpc::Status s = reader->Finish();
//
// A stream object is used by one thread (ClientReaderWriter: one reader and
// one writer thread may use it at once). Read returns false at the end of the
// server's messages; Finish then returns the status. Write returns false once
// the call is over (Finish tells why) and blocks while the server reads
// slower than we write. A response that does not parse ends the call with
// INTERNAL; a request over the max send message size with RESOURCE_EXHAUSTED.

#ifndef RPC_CLIENT_STREAM_H_
#define RPC_CLIENT_STREAM_H_

#include <functional>
#include <memory>
#include <string>
#include <utility>

#include "rpc/channel_interface.h"
#include "rpc/client_context.h"
#include "rpc/wire/status.h"

namespace google::protobuf {
class MessageLite;
}  // namespace google::protobuf
namespace transport {
class SliceBuffer;
}  // namespace transport

namespace rpc {

namespace internal {

class ClientCall;

// The non-template core of every client call: the typed classes below only
// pass their messages as MessageLite; serialization, the call's start through
// ChannelInterface's hook and the call's state (an internal::ClientCall,
// opaque here) live in client_stream.cc. One object per call; not copyable.
class ClientCallBase {
 public:
  // BlockingUnaryCall's and AsyncUnaryCall's work.
  static Status BlockingUnary(const std::shared_ptr<ChannelInterface>& channel,
                              const std::string& method, ClientContext* ctx,
                              const google::protobuf::MessageLite& request,
                              google::protobuf::MessageLite* response);
  static void AsyncUnary(const std::shared_ptr<ChannelInterface>& channel,
                         const std::string& method, ClientContext* ctx,
                         const google::protobuf::MessageLite& request,
                         google::protobuf::MessageLite* response,
                         std::function<void(Status)> done);

  // The callback API's first steps: NewCall creates the call of `method`
  // for `ctx` (not started); BindCall binds it to the context, after the
  // call's observer is set (a context cancelled already cancels the call
  // there, and the cancel must reach the observer).
  static std::shared_ptr<ClientCall> NewCall(
      const std::shared_ptr<ChannelInterface>& channel,
      const std::string& method, ClientContext* ctx);
  static void BindCall(const std::shared_ptr<ClientCall>& call,
                       ClientContext* ctx);

  ClientCallBase(const ClientCallBase&) = delete;
  ClientCallBase& operator=(const ClientCallBase&) = delete;

 protected:
  // Creates the call for `ctx` and starts it, with `first` as its first
  // message (nullptr: none) and `end` to end the requests.
  // `single_response`: a client-streaming call (ClientCall::
  // set_single_response).
  ClientCallBase(const std::shared_ptr<ChannelInterface>& channel,
                 const std::string& method, ClientContext* ctx,
                 const google::protobuf::MessageLite* first, bool end,
                 bool single_response = false);
  ~ClientCallBase();

  // Blocks until the response headers arrived (GetServerInitialMetadata).
  void WaitForInitialMetadata();
  // The next response; false at the end (or when it does not parse: the call
  // then ends with INTERNAL).
  bool Read(google::protobuf::MessageLite* msg);
  bool Write(const google::protobuf::MessageLite& msg);
  void WritesDone();
  // Waits for the status.
  Status Finish();
  // Ends the requests if not yet done, then waits for the single response
  // (into *response) and the status.
  Status FinishWithResponse(google::protobuf::MessageLite* response);

 private:
  // Binds `call` to `ctx` and starts it, with *first (when given; moved
  // from) as its first message and `end` to end the requests.
  static void StartCall(const std::shared_ptr<ClientCall>& call,
                        const std::shared_ptr<ChannelInterface>& channel,
                        ClientContext* ctx, transport::SliceBuffer* first,
                        bool end);
  // Reads the single response of a unary or client-streaming call, then the
  // status.
  static Status FinishSingleResponse(ClientContext* ctx, ClientCall* call,
                                     google::protobuf::MessageLite* response);

  ClientContext* const ctx_;
  std::shared_ptr<ClientCall> call_;
};

}  // namespace internal

// A blocking unary call (what generated Stub methods do).
template <typename Req, typename Resp>
Status BlockingUnaryCall(const std::shared_ptr<ChannelInterface>& channel,
                         const std::string& path, ClientContext* ctx,
                         const Req& request, Resp* response) {
  return internal::ClientCallBase::BlockingUnary(channel, path, ctx, request,
                                                 response);
}

// An asynchronous unary call (what generated Stub::Async methods do; a
// callback call of rpc/client_callback.h): returns at once; `done(status)`
// runs on the channel's loop thread when the call ends, with *response
// filled when the status is OK. `done` must not block. `ctx`, `response` and
// the channel must stay alive until `done` ran.
template <typename Req, typename Resp>
void AsyncUnaryCall(const std::shared_ptr<ChannelInterface>& channel,
                    const std::string& path, ClientContext* ctx,
                    const Req& request, Resp* response,
                    std::function<void(Status)> done) {
  internal::ClientCallBase::AsyncUnary(channel, path, ctx, request, response,
                                       std::move(done));
}

template <typename R>
class ClientReader final : private internal::ClientCallBase {
 public:
  // Starts a server-streaming call with its one request.
  template <typename Req>
  ClientReader(const std::shared_ptr<ChannelInterface>& channel,
               const std::string& path, ClientContext* ctx, const Req& request)
      : ClientCallBase(channel, path, ctx, &request, /*end=*/true) {}
  // Blocks until the response headers arrived (GetServerInitialMetadata).
  void WaitForInitialMetadata() { ClientCallBase::WaitForInitialMetadata(); }
  bool Read(R* msg) { return ClientCallBase::Read(msg); }
  Status Finish() { return ClientCallBase::Finish(); }
};

template <typename W>
class ClientWriter final : private internal::ClientCallBase {
 public:
  // Starts a client-streaming call; Finish stores the response in *response.
  template <typename Resp>
  ClientWriter(const std::shared_ptr<ChannelInterface>& channel,
               const std::string& path, ClientContext* ctx, Resp* response)
      : ClientCallBase(channel, path, ctx, nullptr, /*end=*/false,
                       /*single_response=*/true),
        response_(response) {}
  void WaitForInitialMetadata() { ClientCallBase::WaitForInitialMetadata(); }
  bool Write(const W& msg) { return ClientCallBase::Write(msg); }
  bool WritesDone() {
    ClientCallBase::WritesDone();
    return true;
  }
  // Ends the requests if not yet done, then waits for the response and the
  // status.
  Status Finish() { return ClientCallBase::FinishWithResponse(response_); }

 private:
  google::protobuf::MessageLite* const response_;
};

template <typename W, typename R>
class ClientReaderWriter final : private internal::ClientCallBase {
 public:
  ClientReaderWriter(const std::shared_ptr<ChannelInterface>& channel,
                     const std::string& path, ClientContext* ctx)
      : ClientCallBase(channel, path, ctx, nullptr, /*end=*/false) {}
  void WaitForInitialMetadata() { ClientCallBase::WaitForInitialMetadata(); }
  bool Write(const W& msg) { return ClientCallBase::Write(msg); }
  bool WritesDone() {
    ClientCallBase::WritesDone();
    return true;
  }
  bool Read(R* msg) { return ClientCallBase::Read(msg); }
  Status Finish() { return ClientCallBase::Finish(); }
};

}  // namespace rpc

#endif  // RPC_CLIENT_STREAM_H_
