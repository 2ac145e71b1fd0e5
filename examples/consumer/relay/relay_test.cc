// relay.proto imports greeter.proto through `deps`: its messages, which embed
// greeter's, round-trip, and its Relay service has stubs.
#include <cstdio>
#include <string>

#include "greeter/greeter.pb.h"
#include "relay/relay.rpc.pb.h"

int main() {
  consumer::RelayRequest request;
  request.mutable_hello()->set_name("consumer");
  request.set_hops(2);
  const std::string wire = request.SerializeAsString();

  consumer::RelayRequest parsed;
  if (!parsed.ParseFromString(wire) || parsed.hello().name() != "consumer" ||
      parsed.hops() != 2) {
    std::printf("round trip failed: %s\n", parsed.DebugString().c_str());
    return 1;
  }
  // A server's implementation derives from the generated service.
  consumer::Relay::Service service;
  static_cast<void>(service);
  std::printf("relay: %d bytes, hello.name %s: ok\n",
              static_cast<int>(wire.size()), parsed.hello().name().c_str());
  return 0;
}
