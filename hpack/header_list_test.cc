#include "hpack/header_list.h"

#include <string>
#include <vector>

#include "gtest/gtest.h"

namespace hpack {
namespace {

TEST(HeaderListTest, AppendsAndIteratesInOrder) {
  HeaderList list;
  EXPECT_TRUE(list.empty());
  list.Append(":method", "GET");
  list.Append("cookie", "a=b", /*sensitive=*/true);
  list.Append("", "");
  list.Append("x-empty", "");
  ASSERT_EQ(list.size(), 4u);
  EXPECT_EQ(list[0].name, ":method");
  EXPECT_EQ(list[0].value, "GET");
  EXPECT_FALSE(list[0].sensitive);
  EXPECT_EQ(list[1].name, "cookie");
  EXPECT_TRUE(list[1].sensitive);
  EXPECT_EQ(list[2].name, "");
  EXPECT_EQ(list[3].value, "");
  std::vector<std::string> names;
  for (const HeaderField f : list) names.emplace_back(f.name);
  EXPECT_EQ(names,
            (std::vector<std::string>{":method", "cookie", "", "x-empty"}));
  // RFC 9113 section 6.5.2: name + value + 32 per field.
  EXPECT_EQ(list.header_list_size(),
            (7 + 3 + 32) + (6 + 3 + 32) + 32 + (7 + 32));
}

TEST(HeaderListTest, ViewsSurviveGrowthBecauseTheyAreRebuilt) {
  HeaderList list;
  for (int i = 0; i < 1000; ++i) {
    list.Append("name-" + std::to_string(i), std::string(i % 50, 'v'));
  }
  for (int i = 0; i < 1000; ++i) {
    ASSERT_EQ(list[i].name, "name-" + std::to_string(i));
    ASSERT_EQ(list[i].value, std::string(i % 50, 'v'));
  }
}

TEST(HeaderListTest, ClearKeepsCapacity) {
  HeaderList list;
  for (int i = 0; i < 100; ++i) list.Append("n", std::string(100, 'v'));
  const size_t capacity = list.arena_capacity();
  list.clear();
  EXPECT_TRUE(list.empty());
  EXPECT_EQ(list.header_list_size(), 0u);
  EXPECT_EQ(list.arena_size(), 0u);
  EXPECT_EQ(list.arena_capacity(), capacity);
  list.Append("a", "b");
  EXPECT_EQ(list.arena_capacity(), capacity);
  EXPECT_EQ(list[0].value, "b");
}

TEST(HeaderListTest, OctetsCopiedCountsSinceTheLastClear) {
  HeaderList list;
  EXPECT_EQ(list.octets_copied(), 0u);
  list.Append("name", "value");
  list.Append("n", std::string(100, 'v'));
  EXPECT_EQ(list.octets_copied(), 110u);
  list.clear();
  EXPECT_EQ(list.octets_copied(), 0u);
  list.Append("a", "b");
  EXPECT_EQ(list.octets_copied(), 2u);
}

TEST(HeaderListTest, CopiesAndCompares) {
  HeaderList a;
  a.Append("a", "1");
  a.Append("b", "2", true);
  HeaderList b = a;
  EXPECT_EQ(a, b);
  EXPECT_EQ(b[1].value, "2");
  b.Append("c", "3");
  EXPECT_NE(a, b);
  HeaderList c;
  c.Append("a", "1");
  c.Append("b", "2", false);  // Same strings, different flag.
  EXPECT_NE(a, c);
  c = a;
  EXPECT_EQ(a, c);
  HeaderList d = std::move(c);
  EXPECT_EQ(a, d);
}

TEST(HeaderListTest, AFieldIsAppendedWithBothFlags) {
  HeaderList list;
  list.Append(HeaderField{"grpc-timeout", "1S", false, true});
  list.Append(HeaderField{"x-secret", "s", true, false});
  list.Append(HeaderField{"x-both", "b", true, true});
  ASSERT_EQ(list.size(), 3u);
  EXPECT_EQ(list[0].name, "grpc-timeout");
  EXPECT_EQ(list[0].value, "1S");
  EXPECT_FALSE(list[0].sensitive);
  EXPECT_TRUE(list[0].index_name_only);
  EXPECT_TRUE(list[1].sensitive);
  EXPECT_FALSE(list[1].index_name_only);
  EXPECT_TRUE(list[2].sensitive);
  EXPECT_TRUE(list[2].index_name_only);
  const HeaderList copy = list;
  EXPECT_TRUE(copy[0].index_name_only);
  EXPECT_EQ(copy, list);
  HeaderList plain;
  plain.Append("grpc-timeout", "1S");  // Same strings, no index_name_only.
  plain.Append("x-secret", "s", true);
  plain.Append("x-both", "b", true);
  EXPECT_FALSE(plain[0].index_name_only);
  EXPECT_NE(plain, list);
}

TEST(HeaderListTest, ReserveGrowsOnce) {
  HeaderList list;
  list.Reserve(10, 1000);
  EXPECT_GE(list.arena_capacity(), 1000u);
  const size_t capacity = list.arena_capacity();
  for (int i = 0; i < 10; ++i) list.Append("name", std::string(90, 'v'));
  EXPECT_EQ(list.arena_capacity(), capacity);
}

}  // namespace
}  // namespace hpack
