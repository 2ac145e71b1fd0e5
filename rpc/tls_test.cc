// Calls over TLS (SslServerCredentials / SslCredentials): ours to ours, and
// with grpc++ on either side, with certificates made at test time. Handshake
// failures (untrusted CA, wrong hostname, missing or untrusted client
// certificate) fail calls with UNAVAILABLE, as in gRPC; handlers see the
// client's identity (AuthContext); a new channel with the same credentials
// resumes the TLS session.

#include "transport/tls/tls.h"

#include <grpcpp/grpcpp.h>

#include <memory>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "gtest/gtest.h"
#include "rpc/rpc.h"
#include "rpc/testdata/test_service.grpc.pb.h"
#include "rpc/testdata/test_service.rpc.pb.h"
#include "transport/testing/test_certs.h"

namespace rpc {
namespace {

using test::EchoRequest;
using test::EchoResponse;

// "type|identity property|identity values|session reused".
std::string Describe(const AuthContext& auth) {
  return absl::StrCat(
      absl::StrJoin(auth.FindPropertyValues("transport_security_type"), ","),
      "|", auth.GetPeerIdentityPropertyName(), "|",
      absl::StrJoin(auth.GetPeerIdentity(), ","), "|",
      absl::StrJoin(auth.FindPropertyValues("ssl_session_reused"), ","));
}

class OurEcho final : public test::EchoService::Service {
 public:
  // Echo answers "identity" with Describe(the caller's AuthContext).
  Status Echo(ServerContext* ctx, const EchoRequest* req,
              EchoResponse* resp) override {
    std::shared_ptr<const AuthContext> auth = ctx->auth_context();
    if (auth == nullptr) return Status(StatusCode::INTERNAL, "no context");
    {
      absl::MutexLock lock(&mu_);
      last_auth_ = auth;
    }
    resp->set_message(req->message() == "identity" ? Describe(*auth)
                                                   : req->message());
    return Status::OK;
  }
  std::shared_ptr<const AuthContext> last_auth() {
    absl::MutexLock lock(&mu_);
    return last_auth_;
  }
  Status Bidi(ServerContext*,
              ServerReaderWriter<EchoResponse, EchoRequest>* stream) override {
    EchoRequest req;
    while (stream->Read(&req)) {
      EchoResponse r;
      r.set_message(req.message());
      if (!stream->Write(r)) break;
    }
    return Status::OK;
  }

