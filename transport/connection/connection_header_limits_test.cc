// Header list limits (RFC 9113 6.5.2, 10.5.1): a block over our limit is
// decoded to its end and dropped, the stream hears OnHeaderListTooLarge and
// may be answered, and the connection (and every other stream on it) goes
// on. Only a block past max_header_block_bytes (the hard cap on what is
// buffered), a CONTINUATION flood, a block left unfinished, or an HPACK bomb
// is a connection error.

#include <memory>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "transport/connection/connection.h"
#include "transport/testing/connection_test_util.h"

namespace transport {
namespace testing {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;
using ::testing::SizeIs;
using ::testing::StartsWith;

// A request (or response) with `n` extra fields "x-k<i>: v<i>".
Fields WithEntries(Fields fields, int n) {
  for (int i = 0; i < n; ++i) {
    fields.emplace_back("x-k" + std::to_string(i), "v" + std::to_string(i));
  }
  return fields;
}

Fields WithValue(Fields fields, size_t size) {
  // '~' has a 13-bit Huffman code: sent raw, the block is as large as the
  // value.
  fields.emplace_back("x-big", std::string(size, '~'));
  return fields;
}

size_t ListSize(const Fields& fields) {
  return hpack::HeaderListSize(View(fields));
}

// gRPC's defaults: fields past 8 KiB dropped, 16 KiB advertised.
ConnectionOptions SoftLimitServer() {
  ConnectionOptions o = ServerOptions();
  o.soft_max_header_list_size = 8 << 10;
  o.local_settings.max_header_list_size = 16 << 10;
  return o;
}

class HeaderLimitsServerTest : public ::testing::Test {
 protected:
  void Init(const ConnectionOptions& options,
            const std::vector<Setting>& settings = {}) {
    conn_ = std::make_unique<Connection>(options, &events_, now_);
    events_.connection = conn_.get();
    peer_.Preface(settings).SettingsAck();
    ASSERT_TRUE(Feed());
    Read();
    events_.Clear();
  }
  // The listener answers an oversized request as a gRPC server does:
  // Trailers-Only, then RST_STREAM NO_ERROR for a request still open.
  void AnswerTooLarge() {
    events_.on_event = [this](const std::string& line, uint32_t id) {
      if (line.rfind("too_large ", 0) != 0) return;
      const Fields answer = {{":status", "200"}, {"grpc-status", "8"}};
      ASSERT_TRUE(conn_->SubmitHeaders(id, View(answer), true).ok());
      conn_->ResetStream(id, Http2ErrorCode::kNoError);
    };
  }
  bool Feed() { return conn_->Receive(peer_.TakeSlice(), now_); }
  Lines Read() { return ToStrings(peer_.Read(conn_.get())); }
  Lines Exchange() {
    Feed();
    return Read();
  }
  // A raw block in HEADERS + CONTINUATIONs of `frame` octets.
  void SendBlock(uint32_t id, std::string_view block, bool end_stream,
                 size_t frame) {
    peer_.HeadersFragment(id, block.substr(0, frame), end_stream,
                          block.size() <= frame);
    for (size_t at = frame; at < block.size(); at += frame) {
      peer_.Continuation(id, block.substr(at, frame),
                         at + frame >= block.size());
    }
  }

