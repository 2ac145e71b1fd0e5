// greeter_server: serves helloworld.Greeter until interrupted.
//   bazel-bin/examples/helloworld/greeter_server [--port=50051]

#include <csignal>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <memory>
#include <string>

#include "examples/helloworld/greeter_service.h"
#include "rpc/rpc.h"

int main(int argc, char** argv) {
  int port = 50051;
  for (int i = 1; i < argc; ++i) {
    if (std::strncmp(argv[i], "--port=", 7) == 0) port = std::atoi(argv[i] + 7);
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
          .AddListeningPort("0.0.0.0:" + std::to_string(port),
                            rpc::InsecureServerCredentials(), &selected_port)
          .RegisterService(&service)
          .BuildAndStart();
  if (server == nullptr) {
    std::cerr << "cannot listen on port " << port << "\n";
    return 1;
  }
  std::cout << "Server listening on 0.0.0.0:" << selected_port << std::endl;
  int sig = 0;
  sigwait(&signals, &sig);
  std::cout << "Shutting down" << std::endl;
  server->Shutdown(absl::Now() + absl::Seconds(5));
  server->Wait();
  return 0;
}