 private:
  absl::Mutex mu_;
  std::shared_ptr<const AuthContext> last_auth_ ABSL_GUARDED_BY(mu_);
};

// Answers "identity" with grpc++'s view of the caller: "property|values".
class GrpcEcho final : public test::grpcpeer::EchoService::Service {
 public:
  grpc::Status Echo(grpc::ServerContext* ctx, const EchoRequest* req,
                    EchoResponse* resp) override {
    if (req->message() != "identity") {
      resp->set_message(req->message());
      return grpc::Status::OK;
    }
    std::shared_ptr<const grpc::AuthContext> auth = ctx->auth_context();
    std::vector<std::string> ids;
    for (const grpc::string_ref& id : auth->GetPeerIdentity()) {
      ids.emplace_back(id.data(), id.size());
    }
    resp->set_message(absl::StrCat(auth->GetPeerIdentityPropertyName(), "|",
                                   absl::StrJoin(ids, ",")));
    return grpc::Status::OK;
  }
};

const transport::testing::TestCertificates& Certs() {
  const auto& certs = transport::testing::GetTestCertificates();
  EXPECT_TRUE(certs.ok()) << certs.status();
  return *certs;
}

std::shared_ptr<ServerCredentials> OurServerCreds() {
  SslServerCredentialsOptions options;
  options.pem_key_cert_pairs.push_back(
      {Certs().server_key_pem, Certs().server_chain_pem});
  return SslServerCredentials(options);
}

std::shared_ptr<ChannelCredentials> OurChannelCreds(const std::string& ca) {
  SslCredentialsOptions options;
  options.pem_root_certs = ca;
  return SslCredentials(options);
}

std::shared_ptr<ChannelCredentials> OurClientCertCreds(const std::string& chain,
                                                       const std::string& key) {
  SslCredentialsOptions options;
  options.pem_root_certs = Certs().ca_pem;
  options.pem_cert_chain = chain;
  options.pem_private_key = key;
  return SslCredentials(options);
}

// Our server requiring client certificates from the test CA.
std::shared_ptr<ServerCredentials> OurMtlsServerCreds() {
  SslServerCredentialsOptions options;
  options.pem_key_cert_pairs.push_back(
      {Certs().server_key_pem, Certs().server_chain_pem});
  options.pem_root_certs = Certs().ca_pem;
  options.force_client_auth = true;
  return SslServerCredentials(options);
}

// One unary Echo with a bounded deadline; `server_auth` (if given) gets the
// call's ClientContext::auth_context().
Status CallEcho(const std::shared_ptr<Channel>& channel,
                const std::string& message, std::string* answer,
                std::shared_ptr<const AuthContext>* server_auth = nullptr) {
  auto stub = test::EchoService::NewStub(channel);
  ClientContext ctx;
  ctx.set_deadline(absl::Now() + absl::Seconds(10));
  EchoRequest req;
  req.set_message(message);
  EchoResponse resp;
  Status s = stub->Echo(&ctx, req, &resp);
  *answer = resp.message();
  if (server_auth != nullptr) *server_auth = ctx.auth_context();
  return s;
}

// Starts one of our servers on 127.0.0.1:0.
struct OurServer {
  explicit OurServer(std::shared_ptr<ServerCredentials> creds) {
    server = ServerBuilder()
                 .AddListeningPort("127.0.0.1:0", std::move(creds), &port)
                 .RegisterService(&service)
                 .BuildAndStart();
    EXPECT_NE(server, nullptr);
  }
  ~OurServer() {
    if (server != nullptr) server->Shutdown(absl::Now() + absl::Seconds(5));
  }
  std::string Target(const std::string& host = "localhost") const {
    return host + ":" + std::to_string(port);
  }
  OurEcho service;
  int port = 0;
  std::unique_ptr<Server> server;
};

class TlsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(transport::testing::GetTestCertificates().ok());
    server_ = ServerBuilder()
                  .AddListeningPort("127.0.0.1:0", OurServerCreds(), &port_)
                  .RegisterService(&service_)
                  .BuildAndStart();
    ASSERT_NE(server_, nullptr);
  }
  void TearDown() override {
    if (server_ != nullptr) server_->Shutdown(absl::Now() + absl::Seconds(5));
  }
  std::string Target() const { return "localhost:" + std::to_string(port_); }

  OurEcho service_;
  std::unique_ptr<Server> server_;
  int port_ = 0;
};

TEST_F(TlsTest, OursToOurs) {
  auto stub = test::EchoService::NewStub(
      CreateChannel(Target(), OurChannelCreds(Certs().ca_pem)));
  for (int i = 0; i < 3; ++i) {
    ClientContext ctx;
    ctx.set_deadline(absl::Now() + absl::Seconds(10));
    EchoRequest req;
    req.set_message("over tls " + std::to_string(i));
    EchoResponse resp;
    Status s = stub->Echo(&ctx, req, &resp);
    ASSERT_TRUE(s.ok()) << s;
    EXPECT_EQ(resp.message(), req.message());
  }
  ClientContext ctx;
  ctx.set_deadline(absl::Now() + absl::Seconds(10));
  auto stream = stub->Bidi(&ctx);
  EchoRequest req;
  req.set_message(std::string(100000, 'b'));
  for (int i = 0; i < 5; ++i) {
    ASSERT_TRUE(stream->Write(req));
    EchoResponse resp;
    ASSERT_TRUE(stream->Read(&resp));
    EXPECT_EQ(resp.message().size(), 100000u);
  }
  stream->WritesDone();
  EXPECT_TRUE(stream->Finish().ok());
}

TEST_F(TlsTest, UntrustedServerIsUnavailable) {
  auto stub = test::EchoService::NewStub(
      CreateChannel(Target(), OurChannelCreds(Certs().untrusted_ca_pem)));
  ClientContext ctx;
  ctx.set_deadline(absl::Now() + absl::Seconds(10));
  EchoResponse resp;
  EXPECT_EQ(stub->Echo(&ctx, EchoRequest(), &resp).error_code(),
            StatusCode::UNAVAILABLE);
}

