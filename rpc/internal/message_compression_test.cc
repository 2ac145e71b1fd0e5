// MessageCompressor and MessageDecompressor alone (no call, no connection):
// which messages get the compressed flag, and the decompressor's rules for
// the flag (gRPC's compression.md: a compressed flag on a call without
// grpc-encoding is a protocol error, INTERNAL, whatever the octets are).

#include "rpc/internal/message_compression.h"

#include <cstdint>
#include <cstdlib>
#include <new>
#include <string>
#include <utility>

#include "gtest/gtest.h"
#include "rpc/compression/codec.h"
#include "rpc/compression/encoding.h"
#include "rpc/wire/message_framer.h"
#include "transport/slice/slice.h"

// Counts heap allocations of at least a default SliceBuffer block while
// g_count_allocations is set (this test binary only).
namespace {
bool g_count_allocations = false;
size_t g_block_sized_allocations = 0;
size_t g_allocations = 0;
}  // namespace

void* operator new(size_t n) {
  if (g_count_allocations) {
    ++g_allocations;
    if (n >= transport::SliceBuffer::kDefaultBlockSize) {
      ++g_block_sized_allocations;
    }
  }
  if (void* p = std::malloc(n == 0 ? 1 : n)) return p;
  throw std::bad_alloc();
}
void* operator new[](size_t n) { return operator new(n); }
void operator delete(void* p) noexcept { std::free(p); }
void operator delete[](void* p) noexcept { std::free(p); }
void operator delete(void* p, size_t) noexcept { std::free(p); }
void operator delete[](void* p, size_t) noexcept { std::free(p); }

