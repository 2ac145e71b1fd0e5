// FrameDecoder: every rule of RFC 9113 section 6 it enforces, with the exact
// error code and whether it is a stream or a connection error; preface; limits;
// zero copy. (Split-point equality of the fast and general paths:
// frame_decoder_split_test.cc.)
#include "transport/frame/frame_decoder.h"

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "gtest/gtest.h"
#include "transport/frame/frame_collector.h"
#include "transport/frame/frame_writer.h"

namespace transport {
namespace {

// A frame with arbitrary (possibly invalid) header fields and payload.
std::string Raw(uint8_t type, uint8_t flags, uint32_t stream_id,
                std::string_view payload) {
  FrameHeader h;
  h.length = static_cast<uint32_t>(payload.size());
  h.type = type;
  h.flags = flags;
  h.stream_id = stream_id;
  std::string out(kFrameHeaderSize, '\0');
  SerializeFrameHeader(h, reinterpret_cast<uint8_t*>(out.data()));
  // Keep a reserved bit the caller asked for.
  out[5] = static_cast<char>(stream_id >> 24);
  return out + std::string(payload);
}
std::string Raw(FrameType type, uint8_t flags, uint32_t stream_id,
                std::string_view payload) {
  return Raw(static_cast<uint8_t>(type), flags, stream_id, payload);
}

std::string U32(uint32_t v) {
  std::string s(4, '\0');
  wire::StoreBE32(reinterpret_cast<uint8_t*>(s.data()), v);
  return s;
}
std::string Entry(uint16_t id, uint32_t value) {
  std::string s(6, '\0');
  wire::StoreBE16(reinterpret_cast<uint8_t*>(s.data()), id);
  wire::StoreBE32(reinterpret_cast<uint8_t*>(s.data()) + 2, value);
  return s;
}
std::string Ping() { return Raw(FrameType::kPing, 0, 0, std::string(8, 'p')); }

class FrameDecoderTest : public ::testing::Test {
 protected:
  // Decodes `bytes` whole, then again one octet at a time with a fresh decoder,
  // and expects the same outcome from both; returns it.
  Http2Error Decode(const std::string& bytes) {
    FrameCollector bytewise(/*record_headers=*/true);
    FrameDecoder slow(&bytewise, options_);
    const Slice whole = Slice::Copy(bytes);
    Http2Error slow_result;
    for (size_t i = 0; i < bytes.size(); ++i)
      slow_result = slow.Decode(whole.Sub(i, 1));

    collector_ = std::make_unique<FrameCollector>(/*record_headers=*/true);
    decoder_ = std::make_unique<FrameDecoder>(collector_.get(), options_);
    Http2Error result = decoder_->Decode(whole);
    EXPECT_EQ(result, slow_result);
    EXPECT_EQ(collector_->events(), bytewise.events())
        << collector_->ToString();
    EXPECT_EQ(decoder_->error_reason(), slow.error_reason());
    EXPECT_TRUE(collector_->violations().empty())
        << collector_->violations()[0];
    return result;
  }

  void ExpectConnectionError(const std::string& bytes, FrameDecodeError reason,
                             Http2ErrorCode code) {
    const Http2Error e = Decode(bytes);
    EXPECT_TRUE(e.is_connection_error()) << e;
    EXPECT_EQ(e.code(), code) << e;
    EXPECT_EQ(decoder_->error_reason(), reason)
        << FrameDecodeErrorName(decoder_->error_reason());
    EXPECT_TRUE(decoder_->failed());
  }

  // Expects `bytes` + a PING to give one stream error, then the PING.
  void ExpectStreamError(const std::string& bytes, uint32_t stream_id,
                         FrameDecodeError reason, Http2ErrorCode code) {
    const Http2Error e = Decode(bytes + Ping());
    ASSERT_TRUE(e.ok()) << e;
    std::vector<StreamErrorEvent> errors;
    for (const FrameEvent& event : collector_->events()) {
      if (const auto* s = std::get_if<StreamErrorEvent>(&event))
        errors.push_back(*s);
    }
    ASSERT_EQ(errors.size(), 1u) << collector_->ToString();
    EXPECT_EQ(errors[0].reason, reason);
    EXPECT_TRUE(errors[0].error.is_stream_error());
    EXPECT_EQ(errors[0].error.stream_id(), stream_id);
    EXPECT_EQ(errors[0].error.code(), code);
    const std::vector<Frame> frames = collector_->frames();
    ASSERT_EQ(frames.size(), 1u);  // Decoding went on: the PING.
    EXPECT_TRUE(std::holds_alternative<PingFrame>(frames[0]));
  }