  ScriptedPeer peer_{Role::kClient};
  RecordingListener events_;
  std::unique_ptr<Connection> conn_;
  int64_t now_ = 0;
};

// The regression: with the default options, 64 KiB of request metadata was
// GOAWAY ENHANCE_YOUR_CALM, failing every other stream of the connection.
TEST_F(HeaderLimitsServerTest, Sec10_5_1_LargeBlockIsAStreamMatterOnly) {
  Init(ServerOptions());
  peer_.Headers(1, PostRequest(), false);  // A call in flight.
  peer_.Headers(3, WithValue(PostRequest(), 64 << 10), true);
  peer_.Data(1, "still here", true);
  EXPECT_THAT(Exchange(), ElementsAre("RST_STREAM 3 PROTOCOL_ERROR"));
  EXPECT_FALSE(conn_->dead());
  peer_.Headers(5, GetRequest(), true);
  EXPECT_THAT(Exchange(), IsEmpty());
  EXPECT_THAT(events_.Matching("headers"),
              ElementsAre(StartsWith("headers 1 :method=POST"),
                          StartsWith("headers 5 end :method=GET")));
  EXPECT_EQ(events_.body(1), "still here");
  ASSERT_TRUE(conn_->SubmitHeaders(1, View(Response()), true).ok());
  EXPECT_THAT(Read(), ElementsAre("HEADERS 1 end :status=200"));
}

TEST_F(HeaderLimitsServerTest, OversizedRequestIsAStreamTheListenerAnswers) {
  Init(SoftLimitServer());
  AnswerTooLarge();
  const Fields big = WithValue(PostRequest(), 32 << 10);
  peer_.Headers(1, big, false).Data(1, "body", true);
  EXPECT_THAT(Exchange(), ElementsAre("HEADERS 1 end :status=200 grpc-status=8",
                                      "RST_STREAM 1 NO_ERROR"));
  EXPECT_THAT(events_.lines(),
              ElementsAre("too_large 1 " + std::to_string(ListSize(big)) +
                              " kept 4",  // The pseudo-headers fit.
                          "closed 1"));
  EXPECT_FALSE(conn_->dead());
  EXPECT_EQ(conn_->num_active_streams(), 0u);
}

// Each size the issue measured, and 10,000 small entries: the stream is
// answered, a stream in flight beside it is untouched, later streams work.
TEST_F(HeaderLimitsServerTest, EverySizeUpToTheHardCapKeepsTheConnection) {
  Init(SoftLimitServer());
  AnswerTooLarge();
  const std::vector<Fields> requests = {
      WithValue(PostRequest(), 32 << 10), WithValue(PostRequest(), 64 << 10),
      WithValue(PostRequest(), 1 << 20), WithEntries(PostRequest(), 10000)};
  uint32_t id = 1;
  for (const Fields& request : requests) {
    events_.Clear();
    const uint32_t beside = id;
    const uint32_t big = id + 2;
    const uint32_t after = id + 4;
    id += 6;
    peer_.Headers(beside, PostRequest(), false);
    peer_.Headers(big, request, true);
    peer_.Data(beside, "beside", true);
    peer_.Headers(after, GetRequest(), true);
    // The request had ended: the answer closes the stream, no RST_STREAM.
    EXPECT_THAT(Exchange(), ElementsAre("HEADERS " + std::to_string(big) +
                                        " end :status=200 grpc-status=8"))
        << request.size();
    ASSERT_FALSE(conn_->dead()) << conn_->error().ToString();
    EXPECT_THAT(
        events_.Matching("too_large"),
        ElementsAre(StartsWith("too_large " + std::to_string(big) + " " +
                               std::to_string(ListSize(request)) + " kept")));
    EXPECT_THAT(events_.Matching("headers"), SizeIs(2));
    EXPECT_EQ(events_.body(beside), "beside");
    ASSERT_TRUE(conn_->SubmitHeaders(beside, View(Response()), true).ok());
    ASSERT_TRUE(conn_->SubmitHeaders(after, View(Response()), true).ok());
    EXPECT_THAT(Read(), SizeIs(2));
  }
}

// Fields dropped past the limit still entered the HPACK table: a later block
// that references them decodes to exactly what the peer sent.
TEST_F(HeaderLimitsServerTest, DroppedFieldsKeepTheHpackContextInStep) {
  Init(SoftLimitServer());
  AnswerTooLarge();
  peer_.Headers(1, WithEntries(PostRequest(), 2000), true);
  // The peer's encoder indexed the last entries; this request refers to
  // them (one octet each).
  Fields next = PostRequest();
  for (int i = 1990; i < 2000; ++i) {
    next.emplace_back("x-k" + std::to_string(i), "v" + std::to_string(i));
  }
  const std::string block = peer_.Encode(next);
  EXPECT_LT(block.size(), 40u);
  peer_.HeadersFragment(3, block, true, true);
  Feed();
  EXPECT_THAT(events_.Matching("headers"),
              ElementsAre("headers 3 end " + FieldsToString(next)));
}

// A listener that does not answer gets the old behaviour: RST_STREAM
// PROTOCOL_ERROR (a malformed request), and the connection goes on.
TEST_F(HeaderLimitsServerTest, UnansweredIsResetWithProtocolError) {
  Init(SoftLimitServer());
  peer_.Headers(1, WithValue(GetRequest(), 10 << 10), true);
  EXPECT_THAT(Exchange(), ElementsAre("RST_STREAM 1 PROTOCOL_ERROR"));
  EXPECT_THAT(events_.lines(),
              ElementsAre(StartsWith("too_large 1 "),
                          "reset 1 PROTOCOL_ERROR local", "closed 1"));
  EXPECT_FALSE(conn_->dead());
}

// Under the soft limit nothing changes, up to and including the limit.
TEST_F(HeaderLimitsServerTest, ExactlyAtTheSoftLimitIsAnOrdinaryRequest) {
  Init(SoftLimitServer());
  const size_t base = ListSize(GetRequest());
  const size_t field = std::string("x-big").size() + 32;
  const Fields at = WithValue(GetRequest(), (8 << 10) - base - field);
  ASSERT_EQ(ListSize(at), 8u << 10);
  peer_.Headers(1, at, true);
  peer_.Headers(3, WithValue(GetRequest(), (8 << 10) - base - field + 1), true);
  EXPECT_THAT(Exchange(), ElementsAre("RST_STREAM 3 PROTOCOL_ERROR"));
  EXPECT_THAT(events_.Matching("headers"),
              ElementsAre(StartsWith("headers 1")));
  EXPECT_THAT(events_.Matching("too_large"),
              ElementsAre(StartsWith("too_large 3")));
}

// Oversized trailers on a stream in flight: the listener answers with its
// status, and the trailers' END_STREAM closes the stream.
TEST_F(HeaderLimitsServerTest, OversizedRequestTrailers) {
  Init(SoftLimitServer());
  events_.on_event = [this](const std::string& line, uint32_t id) {
    if (line.rfind("too_large ", 0) != 0) return;
    ASSERT_TRUE(conn_->SubmitHeaders(id, View(Response()), true).ok());
  };
  peer_.Headers(1, PostRequest(), false).Data(1, "x", false);
  peer_.Headers(1, {{"x-big", std::string(9000, 't')}}, true);
  EXPECT_THAT(Exchange(), ElementsAre("HEADERS 1 end :status=200"));
  EXPECT_THAT(events_.Matching("too_large"),
              ElementsAre("too_large 1 9037 kept 0"));
  EXPECT_THAT(events_.Matching("closed"), ElementsAre("closed 1"));
  EXPECT_THAT(events_.Matching("reset"), IsEmpty());
}

// Our response has ended but waits behind flow control when oversized
// request trailers arrive: the stream completes with what we sent (the
// handler's status reaches the client), no reset.
TEST_F(HeaderLimitsServerTest, OversizedTrailersAfterOurResponseEnded) {
  Init(SoftLimitServer(), {{SettingId::kInitialWindowSize, 10}});
  peer_.Headers(1, PostRequest(), false).Data(1, "x", false);
  Feed();
  ASSERT_TRUE(conn_->SubmitHeaders(1, View(Response()), false).ok());
  SliceBuffer body;
  body.Append(std::string(25, 'b'));
  ASSERT_TRUE(conn_->SubmitData(1, std::move(body), false).ok());
  const Fields status = {{"grpc-status", "0"}};
  ASSERT_TRUE(conn_->SubmitTrailers(1, View(status)).ok());
  EXPECT_THAT(Read(), ElementsAre("HEADERS 1 :status=200",
                                  "DATA 1 " + std::string(10, 'b')));
  events_.Clear();
  peer_.Headers(1, {{"x-big", std::string(9000, 't')}}, true);
  EXPECT_THAT(Exchange(), IsEmpty());
  EXPECT_THAT(events_.lines(), ElementsAre("too_large 1 9037 kept 0"));
  peer_.WindowUpdate(1, 100);
  EXPECT_THAT(Exchange(), ElementsAre("DATA 1 " + std::string(15, 'b'),
                                      "HEADERS 1 end grpc-status=0"));
  EXPECT_THAT(events_.Matching("closed"), ElementsAre("closed 1"));
  EXPECT_THAT(events_.Matching("reset"), IsEmpty());
  EXPECT_FALSE(conn_->dead());
}

// A second HEADERS without END_STREAM is malformed (8.1: trailers end the
// stream), over the limit or not: PROTOCOL_ERROR, not a stream the listener
// answers.
TEST_F(HeaderLimitsServerTest, Sec8_1_OversizedTrailersWithoutEndStream) {
  Init(SoftLimitServer());
  AnswerTooLarge();
  peer_.Headers(1, PostRequest(), false).Data(1, "x", false);
  peer_.Headers(1, {{"x-big", std::string(9000, 't')}}, false);
  EXPECT_THAT(Exchange(), ElementsAre("RST_STREAM 1 PROTOCOL_ERROR"));
  EXPECT_THAT(events_.Matching("too_large"), IsEmpty());
  EXPECT_EQ(conn_->num_active_streams(), 0u);
  EXPECT_FALSE(conn_->dead());
}

TEST_F(HeaderLimitsServerTest, OversizedRequestOverTheStreamLimitIsRefused) {
  ConnectionOptions o = SoftLimitServer();
  o.local_settings.max_concurrent_streams = 1;
  Init(o);
  AnswerTooLarge();
  peer_.Headers(1, PostRequest(), false);
  peer_.Headers(3, WithValue(PostRequest(), 9000), true);
  EXPECT_THAT(Exchange(), ElementsAre("RST_STREAM 3 REFUSED_STREAM"));
  EXPECT_THAT(events_.Matching("too_large"), IsEmpty());
}

// Past the hard cap on what is buffered: a connection error, as before.
TEST_F(HeaderLimitsServerTest, PastTheHardCapIsEnhanceYourCalm) {
  ConnectionOptions o = SoftLimitServer();
  o.max_header_block_bytes = 256 << 10;
  Init(o);
  peer_.Headers(1, WithValue(PostRequest(), 400 << 10), true);
  EXPECT_FALSE(Feed());
  EXPECT_THAT(Read(), ElementsAre("GOAWAY 0 ENHANCE_YOUR_CALM"));
  EXPECT_THAT(events_.Matching("too_large"), IsEmpty());
}

// The block buffer and the list storage an oversized block grew (one large
// literal, or many fields) are given back.
TEST_F(HeaderLimitsServerTest, OversizedBlockMemoryIsReleased) {
  Init(SoftLimitServer());
  const size_t idle = conn_->header_block_memory();
  EXPECT_LT(idle, 64u << 10);
  peer_.Headers(1, WithValue(PostRequest(), 1 << 20), true);
  peer_.Headers(3, GetRequest(), true);
  EXPECT_THAT(Exchange(), ElementsAre("RST_STREAM 1 PROTOCOL_ERROR"));
  EXPECT_THAT(events_.Matching("headers"),
              ElementsAre(StartsWith("headers 3")));
  EXPECT_LT(conn_->header_block_memory(), 64u << 10);
  peer_.Headers(5, WithEntries(PostRequest(), 10000), true);
  EXPECT_THAT(Exchange(), ElementsAre("RST_STREAM 5 PROTOCOL_ERROR"));
  EXPECT_LT(conn_->header_block_memory(), 64u << 10);
}

// The edges of the default hard cap (2 MiB of block octets): a block of
// exactly the cap is decoded and dropped, one octet more is GOAWAY.
std::string BlockOfSize(size_t size) {
  // :method GET, :scheme http, :path /, then a literal "x-big" without
  // indexing whose raw value (a 4-octet length) fills the block.
  const std::string head = "\x82\x86\x84";
  const std::string name = std::string("\x00\x05", 2) + "x-big";
  const size_t value = size - head.size() - name.size() - 4;
  std::string len = "\x7f";  // 127, then the rest in 7-bit groups.
  size_t rest = value - 127;
  for (int i = 0; i < 3; ++i) {
    len += static_cast<char>((rest & 0x7f) | (i < 2 ? 0x80 : 0));
    rest >>= 7;
  }
  return head + name + len + std::string(value, 'v');
}

TEST_F(HeaderLimitsServerTest, DefaultHardCapIsDecodedAndDropped) {
  const size_t cap = ConnectionOptions().max_header_block_bytes;
  ASSERT_EQ(cap, size_t{2} << 20);
  Init(ServerOptions());
  const std::string block = BlockOfSize(cap);
  ASSERT_EQ(block.size(), cap);
  SendBlock(1, block, true, 16384);
  EXPECT_THAT(Exchange(), ElementsAre("RST_STREAM 1 PROTOCOL_ERROR"));
  ASSERT_FALSE(conn_->dead()) << conn_->error().ToString();
  EXPECT_THAT(events_.Matching("too_large"),
              ElementsAre(StartsWith("too_large 1 ")));
  peer_.Headers(3, GetRequest(), true);
  Feed();
  EXPECT_THAT(events_.Matching("headers"),
              ElementsAre(StartsWith("headers 3")));
}

TEST_F(HeaderLimitsServerTest, DefaultHardCapPlusOneIsEnhanceYourCalm) {
  const size_t cap = ConnectionOptions().max_header_block_bytes;
  Init(ServerOptions());
  const std::string block = BlockOfSize(cap + 1);
  ASSERT_EQ(block.size(), cap + 1);
  SendBlock(1, block, true, 16384);
  EXPECT_FALSE(Feed());
  EXPECT_THAT(Read(), ElementsAre("GOAWAY 0 ENHANCE_YOUR_CALM"));
  EXPECT_EQ(conn_->error().reason(),
            ConnectionErrorReason::kHeaderBlockTooLarge);
  EXPECT_THAT(events_.Matching("too_large"), IsEmpty());
}

// 1 MiB in 4 KiB CONTINUATIONs (256 frames, more than the 128 allowed
// whatever their size) is not a flood: it averages well above 1 KiB.
TEST_F(HeaderLimitsServerTest, LargeBlockInSmallFragmentsIsNotAFlood) {
  Init(SoftLimitServer());
  AnswerTooLarge();
  const std::string block = peer_.Encode(WithValue(PostRequest(), 1 << 20));
  SendBlock(1, block, true, 4096);
  EXPECT_THAT(Exchange(),
              ElementsAre("HEADERS 1 end :status=200 grpc-status=8"));
  ASSERT_FALSE(conn_->dead()) << conn_->error().ToString();
  // Empty CONTINUATIONs past the 128 are one.
  peer_.HeadersFragment(3, peer_.Encode(GetRequest()), true, false);
  for (int i = 0; i < 129; ++i) peer_.Continuation(3, "", false);
  EXPECT_FALSE(Feed());
  EXPECT_THAT(Read(), ElementsAre("GOAWAY 1 ENHANCE_YOUR_CALM"));
  EXPECT_EQ(conn_->error().reason(), ConnectionErrorReason::kContinuationFlood);
}

// A block begun and never finished holds the connection (nothing else may
// come between its frames) and its buffer: header_block_timeout_ns ends it.
TEST_F(HeaderLimitsServerTest, UnfinishedBlockTimesOut) {
  ConnectionOptions o = SoftLimitServer();
  o.header_block_timeout_ns = 1000;
  Init(o);
  EXPECT_EQ(conn_->NextDeadline(), kNoDeadline);
  now_ = 50;
  const std::string block = peer_.Encode(WithValue(PostRequest(), 100000));
  peer_.HeadersFragment(1, block.substr(0, 16384), true, false);
  EXPECT_TRUE(Feed());
  EXPECT_EQ(conn_->NextDeadline(), 1050);
  conn_->OnTimer(1049);
  EXPECT_FALSE(conn_->dead());
  conn_->OnTimer(1050);
  EXPECT_TRUE(conn_->dead());
  EXPECT_THAT(Read(), ElementsAre("GOAWAY 0 ENHANCE_YOUR_CALM"));
  EXPECT_EQ(conn_->error().reason(),
            ConnectionErrorReason::kHeaderBlockTimeout);
}

TEST_F(HeaderLimitsServerTest, FinishedBlockClearsTheTimeout) {
  ConnectionOptions o = SoftLimitServer();
  o.header_block_timeout_ns = 1000;
  Init(o);
  peer_.Headers(1, WithValue(GetRequest(), 20000), true);  // CONTINUATIONs.
  EXPECT_THAT(Exchange(), ElementsAre("RST_STREAM 1 PROTOCOL_ERROR"));
  EXPECT_EQ(conn_->NextDeadline(), kNoDeadline);
  conn_->OnTimer(5000);
  EXPECT_FALSE(conn_->dead());
}

// ---- Client role: response headers and trailers over our limit ----

class HeaderLimitsClientTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ConnectionOptions o = ClientOptions();
    o.soft_max_header_list_size = 8 << 10;
    o.local_settings.max_header_list_size = 1 << 20;
    conn_ = std::make_unique<Connection>(o, &events_, 0);
    events_.connection = conn_.get();
    peer_.Preface().SettingsAck();
    ASSERT_TRUE(Feed());
    Read();
    events_.Clear();
  }
  bool Feed() { return conn_->Receive(peer_.TakeSlice(), 0); }
  Lines Read() { return ToStrings(peer_.Read(conn_.get())); }
  Lines Exchange() {
    Feed();
    return Read();
  }
  uint32_t Request() {
    absl::StatusOr<uint32_t> id =
        conn_->SubmitRequest(View(GetRequest()), true);
    EXPECT_TRUE(id.ok()) << id.status();
    Read();
    return id.ok() ? *id : 0;
  }
  // The listener fails the call: ResetStream(CANCEL), as rpc's client does.
  void CancelTooLarge() {
    events_.on_event = [this](const std::string& line, uint32_t id) {
      if (line.rfind("too_large ", 0) == 0) {
        conn_->ResetStream(id, Http2ErrorCode::kCancel);
      }
    };
  }

