#include "transport/frame/frame.h"

#include <random>
#include <string>

#include "gtest/gtest.h"

namespace transport {
namespace {

// The fast header parse is a cache of the general one: equal on every input
// tried.
TEST(FrameHeaderTest, FastParseEqualsGeneralParse) {
  std::mt19937_64 rng(1);
  uint8_t bytes[kFrameHeaderSize];
  for (int i = 0; i < 100000; ++i) {
    for (uint8_t& b : bytes) b = static_cast<uint8_t>(rng());
    ASSERT_EQ(ParseFrameHeaderFast(bytes), ParseFrameHeader(bytes)) << i;
  }
  for (int fill : {0x00, 0xff, 0x80, 0x7f}) {
    std::memset(bytes, fill, sizeof(bytes));
    ASSERT_EQ(ParseFrameHeaderFast(bytes), ParseFrameHeader(bytes)) << fill;
  }
}

TEST(FrameHeaderTest, ParseFieldsAndIgnoreReservedBit) {
  const uint8_t bytes[] = {0x12, 0x34, 0x56, 0x01, 0x25,
                           0x80, 0x00, 0x00, 0x03};
  const FrameHeader h = ParseFrameHeader(bytes);
  EXPECT_EQ(h.length, 0x123456u);
  EXPECT_TRUE(h.is(FrameType::kHeaders));
  EXPECT_EQ(h.flags, kFlagEndStream | kFlagEndHeaders | kFlagPriority);
  EXPECT_TRUE(h.has_flags(kFlagEndHeaders | kFlagPriority));
  EXPECT_FALSE(h.has_flags(kFlagPadded));
  EXPECT_EQ(h.stream_id, 3u);  // Reserved bit dropped.
}

TEST(FrameHeaderTest, SerializeRoundTrips) {
  std::mt19937 rng(2);
  for (int i = 0; i < 10000; ++i) {
    FrameHeader h;
    h.length = rng() & 0xffffff;
    h.type = static_cast<uint8_t>(rng());
    h.flags = static_cast<uint8_t>(rng());
    h.stream_id = rng() & kStreamIdMask;
    uint8_t bytes[kFrameHeaderSize];
    SerializeFrameHeader(h, bytes);
    ASSERT_EQ(ParseFrameHeader(bytes), h);
  }
  FrameHeader h;
  h.stream_id = 0xffffffff;  // The reserved bit is never sent.
  uint8_t bytes[kFrameHeaderSize];
  SerializeFrameHeader(h, bytes);
  EXPECT_EQ(bytes[5], 0x7f);
}

TEST(FrameTest, ClientPrefaceIsTheRfcOctets) {
  EXPECT_EQ(kClientPreface.size(), 24u);
  EXPECT_EQ(kClientPreface,
            std::string_view("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"));
}

TEST(FrameTest, TypeNames) {
  EXPECT_STREQ(FrameTypeName(0), "DATA");
  EXPECT_STREQ(FrameTypeName(9), "CONTINUATION");
  EXPECT_STREQ(FrameTypeName(10), "UNKNOWN");
}

TEST(FrameTest, StructsCompareAndPrint) {
  SliceBuffer payload;
  payload.Append("hi\x01");
  const Frame a = DataFrame{1, true, payload, std::nullopt};
  Frame b = a;
  EXPECT_EQ(a, b);
  std::get<DataFrame>(b).pad_length = 0;
  EXPECT_NE(a, b);
  EXPECT_EQ(FrameToString(a), "DATA stream=1 end_stream payload=\"hi\\x01\"");
  EXPECT_EQ(FrameToString(GoAwayFrame{3, Http2ErrorCode::kCancel, "x"}),
            "GOAWAY last_stream=3 code=CANCEL debug=\"x\"");
  EXPECT_NE(Frame(PingFrame{false, 1}), Frame(PingFrame{true, 1}));
  EXPECT_NE(Frame(PingFrame{false, 1}), Frame(WindowUpdateFrame{0, 1}));
}

}  // namespace
}  // namespace transport
