// TlsSession in memory: two sessions (or one and a raw OpenSSL peer) joined
// by copying ciphertext, no sockets.

#include "transport/tls/tls.h"

#include <openssl/bio.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <string.h>

#include <algorithm>
#include <functional>
#include <memory>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include "absl/strings/match.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "gtest/gtest.h"
#include "transport/testing/echo_peer.h"
#include "transport/testing/test_certs.h"

namespace transport {
namespace {

using ::transport::testing::GetTestCertificates;
using ::transport::testing::Pattern;
using ::transport::testing::TestCertificates;

const TestCertificates& Certs() {
  const auto& certs = GetTestCertificates();
  EXPECT_TRUE(certs.ok()) << certs.status();
  return *certs;
}

TlsServerOptions ServerOptions() {
  TlsServerOptions o;
  o.certificate_chain_pem = Certs().server_chain_pem;
  o.private_key_pem = Certs().server_key_pem;
  return o;
}

TlsClientOptions ClientOptions() {
  TlsClientOptions o;
  o.root_certificates_pem = Certs().ca_pem;
  return o;
}

std::shared_ptr<const TlsContext> Server(const TlsServerOptions& o) {
  auto ctx = TlsContext::CreateServer(o);
  EXPECT_TRUE(ctx.ok()) << ctx.status();
  return ctx.ok() ? *ctx : nullptr;
}

std::shared_ptr<const TlsContext> Client(const TlsClientOptions& o) {
  auto ctx = TlsContext::CreateClient(o);
  EXPECT_TRUE(ctx.ok()) << ctx.status();
  return ctx.ok() ? *ctx : nullptr;
}

// Something that speaks TLS in memory: our session or a raw OpenSSL one.
class Peer {
 public:
  virtual ~Peer() = default;
  virtual IoResult Handshake() = 0;
  // Moves up to `max` bytes of pending ciphertext to `out`.
  virtual void TakeOutput(std::string* out, size_t max) = 0;
  // Returns how much of `data` was taken.
  virtual size_t Give(std::string_view data) = 0;
};

class SessionPeer : public Peer {
 public:
  explicit SessionPeer(std::unique_ptr<TlsSession> s) : s_(std::move(s)) {}
  IoResult Handshake() override { return s_->Handshake(); }
  void TakeOutput(std::string* out, size_t max) override {
    while (max > 0) {
      std::string_view v = s_->PendingOutput();
      if (v.empty()) return;
      v = v.substr(0, max);
      out->append(v.data(), v.size());
      s_->ConsumeOutput(v.size());
      max -= v.size();
    }
  }
  size_t Give(std::string_view data) override {
    return s_->FeedCiphertext(data);
  }
  TlsSession* session() { return s_.get(); }

 private:
  std::unique_ptr<TlsSession> s_;
};

// A plain OpenSSL endpoint with whatever (mis)configuration a test needs.
class RawPeer : public Peer {
 public:
  RawPeer(SSL_CTX* ctx, bool server) : ssl_(SSL_new(ctx)) {
    BIO* internal;
    BIO_new_bio_pair(&internal, 0, &net_, 0);
    SSL_set_bio(ssl_, internal, internal);
    if (server) {
      SSL_set_accept_state(ssl_);
    } else {
      SSL_set_connect_state(ssl_);
    }
  }
  ~RawPeer() override {
    SSL_free(ssl_);
    BIO_free(net_);
  }
  IoResult Handshake() override {
    ERR_clear_error();
    const int r = SSL_do_handshake(ssl_);
    if (r == 1) return IoResult::Ok(0);
    const int e = SSL_get_error(ssl_, r);
    if (e == SSL_ERROR_WANT_READ || e == SSL_ERROR_WANT_WRITE) {
      return IoResult::WouldBlock();
    }
    char buf[256] = "";
    ERR_error_string_n(ERR_peek_error(), buf, sizeof(buf));
    ERR_clear_error();
    return IoResult::Error(absl::UnavailableError(buf));
  }
  void TakeOutput(std::string* out, size_t max) override {
    char buf[4096];
    while (max > 0) {
      const int n =
          BIO_read(net_, buf, static_cast<int>(std::min(max, sizeof(buf))));
      if (n <= 0) return;
      out->append(buf, static_cast<size_t>(n));
      max -= static_cast<size_t>(n);
    }
  }
  size_t Give(std::string_view data) override {
    const int n = BIO_write(net_, data.data(), static_cast<int>(data.size()));
    return n > 0 ? static_cast<size_t>(n) : 0;
  }
  SSL* ssl() { return ssl_; }

