// Server-side streams for the streaming handlers of generated services, in
// grpc++'s shapes (grpc::ServerReader, ServerWriter, ServerReaderWriter), and
// the runners that generated code uses to bridge a call to a typed handler.
//
//   rpc::Status RecordRoute(rpc::ServerContext* ctx,
//                           rpc::ServerReader<Point>* reader,
//                           RouteSummary* summary) override {
//     Point p;
//     while (reader->Read(&p)) ...;
//     return rpc::Status::OK;
//   }
//
// All of them are used from the handler's thread only. Read blocks for the
// next message and returns false at the end of the client's messages (or when
// the call is cancelled); Write blocks while the client reads slower than the
// handler writes (the flow-control bound) and returns false once the call is
// cancelled or over. A request that does not parse ends the call with
// INTERNAL, a response over the max send message size with
// RESOURCE_EXHAUSTED.

#ifndef RPC_SERVER_STREAM_H_
#define RPC_SERVER_STREAM_H_

#include <utility>

#include "rpc/server_context.h"
#include "rpc/wire/status.h"

namespace google::protobuf {
class MessageLite;
}  // namespace google::protobuf

namespace rpc {

namespace internal {

class ServerCall;

// The non-template core of the server's side of a call: the typed classes
// and runners below only pass their messages as MessageLite; serialization
// and the call (the context's internal::ServerCall, opaque here) are
// server_stream.cc's. Not copyable.
class ServerCallBase {
 public:
  // The one request of a unary or server-streaming call into *request: OK,
  // or the status to end the call with.
  static Status ReadSingleRequest(ServerContext* ctx,
                                  google::protobuf::MessageLite* request);
  // Sends `response` (false when the call is over or it cannot be sent).
  static bool WriteResponse(ServerContext* ctx,
                            const google::protobuf::MessageLite& response);

  ServerCallBase(const ServerCallBase&) = delete;
  ServerCallBase& operator=(const ServerCallBase&) = delete;

 protected:
  explicit ServerCallBase(ServerContext* ctx) : ctx_(ctx) {}
  ~ServerCallBase() = default;

  // Sends the response headers now (with the initial metadata added so far).
  void SendInitialMetadata();
  // The next request; false at the end, when cancelled, or when it does not
  // parse (the call then ends with INTERNAL).
  bool Read(google::protobuf::MessageLite* msg);
  bool Write(const google::protobuf::MessageLite& msg) {
    return WriteResponse(ctx_, msg);
  }

 private:
  ServerContext* const ctx_;
};

}  // namespace internal

template <typename R>
class ServerReader final : private internal::ServerCallBase {
 public:
  explicit ServerReader(ServerContext* ctx) : ServerCallBase(ctx) {}
  // Sends the response headers now (with the initial metadata added so far).
  void SendInitialMetadata() { ServerCallBase::SendInitialMetadata(); }
  bool Read(R* msg) { return ServerCallBase::Read(msg); }
};

template <typename W>
class ServerWriter final : private internal::ServerCallBase {
 public:
  explicit ServerWriter(ServerContext* ctx) : ServerCallBase(ctx) {}
  void SendInitialMetadata() { ServerCallBase::SendInitialMetadata(); }
  bool Write(const W& msg) { return ServerCallBase::Write(msg); }
};

template <typename W, typename R>
class ServerReaderWriter final : private internal::ServerCallBase {
 public:
  explicit ServerReaderWriter(ServerContext* ctx) : ServerCallBase(ctx) {}
  void SendInitialMetadata() { ServerCallBase::SendInitialMetadata(); }
  bool Read(R* msg) { return ServerCallBase::Read(msg); }
  bool Write(const W& msg) { return ServerCallBase::Write(msg); }
};

namespace internal {

// `fn(ServerContext*, const Req*, Resp*) -> Status`.
template <typename Req, typename Resp, typename F>
Status RunUnary(ServerContext* ctx, F&& fn) {
  Req req;
  Status s = ServerCallBase::ReadSingleRequest(ctx, &req);
  if (!s.ok()) return s;
  Resp resp;
  s = fn(ctx, &req, &resp);
  if (s.ok()) ServerCallBase::WriteResponse(ctx, resp);
  return s;
}

// `fn(ServerContext*, const Req*, ServerWriter<Resp>*) -> Status`.
template <typename Req, typename Resp, typename F>
Status RunServerStreaming(ServerContext* ctx, F&& fn) {
  Req req;
  Status s = ServerCallBase::ReadSingleRequest(ctx, &req);
  if (!s.ok()) return s;
  ServerWriter<Resp> writer(ctx);
  return fn(ctx, &req, &writer);
}

// `fn(ServerContext*, ServerReader<Req>*, Resp*) -> Status`.
template <typename Req, typename Resp, typename F>
Status RunClientStreaming(ServerContext* ctx, F&& fn) {
  ServerReader<Req> reader(ctx);
  Resp resp;
  Status s = fn(ctx, &reader, &resp);
  if (s.ok()) ServerCallBase::WriteResponse(ctx, resp);
  return s;
}

// `fn(ServerContext*, ServerReaderWriter<Resp, Req>*) -> Status`.
template <typename Req, typename Resp, typename F>
Status RunBidiStreaming(ServerContext* ctx, F&& fn) {
  ServerReaderWriter<Resp, Req> stream(ctx);
  return fn(ctx, &stream);
}

}  // namespace internal
}  // namespace rpc

#endif  // RPC_SERVER_STREAM_H_
