// rpc::Service: the base of every generated service class. The generated
// `Greeter::Service` registers one method per RPC in its constructor (its full
// path "/helloworld.Greeter/SayHello", its kind and a handler that runs the
// virtual), and a server routes requests by :path to these methods.
//
// Users derive from the generated class and override the virtuals; they never
// call AddMethod themselves.

#ifndef RPC_SERVICE_H_
#define RPC_SERVICE_H_

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "rpc/wire/status.h"

namespace rpc {

class ServerContext;
namespace internal {
class ServerCall;
}

// The four kinds of calls (grpc++'s internal::RpcMethod::RpcType).
enum class RpcType {
  kUnary,
  kClientStreaming,
  kServerStreaming,
  kBidiStreaming,
};

class Service {
 public:
  // Runs a call to completion on a worker thread: reads requests and writes
  // responses through the context's call, and returns the status that the
  // server sends in the trailers.
  using Handler = std::function<Status(ServerContext*)>;
  // The callback form (rpc/server_callback.h): runs inline on the
  // connection's loop thread, at the request headers (client and bidi
  // streaming) or once the request is complete (unary and server streaming),
  // creates the call's reactor and returns at once.
  using CallbackHandler =
      std::function<void(std::shared_ptr<internal::ServerCall>)>;

  struct Method {
    std::string path;  // "/package.Service/Method"
    RpcType type;
    Handler handler;                   // Set for synchronous methods,
    CallbackHandler callback_handler;  // or this for callback ones.
  };

  Service() = default;
  virtual ~Service() = default;
  Service(const Service&) = delete;
  Service& operator=(const Service&) = delete;

  const std::vector<std::unique_ptr<Method>>& methods() const {
    return methods_;
  }

 protected:
  // For generated code. A method added again under the same path replaces
  // the earlier one (WithCallbackMethod_X replaces the blocking handler).
  void AddMethod(std::string path, RpcType type, Handler handler) {
    Put(Method{std::move(path), type, std::move(handler), nullptr});
  }
  void AddCallbackMethod(std::string path, RpcType type,
                         CallbackHandler handler) {
    Put(Method{std::move(path), type, nullptr, std::move(handler)});
  }

 private:
  void Put(Method method) {
    for (auto& m : methods_) {
      if (m->path == method.path) {
        *m = std::move(method);
        return;
      }
    }
    methods_.push_back(std::make_unique<Method>(std::move(method)));
  }

  std::vector<std::unique_ptr<Method>> methods_;
};

}  // namespace rpc

#endif  // RPC_SERVICE_H_
