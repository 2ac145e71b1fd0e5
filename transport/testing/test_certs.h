// Certificates made at test time with OpenSSL (no key material in the
// repository): a CA, a server certificate for localhost / 127.0.0.1 / ::1
// signed by it, client certificates signed by it (one with just a CN, one
// with subject alternative names), and a second CA with its own server and
// client certificates that nobody trusts. EC P-256 keys, SHA-256, valid from
// an hour ago for two days.

#ifndef TRANSPORT_TESTING_TEST_CERTS_H_
#define TRANSPORT_TESTING_TEST_CERTS_H_

#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace transport {
namespace testing {

struct TestCertificates {
  std::string ca_pem;
  // CN=localhost; SAN DNS:localhost, IP:127.0.0.1, IP:::1; serverAuth.
  std::string server_chain_pem;
  std::string server_key_pem;
  // CN=test-client; clientAuth.
  std::string client_chain_pem;
  std::string client_key_pem;
  // A second, untrusted CA and a server certificate (same names) from it.
  std::string untrusted_ca_pem;
  std::string untrusted_server_chain_pem;
  std::string untrusted_server_key_pem;
  // CN=named-client; SAN URI:spiffe://h2rpc.test/client,
  // DNS:client.h2rpc.test; clientAuth; from the trusted CA.
  std::string named_client_chain_pem;
  std::string named_client_key_pem;
  // CN=test-client; clientAuth; from the untrusted CA.
  std::string untrusted_client_chain_pem;
  std::string untrusted_client_key_pem;
};

// Generated once per process and cached (thread-safe).
const absl::StatusOr<TestCertificates>& GetTestCertificates();

// Writes `contents` to `path` (for peers that read files, like openssl).
absl::Status WriteFile(const std::string& path, const std::string& contents);

}  // namespace testing
}  // namespace transport

#endif  // TRANSPORT_TESTING_TEST_CERTS_H_
