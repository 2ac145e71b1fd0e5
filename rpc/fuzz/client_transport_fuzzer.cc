// libFuzzer target: a server's bytes to our client transport
// (internal::ClientTransport, a Channel's connection) while the fixed calls
// of ClientHarness::Calls() are in flight: one of each kind, requests
// compressed with each encoding, metadata to echo, one bidi call left open.
// Covers response parsing: headers, Trailers-Only, grpc-status and
// grpc-message, HTTP status mapping, response decompression, message
// framing, resets, GOAWAY and flow control.
//
// Input (harness.h SplitInput): octet 0 is the mode, bit 0 small windows and
// limits; bit 1 every call uncompressed; bit 2 a graceful close (GOAWAY)
// after the input; bits 3-5: 0 all calls, 1-4 only the calls of one kind
// (unary, client streaming, server streaming, bidi); bit 6 a slow server
// (the client's output waits in 4 KiB of room, taken every fourth piece);
// bit 7 the calls in observer mode (the callback API's path: harness.h).
// Octets 1-4 seed the split points; the rest is what the server sends, from
// its SETTINGS on.
// After the input: 30 s pass on the manual clock, the calls still open are
// cancelled, then the server's end of stream.
#include <cstdint>
#include <cstdlib>
#include <string_view>
#include <vector>

#include "absl/time/time.h"
#include "rpc/fuzz/harness.h"
#include "transport/io/event_loop.h"
#include "transport/io/memory_endpoint.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  uint8_t mode;
  std::vector<std::string_view> pieces;
  if (!rpc::fuzz::SplitInput(data, size, &mode, &pieces)) return 0;
  rpc::fuzz::ClientHarnessOptions options;
  options.small_limits = (mode & 1) != 0;
  options.compress = (mode & 2) == 0;
  options.observer = (mode & 128) != 0;
  const int kind = (mode >> 3) & 7;
  if (kind >= 1 && kind <= 4)
    options.only = static_cast<rpc::RpcType>(kind - 1);

  auto loop = transport::EventLoop::CreateWithManualClock();
  if (!loop.ok()) std::abort();
  auto endpoint = transport::MemoryEndpoint::Create(loop->get());
  transport::MemoryEndpoint* server = endpoint.get();
  {
    rpc::fuzz::ClientHarness client(loop->get(), std::move(endpoint), options);
    client.Start();
    client.Drain();
    rpc::fuzz::FeedPieces(loop->get(), server, pieces, (mode & 64) != 0,
                          [&] { client.Drain(); });
    if ((mode & 4) != 0) client.GracefulClose();
    client.Drain();
    (*loop)->AdvanceClock(absl::Seconds(30));
    client.Drain();
    client.CancelRemaining();
    server->DeliverEof();
    client.Drain();
  }
  return 0;
}
