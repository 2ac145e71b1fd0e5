// libFuzzer target: a client's bytes to a real rpc server connection
// (internal::ServerConnection, as rpc::Server runs it) with FuzzEchoService's
// handlers behind it (harness.h): routing, the four call kinds, request
// decompression and response compression, metadata, deadlines from
// grpc-timeout, handler statuses, resets and limits. Every input runs twice:
// against the blocking handlers and against the same ones in callback form
// (FuzzCallbackEchoService's reactors).
//
// Input (harness.h SplitInput): octet 0 is the mode, bits 0-1 the server's
// default response encoding (identity, deflate, gzip, zstd); bit 2 compresses
// every response message (threshold 0); bit 3 small windows and limits; bit 4
// a graceful shutdown (GOAWAY) after the input; bit 5 a slow client (the
// server's output waits in 4 KiB of room, taken every fourth piece). Octets 1-4
// seed the split points; the rest is what the client sends, from its preface
// on. After the input: 30 s pass on the manual clock (deadlines fire), then the
// client's end of stream.
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
  for (bool callback : {false, true}) {
    rpc::fuzz::ServerHarnessOptions options;
    options.default_encoding =
        static_cast<rpc::compression::Encoding>(mode & 3);
    if ((mode & 4) != 0) options.compression_threshold = 0;
    options.small_limits = (mode & 8) != 0;
    options.callback = callback;

    auto loop = transport::EventLoop::CreateWithManualClock();
    if (!loop.ok()) std::abort();
    auto endpoint = transport::MemoryEndpoint::Create(loop->get());
    transport::MemoryEndpoint* client = endpoint.get();
    {
      rpc::fuzz::ServerHarness server(loop->get(), std::move(endpoint),
                                      options);
      server.Start();
      server.Drain();
      rpc::fuzz::FeedPieces(loop->get(), client, pieces, (mode & 32) != 0,
                            [&] { server.Drain(); });
      if ((mode & 16) != 0) server.GracefulShutdown();
      server.Drain();
      (*loop)->AdvanceClock(absl::Seconds(30));
      server.Drain();
      client->DeliverEof();
      server.Drain();
    }
  }
  return 0;
}
