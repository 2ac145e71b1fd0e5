// One-process demo: starts a Greeter server on a free port, calls it a few
// times through a channel and a generated stub, and prints what the two sides
// exchanged.   ./bazelw run //examples/helloworld:demo

#include <iostream>
#include <memory>
#include <string>

#include "examples/helloworld/greeter_service.h"
#include "examples/helloworld/helloworld.rpc.pb.h"
#include "rpc/rpc.h"

namespace {

void PrintMetadata(const char* what, const rpc::Metadata& md) {
  for (const auto& [key, value] : md) {
    std::cout << "    " << what << " " << key << ": " << value << "\n";
  }
}

int Call(helloworld::Greeter::Stub* stub, const std::string& name,
         bool with_metadata) {
  helloworld::HelloRequest request;
  request.set_name(name);
  rpc::ClientContext context;
  context.set_deadline(absl::Now() + absl::Seconds(5));
  if (with_metadata) context.AddMetadata("x-request-id", "42");
  std::cout << "client -> SayHello(name: \"" << name << "\")"
            << (with_metadata ? " with metadata x-request-id: 42" : "") << "\n";
  helloworld::HelloReply reply;
  rpc::Status status = stub->SayHello(&context, request, &reply);
  if (status.ok()) {
    std::cout << "client <- \"" << reply.message() << "\"\n";
  } else {
    std::cout << "client <- status " << status << "\n";
  }
  PrintMetadata("initial ", context.GetServerInitialMetadata());
  PrintMetadata("trailing", context.GetServerTrailingMetadata());
  return status.ok() ? 0 : 1;
}

}  // namespace

int main() {
  helloworld::GreeterServiceImpl service;
  int port = 0;
  std::unique_ptr<rpc::Server> server =
      rpc::ServerBuilder()
          .AddListeningPort("127.0.0.1:0", rpc::InsecureServerCredentials(),
                            &port)
          .RegisterService(&service)
          .BuildAndStart();
  if (server == nullptr) {
    std::cerr << "server failed to start\n";
    return 1;
  }
  std::cout << "server listening on 127.0.0.1:" << port << "\n";
  auto stub = helloworld::Greeter::NewStub(rpc::CreateChannel(
      "127.0.0.1:" + std::to_string(port), rpc::InsecureChannelCredentials()));

  int failures = 0;
  failures += Call(stub.get(), "world", false);
  failures += Call(stub.get(), "rpc user", true);
  // An empty name: the server answers INVALID_ARGUMENT.
  const int expected_failure = Call(stub.get(), "", false);

  stub.reset();
  server->Shutdown(absl::Now() + absl::Seconds(2));
  server->Wait();
  std::cout << "server shut down\n";
  return failures == 0 && expected_failure == 1 ? 0 : 1;
}
