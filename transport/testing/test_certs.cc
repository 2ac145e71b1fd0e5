#include "transport/testing/test_certs.h"

#include <openssl/bio.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

#include <fstream>
#include <memory>
#include <string_view>
#include <utility>

#include "absl/strings/str_cat.h"
#include "transport/io/absl_view.h"

namespace transport {
namespace testing {
namespace {

struct X509Free {
  void operator()(X509* x) const { X509_free(x); }
};
struct PkeyFree {
  void operator()(EVP_PKEY* k) const { EVP_PKEY_free(k); }
};
struct BioFree {
  void operator()(BIO* b) const { BIO_free(b); }
};
using X509Ptr = std::unique_ptr<X509, X509Free>;
using PkeyPtr = std::unique_ptr<EVP_PKEY, PkeyFree>;
using BioPtr = std::unique_ptr<BIO, BioFree>;

struct KeyAndCert {
  PkeyPtr key;
  X509Ptr cert;
};

absl::Status OpenSslError(std::string_view what) {
  char buf[256] = "unknown";
  if (unsigned long e = ERR_get_error())
    ERR_error_string_n(e, buf, sizeof(buf));
  ERR_clear_error();
  return absl::InternalError(absl::StrCat(ToAbsl(what), ": ", buf));
}

absl::Status AddExtension(X509* cert, X509* issuer, int nid,
                          const char* value) {
  X509V3_CTX ctx;
  X509V3_set_ctx(&ctx, issuer, cert, nullptr, nullptr, 0);
  X509_EXTENSION* ext = X509V3_EXT_conf_nid(nullptr, &ctx, nid, value);
  if (ext == nullptr) return OpenSslError(absl::StrCat("extension ", value));
  const int ok = X509_add_ext(cert, ext, -1);
  X509_EXTENSION_free(ext);
  if (ok != 1) return OpenSslError("X509_add_ext");
  return absl::OkStatus();
}

// Issues a certificate for `cn`. `issuer == nullptr`: self-signed CA.
absl::StatusOr<KeyAndCert> Issue(const std::string& cn,
                                 const KeyAndCert* issuer, bool is_ca,
                                 const char* extended_usage, const char* san,
                                 long serial) {
  KeyAndCert out;
  out.key.reset(EVP_PKEY_Q_keygen(nullptr, nullptr, "EC", "P-256"));
  if (out.key == nullptr) return OpenSslError("keygen");
  out.cert.reset(X509_new());
  X509* x = out.cert.get();
  X509_set_version(x, 2);
  ASN1_INTEGER_set(X509_get_serialNumber(x), serial);
  X509_gmtime_adj(X509_getm_notBefore(x), -3600);
  X509_gmtime_adj(X509_getm_notAfter(x), 2 * 24 * 3600);
  X509_NAME* name = X509_get_subject_name(x);
  X509_NAME_add_entry_by_txt(
      name, "O", MBSTRING_ASC,
      reinterpret_cast<const unsigned char*>("h2rpc test"), -1, -1, 0);
  X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC,
                             reinterpret_cast<const unsigned char*>(cn.c_str()),
                             -1, -1, 0);
  X509* issuer_cert = issuer != nullptr ? issuer->cert.get() : x;
  EVP_PKEY* signing_key = issuer != nullptr ? issuer->key.get() : out.key.get();
  X509_set_issuer_name(x, X509_get_subject_name(issuer_cert));
  X509_set_pubkey(x, out.key.get());
  absl::Status s;
  if (is_ca) {
    s = AddExtension(x, issuer_cert, NID_basic_constraints, "critical,CA:TRUE");
    if (s.ok()) {
      s = AddExtension(x, issuer_cert, NID_key_usage,
                       "critical,keyCertSign,cRLSign");
    }
  } else {
    s = AddExtension(x, issuer_cert, NID_basic_constraints,
                     "critical,CA:FALSE");
    if (s.ok()) {
      s = AddExtension(x, issuer_cert, NID_key_usage,
                       "critical,digitalSignature");
    }
    if (s.ok()) {
      s = AddExtension(x, issuer_cert, NID_ext_key_usage, extended_usage);
    }
    if (s.ok() && san != nullptr) {
      s = AddExtension(x, issuer_cert, NID_subject_alt_name, san);
    }
  }
  if (s.ok()) {
    s = AddExtension(x, issuer_cert, NID_subject_key_identifier, "hash");
  }
  if (s.ok()) {
    s = AddExtension(x, issuer_cert, NID_authority_key_identifier,
                     "keyid:always");
  }
  if (!s.ok()) return s;
  if (X509_sign(x, signing_key, EVP_sha256()) <= 0) {
    return OpenSslError("X509_sign");
  }
  return out;
}

std::string CertPem(X509* x) {
  BioPtr bio(BIO_new(BIO_s_mem()));
  PEM_write_bio_X509(bio.get(), x);
  char* data = nullptr;
  const long len = BIO_get_mem_data(bio.get(), &data);
  return std::string(data, static_cast<size_t>(len));
}

std::string KeyPem(EVP_PKEY* k) {
  BioPtr bio(BIO_new(BIO_s_mem()));
  PEM_write_bio_PrivateKey(bio.get(), k, nullptr, nullptr, 0, nullptr, nullptr);
  char* data = nullptr;
  const long len = BIO_get_mem_data(bio.get(), &data);
  return std::string(data, static_cast<size_t>(len));
}

constexpr char kServerSan[] = "DNS:localhost,IP:127.0.0.1,IP:::1";
constexpr char kNamedClientSan[] =
    "URI:spiffe://h2rpc.test/client,DNS:client.h2rpc.test";

absl::StatusOr<TestCertificates> Generate() {
  TestCertificates out;
  auto ca = Issue("h2rpc test CA", nullptr, true, nullptr, nullptr, 1);
  if (!ca.ok()) return ca.status();
  auto server = Issue("localhost", &*ca, false, "serverAuth", kServerSan, 2);
  if (!server.ok()) return server.status();
  auto client = Issue("test-client", &*ca, false, "clientAuth", nullptr, 3);
  if (!client.ok()) return client.status();
  auto other_ca = Issue("untrusted CA", nullptr, true, nullptr, nullptr, 4);
  if (!other_ca.ok()) return other_ca.status();
  auto other_server =
      Issue("localhost", &*other_ca, false, "serverAuth", kServerSan, 5);
  if (!other_server.ok()) return other_server.status();
  auto named_client =
      Issue("named-client", &*ca, false, "clientAuth", kNamedClientSan, 6);
  if (!named_client.ok()) return named_client.status();
  auto other_client =
      Issue("test-client", &*other_ca, false, "clientAuth", nullptr, 7);
  if (!other_client.ok()) return other_client.status();
  out.ca_pem = CertPem(ca->cert.get());
  out.server_chain_pem = CertPem(server->cert.get());
  out.server_key_pem = KeyPem(server->key.get());
  out.client_chain_pem = CertPem(client->cert.get());
  out.client_key_pem = KeyPem(client->key.get());
  out.untrusted_ca_pem = CertPem(other_ca->cert.get());
  out.untrusted_server_chain_pem = CertPem(other_server->cert.get());
  out.untrusted_server_key_pem = KeyPem(other_server->key.get());
  out.named_client_chain_pem = CertPem(named_client->cert.get());
  out.named_client_key_pem = KeyPem(named_client->key.get());
  out.untrusted_client_chain_pem = CertPem(other_client->cert.get());
  out.untrusted_client_key_pem = KeyPem(other_client->key.get());
  return out;
}

}  // namespace

const absl::StatusOr<TestCertificates>& GetTestCertificates() {
  static const absl::StatusOr<TestCertificates>* const certs =
      new absl::StatusOr<TestCertificates>(Generate());
  return *certs;
}

absl::Status WriteFile(const std::string& path, const std::string& contents) {
  std::ofstream f(path, std::ios::binary | std::ios::trunc);
  f << contents;
  f.close();
  if (!f) return absl::InternalError(absl::StrCat("cannot write ", path));
  return absl::OkStatus();
}

}  // namespace testing
}  // namespace transport
