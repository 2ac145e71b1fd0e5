#include "rpc/wire/zero_copy_stream.h"

#include <random>
#include <string>
#include <vector>

#include "google/protobuf/io/coded_stream.h"
#include "gtest/gtest.h"
#include "rpc/wire/message_framer.h"
#include "rpc/wire/testdata/test.pb.h"
#include "transport/slice/slice.h"

namespace rpc {
namespace {

using transport::Slice;
using transport::SliceBuffer;
using wire::test::TestMessage;

// `bytes` cut into pieces of the given sizes (cycled), each in its own block.
SliceBuffer Chop(const std::string& bytes, std::vector<size_t> sizes) {
  SliceBuffer out;
  size_t pos = 0;
  for (size_t i = 0; pos < bytes.size(); ++i) {
    const size_t n = std::min(sizes[i % sizes.size()], bytes.size() - pos);
    out.Append(Slice::Copy(bytes.data() + pos, n));
    pos += n;
  }
  return out;
}

TestMessage Sample(size_t payload_size) {
  TestMessage m;
  m.set_number(-42);
  m.set_text("hello, wire");
  std::string payload(payload_size, '\0');
  for (size_t i = 0; i < payload_size; ++i)
    payload[i] = static_cast<char>(i * 7);
  m.set_payload(payload);
  for (int i = 0; i < 5; ++i) {
    auto* item = m.add_items();
    item->set_id(int64_t{1} << (i * 10));
    item->set_name("item" + std::to_string(i));
  }
  m.mutable_child()->set_text("child");
  return m;
}

bool Same(const TestMessage& a, const TestMessage& b) {
  return a.SerializeAsString() == b.SerializeAsString();
}

TEST(SliceBufferInputStreamTest, NextBackUpSkip) {
  const SliceBuffer in = Chop("abcdefghij", {3, 1, 6});
  SliceBufferInputStream s(&in);
  const void* data;
  int size;
  ASSERT_TRUE(s.Next(&data, &size));
  EXPECT_EQ(std::string(static_cast<const char*>(data), size), "abc");
  EXPECT_EQ(data, in.slice(0).data());  // the slice itself, no copy
  s.BackUp(2);
  EXPECT_EQ(s.ByteCount(), 1);
  ASSERT_TRUE(s.Next(&data, &size));
  EXPECT_EQ(std::string(static_cast<const char*>(data), size), "bc");
  ASSERT_TRUE(s.Skip(3));  // "d", "ef"
  EXPECT_EQ(s.ByteCount(), 6);
  ASSERT_TRUE(s.Next(&data, &size));
  EXPECT_EQ(std::string(static_cast<const char*>(data), size), "ghij");
  s.BackUp(4);
  ASSERT_TRUE(s.Skip(0));
  EXPECT_FALSE(s.Skip(5));  // past the end: false, at the end
  EXPECT_EQ(s.ByteCount(), 10);
  EXPECT_FALSE(s.Next(&data, &size));
}

TEST(SliceBufferInputStreamTest, Empty) {
  const SliceBuffer in;
  SliceBufferInputStream s(&in);
  const void* data;
  int size;
  EXPECT_FALSE(s.Next(&data, &size));
  EXPECT_TRUE(s.Skip(0));
  EXPECT_FALSE(s.Skip(1));
  EXPECT_EQ(s.ByteCount(), 0);
}

TEST(SliceBufferOutputStreamTest, WritesAndBacksUp) {
  SliceBuffer out;
  out.Append("pre", 3);
  {
    SliceBufferOutputStream s(&out);
    void* data;
    int size;
    ASSERT_TRUE(s.Next(&data, &size));
    ASSERT_GE(size, 1);
    // First region: the spare room right after "pre", same block.
    static_cast<char*>(data)[0] = '!';
    s.BackUp(size - 1);
    EXPECT_EQ(s.ByteCount(), 1);
    ASSERT_TRUE(s.Next(&data, &size));
    std::memset(data, 'x', size);
    const int first_size = size;
    ASSERT_TRUE(s.Next(&data, &size));
    std::memset(data, 'y', size);
    s.BackUp(size - 2);
    EXPECT_EQ(s.ByteCount(), 1 + first_size + 2);
  }
  const std::string got = out.ToString();
  EXPECT_EQ(got.substr(0, 4), "pre!");
  EXPECT_EQ(got.substr(got.size() - 2), "yy");
  EXPECT_EQ(out.slice(0).size() >= 4, true);  // "pre!" contiguous
}

TEST(SerializeTest, SmallIsContiguousAfterPrefix) {
  const TestMessage m = Sample(100);
  SliceBuffer out;
  const size_t size = m.ByteSizeLong();
  EncodeMessagePrefix(false, static_cast<uint32_t>(size),
                      out.AppendUninitialized(kMessagePrefixSize));
  ASSERT_TRUE(SerializeWithCachedSizesToSliceBuffer(m, size, &out));
  EXPECT_EQ(out.num_slices(), 1u);  // prefix and message in one run
  EXPECT_EQ(out.ToString().substr(kMessagePrefixSize), m.SerializeAsString());
}

// Up to kExactBlockMax octets, that size included, a message is serialized
// into a block of exactly its size (full: the next append starts a new
// slice); one octet more takes a default block with room left (the next
// append extends the same slice).
TEST(SerializeTest, ExactBlockUpTo512Included) {
  for (const size_t target : {kExactBlockMax, kExactBlockMax + 1}) {
    TestMessage m;
    // A payload field alone: tag, 2-octet length, the octets.
    m.set_payload(std::string(target - 3, 'x'));
    const size_t size = m.ByteSizeLong();
    ASSERT_EQ(size, target);
    SliceBuffer out;
    ASSERT_TRUE(SerializeWithCachedSizesToSliceBuffer(m, size, &out));
    ASSERT_EQ(out.ToString(), m.SerializeAsString()) << target;
    ASSERT_EQ(out.num_slices(), 1u) << target;
    out.Append("!");
    EXPECT_EQ(out.num_slices(), target <= kExactBlockMax ? 2u : 1u) << target;
  }
}

TEST(SerializeTest, RoundTripSizes) {
  for (size_t n : {size_t{0}, size_t{1}, size_t{4000}, size_t{5000},
                   kContiguousSerializeLimit - 100, kContiguousSerializeLimit,
                   kContiguousSerializeLimit + 1, size_t{1} << 20,
                   (size_t{3} << 20) + 17}) {
    const TestMessage m = Sample(n);
    SliceBuffer out;
    ASSERT_TRUE(SerializeToSliceBuffer(m, &out)) << n;
    ASSERT_EQ(out.ToString(), m.SerializeAsString()) << n;
    TestMessage back;
    ASSERT_TRUE(ParseFromSliceBuffer(out, &back)) << n;
    EXPECT_TRUE(Same(back, m)) << n;
    if (n > kContiguousSerializeLimit) {
      // Bounded blocks, not one huge one.
      for (const Slice& s : out) {
        EXPECT_LE(s.size(), SliceBufferOutputStream::kMaxBlockSize);
      }
    }
  }
}

TEST(SerializeTest, EmptyMessage) {
  TestMessage empty;
  SliceBuffer out;
  ASSERT_TRUE(SerializeToSliceBuffer(empty, &out));
  EXPECT_TRUE(out.empty());
  TestMessage back = Sample(3);
  ASSERT_TRUE(ParseFromSliceBuffer(out, &back));
  EXPECT_TRUE(Same(back, empty));  // cleared first
}

TEST(ParseTest, LargeMessageFromManySmallSlices) {
  const TestMessage m = Sample(1 << 20);  // 1 MiB bytes field
  const std::string wire = m.SerializeAsString();
  for (const std::vector<size_t>& sizes : std::vector<std::vector<size_t>>{
           {1}, {7, 1, 13}, {1000}, {16384}, {3, 5000, 1, 2}}) {
    const SliceBuffer in = Chop(wire, sizes);
    TestMessage back;
    ASSERT_TRUE(ParseFromSliceBuffer(in, &back)) << sizes[0];
    EXPECT_TRUE(Same(back, m));
  }
}

TEST(ParseTest, RandomSplits) {
  const std::string wire = Sample(3000).SerializeAsString();
  std::mt19937 rng(9);
  for (int i = 0; i < 300; ++i) {
    std::vector<size_t> sizes;
    for (int k = 0; k < 8; ++k) sizes.push_back(1 + rng() % 400);
    TestMessage back;
    ASSERT_TRUE(ParseFromSliceBuffer(Chop(wire, sizes), &back));
    ASSERT_EQ(back.SerializeAsString(), wire);
  }
}

TEST(ParseTest, MalformedFailsNeverCrashes) {
  const std::string bad[] = {
      std::string("\x08", 1),  // varint missing
      std::string("\x08\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\x01", 12),
      std::string("\x1a\x05"
                  "abc",
                  5),                              // bytes past the end
      std::string("\x1a\xff\xff\xff\xff\x0f", 6),  // huge length
      std::string("\x0f", 1),                      // wire type 7
      std::string("\x0e", 1),                      // wire type 6
      std::string("\x0c", 1),                      // end group, no start
      std::string("\x00", 1),                      // field 0
      std::string("\x22\x03\x08\x80", 4),          // bad nested message
  };
  for (const std::string& b : bad) {
    for (size_t piece : {size_t{1}, size_t{2}, size_t{100}}) {
      TestMessage back;
      EXPECT_FALSE(ParseFromSliceBuffer(Chop(b, {piece}), &back))
          << ::testing::PrintToString(b);
    }
  }
}

TEST(ParseTest, EveryTruncationAndRandomBytes) {
  const std::string wire = Sample(50).SerializeAsString();
  for (size_t n = 0; n < wire.size(); ++n) {
    TestMessage back;
    // Must not crash; most truncations fail, some land on a field boundary.
    const bool ok = ParseFromSliceBuffer(Chop(wire.substr(0, n), {3}), &back);
    TestMessage flat;
    EXPECT_EQ(ok, flat.ParseFromString(wire.substr(0, n))) << n;
  }
  std::mt19937 rng(1);
  for (int i = 0; i < 2000; ++i) {
    std::string junk(rng() % 64, '\0');
    for (char& c : junk) c = static_cast<char>(rng());
    TestMessage a, b;
    // The stream path agrees with protobuf's own flat parse.
    EXPECT_EQ(ParseFromSliceBuffer(Chop(junk, {1 + rng() % 5}), &a),
              b.ParseFromString(junk));
  }
}

}  // namespace
}  // namespace rpc
