#include "rpc/internal/peer_auth.h"

#include <string>
#include <utility>
#include <vector>

#include "transport/io/endpoint.h"
#include "transport/tls/tls.h"
#include "transport/tls/tls_endpoint.h"

namespace rpc {
namespace internal {

std::shared_ptr<const AuthContext> TlsAuthContext(
    const transport::TlsSession& session) {
  std::vector<AuthContext::Property> props = {
      {kTransportSecurityTypePropertyName, kSslTransportSecurityType},
      {kSecurityLevelPropertyName, "TSI_PRIVACY_AND_INTEGRITY"},
      {kSslSessionReusedPropertyName,
       session.session_reused() ? "true" : "false"},
  };
  std::string identity_name;
  if (session.peer_certificate() != nullptr && !session.peer_verified()) {
    // Not verified (verify_peer = false): no identity to trust.
    props.emplace_back(kX509PemCertPropertyName, session.PeerCertificatePem());
  } else if (session.peer_certificate() != nullptr) {
    props.emplace_back(kX509SubjectPropertyName, session.PeerSubject());
    const std::string cn = session.PeerCommonName();
    if (!cn.empty()) {
      props.emplace_back(kX509CnPropertyName, cn);
      identity_name = kX509CnPropertyName;
    }
    const std::vector<std::string> sans = session.PeerSubjectAltNames();
    for (const std::string& san : sans) {
      props.emplace_back(kX509SanPropertyName, san);
    }
    if (!sans.empty()) identity_name = kX509SanPropertyName;
    props.emplace_back(kX509PemCertPropertyName, session.PeerCertificatePem());
  }
  return std::make_shared<AuthContext>(std::move(props),
                                       std::move(identity_name));
}

std::shared_ptr<const AuthContext> AuthContextFor(
    const transport::Endpoint& endpoint) {
  const auto* tls = dynamic_cast<const transport::TlsEndpoint*>(&endpoint);
  if (tls == nullptr || !tls->handshake_complete()) {
    return InsecureAuthContext();
  }
  return TlsAuthContext(tls->session());
}

}  // namespace internal
}  // namespace rpc