  FrameDecoder::Options options_;
  std::unique_ptr<FrameCollector> collector_;
  std::unique_ptr<FrameDecoder> decoder_;
};

// ---- RFC 9113 section 3.4: the connection preface ----

TEST_F(FrameDecoderTest, Rfc3_4_ClientPrefaceThenFrames) {
  options_.expect_client_preface = true;
  options_.expect_settings_first = true;
  std::string bytes(kClientPreface);
  bytes += Raw(FrameType::kSettings, 0, 0, Entry(3, 100));
  bytes += Ping();
  ASSERT_TRUE(Decode(bytes).ok());
  EXPECT_EQ(collector_->frames().size(), 2u);
}

TEST_F(FrameDecoderTest, Rfc3_4_PrefaceMismatchIsProtocolError) {
  options_.expect_client_preface = true;
  for (size_t i = 0; i < kClientPreface.size(); ++i) {
    SCOPED_TRACE(i);
    std::string bytes(kClientPreface);
    bytes[i] ^= 0x20;
    bytes += Raw(FrameType::kSettings, 0, 0, "");
    ExpectConnectionError(bytes, FrameDecodeError::kInvalidPreface,
                          Http2ErrorCode::kProtocolError);
    EXPECT_TRUE(collector_->events().empty());
  }
  // An HTTP/1.1 request fails at its first octet, before 24 have arrived.
  ExpectConnectionError("GET / HTTP/1.1\r\n", FrameDecodeError::kInvalidPreface,
                        Http2ErrorCode::kProtocolError);
}

TEST_F(FrameDecoderTest, Rfc3_4_FirstFrameMustBeSettings) {
  options_.expect_settings_first = true;
  ExpectConnectionError(Ping(), FrameDecodeError::kSettingsExpected,
                        Http2ErrorCode::kProtocolError);
  ExpectConnectionError(Raw(FrameType::kSettings, kFlagAck, 0, ""),
                        FrameDecodeError::kSettingsExpected,
                        Http2ErrorCode::kProtocolError);
  ExpectConnectionError(Raw(0x20, 0, 0, ""),
                        FrameDecodeError::kSettingsExpected,
                        Http2ErrorCode::kProtocolError);
  ASSERT_TRUE(Decode(Raw(FrameType::kSettings, 0, 0, "") + Ping()).ok());
}

// ---- RFC 9113 section 4: frame format and size ----

TEST_F(FrameDecoderTest, Rfc4_2_FrameLargerThanMaxFrameSize) {
  const std::string max_data =
      Raw(FrameType::kData, 0, 1, std::string(16384, 'd'));
  ASSERT_TRUE(Decode(max_data).ok());
  ExpectConnectionError(Raw(FrameType::kData, 0, 1, std::string(16385, 'd')),
                        FrameDecodeError::kFrameTooLarge,
                        Http2ErrorCode::kFrameSizeError);
  EXPECT_TRUE(collector_->events().empty());
  // Decided on the header alone: the payload need not arrive.
  ExpectConnectionError(std::string("\xff\xff\xff\x01\x04\x00\x00\x00\x01", 9),
                        FrameDecodeError::kFrameTooLarge,
                        Http2ErrorCode::kFrameSizeError);
  // Unknown frame types are held to the limit too.
  ExpectConnectionError(Raw(0xee, 0, 0, std::string(16385, 'u')),
                        FrameDecodeError::kFrameTooLarge,
                        Http2ErrorCode::kFrameSizeError);
}

TEST_F(FrameDecoderTest, Rfc4_2_LargerMaxFrameSize) {
  options_.max_frame_size = 1 << 20;
  const std::string block(1 << 20, 'h');
  ASSERT_TRUE(Decode(Raw(FrameType::kHeaders, kFlagEndHeaders, 1, block)).ok());
  ASSERT_EQ(collector_->frames().size(), 1u);
  EXPECT_EQ(std::get<HeadersFrame>(collector_->frames()[0]).fragment, block);
  ExpectConnectionError(
      Raw(FrameType::kPing, 0, 0, std::string((1 << 20) + 1, 'p')),
      FrameDecodeError::kFrameTooLarge, Http2ErrorCode::kFrameSizeError);
}

TEST_F(FrameDecoderTest, SetMaxFrameSizeAppliesToTheNextFrame) {
  FrameCollector collector;
  FrameDecoder decoder(&collector);
  const std::string big = Raw(FrameType::kData, 0, 1, std::string(20000, 'd'));
  decoder.set_max_frame_size(20000);
  ASSERT_TRUE(decoder.DecodeCopy(big).ok());
  decoder.set_max_frame_size(16384);
  EXPECT_EQ(decoder.DecodeCopy(big).code(), Http2ErrorCode::kFrameSizeError);
}

TEST_F(FrameDecoderTest, Rfc4_1_ReservedBitIgnored) {
  ASSERT_TRUE(
      Decode(Raw(FrameType::kData, kFlagEndStream, 0x80000005, "x")).ok());
  ASSERT_EQ(collector_->frames().size(), 1u);
  EXPECT_EQ(std::get<DataFrame>(collector_->frames()[0]).stream_id, 5u);
  // A stream id of only the reserved bit is stream 0.
  ExpectConnectionError(Raw(FrameType::kData, 0, 0x80000000, "x"),
                        FrameDecodeError::kStreamIdRequired,
                        Http2ErrorCode::kProtocolError);
}

// ---- Stream identifier zero / non-zero ----

TEST_F(FrameDecoderTest, Rfc6_StreamZeroWhereAStreamIsRequired) {
  const std::pair<FrameType, std::string> frames[] = {
      {FrameType::kData, "d"},
      {FrameType::kHeaders, ""},
      {FrameType::kPriority, std::string(5, '\0')},
      {FrameType::kRstStream, U32(0)},
      {FrameType::kPushPromise, U32(2)},
  };
  for (const auto& [type, payload] : frames) {
    SCOPED_TRACE(FrameTypeName(static_cast<uint8_t>(type)));
    ExpectConnectionError(Raw(type, kFlagEndHeaders, 0, payload),
                          FrameDecodeError::kStreamIdRequired,
                          Http2ErrorCode::kProtocolError);
  }
  // CONTINUATION on stream 0 can never continue a header block.
  ExpectConnectionError(Raw(FrameType::kContinuation, kFlagEndHeaders, 0, ""),
                        FrameDecodeError::kUnexpectedContinuation,
                        Http2ErrorCode::kProtocolError);
}

TEST_F(FrameDecoderTest, Rfc6_StreamNonZeroWhereForbidden) {
  ExpectConnectionError(Raw(FrameType::kSettings, 0, 1, ""),
                        FrameDecodeError::kStreamIdForbidden,
                        Http2ErrorCode::kProtocolError);
  ExpectConnectionError(Raw(FrameType::kPing, 0, 1, std::string(8, 'p')),
                        FrameDecodeError::kStreamIdForbidden,
                        Http2ErrorCode::kProtocolError);
  ExpectConnectionError(Raw(FrameType::kGoAway, 0, 3, U32(0) + U32(0)),
                        FrameDecodeError::kStreamIdForbidden,
                        Http2ErrorCode::kProtocolError);
}

// ---- 6.1 DATA ----

TEST_F(FrameDecoderTest, Rfc6_1_DataPaddingStripped) {
  const std::string payload =
      std::string(1, '\x03') + "abc" + std::string(3, '\0');
  ASSERT_TRUE(Decode(Raw(FrameType::kData, kFlagPadded, 1, payload)).ok());
  ASSERT_EQ(collector_->frames().size(), 1u);
  const DataFrame d = std::get<DataFrame>(collector_->frames()[0]);
  EXPECT_EQ(d.payload.ToString(), "abc");
  EXPECT_EQ(d.pad_length, uint8_t{3});
}

TEST_F(FrameDecoderTest, Rfc6_1_PaddingAsLongAsPayloadIsProtocolError) {
  // Length 4: pad length octet + 3 octets; a pad length of 3 fills it, 4 is too
  // many.
  ASSERT_TRUE(
      Decode(Raw(FrameType::kData, kFlagPadded, 1, std::string("\x03xxx", 4)))
          .ok());
  ExpectConnectionError(
      Raw(FrameType::kData, kFlagPadded, 1, std::string("\x04xxx", 4)),
      FrameDecodeError::kPaddingTooLong, Http2ErrorCode::kProtocolError);
  ExpectConnectionError(
      Raw(FrameType::kData, kFlagPadded, 1, std::string("\x01", 1)),
      FrameDecodeError::kPaddingTooLong, Http2ErrorCode::kProtocolError);
  // No room for the pad length octet itself.
  ExpectConnectionError(Raw(FrameType::kData, kFlagPadded, 1, ""),
                        FrameDecodeError::kFrameTooShort,
                        Http2ErrorCode::kFrameSizeError);
}

TEST_F(FrameDecoderTest, DataIsSlicedNotCopied) {
  const std::string frame =
      Raw(FrameType::kData, kFlagPadded, 1,
          std::string(1, '\x02') + std::string(1000, 'D') + "pp");
  const Slice input = Slice::Copy(frame);
  FrameCollector collector;
  FrameDecoder decoder(&collector);
  ASSERT_TRUE(decoder.Decode(input).ok());
  ASSERT_EQ(collector.data_pieces(), 1u);
  const DataFrame d = std::get<DataFrame>(collector.frames()[0]);
  ASSERT_EQ(d.payload.num_slices(), 1u);
  EXPECT_EQ(d.payload.front().data(), input.data() + kFrameHeaderSize + 1);
  EXPECT_TRUE(d.payload.front().SharesBlockWith(input));

  // Split across inputs: each piece points into its own input.
  collector.Clear();
  const Slice a = Slice::Copy(frame.substr(0, 500));
  const Slice b = Slice::Copy(frame.substr(500));
  ASSERT_TRUE(decoder.Decode(a).ok());
  ASSERT_TRUE(decoder.Decode(b).ok());
  const DataFrame d2 = std::get<DataFrame>(collector.frames()[0]);
  ASSERT_EQ(d2.payload.num_slices(), 2u);
  EXPECT_EQ(d2.payload.slice(0).data(), a.data() + kFrameHeaderSize + 1);
  EXPECT_EQ(d2.payload.slice(1).data(), b.data());
  EXPECT_EQ(d2.payload.ToString(), std::string(1000, 'D'));
}

TEST_F(FrameDecoderTest, EmptyDataFrames) {
  ASSERT_TRUE(
      Decode(Raw(FrameType::kData, kFlagEndStream, 1, "") +
             Raw(FrameType::kData, kFlagPadded, 1, std::string(1, '\0')))
          .ok());
  EXPECT_EQ(collector_->data_pieces(), 0u);
  EXPECT_EQ(collector_->frames().size(), 2u);
}

// ---- 6.2 HEADERS ----

TEST_F(FrameDecoderTest, Rfc6_2_HeadersWithPriorityAndPadding) {
  const std::string payload = std::string(1, '\x02') + U32(0x80000003) +
                              "\x10" + "frag" + std::string(2, '\0');
  ASSERT_TRUE(
      Decode(Raw(FrameType::kHeaders,
                 kFlagPadded | kFlagPriority | kFlagEndHeaders | kFlagEndStream,
                 5, payload))
          .ok());
  ASSERT_EQ(collector_->frames().size(), 1u);
  const HeadersFrame h = std::get<HeadersFrame>(collector_->frames()[0]);
  EXPECT_EQ(h.fragment, "frag");
  EXPECT_EQ(h.priority, (PriorityFields{3, true, 0x10}));
  EXPECT_EQ(h.pad_length, uint8_t{2});
  EXPECT_TRUE(h.end_stream);
}

TEST_F(FrameDecoderTest, Rfc6_2_HeadersTooShortOrOverPadded) {
  ExpectConnectionError(
      Raw(FrameType::kHeaders, kFlagPriority | kFlagEndHeaders, 1, "1234"),
      FrameDecodeError::kFrameTooShort, Http2ErrorCode::kFrameSizeError);
  ExpectConnectionError(
      Raw(FrameType::kHeaders, kFlagPadded | kFlagPriority | kFlagEndHeaders, 1,
          std::string("\0"
                      "1234",
                      5)),
      FrameDecodeError::kFrameTooShort, Http2ErrorCode::kFrameSizeError);
  ExpectConnectionError(
      Raw(FrameType::kHeaders, kFlagPadded | kFlagEndHeaders, 1, ""),
      FrameDecodeError::kFrameTooShort, Http2ErrorCode::kFrameSizeError);
  // Padding longer than what follows the priority fields.
  ExpectConnectionError(
      Raw(FrameType::kHeaders, kFlagPadded | kFlagPriority | kFlagEndHeaders, 1,
          std::string(1, '\x02') + U32(0) + "\x0f" + "x"),
      FrameDecodeError::kPaddingTooLong, Http2ErrorCode::kProtocolError);
  ASSERT_TRUE(Decode(Raw(FrameType::kHeaders,
                         kFlagPadded | kFlagPriority | kFlagEndHeaders, 1,
                         std::string(1, '\x01') + U32(0) + "\x0f" + "x"))
                  .ok());
  EXPECT_EQ(std::get<HeadersFrame>(collector_->frames()[0]).fragment, "");
}

TEST_F(FrameDecoderTest, Rfc5_3_1_HeadersDependingOnItself) {
  ExpectConnectionError(
      Raw(FrameType::kHeaders, kFlagPriority | kFlagEndHeaders, 7,
          U32(7) + "\x0f"),
      FrameDecodeError::kHeadersSelfDependency, Http2ErrorCode::kProtocolError);
  // OnFrameHeader came, the frame did not.
  ASSERT_EQ(collector_->events().size(), 1u);
  EXPECT_TRUE(std::holds_alternative<FrameHeader>(collector_->events()[0]));
}

// ---- 6.3 PRIORITY ----

TEST_F(FrameDecoderTest, Rfc6_3_PriorityWrongLengthIsStreamFrameSizeError) {
  ExpectStreamError(Raw(FrameType::kPriority, 0, 3, "1234"), 3,
                    FrameDecodeError::kBadPriorityLength,
                    Http2ErrorCode::kFrameSizeError);
  ExpectStreamError(Raw(FrameType::kPriority, 0, 3, "123456"), 3,
                    FrameDecodeError::kBadPriorityLength,
                    Http2ErrorCode::kFrameSizeError);
}

TEST_F(FrameDecoderTest, Rfc5_3_1_PriorityOnItselfIsStreamProtocolError) {
  ExpectStreamError(Raw(FrameType::kPriority, 0, 3, U32(3) + "\x0f"), 3,
                    FrameDecodeError::kPrioritySelfDependency,
                    Http2ErrorCode::kProtocolError);
}

// ---- 6.4 RST_STREAM ----

TEST_F(FrameDecoderTest, Rfc6_4_RstStreamLengthMustBe4) {
  for (size_t n : {0, 3, 5, 8}) {
    ExpectConnectionError(
        Raw(FrameType::kRstStream, 0, 1, std::string(n, '\0')),
        FrameDecodeError::kBadRstStreamLength, Http2ErrorCode::kFrameSizeError);
  }
}

TEST_F(FrameDecoderTest, Rfc7_UnknownErrorCodesPassThrough) {
  ASSERT_TRUE(Decode(Raw(FrameType::kRstStream, 0, 1, U32(0x1234))).ok());
  EXPECT_EQ(collector_->frames()[0],
            Frame(RstStreamFrame{1, static_cast<Http2ErrorCode>(0x1234)}));
}

// ---- 6.5 SETTINGS ----

TEST_F(FrameDecoderTest, Rfc6_5_SettingsLengthMultipleOf6) {
  for (size_t n : {1, 5, 7, 13}) {
    ExpectConnectionError(Raw(FrameType::kSettings, 0, 0, std::string(n, '\0')),
                          FrameDecodeError::kBadSettingsLength,
                          Http2ErrorCode::kFrameSizeError);
  }
}

TEST_F(FrameDecoderTest, Rfc6_5_SettingsAckWithPayload) {
  ExpectConnectionError(Raw(FrameType::kSettings, kFlagAck, 0, Entry(1, 0)),
                        FrameDecodeError::kSettingsAckWithPayload,
                        Http2ErrorCode::kFrameSizeError);
}

TEST_F(FrameDecoderTest, Rfc6_5_2_SettingValuesOutOfRange) {
  ExpectConnectionError(
      Raw(FrameType::kSettings, 0, 0, Entry(1, 5) + Entry(2, 2)),
      FrameDecodeError::kInvalidSettingValue, Http2ErrorCode::kProtocolError);
  ExpectConnectionError(Raw(FrameType::kSettings, 0, 0, Entry(4, 0x80000000)),
                        FrameDecodeError::kInvalidSettingValue,
                        Http2ErrorCode::kFlowControlError);
  ExpectConnectionError(Raw(FrameType::kSettings, 0, 0, Entry(5, 16383)),
                        FrameDecodeError::kInvalidSettingValue,
                        Http2ErrorCode::kProtocolError);
  ExpectConnectionError(Raw(FrameType::kSettings, 0, 0, Entry(5, 1 << 24)),
                        FrameDecodeError::kInvalidSettingValue,
                        Http2ErrorCode::kProtocolError);
  // No OnSettings for the frame: the valid entry before the bad one is not
  // delivered.
  for (const FrameEvent& e : collector_->events()) {
    EXPECT_FALSE(std::holds_alternative<Frame>(e));
  }
}

TEST_F(FrameDecoderTest, Rfc6_5_2_UnknownSettingsAndBoundaryValuesAccepted) {
  const std::string entries = Entry(2, 1) + Entry(4, 0x7fffffff) +
                              Entry(5, 16384) + Entry(5, (1 << 24) - 1) +
                              Entry(0, 9) + Entry(0xffff, 0xffffffff);
  ASSERT_TRUE(Decode(Raw(FrameType::kSettings, 0, 0, entries)).ok());
  const SettingsFrame s = std::get<SettingsFrame>(collector_->frames()[0]);
  ASSERT_EQ(s.settings.size(), 6u);
  EXPECT_EQ(s.settings[5], Setting(0xffff, 0xffffffff));
}

// ---- 6.6 PUSH_PROMISE ----

TEST_F(FrameDecoderTest, Rfc6_6_PushPromiseFields) {
  ASSERT_TRUE(
      Decode(Raw(FrameType::kPushPromise, kFlagEndHeaders | kFlagPadded, 1,
                 std::string(1, '\x01') + U32(0x80000002) + "blk" +
                     std::string(1, '\0')))
          .ok());
  EXPECT_EQ(collector_->frames()[0],
            Frame(PushPromiseFrame{1, 2, true, "blk", uint8_t{1}}));
  ExpectConnectionError(Raw(FrameType::kPushPromise, kFlagEndHeaders, 1, "123"),
                        FrameDecodeError::kFrameTooShort,
                        Http2ErrorCode::kFrameSizeError);
  ExpectConnectionError(
      Raw(FrameType::kPushPromise, kFlagEndHeaders | kFlagPadded, 1,
          std::string(1, '\x02') + U32(2) + "x"),
      FrameDecodeError::kPaddingTooLong, Http2ErrorCode::kProtocolError);
}

// ---- 6.7 PING ----

TEST_F(FrameDecoderTest, Rfc6_7_PingLengthMustBe8) {
  for (size_t n : {0, 7, 9, 16}) {
    ExpectConnectionError(Raw(FrameType::kPing, 0, 0, std::string(n, 'p')),
                          FrameDecodeError::kBadPingLength,
                          Http2ErrorCode::kFrameSizeError);
  }
}

// ---- 6.8 GOAWAY ----

TEST_F(FrameDecoderTest, Rfc6_8_GoAway) {
  ASSERT_TRUE(
      Decode(Raw(FrameType::kGoAway, 0, 0, U32(0x80000009) + U32(2) + "dbg"))
          .ok());
  EXPECT_EQ(collector_->frames()[0],
            Frame(GoAwayFrame{9, Http2ErrorCode::kInternalError, "dbg"}));
  ExpectConnectionError(Raw(FrameType::kGoAway, 0, 0, "1234567"),
                        FrameDecodeError::kFrameTooShort,
                        Http2ErrorCode::kFrameSizeError);
}

// ---- 6.9 WINDOW_UPDATE ----

TEST_F(FrameDecoderTest, Rfc6_9_WindowUpdateLengthMustBe4) {
  for (size_t n : {0, 3, 5}) {
    ExpectConnectionError(
        Raw(FrameType::kWindowUpdate, 0, 1, std::string(n, '\1')),
        FrameDecodeError::kBadWindowUpdateLength,
        Http2ErrorCode::kFrameSizeError);
  }
}

TEST_F(FrameDecoderTest, Rfc6_9_ZeroIncrementOnStreamIsStreamError) {
  ExpectStreamError(Raw(FrameType::kWindowUpdate, 0, 1, U32(0)), 1,
                    FrameDecodeError::kZeroStreamWindowIncrement,
                    Http2ErrorCode::kProtocolError);
  // The reserved bit does not make an increment.
  ExpectStreamError(Raw(FrameType::kWindowUpdate, 0, 1, U32(0x80000000)), 1,
                    FrameDecodeError::kZeroStreamWindowIncrement,
                    Http2ErrorCode::kProtocolError);
}

TEST_F(FrameDecoderTest, Rfc6_9_ZeroIncrementOnConnectionIsConnectionError) {
  ExpectConnectionError(Raw(FrameType::kWindowUpdate, 0, 0, U32(0)),
                        FrameDecodeError::kZeroConnectionWindowIncrement,
                        Http2ErrorCode::kProtocolError);
}

TEST_F(FrameDecoderTest, Rfc6_9_IncrementReservedBitIgnored) {
  ASSERT_TRUE(
      Decode(Raw(FrameType::kWindowUpdate, 0, 0, U32(0xffffffff))).ok());
  EXPECT_EQ(collector_->frames()[0], Frame(WindowUpdateFrame{0, 0x7fffffff}));
}

// ---- 6.10 CONTINUATION ----

std::string OpenHeaders(uint32_t stream) {
  return Raw(FrameType::kHeaders, 0, stream, "open");
}

TEST_F(FrameDecoderTest, Rfc6_10_ContinuationSequence) {
  ASSERT_TRUE(Decode(OpenHeaders(1) + Raw(FrameType::kContinuation, 0, 1, "a") +
                     Raw(FrameType::kContinuation, 0, 1, "") +
                     Raw(FrameType::kContinuation, kFlagEndHeaders, 1, "b") +
                     Ping())
                  .ok());
  EXPECT_EQ(collector_->frames().size(), 5u);
  EXPECT_FALSE(decoder_->in_header_block());
}

TEST_F(FrameDecoderTest, Rfc6_10_AnyOtherFrameInsideAHeaderBlock) {
  const std::string others[] = {
      Raw(FrameType::kData, 0, 1, "x"),
      Raw(FrameType::kHeaders, kFlagEndHeaders, 1, ""),
      Raw(FrameType::kPriority, 0, 1, U32(0) + "\x0f"),
      Raw(FrameType::kRstStream, 0, 1, U32(8)),
      Raw(FrameType::kSettings, 0, 0, ""),
      Raw(FrameType::kSettings, kFlagAck, 0, ""),
      Raw(FrameType::kPushPromise, kFlagEndHeaders, 1, U32(2)),
      Ping(),
      Raw(FrameType::kGoAway, 0, 0, U32(0) + U32(0)),
      Raw(FrameType::kWindowUpdate, 0, 0, U32(1)),
      Raw(FrameType::kContinuation, kFlagEndHeaders, 3, ""),  // Wrong stream.
      Raw(0x0b, 0, 0, ""),                                    // Unknown type.
      Raw(0xff, 0, 1, "zz"),
  };
  for (const std::string& other : others) {
    SCOPED_TRACE(
        ParseFrameHeader(reinterpret_cast<const uint8_t*>(other.data())));
    ExpectConnectionError(OpenHeaders(1) + other,
                          FrameDecodeError::kExpectedContinuation,
                          Http2ErrorCode::kProtocolError);
    ExpectConnectionError(Raw(FrameType::kPushPromise, 0, 1, U32(2)) + other,
                          FrameDecodeError::kExpectedContinuation,
                          Http2ErrorCode::kProtocolError);
    ExpectConnectionError(
        OpenHeaders(1) + Raw(FrameType::kContinuation, 0, 1, "c") + other,
        FrameDecodeError::kExpectedContinuation,
        Http2ErrorCode::kProtocolError);
  }
}

TEST_F(FrameDecoderTest, Rfc6_10_ContinuationWithoutHeaderBlock) {
  ExpectConnectionError(Raw(FrameType::kContinuation, kFlagEndHeaders, 1, "x"),
                        FrameDecodeError::kUnexpectedContinuation,
                        Http2ErrorCode::kProtocolError);
  ExpectConnectionError(
      Raw(FrameType::kHeaders, kFlagEndHeaders, 1, "") +
          Raw(FrameType::kContinuation, kFlagEndHeaders, 1, "x"),
      FrameDecodeError::kUnexpectedContinuation,
      Http2ErrorCode::kProtocolError);
  ExpectConnectionError(
      OpenHeaders(1) + Raw(FrameType::kContinuation, kFlagEndHeaders, 1, "") +
          Raw(FrameType::kContinuation, kFlagEndHeaders, 1, ""),
      FrameDecodeError::kUnexpectedContinuation,
      Http2ErrorCode::kProtocolError);
}

// ---- 5.5: extensions ----

TEST_F(FrameDecoderTest, Rfc5_5_UnknownFrameTypesIgnored) {
  ASSERT_TRUE(Decode(Raw(0x0a, 0xff, 0, "origin") +
                     Raw(0xfe, 0x00, 7, std::string(300, 'u')) +
                     Raw(0x10, 0x01, 0x80000001, "") + Ping())
                  .ok());
  const std::vector<Frame> frames = collector_->frames();
  ASSERT_EQ(frames.size(), 4u);
  EXPECT_EQ(frames[0], Frame(UnknownFrame{0x0a, 0xff, 0, 6}));
  EXPECT_EQ(frames[1], Frame(UnknownFrame{0xfe, 0x00, 7, 300}));
  EXPECT_EQ(frames[2], Frame(UnknownFrame{0x10, 0x01, 1, 0}));
}

TEST_F(FrameDecoderTest, Rfc4_1_UnknownFlagsIgnored) {
  // Every flag a type does not define is set.
  ASSERT_TRUE(
      Decode(Raw(FrameType::kData, 0xf6, 1, "d") +
             Raw(FrameType::kHeaders, 0xd2 | kFlagEndHeaders, 1, "h") +
             Raw(FrameType::kPriority, 0xff, 1, U32(0) + "\x0f") +
             Raw(FrameType::kRstStream, 0xff, 1, U32(0)) +
             Raw(FrameType::kSettings, 0xfe, 0, "") +
             Raw(FrameType::kPushPromise, 0xf3 | kFlagEndHeaders, 1, U32(2)) +
             Raw(FrameType::kPing, 0xfe, 0, std::string(8, '\0')) +
             Raw(FrameType::kGoAway, 0xff, 0, U32(0) + U32(0)) +
             Raw(FrameType::kWindowUpdate, 0xff, 0, U32(1)))
          .ok());
  const std::vector<Frame> frames = collector_->frames();
  ASSERT_EQ(frames.size(), 9u);
  EXPECT_FALSE(std::get<DataFrame>(frames[0]).end_stream);
  EXPECT_EQ(std::get<DataFrame>(frames[0]).payload.ToString(), "d");
  EXPECT_FALSE(std::get<HeadersFrame>(frames[1]).end_stream);
  EXPECT_FALSE(std::get<SettingsFrame>(frames[4]).ack);
  EXPECT_FALSE(std::get<PingFrame>(frames[6]).ack);
}

// ---- Error handling ----

TEST_F(FrameDecoderTest, ConnectionErrorIsSticky) {
  ExpectConnectionError(Raw(FrameType::kPing, 0, 0, "short"),
                        FrameDecodeError::kBadPingLength,
                        Http2ErrorCode::kFrameSizeError);
  const Http2Error first = decoder_->error();
  const size_t events = collector_->events().size();
  EXPECT_EQ(decoder_->DecodeCopy(Ping()), first);
  EXPECT_EQ(decoder_->Decode(Slice()), first);
  EXPECT_EQ(collector_->events().size(), events);
}

TEST_F(FrameDecoderTest, ErrorsAfterValidFramesKeepThem) {
  ExpectConnectionError(
      Ping() + Raw(FrameType::kSettings, 0, 0, "12345") + Ping(),
      FrameDecodeError::kBadSettingsLength, Http2ErrorCode::kFrameSizeError);
  EXPECT_EQ(collector_->frames().size(), 1u);
}

class StoppingListener : public FrameCollector {
 public:
  FrameDecoder* decoder = nullptr;
  void OnHeaders(const FrameHeader& header, const PriorityFields* priority,
                 std::string_view fragment) override {
    FrameCollector::OnHeaders(header, priority, fragment);
    decoder->Stop(Http2Error::Connection(Http2ErrorCode::kRefusedStream, "no"));
  }
  void OnData(uint32_t stream_id, Slice piece) override {
    FrameCollector::OnData(stream_id, std::move(piece));
    decoder->Stop(Http2Error::Stream(stream_id,
                                     Http2ErrorCode::kFlowControlError, "win"));
  }
};

TEST_F(FrameDecoderTest, StopFromACallback) {
  StoppingListener listener;
  FrameDecoder decoder(&listener);
  listener.decoder = &decoder;
  const Http2Error e = decoder.DecodeCopy(
      Ping() + Raw(FrameType::kHeaders, kFlagEndHeaders, 1, "h") + Ping());
  EXPECT_EQ(e, Http2Error::Connection(Http2ErrorCode::kRefusedStream, "no"));
  EXPECT_EQ(decoder.error_reason(), FrameDecodeError::kStoppedByListener);
  EXPECT_EQ(listener.frames().size(),
            2u);  // PING, HEADERS; not the second PING.

  // Stopped in OnData mid-frame (split input): no OnDataEnd; a stream error
  // given to Stop becomes a connection error.
  StoppingListener data_listener;
  FrameDecoder data_decoder(&data_listener);
  data_listener.decoder = &data_decoder;
  const std::string frame = Raw(FrameType::kData, 0, 1, "0123456789");
  const Slice input = Slice::Copy(frame);
  EXPECT_TRUE(data_decoder.Decode(input.Sub(0, 12)).is_connection_error());
  EXPECT_EQ(data_decoder.Decode(input.Sub(12, frame.size() - 12)).code(),
            Http2ErrorCode::kFlowControlError);
  EXPECT_TRUE(data_listener.frames().empty());
  EXPECT_EQ(data_listener.data_pieces(), 1u);
}

// ---- State accessors and memory ----

TEST_F(FrameDecoderTest, FrameBoundaryAndHeaderBlockState) {
  FrameCollector collector;
  FrameDecoder decoder(&collector);
  EXPECT_TRUE(decoder.at_frame_boundary());
  const std::string headers = OpenHeaders(1);
  ASSERT_TRUE(decoder.DecodeCopy(headers.substr(0, 5)).ok());
  EXPECT_FALSE(decoder.at_frame_boundary());
  ASSERT_TRUE(decoder.DecodeCopy(headers.substr(5)).ok());
  EXPECT_TRUE(decoder.at_frame_boundary());
  EXPECT_TRUE(decoder.in_header_block());
}

TEST_F(FrameDecoderTest, ScratchIsBoundedByMaxFrameSize) {
  FrameCollector collector;
  FrameDecoder decoder(&collector);
  // Split control frames of growing size: the scratch grows to fit, never
  // beyond 16384.
  for (size_t n : {10, 100, 1000, 9000, 16384 - 8}) {
    const std::string frame =
        Raw(FrameType::kGoAway, 0, 0, U32(0) + U32(0) + std::string(n, 'g'));
    ASSERT_TRUE(decoder.DecodeCopy(frame.substr(0, 12)).ok());
    ASSERT_TRUE(decoder.DecodeCopy(frame.substr(12)).ok());
    EXPECT_LE(decoder.scratch_capacity(), 16384u);
  }
  EXPECT_EQ(collector.frames().size(), 5u);
  // A whole frame in one input needs no scratch at all.
  FrameDecoder fresh(&collector);
  ASSERT_TRUE(
      fresh.DecodeCopy(Raw(FrameType::kGoAway, 0, 0, std::string(5000, 'g')))
          .ok());
  EXPECT_EQ(fresh.scratch_capacity(), 0u);
}

TEST(FrameDecodeErrorTest, NamesAndClasses) {
  EXPECT_STREQ(FrameDecodeErrorName(FrameDecodeError::kOk), "ok");
  EXPECT_STREQ(FrameDecodeErrorName(FrameDecodeError::kFrameTooLarge),
               "frame_too_large");
  EXPECT_TRUE(IsFrameStreamError(FrameDecodeError::kZeroStreamWindowIncrement));
  EXPECT_FALSE(
      IsFrameStreamError(FrameDecodeError::kZeroConnectionWindowIncrement));
  const Http2Error e =
      MakeFrameDecodeError(FrameDecodeError::kBadPriorityLength, 3);
  EXPECT_TRUE(e.is_stream_error());
  EXPECT_EQ(e.stream_id(), 3u);
  EXPECT_EQ(e.message(), "bad_priority_length");
  for (int i = 0;
       i <= static_cast<int>(FrameDecodeError::kZeroStreamWindowIncrement);
       ++i) {
    EXPECT_STRNE(FrameDecodeErrorName(static_cast<FrameDecodeError>(i)),
                 "unknown")
        << i;
  }
}

}  // namespace
}  // namespace transport
