#include "hpack/tool/ratio.h"

#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "hpack/tool/story.h"

namespace hpack {
namespace tool {
namespace {

// RFC 7541 C.4.1's request.
const std::vector<Field> kRequest = {{":method", "GET"},
                                     {":scheme", "http"},
                                     {":path", "/"},
                                     {":authority", "www.example.com"}};
// RFC 7541 C.6.1's response.
const std::vector<Field> kResponse = {{":status", "302"},
                                      {"cache-control", "private"},
                                      {"date", "Mon, 21 Oct 2013 20:13:21 GMT"},
                                      {"location", "https://www.example.com"}};

TEST(Http1TextTest, RequestLineHostAndFields) {
  Message m{true, kRequest};
  m.fields.push_back({"user-agent", "x"});
  EXPECT_EQ(Http1Text(m),
            "GET / HTTP/1.1\r\n"
            "Host: www.example.com\r\n"
            "user-agent: x\r\n"
            "\r\n");
}

TEST(Http1TextTest, StatusLineWithReasonPhrase) {
  EXPECT_EQ(Http1Text(Message{false, kResponse}),
            "HTTP/1.1 302 Found\r\n"
            "cache-control: private\r\n"
            "date: Mon, 21 Oct 2013 20:13:21 GMT\r\n"
            "location: https://www.example.com\r\n"
            "\r\n");
  EXPECT_EQ(Http1Text(Message{false, {{":status", "299"}}}),
            "HTTP/1.1 299 \r\n\r\n");
}

TEST(ConversationFromStoryTest, DirectionFromContextOrPseudoHeaders) {
  Story story;
  story.cases.resize(2);
  story.cases[0].headers = kRequest;
  story.cases[1].headers = kResponse;
  Conversation c = ConversationFromStory(story, "s");
  EXPECT_TRUE(c.messages[0].is_request);
  EXPECT_FALSE(c.messages[1].is_request);
  story.context = "response";
  c = ConversationFromStory(story, "s");
  EXPECT_FALSE(c.messages[0].is_request);
}

TEST(ComputeRatiosTest, TwoRequestsExactNumbers) {
  // Block 1 (RFC C.4.1): 82 86 84 41 8c f1e3c2e5f23a6ba0ab90f4ff = 17 octets.
  // Block 2: 82 86 84 be = 4 octets. HTTP/1.1: "GET / HTTP/1.1\r\n" (16) +
  // "Host: www.example.com\r\n" (23) + "\r\n" (2) = 41 octets each.
  const std::vector<Conversation> conversations = {
      {"two", {Message{true, kRequest}, Message{true, kRequest}}}};
  std::vector<RatioRow> rows;
  std::string error;
  ASSERT_TRUE(ComputeRatios(conversations, {4096}, &rows, &error)) << error;
  ASSERT_EQ(rows.size(), 1u);
  const RatioRow& r = rows[0];
  EXPECT_EQ(r.table_size, 4096u);
  EXPECT_TRUE(r.requests);
  EXPECT_EQ(r.messages, 2u);
  EXPECT_EQ(r.encoded_octets, 21u);
  EXPECT_EQ(r.http1_octets, 82u);
  EXPECT_DOUBLE_EQ(r.ratio, 21.0 / 82);
  EXPECT_DOUBLE_EQ(r.min, 4.0 / 41);
  EXPECT_DOUBLE_EQ(r.max, 17.0 / 41);
  EXPECT_DOUBLE_EQ(r.mean, 21.0 / 82);
  EXPECT_NEAR(r.stddev, 13.0 / 82,
              1e-12);  // Population: half the spread of two values.
}

TEST(ComputeRatiosTest, TableSizesAndDirections) {
  const std::vector<Conversation> conversations = {
      {"requests", {Message{true, kRequest}, Message{true, kRequest}}},
      {"responses", {Message{false, kResponse}}}};
  std::vector<RatioRow> rows;
  std::string error;
  ASSERT_TRUE(ComputeRatios(conversations, {256, 4096}, &rows, &error))
      << error;
  ASSERT_EQ(rows.size(), 4u);
  // 256: the first block starts with the size update 3f e1 01.
  EXPECT_EQ(rows[0].table_size, 256u);
  EXPECT_TRUE(rows[0].requests);
  EXPECT_EQ(rows[0].encoded_octets, 24u);
  EXPECT_FALSE(rows[1].requests);
  EXPECT_EQ(rows[1].encoded_octets, 3u + 54u);
  // 4096: RFC C.6.1's 54 octets (every field indexed, Huffman where shorter).
  EXPECT_EQ(rows[2].encoded_octets, 21u);
  EXPECT_EQ(rows[3].encoded_octets, 54u);
  EXPECT_EQ(rows[3].http1_octets, 118u);
  EXPECT_EQ(rows[3].messages, 1u);
  EXPECT_DOUBLE_EQ(rows[3].stddev, 0);

  const std::string table = FormatRatioTable(rows);
  EXPECT_NE(table.find("requests: 2 messages, 82 octets as HTTP/1.1\n"),
            std::string::npos)
      << table;
  EXPECT_NE(table.find("responses: 1 messages, 118 octets as HTTP/1.1\n"),
            std::string::npos);
  EXPECT_NE(table.find("      4096              21   0.256   0.098   0.415   "
                       "0.256    0.159\n"),
            std::string::npos)
      << table;
}

}  // namespace
}  // namespace tool
}  // namespace hpack
