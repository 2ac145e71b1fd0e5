// Our HTTP/2 client (transport/http/http2_client.h) against Debian's nghttpd
// (nghttp2-server), over h2c with prior knowledge and over TLS (ALPN h2, the
// server verified against a test CA by name): small and 8 MiB files, many
// concurrent streams, a 404, and an upload echoed by nghttpd --echo-upload.
//
// nghttpd needs a fixed port: the test binds port 0 to learn a free one,
// releases it, starts nghttpd there and retries with another port if nghttpd
// does not come up (someone else took it).

#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdint>
#include <fstream>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "gtest/gtest.h"
#include "transport/http/blocking_http2_client.h"
#include "transport/io/socket.h"
#include "transport/testing/subprocess.h"
#include "transport/testing/test_certs.h"
#include "transport/tls/tls.h"

namespace transport {
namespace {

constexpr char kNghttpd[] = "/usr/sbin/nghttpd";

std::string RandomBytes(size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::string s(n, '\0');
  for (char& c : s) c = static_cast<char>(rng());
  return s;
}

// A port that was free a moment ago.
uint16_t PickPort() {
  ScopedFd fd(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
  SocketAddress any = SocketAddress::Loopback(AF_INET, 0);
  if (!fd.valid() || ::bind(fd.get(), any.addr(), any.len()) != 0) return 0;
  absl::StatusOr<SocketAddress> local = SocketAddress::LocalOf(fd.get());
  return local.ok() ? local->port() : 0;
}

// True once a TCP connect to 127.0.0.1:port succeeds (bounded).
bool WaitForPort(uint16_t port, testing::Subprocess* process,
                 absl::Duration timeout) {
  const absl::Time deadline = absl::Now() + timeout;
  const SocketAddress address = SocketAddress::Loopback(AF_INET, port);
  while (absl::Now() < deadline) {
    ScopedFd fd(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
    if (::connect(fd.get(), address.addr(), address.len()) == 0) return true;
    absl::StatusOr<int> exited = process->WaitForExit(absl::ZeroDuration());
    if (exited.ok()) return false;  // It died (port taken?).
    absl::SleepFor(absl::Milliseconds(20));
  }
  return false;
}

class NghttpdTest : public ::testing::TestWithParam<bool> {
 protected:
  void SetUp() override {
    if (::access(kNghttpd, X_OK) != 0) {
      GTEST_SKIP() << kNghttpd << " missing (Debian package nghttp2-server)";
    }
    dir_ = testing::TempDir();
    root_ = dir_ + "/root";
    ASSERT_EQ(::system(("mkdir -p " + root_ + "/sub").c_str()), 0);
    small_ = "hello from nghttpd\n";
    big_ = RandomBytes(8 << 20, 7);
    ASSERT_TRUE(testing::WriteFile(root_ + "/index.html", small_).ok());
    ASSERT_TRUE(testing::WriteFile(root_ + "/sub/a.txt", "a\n").ok());
    ASSERT_TRUE(testing::WriteFile(root_ + "/big.bin", big_).ok());

    const bool tls = GetParam();
    Http2ClientOptions options;
    std::vector<std::string> tls_args;
    if (tls) {
      const auto& certs = testing::GetTestCertificates();
      ASSERT_TRUE(certs.ok()) << certs.status();
      ASSERT_TRUE(
          testing::WriteFile(dir_ + "/key.pem", certs->server_key_pem).ok());
      ASSERT_TRUE(
          testing::WriteFile(dir_ + "/cert.pem", certs->server_chain_pem).ok());
      TlsClientOptions tls_options;
      tls_options.root_certificates_pem = certs->ca_pem;
      tls_options.server_name_override = "localhost";
      auto context = TlsContext::CreateClient(tls_options);
      ASSERT_TRUE(context.ok()) << context.status();
      options.tls = *context;
    }

    for (int attempt = 0; attempt < 5 && port_ == 0; ++attempt) {
      const uint16_t port = PickPort();
      ASSERT_NE(port, 0);
      std::vector<std::string> argv = {kNghttpd,        "-a", "127.0.0.1",
                                       "--echo-upload", "-d", root_};
      if (!tls) argv.push_back("--no-tls");
      argv.push_back(absl::StrCat(port));
      if (tls) {
        argv.push_back(dir_ + "/key.pem");
        argv.push_back(dir_ + "/cert.pem");
      }
      auto process = testing::Subprocess::Start(argv);
      ASSERT_TRUE(process.ok()) << process.status();
      if (WaitForPort(port, process->get(), absl::Seconds(10))) {
        nghttpd_ = *std::move(process);
        port_ = port;
      } else {
        (*process)->ReadAvailable();
        std::cerr << "nghttpd on port " << port
                  << " did not come up: " << (*process)->output() << "\n";
      }
    }
    ASSERT_NE(port_, 0) << "nghttpd did not start";

    auto client = BlockingHttp2Client::Connect(
        SocketAddress::Loopback(AF_INET, port_), options);
    ASSERT_TRUE(client.ok()) << client.status();
    client_ = *std::move(client);
  }

  void TearDown() override {
    client_.reset();
    nghttpd_.reset();  // SIGKILL + reap.
  }

  std::string dir_, root_, small_, big_;
  uint16_t port_ = 0;
  std::unique_ptr<testing::Subprocess> nghttpd_;
  std::unique_ptr<BlockingHttp2Client> client_;
};

TEST_P(NghttpdTest, SmallFile) {
  auto r = client_->Fetch("GET", "/index.html");
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_TRUE(r->error.ok()) << r->error;
  EXPECT_EQ(r->status, 200);
  EXPECT_EQ(r->body, small_);
  EXPECT_EQ(r->Header("content-length"), absl::StrCat(small_.size()));
}

TEST_P(NghttpdTest, LargeFile) {
  auto r = client_->Fetch("GET", "/big.bin", absl::Seconds(40));
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_TRUE(r->error.ok()) << r->error;
  EXPECT_EQ(r->status, 200);
  ASSERT_EQ(r->body.size(), big_.size());
  EXPECT_TRUE(r->body == big_);
}

TEST_P(NghttpdTest, ManyConcurrentStreams) {
  std::vector<FetchRequest> requests;
  for (int i = 0; i < 150; ++i) {
    FetchRequest r;
    r.path = (i % 3 == 0)   ? "/sub/a.txt"
             : (i % 3 == 1) ? "/index.html"
                            : "/missing";
    requests.push_back(r);
  }
  requests.push_back(FetchRequest{"GET", "/big.bin", "", {}});
  auto all = client_->FetchAll(requests, absl::Seconds(40));
  ASSERT_TRUE(all.ok()) << all.status();
  for (size_t i = 0; i + 1 < requests.size(); ++i) {
    const FetchedResponse& r = (*all)[i];
    ASSERT_TRUE(r.error.ok()) << i << ": " << r.error;
    if (i % 3 == 0) {
      EXPECT_EQ(r.status, 200);
      EXPECT_EQ(r.body, "a\n");
    } else if (i % 3 == 1) {
      EXPECT_EQ(r.status, 200);
      EXPECT_EQ(r.body, small_);
    } else {
      EXPECT_EQ(r.status, 404);
    }
  }
  EXPECT_TRUE(all->back().body == big_);
}

TEST_P(NghttpdTest, UploadEchoed) {
  FetchRequest request;
  request.method = "POST";
  request.path = "/echo";
  request.body = RandomBytes(3 << 20, 11);
  auto r = client_->Fetch(request, absl::Seconds(40));
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_TRUE(r->error.ok()) << r->error;
  EXPECT_EQ(r->status, 200);
  EXPECT_TRUE(r->body == request.body) << r->body.size();
}

TEST_P(NghttpdTest, GracefulClose) {
  auto r = client_->Fetch("GET", "/index.html");
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_TRUE(client_->Shutdown(absl::Seconds(10)).ok());
  EXPECT_TRUE(client_->closed());
}

INSTANTIATE_TEST_SUITE_P(H2cAndTls, NghttpdTest, ::testing::Bool(),
                         [](const ::testing::TestParamInfo<bool>& info) {
                           return info.param ? "Tls" : "H2c";
                         });

}  // namespace
}  // namespace transport