namespace rpc {
namespace internal {
namespace {

using compression::Encoding;

transport::SliceBuffer Buffer(std::string_view s) {
  transport::SliceBuffer b;
  b.Append(s);
  return b;
}

ReceivedMessage Received(std::string_view payload, bool compressed) {
  ReceivedMessage m;
  m.payload = Buffer(payload);
  m.compressed = compressed;
  return m;
}

std::string Compress(Encoding e, std::string_view text) {
  compression::Compressor c(e);
  std::string out;
  EXPECT_TRUE(c.Compress(text, &out).ok());
  return out;
}

// Frames `payload` with `compressor` and deframes it again.
ReceivedMessage FrameAndDeframe(MessageCompressor* compressor,
                                std::string_view payload) {
  transport::SliceBuffer wire;
  EXPECT_TRUE(compressor->Frame(Buffer(payload), &wire).ok());
  MessageDeframer deframer;
  EXPECT_TRUE(deframer.Push(std::move(wire)).ok());
  ReceivedMessage m;
  EXPECT_TRUE(deframer.Next(&m));
  return m;
}

// The flag, not the octets, decides: even octets that identity would pass
// through unchanged are refused when the flag says compressed.
TEST(MessageDecompressorTest, CompressedFlagOnAnIdentityCallIsInternal) {
  for (const std::string& octets :
       {std::string("plain text"), Compress(Encoding::kGzip, "gzip text"),
        std::string()}) {
    MessageDecompressor d(1 << 20);
    ASSERT_EQ(d.encoding(), Encoding::kIdentity);
    ReceivedMessage m = Received(octets, true);
    transport::SliceBuffer payload = Buffer("untouched");
    const absl::Status s = d.Unpack(&m, &payload);
    EXPECT_EQ(s.code(), absl::StatusCode::kInternal) << s;
    EXPECT_EQ(std::string(s.message()),
              "compressed message without grpc-encoding");
    EXPECT_EQ(payload.ToString(), "untouched");
    EXPECT_EQ(d.compressed_messages(), 0u);
  }
  // Named identity explicitly (grpc-encoding: identity): the same.
  MessageDecompressor d(1 << 20);
  d.set_encoding(Encoding::kIdentity);
  ReceivedMessage m = Received("plain text", true);
  transport::SliceBuffer payload;
  EXPECT_EQ(d.Unpack(&m, &payload).code(), absl::StatusCode::kInternal);
}

// Flag clear: the payload as it came, on any encoding (a compressed call
// may send small messages uncompressed).
TEST(MessageDecompressorTest, UncompressedMessagesPassOnEveryEncoding) {
  for (Encoding e : {Encoding::kIdentity, Encoding::kGzip, Encoding::kDeflate,
                     Encoding::kZstd}) {
    MessageDecompressor d(1 << 20);
    d.set_encoding(e);
    ReceivedMessage m = Received("as sent", false);
    transport::SliceBuffer payload;
    ASSERT_TRUE(d.Unpack(&m, &payload).ok());
    EXPECT_EQ(payload.ToString(), "as sent");
    EXPECT_EQ(d.compressed_messages(), 0u);
  }
}

TEST(MessageDecompressorTest, CompressedMessagesAreDecompressed) {
  const std::string text(5000, 'z');
  for (Encoding e : {Encoding::kGzip, Encoding::kDeflate, Encoding::kZstd}) {
    MessageDecompressor d(1 << 20);
    d.set_encoding(e);
    for (int i = 0; i < 2; ++i) {  // The codec context is reused.
      ReceivedMessage m = Received(Compress(e, text), true);
      transport::SliceBuffer payload;
      const absl::Status s = d.Unpack(&m, &payload);
      ASSERT_TRUE(s.ok()) << compression::EncodingName(e) << ": " << s;
      EXPECT_EQ(payload.ToString(), text);
    }
    EXPECT_EQ(d.compressed_messages(), 2u);
  }
}

TEST(MessageDecompressorTest, OtherEncodingsOctetsAreInternal) {
  MessageDecompressor d(1 << 20);
  d.set_encoding(Encoding::kZstd);
  ReceivedMessage m = Received(Compress(Encoding::kGzip, "gzip text"), true);
  transport::SliceBuffer payload;
  EXPECT_EQ(d.Unpack(&m, &payload).code(), absl::StatusCode::kInternal);
}

TEST(MessageDecompressorTest, PastTheMaxSizeIsResourceExhausted) {
  MessageDecompressor d(1000);
  d.set_encoding(Encoding::kGzip);
  ReceivedMessage fits =
      Received(Compress(Encoding::kGzip, std::string(1000, 'a')), true);
  transport::SliceBuffer payload;
  ASSERT_TRUE(d.Unpack(&fits, &payload).ok());
  EXPECT_EQ(payload.size(), 1000u);
  ReceivedMessage bomb =
      Received(Compress(Encoding::kGzip, std::string(1001, 'a')), true);
  EXPECT_EQ(d.Unpack(&bomb, &payload).code(),
            absl::StatusCode::kResourceExhausted);
}

// The compressor sets the flag only on a compressed call and from the
// threshold on; what it sends, the decompressor of the same encoding reads.
TEST(MessageCompressorTest, FlagFromTheThresholdOnAndRoundTrip) {
  const std::string small(99, 's');
  const std::string large(100, 'l');
  for (Encoding e : {Encoding::kGzip, Encoding::kDeflate, Encoding::kZstd}) {
    MessageCompressor c(e, /*threshold=*/100);
    MessageDecompressor d(1 << 20);
    d.set_encoding(e);
    ReceivedMessage m = FrameAndDeframe(&c, small);
    EXPECT_FALSE(m.compressed);
    EXPECT_EQ(m.payload.ToString(), small);
    m = FrameAndDeframe(&c, large);
    EXPECT_TRUE(m.compressed);
    EXPECT_NE(m.payload.ToString(), large);
    transport::SliceBuffer payload;
    ASSERT_TRUE(d.Unpack(&m, &payload).ok());
    EXPECT_EQ(payload.ToString(), large);
    EXPECT_EQ(c.compressed_messages(), 1u);
  }
  MessageCompressor identity(Encoding::kIdentity, /*threshold=*/0);
  ReceivedMessage m = FrameAndDeframe(&identity, large);
  EXPECT_FALSE(m.compressed);
  EXPECT_EQ(m.payload.ToString(), large);
  EXPECT_EQ(identity.compressed_messages(), 0u);
}

// A compressed message of up to kCopyPayloadMax octets is copied once,
// behind its prefix, into one exactly sized block: no default-sized block on
// the way (it was appended into one and then copied again).
TEST(MessageCompressorTest, ASmallCompressedMessageTakesOneExactBlock) {
  const std::string text(2000, 'a');
  const std::string compressed = Compress(Encoding::kGzip, text);
  ASSERT_LE(compressed.size(), kCopyPayloadMax);
  MessageCompressor c(Encoding::kGzip, /*threshold=*/0);
  transport::SliceBuffer warm;
  ASSERT_TRUE(c.Frame(Buffer(text), &warm).ok());  // The codec's state.
  transport::SliceBuffer payload = Buffer(text);
  transport::SliceBuffer wire;
  g_allocations = 0;
  g_block_sized_allocations = 0;
  g_count_allocations = true;
  const absl::Status status = c.Frame(std::move(payload), &wire);
  g_count_allocations = false;
  ASSERT_TRUE(status.ok()) << status;
  EXPECT_GT(g_allocations, 0u);  // The counter works (the exact block).
  EXPECT_EQ(g_block_sized_allocations, 0u);
  EXPECT_EQ(wire.size(), kMessagePrefixSize + compressed.size());
  ASSERT_EQ(wire.num_slices(), 1u);
  wire.Append("!");  // The block was exactly full.
  EXPECT_EQ(wire.num_slices(), 2u);
  EXPECT_EQ(c.compressed_messages(), 2u);

  // A larger compressed message (incompressible octets) still frames right.
  std::string noise(3000, '\0');
  uint32_t x = 12345;
  for (char& ch : noise) {
    x = x * 1103515245u + 12345u;
    ch = static_cast<char>(x >> 24);
  }
  MessageDecompressor d(1 << 20);
  d.set_encoding(Encoding::kGzip);
  ReceivedMessage m = FrameAndDeframe(&c, noise);
  ASSERT_TRUE(m.compressed);
  EXPECT_GT(m.payload.size(), kCopyPayloadMax);
  transport::SliceBuffer out;
  ASSERT_TRUE(d.Unpack(&m, &out).ok());
  EXPECT_EQ(out.ToString(), noise);
}

}  // namespace
}  // namespace internal
}  // namespace rpc
