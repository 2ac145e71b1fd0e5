// Calls over TLS (SslServerCredentials / SslCredentials): ours to ours, and
// with grpc++ on either side; untrusted servers fail with UNAVAILABLE.

#include <grpcpp/grpcpp.h>

#include <memory>
#include <string>

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

class OurEcho final : public test::EchoService::Service {
 public:
  Status Echo(ServerContext*, const EchoRequest* req,
              EchoResponse* resp) override {
    resp->set_message(req->message());
    return Status::OK;
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
};

class GrpcEcho final : public test::grpcpeer::EchoService::Service {
 public:
  grpc::Status Echo(grpc::ServerContext*, const EchoRequest* req,
                    EchoResponse* resp) override {
    resp->set_message(req->message());
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

}  // namespace
}  // namespace rpc
