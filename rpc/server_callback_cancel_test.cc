// The server's callback API (rpc/server_callback.h): cancellation (by the
// client, the deadline, Shutdown), flow control (a slow reader, a reactor
// that does not read, an early Finish with client writes blocked), and
// misuse (each ends the call INTERNAL, reactions never inline). Fixture:
// rpc/testing/server_callback_testing.h. Waits are on conditions, bounded.

#include <atomic>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "gtest/gtest.h"
#include "rpc/rpc.h"
#include "rpc/testdata/test_service.rpc.pb.h"
#include "rpc/testing/server_callback_testing.h"
#include "transport/testing/thread_probe.h"

namespace rpc {
namespace {

using test::EchoRequest;
using test::EchoResponse;
using test::EchoService;

TEST_F(CallbackServerTest, ClientCancelGivesOnCancelThenOnDone) {
  ClientContext ctx;
  auto stream = stub_->Bidi(WithDeadline(&ctx));
  EchoRequest req;
  req.set_message("a");
  ASSERT_TRUE(stream->Write(req));
  EchoResponse resp;
  ASSERT_TRUE(stream->Read(&resp));
  ctx.TryCancel();
  EXPECT_TRUE(WaitFor([&] { return service_.events.Dones() == 1; }));
  EXPECT_EQ(service_.events.Cancels(), 1);
  EXPECT_EQ(stream->Finish().error_code(), StatusCode::CANCELLED);
}

TEST_F(CallbackServerTest, DeadlineCancelsAHeldUnaryCall) {
  ClientContext ctx;
  EchoRequest req;
  req.set_message("hold");
  EchoResponse resp;
  Status s =
      stub_->Echo(WithDeadline(&ctx, absl::Milliseconds(200)), req, &resp);
  EXPECT_EQ(s.error_code(), StatusCode::DEADLINE_EXCEEDED);
  EXPECT_TRUE(WaitFor([&] { return service_.events.Dones() == 1; }));
  EXPECT_EQ(service_.events.Cancels(), 1);
}

// `n` blocking "hold" calls (held by the server's reactor), each on a thread
// of its own; `on_status` gets each call's status on its thread.
std::vector<std::thread> HoldCalls(
    EchoService::Stub* stub, int n,
    std::function<void(const Status&)> on_status) {
  std::vector<std::thread> clients;
  for (int i = 0; i < n; ++i) {
    clients.emplace_back([stub, on_status] {
      ClientContext ctx;
      EchoRequest req;
      req.set_message("hold");
      EchoResponse resp;
      on_status(stub->Echo(WithDeadline(&ctx), req, &resp));
    });
  }
  return clients;
}

TEST_F(CallbackServerTest, ShutdownCancelsHeldCallsAndWaitsForOnDone) {
  std::atomic<int> cancelled{0};
  std::vector<std::thread> clients =
      HoldCalls(stub_.get(), 10, [&](const Status& s) {
        if (!s.ok()) ++cancelled;
      });
  ASSERT_TRUE(WaitFor([&] { return service_.held.size() == 10; }));
  server_->Shutdown(absl::Now());
  // Shutdown returned after every reactor's OnDone.
  EXPECT_EQ(service_.events.Dones(), 10);
  EXPECT_EQ(service_.events.Cancels(), 10);
  for (auto& t : clients) t.join();
  EXPECT_EQ(cancelled.load(), 10);
}

TEST_F(CallbackServerTest, HeldUnaryFinishedFromTheTestThread) {
  std::atomic<int> ok{0};
  std::vector<std::thread> clients =
      HoldCalls(stub_.get(), 10, [&](const Status& s) {
        if (s.error_code() == StatusCode::ALREADY_EXISTS) ++ok;
      });
  ASSERT_TRUE(WaitFor([&] { return service_.held.size() == 10; }));
  service_.held.ForEach<CallbackEcho::HeldUnary>([](auto* r) {
    r->Finish(Status(StatusCode::ALREADY_EXISTS, "released"));
  });
  for (auto& t : clients) t.join();
  EXPECT_EQ(ok.load(), 10);
  EXPECT_TRUE(WaitFor([&] { return service_.events.Dones() == 10; }));
  EXPECT_EQ(service_.events.Cancels(), 0);
}

// A client that does not read stops the writer's OnWriteDone: the server
// holds about its write bound plus the windows, not the whole stream.
TEST_F(CallbackServerTest, SlowReaderStopsOnWriteDone) {
  constexpr int kCount = 2000;
  constexpr int kSize = 16 << 10;  // 32 MiB in all.
  ClientContext ctx;
  EchoRequest req;
  req.set_count(kCount);
  req.set_response_size(kSize);
  auto reader = stub_->ServerStream(WithDeadline(&ctx), req);
  ASSERT_TRUE(WaitFor([&] { return service_.events.writes_ok.load() > 4; }));
  // It stops: its count holds for 100 polls in a row (bounded), short of
  // what the windows and buffers could take without a reader.
  constexpr int kBound = (16 << 20) / kSize;
  int ahead = service_.events.writes_ok.load();
  int stable = 0;
  const absl::Time give_up = absl::Now() + absl::Seconds(30);
  while (stable < 100 && ahead < kBound && absl::Now() < give_up) {
    absl::SleepFor(absl::Milliseconds(1));
    const int now = service_.events.writes_ok.load();
    stable = now == ahead ? stable + 1 : 0;
    ahead = now;
  }
  EXPECT_EQ(stable, 100) << "the writes never stopped";
  EXPECT_LT(ahead, kBound) << "written without a reader";
  EchoResponse resp;
  int n = 0;
  while (reader->Read(&resp)) ++n;
  EXPECT_TRUE(reader->Finish().ok());
  EXPECT_EQ(n, kCount);
}

// A reactor that does not StartRead holds the client's writes back through
// the stream window; once it reads (StartRead from another thread), the
// client's writes go through.
TEST_F(CallbackServerTest, ReactorThatDoesNotReadHoldsTheClientBack) {
  if (transport::testing::ThreadCount() < 0) {
    GTEST_SKIP() << "/proc/self/task cannot be listed";
  }
  constexpr int kCount = 2000;
  constexpr int kSize = 16 << 10;
  std::atomic<int> written{0};
  std::atomic<pid_t> client_tid{0};
  std::atomic<bool> client_done{false};
  EchoResponse resp;
  Status status;
  std::thread client([&] {
    client_tid = transport::testing::ThreadId();
    ClientContext ctx;
    WithDeadline(&ctx)->AddMetadata("x-no-read", "1");
    auto writer = stub_->ClientStream(&ctx, &resp);
    EchoRequest req;
    req.set_payload(std::string(kSize, 'r'));
    for (int i = 0; i < kCount; ++i) {
      if (!writer->Write(req)) break;
      ++written;
    }
    writer->WritesDone();
    status = writer->Finish();
    client_done = true;
  });
  ASSERT_TRUE(WaitFor([&] { return service_.held.size() == 1; }));
  ASSERT_TRUE(WaitFor([&] { return written.load() > 4; }));
  // The client stops: its thread sleeps (in a Write waiting for credit)
  // with `written` unchanged for 100 polls in a row, or it ended (not held
  // at all). Where it stopped says whether it was held.
  int last = -1;
  int still = 0;
  EXPECT_TRUE(WaitFor([&] {
    if (client_done) return true;
    const int now = written.load();
    const bool asleep = transport::testing::Asleep(client_tid.load());
    still = now == last && asleep ? still + 1 : 0;
    last = now;
    return still >= 100;
  }));
  EXPECT_LT(written.load(), (16 << 20) / kSize) << "the client was not held";
  service_.held.ForEach<CallbackEcho::Reader>([](auto* r) { r->Resume(); });
  client.join();
  ASSERT_TRUE(status.ok()) << status;
  EXPECT_EQ(resp.message(), std::to_string(kCount));
  EXPECT_EQ(written.load(), kCount);
}

// Blocking client writers held back by reactors that do not read, when the
// reactors Finish early: every Write returns (false once the status is in)
// and another call on the connection streams 8 MiB through. (32 writers of
// 2.5 MiB each stall the connection: more than its receive buffer limit of
// 16 MiB plus its 4 MiB window waits unread.) A Write that got its credit
// back from the finished call just before the call's status was recorded
// once waited for good: a few of the 32 did.
TEST_F(CallbackServerTest, EarlyFinishEndsBlockedClientWrites) {
  constexpr int kHogs = 32;
  constexpr int kSize = 64 << 10;
  constexpr int kHogMessages = 40;     // 2.5 MiB each: more than fits.
  constexpr int kProbeMessages = 128;  // 8 MiB.
  EchoRequest big;
  big.set_payload(std::string(kSize, 'h'));
  // Shared with the writers' threads, which are detached if one never
  // returns (a failure: they must not touch this frame then).
  struct Shared {
    std::atomic<int> written{0};
    std::atomic<int> aborted{0};
    std::atomic<int> returned{0};
  };
  auto shared = std::make_shared<Shared>();
  std::vector<std::thread> hogs;
  for (int i = 0; i < kHogs; ++i) {
    hogs.emplace_back([shared, big, stub = stub_.get()] {
      ClientContext ctx;
      WithDeadline(&ctx)->AddMetadata("x-no-read", "1");
      EchoResponse resp;
      auto writer = stub->ClientStream(&ctx, &resp);
      for (int m = 0; m < kHogMessages; ++m) {
        if (!writer->Write(big)) break;
        ++shared->written;
      }
      // No WritesDone: the client's side stays open.
      if (writer->Finish().error_code() == StatusCode::ABORTED) {
        ++shared->aborted;
      }
      ++shared->returned;
    });
  }
  const auto give_up = [&] {
    for (auto& t : hogs) t.detach();
  };
  if (!WaitFor([&] { return service_.held.size() == kHogs; })) {
    give_up();
    FAIL() << service_.held.size();
  }
  // The stream windows (1 MiB) let 32 MiB in, the connection only 20 MiB:
  // the writers run dry.
  if (!WaitFor([&] { return shared->written.load() >= (16 << 20) / kSize; })) {
    give_up();
    FAIL() << shared->written.load();
  }
  // The stall is complete once `written` stays put across a few round trips
  // on a connection of its own (the loops had turns meanwhile), however slow
  // the machine.
  auto other = EchoService::NewStub(CreateChannel(
      absl::StrCat("127.0.0.1:", port_), InsecureChannelCredentials()));
  int steady = 0;
  int last = -1;
  if (!WaitFor([&] {
        EchoResponse resp;
        ClientContext ctx;
        if (!other->Echo(WithDeadline(&ctx), EchoRequest(), &resp).ok()) {
          return false;
        }
        const int now = shared->written.load();
        steady = now == last ? steady + 1 : 0;
        last = now;
        return steady >= 3;
      })) {
    give_up();
    FAIL() << "the writers never settled: " << shared->written.load();
  }
  EXPECT_LT(shared->written.load(), kHogs * kHogMessages) << "nothing held";
  service_.held.ForEach<CallbackEcho::Reader>([](auto* r) {
    r->Finish(Status(StatusCode::ABORTED, "finished early"));
  });
  // A blocked Write returns (false) once the status is in: it once waited
  // for good when the status came just after it was given credit.
  if (!WaitFor([&] { return shared->returned.load() == kHogs; })) {
    give_up();
    FAIL() << (kHogs - shared->returned.load()) << " writers never returned";
  }
  for (auto& t : hogs) t.join();
  EXPECT_EQ(shared->aborted.load(), kHogs);

  ClientContext ctx;
  EchoResponse resp;
  auto writer = stub_->ClientStream(WithDeadline(&ctx), &resp);
  for (int m = 0; m < kProbeMessages; ++m) ASSERT_TRUE(writer->Write(big)) << m;
  ASSERT_TRUE(writer->WritesDone());
  Status s = writer->Finish();
  ASSERT_TRUE(s.ok()) << s;
  EXPECT_EQ(resp.message(), std::to_string(kProbeMessages));
  EXPECT_TRUE(WaitFor([&] { return service_.events.Dones() == kHogs + 1; }));
}

// Response headers over the client's header list limit, from Finish
// (unary) and from StartSendInitialMetadata (bidi): the call ends
// RESOURCE_EXHAUSTED, the reactor gets OnDone, the connection carries on.
TEST_F(CallbackServerTest, OversizedInitialMetadataEndsTheCall) {
  ClientContext warm;
  EchoResponse resp;
  ASSERT_TRUE(stub_->Echo(WithDeadline(&warm), EchoRequest(), &resp).ok());
  {
    ClientContext ctx;
    WithDeadline(&ctx)->AddMetadata("x-big-initial", "1");
    Status s = stub_->Echo(&ctx, EchoRequest(), &resp);
    EXPECT_EQ(s.error_code(), StatusCode::RESOURCE_EXHAUSTED) << s;
  }
  {
    ClientContext ctx;
    WithDeadline(&ctx)->AddMetadata("x-big-initial", "1");
    auto stream = stub_->Bidi(&ctx);
    while (stream->Read(&resp)) {
    }
    Status s = stream->Finish();
    EXPECT_EQ(s.error_code(), StatusCode::RESOURCE_EXHAUSTED) << s;
  }
  EXPECT_TRUE(WaitFor([&] { return service_.events.Dones() == 1; }));
  ClientContext after;
  EXPECT_TRUE(stub_->Echo(WithDeadline(&after), EchoRequest(), &resp).ok());
}

TEST_F(CallbackServerTest, MisuseEndsTheCallWithInternal) {
  struct Case {
    const char* misuse;
    StatusCode code;
    const char* message;
  };
  const Case cases[] = {
      {"write-twice", StatusCode::INTERNAL,
       "StartWrite before the previous OnWriteDone"},
      {"read-twice", StatusCode::INTERNAL,
       "StartRead before the previous OnReadDone"},
      {"initial-twice", StatusCode::INTERNAL,
       "StartSendInitialMetadata called twice"},
      // The second Finish is ignored: the first status went out.
      {"finish-twice", StatusCode::ABORTED, "first"},
      // A write after Finish fails (OnWriteDone(false)); the status stands.
      {"write-after-finish", StatusCode::ABORTED, "finished"},
  };
  int dones = 0;
  for (const Case& c : cases) {
    SCOPED_TRACE(c.misuse);
    ClientContext ctx;
    WithDeadline(&ctx)->AddMetadata("x-misuse", c.misuse);
    auto stream = stub_->Bidi(&ctx);
    EchoResponse resp;
    while (stream->Read(&resp)) {
    }
    Status s = stream->Finish();
    EXPECT_EQ(s.error_code(), c.code) << s;
    EXPECT_EQ(s.error_message(), c.message);
    ++dones;
    EXPECT_TRUE(WaitFor([&] { return service_.events.Dones() == dones; }));
  }
}

// A reaction of one call starting operations on another call of the same
// loop (the chat-room pattern: the speaker holds the room's lock while it
// writes to every member): the member's OnWriteDone and OnDone come after
// the speaker's reaction returned, never inside its StartWrite or Finish.
TEST_F(CallbackServerTest, StartOnAnotherCallNeverRunsItsReactionsInline) {
  ClientContext member_ctx;
  WithDeadline(&member_ctx)->AddMetadata("x-room", "member");
  auto member = stub_->Bidi(&member_ctx);
  ASSERT_TRUE(WaitFor([&] { return service_.room_member.load() != nullptr; }));
  ClientContext speaker_ctx;
  WithDeadline(&speaker_ctx)->AddMetadata("x-room", "speaker");
  auto speaker = stub_->Bidi(&speaker_ctx);
  EchoRequest req;
  req.set_message("hello");
  ASSERT_TRUE(speaker->Write(req));
  EchoResponse resp;
  ASSERT_TRUE(member->Read(&resp));
  EXPECT_EQ(resp.message(), "hello");
  EXPECT_FALSE(member->Read(&resp));
  EXPECT_TRUE(member->Finish().ok());
  EXPECT_FALSE(speaker->Read(&resp));
  EXPECT_TRUE(speaker->Finish().ok());
  EXPECT_TRUE(WaitFor([&] { return service_.events.Dones() == 2; }));
  EXPECT_EQ(service_.events.writes_ok.load(), 1);
  EXPECT_EQ(service_.reactions_inside_start.load(), 0);
}

// Every misused operation gets its reaction, however many (300 StartWrite
// in a row: 299 of them before the previous OnWriteDone).
TEST_F(CallbackServerTest, EveryMisusedWriteGetsItsReaction) {
  ClientContext ctx;
  WithDeadline(&ctx)->AddMetadata("x-misuse", "write-300");
  auto stream = stub_->Bidi(&ctx);
  EchoResponse resp;
  while (stream->Read(&resp)) {
  }
  EXPECT_EQ(stream->Finish().error_code(), StatusCode::INTERNAL);
  ASSERT_TRUE(WaitFor([&] { return service_.events.Dones() == 1; }));
  EXPECT_GE(service_.events.writes_failed.load(), 299);
  EXPECT_EQ(
      service_.events.writes_ok.load() + service_.events.writes_failed.load(),
      300);
}

}  // namespace
}  // namespace rpc
