#include "transport/slice/slice.h"

#include <algorithm>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <mutex>
#include <random>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "gtest/gtest.h"

namespace transport {
namespace {

TEST(SliceTest, EmptyByDefault) {
  Slice s;
  EXPECT_TRUE(s.empty());
  EXPECT_EQ(s.size(), 0u);
  EXPECT_EQ(s.view(), "");
  EXPECT_EQ(s.block_refs(), 0u);
}

TEST(SliceTest, CopyOwnsItsBytes) {
  std::string text = "hello";
  Slice s = Slice::Copy(text);
  text[0] = 'j';
  EXPECT_EQ(s.view(), "hello");
  EXPECT_EQ(s.block_refs(), 1u);
  EXPECT_TRUE(Slice::Copy("").empty());
}

TEST(SliceTest, CopyingBumpsTheCountAndSharesBytes) {
  Slice a = Slice::Copy("abcdef");
  {
    Slice b = a;
    EXPECT_EQ(a.block_refs(), 2u);
    EXPECT_EQ(b.data(), a.data());
    Slice c = b.Sub(2, 3);
    EXPECT_EQ(c.view(), "cde");
    EXPECT_EQ(c.data(), a.data() + 2);
    EXPECT_TRUE(c.SharesBlockWith(a));
    EXPECT_EQ(a.block_refs(), 3u);
  }
  EXPECT_EQ(a.block_refs(), 1u);
}

TEST(SliceTest, MoveLeavesEmpty) {
  Slice a = Slice::Copy("abc");
  Slice b = std::move(a);
  EXPECT_TRUE(a.empty());  // NOLINT(bugprone-use-after-move): documented state.
  EXPECT_EQ(b.view(), "abc");
  EXPECT_EQ(b.block_refs(), 1u);
  a = std::move(b);
  EXPECT_EQ(a.view(), "abc");
  Slice& alias = a;
  a = alias;  // Self-assignment keeps it.
  EXPECT_EQ(a.view(), "abc");
  EXPECT_EQ(a.block_refs(), 1u);
}

TEST(SliceTest, RemovePrefixAndSuffix) {
  Slice s = Slice::Copy("0123456789");
  s.RemovePrefix(2);
  s.RemoveSuffix(3);
  EXPECT_EQ(s.view(), "23456");
  EXPECT_EQ(s[0], '2');
}

TEST(SliceTest, StaticHasNoBlock) {
  static const char kText[] = "static";
  Slice s = Slice::FromStatic(kText);
  EXPECT_EQ(s.data(), reinterpret_cast<const uint8_t*>(kText));
  EXPECT_EQ(s.block_refs(), 0u);
  Slice t = s.Sub(1, 2);
  EXPECT_EQ(t.view(), "ta");
}

TEST(SliceTest, EqualityIsByContent) {
  EXPECT_EQ(Slice::Copy("ab"), Slice::FromStatic("ab"));
  EXPECT_NE(Slice::Copy("ab"), Slice::Copy("abc"));
}

TEST(SliceBufferTest, AppendBytesFillsOneBlock) {
  SliceBuffer b;
  b.Append("abc");
  b.Append("def");
  EXPECT_EQ(b.size(), 6u);
  EXPECT_EQ(b.num_slices(), 1u);  // The second append extended the first slice.
  EXPECT_EQ(b.ToString(), "abcdef");
  EXPECT_NE(b.ContiguousPrefix(6), nullptr);
  EXPECT_EQ(b.ContiguousPrefix(7), nullptr);
}

TEST(SliceBufferTest, AppendBytesSpillsIntoNewBlocks) {
  SliceBuffer b;
  const std::string big(3 * SliceBuffer::kDefaultBlockSize, 'x');
  b.Append("head");
  b.Append(big);
  EXPECT_EQ(b.size(), big.size() + 4);
  EXPECT_EQ(b.ToString(), "head" + big);
  EXPECT_GE(b.num_slices(), 2u);
}

TEST(SliceBufferTest, AppendSliceDoesNotCopy) {
  const Slice payload = Slice::Copy(std::string(1000, 'p'));
  SliceBuffer b;
  b.Append("hdr");
  b.Append(payload);
  b.Append("tail");
  ASSERT_EQ(b.num_slices(), 3u);
  EXPECT_EQ(b.slice(1).data(), payload.data());
  EXPECT_EQ(payload.block_refs(), 2u);
  // "tail" went into the block "hdr" is in, as a new slice after the payload.
  EXPECT_TRUE(b.slice(2).SharesBlockWith(b.slice(0)));
  EXPECT_EQ(b.slice(2).data(), b.slice(0).data() + 3);
  b.Append(Slice());
  EXPECT_EQ(b.num_slices(), 3u);
}

TEST(SliceBufferTest, AppendNeverWritesBelowAnotherSlicesEnd) {
  SliceBuffer a;
  a.Append("shared");
  SliceBuffer b = a;  // Shares the block; "shared" is below its fill mark.
  a.Append("A");
  b.Append("B");
  EXPECT_EQ(a.ToString(), "sharedA");
  EXPECT_EQ(b.ToString(), "sharedB");
}

TEST(SliceBufferTest, AppendUninitializedIsContiguous) {
  SliceBuffer b;
  b.Append(std::string(SliceBuffer::kDefaultBlockSize - 40, 'a'));
  uint8_t* p =
      b.AppendUninitialized(100);  // Does not fit the rest of the block.
  std::memset(p, 'b', 100);
  EXPECT_EQ(b.size(), SliceBuffer::kDefaultBlockSize - 40 + 100);
  EXPECT_EQ(b.ToString(),
            std::string(SliceBuffer::kDefaultBlockSize - 40, 'a') +
                std::string(100, 'b'));
  EXPECT_EQ(b.slice(b.num_slices() - 1).size(), 100u);
}

TEST(SliceBufferTest, AppendUninitializedExactTakesAnExactBlock) {
  SliceBuffer b;
  uint8_t* p = b.AppendUninitializedExact(10);
  std::memset(p, 'a', 10);
  // The block is full: the next append starts a new one (a new slice), where
  // AppendUninitialized's default-sized block would have been extended.
  b.Append("b");
  EXPECT_EQ(b.num_slices(), 2u);
  EXPECT_EQ(b.ToString(), std::string(10, 'a') + "b");
  // With room left in the current block, that room is used.
  p = b.AppendUninitializedExact(3);
  std::memset(p, 'c', 3);
  EXPECT_EQ(b.num_slices(), 2u);
  EXPECT_EQ(b.ToString(), std::string(10, 'a') + "bccc");
  EXPECT_EQ(b.AppendUninitializedExact(0), nullptr);
  EXPECT_EQ(b.size(), 14u);

  SliceBuffer d;
  std::memset(d.AppendUninitialized(10), 'a', 10);
  d.Append("b");
  EXPECT_EQ(d.num_slices(), 1u);
}

TEST(SliceBufferTest, PrepareAndCommitAppend) {
  SliceBuffer b;
  size_t available = 0;
  uint8_t* p = b.PrepareAppend(10, &available);
  EXPECT_GE(available, 10u);
  std::memcpy(p, "0123456789", 10);
  b.CommitAppend(4);
  EXPECT_EQ(b.ToString(), "0123");
  p = b.PrepareAppend(1, &available);
  std::memcpy(p, "xy", 2);
  b.CommitAppend(2);
  EXPECT_EQ(b.ToString(), "0123xy");
  EXPECT_EQ(b.num_slices(), 1u);
  // Reading more into the same block after the first bytes were handed on.
  const Slice first = b.front();
  b.TrimFront(b.size());
  p = b.PrepareAppend(1, &available);
  std::memcpy(p, "z", 1);
  b.CommitAppend(1);
  EXPECT_TRUE(b.front().SharesBlockWith(first));
  EXPECT_EQ(first.view(), "0123xy");
  EXPECT_EQ(b.ToString(), "z");
}

TEST(SliceBufferTest, TrimFrontAcrossSlices) {
  SliceBuffer b;
  b.Append(Slice::Copy("abc"));
  b.Append(Slice::Copy("defg"));
  b.Append(Slice::Copy("hi"));
  b.TrimFront(4);
  EXPECT_EQ(b.ToString(), "efghi");
  EXPECT_EQ(b.num_slices(), 2u);
  b.TrimFront(3);
  EXPECT_EQ(b.ToString(), "hi");
  b.TrimFront(2);
  EXPECT_TRUE(b.empty());
  EXPECT_EQ(b.num_slices(), 0u);
}

TEST(SliceBufferTest, MoveFrontToSplitsWithoutCopy) {
  SliceBuffer b;
  const Slice x = Slice::Copy("0123456789");
  b.Append(x);
  b.Append(Slice::Copy("abc"));
  SliceBuffer dest;
  b.MoveFrontTo(4, &dest);
  EXPECT_EQ(dest.ToString(), "0123");
  EXPECT_EQ(dest.front().data(), x.data());
  EXPECT_EQ(b.ToString(), "456789abc");
  b.MoveFrontTo(9, &dest);
  EXPECT_TRUE(b.empty());
  EXPECT_EQ(dest.ToString(), "0123456789abc");
}

TEST(SliceBufferTest, PopFront) {
  SliceBuffer b;
  b.Append(Slice::Copy("ab"));
  b.Append(Slice::Copy("cd"));
  EXPECT_EQ(b.PopFront().view(), "ab");
  EXPECT_EQ(b.size(), 2u);
  EXPECT_EQ(b.PopFront().view(), "cd");
  EXPECT_TRUE(b.empty());
}

TEST(SliceBufferTest, CopyToWithOffset) {
  SliceBuffer b;
  b.Append(Slice::Copy("abc"));
  b.Append(Slice::Copy("def"));
  char out[4] = {};
  b.CopyTo(out, 4, 1);
  EXPECT_EQ(std::string(out, 4), "bcde");
  EXPECT_EQ(b.CopyToNewBlock().view(), "abcdef");
}

TEST(SliceBufferTest, AppendBuffers) {
  SliceBuffer a;
  a.Append(Slice::Copy("12"));
  SliceBuffer b;
  b.Append(Slice::Copy("34"));
  a.Append(b);
  EXPECT_EQ(a.ToString(), "1234");
  EXPECT_EQ(b.ToString(), "34");
  a.Append(std::move(b));
  EXPECT_EQ(a.ToString(), "123434");
  SliceBuffer empty;
  empty.Append(std::move(a));
  EXPECT_EQ(empty.ToString(), "123434");
  empty.Append(empty);
  EXPECT_EQ(empty.ToString(), "123434123434");
}

TEST(SliceBufferTest, EqualityIgnoresPieceBoundaries) {
  SliceBuffer a;
  a.Append(Slice::Copy("ab"));
  a.Append(Slice::Copy("cdef"));
  SliceBuffer b;
  b.Append(Slice::Copy("abcd"));
  b.Append(Slice::Copy("ef"));
  EXPECT_EQ(a, b);
  b.Append("x");
  EXPECT_NE(a, b);
}

TEST(SliceBufferTest, ManyTrimsCompact) {
  SliceBuffer b;
  std::string expect;
  for (int i = 0; i < 1000; ++i) {
    const std::string piece = std::to_string(i);
    b.Append(Slice::Copy(piece));
    expect += piece;
    if (i % 3 == 2) {
      b.TrimFront(2);
      expect.erase(0, 2);
    }
  }
  EXPECT_EQ(b.ToString(), expect);
  EXPECT_EQ(b.size(), expect.size());
}

// Random operations against a std::string model.
TEST(SliceBufferTest, RandomOperationsMatchModel) {
  std::mt19937 rng(7);
  SliceBuffer b;
  std::string model;
  for (int step = 0; step < 5000; ++step) {
    switch (rng() % 6) {
      case 0: {
        const std::string s(rng() % 300, static_cast<char>('a' + rng() % 26));
        b.Append(s);
        model += s;
        break;
      }
      case 1: {
        const std::string s(rng() % 50, static_cast<char>('A' + rng() % 26));
        b.Append(Slice::Copy(s));
        model += s;
        break;
      }
      case 2: {
        const size_t n = model.empty() ? 0 : rng() % (model.size() + 1);
        b.TrimFront(n);
        model.erase(0, n);
        break;
      }
      case 3: {
        const size_t n = model.empty() ? 0 : rng() % (model.size() + 1);
        SliceBuffer dest;
        b.MoveFrontTo(n, &dest);
        ASSERT_EQ(dest.ToString(), model.substr(0, n));
        model.erase(0, n);
        break;
      }
      case 4: {
        const size_t n = rng() % 20;
        uint8_t* p = b.AppendUninitialized(n);
        for (size_t i = 0; i < n; ++i)
          p[i] = static_cast<uint8_t>('0' + i % 10);
        for (size_t i = 0; i < n; ++i)
          model.push_back(static_cast<char>('0' + i % 10));
        break;
      }
      case 5: {
        SliceBuffer copy = b;
        ASSERT_EQ(copy.ToString(), model);
        break;
      }
    }
    ASSERT_EQ(b.size(), model.size());
  }
  EXPECT_EQ(b.ToString(), model);
}

// The rpc layer hands each received message to a handler thread without a
// copy (rpc/internal/call_core.h): the message's slices share the read block
// with the connection, which goes on filling the block's spare room and
// slicing it while the handler reads and releases its message. Here a
// "loop" thread reads into one SliceBuffer, carves messages out of it
// (MoveFrontTo: slices of the read block), keeps a slice of each for itself,
// and passes the messages to a second thread that checks and releases them.
// Bounded by the message count; ASan reports a block freed while in use.
TEST(SliceBufferTest, MessagesReleasedOnAnotherThreadWhileTheReaderGoesOn) {
  constexpr int kMessages = 20000;
  constexpr size_t kMaxQueued = 64;
  std::mutex mu;
  std::condition_variable cv;
  std::deque<std::pair<int, SliceBuffer>> queue;
  bool done = false;
  int checked = 0;
  int shared_with_read_block = 0;
  auto content = [](int i, size_t k) {
    return static_cast<char>('a' + (i * 7 + static_cast<int>(k)) % 26);
  };
  auto length = [](int i) { return static_cast<size_t>(1 + (i * 37) % 300); };

  std::thread handler([&] {
    for (;;) {
      std::pair<int, SliceBuffer> item;
      {
        std::unique_lock<std::mutex> lock(mu);
        cv.wait(lock, [&] { return !queue.empty() || done; });
        if (queue.empty()) return;
        item = std::move(queue.front());
        queue.pop_front();
      }
      cv.notify_all();
      const std::string got = item.second.ToString();
      bool ok = got.size() == length(item.first);
      for (size_t k = 0; ok && k < got.size(); ++k) {
        ok = got[k] == content(item.first, k);
      }
      if (ok) ++checked;
      item.second.Clear();  // the last reference may be this thread's
    }
  });

  SliceBuffer read;  // the connection's read buffer
  Slice last_block;  // the loop's own use of the block it reads into
  for (int i = 0; i < kMessages; ++i) {
    const size_t n = length(i);
    // "Read" the message in two pieces into the spare room of the current
    // block, as a socket read fills the rest of a block earlier messages
    // still point into.
    for (size_t done_octets = 0; done_octets < n;) {
      size_t available = 0;
      uint8_t* p = read.PrepareAppend(1, &available);
      const size_t k = std::min({available, n - done_octets, n / 2 + 1});
      for (size_t j = 0; j < k; ++j) p[j] = content(i, done_octets + j);
      read.CommitAppend(k);
      done_octets += k;
    }
    SliceBuffer message;
    read.MoveFrontTo(n, &message);
    if (message.front().SharesBlockWith(last_block)) ++shared_with_read_block;
    last_block = message.front().Sub(0, 1);  // the loop keeps using the block
    {
      std::unique_lock<std::mutex> lock(mu);
      cv.wait(lock, [&] { return queue.size() < kMaxQueued; });
      queue.emplace_back(i, std::move(message));
    }
    cv.notify_all();
  }
  {
    std::lock_guard<std::mutex> lock(mu);
    done = true;
  }
  cv.notify_all();
  handler.join();
  EXPECT_EQ(checked, kMessages);
  // Most messages shared their block with the one before: no copy, and the
  // two threads really did release slices of the same blocks.
  EXPECT_GT(shared_with_read_block, kMessages / 2);
}

}  // namespace
}  // namespace transport
