// rpc::AuthContext: who the peer of a connection is, in grpc++'s shape
// (grpc::AuthContext), with gRPC's property names for TLS peers.
//
//   rpc::Status Get(rpc::ServerContext* ctx, ...) override {
//     std::shared_ptr<const rpc::AuthContext> auth = ctx->auth_context();
//     if (!auth->IsPeerAuthenticated()) return {PERMISSION_DENIED, "mTLS"};
//     for (const std::string& name : auth->GetPeerIdentity()) ...
//   }
//
// Properties (name: values), as gRPC's ssl credentials set them:
//   transport_security_type       "ssl", or "insecure" for h2c
//   security_level                "TSI_PRIVACY_AND_INTEGRITY" (TLS) or
//                                 "TSI_SECURITY_NONE"
//   ssl_session_reused            "true" / "false" (TLS)
//   x509_subject                  the peer certificate's subject (RFC 2253)
//   x509_common_name              its CN
//   x509_subject_alternative_name each SAN: DNS names, URIs, e-mail
//                                 addresses, IP addresses (text form)
//   x509_pem_cert                 the peer certificate in PEM
// The x509_* ones exist only when the peer sent a (verified) certificate.
// The peer identity is the SAN values when there are any, else the CN; a peer
// is authenticated when it has an identity.
//
// A context is immutable once made: computed once per connection (on its
// loop, when the connection starts) and shared by all its calls and threads.

#ifndef RPC_AUTH_CONTEXT_H_
#define RPC_AUTH_CONTEXT_H_

#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace rpc {

inline constexpr char kTransportSecurityTypePropertyName[] =
    "transport_security_type";
inline constexpr char kSecurityLevelPropertyName[] = "security_level";
inline constexpr char kSslSessionReusedPropertyName[] = "ssl_session_reused";
inline constexpr char kX509SubjectPropertyName[] = "x509_subject";
inline constexpr char kX509CnPropertyName[] = "x509_common_name";
inline constexpr char kX509SanPropertyName[] = "x509_subject_alternative_name";
inline constexpr char kX509PemCertPropertyName[] = "x509_pem_cert";
inline constexpr char kSslTransportSecurityType[] = "ssl";
inline constexpr char kInsecureTransportSecurityType[] = "insecure";

class AuthContext {
 public:
  using Property = std::pair<std::string, std::string>;

  AuthContext() = default;
  AuthContext(std::vector<Property> properties,
              std::string peer_identity_property_name);

  // The values of the peer identity property (empty when unauthenticated).
  std::vector<std::string> GetPeerIdentity() const;
  // "x509_subject_alternative_name", "x509_common_name", or empty.
  const std::string& GetPeerIdentityPropertyName() const {
    return peer_identity_property_name_;
  }
  // Every value of property `name`, in order; empty when it has none.
  std::vector<std::string> FindPropertyValues(const std::string& name) const;
  bool IsPeerAuthenticated() const {
    return !peer_identity_property_name_.empty();
  }
  // All properties in order (a name may repeat).
  const std::vector<Property>& properties() const { return properties_; }

 private:
  std::vector<Property> properties_;
  std::string peer_identity_property_name_;
};

// The context of a plaintext (h2c) connection.
std::shared_ptr<const AuthContext> InsecureAuthContext();

}  // namespace rpc

#endif  // RPC_AUTH_CONTEXT_H_
