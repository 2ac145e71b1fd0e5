// greeter_server: serves helloworld.Greeter until interrupted.
//   bazel-bin/examples/helloworld/greeter_server [--address=0.0.0.0:50051]
//       [--tls_cert=server.pem --tls_key=server.key [--tls_client_ca=ca.pem]]
//
// --address is "host:port" (port 0 picks one) or "unix:/path". With
// --tls_cert/--tls_key it serves TLS (ALPN h2); --tls_client_ca also requires
// client certificates signed by that CA (mutual TLS). The first line printed
// is "Server listening on ADDRESS".

#include <csignal>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <memory>
#include <string>

#include "examples/helloworld/flags.h"
#include "examples/helloworld/greeter_service.h"
#include "rpc/rpc.h"

int main(int argc, char** argv) {
  std::string address = "0.0.0.0:50051";
  std::string port, tls_cert, tls_key, tls_client_ca;
  for (int i = 1; i < argc; ++i) {
    if (!helloworld::Flag(argv[i], "--address", &address) &&
        !helloworld::Flag(argv[i], "--port", &port) &&
        !helloworld::Flag(argv[i], "--tls_cert", &tls_cert) &&
        !helloworld::Flag(argv[i], "--tls_key", &tls_key) &&
        !helloworld::Flag(argv[i], "--tls_client_ca", &tls_client_ca)) {
      std::cerr << "unknown flag " << argv[i] << "\n";
      return 2;
    }
  }
  if (!port.empty()) address = "0.0.0.0:" + port;
  std::shared_ptr<rpc::ServerCredentials> creds =
      rpc::InsecureServerCredentials();
  if (!tls_cert.empty() || !tls_key.empty()) {
    rpc::SslServerCredentialsOptions options;
    rpc::SslServerCredentialsOptions::PemKeyCertPair pair;
    if (!helloworld::ReadPemFiles(
            {{&tls_cert, &pair.cert_chain},
             {&tls_key, &pair.private_key},
             {&tls_client_ca, &options.pem_root_certs}})) {
      return 1;
    }
    options.pem_key_cert_pairs.push_back(pair);
    options.force_client_auth = !tls_client_ca.empty();
    creds = rpc::SslServerCredentials(options);
  }
  // Block the signals in every thread; the main thread waits for them.
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGINT);
  sigaddset(&signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);

  helloworld::GreeterServiceImpl service;
  int selected_port = 0;
  std::unique_ptr<rpc::Server> server =
      rpc::ServerBuilder()
          .AddListeningPort(address, creds, &selected_port)
          .RegisterService(&service)
          .BuildAndStart();
  if (server == nullptr) {
    std::cerr << "cannot serve on " << address << "\n";
    return 1;
  }
  if (address.rfind("unix:", 0) != 0) {
    address = address.substr(0, address.rfind(':') + 1) +
              std::to_string(selected_port);
  }
  std::cout << "Server listening on " << address << std::endl;
  int sig = 0;
  sigwait(&signals, &sig);
  std::cout << "Shutting down" << std::endl;
  server->Shutdown(absl::Now() + absl::Seconds(5));
  server->Wait();
  return 0;
}
