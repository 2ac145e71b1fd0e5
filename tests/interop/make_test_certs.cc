// make_test_certs DIR: writes the test CA and a server certificate for
// localhost (transport/testing/test_certs, made now, no key material in the
// repository) as DIR/ca.pem, DIR/server.pem, DIR/server.key, for the TLS
// interop runs (--tls_cert/--tls_key on the server, --ca_file on the client).

#include <iostream>
#include <string>

#include "transport/testing/test_certs.h"

int main(int argc, char** argv) {
  if (argc != 2) {
    std::cerr << "usage: make_test_certs DIR\n";
    return 2;
  }
  const std::string dir = argv[1];
  const auto& certs = transport::testing::GetTestCertificates();
  if (!certs.ok()) {
    std::cerr << certs.status() << "\n";
    return 1;
  }
  for (const auto& [name, contents] :
       {std::pair<std::string, std::string>{"ca.pem", certs->ca_pem},
        {"server.pem", certs->server_chain_pem},
        {"server.key", certs->server_key_pem}}) {
    absl::Status s = transport::testing::WriteFile(dir + "/" + name, contents);
    if (!s.ok()) {
      std::cerr << s << "\n";
      return 1;
    }
  }
  return 0;
}
