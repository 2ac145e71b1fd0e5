#include "rpc/internal/call_core.h"

#include <algorithm>
#include <atomic>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/cleanup/cleanup.h"
#include "absl/synchronization/notification.h"
#include "absl/time/time.h"
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

// A reader that is behind does not let queued messages pin the connection's
// read blocks: 1-octet messages each cut from a 32 KiB block of its own (as
// a peer spacing them out with other frames makes them), pushed with no
// reader. The first kMaxZeroCopyQueued stay zero-copy (their blocks are
// shared with the reader's slices); every later one is copied at once, so
// its block is released (the test holds the only reference). All arrive in
// order. Before the fix every block stayed pinned until read.
TEST(CallCoreTest, QueuedMessagesBeyondTheFirstFewReleaseTheirReadBlocks) {
  constexpr size_t kMessages = 1000;
  constexpr size_t kZeroCopy = CallCore::kMaxZeroCopyQueued;
  CallCore core(1 << 20, 1 << 20);
  std::vector<Slice> blocks;
  for (size_t i = 0; i < kMessages; ++i) {
    blocks.push_back(Slice::Copy(std::string(32 << 10, 'a' + i % 26)));
    SliceBuffer message;
    message.Append(blocks.back().Sub(i % 100, 1));
    core.PushMessage(std::move(message));
  }
  EXPECT_EQ(core.zero_copy_queued(), kZeroCopy);
  EXPECT_EQ(core.packed_queued(), kMessages - kZeroCopy);
  for (size_t i = 0; i < kMessages; ++i) {
    EXPECT_EQ(blocks[i].block_refs(), i < kZeroCopy ? 2u : 1u) << i;
  }
  for (size_t i = 0; i < kMessages; ++i) {
    SliceBuffer out;
    size_t consume = 0;
    ASSERT_EQ(core.Read(&out, &consume), CallCore::ReadResult::kMessage);
    ASSERT_EQ(out.ToString(), std::string(1, 'a' + i % 26)) << i;
    if (i < kZeroCopy) {
      EXPECT_TRUE(out.front().SharesBlockWith(blocks[i]));
    }
  }
  for (const Slice& block : blocks) EXPECT_EQ(block.block_refs(), 1u);
}

// A message cut into many tiny pieces (each could pin a block) is copied
// even when nothing waits; one framed as DATA frames are is not.
TEST(CallCoreTest, MessageInTooManyPiecesIsCopied) {
  CallCore core(1 << 20, 1 << 20);
  std::vector<Slice> blocks;
  SliceBuffer fine;
  for (int i = 0; i < 10; ++i) {
    blocks.push_back(Slice::Copy(std::string(1000, 'x')));
    fine.Append(blocks.back().Sub(0, 1));
  }
  core.PushMessage(std::move(fine));
  EXPECT_EQ(core.packed_queued(), 1u);
  for (const Slice& block : blocks) EXPECT_EQ(block.block_refs(), 1u);
  SliceBuffer out;
  size_t consume = 0;
  ASSERT_EQ(core.Read(&out, &consume), CallCore::ReadResult::kMessage);
  EXPECT_EQ(out.ToString(), std::string(10, 'x'));

  const Slice big = Slice::Copy(std::string(64 << 10, 'y'));
  SliceBuffer framed;
  for (size_t at = 0; at < big.size(); at += 16 << 10) {
    framed.Append(big.Sub(at, 16 << 10));
  }
  core.PushMessage(std::move(framed));
  EXPECT_EQ(core.zero_copy_queued(), 1u);
  ASSERT_EQ(core.Read(&out, &consume), CallCore::ReadResult::kMessage);
  EXPECT_TRUE(out.front().SharesBlockWith(big));
}

// Every message is charged its octets + kMessageCharge, zero-copy or packed:
// DATA octets are owed once the charges reach read_bound and handed back
// once the reader read the queue down to half of it.
TEST(CallCoreTest, PackedMessagesAreChargedLikeZeroCopyOnes) {
  constexpr size_t kSize = 92;  // charged 100 each
  CallCore core(/*read_bound=*/2000, 1 << 20);
  for (int i = 0; i < 20; ++i) {
    EXPECT_EQ(core.OnDataBytes(kSize + 5), kSize + 5) << i;
    SliceBuffer m;
    m.Append(std::string(kSize, 'm'));
    core.PushMessage(std::move(m));
  }
  EXPECT_EQ(core.packed_queued(), 20u - CallCore::kMaxZeroCopyQueued);
  EXPECT_EQ(core.OnDataBytes(97), 0u);  // 2000 charged: owed
  size_t handed_back = 0;
  for (int i = 0; i < 20; ++i) {
    SliceBuffer out;
    size_t consume = 0;
    ASSERT_EQ(core.Read(&out, &consume), CallCore::ReadResult::kMessage);
    EXPECT_EQ(out.size(), kSize);
    // 2000 - 100 * (i + 1) <= 1000 first at the 10th read.
    EXPECT_EQ(consume, i == 9 ? 97u : 0u) << i;
    handed_back += consume;
  }
  EXPECT_EQ(handed_back, 97u);
  EXPECT_EQ(core.OnDataBytes(5), 5u);  // nothing charged any more
}

// After a burst drains, the queue keeps at most a couple of slots (it used
// to keep its peak capacity for the rest of the call).
TEST(CallCoreTest, DrainedBurstReleasesTheQueue) {
  CallCore core(1 << 20, 1 << 20);
  for (int i = 0; i < 500; ++i) {
    SliceBuffer m;
    m.Append(std::to_string(i));
    core.PushMessage(std::move(m));
  }
  EXPECT_GE(core.queue_slots(), 500u);
  for (int i = 0; i < 500; ++i) {
    SliceBuffer out;
    size_t consume = 0;
    ASSERT_EQ(core.Read(&out, &consume), CallCore::ReadResult::kMessage);
    ASSERT_EQ(out.ToString(), std::to_string(i));
  }
  EXPECT_LE(core.queue_slots(), 2u);
}

// CloseWrites (the call has its status) ends a writer waiting for credit
// (false), and every later AcquireWriteCredit fails at once, even with
// nothing in flight: no credit comes back to a finished call, so a writer let
// through would wait for good.
TEST(CallCoreTest, CloseWritesEndsAWaitingWriterAndLaterAcquires) {
  CallCore core(1 << 20, /*write_bound=*/100);
  ASSERT_TRUE(core.AcquireWriteCredit(150));  // Now over the bound.
  std::atomic<bool> acquired{true};
  absl::Notification returned;
  std::thread writer([&] {
    acquired = core.AcquireWriteCredit(10);  // Waits: nothing releases.
    returned.Notify();
  });
  // Past a failure the writer is let go (Cancel wakes it) and joined.
  absl::Cleanup join_writer = [&] {
    core.Cancel();
    writer.join();
  };
  core.CloseWrites();
  ASSERT_TRUE(returned.WaitForNotificationWithTimeout(absl::Seconds(60)))
      << "the waiting writer was not woken";
  EXPECT_FALSE(acquired.load());
  EXPECT_FALSE(core.AcquireWriteCredit(1));
  EXPECT_FALSE(core.HasWriteCredit());
}

}  // namespace
}  // namespace internal
}  // namespace rpc
