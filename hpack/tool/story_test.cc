#include "hpack/tool/story.h"

#include <string>

#include "gtest/gtest.h"

namespace hpack {
namespace tool {
namespace {

constexpr char kStory[] = R"({
  "description": "two cases",
  "context": "request",
  "cases": [
    {"seqno": 0, "header_table_size": null, "wire": "8286",
     "headers": [{":method": "GET"}, {":scheme": "http"}]},
    {"seqno": 1, "header_table_size": 256, "wire": "82",
     "headers": [{":method": "GET"}]},
    {"seqno": 2, "headers": []}
  ]
})";

TEST(StoryTest, ParsesCasesWithOptionalFields) {
  Story story;
  std::string error;
  ASSERT_TRUE(ParseStory(kStory, &story, &error)) << error;
  EXPECT_EQ(story.description, "two cases");
  EXPECT_EQ(story.context, "request");
  ASSERT_EQ(story.cases.size(), 3u);

  EXPECT_FALSE(story.cases[0].header_table_size.has_value());  // null
  EXPECT_TRUE(story.cases[0].has_wire);
  EXPECT_EQ(story.cases[0].wire, "\x82\x86");
  EXPECT_EQ(story.cases[0].headers,
            (std::vector<Field>{{":method", "GET"}, {":scheme", "http"}}));

  EXPECT_EQ(story.cases[1].header_table_size, 256u);
  EXPECT_EQ(story.cases[1].seqno, 1);

  EXPECT_FALSE(story.cases[2].header_table_size.has_value());  // absent
  EXPECT_FALSE(story.cases[2].has_wire);
  EXPECT_TRUE(story.cases[2].headers.empty());
}

TEST(StoryTest, KeepsHeaderOrderAndDuplicates) {
  Story story;
  std::string error;
  ASSERT_TRUE(ParseStory(
      R"({"cases": [{"headers": [{"z": "1"}, {"a": "2"}, {"z": "3"}]}]})",
      &story, &error))
      << error;
  EXPECT_EQ(story.cases[0].headers,
            (std::vector<Field>{{"z", "1"}, {"a", "2"}, {"z", "3"}}));
  EXPECT_EQ(story.cases[0].seqno, 0);  // Absent: the case's position.
}

TEST(StoryTest, RejectsMalformedStoriesWithTheCase) {
  Story story;
  std::string error;
  EXPECT_FALSE(ParseStory("{", &story, &error));
  EXPECT_EQ(error, "not valid JSON");
  EXPECT_FALSE(ParseStory(R"({"cases": 1})", &story, &error));
  EXPECT_FALSE(ParseStory(
      R"({"cases": [{"headers": []}, {"wire": "8", "headers": []}]})", &story,
      &error));
  EXPECT_EQ(error, "case 1: \"wire\" is not a hex string");
  EXPECT_FALSE(
      ParseStory(R"({"cases": [{"headers": [{"a": 1}]}]})", &story, &error));
  EXPECT_EQ(error, "case 0: the value of header \"a\" is not a string");
  EXPECT_FALSE(ParseStory(R"({"cases": [{"headers": [{"a": "1", "b": "2"}]}]})",
                          &story, &error));
  EXPECT_FALSE(
      ParseStory(R"({"cases": [{"header_table_size": -1, "headers": []}]})",
                 &story, &error));
}

TEST(StoryTest, JsonRoundTripsAndKeepsCorpusKeyOrder) {
  Story story;
  std::string error;
  ASSERT_TRUE(ParseStory(kStory, &story, &error)) << error;
  const std::string json = StoryToJson(story);
  // description, context, cases; in a case seqno, header_table_size, wire,
  // headers.
  EXPECT_LT(json.find("\"description\""), json.find("\"context\""));
  EXPECT_LT(json.find("\"context\""), json.find("\"cases\""));
  EXPECT_LT(json.find("\"seqno\": 1"), json.find("\"header_table_size\": 256"));
  EXPECT_LT(json.find("\"header_table_size\": 256"),
            json.find("\"wire\": \"82\""));
  EXPECT_EQ(json.back(), '\n');

  Story again;
  ASSERT_TRUE(ParseStory(json, &again, &error)) << error;
  ASSERT_EQ(again.cases.size(), story.cases.size());
  for (size_t i = 0; i < story.cases.size(); ++i) {
    EXPECT_EQ(again.cases[i].seqno, story.cases[i].seqno);
    EXPECT_EQ(again.cases[i].header_table_size,
              story.cases[i].header_table_size);
    EXPECT_EQ(again.cases[i].has_wire, story.cases[i].has_wire);
    EXPECT_EQ(again.cases[i].wire, story.cases[i].wire);
    EXPECT_EQ(again.cases[i].headers, story.cases[i].headers);
  }
}

TEST(StoryTest, Hex) {
  std::string bytes;
  ASSERT_TRUE(HexToBytes("00fFa0", &bytes));
  EXPECT_EQ(bytes, std::string("\x00\xff\xa0", 3));
  EXPECT_EQ(BytesToHex(bytes), "00ffa0");
  EXPECT_FALSE(HexToBytes("abc", &bytes));
  EXPECT_FALSE(HexToBytes("zz", &bytes));
  ASSERT_TRUE(HexToBytes("", &bytes));
  EXPECT_EQ(bytes, "");
}

}  // namespace
}  // namespace tool
}  // namespace hpack
