// The server's callback API (rpc/server_callback.h), all four kinds, against
// our blocking client and Debian's grpc++ client: answers, errors with
// metadata, headers before messages, compression options. Cancellation, flow
// control and misuse: server_callback_cancel_test; threads, memory and
// connections: server_callback_limits_test; the fixture they share:
// rpc/testing/server_callback_testing.h. Every reactor deletes itself in
// OnDone (ASan checks nothing touches it after). Waits are on conditions,
// bounded by 30 s.

#include <grpcpp/grpcpp.h>

#include <string>
#include <vector>

#include "absl/time/clock.h"
#include "gtest/gtest.h"
#include "rpc/rpc.h"
#include "rpc/testdata/test_service.grpc.pb.h"
#include "rpc/testdata/test_service.rpc.pb.h"
#include "rpc/testing/server_callback_testing.h"

namespace rpc {
namespace {

using test::EchoRequest;
using test::EchoResponse;
using test::EchoService;

TEST_F(CallbackServerTest, UnaryAnswersWithMetadata) {
  ClientContext ctx;
  WithDeadline(&ctx)->AddMetadata("x-in", "v1");
  EchoRequest req;
  req.set_message("hi");
  req.set_response_size(3);
  EchoResponse resp;
  Status s = stub_->Echo(&ctx, req, &resp);
  ASSERT_TRUE(s.ok()) << s;
  EXPECT_EQ(resp.message(), "hi");
  EXPECT_EQ(resp.payload(), "ppp");
  EXPECT_EQ(ctx.GetServerInitialMetadata().Get("x-initial"), "v1");
  EXPECT_EQ(ctx.GetServerTrailingMetadata().Get("x-trailing-bin"),
            std::string("v1") + '\0');
}

TEST_F(CallbackServerTest, UnaryFinishedFromAnotherThread) {
  for (int i = 0; i < 20; ++i) {
    ClientContext ctx;
    EchoRequest req;
    req.set_message("thread");
    EchoResponse resp;
    Status s = stub_->Echo(WithDeadline(&ctx), req, &resp);
    ASSERT_TRUE(s.ok()) << s;
    EXPECT_EQ(resp.message(), "thread");
  }
}

TEST_F(CallbackServerTest, UnaryErrorWithTrailingMetadata) {
  ClientContext ctx;
  WithDeadline(&ctx)->AddMetadata("x-in", "e");
  EchoRequest req;
  req.set_status_code(StatusCode::FAILED_PRECONDITION);
  req.set_status_message("nope 100%");
  EchoResponse resp;
  Status s = stub_->Echo(&ctx, req, &resp);
  EXPECT_EQ(s.error_code(), StatusCode::FAILED_PRECONDITION);
  EXPECT_EQ(s.error_message(), "nope 100%");
  EXPECT_EQ(ctx.GetServerTrailingMetadata().Get("x-trailing-bin"),
            std::string("e") + '\0');
}

TEST_F(CallbackServerTest, ServerStreaming) {
  for (bool last : {false, true}) {
    ClientContext ctx;
    if (last) ctx.AddMetadata("x-last", "1");
    EchoRequest req;
    req.set_count(50);
    req.set_response_size(100);
    auto reader = stub_->ServerStream(WithDeadline(&ctx), req);
    EchoResponse resp;
    int n = 0;
    while (reader->Read(&resp)) {
      EXPECT_EQ(resp.index(), n);
      EXPECT_EQ(resp.payload().size(), 100u);
      ++n;
    }
    Status s = reader->Finish();
    EXPECT_TRUE(s.ok()) << s;
    EXPECT_EQ(n, 50);
    EXPECT_TRUE(
        WaitFor([&] { return service_.events.Dones() == (last ? 2 : 1); }));
    // StartWriteAndFinish has no OnWriteDone (grpc++'s: it completes at
    // OnDone).
    EXPECT_EQ(service_.events.writes_ok.load(), last ? 50 + 49 : 50);
  }
  EXPECT_EQ(service_.events.Cancels(), 0);
}

// A streaming error status after StartWriteAndFinish: the message goes out,
// then the status (only a unary or client-streaming response is dropped on
// an error).
TEST_F(CallbackServerTest, WriteAndFinishWithAnErrorSendsTheMessage) {
  ClientContext ctx;
  WithDeadline(&ctx)->AddMetadata("x-last", "1");
  EchoRequest req;
  req.set_count(3);
  req.set_status_code(StatusCode::ABORTED);
  req.set_status_message("after the last");
  auto reader = stub_->ServerStream(&ctx, req);
  EchoResponse resp;
  int n = 0;
  while (reader->Read(&resp)) {
    EXPECT_EQ(resp.index(), n);
    ++n;
  }
  Status s = reader->Finish();
  EXPECT_EQ(s.error_code(), StatusCode::ABORTED) << s;
  EXPECT_EQ(s.error_message(), "after the last");
  EXPECT_EQ(n, 3);
}

TEST_F(CallbackServerTest, ClientStreaming) {
  ClientContext ctx;
  EchoResponse resp;
  auto writer = stub_->ClientStream(WithDeadline(&ctx), &resp);
  EchoRequest req;
  req.set_payload(std::string(1000, 'x'));
  for (int i = 0; i < 100; ++i) ASSERT_TRUE(writer->Write(req));
  ASSERT_TRUE(writer->WritesDone());
  Status s = writer->Finish();
  ASSERT_TRUE(s.ok()) << s;
  EXPECT_EQ(resp.message(), "100");
  EXPECT_EQ(resp.index(), 100000);
  // StartRead in OnReadDone with the next message already here: answered
  // after the reaction returned, never inside it.
  EXPECT_EQ(service_.events.nested_reactions.load(), 0);
}

// WriteOptions::set_no_compression: a gzip call's messages go out with flag 0.
TEST_F(CallbackServerTest, WriteOptionsNoCompression) {
  for (bool no_compression : {false, true}) {
    SCOPED_TRACE(no_compression);
    service_.events.compressed_responses = -1;
    ClientContext ctx;
    WithDeadline(&ctx)->AddMetadata("x-gzip", "1");
    if (no_compression) ctx.AddMetadata("x-no-compression", "1");
    EchoRequest req;
    req.set_count(4);
    req.set_response_size(8192);
    auto reader = stub_->ServerStream(&ctx, req);
    EchoResponse resp;
    int n = 0;
    while (reader->Read(&resp)) n += resp.payload().size() == 8192;
    EXPECT_TRUE(reader->Finish().ok());
    EXPECT_EQ(n, 4);
    ASSERT_TRUE(
        WaitFor([&] { return service_.events.compressed_responses >= 0; }));
    EXPECT_EQ(service_.events.compressed_responses.load(),
              no_compression ? 0 : 4);
  }
}

TEST_F(CallbackServerTest, BidiEchoesAndSendsHeadersFirst) {
  ClientContext ctx;
  auto stream = stub_->Bidi(WithDeadline(&ctx));
  // StartSendInitialMetadata: the headers come before any message.
  stream->WaitForInitialMetadata();
  ExpectEchoes(stream.get(), 20);
  ASSERT_TRUE(stream->WritesDone());
  EchoResponse resp;
  EXPECT_FALSE(stream->Read(&resp));
  Status s = stream->Finish();
  EXPECT_TRUE(s.ok()) << s;
  EXPECT_EQ(service_.events.nested_reactions.load(), 0);
}

TEST_F(CallbackServerTest, BidiErrorStatus) {
  ClientContext ctx;
  auto stream = stub_->Bidi(WithDeadline(&ctx));
  EchoRequest req;
  req.set_status_code(StatusCode::OUT_OF_RANGE);
  req.set_status_message("range");
  ASSERT_TRUE(stream->Write(req));
  EchoResponse resp;
  EXPECT_FALSE(stream->Read(&resp));
  Status s = stream->Finish();
  EXPECT_EQ(s.error_code(), StatusCode::OUT_OF_RANGE);
  EXPECT_EQ(s.error_message(), "range");
}

// ---- grpc++'s client ----

TEST_F(CallbackServerTest, GrpcClientAllKinds) {
  auto stub = GrpcStub();
  {
    grpc::ClientContext ctx;
    ctx.set_deadline(std::chrono::system_clock::now() +
                     std::chrono::seconds(30));
    ctx.AddMetadata("x-in", "g");
    EchoRequest req;
    req.set_message("grpc");
    EchoResponse resp;
    grpc::Status s = stub->Echo(&ctx, req, &resp);
    ASSERT_TRUE(s.ok()) << s.error_message();
    EXPECT_EQ(resp.message(), "grpc");
    auto it = ctx.GetServerTrailingMetadata().find("x-trailing-bin");
    ASSERT_NE(it, ctx.GetServerTrailingMetadata().end());
    EXPECT_EQ(std::string(it->second.data(), it->second.size()),
              std::string("g") + '\0');
  }
  {
    grpc::ClientContext ctx;
    EchoRequest req;
    req.set_status_code(StatusCode::NOT_FOUND);
    req.set_status_message("missing");
    EchoResponse resp;
    grpc::Status s = stub->Echo(&ctx, req, &resp);
    EXPECT_EQ(s.error_code(), grpc::StatusCode::NOT_FOUND);
    EXPECT_EQ(s.error_message(), "missing");
  }
  {
    grpc::ClientContext ctx;
    EchoRequest req;
    req.set_count(30);
    req.set_response_size(10);
    auto reader = stub->ServerStream(&ctx, req);
    EchoResponse resp;
    int n = 0;
    while (reader->Read(&resp)) ++n;
    EXPECT_TRUE(reader->Finish().ok());
    EXPECT_EQ(n, 30);
  }
  {
    grpc::ClientContext ctx;
    EchoResponse resp;
    auto writer = stub->ClientStream(&ctx, &resp);
    EchoRequest req;
    req.set_payload("abc");
    for (int i = 0; i < 7; ++i) ASSERT_TRUE(writer->Write(req));
    ASSERT_TRUE(writer->WritesDone());
    EXPECT_TRUE(writer->Finish().ok());
    EXPECT_EQ(resp.message(), "7");
  }
  {
    grpc::ClientContext ctx;
    auto stream = stub->Bidi(&ctx);
    ExpectEchoes(stream.get(), 5);
    ASSERT_TRUE(stream->WritesDone());
    EXPECT_TRUE(stream->Finish().ok());
  }
}

TEST_F(CallbackServerTest, GrpcClientCancelAndDeadline) {
  auto stub = GrpcStub();
  {
    grpc::ClientContext ctx;
    auto stream = stub->Bidi(&ctx);
    EchoRequest req;
    ASSERT_TRUE(stream->Write(req));
    EchoResponse resp;
    ASSERT_TRUE(stream->Read(&resp));
    ctx.TryCancel();
    EXPECT_EQ(stream->Finish().error_code(), grpc::StatusCode::CANCELLED);
  }
  EXPECT_TRUE(WaitFor([&] { return service_.events.Dones() == 1; }));
  EXPECT_EQ(service_.events.Cancels(), 1);
  {
    grpc::ClientContext ctx;
    ctx.set_deadline(std::chrono::system_clock::now() +
                     std::chrono::milliseconds(200));
    EchoRequest req;
    req.set_message("hold");
    EchoResponse resp;
    EXPECT_EQ(stub->Echo(&ctx, req, &resp).error_code(),
              grpc::StatusCode::DEADLINE_EXCEEDED);
  }
  EXPECT_TRUE(WaitFor([&] { return service_.events.Dones() == 2; }));
  EXPECT_EQ(service_.events.Cancels(), 2);
}

}  // namespace
}  // namespace rpc