TEST_F(TlsTest, PlaintextClientToTlsServerFails) {
  auto stub = test::EchoService::NewStub(
      CreateChannel(Target(), InsecureChannelCredentials()));
  ClientContext ctx;
  ctx.set_deadline(absl::Now() + absl::Seconds(10));
  EchoResponse resp;
  EXPECT_FALSE(stub->Echo(&ctx, EchoRequest(), &resp).ok());
}

TEST_F(TlsTest, BadServerKeyFailsToStart) {
  SslServerCredentialsOptions options;
  options.pem_key_cert_pairs.push_back({"not a key", "not a cert"});
  int port = -1;
  EXPECT_EQ(
      ServerBuilder()
          .AddListeningPort("127.0.0.1:0", SslServerCredentials(options), &port)
          .BuildAndStart(),
      nullptr);
  EXPECT_EQ(port, 0);
}

TEST_F(TlsTest, GrpcClientToOurServer) {
  grpc::SslCredentialsOptions options;
  options.pem_root_certs = Certs().ca_pem;
  auto stub = test::grpcpeer::EchoService::NewStub(
      // An IP literal (the certificate names 127.0.0.1 too): no DNS lookup in
      // grpc++ (its c-ares resolver leaks a few octets under LeakSanitizer).
      grpc::CreateChannel("127.0.0.1:" + std::to_string(port_),
                          grpc::SslCredentials(options)));
  grpc::ClientContext ctx;
  ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
  EchoRequest req;
  req.set_message("from grpc++");
  EchoResponse resp;
  grpc::Status s = stub->Echo(&ctx, req, &resp);
  ASSERT_TRUE(s.ok()) << s.error_message();
  EXPECT_EQ(resp.message(), "from grpc++");
}

TEST(TlsInteropTest, OurClientToGrpcServer) {
  ASSERT_TRUE(transport::testing::GetTestCertificates().ok());
  grpc::SslServerCredentialsOptions options;
  options.pem_key_cert_pairs.push_back(
      {Certs().server_key_pem, Certs().server_chain_pem});
  GrpcEcho service;
  int port = 0;
  grpc::ServerBuilder builder;
  builder.AddListeningPort("127.0.0.1:0", grpc::SslServerCredentials(options),
                           &port);
  builder.RegisterService(&service);
  std::unique_ptr<grpc::Server> server = builder.BuildAndStart();
  ASSERT_NE(server, nullptr);
  auto stub = test::EchoService::NewStub(CreateChannel(
      "localhost:" + std::to_string(port), OurChannelCreds(Certs().ca_pem)));
  ClientContext ctx;
  ctx.set_deadline(absl::Now() + absl::Seconds(10));
  EchoRequest req;
  req.set_message("to grpc++");
  EchoResponse resp;
  Status s = stub->Echo(&ctx, req, &resp);
  EXPECT_TRUE(s.ok()) << s;
  EXPECT_EQ(resp.message(), "to grpc++");
  stub.reset();
  server->Shutdown(std::chrono::system_clock::now() + std::chrono::seconds(5));
}

// ---- Peer identity (AuthContext) ----

