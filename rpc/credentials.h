// Credentials for servers and channels, in grpc++'s shape: insecure (plain
// TCP, HTTP/2 with prior knowledge) or TLS (transport/tls/tls.h: TLS 1.2+, ALPN
// h2, certificates verified against the given roots).
//
//   rpc::SslServerCredentialsOptions server_options;
//   server_options.pem_key_cert_pairs.push_back({key_pem, chain_pem});
//   auto server_creds = rpc::SslServerCredentials(server_options);
//   rpc::SslCredentialsOptions channel_options;
//   channel_options.pem_root_certs = ca_pem;
//   auto channel_creds = rpc::SslCredentials(channel_options);
//
// A credentials object whose PEM does not load carries the error: the server
// then fails to start (BuildAndStart returns nullptr) and a channel fails its
// calls with UNAVAILABLE.
//
// With pem_root_certs, SslServerCredentials asks clients for certificates
// (force_client_auth: requires them); handlers see the client's identity in
// ServerContext::auth_context() (rpc/auth_context.h). One ChannelCredentials
// object is one TLS session cache: channels made with it resume the sessions
// of earlier connections to the same server (name and address).

#ifndef RPC_CREDENTIALS_H_
#define RPC_CREDENTIALS_H_

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"

namespace transport {
class TlsContext;
}  // namespace transport

namespace rpc {

class ServerCredentials {
 public:
  // Insecure when `tls` is nullptr and `status` OK.
  ServerCredentials(std::shared_ptr<const transport::TlsContext> tls,
                    absl::Status status)
      : tls_(std::move(tls)), status_(std::move(status)) {}
  bool secure() const { return tls_ != nullptr || !status_.ok(); }
  const std::shared_ptr<const transport::TlsContext>& tls_context() const {
    return tls_;
  }
  const absl::Status& status() const { return status_; }

 private:
  std::shared_ptr<const transport::TlsContext> tls_;
  absl::Status status_;
};

class ChannelCredentials {
 public:
  ChannelCredentials(std::shared_ptr<const transport::TlsContext> tls,
                     absl::Status status)
      : tls_(std::move(tls)), status_(std::move(status)) {}
  bool secure() const { return tls_ != nullptr || !status_.ok(); }
  const std::shared_ptr<const transport::TlsContext>& tls_context() const {
    return tls_;
  }
  const absl::Status& status() const { return status_; }

 private:
  std::shared_ptr<const transport::TlsContext> tls_;
  absl::Status status_;
};

std::shared_ptr<ServerCredentials> InsecureServerCredentials();
std::shared_ptr<ChannelCredentials> InsecureChannelCredentials();

// grpc::SslServerCredentialsOptions.
// Whether a TLS server asks clients for a certificate (grpc's
// grpc_ssl_client_certificate_request_type; certificates that are asked for
// are always verified against SslServerCredentialsOptions::pem_root_certs:
// the "but don't verify" variants are not offered).
enum class SslClientCertificateRequest {
  kDontRequest,                // GRPC_SSL_DONT_REQUEST_CLIENT_CERTIFICATE
  kRequestAndVerify,           // ..._REQUEST_CLIENT_CERTIFICATE_AND_VERIFY
  kRequestAndRequireAndVerify  // ..._REQUEST_AND_REQUIRE_..._AND_VERIFY
};

struct SslServerCredentialsOptions {
  struct PemKeyCertPair {
    std::string private_key;
    std::string cert_chain;
  };
  SslServerCredentialsOptions() = default;
  explicit SslServerCredentialsOptions(SslClientCertificateRequest request)
      : client_certificate_request(request) {}

  // Roots to verify client certificates with.
  std::string pem_root_certs;
  // The server's key and certificate chain (the first pair is used).
  std::vector<PemKeyCertPair> pem_key_cert_pairs;
  // As grpc++: clients are not asked for certificates unless
  // client_certificate_request says so; force_client_auth is
  // kRequestAndRequireAndVerify. Asking needs pem_root_certs.
  bool force_client_auth = false;
  SslClientCertificateRequest client_certificate_request =
      SslClientCertificateRequest::kDontRequest;
};
std::shared_ptr<ServerCredentials> SslServerCredentials(
    const SslServerCredentialsOptions& options);

// grpc::SslCredentialsOptions.
struct SslCredentialsOptions {
  // Trusted roots (empty: the system's trust store).
  std::string pem_root_certs;
  // Optional client certificate (mTLS).
  std::string pem_private_key;
  std::string pem_cert_chain;
};
std::shared_ptr<ChannelCredentials> SslCredentials(
    const SslCredentialsOptions& options);

}  // namespace rpc

#endif  // RPC_CREDENTIALS_H_
