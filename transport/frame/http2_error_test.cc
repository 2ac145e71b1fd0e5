#include "transport/frame/http2_error.h"

#include <sstream>

#include "gtest/gtest.h"

namespace transport {
namespace {

TEST(Http2ErrorCodeTest, EveryCodeHasItsRfcName) {
  const char* const kNames[] = {"NO_ERROR",
                                "PROTOCOL_ERROR",
                                "INTERNAL_ERROR",
                                "FLOW_CONTROL_ERROR",
                                "SETTINGS_TIMEOUT",
                                "STREAM_CLOSED",
                                "FRAME_SIZE_ERROR",
                                "REFUSED_STREAM",
                                "CANCEL",
                                "COMPRESSION_ERROR",
                                "CONNECT_ERROR",
                                "ENHANCE_YOUR_CALM",
                                "INADEQUATE_SECURITY",
                                "HTTP_1_1_REQUIRED"};
  for (uint32_t i = 0; i < 14; ++i) {
    const auto code = static_cast<Http2ErrorCode>(i);
    EXPECT_STREQ(Http2ErrorCodeName(code), kNames[i]) << i;
    EXPECT_TRUE(IsKnownHttp2ErrorCode(code));
  }
  EXPECT_STREQ(Http2ErrorCodeName(static_cast<Http2ErrorCode>(0xe)), "UNKNOWN");
  EXPECT_FALSE(IsKnownHttp2ErrorCode(static_cast<Http2ErrorCode>(0xe)));
}

TEST(Http2ErrorTest, OkByDefault) {
  Http2Error e;
  EXPECT_TRUE(e.ok());
  EXPECT_FALSE(e.is_stream_error());
  EXPECT_FALSE(e.is_connection_error());
  EXPECT_EQ(e.code(), Http2ErrorCode::kNoError);
  EXPECT_EQ(e.ToString(), "ok");
  EXPECT_EQ(e, Http2Error::Ok());
}

TEST(Http2ErrorTest, StreamErrorKeepsItsStream) {
  Http2Error e = Http2Error::Stream(5, Http2ErrorCode::kProtocolError, "bad");
  EXPECT_FALSE(e.ok());
  EXPECT_TRUE(e.is_stream_error());
  EXPECT_FALSE(e.is_connection_error());
  EXPECT_EQ(e.stream_id(), 5u);
  EXPECT_EQ(e.code(), Http2ErrorCode::kProtocolError);
  EXPECT_EQ(e.message(), "bad");
  EXPECT_EQ(e.ToString(), "stream 5 error PROTOCOL_ERROR: bad");
}

TEST(Http2ErrorTest, ConnectionError) {
  Http2Error e =
      Http2Error::Connection(Http2ErrorCode::kFrameSizeError, "too big");
  EXPECT_TRUE(e.is_connection_error());
  EXPECT_EQ(e.scope(), Http2Error::Scope::kConnection);
  EXPECT_EQ(e.stream_id(), 0u);
  EXPECT_EQ(e.ToString(), "connection error FRAME_SIZE_ERROR: too big");
  EXPECT_NE(e,
            Http2Error::Connection(Http2ErrorCode::kFrameSizeError, "other"));
  std::ostringstream os;
  os << Http2Error::Connection(static_cast<Http2ErrorCode>(99), "");
  EXPECT_EQ(os.str(), "connection error UNKNOWN(99)");
}

}  // namespace
}  // namespace transport
