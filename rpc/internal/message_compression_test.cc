// MessageCompressor and MessageDecompressor alone (no call, no connection):
// which messages get the compressed flag, and the decompressor's rules for
// the flag (gRPC's compression.md: a compressed flag on a call without
// grpc-encoding is a protocol error, INTERNAL, whatever the octets are).

#include "rpc/internal/message_compression.h"

#include <string>
#include <utility>

#include "gtest/gtest.h"
#include "rpc/compression/codec.h"
#include "rpc/compression/encoding.h"
#include "rpc/wire/message_framer.h"
#include "transport/slice/slice.h"

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

}  // namespace
}  // namespace internal
}  // namespace rpc
