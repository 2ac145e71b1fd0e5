// OpenSSL's configuration file is read when the first context is made, not
// when tls.cc loads: an application that names its own (OPENSSL_CONF, or
// OPENSSL_init_crypto with its settings) in main, before its first
// TlsContext, gets it. Its own binary: nothing else may make a context
// first.

#include <openssl/ssl.h>
#include <stdio.h>
#include <stdlib.h>

#include <memory>
#include <string>

#include "gtest/gtest.h"
#include "transport/tls/tls.h"

namespace transport {
namespace {

TEST(TlsConfigTest, ConfigurationNamedInMainIsTheOneRead) {
  const char* dir = getenv("TEST_TMPDIR");
  ASSERT_NE(dir, nullptr);
  const std::string path = std::string(dir) + "/openssl.cnf";
  FILE* f = fopen(path.c_str(), "w");
  ASSERT_NE(f, nullptr);
  // A system-wide default every new SSL_CTX takes: TLS 1.3 at least.
  fputs(
      "openssl_conf = init\n"
      "[init]\n"
      "ssl_conf = ssl\n"
      "[ssl]\n"
      "system_default = defaults\n"
      "[defaults]\n"
      "MinProtocol = TLSv1.3\n",
      f);
  ASSERT_EQ(fclose(f), 0);
  ASSERT_EQ(setenv("OPENSSL_CONF", path.c_str(), 1), 0);

  TlsClientOptions options;
  options.verify_peer = false;
  ASSERT_TRUE(TlsContext::CreateClient(options).ok());
  SSL_CTX* ctx = SSL_CTX_new(TLS_client_method());
  ASSERT_NE(ctx, nullptr);
  EXPECT_EQ(SSL_CTX_get_min_proto_version(ctx), TLS1_3_VERSION);
  SSL_CTX_free(ctx);
}

}  // namespace
}  // namespace transport