  ScriptedPeer peer_{Role::kServer};
  RecordingListener events_;
  std::unique_ptr<Connection> conn_;
};

TEST_F(HeaderLimitsClientTest, OversizedResponseHeaders) {
  CancelTooLarge();
  const uint32_t a = Request();
  const uint32_t b = Request();
  events_.Clear();
  peer_.Headers(a, WithValue(Response(), 64 << 10), false);
  peer_.Headers(b, Response(), false).Data(b, "fine", false);
  peer_.Headers(b, {{"grpc-status", "0"}}, true);
  EXPECT_THAT(Exchange(), ElementsAre("RST_STREAM 1 CANCEL"));
  EXPECT_THAT(events_.lines(),
              ElementsAre(StartsWith("too_large 1 "),
                          StartsWith("headers 3 :status=200"),
                          "trailers 3 grpc-status=0", "closed 1", "closed 3"));
  EXPECT_EQ(events_.body(b), "fine");
  EXPECT_FALSE(conn_->dead());
}

// The trailers end a stream our request had ended: it is closed before the
// listener hears, so the call's failure (ResetStream) sends no needless
// RST_STREAM.
TEST_F(HeaderLimitsClientTest, OversizedTrailers) {
  CancelTooLarge();
  const uint32_t a = Request();
  peer_.Headers(a, Response(), false).Data(a, "msg", false);
  peer_.Headers(a, WithEntries({{"grpc-status", "0"}}, 10000), true);
  EXPECT_THAT(Exchange(), IsEmpty());
  EXPECT_THAT(events_.Matching("too_large"),
              ElementsAre(StartsWith("too_large 1 ")));
  EXPECT_THAT(events_.Matching("closed"), ElementsAre("closed 1"));
  EXPECT_THAT(events_.Matching("trailers"), IsEmpty());
  EXPECT_FALSE(conn_->dead());
  Request();
  EXPECT_EQ(conn_->num_active_streams(), 1u);
}

