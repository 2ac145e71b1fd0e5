// Transparent retry (issue 11, bug 4; gRPC's A6): a call the server did not
// process (RST_STREAM REFUSED_STREAM, or a GOAWAY whose last stream id
// excludes it) is made again without the application seeing it, bounded;
// and calls queued for the server's MAX_CONCURRENT_STREAMS follow
// wait-for-ready semantics when their connection fails. The server is
// scripted: a sans-IO transport::Connection over a loopback socket on a
// thread of the test. Every wait is bounded. Also gRPC's cardinality rule
// (a second response message on a unary call), with the same server.

#include <atomic>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "absl/time/clock.h"
#include "gtest/gtest.h"
#include "rpc/rpc.h"
#include "rpc/testdata/test_service.rpc.pb.h"
#include "rpc/testing/fan_out.h"
#include "rpc/testing/scripted_server.h"
#include "transport/connection/connection.h"
#include "transport/frame/frame_writer.h"

namespace rpc {
namespace {

using test::EchoRequest;
using test::EchoResponse;
using test::EchoService;

using testing::ScriptedServer;

ChannelArguments QuickReconnect() {
  ChannelArguments args;
  args.initial_backoff = absl::Milliseconds(20);
  args.max_backoff = absl::Milliseconds(100);
  return args;
}

// An async unary call's state, on the heap.
struct AsyncEcho {
  ClientContext ctx;
  EchoRequest req;
  EchoResponse resp;
  Status status;
  absl::Notification done;
};

AsyncEcho* StartEcho(EchoService::Stub* stub, bool wait_for_ready = false) {
  auto* call = new AsyncEcho;
  call->ctx.set_deadline(absl::Now() + absl::Seconds(30));
  call->ctx.set_wait_for_ready(wait_for_ready);
  call->req.set_message("hello");
  stub->async()->Echo(&call->ctx, &call->req, &call->resp, [call](Status s) {
    call->status = std::move(s);
    call->done.Notify();
  });
  return call;
}

Status Finish(AsyncEcho* call) {
  if (!call->done.WaitForNotificationWithTimeout(absl::Seconds(30))) {
    return Status(StatusCode::INTERNAL, "test: the call did not end");
  }
  Status s = call->status;
  delete call;
  return s;
}

// gRPC's cardinality rule: a unary call takes one response message; a
// second fails the call with INTERNAL and resets the stream.
ScriptedServer::Plan TwoResponses(size_t bytes) {
  ScriptedServer::Plan plan;
  plan.response_messages = 2;
  plan.response_bytes = bytes;
  return plan;
}

Status BlockingEcho(EchoService::Stub* stub) {
  ClientContext ctx;
  ctx.set_deadline(absl::Now() + absl::Seconds(30));
  EchoRequest req;
  EchoResponse resp;
  return stub->Echo(&ctx, req, &resp);
}

TEST(CardinalityTest, ASecondResponseMessageFailsAUnaryCall) {
  ScriptedServer server({TwoResponses(0)});
  auto stub = EchoService::NewStub(
      CreateChannel(server.target(), InsecureChannelCredentials()));
  Status s = BlockingEcho(stub.get());
  EXPECT_EQ(s.error_code(), StatusCode::INTERNAL) << s.error_message();
  EXPECT_NE(s.error_message().find("cardinality"), std::string::npos)
      << s.error_message();
  s = Finish(StartEcho(stub.get()));
  EXPECT_EQ(s.error_code(), StatusCode::INTERNAL) << s.error_message();
}

TEST(CardinalityTest, ASecondMessageBeyondTheReadBoundDoesNotStallTheCall) {
  // Once the first message (at least read_bound, 256 KiB) is queued, the
  // octets that follow are owed until the caller reads, and a blocking
  // unary call reads after the status: a second message larger than the
  // stream window (1 MiB) would hold the trailers back until the deadline.
  // Its first octets must end the call at once.
  ScriptedServer server({TwoResponses(1536 << 10)});
  auto stub = EchoService::NewStub(
      CreateChannel(server.target(), InsecureChannelCredentials()));
  const Status s = BlockingEcho(stub.get());
  EXPECT_EQ(s.error_code(), StatusCode::INTERNAL) << s.error_message();
  EXPECT_NE(s.error_message().find("cardinality"), std::string::npos)
      << s.error_message();
}

TEST(TransparentRetryTest, RefusedStreamIsRetriedOnTheSameConnection) {
  ScriptedServer server({ScriptedServer::Refusing(2)});
  auto channel = CreateChannel(server.target(), InsecureChannelCredentials());
  auto stub = EchoService::NewStub(channel);
  Status s = Finish(StartEcho(stub.get()));
  EXPECT_TRUE(s.ok()) << s.error_code() << " " << s.error_message();
  EXPECT_EQ(server.refused(), 2);
  EXPECT_EQ(server.answered(), 1);
  EXPECT_EQ(server.connections(), 1);
}

TEST(TransparentRetryTest, RetryReplaysEveryRequestMessage) {
  // A client-streaming call refused once: the retry sends the messages
  // written so far (kept by the call) and those written after.
  ScriptedServer server({ScriptedServer::Refusing(1)});
  auto channel = CreateChannel(server.target(), InsecureChannelCredentials());
  auto stub = EchoService::NewStub(channel);
  ClientContext ctx;
  ctx.set_deadline(absl::Now() + absl::Seconds(30));
  EchoResponse resp;
  auto writer = stub->ClientStream(&ctx, &resp);
  EchoRequest req;
  req.set_message(std::string(100, 'x'));
  constexpr int kMessages = 3;
  for (int i = 0; i < kMessages; ++i) ASSERT_TRUE(writer->Write(req));
  writer->WritesDone();
  Status s = writer->Finish();
  EXPECT_TRUE(s.ok()) << s.error_code() << " " << s.error_message();
  EXPECT_EQ(server.refused(), 1);
  EXPECT_EQ(server.answered_body_bytes(),
            std::vector<size_t>{kMessages * (5 + req.ByteSizeLong())});
}

// A server that refuses the first request, and a channel set with `arg`:
// the call ends UNAVAILABLE without a retry.
void ExpectNoRetryWith(const char* arg, int value) {
  ScriptedServer server({ScriptedServer::Refusing(1)});
  ChannelArguments args;
  ASSERT_TRUE(args.SetInt(arg, value));
  auto channel =
      CreateCustomChannel(server.target(), InsecureChannelCredentials(), args);
  auto stub = EchoService::NewStub(channel);
  Status s = Finish(StartEcho(stub.get()));
  EXPECT_EQ(s.error_code(), StatusCode::UNAVAILABLE) << s.error_message();
  EXPECT_EQ(server.refused(), 1);
  EXPECT_EQ(server.answered(), 0);
}

TEST(TransparentRetryTest, RequestsBeyondTheRetryBufferAreNotRetried) {
  // The call's request outgrew per_rpc_retry_buffer_size: it is committed
  // (nothing kept to replay), so a refusal ends it.
  ExpectNoRetryWith("grpc.per_rpc_retry_buffer_size", 4);
}

TEST(TransparentRetryTest, RetriesCanBeTurnedOff) {
  ExpectNoRetryWith("grpc.enable_retries", 0);
}

TEST(TransparentRetryTest, RefusalsAreRetriedABoundedNumberOfTimes) {
  // A server that refuses everything: the call fails after a few attempts
  // instead of retrying until its deadline.
  ScriptedServer server({ScriptedServer::Refusing(1000)});
  auto channel = CreateChannel(server.target(), InsecureChannelCredentials());
  auto stub = EchoService::NewStub(channel);
  Status s = Finish(StartEcho(stub.get()));
  EXPECT_EQ(s.error_code(), StatusCode::UNAVAILABLE) << s.error_message();
  EXPECT_EQ(server.refused(), 1 + internal::kMaxRefusedAttempts);
}

TEST(TransparentRetryTest, CallsExcludedByGoAwayAreRetriedOnANewConnection) {
  ScriptedServer::Plan first;
  first.goaway_when_open = 3;
  ScriptedServer server({first, ScriptedServer::Plan()});
  auto channel = CreateCustomChannel(
      server.target(), InsecureChannelCredentials(), QuickReconnect());
  auto stub = EchoService::NewStub(channel);
  std::vector<AsyncEcho*> calls;
  for (int i = 0; i < 3; ++i) calls.push_back(StartEcho(stub.get()));
  for (AsyncEcho* call : calls) {
    Status s = Finish(call);
    EXPECT_TRUE(s.ok()) << s.error_code() << " " << s.error_message();
  }
  EXPECT_EQ(server.connections(), 2);
  EXPECT_EQ(server.answered(), 3);
}

// The first connection of a server on `first` (one call at a time, never
// answered) carries a sent call, and a fail-fast and a wait-for-ready call
// queued behind it. The connection is lost (closed by the server with
// `close`, else by the client's keepalive): the sent and the fail-fast
// calls fail UNAVAILABLE with `why` in their message; the wait-for-ready
// one, never sent, waits for the next connection and succeeds there.
void ExpectQueuedCallsFollowWaitForReady(ScriptedServer::Plan first,
                                         const ChannelArguments& args,
                                         bool close, const char* why) {
  first.max_concurrent_streams = 1;
  ScriptedServer server({first, ScriptedServer::Plan()});
  auto channel =
      CreateCustomChannel(server.target(), InsecureChannelCredentials(), args);
  auto stub = EchoService::NewStub(channel);
  AsyncEcho* sent = StartEcho(stub.get());
  ASSERT_TRUE(server.WaitRequests(1));
  AsyncEcho* fail_fast = StartEcho(stub.get());
  AsyncEcho* wait_for_ready = StartEcho(stub.get(), /*wait_for_ready=*/true);
  ASSERT_TRUE(testing::WaitCallsStarted(channel.get()));  // Both queued.
  if (close) server.CloseHeld();
  for (AsyncEcho* call : {sent, fail_fast}) {
    Status s = Finish(call);
    EXPECT_EQ(s.error_code(), StatusCode::UNAVAILABLE) << s.error_message();
    EXPECT_NE(s.error_message().find(why), std::string::npos)
        << s.error_message();
  }
  Status s = Finish(wait_for_ready);
  EXPECT_TRUE(s.ok()) << s.error_code() << " " << s.error_message();
  EXPECT_EQ(server.connections(), 2);
  EXPECT_EQ(server.answered(), 1);
}

TEST(TransparentRetryTest, QueuedCallsWhenTheConnectionFails) {
  ScriptedServer::Plan held;
  held.hold = true;
  ExpectQueuedCallsFollowWaitForReady(held, QuickReconnect(), /*close=*/true,
                                      "connection failed");
}

TEST(TransparentRetryTest, QueuedCallsWhenKeepaliveGivesUp) {
  // The server stops reading once the first call arrived, so our PING goes
  // unanswered.
  ScriptedServer::Plan stalled;
  stalled.stall = true;
  ChannelArguments args = QuickReconnect();
  args.keepalive_time = absl::Milliseconds(100);
  args.keepalive_timeout = absl::Milliseconds(100);
  ExpectQueuedCallsFollowWaitForReady(stalled, args, /*close=*/false,
                                      "keepalive timeout");
}

// A call that dies with a connection error our client found names it: the
// reason's name and the GOAWAY we sent.
TEST(TransparentRetryTest, OurConnectionErrorNamesItsReason) {
  ScriptedServer::Plan push;
  push.raw_answer = [](uint32_t id, transport::SliceBuffer* out) {
    transport::WritePushPromise(id, 2, "", transport::kDefaultMaxFrameSize,
                                std::nullopt, out);
  };
  ScriptedServer server({push});
  auto channel = CreateChannel(server.target(), InsecureChannelCredentials());
  auto stub = EchoService::NewStub(channel);
  Status s = Finish(StartEcho(stub.get()));
  EXPECT_EQ(s.error_code(), StatusCode::UNAVAILABLE) << s.error_message();
  EXPECT_EQ(s.error_message(),
            "connection failed: push_promise (GOAWAY PROTOCOL_ERROR sent)");
}

// A response our client resets (it breaks a header rule) names the rule.
TEST(TransparentRetryTest, OurStreamErrorNamesTheHeaderRule) {
  ScriptedServer::Plan bad_status;
  bad_status.raw_answer = [](uint32_t id, transport::SliceBuffer* out) {
    // :status (static index 8's name) "2xx", a literal without indexing.
    transport::WriteHeaders(id,
                            std::string_view("\x08\x03"
                                             "2xx",
                                             5),
                            /*end_stream=*/true,
                            transport::kDefaultMaxFrameSize, out);
  };
  ScriptedServer server({bad_status});
  auto channel = CreateChannel(server.target(), InsecureChannelCredentials());
  auto stub = EchoService::NewStub(channel);
  Status s = Finish(StartEcho(stub.get()));
  EXPECT_EQ(s.error_code(), StatusCode::UNAVAILABLE) << s.error_message();
  EXPECT_EQ(s.error_message(),
            "stream reset by the client: header_rule: bad_status "
            "(RST_STREAM PROTOCOL_ERROR sent)");
}

}  // namespace
}  // namespace rpc
