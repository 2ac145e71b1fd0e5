// greeter_client: calls helloworld.Greeter/SayHello once.
//   bazel-bin/examples/helloworld/greeter_client [--target=localhost:50051]
//       [--name=world]

#include <cstring>
#include <iostream>
#include <memory>
#include <string>

#include "examples/helloworld/helloworld.rpc.pb.h"
#include "rpc/rpc.h"

int main(int argc, char** argv) {
  std::string target = "localhost:50051";
  std::string name = "world";
  for (int i = 1; i < argc; ++i) {
    if (std::strncmp(argv[i], "--target=", 9) == 0) target = argv[i] + 9;
    if (std::strncmp(argv[i], "--name=", 7) == 0) name = argv[i] + 7;
  }
  std::unique_ptr<helloworld::Greeter::Stub> stub =
      helloworld::Greeter::NewStub(
          rpc::CreateChannel(target, rpc::InsecureChannelCredentials()));
  helloworld::HelloRequest request;
  request.set_name(name);
  helloworld::HelloReply reply;
  rpc::ClientContext context;
  context.set_deadline(absl::Now() + absl::Seconds(5));
  rpc::Status status = stub->SayHello(&context, request, &reply);
  if (!status.ok()) {
    std::cerr << "RPC failed: " << status << "\n";
    return 1;
  }
  std::cout << "Greeter received: " << reply.message() << std::endl;
  return 0;
}
