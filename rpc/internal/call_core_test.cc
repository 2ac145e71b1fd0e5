#include "rpc/internal/call_core.h"

#include <algorithm>
#include <string>
#include <thread>
#include <utility>

#include "gtest/gtest.h"
#include "transport/slice/slice.h"

namespace rpc {
namespace internal {
namespace {

using transport::Slice;
using transport::SliceBuffer;

// The message the reader gets is the slices the loop pushed, sharing the
// read block: no copy crosses the thread (it used to be copied into a block
// of its own because Slice counts were not atomic).
TEST(CallCoreTest, MessageReachesTheReaderWithoutACopy) {
  CallCore core(1 << 20, 1 << 20);
  const Slice read_block = Slice::Copy(std::string(1000, 'x'));
  SliceBuffer payload;
  payload.Append(read_block.Sub(10, 100));
  payload.Append(read_block.Sub(200, 50));
  core.PushMessage(std::move(payload));
  SliceBuffer out;
  size_t consume = 0;
  ASSERT_EQ(core.Read(&out, &consume), CallCore::ReadResult::kMessage);
  EXPECT_EQ(out.size(), 150u);
  ASSERT_EQ(out.num_slices(), 2u);
  EXPECT_TRUE(out.slice(0).SharesBlockWith(read_block));
  EXPECT_EQ(out.slice(0).data(), read_block.data() + 10);
  EXPECT_EQ(out.slice(1).data(), read_block.data() + 200);
}

// The queue is FIFO through partial drains (its husks are dropped lazily).
TEST(CallCoreTest, MessagesComeInOrderThroughPartialDrains) {
  CallCore core(1 << 20, 1 << 20);
  int pushed = 0;
  int read = 0;
  auto read_one = [&] {
    SliceBuffer out;
    size_t consume = 0;
    ASSERT_EQ(core.Read(&out, &consume), CallCore::ReadResult::kMessage);
    EXPECT_EQ(out.ToString(), std::to_string(read++));
  };
  for (int round = 0; round < 5; ++round) {
    for (int i = 0; i < 40; ++i) {
      SliceBuffer m;
      m.Append(std::to_string(pushed++));
      core.PushMessage(std::move(m));
    }
    for (int i = 0; i < 25; ++i) read_one();
  }
  while (read < pushed) read_one();
  core.PushEnd();
  SliceBuffer out;
  size_t consume = 0;
  EXPECT_EQ(core.Read(&out, &consume), CallCore::ReadResult::kEnd);
}

// The loop reads into one buffer, cuts messages from it (slices of the read
// block, which it goes on filling and slicing) and pushes them; a handler
// thread reads, checks and releases them. Bounded by the message count; ASan
// reports a block freed early or twice.
TEST(CallCoreTest, MessagesReleasedByTheReaderWhileTheLoopReusesTheBlock) {
  constexpr int kMessages = 20000;
  CallCore core(1 << 20, 1 << 20);
  auto content = [](int i, size_t k) {
    return static_cast<char>('a' + (i * 5 + static_cast<int>(k)) % 26);
  };
  auto length = [](int i) { return static_cast<size_t>(1 + (i * 53) % 400); };
  int checked = 0;
  std::thread handler([&] {
    for (int i = 0;; ++i) {
      SliceBuffer message;
      size_t consume = 0;
      if (core.Read(&message, &consume) != CallCore::ReadResult::kMessage) {
        return;
      }
      const std::string got = message.ToString();
      bool ok = got.size() == length(i);
      for (size_t k = 0; ok && k < got.size(); ++k) {
        ok = got[k] == content(i, k);
      }
      if (ok) ++checked;
    }
  });
  SliceBuffer read;
  Slice kept;  // the loop's own slice of the block it reads into
  for (int i = 0; i < kMessages; ++i) {
    const size_t n = length(i);
    for (size_t filled = 0; filled < n;) {
      size_t available = 0;
      uint8_t* p = read.PrepareAppend(1, &available);
      const size_t k = std::min(available, n - filled);
      for (size_t j = 0; j < k; ++j) p[j] = content(i, filled + j);
      read.CommitAppend(k);
      filled += k;
    }
    SliceBuffer message;
    read.MoveFrontTo(n, &message);
    kept = message.front().Sub(0, 1);
    core.PushMessage(std::move(message));
  }
  core.PushEnd();
  handler.join();
  EXPECT_EQ(checked, kMessages);
}

}  // namespace
}  // namespace internal
}  // namespace rpc