TEST(TlsAuthTest, MtlsHandlerSeesTheClientCommonName) {
  OurServer server(OurMtlsServerCreds());
  auto channel = CreateChannel(
      server.Target(),
      OurClientCertCreds(Certs().client_chain_pem, Certs().client_key_pem));
  std::string answer;
  Status s = CallEcho(channel, "identity", &answer);
  ASSERT_TRUE(s.ok()) << s;
  EXPECT_EQ(answer, "ssl|x509_common_name|test-client|false");
  std::shared_ptr<const AuthContext> auth = server.service.last_auth();
  ASSERT_NE(auth, nullptr);
  EXPECT_TRUE(auth->IsPeerAuthenticated());
  EXPECT_EQ(auth->FindPropertyValues("x509_common_name"),
            std::vector<std::string>{"test-client"});
  EXPECT_TRUE(
      auth->FindPropertyValues("x509_subject_alternative_name").empty());
  EXPECT_EQ(auth->FindPropertyValues("security_level"),
            std::vector<std::string>{"TSI_PRIVACY_AND_INTEGRITY"});
  ASSERT_EQ(auth->FindPropertyValues("x509_pem_cert").size(), 1u);
  EXPECT_TRUE(absl::StartsWith(auth->FindPropertyValues("x509_pem_cert")[0],
                               "-----BEGIN CERTIFICATE-----"));
  EXPECT_EQ(auth->FindPropertyValues("x509_subject"),
            std::vector<std::string>{"CN=test-client,O=h2rpc test"});
  // Computed once per connection: the next call on it shares the object.
  ASSERT_TRUE(CallEcho(channel, "again", &answer).ok());
  EXPECT_EQ(server.service.last_auth(), auth);
}

TEST(TlsAuthTest, ClientSeesTheServerIdentity) {
  OurServer server(OurServerCreds());
  std::string answer;
  std::shared_ptr<const AuthContext> auth;
  ASSERT_TRUE(
      CallEcho(CreateChannel(server.Target(), OurChannelCreds(Certs().ca_pem)),
               "x", &answer, &auth)
          .ok());
  ASSERT_NE(auth, nullptr);
  EXPECT_EQ(Describe(*auth),
            "ssl|x509_subject_alternative_name|localhost,127.0.0.1,::1|false");
  EXPECT_EQ(auth->FindPropertyValues("x509_common_name"),
            std::vector<std::string>{"localhost"});
  // Before a call starts there is none.
  ClientContext fresh;
  EXPECT_EQ(fresh.auth_context(), nullptr);
  // Plaintext: insecure.
  OurServer plain(InsecureServerCredentials());
  ASSERT_TRUE(
      CallEcho(CreateChannel(plain.Target(), InsecureChannelCredentials()), "x",
               &answer, &auth)
          .ok());
  ASSERT_NE(auth, nullptr);
  EXPECT_EQ(Describe(*auth), "insecure|||");
}

TEST(TlsAuthTest, SubjectAltNamesAreTheIdentityWhenPresent) {
  OurServer server(OurMtlsServerCreds());
  auto channel = CreateChannel(
      server.Target(), OurClientCertCreds(Certs().named_client_chain_pem,
                                          Certs().named_client_key_pem));
  std::string answer;
  Status s = CallEcho(channel, "identity", &answer);
  ASSERT_TRUE(s.ok()) << s;
  EXPECT_EQ(answer,
            "ssl|x509_subject_alternative_name|spiffe://h2rpc.test/client,"
            "client.h2rpc.test|false");
  EXPECT_EQ(server.service.last_auth()->FindPropertyValues("x509_common_name"),
            std::vector<std::string>{"named-client"});
}

std::shared_ptr<ServerCredentials> ServerCredsAsking(
    SslClientCertificateRequest request) {
  SslServerCredentialsOptions options(request);
  options.pem_key_cert_pairs.push_back(
      {Certs().server_key_pem, Certs().server_chain_pem});
  options.pem_root_certs = Certs().ca_pem;
  return SslServerCredentials(options);
}

// As grpc++: roots alone do not make a server ask for client certificates,
// so a client whose certificate the server could not verify still connects
// (and is anonymous).
TEST(TlsClientCertificateRequestTest, NotAskedByDefault) {
  OurServer server(
      ServerCredsAsking(SslClientCertificateRequest::kDontRequest));
  std::string answer;
  Status s = CallEcho(
      CreateChannel(server.Target(),
                    OurClientCertCreds(Certs().untrusted_client_chain_pem,
                                       Certs().untrusted_client_key_pem)),
      "identity", &answer);
  ASSERT_TRUE(s.ok()) << s;
  EXPECT_EQ(answer, "ssl|||false");
}

