#include "rpc/wire/message_framer.h"

#include <cstdlib>
#include <new>
#include <random>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "transport/slice/slice.h"

// Counts heap allocations while g_count_allocations is set (this test binary
// only), to hold the deframer to "no allocation per message".
namespace {
bool g_count_allocations = false;
size_t g_allocations = 0;
void* volatile g_sink = nullptr;
}  // namespace

void* operator new(size_t n) {
  if (g_count_allocations) ++g_allocations;
  if (void* p = std::malloc(n == 0 ? 1 : n)) return p;
  throw std::bad_alloc();
}
void* operator new[](size_t n) { return operator new(n); }
void operator delete(void* p) noexcept { std::free(p); }
void operator delete[](void* p) noexcept { std::free(p); }
void operator delete(void* p, size_t) noexcept { std::free(p); }
void operator delete[](void* p, size_t) noexcept { std::free(p); }

namespace rpc {
namespace {

using transport::Slice;
using transport::SliceBuffer;

struct Msg {
  std::string payload;
  bool compressed;
  bool operator==(const Msg& o) const {
    return payload == o.payload && compressed == o.compressed;
  }
};

std::string Pattern(size_t n, int seed) {
  std::string s(n, '\0');
  for (size_t i = 0; i < n; ++i) s[i] = static_cast<char>(i * 131 + seed);
  return s;
}

// The wire form of `msgs`, built with WriteMessage.
std::string Frame(const std::vector<Msg>& msgs) {
  SliceBuffer out;
  for (const Msg& m : msgs) {
    SliceBuffer payload;
    payload.Append(Slice::Copy(m.payload));
    EXPECT_TRUE(WriteMessage(std::move(payload), m.compressed, &out).ok());
  }
  return out.ToString();
}

// Pushes `wire` cut at `cuts` (ascending offsets) and returns what came out;
// pulls after every piece when `pull_each`, else only at the end.
std::vector<Msg> Deframe(const std::string& wire,
                         const std::vector<size_t>& cuts, bool pull_each,
                         MessageDeframer* d) {
  std::vector<Msg> got;
  ReceivedMessage m;
  auto pull = [&] {
    while (d->Next(&m)) got.push_back({m.payload.ToString(), m.compressed});
  };
  size_t pos = 0;
  for (size_t i = 0; i <= cuts.size(); ++i) {
    const size_t end = i < cuts.size() ? cuts[i] : wire.size();
    EXPECT_TRUE(d->Push(Slice::Copy(wire.data() + pos, end - pos)).ok());
    pos = end;
    if (pull_each) pull();
  }
  pull();
  EXPECT_TRUE(d->Finish().ok());
  EXPECT_EQ(d->buffered_bytes(), 0u);
  return got;
}

const std::vector<Msg>& Sample() {
  static const auto* msgs = new std::vector<Msg>{
      {"", false},
      {"a", false},
      {Pattern(4, 1), true},
      {Pattern(5, 2), false},
      {"", true},
      {Pattern(300, 3), false},
      {Pattern(5, 4), true},
      {Pattern(70000, 5), false},
      {"z", false},
  };
  return *msgs;
}

// The contiguous overload copies: up to kCopyPayloadMax octets into one
// exactly sized block (full: the next append starts a new slice), more into
// a default block after the prefix (with room left, so the next append
// extends the same slice).
TEST(WriteMessageTest, ContiguousPayloadIsCopiedIntoAnExactBlockUpTo512) {
  for (const size_t n : {size_t{0}, size_t{1}, kCopyPayloadMax,
                         kCopyPayloadMax + 1, size_t{10000}}) {
    const std::string payload(n, 'p');
    SliceBuffer out;
    ASSERT_TRUE(WriteMessage(std::string_view(payload), true, &out).ok());
    ASSERT_EQ(out.size(), kMessagePrefixSize + n) << n;
    uint8_t prefix[5];
    out.CopyTo(prefix, 5);
    EXPECT_EQ(prefix[0], 1) << n;
    EXPECT_EQ(static_cast<size_t>((prefix[1] << 24) | (prefix[2] << 16) |
                                  (prefix[3] << 8) | prefix[4]),
              n);
    EXPECT_EQ(out.ToString().substr(kMessagePrefixSize), payload) << n;
    if (n <= kCopyPayloadMax) {
      ASSERT_EQ(out.num_slices(), 1u) << n;
      out.Append("!");
      EXPECT_EQ(out.num_slices(), 2u) << n;
    } else if (n < SliceBuffer::kDefaultBlockSize / 2) {
      ASSERT_EQ(out.num_slices(), 1u) << n;
      out.Append("!");
      EXPECT_EQ(out.num_slices(), 1u) << n;
    }
  }
}

// kCopyPayloadMax is inclusive: 512 octets are copied behind the prefix into
// one exactly sized block, 513 are moved (the payload's own block follows a
// prefix slice).
TEST(WriteMessageTest, CopiesUpTo512IncludedMoves513) {
  for (const size_t n : {kCopyPayloadMax, kCopyPayloadMax + 1}) {
    const Slice body = Slice::Copy(std::string(n, 'm'));
    SliceBuffer payload;
    payload.Append(body);
    SliceBuffer out;
    ASSERT_TRUE(WriteMessage(std::move(payload), false, &out).ok());
    ASSERT_EQ(out.size(), kMessagePrefixSize + n);
    EXPECT_EQ(out.ToString().substr(kMessagePrefixSize), std::string(n, 'm'));
    if (n <= kCopyPayloadMax) {
      ASSERT_EQ(out.num_slices(), 1u);
      EXPECT_FALSE(out.slice(0).SharesBlockWith(body));
      out.Append("!");  // The exact block is full.
      EXPECT_EQ(out.num_slices(), 2u);
    } else {
      ASSERT_EQ(out.num_slices(), 2u);
      EXPECT_EQ(out.slice(0).size(), kMessagePrefixSize);
      EXPECT_TRUE(out.slice(1).SharesBlockWith(body));
    }
  }
}

TEST(WriteMessageTest, PrefixThenPayloadSlices) {
  // A small payload is copied behind its prefix: one slice, in a block of
  // exactly its size (the next append starts a new slice).
  const Slice body = Slice::Copy("hello");
  SliceBuffer payload;
  payload.Append(body);
  SliceBuffer out;
  ASSERT_TRUE(WriteMessage(std::move(payload), false, &out).ok());
  EXPECT_EQ(out.ToString(), std::string("\0\0\0\0\5hello", 10));
  ASSERT_EQ(out.num_slices(), 1u);
  EXPECT_FALSE(out.slice(0).SharesBlockWith(body));
  out.Append("!");
  EXPECT_EQ(out.num_slices(), 2u);

  // Up to kCopyPayloadMax octets, in two pieces: still one slice.
  SliceBuffer pieces;
  pieces.Append(Slice::Copy(std::string(kCopyPayloadMax - 1, 'a')));
  pieces.Append(Slice::Copy("b"));
  SliceBuffer out1;
  ASSERT_TRUE(WriteMessage(std::move(pieces), false, &out1).ok());
  ASSERT_EQ(out1.num_slices(), 1u);
  EXPECT_EQ(out1.ToString().substr(5),
            std::string(kCopyPayloadMax - 1, 'a') + "b");

  // A larger one is not copied: its slices move behind the prefix.
  SliceBuffer big;
  const Slice big_body = Slice::Copy(Pattern(0x01020304 & 0xffff, 0));
  ASSERT_GT(big_body.size(), kCopyPayloadMax);
  big.Append(big_body);
  SliceBuffer out2;
  ASSERT_TRUE(WriteMessage(std::move(big), true, &out2).ok());
  ASSERT_EQ(out2.num_slices(), 2u);
  EXPECT_TRUE(out2.slice(1).SharesBlockWith(big_body));
  uint8_t prefix[5];
  out2.CopyTo(prefix, 5);
  EXPECT_EQ(prefix[0], 1);
  EXPECT_EQ(
      (prefix[1] << 24) | (prefix[2] << 16) | (prefix[3] << 8) | prefix[4],
      0x0304);
  SliceBuffer empty;
  SliceBuffer out3;
  ASSERT_TRUE(WriteMessage(std::move(empty), false, &out3).ok());
  EXPECT_EQ(out3.ToString(), std::string(5, '\0'));
}

TEST(MessageDeframerTest, WholeInput) {
  MessageDeframer d(1 << 20);
  EXPECT_EQ(Deframe(Frame(Sample()), {}, false, &d), Sample());
}

TEST(MessageDeframerTest, SplitAtEveryOffset) {
  const std::vector<Msg> small(Sample().begin(), Sample().begin() + 7);
  const std::string wire = Frame(small);
  for (size_t cut = 0; cut <= wire.size(); ++cut) {
    for (bool pull_each : {false, true}) {
      MessageDeframer d;
      ASSERT_EQ(Deframe(wire, {cut}, pull_each, &d), small) << cut;
    }
  }
  // And with the big message in the middle.
  const std::string wire2 = Frame(Sample());
  for (size_t cut = 0; cut <= wire2.size(); cut += 97) {
    MessageDeframer d;
    ASSERT_EQ(Deframe(wire2, {cut}, true, &d), Sample()) << cut;
  }
}

TEST(MessageDeframerTest, EveryPairOfCuts) {
  const std::vector<Msg> small(Sample().begin(), Sample().begin() + 5);
  const std::string wire = Frame(small);
  for (size_t a = 0; a <= wire.size(); ++a) {
    for (size_t b = a; b <= wire.size(); ++b) {
      MessageDeframer d;
      ASSERT_EQ(Deframe(wire, {a, b}, true, &d), small) << a << " " << b;
    }
  }
}

TEST(MessageDeframerTest, OneOctetAtATime) {
  const std::vector<Msg> small(Sample().begin(), Sample().begin() + 7);
  const std::string wire = Frame(small);
  std::vector<size_t> cuts;
  for (size_t i = 1; i < wire.size(); ++i) cuts.push_back(i);
  MessageDeframer d;
  EXPECT_EQ(Deframe(wire, cuts, true, &d), small);
}

TEST(MessageDeframerTest, RandomMultiSplits) {
  std::mt19937 rng(5);
  for (int iter = 0; iter < 500; ++iter) {
    std::vector<Msg> msgs;
    const int count = rng() % 12;
    for (int i = 0; i < count; ++i) {
      const size_t len = (rng() % 4 == 0) ? rng() % 20000 : rng() % 40;
      msgs.push_back({Pattern(len, i), rng() % 2 == 0});
    }
    const std::string wire = Frame(msgs);
    std::vector<size_t> cuts;
    const int ncuts = wire.empty() ? 0 : rng() % 20;
    for (int i = 0; i < ncuts; ++i) cuts.push_back(rng() % (wire.size() + 1));
    std::sort(cuts.begin(), cuts.end());
    MessageDeframer d;
    ASSERT_EQ(Deframe(wire, cuts, rng() % 2 == 0, &d), msgs) << iter;
  }
}

TEST(MessageDeframerTest, PushSliceBuffer) {
  const std::string wire = Frame(Sample());
  SliceBuffer in;
  for (size_t pos = 0; pos < wire.size(); pos += 1000) {
    in.Append(Slice::Copy(wire.substr(pos, 1000)));
  }
  MessageDeframer d;
  ASSERT_TRUE(d.Push(std::move(in)).ok());
  EXPECT_EQ(d.complete_messages(), Sample().size());
  std::vector<Msg> got;
  ReceivedMessage m;
  while (d.Next(&m)) got.push_back({m.payload.ToString(), m.compressed});
  EXPECT_EQ(got, Sample());
  EXPECT_TRUE(d.Finish().ok());
}

TEST(MessageDeframerTest, PayloadIsNotCopied) {
  const Slice data = Slice::Copy(Frame({{"first", false}, {"second", true}}));
  MessageDeframer d;
  ASSERT_TRUE(d.Push(data).ok());
  ReceivedMessage m;
  ASSERT_TRUE(d.Next(&m));
  ASSERT_EQ(m.payload.num_slices(), 1u);
  EXPECT_TRUE(m.payload.front().SharesBlockWith(data));
  EXPECT_EQ(m.payload.front().data(), data.data() + 5);
  ASSERT_TRUE(d.Next(&m));
  EXPECT_TRUE(m.compressed);
  EXPECT_EQ(m.payload.ToString(), "second");
  EXPECT_TRUE(m.payload.front().SharesBlockWith(data));
  EXPECT_FALSE(d.Next(&m));
}

TEST(MessageDeframerTest, NoAllocationPerMessage) {
  // One message per DATA piece, each in its own block, as the transport
  // delivers them.
  std::vector<Slice> pieces;
  for (int i = 0; i < 1000; ++i) {
    pieces.push_back(Slice::Copy(Frame({{Pattern(100 + i % 50, i), false}})));
  }
  // Also several messages per piece.
  const Slice packed = Slice::Copy(Frame(
      {{"a", false}, {"bb", false}, {"ccc", true}, {Pattern(200, 9), false}}));
  MessageDeframer d;
  ReceivedMessage m;
  // Warm up (the first message may size things).
  ASSERT_TRUE(d.Push(Slice::Copy(Frame({{"warm", false}}))).ok());
  ASSERT_TRUE(d.Next(&m));

  // The counter works.
  g_allocations = 0;
  g_count_allocations = true;
  g_sink = new char[64];
  g_count_allocations = false;
  delete[] static_cast<char*>(g_sink);
  ASSERT_EQ(g_allocations, 1u);

  g_allocations = 0;
  g_count_allocations = true;
  size_t delivered = 0;
  for (Slice& piece : pieces) {
    if (!d.Push(std::move(piece)).ok()) break;
    while (d.Next(&m)) ++delivered;
  }
  for (int i = 0; i < 100; ++i) {
    if (!d.Push(packed).ok()) break;
    while (d.Next(&m)) ++delivered;
  }
  g_count_allocations = false;
  EXPECT_EQ(g_allocations, 0u);
  EXPECT_EQ(delivered, 1000u + 400u);
  EXPECT_TRUE(d.Finish().ok());
}

TEST(MessageDeframerTest, LargeMessageInFramePieces) {
  const std::string big = Pattern(1 << 20, 7);
  const std::string wire = Frame({{big, false}, {"tail", false}});
  MessageDeframer d(1 << 20);
  for (size_t pos = 0; pos < wire.size(); pos += 16384) {
    ASSERT_TRUE(d.Push(Slice::Copy(wire.substr(pos, 16384))).ok());
  }
  ReceivedMessage m;
  ASSERT_TRUE(d.Next(&m));
  EXPECT_EQ(m.payload.size(), big.size());
  EXPECT_EQ(m.payload.ToString(), big);
  ASSERT_TRUE(d.Next(&m));
  EXPECT_EQ(m.payload.ToString(), "tail");
  EXPECT_TRUE(d.Finish().ok());
}

std::string Prefix(uint8_t flags, uint32_t length) {
  uint8_t p[5];
  EncodeMessagePrefix(false, length, p);
  p[0] = flags;
  return std::string(reinterpret_cast<char*>(p), 5);
}

TEST(MessageDeframerLimitsTest, MaxSizeAccepted) {
  MessageDeframer d(10);
  ASSERT_TRUE(d.Push(Slice::Copy(Frame({{Pattern(10, 0), false}}))).ok());
  ReceivedMessage m;
  EXPECT_TRUE(d.Next(&m));
  EXPECT_EQ(m.payload.size(), 10u);
}

TEST(MessageDeframerLimitsTest, OversizeRejectedFromPrefixAlone) {
  // Only the prefix has arrived: the error is immediate, nothing is buffered.
  MessageDeframer d(10);
  const absl::Status s = d.Push(Slice::Copy(Prefix(0, 11)));
  EXPECT_EQ(s.code(), absl::StatusCode::kResourceExhausted);
  EXPECT_EQ(s.message(), "received message larger than max (11 vs. 10)");
  EXPECT_EQ(d.buffered_bytes(), 0u);
  // Final: more input is refused, nothing is delivered.
  EXPECT_EQ(d.Push(Slice::Copy(Frame({{"ok", false}}))).code(),
            absl::StatusCode::kResourceExhausted);
  ReceivedMessage m;
  EXPECT_FALSE(d.Next(&m));
  EXPECT_EQ(d.Finish().code(), absl::StatusCode::kResourceExhausted);
}

TEST(MessageDeframerLimitsTest, OversizeWithSplitPrefix) {
  MessageDeframer d(kDefaultMaxReceiveMessageSize);
  const std::string p = Frame({{"ok", false}}) + Prefix(0, 0xffffffff);
  ASSERT_TRUE(d.Push(Slice::Copy(p.substr(0, 10))).ok());
  EXPECT_EQ(d.Push(Slice::Copy(p.substr(10))).code(),
            absl::StatusCode::kResourceExhausted);
  EXPECT_EQ(d.buffered_bytes(), 0u);
}

TEST(MessageDeframerLimitsTest, OversizeAfterGoodMessagesInOnePiece) {
  MessageDeframer d(100);
  const std::string wire =
      Frame({{"a", false}, {"b", false}}) + Prefix(0, 101) + "x";
  EXPECT_EQ(d.Push(Slice::Copy(wire)).code(),
            absl::StatusCode::kResourceExhausted);
  ReceivedMessage m;
  EXPECT_FALSE(d.Next(&m));
  EXPECT_FALSE(d.HasMessage());
}

TEST(MessageDeframerErrorsTest, UnknownFlags) {
  for (uint8_t flags : {0x02, 0x03, 0x80, 0xff}) {
    MessageDeframer d;
    const absl::Status s = d.Push(Slice::Copy(Prefix(flags, 1) + "x"));
    EXPECT_EQ(s.code(), absl::StatusCode::kInternal) << int{flags};
    EXPECT_NE(s.message().find("unknown flags"), absl::string_view::npos);
  }
}

TEST(MessageDeframerErrorsTest, TruncatedAtEveryOffset) {
  const std::string wire = Frame({{"abc", false}, {Pattern(20, 1), true}});
  const size_t first_end = 5 + 3;
  for (size_t end = 0; end <= wire.size(); ++end) {
    MessageDeframer d;
    ASSERT_TRUE(d.Push(Slice::Copy(wire.substr(0, end))).ok());
    const absl::Status s = d.Finish();
    if (end == 0 || end == first_end || end == wire.size()) {
      EXPECT_TRUE(s.ok()) << end;
      ReceivedMessage m;
      size_t n = 0;
      while (d.Next(&m)) ++n;
      EXPECT_EQ(n, end == 0 ? 0u : end == first_end ? 1u : 2u);
    } else {
      EXPECT_EQ(s.code(), absl::StatusCode::kInternal) << end;
      EXPECT_NE(s.message().find("truncated message"), absl::string_view::npos);
    }
  }
}

TEST(MessageDeframerTest, EmptyPushesAreHarmless) {
  MessageDeframer d;
  EXPECT_TRUE(d.Push(Slice()).ok());
  EXPECT_TRUE(d.Push(SliceBuffer()).ok());
  ReceivedMessage m;
  EXPECT_FALSE(d.Next(&m));
  EXPECT_TRUE(d.Finish().ok());
}

}  // namespace
}  // namespace rpc
