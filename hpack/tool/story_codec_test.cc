#include "hpack/tool/story_codec.h"

#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "hpack/tool/story.h"

namespace hpack {
namespace tool {
namespace {

// RFC 7541 C.3: three requests without Huffman coding, one context.
constexpr char kRfcC3Story[] = R"({
  "description": "RFC 7541 Appendix C.3",
  "cases": [
    {"seqno": 0, "wire": "828684410f7777772e6578616d706c652e636f6d",
     "headers": [{":method": "GET"}, {":scheme": "http"}, {":path": "/"},
                 {":authority": "www.example.com"}]},
    {"seqno": 1, "wire": "828684be58086e6f2d6361636865",
     "headers": [{":method": "GET"}, {":scheme": "http"}, {":path": "/"},
                 {":authority": "www.example.com"},
                 {"cache-control": "no-cache"}]},
    {"seqno": 2,
     "wire": "828785bf400a637573746f6d2d6b65790c637573746f6d2d76616c7565",
     "headers": [{":method": "GET"}, {":scheme": "https"},
                 {":path": "/index.html"}, {":authority": "www.example.com"},
                 {"custom-key": "custom-value"}]}
  ]
})";

Story Parse(const char* json) {
  Story story;
  std::string error;
  EXPECT_TRUE(ParseStory(json, &story, &error)) << error;
  return story;
}

TEST(VerifyStoryTest, AcceptsRfcExamples) {
  const VerifyResult r = VerifyStory(Parse(kRfcC3Story));
  EXPECT_TRUE(r.ok) << r.mismatch;
  EXPECT_EQ(r.cases, 3u);
  EXPECT_EQ(r.invalid_field_cases, 0u);
}

TEST(VerifyStoryTest, CatchesAWrongValue) {
  Story story = Parse(kRfcC3Story);
  story.cases[2].headers[4].second = "custom-valve";
  const VerifyResult r = VerifyStory(story);
  EXPECT_FALSE(r.ok);
  EXPECT_EQ(r.cases, 2u);
  EXPECT_EQ(
      r.mismatch,
      "case 2 (seqno 2): header 4: expected \"custom-key: custom-valve\", got "
      "\"custom-key: custom-value\"");
}

TEST(VerifyStoryTest, CatchesMissingAndExtraHeaders) {
  Story story = Parse(kRfcC3Story);
  story.cases[1].headers.pop_back();
  VerifyResult r = VerifyStory(story);
  EXPECT_FALSE(r.ok);
  EXPECT_EQ(r.mismatch,
            "case 1 (seqno 1): expected 4 headers, got 5 (first "
            "extra: \"cache-control: "
            "no-cache\")");

  story = Parse(kRfcC3Story);
  story.cases[0].headers.push_back({"x", "y"});
  r = VerifyStory(story);
  EXPECT_EQ(
      r.mismatch,
      "case 0 (seqno 0): expected 5 headers, got 4 (first missing: \"x: y\")");
}

TEST(VerifyStoryTest, ReportsDecodeErrorsAndMissingWire) {
  Story story = Parse(kRfcC3Story);
  story.cases[1].wire.pop_back();  // The last string runs past the end.
  VerifyResult r = VerifyStory(story);
  EXPECT_FALSE(r.ok);
  EXPECT_EQ(r.mismatch, "case 1 (seqno 1): decode error string_too_long");

  story = Parse(kRfcC3Story);
  story.cases[0].has_wire = false;
  r = VerifyStory(story);
  EXPECT_EQ(r.mismatch, "case 0 (seqno 0): no wire");
}

TEST(VerifyStoryTest, AppliesHeaderTableSizeBeforeTheCase) {
  // SETTINGS_HEADER_TABLE_SIZE = 256 before case 0 requires a table size
  // update at the start of its block: 3f e1 01.
  Story story = Parse(kRfcC3Story);
  story.cases[0].header_table_size = 256;
  VerifyResult r = VerifyStory(story);
  EXPECT_FALSE(r.ok);
  EXPECT_EQ(r.mismatch,
            "case 0 (seqno 0): decode error missing_table_size_update");

  story.cases[0].wire.insert(0, "\x3f\xe1\x01");
  r = VerifyStory(story);
  EXPECT_TRUE(r.ok) << r.mismatch;
}

TEST(VerifyStoryTest, CountsFieldsInvalidUnderRfc9113) {
  // "age: 1 " (trailing space), literal without indexing, raw strings.
  const VerifyResult r = VerifyStory(Parse(
      R"({"cases": [{"wire": "000361676502312082",
                     "headers": [{"age": "1 "}, {":method": "GET"}]}]})"));
  EXPECT_TRUE(r.ok) << r.mismatch;
  EXPECT_EQ(r.invalid_field_cases, 1u);
}

TEST(EncodeStoryTest, OurOutputVerifiesAtEveryTableSize) {
  Story input;
  const std::vector<Field> request = {
      {":method", "GET"},
      {":scheme", "https"},
      {":authority", "www.example.com"},
      {":path", "/search?q=hpack"},
      {"user-agent", "Mozilla/5.0 (X11; Linux x86_64)"},
      {"cookie", "short=1"},
      {"authorization", "Bearer abc"}};
  for (int i = 0; i < 5; ++i) {
    Case c;
    c.headers = request;
    c.headers[3].second += std::to_string(i % 2);
    input.cases.push_back(c);
  }
  for (const uint32_t size : {0u, 256u, 4096u, 16384u}) {
    const Story encoded = EncodeStory(input, size);
    ASSERT_EQ(encoded.cases.size(), input.cases.size());
    EXPECT_EQ(encoded.cases[0].header_table_size, size);
    EXPECT_FALSE(encoded.cases[1].header_table_size.has_value());
    EXPECT_EQ(encoded.cases[4].seqno, 4);
    const VerifyResult r = VerifyStory(encoded);
    EXPECT_TRUE(r.ok) << "table size " << size << ": " << r.mismatch;

    // Through JSON too, as `hpack_tool encode` then `verify` would.
    Story reread;
    std::string error;
    ASSERT_TRUE(ParseStory(StoryToJson(encoded), &reread, &error)) << error;
    EXPECT_TRUE(VerifyStory(reread).ok);
  }
  // A warmed context sends a repeated request as indexes (only authorization,
  // never indexed, stays a literal).
  const Story encoded = EncodeStory(input, 4096);
  EXPECT_LT(encoded.cases[2].wire.size(), 25u);
}

}  // namespace
}  // namespace tool
}  // namespace hpack
