// RpcDriverOptions: the transport::DriverOptions of every rpc connection,
// client (ClientTransport) and server (ServerConnection) alike.

#ifndef RPC_INTERNAL_DRIVER_OPTIONS_H_
#define RPC_INTERNAL_DRIVER_OPTIONS_H_

#include "transport/driver/connection_driver.h"

namespace rpc {
namespace internal {

// Receives at most 8 ended streams (unary requests on a server, responses
// on a client) per step and writes each step's output before the next step
// runs (DriverOptions::max_stream_ends_per_receive). With many unary calls in
// flight on one connection the two processes then overlap: the peer starts on
// the first 8 answers while this side works on the rest. Handling a whole
// batch of 32 before its one write made the client and a callback server
// alternate, each idle while the other worked (rpc/README.md, "Threading
// model": "Batches overlap"). One call in flight and streams are not split.
inline transport::DriverOptions RpcDriverOptions() {
  transport::DriverOptions options;
  options.max_stream_ends_per_receive = 8;
  return options;
}

}  // namespace internal
}  // namespace rpc

#endif  // RPC_INTERNAL_DRIVER_OPTIONS_H_
