// The public API's shape: what the types allow at compile time (stream
// objects are not copyable, a Channel is made only by CreateChannel and is a
// ChannelInterface), and that generated stubs run on any ChannelInterface: a
// channel of our own that wraps a real one sees every call start.

#include <atomic>
#include <memory>
#include <string>
#include <type_traits>

#include "absl/time/clock.h"
#include "gtest/gtest.h"
#include "rpc/rpc.h"
#include "rpc/testdata/test_service.rpc.pb.h"

namespace rpc {
namespace {

using test::EchoRequest;
using test::EchoResponse;
using test::EchoService;

template <typename T>
constexpr bool kNotCopyable =
    !std::is_copy_constructible_v<T> && !std::is_copy_assignable_v<T>;

static_assert(kNotCopyable<ClientReader<EchoResponse>>);
static_assert(kNotCopyable<ClientWriter<EchoRequest>>);
static_assert(kNotCopyable<ClientReaderWriter<EchoRequest, EchoResponse>>);
static_assert(kNotCopyable<ServerReader<EchoRequest>>);
static_assert(kNotCopyable<ServerWriter<EchoResponse>>);
static_assert(kNotCopyable<ServerReaderWriter<EchoResponse, EchoRequest>>);
static_assert(kNotCopyable<ClientContext>);
static_assert(kNotCopyable<ServerContext>);
static_assert(kNotCopyable<Channel>);
static_assert(kNotCopyable<Server>);
static_assert(std::is_abstract_v<ChannelInterface>);
static_assert(std::is_base_of_v<ChannelInterface, Channel>);
static_assert(std::is_convertible_v<std::shared_ptr<Channel>,
                                    std::shared_ptr<ChannelInterface>>);
// Only CreateChannel makes channels.
static_assert(!std::is_default_constructible_v<Channel>);

class EchoImpl final : public EchoService::Service {
 public:
  Status Echo(ServerContext*, const EchoRequest* req,
              EchoResponse* resp) override {
    resp->set_message(req->message());
    return Status::OK;
  }
  Status ServerStream(ServerContext*, const EchoRequest* req,
                      ServerWriter<EchoResponse>* writer) override {
    EchoResponse resp;
    for (int i = 0; i < req->count(); ++i) {
      resp.set_index(i);
      if (!writer->Write(resp)) break;
    }
    return Status::OK;
  }
};

// Wraps a channel and counts the calls started through it.
class CountingChannel final : public ChannelInterface {
 public:
  explicit CountingChannel(std::shared_ptr<ChannelInterface> inner)
      : inner_(std::move(inner)) {}
  ConnectivityState GetState(bool try_to_connect) override {
    return inner_->GetState(try_to_connect);
  }
  int calls() const { return calls_.load(); }

 private:
  bool WaitForStateChangeImpl(ConnectivityState last_observed,
                              absl::Time deadline) override {
    return inner_->WaitForStateChange(last_observed, deadline);
  }
  std::shared_ptr<internal::ClientCall> CreateCall(
      const std::string& method, ClientContext* context) override {
    ++calls_;
    return CreateCallOn(inner_.get(), method, context);
  }

  const std::shared_ptr<ChannelInterface> inner_;
  std::atomic<int> calls_{0};
};

TEST(ChannelInterfaceTest, StubsRunOnAChannelThatWrapsAnother) {
  EchoImpl service;
  int port = 0;
  std::unique_ptr<Server> server =
      ServerBuilder()
          .AddListeningPort("127.0.0.1:0", InsecureServerCredentials(), &port)
          .RegisterService(&service)
          .BuildAndStart();
  ASSERT_NE(server, nullptr);
  auto channel = std::make_shared<CountingChannel>(CreateChannel(
      "127.0.0.1:" + std::to_string(port), InsecureChannelCredentials()));
  ASSERT_TRUE(channel->WaitForConnected(absl::Now() + absl::Seconds(30)));
  EXPECT_EQ(channel->GetState(false), ConnectivityState::kReady);
  auto stub = EchoService::NewStub(channel);

  ClientContext unary;
  EchoRequest req;
  req.set_message("hi");
  EchoResponse resp;
  Status s = stub->Echo(&unary, req, &resp);
  ASSERT_TRUE(s.ok()) << s;
  EXPECT_EQ(resp.message(), "hi");

  ClientContext streaming;
  req.set_count(3);
  std::unique_ptr<ClientReader<EchoResponse>> reader =
      stub->ServerStream(&streaming, req);
  int n = 0;
  while (reader->Read(&resp)) ++n;
  EXPECT_TRUE(reader->Finish().ok());
  EXPECT_EQ(n, 3);
  EXPECT_EQ(channel->calls(), 2);
  server->Shutdown(absl::Now());
}

}  // namespace
}  // namespace rpc
