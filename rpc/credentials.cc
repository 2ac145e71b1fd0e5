#include "rpc/credentials.h"

#include "transport/tls/tls.h"

namespace rpc {

std::shared_ptr<ServerCredentials> InsecureServerCredentials() {
  return std::make_shared<ServerCredentials>(nullptr, absl::OkStatus());
}

std::shared_ptr<ChannelCredentials> InsecureChannelCredentials() {
  return std::make_shared<ChannelCredentials>(nullptr, absl::OkStatus());
}

std::shared_ptr<ServerCredentials> SslServerCredentials(
    const SslServerCredentialsOptions& options) {
  if (options.pem_key_cert_pairs.empty()) {
    return std::make_shared<ServerCredentials>(
        nullptr, absl::InvalidArgumentError("no key and certificate"));
  }
  transport::TlsServerOptions tls;
  tls.private_key_pem = options.pem_key_cert_pairs[0].private_key;
  tls.certificate_chain_pem = options.pem_key_cert_pairs[0].cert_chain;
  const SslClientCertificateRequest request =
      options.force_client_auth
          ? SslClientCertificateRequest::kRequestAndRequireAndVerify
          : options.client_certificate_request;
  if (request != SslClientCertificateRequest::kDontRequest) {
    if (options.pem_root_certs.empty()) {
      return std::make_shared<ServerCredentials>(
          nullptr,
          absl::InvalidArgumentError("client certificates asked for without "
                                     "pem_root_certs to verify them"));
    }
    tls.client_ca_pem = options.pem_root_certs;
    tls.require_client_certificate =
        request == SslClientCertificateRequest::kRequestAndRequireAndVerify;
  }
  absl::StatusOr<std::shared_ptr<const transport::TlsContext>> ctx =
      transport::TlsContext::CreateServer(tls);
  if (!ctx.ok()) {
    return std::make_shared<ServerCredentials>(nullptr, ctx.status());
  }
  return std::make_shared<ServerCredentials>(std::move(*ctx), absl::OkStatus());
}

std::shared_ptr<ChannelCredentials> SslCredentials(
    const SslCredentialsOptions& options) {
  transport::TlsClientOptions tls;
  tls.root_certificates_pem = options.pem_root_certs;
  tls.private_key_pem = options.pem_private_key;
  tls.certificate_chain_pem = options.pem_cert_chain;
  absl::StatusOr<std::shared_ptr<const transport::TlsContext>> ctx =
      transport::TlsContext::CreateClient(tls);
  if (!ctx.ok()) {
    return std::make_shared<ChannelCredentials>(nullptr, ctx.status());
  }
  return std::make_shared<ChannelCredentials>(std::move(*ctx),
                                              absl::OkStatus());
}

}  // namespace rpc