 private:
  SSL* ssl_;
  BIO* net_;
};

// Moves ciphertext from `a` to `b`, at most `chunk` bytes per hop (1 splits
// every message at every byte).
void Shuttle(Peer* from, Peer* to, size_t chunk = 1 << 20) {
  for (;;) {
    std::string bytes;
    from->TakeOutput(&bytes, chunk);
    if (bytes.empty()) return;
    ASSERT_EQ(to->Give(bytes), bytes.size());
  }
}

struct Outcome {
  IoResult client = IoResult::WouldBlock();
  IoResult server = IoResult::WouldBlock();
};

Outcome RunHandshake(Peer* client, Peer* server, size_t chunk = 1 << 20) {
  Outcome o;
  for (int round = 0; round < 10000; ++round) {
    if (o.client.outcome != IoOutcome::kError && !o.client.ok()) {
      o.client = client->Handshake();
    }
    Shuttle(client, server, chunk);
    if (o.server.outcome != IoOutcome::kError && !o.server.ok()) {
      o.server = server->Handshake();
    }
    Shuttle(server, client, chunk);
    const bool client_settled =
        o.client.ok() || o.client.outcome == IoOutcome::kError;
    const bool server_settled =
        o.server.ok() || o.server.outcome == IoOutcome::kError;
    if (client_settled && server_settled) break;
    // One side failed and the other is waiting for bytes that never come.
    if ((o.client.outcome == IoOutcome::kError && !server_settled &&
         round > 5) ||
        (o.server.outcome == IoOutcome::kError && !client_settled &&
         round > 5)) {
      break;
    }
  }
  return o;
}

std::unique_ptr<SessionPeer> NewClient(std::shared_ptr<const TlsContext> ctx,
                                       std::string_view name = "localhost") {
  auto s = TlsSession::CreateClient(std::move(ctx), name);
  EXPECT_TRUE(s.ok()) << s.status();
  return std::make_unique<SessionPeer>(*std::move(s));
}

std::unique_ptr<SessionPeer> NewServer(std::shared_ptr<const TlsContext> ctx) {
  auto s = TlsSession::CreateServer(std::move(ctx));
  EXPECT_TRUE(s.ok()) << s.status();
  return std::make_unique<SessionPeer>(*std::move(s));
}

TEST(TlsSessionTest, Tls13HandshakeAgreesOnH2) {
  auto client = NewClient(Client(ClientOptions()));
  auto server = NewServer(Server(ServerOptions()));
  Outcome o = RunHandshake(client.get(), server.get());
  ASSERT_TRUE(o.client.ok()) << o.client.status;
  ASSERT_TRUE(o.server.ok()) << o.server.status;
  for (SessionPeer* p : {client.get(), server.get()}) {
    TlsSession* s = p->session();
    EXPECT_TRUE(s->handshake_complete());
    EXPECT_EQ(s->alpn_protocol(), "h2");
    EXPECT_EQ(s->version(), TLS1_3_VERSION);
    EXPECT_EQ(s->version_name(), "TLSv1.3");
    EXPECT_FALSE(s->cipher_name().empty());
  }
  EXPECT_EQ(client->session()->PeerSubject(), "CN=localhost,O=h2rpc test");
  EXPECT_TRUE(absl::StartsWith(client->session()->PeerCertificatePem(),
                               "-----BEGIN CERTIFICATE-----"));
  EXPECT_EQ(server->session()->peer_certificate(), nullptr);  // no mTLS
}

TEST(TlsSessionTest, HandshakeWithInputSplitAtEveryByte) {
  auto client = NewClient(Client(ClientOptions()));
  auto server = NewServer(Server(ServerOptions()));
  Outcome o = RunHandshake(client.get(), server.get(), /*chunk=*/1);
  ASSERT_TRUE(o.client.ok()) << o.client.status;
  ASSERT_TRUE(o.server.ok()) << o.server.status;
}

TEST(TlsSessionTest, ForcedTls12StillAgreesOnH2WithAnAeadCipher) {
  TlsClientOptions co = ClientOptions();
  co.max_version = TlsVersion::kTls12;
  auto client = NewClient(Client(co));
  auto server = NewServer(Server(ServerOptions()));
  Outcome o = RunHandshake(client.get(), server.get());
  ASSERT_TRUE(o.client.ok()) << o.client.status;
  ASSERT_TRUE(o.server.ok()) << o.server.status;
  EXPECT_EQ(client->session()->version(), TLS1_2_VERSION);
  EXPECT_EQ(server->session()->version_name(), "TLSv1.2");
  EXPECT_EQ(server->session()->alpn_protocol(), "h2");
  const std::string cipher = client->session()->cipher_name();
  EXPECT_TRUE(absl::StartsWith(cipher, "ECDHE-")) << cipher;
  EXPECT_TRUE(absl::StrContains(cipher, "GCM") ||
              absl::StrContains(cipher, "CHACHA20"))
      << cipher;
}

TEST(TlsSessionTest, ServerLimitedToTls12) {
  TlsServerOptions so = ServerOptions();
  so.max_version = TlsVersion::kTls12;
  auto client = NewClient(Client(ClientOptions()));
  auto server = NewServer(Server(so));
  Outcome o = RunHandshake(client.get(), server.get());
  ASSERT_TRUE(o.client.ok()) << o.client.status;
  EXPECT_EQ(client->session()->version(), TLS1_2_VERSION);
}

TEST(TlsSessionTest, Tls13OnlyClientAndTls12OnlyServerFail) {
  TlsClientOptions co = ClientOptions();
  co.min_version = TlsVersion::kTls13;
  TlsServerOptions so = ServerOptions();
  so.max_version = TlsVersion::kTls12;
  auto client = NewClient(Client(co));
  auto server = NewServer(Server(so));
  Outcome o = RunHandshake(client.get(), server.get());
  EXPECT_EQ(o.client.outcome, IoOutcome::kError);
  EXPECT_EQ(o.server.outcome, IoOutcome::kError);
}

TEST(TlsSessionTest, WrongHostnameFails) {
  auto client = NewClient(Client(ClientOptions()), "wrong.example");
  auto server = NewServer(Server(ServerOptions()));
  Outcome o = RunHandshake(client.get(), server.get());
  ASSERT_EQ(o.client.outcome, IoOutcome::kError);
  EXPECT_EQ(o.client.status.code(), absl::StatusCode::kUnauthenticated)
      << o.client.status;
  EXPECT_TRUE(absl::StrContains(o.client.status.message(), "hostname mismatch"))
      << o.client.status;
  EXPECT_NE(o.server.outcome, IoOutcome::kOk);
  // Sticky: the session refuses everything afterwards.
  char buf[8];
  EXPECT_EQ(client->session()->Read(absl::MakeSpan(buf)).status,
            o.client.status);
  std::string_view data = "x";
  EXPECT_EQ(client->session()->Write({&data, 1}).status, o.client.status);
}

TEST(TlsSessionTest, ServerNameOverrideVerifiesAnotherName) {
  TlsClientOptions co = ClientOptions();
  co.server_name_override = "localhost";
  auto client = NewClient(Client(co), "wrong.example");
  auto server = NewServer(Server(ServerOptions()));
  Outcome o = RunHandshake(client.get(), server.get());
  EXPECT_TRUE(o.client.ok()) << o.client.status;
}

TEST(TlsSessionTest, IpLiteralIsVerifiedAgainstIpSan) {
  {
    auto client = NewClient(Client(ClientOptions()), "127.0.0.1");
    auto server = NewServer(Server(ServerOptions()));
    Outcome o = RunHandshake(client.get(), server.get());
    EXPECT_TRUE(o.client.ok()) << o.client.status;
  }
  {
    auto client = NewClient(Client(ClientOptions()), "[::1]");
    auto server = NewServer(Server(ServerOptions()));
    Outcome o = RunHandshake(client.get(), server.get());
    EXPECT_TRUE(o.client.ok()) << o.client.status;
  }
  {
    auto client = NewClient(Client(ClientOptions()), "10.1.2.3");
    auto server = NewServer(Server(ServerOptions()));
    Outcome o = RunHandshake(client.get(), server.get());
    EXPECT_EQ(o.client.status.code(), absl::StatusCode::kUnauthenticated)
        << o.client.status;
  }
}

TEST(TlsSessionTest, UntrustedCaFails) {
  TlsServerOptions so;
  so.certificate_chain_pem = Certs().untrusted_server_chain_pem;
  so.private_key_pem = Certs().untrusted_server_key_pem;
  auto client = NewClient(Client(ClientOptions()));
  auto server = NewServer(Server(so));
  Outcome o = RunHandshake(client.get(), server.get());
  ASSERT_EQ(o.client.outcome, IoOutcome::kError);
  EXPECT_EQ(o.client.status.code(), absl::StatusCode::kUnauthenticated)
      << o.client.status;
  EXPECT_TRUE(absl::StrContains(o.client.status.message(), "issuer"))
      << o.client.status;
  // The server hears about it through an alert.
  ASSERT_EQ(o.server.outcome, IoOutcome::kError);
  EXPECT_EQ(o.server.status.code(), absl::StatusCode::kUnauthenticated)
      << o.server.status;
}

TEST(TlsSessionTest, VerificationOffAcceptsAnyCertificateButStillNeedsH2) {
  TlsClientOptions co;
  co.verify_peer = false;
  TlsServerOptions so;
  so.certificate_chain_pem = Certs().untrusted_server_chain_pem;
  so.private_key_pem = Certs().untrusted_server_key_pem;
  auto client = NewClient(Client(co), "");
  auto server = NewServer(Server(so));
  Outcome o = RunHandshake(client.get(), server.get());
  EXPECT_TRUE(o.client.ok()) << o.client.status;
  EXPECT_EQ(client->session()->alpn_protocol(), "h2");
  // A certificate arrived, but nobody vouches for it.
  EXPECT_NE(client->session()->peer_certificate(), nullptr);
  EXPECT_FALSE(client->session()->peer_verified());
}

// A raw OpenSSL client context offering `alpn` (wire format; empty: none).
SSL_CTX* RawClientCtx(std::string_view alpn) {
  SSL_CTX* ctx = SSL_CTX_new(TLS_client_method());
  SSL_CTX_set_verify(ctx, SSL_VERIFY_NONE, nullptr);
  if (!alpn.empty()) {
    SSL_CTX_set_alpn_protos(ctx,
                            reinterpret_cast<const unsigned char*>(alpn.data()),
                            static_cast<unsigned>(alpn.size()));
  }
  return ctx;
}

TEST(TlsSessionTest, ClientOfferingOnlyHttp11IsRefused) {
  SSL_CTX* ctx = RawClientCtx(std::string_view("\x08http/1.1", 9));
  RawPeer client(ctx, false);
  auto server = NewServer(Server(ServerOptions()));
  Outcome o = RunHandshake(&client, server.get());
  ASSERT_EQ(o.server.outcome, IoOutcome::kError);
  EXPECT_EQ(o.server.status.code(), absl::StatusCode::kFailedPrecondition)
      << o.server.status;
  EXPECT_TRUE(absl::StrContains(o.server.status.message(), "h2"))
      << o.server.status;
  ASSERT_EQ(o.client.outcome, IoOutcome::kError);
  EXPECT_TRUE(
      absl::StrContains(o.client.status.message(), "no application protocol"))
      << o.client.status;
  SSL_CTX_free(ctx);
}

// A TLS 1.1 client (OpenSSL allows it only at security level 0) is refused
// by our server's TLS 1.2 minimum.
TEST(TlsSessionTest, Tls11ClientIsRefused) {
  SSL_CTX* ctx = RawClientCtx(std::string_view("\x02h2", 3));
  SSL_CTX_set_security_level(ctx, 0);
  SSL_CTX_set_min_proto_version(ctx, TLS1_1_VERSION);
  SSL_CTX_set_max_proto_version(ctx, TLS1_1_VERSION);
  RawPeer client(ctx, false);
  auto server = NewServer(Server(ServerOptions()));
  Outcome o = RunHandshake(&client, server.get());
  ASSERT_EQ(o.server.outcome, IoOutcome::kError);
  EXPECT_EQ(o.server.status.code(), absl::StatusCode::kUnavailable)
      << o.server.status;
  EXPECT_TRUE(absl::StrContains(o.server.status.message(), "protocol"))
      << o.server.status;
  EXPECT_EQ(o.client.outcome, IoOutcome::kError);
  SSL_CTX_free(ctx);
}

TEST(TlsSessionTest, ClientWithoutAlpnIsRefused) {
  SSL_CTX* ctx = RawClientCtx("");
  RawPeer client(ctx, false);
  auto server = NewServer(Server(ServerOptions()));
  Outcome o = RunHandshake(&client, server.get());
  ASSERT_EQ(o.server.outcome, IoOutcome::kError);
  EXPECT_EQ(o.server.status.code(), absl::StatusCode::kFailedPrecondition)
      << o.server.status;
  EXPECT_TRUE(absl::StrContains(o.server.status.message(), "no ALPN"))
      << o.server.status;
  SSL_CTX_free(ctx);
}

TEST(TlsSessionTest, ServerNotSelectingH2IsRefusedByOurClient) {
  // A raw server with our certificate and no ALPN callback.
  SSL_CTX* ctx = SSL_CTX_new(TLS_server_method());
  {
    auto server_ctx = Server(ServerOptions());
    // Borrow the key and certificate from a context we configured.
    SSL_CTX_use_certificate(
        ctx, SSL_CTX_get0_certificate(server_ctx->native_handle()));
    SSL_CTX_use_PrivateKey(
        ctx, SSL_CTX_get0_privatekey(server_ctx->native_handle()));
  }
  RawPeer server(ctx, true);
  auto client = NewClient(Client(ClientOptions()));
  Outcome o = RunHandshake(client.get(), &server);
  ASSERT_EQ(o.client.outcome, IoOutcome::kError);
  EXPECT_EQ(o.client.status.code(), absl::StatusCode::kFailedPrecondition)
      << o.client.status;
  SSL_CTX_free(ctx);
}

TlsServerOptions MtlsServerOptions() {
  TlsServerOptions so = ServerOptions();
  so.client_ca_pem = Certs().ca_pem;
  so.require_client_certificate = true;
  return so;
}

TEST(TlsSessionTest, MtlsRefusesClientWithoutCertificate) {
  auto client = NewClient(Client(ClientOptions()));
  auto server = NewServer(Server(MtlsServerOptions()));
  Outcome o = RunHandshake(client.get(), server.get());
  ASSERT_EQ(o.server.outcome, IoOutcome::kError);
  EXPECT_EQ(o.server.status.code(), absl::StatusCode::kUnauthenticated)
      << o.server.status;
  // TLS 1.3: the client may finish first and learn of the refusal from the
  // server's alert on its next read.
  IoResult r = o.client;
  if (r.ok()) {
    char buf[16];
    r = client->session()->Read(absl::MakeSpan(buf));
  }
  ASSERT_EQ(r.outcome, IoOutcome::kError);
  EXPECT_EQ(r.status.code(), absl::StatusCode::kUnauthenticated) << r.status;
}

TEST(TlsSessionTest, MtlsAcceptsClientCertificate) {
  TlsClientOptions co = ClientOptions();
  co.certificate_chain_pem = Certs().client_chain_pem;
  co.private_key_pem = Certs().client_key_pem;
  auto client = NewClient(Client(co));
  auto server = NewServer(Server(MtlsServerOptions()));
  Outcome o = RunHandshake(client.get(), server.get());
  ASSERT_TRUE(o.client.ok()) << o.client.status;
  ASSERT_TRUE(o.server.ok()) << o.server.status;
  EXPECT_EQ(server->session()->PeerSubject(), "CN=test-client,O=h2rpc test");
}

TEST(TlsSessionTest, PeerNamesFromTheCertificate) {
  TlsClientOptions co = ClientOptions();
  co.certificate_chain_pem = Certs().named_client_chain_pem;
  co.private_key_pem = Certs().named_client_key_pem;
  auto client = NewClient(Client(co));
  auto server = NewServer(Server(MtlsServerOptions()));
  Outcome o = RunHandshake(client.get(), server.get());
  ASSERT_TRUE(o.client.ok()) << o.client.status;
  ASSERT_TRUE(o.server.ok()) << o.server.status;
  EXPECT_EQ(client->session()->PeerCommonName(), "localhost");
  EXPECT_EQ(client->session()->PeerSubjectAltNames(),
            (std::vector<std::string>{"localhost", "127.0.0.1", "::1"}));
  EXPECT_EQ(server->session()->PeerCommonName(), "named-client");
  EXPECT_TRUE(client->session()->peer_verified());
  EXPECT_TRUE(server->session()->peer_verified());
  EXPECT_EQ(server->session()->PeerSubjectAltNames(),
            (std::vector<std::string>{"spiffe://h2rpc.test/client",
                                      "client.h2rpc.test"}));
  // No certificate, no names.
  auto plain_client = NewClient(Client(ClientOptions()));
  auto plain_server = NewServer(Server(ServerOptions()));
  ASSERT_TRUE(RunHandshake(plain_client.get(), plain_server.get()).server.ok());
  EXPECT_EQ(plain_server->session()->PeerCommonName(), "");
  EXPECT_FALSE(plain_server->session()->peer_verified());
  EXPECT_TRUE(plain_server->session()->PeerSubjectAltNames().empty());
}

TEST(TlsSessionTest, MtlsRefusesClientCertificateFromUntrustedCa) {
  TlsClientOptions co = ClientOptions();
  co.certificate_chain_pem = Certs().untrusted_server_chain_pem;
  co.private_key_pem = Certs().untrusted_server_key_pem;
  auto client = NewClient(Client(co));
  auto server = NewServer(Server(MtlsServerOptions()));
  Outcome o = RunHandshake(client.get(), server.get());
  ASSERT_EQ(o.server.outcome, IoOutcome::kError);
  EXPECT_EQ(o.server.status.code(), absl::StatusCode::kUnauthenticated)
      << o.server.status;
}

// Moves `payload` from `writer` to `reader` through bounded buffers; the
// writer offers many small pieces and some large ones per call.
std::string Transfer(SessionPeer* writer, SessionPeer* reader,
                     const std::string& payload) {
  std::string received;
  size_t sent = 0;
  char buf[16384];
  for (int guard = 0; guard < 100000 && received.size() < payload.size();
       ++guard) {
    if (sent < payload.size()) {
      std::vector<std::string_view> pieces;
      size_t at = sent;
      for (size_t len : {9, 1, 100, 30000, 9, 5000, 7}) {
        if (at >= payload.size()) break;
        pieces.push_back(std::string_view(payload).substr(at, len));
        at += pieces.back().size();
      }
      IoResult w = writer->session()->Write(pieces);
      EXPECT_TRUE(w.ok()) << w.status;
      sent += w.bytes;
    }
    // Ciphertext straight from one session's output buffer into the other's
    // input buffer, as far as it fits.
    for (;;) {
      absl::Span<char> space = reader->session()->InputSpace();
      std::string_view out = writer->session()->PendingOutput();
      if (space.empty() || out.empty()) break;
      const size_t n = std::min(space.size(), out.size());
      memcpy(space.data(), out.data(), n);
      reader->session()->CommitInput(n);
      writer->session()->ConsumeOutput(n);
    }
    for (;;) {
      IoResult r = reader->session()->Read(absl::MakeSpan(buf));
      if (!r.ok()) {
        EXPECT_EQ(r.outcome, IoOutcome::kWouldBlock) << r.status;
        break;
      }
      received.append(buf, r.bytes);
    }
  }
  return received;
}

TEST(TlsSessionTest, MegabyteBothWaysThroughBoundedBuffers) {
  auto client = NewClient(Client(ClientOptions()));
  auto server = NewServer(Server(ServerOptions()));
  Outcome o = RunHandshake(client.get(), server.get());
  ASSERT_TRUE(o.client.ok() && o.server.ok());
  const std::string up = Pattern(1 << 20, 3);
  const std::string down = Pattern(1 << 20, 4);
  EXPECT_TRUE(Transfer(client.get(), server.get(), up) == up);
  EXPECT_TRUE(Transfer(server.get(), client.get(), down) == down);
}

TEST(TlsSessionTest, WriteTakesOnlyWhatFitsTheOutputBuffer) {
  auto client = NewClient(Client(ClientOptions()));
  auto server = NewServer(Server(ServerOptions()));
  ASSERT_TRUE(RunHandshake(client.get(), server.get()).client.ok());
  const std::string big = Pattern(1 << 20);
  std::string_view v = big;
  IoResult w = client->session()->Write({&v, 1});
  ASSERT_TRUE(w.ok()) << w.status;
  EXPECT_GT(w.bytes, 0u);
  EXPECT_LT(w.bytes, TlsSession::kOutputBufferSize);
  EXPECT_LE(client->session()->pending_output_size(),
            TlsSession::kOutputBufferSize);
  // Nothing more fits until the output is drained.
  IoResult again = client->session()->Write({&v, 1});
  EXPECT_TRUE(again.ok());
  EXPECT_EQ(again.bytes, 0u);
}

TEST(TlsSessionTest, CloseNotifyReadsAsEof) {
  auto client = NewClient(Client(ClientOptions()));
  auto server = NewServer(Server(ServerOptions()));
  ASSERT_TRUE(RunHandshake(client.get(), server.get()).server.ok());
  std::string_view last = "last words";
  ASSERT_TRUE(client->session()->Write({&last, 1}).ok());
  client->session()->Shutdown();
  Shuttle(client.get(), server.get());
  char buf[64];
  IoResult r = server->session()->Read(absl::MakeSpan(buf));
  ASSERT_TRUE(r.ok()) << r.status;
  EXPECT_EQ(std::string_view(buf, r.bytes), "last words");
  EXPECT_EQ(server->session()->Read(absl::MakeSpan(buf)).outcome,
            IoOutcome::kEof);
  EXPECT_EQ(client->session()->Write({&last, 1}).outcome, IoOutcome::kError);
}

TEST(TlsContextTest, ConfigurationErrors) {
  TlsServerOptions bad_cert;
  bad_cert.certificate_chain_pem = "not a pem";
  bad_cert.private_key_pem = Certs().server_key_pem;
  EXPECT_EQ(TlsContext::CreateServer(bad_cert).status().code(),
            absl::StatusCode::kInvalidArgument);

  TlsServerOptions mismatched = ServerOptions();
  mismatched.private_key_pem = Certs().client_key_pem;
  auto m = TlsContext::CreateServer(mismatched);
  EXPECT_EQ(m.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(absl::StrContains(m.status().message(), "does not match"))
      << m.status();

  TlsServerOptions no_key = ServerOptions();
  no_key.private_key_pem = "";
  EXPECT_EQ(TlsContext::CreateServer(no_key).status().code(),
            absl::StatusCode::kInvalidArgument);

  TlsServerOptions inverted = ServerOptions();
  inverted.min_version = TlsVersion::kTls13;
  inverted.max_version = TlsVersion::kTls12;
  EXPECT_EQ(TlsContext::CreateServer(inverted).status().code(),
            absl::StatusCode::kInvalidArgument);

  TlsServerOptions require_without_ca = ServerOptions();
  require_without_ca.require_client_certificate = true;
  EXPECT_EQ(TlsContext::CreateServer(require_without_ca).status().code(),
            absl::StatusCode::kInvalidArgument);

  TlsClientOptions bad_roots;
  bad_roots.root_certificates_pem = "garbage";
  EXPECT_EQ(TlsContext::CreateClient(bad_roots).status().code(),
            absl::StatusCode::kInvalidArgument);

  auto client_ctx = Client(ClientOptions());
  EXPECT_EQ(TlsSession::CreateClient(client_ctx, "").status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(TlsSession::CreateServer(client_ctx).status().code(),
            absl::StatusCode::kInvalidArgument);
}

// ---- Session resumption ----

// One connection: handshake, then the server's post-handshake messages (TLS
// 1.3 tickets) reach the client, which reads them. Returns whether the
// client resumed; `server_out` (if given) keeps the server session.
struct Connected {
  bool ok = false;
  bool client_reused = false;
  bool server_reused = false;
  std::string server_peer_subject;
  // The first 16 octets of the client's newest ticket: the name of the
  // server key that sealed it.
  std::string ticket_key_name;
};

Connected ConnectOnce(std::shared_ptr<const TlsContext> client_ctx,
                      std::shared_ptr<const TlsContext> server_ctx,
                      std::string_view name = "localhost",
                      std::string_view scope = "") {
  Connected c;
  auto s = TlsSession::CreateClient(client_ctx, name, scope);
  EXPECT_TRUE(s.ok()) << s.status();
  if (!s.ok()) return c;
  SessionPeer client(*std::move(s));
  auto server = NewServer(std::move(server_ctx));
  Outcome o = RunHandshake(&client, server.get());
  EXPECT_TRUE(o.client.ok()) << o.client.status;
  EXPECT_TRUE(o.server.ok()) << o.server.status;
  if (!o.client.ok() || !o.server.ok()) return c;
  // Tickets travel after the handshake; a Read processes them.
  server->session()->Write({});
  Shuttle(server.get(), &client, 1 << 20);
  char buf[64];
  IoResult r = client.session()->Read(absl::MakeSpan(buf));
  EXPECT_EQ(r.outcome, IoOutcome::kWouldBlock) << r.status;
  c.ok = true;
  c.client_reused = client.session()->session_reused();
  c.server_reused = server->session()->session_reused();
  c.server_peer_subject = server->session()->PeerSubject();
  if (SSL_SESSION* session =
          SSL_get_session(client.session()->native_handle())) {
    const unsigned char* ticket = nullptr;
    size_t len = 0;
    SSL_SESSION_get0_ticket(session, &ticket, &len);
    if (len >= 16) c.ticket_key_name.assign(ticket, ticket + 16);
  }
  return c;
}

TEST(TlsResumptionTest, Tls13ResumesWithASingleUseTicket) {
  auto client_ctx = Client(ClientOptions());
  auto server_ctx = Server(ServerOptions());
  EXPECT_EQ(client_ctx->cached_sessions(), 0u);
  Connected first = ConnectOnce(client_ctx, server_ctx);
  ASSERT_TRUE(first.ok);
  EXPECT_FALSE(first.client_reused);
  EXPECT_FALSE(first.server_reused);
  EXPECT_EQ(client_ctx->cached_sessions(), 1u);
  for (int i = 0; i < 3; ++i) {
    // Offering the ticket takes it out of the cache; the resumed connection
    // brings a fresh one.
    auto s = TlsSession::CreateClient(client_ctx, "localhost");
    ASSERT_TRUE(s.ok());
    EXPECT_EQ(client_ctx->cached_sessions(), 0u);
    s->reset();
    Connected again = ConnectOnce(client_ctx, server_ctx);
    // The ticket taken by the abandoned session above is gone: full
    // handshake, then a new ticket; the next round resumes.
    ASSERT_TRUE(again.ok);
    EXPECT_FALSE(again.client_reused);
    Connected resumed = ConnectOnce(client_ctx, server_ctx);
    ASSERT_TRUE(resumed.ok);
    EXPECT_TRUE(resumed.client_reused) << i;
    EXPECT_TRUE(resumed.server_reused) << i;
    EXPECT_EQ(client_ctx->cached_sessions(), 1u);
  }
}

TEST(TlsResumptionTest, Tls12ResumesAndKeepsTheSession) {
  TlsClientOptions co = ClientOptions();
  co.max_version = TlsVersion::kTls12;
  auto client_ctx = Client(co);
  auto server_ctx = Server(ServerOptions());
  ASSERT_TRUE(ConnectOnce(client_ctx, server_ctx).ok);
  EXPECT_EQ(client_ctx->cached_sessions(), 1u);
  for (int i = 0; i < 3; ++i) {
    Connected c = ConnectOnce(client_ctx, server_ctx);
    ASSERT_TRUE(c.ok);
    EXPECT_TRUE(c.client_reused) << i;
    EXPECT_TRUE(c.server_reused) << i;
    EXPECT_EQ(client_ctx->cached_sessions(), 1u);
  }
}

TEST(TlsResumptionTest, ResumedMtlsSessionKeepsTheClientIdentity) {
  TlsClientOptions co = ClientOptions();
  co.certificate_chain_pem = Certs().client_chain_pem;
  co.private_key_pem = Certs().client_key_pem;
  auto client_ctx = Client(co);
  auto server_ctx = Server(MtlsServerOptions());
  Connected first = ConnectOnce(client_ctx, server_ctx);
  ASSERT_TRUE(first.ok);
  Connected second = ConnectOnce(client_ctx, server_ctx);
  ASSERT_TRUE(second.ok);
  EXPECT_TRUE(second.server_reused);
  EXPECT_EQ(second.server_peer_subject, "CN=test-client,O=h2rpc test");
}

TEST(TlsResumptionTest, SessionsAreKeptPerNameAndScope) {
  auto client_ctx = Client(ClientOptions());
  auto server_ctx = Server(ServerOptions());
  ASSERT_TRUE(ConnectOnce(client_ctx, server_ctx, "localhost", "a").ok);
  Connected other_name = ConnectOnce(client_ctx, server_ctx, "127.0.0.1", "a");
  ASSERT_TRUE(other_name.ok);
  EXPECT_FALSE(other_name.client_reused);
  Connected other_scope = ConnectOnce(client_ctx, server_ctx, "localhost", "b");
  ASSERT_TRUE(other_scope.ok);
  EXPECT_FALSE(other_scope.client_reused);
  EXPECT_EQ(client_ctx->cached_sessions(), 3u);
  Connected same = ConnectOnce(client_ctx, server_ctx, "localhost", "a");
  ASSERT_TRUE(same.ok);
  EXPECT_TRUE(same.client_reused);
}

TEST(TlsResumptionTest, CacheIsBounded) {
  TlsClientOptions co = ClientOptions();
  co.session_cache_size = 2;
  auto client_ctx = Client(co);
  auto server_ctx = Server(ServerOptions());
  for (const char* scope : {"a", "b", "c"}) {
    ASSERT_TRUE(ConnectOnce(client_ctx, server_ctx, "localhost", scope).ok);
  }
  EXPECT_EQ(client_ctx->cached_sessions(), 2u);
  // "a" was the least recently used: evicted.
  EXPECT_FALSE(
      ConnectOnce(client_ctx, server_ctx, "localhost", "a").client_reused);
  EXPECT_TRUE(
      ConnectOnce(client_ctx, server_ctx, "localhost", "c").client_reused);
}

TEST(TlsResumptionTest, AnotherServerContextCannotOpenTheTicket) {
  auto client_ctx = Client(ClientOptions());
  ASSERT_TRUE(ConnectOnce(client_ctx, Server(ServerOptions())).ok);
  EXPECT_EQ(client_ctx->cached_sessions(), 1u);
  // A different server (its own ticket key): a full handshake, no error.
  Connected c = ConnectOnce(client_ctx, Server(ServerOptions()));
  ASSERT_TRUE(c.ok);
  EXPECT_FALSE(c.client_reused);
}

// The ticket keys' clock (TlsServerOptions::ticket_key_clock), moved by hand.
class FakeClock {
 public:
  absl::Time Now() {
    absl::MutexLock lock(&mu_);
    return now_;
  }
  void Advance(absl::Duration d) {
    absl::MutexLock lock(&mu_);
    now_ += d;
  }
  std::function<absl::Time()> AsFunction() {
    return [this] { return Now(); };
  }

 private:
  absl::Mutex mu_;
  absl::Time now_ = absl::FromUnixSeconds(1700000000);
};

TEST(TlsResumptionTest, TicketKeysRotateAndOldOnesStillOpen) {
  FakeClock clock;
  TlsServerOptions so = ServerOptions();
  so.ticket_key_rotation = absl::Hours(12);
  so.ticket_key_clock = clock.AsFunction();
  auto server_ctx = Server(so);
  auto client_ctx = Client(ClientOptions());
  Connected first = ConnectOnce(client_ctx, server_ctx);
  ASSERT_TRUE(first.ok);
  ASSERT_EQ(first.ticket_key_name.size(), 16u);
  // Within the rotation period: the same key seals the next ticket.
  clock.Advance(absl::Hours(12) - absl::Seconds(1));
  Connected second = ConnectOnce(client_ctx, server_ctx);
  ASSERT_TRUE(second.ok);
  EXPECT_TRUE(second.server_reused);
  EXPECT_EQ(second.ticket_key_name, first.ticket_key_name);
  // After it: the ticket sealed with the retired key still resumes, and the
  // new ticket comes sealed with a new key.
  clock.Advance(absl::Seconds(1));
  Connected third = ConnectOnce(client_ctx, server_ctx);
  ASSERT_TRUE(third.ok);
  EXPECT_TRUE(third.server_reused);
  EXPECT_NE(third.ticket_key_name, first.ticket_key_name);
  ASSERT_EQ(third.ticket_key_name.size(), 16u);
}

// A key opens tickets until session_lifetime after it stopped sealing, then
// it is erased: rotation + lifetime after it was made, even when no handshake
// came in between to replace it.
TEST(TlsResumptionTest, TicketKeysAreErasedOnTimeOnAnIdleServer) {
  FakeClock clock;
  TlsServerOptions so = ServerOptions();
  so.ticket_key_rotation = absl::Hours(12);
  so.session_lifetime = absl::Hours(2);
  so.ticket_key_clock = clock.AsFunction();
  auto server_ctx = Server(so);
  // Two clients, each with a ticket sealed by the first key.
  auto early = Client(ClientOptions());
  auto late = Client(ClientOptions());
  ASSERT_TRUE(ConnectOnce(early, server_ctx).ok);
  ASSERT_TRUE(ConnectOnce(late, server_ctx).ok);
  clock.Advance(absl::Hours(14) - absl::Seconds(1));
  Connected kept = ConnectOnce(early, server_ctx);
  ASSERT_TRUE(kept.ok);
  EXPECT_TRUE(kept.server_reused);
  clock.Advance(absl::Seconds(1));
  Connected erased = ConnectOnce(late, server_ctx);
  ASSERT_TRUE(erased.ok);
  EXPECT_FALSE(erased.server_reused);
}

TEST(TlsResumptionTest, BadTicketSettingsAreRefused) {
  TlsServerOptions so = ServerOptions();
  so.ticket_key_rotation = absl::ZeroDuration();
  EXPECT_EQ(TlsContext::CreateServer(so).status().code(),
            absl::StatusCode::kInvalidArgument);
  so = ServerOptions();
  so.session_lifetime = absl::Milliseconds(10);
  EXPECT_EQ(TlsContext::CreateServer(so).status().code(),
            absl::StatusCode::kInvalidArgument);
}

TEST(TlsResumptionTest, OffOnEitherSide) {
  TlsServerOptions no_tickets = ServerOptions();
  no_tickets.session_tickets = false;
  for (TlsVersion v : {TlsVersion::kTls12, TlsVersion::kTls13}) {
    TlsClientOptions co = ClientOptions();
    co.max_version = v;
    auto client_ctx = Client(co);
    auto server_ctx = Server(no_tickets);
    ASSERT_TRUE(ConnectOnce(client_ctx, server_ctx).ok);
    EXPECT_EQ(client_ctx->cached_sessions(), 0u);
    EXPECT_FALSE(ConnectOnce(client_ctx, server_ctx).client_reused);
  }
  TlsClientOptions no_cache = ClientOptions();
  no_cache.session_cache_size = 0;
  auto client_ctx = Client(no_cache);
  auto server_ctx = Server(ServerOptions());
  ASSERT_TRUE(ConnectOnce(client_ctx, server_ctx).ok);
  EXPECT_EQ(client_ctx->cached_sessions(), 0u);
  EXPECT_FALSE(ConnectOnce(client_ctx, server_ctx).client_reused);
}

TEST(TlsContextTest, ReadPemFileReportsMissingFile) {
  auto r = ReadPemFile("/nonexistent/cert.pem");
  EXPECT_EQ(r.status().code(), absl::StatusCode::kNotFound) << r.status();
}

}  // namespace
}  // namespace transport
