// greeter_server: serves consumer.Greeter on 127.0.0.1 until SIGINT or SIGTERM.
//   greeter_server [PORT]        (default 0: the OS picks one)
// The first line printed is "listening on 127.0.0.1:PORT".
#include <csignal>
#include <iostream>
#include <memory>
#include <string>

#include "greeter/greeter.rpc.pb.h"
#include "rpc/rpc.h"

namespace {

class GreeterService final : public consumer::Greeter::Service {
 public:
  rpc::Status SayHello(rpc::ServerContext* /*context*/,
                       const consumer::HelloRequest* request,
                       consumer::HelloReply* reply) override {
    if (request->name().empty()) {
      return rpc::Status(rpc::StatusCode::INVALID_ARGUMENT, "name is empty");
    }
    reply->set_message("Hello " + request->name());
    return rpc::Status::OK;
  }
};

}  // namespace

int main(int argc, char** argv) {
  const std::string address =
      std::string("127.0.0.1:") + (argc > 1 ? argv[1] : "0");
  // Block the signals in every thread; the main thread waits for them.
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGINT);
  sigaddset(&signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);

  GreeterService service;
  int port = 0;
  std::unique_ptr<rpc::Server> server =
      rpc::ServerBuilder()
          .AddListeningPort(address, rpc::InsecureServerCredentials(), &port)
          .RegisterService(&service)
          .BuildAndStart();
  if (server == nullptr) {
    std::cerr << "cannot serve on " << address << "\n";
    return 1;
  }
  std::cout << "listening on 127.0.0.1:" << port << std::endl;
  int sig = 0;
  sigwait(&signals, &sig);
  server->Shutdown(absl::Now() + absl::Seconds(5));
  server->Wait();
  return 0;
}
