// The Greeter implementation shared by greeter_server and the demo: answers
// "Hello <name>", echoes "x-" metadata back, and fails with INVALID_ARGUMENT
// for an empty name.

#ifndef EXAMPLES_HELLOWORLD_GREETER_SERVICE_H_
#define EXAMPLES_HELLOWORLD_GREETER_SERVICE_H_

#include <string>

#include "examples/helloworld/helloworld.rpc.pb.h"

namespace helloworld {

class GreeterServiceImpl final : public Greeter::Service {
 public:
  rpc::Status SayHello(rpc::ServerContext* context, const HelloRequest* request,
                       HelloReply* reply) override {
    if (request->name().empty()) {
      return rpc::Status(rpc::StatusCode::INVALID_ARGUMENT,
                         "name must not be empty");
    }
    for (const auto& [key, value] : context->client_metadata()) {
      if (key.rfind("x-", 0) == 0) context->AddTrailingMetadata(key, value);
    }
    context->AddInitialMetadata("x-server", "helloworld-greeter");
    reply->set_message("Hello " + request->name());
    return rpc::Status::OK;
  }
};

}  // namespace helloworld

#endif  // EXAMPLES_HELLOWORLD_GREETER_SERVICE_H_
