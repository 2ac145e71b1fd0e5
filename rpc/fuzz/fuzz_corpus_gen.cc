// Records the seed corpora of the rpc fuzzers from real traffic: our client
// (ClientHarness: ClientTransport and ClientCalls) against our server
// (ServerHarness: ServerConnection and FuzzEchoService) in one process,
// joined by a transport::MemoryEndpoint pair that keeps every octet each side
// wrote (harness.h RecordExchange). What the client wrote seeds
// server_connection_fuzzer, what the server wrote seeds
// client_transport_fuzzer, each behind the 5-octet prefix (mode, split seed)
// that the fuzzer reads, with the mode of the setup the exchange used:
//   ./bazelw run //rpc/fuzz:fuzz_corpus_gen -- $PWD/rpc/fuzz/corpus
// Every call kind alone and all together, with and without compression. The
// recording is deterministic: re-running it rewrites the same files.
#include <cstdio>
#include <fstream>
#include <optional>
#include <string>

#include "rpc/fuzz/harness.h"

namespace {

void Write(const std::string& path, uint8_t mode, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary);
  out << static_cast<char>(mode) << std::string("\x12\x34\x56\x78", 4) << bytes;
  std::printf("%s: %zu octets\n", path.c_str(), bytes.size() + 5);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr,
                 "usage: %s CORPUS_DIR (with server_connection/ and "
                 "client_transport/)\n",
                 argv[0]);
    return 1;
  }
  const std::string dir = argv[1];
  const struct {
    const char* name;
    std::optional<rpc::RpcType> kind;
  } kinds[] = {
      {"all", std::nullopt},
      {"unary", rpc::RpcType::kUnary},
      {"client_streaming", rpc::RpcType::kClientStreaming},
      {"server_streaming", rpc::RpcType::kServerStreaming},
      {"bidi", rpc::RpcType::kBidiStreaming},
  };
  int failed = 0;
  for (const auto& k : kinds) {
    for (const bool compress : {false, true}) {
      const std::string name =
          std::string(k.name) + (compress ? "_compressed" : "_plain");
      rpc::fuzz::ClientHarnessOptions client;
      client.only = k.kind;
      client.compress = compress;
      rpc::fuzz::ServerHarnessOptions server;
      if (compress) {
        // Every response compressed, with gzip unless the call asks for
        // another encoding.
        server.default_encoding = rpc::compression::Encoding::kGzip;
        server.compression_threshold = 0;
      }
      const rpc::fuzz::RecordedExchange x =
          rpc::fuzz::RecordExchange(client, server);
      Write(dir + "/server_connection/" + name,
            rpc::fuzz::ServerFuzzerMode(server), x.client_bytes);
      Write(dir + "/client_transport/" + name,
            rpc::fuzz::ClientFuzzerMode(client), x.server_bytes);
      std::printf("%s: %zu calls ended (%zu OK), %zu handlers ran\n",
                  name.c_str(), x.calls_finished, x.calls_ok, x.handlers_run);
      if (x.calls_finished == 0) ++failed;
    }
  }
  if (failed > 0) {
    std::fprintf(stderr, "%d exchanges had no call end\n", failed);
  }
  return failed > 0 ? 1 : 0;
}