TEST(TlsClientCertificateRequestTest, RequestAndVerifyMakesItOptional) {
  OurServer server(
      ServerCredsAsking(SslClientCertificateRequest::kRequestAndVerify));
  std::string answer;
  // With a good certificate: its identity.
  Status s = CallEcho(CreateChannel(server.Target(),
                                    OurClientCertCreds(Certs().client_chain_pem,
                                                       Certs().client_key_pem)),
                      "identity", &answer);
  ASSERT_TRUE(s.ok()) << s;
  EXPECT_NE(answer.find("x509_common_name|test-client"), std::string::npos)
      << answer;
  // Without one: anonymous, but served.
  s = CallEcho(CreateChannel(server.Target(), OurChannelCreds(Certs().ca_pem)),
               "identity", &answer);
  ASSERT_TRUE(s.ok()) << s;
  EXPECT_EQ(answer, "ssl|||false");
  // With one the server cannot verify: refused.
  s = CallEcho(
      CreateChannel(server.Target(),
                    OurClientCertCreds(Certs().untrusted_client_chain_pem,
                                       Certs().untrusted_client_key_pem)),
      "identity", &answer);
  EXPECT_EQ(s.error_code(), StatusCode::UNAVAILABLE) << s;
}

TEST(TlsClientCertificateRequestTest, AskingWithoutRootsFailsToStart) {
  SslServerCredentialsOptions options(
      SslClientCertificateRequest::kRequestAndRequireAndVerify);
  options.pem_key_cert_pairs.push_back(
      {Certs().server_key_pem, Certs().server_chain_pem});
  auto creds = SslServerCredentials(options);
  EXPECT_EQ(creds->status().code(), absl::StatusCode::kInvalidArgument);
  int port = -1;
  EXPECT_EQ(ServerBuilder()
                .AddListeningPort("127.0.0.1:0", creds, &port)
                .BuildAndStart(),
            nullptr);
}

TEST(TlsAuthTest, ServerWithoutClientAuthSeesAnUnauthenticatedSslPeer) {
  OurServer server(OurServerCreds());
  std::string answer;
  ASSERT_TRUE(
      CallEcho(CreateChannel(server.Target(), OurChannelCreds(Certs().ca_pem)),
               "identity", &answer)
          .ok());
  EXPECT_EQ(answer, "ssl|||false");
  EXPECT_FALSE(server.service.last_auth()->IsPeerAuthenticated());
}

TEST(TlsAuthTest, InsecureServerSaysInsecure) {
  OurServer server(InsecureServerCredentials());
  std::string answer;
  ASSERT_TRUE(
      CallEcho(CreateChannel(server.Target(), InsecureChannelCredentials()),
               "identity", &answer)
          .ok());
  EXPECT_EQ(answer, "insecure|||");
  EXPECT_EQ(server.service.last_auth()->FindPropertyValues("security_level"),
            std::vector<std::string>{"TSI_SECURITY_NONE"});
}

// ---- Handshake failures: UNAVAILABLE, like gRPC ----

// The targets below are IP literals: "localhost" may resolve to ::1 as well,
// where nobody listens, and the status then names the last address tried.
TEST(TlsFailureTest, WrongHostnameIsUnavailable) {
  OurServer server(OurServerCreds());
  ChannelArguments args;
  args.SetSslTargetNameOverride("wrong.example.com");
  std::string answer;
  Status s =
      CallEcho(CreateCustomChannel(server.Target("127.0.0.1"),
                                   OurChannelCreds(Certs().ca_pem), args),
               "x", &answer);
  EXPECT_EQ(s.error_code(), StatusCode::UNAVAILABLE) << s;
  EXPECT_TRUE(absl::StrContains(s.error_message(), "hostname mismatch")) << s;
}

TEST(TlsFailureTest, OverrideToACertifiedNameWorks) {
  OurServer server(OurServerCreds());
  ChannelArguments args;
  args.SetSslTargetNameOverride("localhost");
  std::string answer;
  Status s =
      CallEcho(CreateCustomChannel(server.Target("127.0.0.1"),
                                   OurChannelCreds(Certs().ca_pem), args),
               "over", &answer);
  ASSERT_TRUE(s.ok()) << s;
  EXPECT_EQ(answer, "over");
}

