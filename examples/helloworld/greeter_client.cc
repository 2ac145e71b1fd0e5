// greeter_client: calls helloworld.Greeter/SayHello once.
//   bazel-bin/examples/helloworld/greeter_client [--target=localhost:50051]
//       [--name=world] [--tls_ca=ca.pem [--tls_cert=client.pem
//       --tls_key=client.key] [--server_host_override=NAME]]
//       [--lb_policy=pick_first|round_robin]
//
// The target is any gRPC target: "host:port", "dns:///host:port",
// "dns://DNS_SERVER/host:port", "ipv4:addr:port,addr:port", "unix:/path".
// With --tls_ca the channel speaks TLS and verifies the server against that
// CA and the target's host name; --tls_cert/--tls_key add a client
// certificate (mutual TLS).

#include <cstring>
#include <iostream>
#include <memory>
#include <string>

#include "examples/helloworld/flags.h"
#include "examples/helloworld/helloworld.rpc.pb.h"
#include "rpc/rpc.h"

int main(int argc, char** argv) {
  std::string target = "localhost:50051";
  std::string name = "world";
  std::string tls_ca, tls_cert, tls_key, host_override, lb_policy;
  for (int i = 1; i < argc; ++i) {
    if (!helloworld::Flag(argv[i], "--target", &target) &&
        !helloworld::Flag(argv[i], "--name", &name) &&
        !helloworld::Flag(argv[i], "--tls_ca", &tls_ca) &&
        !helloworld::Flag(argv[i], "--tls_cert", &tls_cert) &&
        !helloworld::Flag(argv[i], "--tls_key", &tls_key) &&
        !helloworld::Flag(argv[i], "--server_host_override", &host_override) &&
        !helloworld::Flag(argv[i], "--lb_policy", &lb_policy)) {
      std::cerr << "unknown flag " << argv[i] << "\n";
      return 2;
    }
  }
  std::shared_ptr<rpc::ChannelCredentials> creds =
      rpc::InsecureChannelCredentials();
  if (!tls_ca.empty()) {
    rpc::SslCredentialsOptions options;
    if (!helloworld::ReadPemFiles({{&tls_ca, &options.pem_root_certs},
                                   {&tls_cert, &options.pem_cert_chain},
                                   {&tls_key, &options.pem_private_key}})) {
      return 1;
    }
    creds = rpc::SslCredentials(options);
  }
  rpc::ChannelArguments args;
  if (!host_override.empty()) args.SetSslTargetNameOverride(host_override);
  // LEADTODO if (!lb_policy.empty())
  // args.SetLoadBalancingPolicyName(lb_policy);
  std::unique_ptr<helloworld::Greeter::Stub> stub =
      helloworld::Greeter::NewStub(
          rpc::CreateCustomChannel(target, creds, args));
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
