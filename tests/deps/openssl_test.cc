// Proves @openssl is wired: a TLS 1.3 handshake entirely in memory (two BIO
// pairs), with a certificate made by the test, ALPN selecting h2, and
// application data both ways.
#include <openssl/bio.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>

#include <memory>
#include <string>

#include "gtest/gtest.h"

namespace {

template <typename T, void (*F)(T*)>
struct Deleter {
  void operator()(T* p) const { F(p); }
};
using SslCtxPtr = std::unique_ptr<SSL_CTX, Deleter<SSL_CTX, SSL_CTX_free>>;
using SslPtr = std::unique_ptr<SSL, Deleter<SSL, SSL_free>>;
using PkeyPtr = std::unique_ptr<EVP_PKEY, Deleter<EVP_PKEY, EVP_PKEY_free>>;
using X509Ptr = std::unique_ptr<X509, Deleter<X509, X509_free>>;

std::string OpenSslErrors() {
  std::string out;
  char buf[256];
  while (unsigned long e = ERR_get_error()) {
    ERR_error_string_n(e, buf, sizeof(buf));
    out += buf;
    out += "\n";
  }
  return out;
}

// A self-signed P-256 certificate for CN=localhost, valid for a day.
void MakeCertificate(PkeyPtr* key, X509Ptr* cert) {
  key->reset(EVP_PKEY_Q_keygen(nullptr, nullptr, "EC", "P-256"));
  ASSERT_NE(key->get(), nullptr) << OpenSslErrors();
  cert->reset(X509_new());
  X509* x = cert->get();
  ASSERT_EQ(X509_set_version(x, 2), 1);
  ASN1_INTEGER_set(X509_get_serialNumber(x), 1);
  X509_gmtime_adj(X509_getm_notBefore(x), -60);
  X509_gmtime_adj(X509_getm_notAfter(x), 24 * 3600);
  X509_NAME* name = X509_get_subject_name(x);
  X509_NAME_add_entry_by_txt(
      name, "CN", MBSTRING_ASC,
      reinterpret_cast<const unsigned char*>("localhost"), -1, -1, 0);
  ASSERT_EQ(X509_set_issuer_name(x, name), 1);
  ASSERT_EQ(X509_set_pubkey(x, key->get()), 1);
  ASSERT_GT(X509_sign(x, key->get(), EVP_sha256()), 0) << OpenSslErrors();
}

int SelectH2(SSL*, const unsigned char** out, unsigned char* outlen,
             const unsigned char* in, unsigned int inlen, void*) {
  static const unsigned char kH2[] = {2, 'h', '2'};
  unsigned char* selected = nullptr;
  if (SSL_select_next_proto(&selected, outlen, kH2, sizeof(kH2), in, inlen) !=
      OPENSSL_NPN_NEGOTIATED) {
    return SSL_TLSEXT_ERR_ALERT_FATAL;
  }
  *out = selected;
  return SSL_TLSEXT_ERR_OK;
}

TEST(OpenSslTest, InMemoryTls13HandshakeSelectsH2) {
  PkeyPtr key;
  X509Ptr cert;
  ASSERT_NO_FATAL_FAILURE(MakeCertificate(&key, &cert));

  SslCtxPtr server_ctx(SSL_CTX_new(TLS_server_method()));
  SslCtxPtr client_ctx(SSL_CTX_new(TLS_client_method()));
  ASSERT_TRUE(server_ctx && client_ctx);
  for (SSL_CTX* ctx : {server_ctx.get(), client_ctx.get()}) {
    SSL_CTX_set_min_proto_version(ctx, TLS1_3_VERSION);
  }
  ASSERT_EQ(SSL_CTX_use_certificate(server_ctx.get(), cert.get()), 1);
  ASSERT_EQ(SSL_CTX_use_PrivateKey(server_ctx.get(), key.get()), 1);
  SSL_CTX_set_alpn_select_cb(server_ctx.get(), SelectH2, nullptr);

  // The client trusts exactly our certificate and checks the host name.
  ASSERT_EQ(
      X509_STORE_add_cert(SSL_CTX_get_cert_store(client_ctx.get()), cert.get()),
      1);
  SSL_CTX_set_verify(client_ctx.get(), SSL_VERIFY_PEER, nullptr);
  static const unsigned char kProtos[] = {8,   'h', 't', 't', 'p', '/',
                                          '1', '.', '1', 2,   'h', '2'};
  ASSERT_EQ(SSL_CTX_set_alpn_protos(client_ctx.get(), kProtos, sizeof(kProtos)),
            0);

  SslPtr server(SSL_new(server_ctx.get()));
  SslPtr client(SSL_new(client_ctx.get()));
  ASSERT_EQ(SSL_set1_host(client.get(), "localhost"), 1);
  SSL_set_tlsext_host_name(client.get(), "localhost");

  // Each side's network BIO is the other half of its pair; we shuttle the
  // bytes.
  BIO *client_io, *client_net, *server_io, *server_net;
  ASSERT_EQ(BIO_new_bio_pair(&client_io, 0, &client_net, 0), 1);
  ASSERT_EQ(BIO_new_bio_pair(&server_io, 0, &server_net, 0), 1);
  SSL_set_bio(client.get(), client_io, client_io);
  SSL_set_bio(server.get(), server_io, server_io);
  SSL_set_connect_state(client.get());
  SSL_set_accept_state(server.get());

  auto shuttle = [](BIO* from, BIO* to) {
    char buf[16384];
    int moved = 0;
    int n;
    while ((n = BIO_read(from, buf, sizeof(buf))) > 0) {
      EXPECT_EQ(BIO_write(to, buf, n), n);
      moved += n;
    }
    return moved;
  };

  bool client_done = false, server_done = false;
  for (int round = 0; round < 20 && !(client_done && server_done); ++round) {
    if (!client_done) {
      int r = SSL_do_handshake(client.get());
      client_done = r == 1;
      if (r != 1) {
        ASSERT_EQ(SSL_get_error(client.get(), r), SSL_ERROR_WANT_READ)
            << OpenSslErrors();
      }
    }
    shuttle(client_net, server_net);
    if (!server_done) {
      int r = SSL_do_handshake(server.get());
      server_done = r == 1;
      if (r != 1) {
        ASSERT_EQ(SSL_get_error(server.get(), r), SSL_ERROR_WANT_READ)
            << OpenSslErrors();
      }
    }
    shuttle(server_net, client_net);
  }
  ASSERT_TRUE(client_done && server_done);
  EXPECT_EQ(SSL_version(client.get()), TLS1_3_VERSION);
  EXPECT_EQ(SSL_get_verify_result(client.get()), X509_V_OK);

  const unsigned char* alpn = nullptr;
  unsigned int alpn_len = 0;
  SSL_get0_alpn_selected(client.get(), &alpn, &alpn_len);
  EXPECT_EQ(std::string(reinterpret_cast<const char*>(alpn), alpn_len), "h2");
  SSL_get0_alpn_selected(server.get(), &alpn, &alpn_len);
  EXPECT_EQ(std::string(reinterpret_cast<const char*>(alpn), alpn_len), "h2");

  // Application data, client to server and back.
  const std::string preface = "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n";
  ASSERT_EQ(SSL_write(client.get(), preface.data(), preface.size()),
            static_cast<int>(preface.size()));
  shuttle(client_net, server_net);
  char buf[64];
  int n = SSL_read(server.get(), buf, sizeof(buf));
  ASSERT_EQ(n, static_cast<int>(preface.size())) << OpenSslErrors();
  EXPECT_EQ(std::string(buf, n), preface);

  ASSERT_EQ(SSL_write(server.get(), "ok", 2), 2);
  shuttle(server_net, client_net);
  // TLS 1.3 session tickets arrive first; SSL_read processes them and returns
  // data.
  n = SSL_read(client.get(), buf, sizeof(buf));
  ASSERT_EQ(n, 2) << OpenSslErrors();
  EXPECT_EQ(std::string(buf, n), "ok");

  BIO_free(client_net);
  BIO_free(server_net);
}

}  // namespace