// Our request still open: the call's failure resets the stream.
TEST_F(HeaderLimitsClientTest, OversizedTrailersWhileTheRequestIsOpen) {
  CancelTooLarge();
  absl::StatusOr<uint32_t> a = conn_->SubmitRequest(View(GetRequest()), false);
  ASSERT_TRUE(a.ok());
  Read();
  peer_.Headers(*a, Response(), false);
  peer_.Headers(*a, WithEntries({{"grpc-status", "0"}}, 10000), true);
  EXPECT_THAT(Exchange(), ElementsAre("RST_STREAM 1 CANCEL"));
  EXPECT_FALSE(conn_->dead());
}

// Response headers that leave the stream open, unanswered: PROTOCOL_ERROR.
TEST_F(HeaderLimitsClientTest, UnansweredIsResetWithProtocolError) {
  const uint32_t a = Request();
  events_.Clear();
  peer_.Headers(a, WithValue(Response(), 9000), false);
  EXPECT_THAT(Exchange(), ElementsAre("RST_STREAM 1 PROTOCOL_ERROR"));
  EXPECT_THAT(events_.lines(),
              ElementsAre(StartsWith("too_large 1 "),
                          "reset 1 PROTOCOL_ERROR local", "closed 1"));
}

// A Trailers-Only response over the limit to a request that had ended:
// both sides are done, nothing to reset.
TEST_F(HeaderLimitsClientTest, UnansweredCompleteStreamIsNotReset) {
  const uint32_t a = Request();
  events_.Clear();
  peer_.Headers(a, WithValue(Response(), 9000), true);
  EXPECT_THAT(Exchange(), IsEmpty());
  EXPECT_THAT(events_.lines(),
              ElementsAre(StartsWith("too_large 1 "), "closed 1"));
}

}  // namespace
}  // namespace testing
}  // namespace transport
