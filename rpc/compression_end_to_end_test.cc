// Per-call message compression, our client against our server: every
// encoding in both directions, the threshold, negotiation, unsupported
// encodings, decompression limits and streaming calls.

#include <atomic>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "gtest/gtest.h"
#include "rpc/internal/client_call.h"
#include "rpc/internal/server_call.h"
#include "rpc/rpc.h"
#include "rpc/testdata/test_service.rpc.pb.h"
#include "transport/http/blocking_http2_client.h"
#include "transport/io/socket.h"
#include "transport/testing/wait_until.h"

namespace rpc {
namespace internal {

// Reaches ClientContext's private test-only setter and its call.
class ClientContextTestPeer {
 public:
  static void SetGrpcEncodingHeader(ClientContext* ctx, std::string value) {
    ctx->set_grpc_encoding_header_for_test(std::move(value));
  }
  static std::shared_ptr<ClientCall> Call(const ClientContext& ctx) {
    return ctx.call();
  }
};

}  // namespace internal
namespace {

using compression::Encoding;
using test::EchoRequest;
using test::EchoResponse;
using test::EchoService;

// Compressible, but not trivially so.
std::string Text(size_t n) {
  std::string s;
  s.reserve(n);
  for (size_t i = 0; s.size() < n; ++i) {
    s += "message " + std::to_string(i % 97) + " ";
  }
  s.resize(n);
  return s;
}

// Echoes the request payload; "x-response-encoding" metadata sets the
// response encoding; records what the request looked like.
class CompressionService final : public EchoService::Service {
 public:
  Status Echo(ServerContext* ctx, const EchoRequest* req,
              EchoResponse* resp) override {
    Record(ctx);
    resp->set_message(req->message());
    resp->set_payload(req->payload() + Text(req->response_size()));
    return Status::OK;
  }

  Status ServerStream(ServerContext* ctx, const EchoRequest* req,
                      ServerWriter<EchoResponse>* writer) override {
    Record(ctx);
    for (int i = 0; i < req->count(); ++i) {
      EchoResponse resp;
      resp.set_index(i);
      resp.set_payload(Text(req->response_size()));
      if (!writer->Write(resp)) return Status(StatusCode::CANCELLED, "gone");
    }
    return Status::OK;
  }

  Status ClientStream(ServerContext* ctx, ServerReader<EchoRequest>* reader,
                      EchoResponse* resp) override {
    Record(ctx);
    EchoRequest req;
    int n = 0;
    std::string all;
    while (reader->Read(&req)) {
      ++n;
      all += req.payload();
    }
    resp->set_index(n);
    resp->set_payload(all);
    compressed_requests = ctx->call()->compressed_requests();
    return Status::OK;
  }

  Status Bidi(ServerContext* ctx,
              ServerReaderWriter<EchoResponse, EchoRequest>* stream) override {
    Record(ctx);
    EchoRequest req;
    int n = 0;
    while (stream->Read(&req)) {
      EchoResponse resp;
      resp.set_payload(req.payload());
      resp.set_index(n++);
      if (!stream->Write(resp)) break;
    }
    compressed_requests = ctx->call()->compressed_requests();
    compressed_responses = ctx->call()->compressed_responses();
    return Status::OK;
  }

  std::atomic<Encoding> request_encoding{Encoding::kIdentity};
  std::atomic<size_t> compressed_requests{0};
  std::atomic<size_t> compressed_responses{0};

 private:
  void Record(ServerContext* ctx) {
    request_encoding = ctx->request_compression_algorithm();
    compressed_requests = ctx->call()->compressed_requests();
    if (auto v = ctx->client_metadata().Get("x-response-encoding")) {
      if (auto e = compression::ParseEncodingName(*v)) {
        ctx->set_compression_algorithm(*e);
      }
    }
  }
};

class CompressionTest : public ::testing::TestWithParam<Encoding> {
 protected:
  void SetUp() override { StartServer(ServerBuilder()); }

