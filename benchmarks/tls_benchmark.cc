// TLS handshakes in memory (transport/tls/tls.h, two TlsSessions shuttling
// ciphertext): a full handshake against a resumed one (session ticket from
// the client context's cache), TLS 1.3 and 1.2, with and without a client
// certificate. What a channel's reconnect costs in CPU, both sides together,
// without the network. The peer here is OpenSSL itself: the ratio
// resumed/full is the claim (README.md's table).

#include <memory>
#include <string>
#include <string_view>

#include "benchmark/benchmark.h"
#include "transport/testing/test_certs.h"
#include "transport/tls/tls.h"

namespace {

using transport::IoOutcome;
using transport::TlsClientOptions;
using transport::TlsContext;
using transport::TlsServerOptions;
using transport::TlsSession;
using transport::TlsVersion;

// Moves what `from` has for the network into `to`.
void Shuttle(TlsSession* from, TlsSession* to) {
  for (std::string_view out = from->PendingOutput(); !out.empty();
       out = from->PendingOutput()) {
    const size_t n = to->FeedCiphertext(out);
    from->ConsumeOutput(n);
    if (n == 0) break;
  }
}

// One connection: handshake, then the server's tickets reach the client
// (a Read processes them and stores the session). False on any error.
bool Connect(const std::shared_ptr<const TlsContext>& client_ctx,
             const std::shared_ptr<const TlsContext>& server_ctx,
             bool* reused) {
  auto client = TlsSession::CreateClient(client_ctx, "localhost", "bench");
  auto server = TlsSession::CreateServer(server_ctx);
  if (!client.ok() || !server.ok()) return false;
  TlsSession* c = client->get();
  TlsSession* s = server->get();
  for (int round = 0; round < 16; ++round) {
    const IoOutcome co = c->Handshake().outcome;
    Shuttle(c, s);
    const IoOutcome so = s->Handshake().outcome;
    Shuttle(s, c);
    if (co == IoOutcome::kError || so == IoOutcome::kError) return false;
    if (c->handshake_complete() && s->handshake_complete()) break;
  }
  if (!c->handshake_complete() || !s->handshake_complete()) return false;
  s->Write({});
  Shuttle(s, c);
  char buf[64];
  if (c->Read(absl::MakeSpan(buf)).outcome == IoOutcome::kError) return false;
  *reused = c->session_reused();
  return true;
}

void BM_Handshake(benchmark::State& state, TlsVersion version, bool resume,
                  bool mtls) {
  const auto& certs = transport::testing::GetTestCertificates();
  if (!certs.ok()) {
    state.SkipWithError("no test certificates");
    return;
  }
  TlsServerOptions so;
  so.certificate_chain_pem = certs->server_chain_pem;
  so.private_key_pem = certs->server_key_pem;
  if (mtls) {
    so.client_ca_pem = certs->ca_pem;
    so.require_client_certificate = true;
  }
  so.max_version = version;
  TlsClientOptions co;
  co.root_certificates_pem = certs->ca_pem;
  co.max_version = version;
  co.session_cache_size = resume ? 64 : 0;
  if (mtls) {
    co.certificate_chain_pem = certs->client_chain_pem;
    co.private_key_pem = certs->client_key_pem;
  }
  auto server_ctx = TlsContext::CreateServer(so);
  auto client_ctx = TlsContext::CreateClient(co);
  if (!server_ctx.ok() || !client_ctx.ok()) {
    state.SkipWithError("context");
    return;
  }
  bool reused = false;
  if (!Connect(*client_ctx, *server_ctx, &reused)) {  // Fills the cache.
    state.SkipWithError("handshake failed");
    return;
  }
  int64_t resumed = 0;
  for (auto _ : state) {
    if (!Connect(*client_ctx, *server_ctx, &reused)) {
      state.SkipWithError("handshake failed");
      return;
    }
    resumed += reused ? 1 : 0;
  }
  if (resume && resumed != state.iterations()) {
    state.SkipWithError("a connection did not resume");
  }
  if (!resume && resumed != 0) state.SkipWithError("a connection resumed");
}

BENCHMARK_CAPTURE(BM_Handshake, tls13_full, TlsVersion::kTls13, false, false);
BENCHMARK_CAPTURE(BM_Handshake, tls13_resumed, TlsVersion::kTls13, true, false);
BENCHMARK_CAPTURE(BM_Handshake, tls13_mtls_full, TlsVersion::kTls13, false,
                  true);
BENCHMARK_CAPTURE(BM_Handshake, tls13_mtls_resumed, TlsVersion::kTls13, true,
                  true);
BENCHMARK_CAPTURE(BM_Handshake, tls12_full, TlsVersion::kTls12, false, false);
BENCHMARK_CAPTURE(BM_Handshake, tls12_resumed, TlsVersion::kTls12, true, false);

}  // namespace
