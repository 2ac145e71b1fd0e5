// Proves @nlohmann_json (the JSON reader of the test tools) is wired: it reads
// a document shaped like an hpack-test-case story, with a null and an absent
// field.
#include <nlohmann/json.hpp>
#include <string>

#include "gtest/gtest.h"

namespace {

TEST(JsonTest, ReadsStoryShapedDocument) {
  const auto story = nlohmann::json::parse(R"({
    "description": "test",
    "cases": [
      {"seqno": 0, "header_table_size": null, "wire": "82",
       "headers": [{":method": "GET"}]},
      {"seqno": 1, "wire": "",
       "headers": []}
    ]})");
  ASSERT_EQ(story["cases"].size(), 2u);
  const auto& first = story["cases"][0];
  EXPECT_TRUE(first["header_table_size"].is_null());
  EXPECT_FALSE(story["cases"][1].contains("header_table_size"));
  EXPECT_EQ(first["wire"].get<std::string>(), "82");
  const auto& field = first["headers"][0];
  EXPECT_EQ(field.begin().key(), ":method");
  EXPECT_EQ(field.begin().value().get<std::string>(), "GET");
}

TEST(JsonTest, MalformedInputThrowsParseError) {
  EXPECT_THROW(nlohmann::json::parse("{\"cases\": [}"),
               nlohmann::json::parse_error);
}

}  // namespace