  void StartServer(ServerBuilder builder,
                   const ChannelArguments& args = ChannelArguments()) {
    if (server_ != nullptr) server_->Shutdown(absl::Now() + absl::Seconds(5));
    server_.reset();
    int port = 0;
    server_ =
        builder
            .AddListeningPort("127.0.0.1:0", InsecureServerCredentials(), &port)
            .RegisterService(&service_)
            .BuildAndStart();
    ASSERT_NE(server_, nullptr);
    port_ = port;
    Connect(args);
  }

  void Connect(const ChannelArguments& args) {
    channel_ = CreateCustomChannel("127.0.0.1:" + std::to_string(port_),
                                   InsecureChannelCredentials(), args);
    stub_ = EchoService::NewStub(channel_);
  }

  void TearDown() override {
    stub_.reset();
    channel_.reset();
    if (server_ != nullptr) server_->Shutdown(absl::Now() + absl::Seconds(5));
  }

  static void Bound(ClientContext* ctx) {
    ctx->set_deadline(absl::Now() + absl::Seconds(10));
  }

  CompressionService service_;
  std::unique_ptr<Server> server_;
  int port_ = 0;
  std::shared_ptr<Channel> channel_;
  std::unique_ptr<EchoService::Stub> stub_;
};

TEST_P(CompressionTest, CompressedRequestAndResponse) {
  const Encoding e = GetParam();
  ClientContext ctx;
  Bound(&ctx);
  ctx.set_compression_algorithm(e);
  ctx.AddMetadata("x-response-encoding",
                  std::string(compression::EncodingName(e)));
  EchoRequest req;
  req.set_message("hello");
  req.set_payload(Text(64 << 10));
  EchoResponse resp;
  Status s = stub_->Echo(&ctx, req, &resp);
  ASSERT_TRUE(s.ok()) << s;
  EXPECT_EQ(resp.message(), "hello");
  EXPECT_EQ(resp.payload(), req.payload());
  EXPECT_EQ(service_.request_encoding.load(), e);
  EXPECT_EQ(service_.compressed_requests.load(), 1u);
  EXPECT_EQ(internal::ClientContextTestPeer::Call(ctx)->compressed_requests(),
            1u);
  EXPECT_EQ(internal::ClientContextTestPeer::Call(ctx)->compressed_responses(),
            1u);
}

TEST_P(CompressionTest, ChannelDefaultAndServerDefault) {
  const Encoding e = GetParam();
  ServerBuilder builder;
  builder.SetDefaultCompressionAlgorithm(e);
  ChannelArguments args;
  args.SetCompressionAlgorithm(e);
  StartServer(std::move(builder), args);
  ClientContext ctx;
  Bound(&ctx);
  EchoRequest req;
  req.set_payload(Text(4096));
  EchoResponse resp;
  Status s = stub_->Echo(&ctx, req, &resp);
  ASSERT_TRUE(s.ok()) << s;
  EXPECT_EQ(resp.payload(), req.payload());
  EXPECT_EQ(service_.request_encoding.load(), e);
  EXPECT_EQ(service_.compressed_requests.load(), 1u);
  EXPECT_EQ(internal::ClientContextTestPeer::Call(ctx)->compressed_responses(),
            1u);
}

TEST_P(CompressionTest, SmallMessagesGoUncompressed) {
  const Encoding e = GetParam();
  ClientContext ctx;
  Bound(&ctx);
  ctx.set_compression_algorithm(e);
  ctx.AddMetadata("x-response-encoding",
                  std::string(compression::EncodingName(e)));
  EchoRequest req;
  req.set_payload(Text(100));
  EchoResponse resp;
  Status s = stub_->Echo(&ctx, req, &resp);
  ASSERT_TRUE(s.ok()) << s;
  EXPECT_EQ(resp.payload(), req.payload());
  // The call is compressed; its messages, below the threshold, are not.
  EXPECT_EQ(service_.request_encoding.load(), e);
  EXPECT_EQ(service_.compressed_requests.load(), 0u);
  EXPECT_EQ(internal::ClientContextTestPeer::Call(ctx)->compressed_requests(),
            0u);
  EXPECT_EQ(internal::ClientContextTestPeer::Call(ctx)->compressed_responses(),
            0u);
}

TEST_P(CompressionTest, ConfiguredThreshold) {
  const Encoding e = GetParam();
  ServerBuilder builder;
  builder.SetCompressionThreshold(10);
  ChannelArguments args;
  args.SetCompressionThreshold(10);
  StartServer(std::move(builder), args);
  ClientContext ctx;
  Bound(&ctx);
  ctx.set_compression_algorithm(e);
  ctx.AddMetadata("x-response-encoding",
                  std::string(compression::EncodingName(e)));
  EchoRequest req;
  req.set_payload(Text(100));
  EchoResponse resp;
  Status s = stub_->Echo(&ctx, req, &resp);
  ASSERT_TRUE(s.ok()) << s;
  EXPECT_EQ(resp.payload(), req.payload());
  EXPECT_EQ(service_.compressed_requests.load(), 1u);
  EXPECT_EQ(internal::ClientContextTestPeer::Call(ctx)->compressed_responses(),
            1u);
}

TEST_P(CompressionTest, ServerStreaming) {
  const Encoding e = GetParam();
  ClientContext ctx;
  Bound(&ctx);
  ctx.AddMetadata("x-response-encoding",
                  std::string(compression::EncodingName(e)));
  EchoRequest req;
  req.set_count(5);
  req.set_response_size(8192);
  auto reader = stub_->ServerStream(&ctx, req);
  EchoResponse resp;
  int n = 0;
  while (reader->Read(&resp)) {
    EXPECT_EQ(resp.index(), n);
    EXPECT_EQ(resp.payload(), Text(8192));
    ++n;
  }
  Status s = reader->Finish();
  ASSERT_TRUE(s.ok()) << s;
  EXPECT_EQ(n, 5);
  EXPECT_EQ(internal::ClientContextTestPeer::Call(ctx)->compressed_responses(),
            5u);
}

TEST_P(CompressionTest, ClientStreaming) {
  const Encoding e = GetParam();
  ClientContext ctx;
  Bound(&ctx);
  ctx.set_compression_algorithm(e);
  EchoResponse resp;
  auto writer = stub_->ClientStream(&ctx, &resp);
  std::string all;
  for (int i = 0; i < 6; ++i) {
    EchoRequest req;
    // Alternately above and below the threshold.
    req.set_payload(Text(i % 2 == 0 ? 5000 : 10));
    all += req.payload();
    ASSERT_TRUE(writer->Write(req));
  }
  ASSERT_TRUE(writer->WritesDone());
  Status s = writer->Finish();
  ASSERT_TRUE(s.ok()) << s;
  EXPECT_EQ(resp.index(), 6);
  EXPECT_EQ(resp.payload(), all);
  EXPECT_EQ(service_.compressed_requests.load(), 3u);
  EXPECT_EQ(internal::ClientContextTestPeer::Call(ctx)->compressed_requests(),
            3u);
}

TEST_P(CompressionTest, Bidi) {
  const Encoding e = GetParam();
  ClientContext ctx;
  Bound(&ctx);
  ctx.set_compression_algorithm(e);
  ctx.AddMetadata("x-response-encoding",
                  std::string(compression::EncodingName(e)));
  auto stream = stub_->Bidi(&ctx);
  for (int i = 0; i < 10; ++i) {
    EchoRequest req;
    req.set_payload(Text(2000 + i));
    ASSERT_TRUE(stream->Write(req));
    EchoResponse resp;
    ASSERT_TRUE(stream->Read(&resp));
    EXPECT_EQ(resp.index(), i);
    EXPECT_EQ(resp.payload(), req.payload());
  }
  ASSERT_TRUE(stream->WritesDone());
  Status s = stream->Finish();
  ASSERT_TRUE(s.ok()) << s;
  EXPECT_EQ(service_.compressed_requests.load(), 10u);
  EXPECT_EQ(service_.compressed_responses.load(), 10u);
  EXPECT_EQ(internal::ClientContextTestPeer::Call(ctx)->compressed_responses(),
            10u);
}

TEST_P(CompressionTest, RequestBombIsResourceExhausted) {
  ServerBuilder builder;
  builder.SetMaxReceiveMessageSize(64 << 10);
  StartServer(std::move(builder));
  ClientContext ctx;
  Bound(&ctx);
  ctx.set_compression_algorithm(GetParam());
  EchoRequest req;
  req.set_payload(std::string(8 << 20, '\0'));  // Compresses to a few KiB.
  EchoResponse resp;
  Status s = stub_->Echo(&ctx, req, &resp);
  EXPECT_EQ(s.error_code(), StatusCode::RESOURCE_EXHAUSTED) << s;
}

TEST_P(CompressionTest, ResponseBombIsResourceExhausted) {
  ChannelArguments args;
  args.SetMaxReceiveMessageSize(64 << 10);
  Connect(args);
  ClientContext ctx;
  Bound(&ctx);
  ctx.AddMetadata("x-response-encoding",
                  std::string(compression::EncodingName(GetParam())));
  EchoRequest req;
  req.set_response_size(8 << 20);
  EchoResponse resp;
  Status s = stub_->Echo(&ctx, req, &resp);
  EXPECT_EQ(s.error_code(), StatusCode::RESOURCE_EXHAUSTED) << s;
}

INSTANTIATE_TEST_SUITE_P(Encodings, CompressionTest,
                         ::testing::Values(Encoding::kGzip, Encoding::kDeflate,
                                           Encoding::kZstd),
                         [](const auto& info) {
                           return std::string(
                               compression::EncodingName(info.param));
                         });

class CompressionErrorsTest : public CompressionTest {};

TEST_F(CompressionErrorsTest, UnsupportedEncodingIsUnimplemented) {
  ClientContext ctx;
  Bound(&ctx);
  internal::ClientContextTestPeer::SetGrpcEncodingHeader(&ctx, "br");
  EchoRequest req;
  req.set_message("x");
  EchoResponse resp;
  Status s = stub_->Echo(&ctx, req, &resp);
  EXPECT_EQ(s.error_code(), StatusCode::UNIMPLEMENTED) << s;
  EXPECT_NE(s.error_message().find("gzip"), std::string::npos) << s;
  EXPECT_NE(s.error_message().find("zstd"), std::string::npos) << s;
}

// The server shares a connection's grpc-accept-encoding string between calls
// that send the same value: a call that sends another one is answered by its
// own (gzip, then identity only, then gzip again, on one connection).
TEST_F(CompressionErrorsTest, EachCallIsAnsweredByItsOwnAcceptEncoding) {
  auto client = transport::BlockingHttp2Client::Connect(
      transport::SocketAddress::Loopback(AF_INET, port_), {});
  ASSERT_TRUE(client.ok()) << client.status();
  EchoRequest req;
  req.set_message("x");
  const std::string message = req.SerializeAsString();
  std::string framed(5, '\0');
  framed[4] = static_cast<char>(message.size());
  framed += message;
  // The last call sends no grpc-accept-encoding (nullptr): identity only,
  // whatever the call before it accepted.
  for (const char* accept : {"identity,gzip", "identity", "identity,gzip",
                             static_cast<const char*>(nullptr)}) {
    struct Seen {
      absl::Mutex mu;
      std::string grpc_encoding;
      bool closed = false;
    };
    auto seen = std::make_shared<Seen>();
    (*client)->RunInLoop([&](transport::Http2Client* c) {
      std::vector<hpack::HeaderField> headers = {
          {":method", "POST"},
          {":scheme", "http"},
          {":path", "/rpc.test.EchoService/Echo"},
          {":authority", c->authority()},
          {"content-type", "application/grpc"},
          {"te", "trailers"},
          {"x-response-encoding", "gzip"}};
      if (accept != nullptr)
        headers.push_back({"grpc-accept-encoding", accept});
      transport::Http2Client::StreamCallbacks callbacks;
      callbacks.on_headers = [seen](const hpack::HeaderList& h, bool) {
        absl::MutexLock lock(&seen->mu);
        for (size_t i = 0; i < h.size(); ++i) {
          if (h[i].name == "grpc-encoding") {
            seen->grpc_encoding = std::string(h[i].value);
          }
        }
      };
      callbacks.on_close = [seen](absl::Status) {
        absl::MutexLock lock(&seen->mu);
        seen->closed = true;
      };
      absl::StatusOr<uint32_t> id =
          c->StartRequest(headers, false, std::move(callbacks));
      ASSERT_TRUE(id.ok()) << id.status();
      transport::SliceBuffer body;
      body.Append(framed);
      ASSERT_TRUE(c->SendData(*id, std::move(body), true).ok());
    });
    ASSERT_TRUE(transport::testing::WaitUntil([&] {
      absl::MutexLock lock(&seen->mu);
      return seen->closed;
    })) << (accept != nullptr ? accept : "(none)");
    absl::MutexLock lock(&seen->mu);
    const bool gzip =
        accept != nullptr && std::string_view(accept) != "identity";
    EXPECT_EQ(seen->grpc_encoding, gzip ? "gzip" : "")
        << (accept != nullptr ? accept : "(none)");
  }
}

TEST_F(CompressionErrorsTest, CompressedFlagWithIdentityIsInternal) {
  ClientContext ctx;
  Bound(&ctx);
  ctx.set_compression_algorithm(Encoding::kGzip);
  internal::ClientContextTestPeer::SetGrpcEncodingHeader(&ctx, "identity");
  EchoRequest req;
  req.set_payload(Text(4096));
  EchoResponse resp;
  Status s = stub_->Echo(&ctx, req, &resp);
  EXPECT_EQ(s.error_code(), StatusCode::INTERNAL) << s;
  // The flag is refused, not the octets taken as they are (they would then
  // fail to parse, with the same code).
  EXPECT_EQ(s.error_message(), "compressed message without grpc-encoding");
}

TEST_F(CompressionErrorsTest, MismatchedEncodingIsInternal) {
  ClientContext ctx;
  Bound(&ctx);
  ctx.set_compression_algorithm(Encoding::kGzip);
  internal::ClientContextTestPeer::SetGrpcEncodingHeader(&ctx, "zstd");
  EchoRequest req;
  req.set_payload(Text(4096));
  EchoResponse resp;
  Status s = stub_->Echo(&ctx, req, &resp);
  EXPECT_EQ(s.error_code(), StatusCode::INTERNAL) << s;
  // The decompressor's error, not the parser's.
  EXPECT_EQ(s.error_message().find("parsing"), std::string::npos) << s;
}

TEST(ChooseResponseEncodingTest, Rule) {
  using internal::ChooseResponseEncoding;
  const std::string grpc_cpp = "identity, deflate, gzip";
  // Off, or a client that named nothing: identity.
  EXPECT_EQ(ChooseResponseEncoding(Encoding::kIdentity, grpc_cpp),
            Encoding::kIdentity);
  EXPECT_EQ(ChooseResponseEncoding(Encoding::kGzip, std::nullopt),
            Encoding::kIdentity);
  // The server's choice when the client accepts it.
  EXPECT_EQ(ChooseResponseEncoding(Encoding::kGzip, grpc_cpp), Encoding::kGzip);
  EXPECT_EQ(ChooseResponseEncoding(Encoding::kDeflate, grpc_cpp),
            Encoding::kDeflate);
  EXPECT_EQ(
      ChooseResponseEncoding(Encoding::kZstd, "identity, deflate, gzip, zstd"),
      Encoding::kZstd);
  // Else the server's preference among what the client accepts.
  EXPECT_EQ(ChooseResponseEncoding(Encoding::kZstd, grpc_cpp), Encoding::kGzip);
  EXPECT_EQ(ChooseResponseEncoding(Encoding::kZstd, "identity,deflate"),
            Encoding::kDeflate);
  EXPECT_EQ(ChooseResponseEncoding(Encoding::kGzip, "identity"),
            Encoding::kIdentity);
  EXPECT_EQ(ChooseResponseEncoding(Encoding::kGzip, ""), Encoding::kIdentity);
}

}  // namespace
}  // namespace rpc
