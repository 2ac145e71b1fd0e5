// The AuthContext (rpc/auth_context.h) of a connection, computed once from
// its endpoint when the connection starts (ClientTransport, ServerConnection).

#ifndef RPC_INTERNAL_PEER_AUTH_H_
#define RPC_INTERNAL_PEER_AUTH_H_

#include <memory>

#include "rpc/auth_context.h"

namespace transport {
class Endpoint;
class TlsSession;
}  // namespace transport

namespace rpc {
namespace internal {

// The context of a TLS connection after its handshake.
std::shared_ptr<const AuthContext> TlsAuthContext(
    const transport::TlsSession& session);
// TLS or insecure, whichever `endpoint` is (a TlsEndpoint or not).
std::shared_ptr<const AuthContext> AuthContextFor(
    const transport::Endpoint& endpoint);

}  // namespace internal
}  // namespace rpc

#endif  // RPC_INTERNAL_PEER_AUTH_H_