TEST(TlsFailureTest, MissingClientCertificateIsUnavailable) {
  OurServer server(OurMtlsServerCreds());
  std::string answer;
  Status s =
      CallEcho(CreateChannel(server.Target(), OurChannelCreds(Certs().ca_pem)),
               "x", &answer);
  EXPECT_EQ(s.error_code(), StatusCode::UNAVAILABLE) << s;
  // The server's alert reaches the call (TLS 1.3: after the client's
  // handshake finished, on the first read).
  EXPECT_TRUE(absl::StrContains(s.error_message(), "certificate required"))
      << s;
}

TEST(TlsFailureTest, ClientCertificateFromAnotherCaIsUnavailable) {
  OurServer server(OurMtlsServerCreds());
  std::string answer;
  Status s = CallEcho(
      CreateChannel(server.Target(),
                    OurClientCertCreds(Certs().untrusted_client_chain_pem,
                                       Certs().untrusted_client_key_pem)),
      "x", &answer);
  EXPECT_EQ(s.error_code(), StatusCode::UNAVAILABLE) << s;
  EXPECT_TRUE(absl::StrContains(s.error_message(), "alert")) << s;
}

TEST(TlsFailureTest, UntrustedServerCaIsUnavailable) {
  SslServerCredentialsOptions options;
  options.pem_key_cert_pairs.push_back(
      {Certs().untrusted_server_key_pem, Certs().untrusted_server_chain_pem});
  OurServer server(SslServerCredentials(options));
  std::string answer;
  Status s = CallEcho(CreateChannel(server.Target("127.0.0.1"),
                                    OurChannelCreds(Certs().ca_pem)),
                      "x", &answer);
  EXPECT_EQ(s.error_code(), StatusCode::UNAVAILABLE) << s;
  EXPECT_TRUE(absl::StrContains(s.error_message(), "certificate")) << s;
}

TEST(TlsVersionTest, Tls12OnlyClientWorks) {
  OurServer server(OurServerCreds());
  transport::TlsClientOptions o;
  o.root_certificates_pem = Certs().ca_pem;
  o.max_version = transport::TlsVersion::kTls12;
  auto ctx = transport::TlsContext::CreateClient(o);
  ASSERT_TRUE(ctx.ok()) << ctx.status();
  auto creds = std::make_shared<ChannelCredentials>(*ctx, absl::OkStatus());
  std::string answer;
  Status s = CallEcho(CreateChannel(server.Target(), creds), "v1.2", &answer);
  ASSERT_TRUE(s.ok()) << s;
  EXPECT_EQ(answer, "v1.2");
}

// ---- Session resumption ----

// A new channel with the same credentials (the same client TlsContext, so
// the same session cache) resumes the first channel's session; the handler
// sees ssl_session_reused. Other credentials start afresh.
TEST(TlsResumptionTest, NewChannelWithTheSameCredentialsResumes) {
  for (bool tls12 : {false, true}) {
    SCOPED_TRACE(tls12 ? "TLS 1.2" : "TLS 1.3");
    OurServer server(OurMtlsServerCreds());
    transport::TlsClientOptions o;
    o.root_certificates_pem = Certs().ca_pem;
    o.certificate_chain_pem = Certs().client_chain_pem;
    o.private_key_pem = Certs().client_key_pem;
    if (tls12) o.max_version = transport::TlsVersion::kTls12;
    auto ctx = transport::TlsContext::CreateClient(o);
    ASSERT_TRUE(ctx.ok()) << ctx.status();
    auto creds = std::make_shared<ChannelCredentials>(*ctx, absl::OkStatus());
    std::string answer;
    ASSERT_TRUE(
        CallEcho(CreateChannel(server.Target(), creds), "identity", &answer)
            .ok());
    EXPECT_EQ(answer, "ssl|x509_common_name|test-client|false");
    for (int i = 0; i < 2; ++i) {
      ASSERT_TRUE(
          CallEcho(CreateChannel(server.Target(), creds), "identity", &answer)
              .ok());
      // The identity survives resumption.
      EXPECT_EQ(answer, "ssl|x509_common_name|test-client|true") << i;
    }
    ASSERT_TRUE(
        CallEcho(CreateChannel(server.Target(),
                               OurClientCertCreds(Certs().client_chain_pem,
                                                  Certs().client_key_pem)),
                 "identity", &answer)
            .ok());
    EXPECT_EQ(answer, "ssl|x509_common_name|test-client|false");
  }
}

