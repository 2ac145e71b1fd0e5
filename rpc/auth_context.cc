#include "rpc/auth_context.h"

#include <utility>

namespace rpc {

AuthContext::AuthContext(std::vector<Property> properties,
                         std::string peer_identity_property_name)
    : properties_(std::move(properties)),
      peer_identity_property_name_(std::move(peer_identity_property_name)) {}

std::vector<std::string> AuthContext::GetPeerIdentity() const {
  if (peer_identity_property_name_.empty()) return {};
  return FindPropertyValues(peer_identity_property_name_);
}

std::vector<std::string> AuthContext::FindPropertyValues(
    const std::string& name) const {
  std::vector<std::string> values;
  for (const Property& p : properties_) {
    if (p.first == name) values.push_back(p.second);
  }
  return values;
}

std::shared_ptr<const AuthContext> InsecureAuthContext() {
  static const std::shared_ptr<const AuthContext>* const insecure =
      new std::shared_ptr<const AuthContext>(std::make_shared<AuthContext>(
          std::vector<AuthContext::Property>{
              {kTransportSecurityTypePropertyName,
               kInsecureTransportSecurityType},
              {kSecurityLevelPropertyName, "TSI_SECURITY_NONE"},
          },
          std::string()));
  return *insecure;
}

}  // namespace rpc
