// greeter_client: one SayHello call, gzip-compressed (so h2rpc's zlib is used).
//   greeter_client TARGET NAME      e.g. greeter_client 127.0.0.1:50051 world
// Prints the reply and exits 0, or prints the status and exits 1.
#include <iostream>
#include <memory>
#include <string>

#include "greeter/greeter.rpc.pb.h"
#include "rpc/rpc.h"

int main(int argc, char** argv) {
  if (argc != 3) {
    std::cerr << "usage: greeter_client TARGET NAME\n";
    return 2;
  }
  rpc::ChannelArguments args;
  args.SetCompressionThreshold(0);  // Compress even this small request.
  std::unique_ptr<consumer::Greeter::Stub> stub =
      consumer::Greeter::NewStub(rpc::CreateCustomChannel(
          argv[1], rpc::InsecureChannelCredentials(), args));

  consumer::HelloRequest request;
  request.set_name(argv[2]);
  consumer::HelloReply reply;
  rpc::ClientContext context;
  context.set_deadline(absl::Now() + absl::Seconds(10));
  context.set_compression_algorithm(rpc::compression::Encoding::kGzip);
  const rpc::Status status = stub->SayHello(&context, request, &reply);
  if (!status.ok()) {
    std::cerr << "SayHello failed: " << status << "\n";
    return 1;
  }
  std::cout << reply.message() << "\n";
  return 0;
}