// ---- mTLS with grpc++ ----

TEST(TlsInteropTest, GrpcClientWithCertificateToOurMtlsServer) {
  OurServer server(OurMtlsServerCreds());
  grpc::SslCredentialsOptions options;
  options.pem_root_certs = Certs().ca_pem;
  options.pem_cert_chain = Certs().client_chain_pem;
  options.pem_private_key = Certs().client_key_pem;
  auto stub = test::grpcpeer::EchoService::NewStub(grpc::CreateChannel(
      server.Target("127.0.0.1"), grpc::SslCredentials(options)));
  grpc::ClientContext ctx;
  ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
  EchoRequest req;
  req.set_message("identity");
  EchoResponse resp;
  grpc::Status s = stub->Echo(&ctx, req, &resp);
  ASSERT_TRUE(s.ok()) << s.error_message();
  EXPECT_EQ(resp.message(), "ssl|x509_common_name|test-client|false");
}

TEST(TlsInteropTest, GrpcClientWithoutCertificateIsRefusedByOurMtlsServer) {
  OurServer server(OurMtlsServerCreds());
  grpc::SslCredentialsOptions options;
  options.pem_root_certs = Certs().ca_pem;
  auto stub = test::grpcpeer::EchoService::NewStub(grpc::CreateChannel(
      server.Target("127.0.0.1"), grpc::SslCredentials(options)));
  grpc::ClientContext ctx;
  ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
  EchoResponse resp;
  grpc::Status s = stub->Echo(&ctx, EchoRequest(), &resp);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::UNAVAILABLE) << s.error_message();
}

TEST(TlsInteropTest, OurClientWithCertificateToGrpcMtlsServer) {
  ASSERT_TRUE(transport::testing::GetTestCertificates().ok());
  grpc::SslServerCredentialsOptions options(
      GRPC_SSL_REQUEST_AND_REQUIRE_CLIENT_CERTIFICATE_AND_VERIFY);
  options.pem_root_certs = Certs().ca_pem;
  options.pem_key_cert_pairs.push_back(
      {Certs().server_key_pem, Certs().server_chain_pem});
  GrpcEcho service;
  int port = 0;
  grpc::ServerBuilder builder;
  builder.AddListeningPort("127.0.0.1:0", grpc::SslServerCredentials(options),
                           &port);
  builder.RegisterService(&service);
  std::unique_ptr<grpc::Server> server = builder.BuildAndStart();
  ASSERT_NE(server, nullptr);
  const std::string target = "localhost:" + std::to_string(port);
  std::string answer;
  std::shared_ptr<const AuthContext> server_auth;
  Status s = CallEcho(
      CreateChannel(target, OurClientCertCreds(Certs().client_chain_pem,
                                               Certs().client_key_pem)),
      "identity", &answer, &server_auth);
  EXPECT_TRUE(s.ok()) << s;
  EXPECT_EQ(answer, "x509_common_name|test-client");
  ASSERT_NE(server_auth, nullptr);
  EXPECT_EQ(server_auth->GetPeerIdentity(),
            (std::vector<std::string>{"localhost", "127.0.0.1", "::1"}));
  s = CallEcho(
      CreateChannel(target, OurClientCertCreds(Certs().named_client_chain_pem,
                                               Certs().named_client_key_pem)),
      "identity", &answer);
  EXPECT_TRUE(s.ok()) << s;
  EXPECT_TRUE(absl::StartsWith(answer, "x509_subject_alternative_name|"))
      << answer;
  EXPECT_TRUE(absl::StrContains(answer, "client.h2rpc.test")) << answer;
  // Without a certificate grpc++ refuses the handshake.
  s = CallEcho(CreateChannel(target, OurChannelCreds(Certs().ca_pem)), "x",
               &answer);
  EXPECT_EQ(s.error_code(), StatusCode::UNAVAILABLE) << s;
  server->Shutdown(std::chrono::system_clock::now() + std::chrono::seconds(5));
}

}  // namespace
}  // namespace rpc
