#include "hpack/tool/har.h"

#include <string>
#include <vector>

#include "gtest/gtest.h"

namespace hpack {
namespace tool {
namespace {

// A tiny HAR as browsers export it: an HTTP/1.1 entry, an HTTP/2 entry
// (pseudo-headers listed, no response), a data: URL, and a second request to
// the first host.
constexpr char kHar[] =
    R"({"log": {"version": "1.2", "creator": {"name": "test"}, "entries": [
  {"request": {"method": "GET",
     "url": "https://user@www.Example.com/a/b?x=1#frag",
     "httpVersion": "HTTP/1.1",
     "headers": [{"name": "Host", "value": "www.example.com"},
                 {"name": "User-Agent", "value": "test/1"},
                 {"name": "Connection", "value": "keep-alive, X-Foo"},
                 {"name": "Keep-Alive", "value": "300"},
                 {"name": "X-Foo", "value": "bar"},
                 {"name": "TE", "value": "gzip"},
                 {"name": "Accept", "value": "*/*"}]},
   "response": {"status": 200, "httpVersion": "HTTP/1.1",
     "headers": [{"name": "Content-Type", "value": "text/html"},
                 {"name": "Transfer-Encoding", "value": "chunked"},
                 {"name": "Upgrade", "value": "h2c"}]}},
  {"request": {"method": "POST", "url": "https://cdn.example.com:8443",
     "httpVersion": "h2",
     "headers": [{"name": ":method", "value": "POST"},
                 {"name": ":authority", "value": "cdn.example.com:8443"},
                 {"name": "content-type", "value": "x"},
                 {"name": "te", "value": "trailers"}]},
   "response": {"status": 0, "headers": []}},
  {"request": {"method": "GET", "url": "data:image/png;base64,AAAA",
     "headers": []},
   "response": {"status": 200, "headers": []}},
  {"request": {"method": "GET", "url": "http://www.example.com",
     "headers": [{"name": "host", "value": "www.example.com"}]},
   "response": {"status": 304, "headers": []}}
]}})";

TEST(HarTest, BuildsHttp2MessagesPerHostAndDirection) {
  ASSERT_TRUE(LooksLikeHar(kHar));
  std::vector<Conversation> conversations;
  HarStats stats;
  std::string error;
  ASSERT_TRUE(ParseHar(kHar, &conversations, &stats, &error)) << error;
  EXPECT_EQ(stats.entries, 4u);
  EXPECT_EQ(stats.skipped_entries, 1u);    // data:
  EXPECT_EQ(stats.skipped_responses, 1u);  // status 0

  ASSERT_EQ(conversations.size(), 3u);
  EXPECT_EQ(conversations[0].name, "www.example.com requests");
  EXPECT_EQ(conversations[1].name, "www.example.com responses");
  EXPECT_EQ(conversations[2].name, "cdn.example.com:8443 requests");

  ASSERT_EQ(conversations[0].messages.size(), 2u);
  const Message& first = conversations[0].messages[0];
  EXPECT_TRUE(first.is_request);
  EXPECT_EQ(first.fields, (std::vector<Field>{{":method", "GET"},
                                              {":scheme", "https"},
                                              {":authority", "www.example.com"},
                                              {":path", "/a/b?x=1"},
                                              {"user-agent", "test/1"},
                                              {"accept", "*/*"}}));
  EXPECT_EQ(conversations[0].messages[1].fields,
            (std::vector<Field>{{":method", "GET"},
                                {":scheme", "http"},
                                {":authority", "www.example.com"},
                                {":path", "/"}}));

  ASSERT_EQ(conversations[1].messages.size(), 2u);
  EXPECT_FALSE(conversations[1].messages[0].is_request);
  EXPECT_EQ(
      conversations[1].messages[0].fields,
      (std::vector<Field>{{":status", "200"}, {"content-type", "text/html"}}));
  EXPECT_EQ(conversations[1].messages[1].fields,
            (std::vector<Field>{{":status", "304"}}));

  ASSERT_EQ(conversations[2].messages.size(), 1u);
  EXPECT_EQ(conversations[2].messages[0].fields,
            (std::vector<Field>{{":method", "POST"},
                                {":scheme", "https"},
                                {":authority", "cdn.example.com:8443"},
                                {":path", "/"},
                                {"content-type", "x"},
                                {"te", "trailers"}}));
}

TEST(HarTest, AppendsToExistingConversations) {
  std::vector<Conversation> conversations(1);
  HarStats stats;
  std::string error;
  ASSERT_TRUE(ParseHar(kHar, &conversations, &stats, &error)) << error;
  EXPECT_EQ(conversations.size(), 4u);
}

TEST(HarTest, RejectsMalformedHar) {
  std::vector<Conversation> conversations;
  HarStats stats;
  std::string error;
  EXPECT_FALSE(LooksLikeHar(R"({"cases": []})"));
  EXPECT_FALSE(ParseHar(R"({"log": {}})", &conversations, &stats, &error));
  EXPECT_EQ(error, "no \"log.entries\" array");
  EXPECT_FALSE(ParseHar(R"({"log": {"entries": [{"request": {"method": "GET",
      "url": "https://a/", "headers": [{"name": "x"}]}}]}})",
                        &conversations, &stats, &error));
  EXPECT_EQ(error,
            "entry 0: request: a header is not {\"name\": string, "
            "\"value\": string}");
  EXPECT_TRUE(conversations.empty());
}

}  // namespace
}  // namespace tool
}  // namespace hpack
