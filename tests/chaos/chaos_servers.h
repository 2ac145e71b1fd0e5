// The chaos service on our server and on Debian's grpc++ server (testonly
// peer), with the same handlers: they follow the instructions in a call's
// first request (chaos.proto) and check every request they read.
#ifndef TESTS_CHAOS_CHAOS_SERVERS_H_
#define TESTS_CHAOS_CHAOS_SERVERS_H_

#include <atomic>
#include <memory>
#include <string>

namespace chaos {

enum class ServerKind { kOurs, kGrpcpp };

class ChaosServer {
 public:
  virtual ~ChaosServer() = default;
  virtual ServerKind kind() const = 0;
  // 127.0.0.1:port() (OS-chosen), 0 while killed.
  virtual int port() const = 0;
  // Stops at once: calls in flight are cancelled and connections closed.
  virtual void Kill() = 0;
  // Starts again, on a new OS-chosen port. False if it could not.
  virtual bool Restart() = 0;

  // Handlers started, and requests a handler found damaged (never expected).
  std::atomic<int> calls{0};
  std::atomic<int> damaged_requests{0};
};

// nullptr if the server could not start.
std::unique_ptr<ChaosServer> StartChaosServer(ServerKind kind);
const char* ServerKindName(ServerKind kind);

}  // namespace chaos

#endif  // TESTS_CHAOS_CHAOS_SERVERS_H_
