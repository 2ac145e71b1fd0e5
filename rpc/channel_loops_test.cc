// Channels on loops: a thousand channels share the process-wide group, a
// user's LoopGroup, a destroyed channel leaves nothing on a shared loop, a
// fork child gets loops of its own (also when another thread held the
// group's lock at the fork), first callers racing get one group, busy-poll
// channels. Every wait is bounded.

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/notification.h"
#include "absl/time/clock.h"
#include "gtest/gtest.h"
#include "rpc/internal/channel_impl.h"
#include "rpc/rpc.h"
#include "rpc/testdata/test_service.rpc.pb.h"
#include "rpc/testing/channel_testing.h"
#include "transport/testing/subprocess.h"
#include "transport/testing/thread_probe.h"
#include "transport/testing/wait_until.h"

namespace rpc {
namespace {

using channel_testing::AsyncEcho;
using channel_testing::Backend;
using channel_testing::Call;
using channel_testing::NamedService;
using channel_testing::StartBackend;
using test::EchoService;
using transport::testing::WaitForChild;
using transport::testing::WaitUntil;

using transport::testing::ThreadCount;

TEST(ChannelLoopsTest, AThousandChannelsShareTheLoops) {
  if (ThreadCount() < 0) GTEST_SKIP() << "/proc/self/task cannot be listed";
  int port = 0;
  Backend b = StartBackend("s", "127.0.0.1:0", &port);
  ASSERT_NE(b.server, nullptr);
  const std::string target = absl::StrCat("127.0.0.1:", port);
  // The process-wide group (and the server's workers) exist after one call.
  {
    auto channel = CreateChannel(target, InsecureChannelCredentials());
    auto stub = EchoService::NewStub(channel);
    ASSERT_TRUE(Call(stub.get(), false, absl::Seconds(10)).ok());
  }
  const int before = ThreadCount();
  std::vector<std::shared_ptr<Channel>> channels;
  for (int i = 0; i < 1000; ++i) {
    channels.push_back(CreateChannel(target, InsecureChannelCredentials()));
    if (i % 100 == 0) {
      auto stub = EchoService::NewStub(channels.back());
      ASSERT_TRUE(Call(stub.get(), false, absl::Seconds(10)).ok()) << i;
    }
  }
  // Was one thread per channel; the slack is for the server's worker pool.
  EXPECT_LE(ThreadCount(), before + 2);
  channels.clear();
  b.server->Shutdown(absl::Now());
}

// A backend, a group of one loop, and arguments that put channels on it.
struct OneLoop {
  Backend b;
  std::string target;
  std::shared_ptr<LoopGroup> group;
  ChannelArguments args;
};
void StartOneLoop(OneLoop* s) {
  int port = 0;
  s->b = StartBackend("s", "127.0.0.1:0", &port);
  ASSERT_NE(s->b.server, nullptr);
  s->target = absl::StrCat("127.0.0.1:", port);
  absl::StatusOr<std::shared_ptr<LoopGroup>> created = LoopGroup::Create(1);
  ASSERT_TRUE(created.ok()) << created.status();
  ASSERT_EQ((*created)->size(), 1u);
  s->group = *std::move(created);
  s->args.SetLoopGroup(s->group);
}

TEST(ChannelLoopsTest, ChannelsOfAUserGroupRunOnItsLoops) {
  if (ThreadCount() < 0) GTEST_SKIP() << "/proc/self/task cannot be listed";
  OneLoop s;
  ASSERT_NO_FATAL_FAILURE(StartOneLoop(&s));
  const int before = ThreadCount();
  std::vector<std::shared_ptr<Channel>> channels;
  for (int i = 0; i < 20; ++i) {
    channels.push_back(
        CreateCustomChannel(s.target, InsecureChannelCredentials(), s.args));
    auto stub = EchoService::NewStub(channels.back());
    ASSERT_TRUE(Call(stub.get(), false, absl::Seconds(10)).ok()) << i;
  }
  EXPECT_LE(ThreadCount(), before + 2);  // The server's workers' slack.
  // The channels keep the group: dropping ours first is fine.
  s.group.reset();
  s.args.SetLoopGroup(nullptr);
  for (auto& channel : channels) {
    auto stub = EchoService::NewStub(channel);
    ASSERT_TRUE(Call(stub.get(), false, absl::Seconds(10)).ok());
  }
  channels.clear();
  s.b.server->Shutdown(absl::Now());
}

TEST(ChannelLoopsTest, ADestroyedChannelLeavesNothingOnTheSharedLoop) {
  // Two channels on one loop. The first is destroyed with async calls in
  // flight (a slow handler) and with calls whose deadline timers are armed:
  // they fail with "channel closed", and nothing of that channel runs later
  // while the loop goes on serving the second (ASan would see it).
  OneLoop s;
  ASSERT_NO_FATAL_FAILURE(StartOneLoop(&s));
  auto survivor =
      CreateCustomChannel(s.target, InsecureChannelCredentials(), s.args);
  auto survivor_stub = EchoService::NewStub(survivor);
  ASSERT_TRUE(Call(survivor_stub.get(), false, absl::Seconds(10)).ok());
  for (int round = 0; round < 5; ++round) {
    auto doomed =
        CreateCustomChannel(s.target, InsecureChannelCredentials(), s.args);
    auto stub = EchoService::NewStub(doomed);
    ASSERT_TRUE(Call(stub.get(), false, absl::Seconds(10)).ok());
    std::vector<std::unique_ptr<AsyncEcho>> calls;
    for (int i = 0; i < 8; ++i) {
      calls.push_back(std::make_unique<AsyncEcho>());
      AsyncEcho* c = calls.back().get();
      c->ctx.set_deadline(absl::Now() + absl::Milliseconds(200 + 50 * i));
      c->req.set_sleep_ms(100);
      stub->async()->Echo(&c->ctx, &c->req, &c->resp, [c](Status status) {
        c->status = std::move(status);
        c->done.Notify();
      });
    }
    stub.reset();
    doomed.reset();  // Blocks until it is closed.
    for (auto& c : calls) {
      ASSERT_TRUE(c->done.WaitForNotificationWithTimeout(absl::Seconds(10)));
      // Done before the destruction, or failed by it.
      if (!c->status.ok()) {
        EXPECT_EQ(c->status.error_code(), StatusCode::UNAVAILABLE)
            << c->status.error_message();
      }
    }
  }
  // Past every deadline of the destroyed channels' calls: the shared loop
  // still serves the survivor.
  for (int i = 0; i < 20; ++i) {
    ASSERT_TRUE(Call(survivor_stub.get(), false, absl::Seconds(10)).ok());
    absl::SleepFor(absl::Milliseconds(30));
  }
  s.b.server->Shutdown(absl::Now());
}

// A call on a new channel (the process-wide group) to a new backend.
bool CallANewBackend() {
  int port = 0;
  Backend b = StartBackend("s", "127.0.0.1:0", &port);
  if (b.server == nullptr) return false;
  auto stub = EchoService::NewStub(CreateChannel(
      absl::StrCat("127.0.0.1:", port), InsecureChannelCredentials()));
  const bool ok = Call(stub.get(), false, absl::Seconds(10)).ok();
  b.server->Shutdown(absl::Now());
  return ok;
}

TEST(ChannelLoopsTest, AChildOfForkGetsLoopsOfItsOwn) {
  // fork() copies the process-wide group but not its threads: a child's
  // channel on that copy would wait forever for a loop nobody runs.
  ASSERT_TRUE(CallANewBackend());  // The group exists, its threads run.
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  // A server and a channel made in the child; only the exit code counts.
  if (child == 0) _exit(CallANewBackend() ? 0 : 1);
  // Generous: only a hang (the bug) reaches it.
  EXPECT_EQ(WaitForChild(child, absl::Seconds(30)), 0) << "-1: the call hung";
}

// fork() while another thread holds the process-wide group's lock: the
// child gets it free (the fork handlers), so its first channel does not
// wait forever for an owner that does not exist there. Bounded stress: the
// other thread takes the lock about half of its time, so without the
// handlers most children hang.
TEST(ChannelLoopsTest, AForkWhileAnotherThreadTakesTheGroupLockLeavesItFree) {
  ASSERT_TRUE(internal::DefaultLoopGroup().ok());
  std::atomic<bool> stop{false};
  std::atomic<int> taken{0};
  std::thread hammer([&] {
    while (!stop.load(std::memory_order_relaxed)) {
      if (internal::DefaultLoopGroup().ok()) ++taken;
    }
  });
  // (No ASSERT before the join: failures ADD_FAILURE and break.)
  constexpr int kForks = 20;
  for (int i = 0; i < kForks; ++i) {
    const int before = taken.load();
    // The other thread is in its loop (the lock taken and released since).
    if (!WaitUntil([&] { return taken.load() > before + 10; })) {
      ADD_FAILURE() << "the other thread does not run";
      break;
    }
    const pid_t child = fork();
    if (child < 0) {
      ADD_FAILURE() << "fork: " << errno;
      break;
    }
    if (child == 0) {
      // A channel: it takes the lock to make the child its own group.
      auto channel = CreateChannel("127.0.0.1:1", InsecureChannelCredentials());
      _exit(channel != nullptr && internal::DefaultLoopGroup().ok() ? 0 : 1);
    }
    const int code = WaitForChild(child, absl::Seconds(10));
    if (code != 0) {
      // -1: hung on the lock (17 of 20 children before the fork handlers).
      ADD_FAILURE() << "fork " << i << ": the child ended with " << code;
      break;
    }
  }
  stop = true;
  hammer.join();
}

// The group is made outside its lock (the fork handlers wait for it), so
// first callers may race to make it: they all get the one kept, and the
// others' threads are gone when they return. In a child, whose first call
// makes the group.
TEST(ChannelLoopsTest, FirstCallersRacingGetOneGroup) {
  if (ThreadCount() < 0) GTEST_SKIP() << "/proc/self/task cannot be listed";
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    constexpr int kCallers = 8;
    std::atomic<bool> go{false};
    std::vector<std::shared_ptr<LoopGroup>> got(kCallers);
    std::vector<std::thread> callers;
    for (int i = 0; i < kCallers; ++i) {
      callers.emplace_back([&, i] {
        while (!go.load()) std::this_thread::yield();
        absl::StatusOr<std::shared_ptr<LoopGroup>> g =
            internal::DefaultLoopGroup();
        if (g.ok()) got[i] = *std::move(g);
      });
    }
    go = true;
    for (std::thread& t : callers) t.join();
    for (const std::shared_ptr<LoopGroup>& g : got) {
      if (g == nullptr || g != got[0]) _exit(1);
    }
    // This thread and the kept group's loops.
    const int loops =
        static_cast<int>(internal::LoopGroupAccess::Group(*got[0]).size());
    _exit(ThreadCount() == 1 + loops ? 0 : 2);
  }
  // 1: two callers got different groups (or an error); 2: a group not kept
  // still has threads.
  EXPECT_EQ(WaitForChild(child, absl::Seconds(30)), 0);
}

using transport::testing::ProcessCpu;

TEST(ChannelLoopsTest, BusyPollChannelAndServerWorkAndSleepWhenIdle) {
  if (ThreadCount() < 0) GTEST_SKIP() << "/proc/self/task cannot be listed";
  ChannelArguments args;
  ASSERT_TRUE(args.SetInt("h2rpc.busy_poll_us", 2000));
  EXPECT_EQ(args.busy_poll, absl::Milliseconds(2));
  EXPECT_FALSE(args.SetInt("h2rpc.busy_poll_us", -1));
  NamedService service("s");
  int port = 0;
  std::unique_ptr<Server> server =
      ServerBuilder()
          .AddListeningPort("127.0.0.1:0", InsecureServerCredentials(), &port)
          .RegisterService(&service)
          .AddChannelArgument("h2rpc.busy_poll_us", 2000)
          .BuildAndStart();
  ASSERT_NE(server, nullptr);
  ASSERT_GT(port, 0);
  // A busy-poll channel runs on a loop thread of its own.
  const int before = ThreadCount();
  auto channel = CreateCustomChannel(absl::StrCat("127.0.0.1:", port),
                                     InsecureChannelCredentials(), args);
  EXPECT_EQ(ThreadCount(), before + 1);
  auto stub = EchoService::NewStub(channel);
  for (int i = 0; i < 200; ++i) {
    ASSERT_TRUE(Call(stub.get(), false, absl::Seconds(10)).ok()) << i;
  }
  // Idle: both loops spin at most 2 ms after their last work, then sleep.
  // Generous bound: loops that kept spinning would use about the whole
  // interval each (less on a loaded machine, hence its length).
  absl::SleepFor(absl::Milliseconds(50));
  const absl::Duration cpu_before = ProcessCpu();
  absl::SleepFor(absl::Milliseconds(500));
  EXPECT_LT(ProcessCpu() - cpu_before, absl::Milliseconds(100))
      << "CPU burnt while idle";
  // And they wake for the next call.
  ASSERT_TRUE(Call(stub.get(), false, absl::Seconds(10)).ok());
  channel.reset();
  server->Shutdown(absl::Now());
}

}  // namespace
}  // namespace rpc
