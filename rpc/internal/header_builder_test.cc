#include "rpc/internal/header_builder.h"

#include <string>
#include <vector>

#include "gtest/gtest.h"

namespace rpc {
namespace internal {
namespace {

// Copies kept beyond the inline storage and more fields than the inline
// capacity: every view still reads its value (the inline octets and the
// overflow strings never move while the builder grows).
TEST(HeaderBuilderTest, CopiesStayValidPastTheInlineCapacity) {
  HeaderBuilder h;
  std::vector<std::string> expected;
  for (int i = 0; i < 3 * static_cast<int>(HeaderBuilder::kInlineFields); ++i) {
    // 7 to 70 octets: the inline storage fills and then overflows.
    std::string value(static_cast<size_t>(7 + i % 64),
                      static_cast<char>('a' + i % 26));
    value += std::to_string(i);
    expected.push_back(value);
    if (i % 3 == 0) {
      h.Add("static", "literal");
      expected.back() = "literal";
    } else {
      h.AddCopy("copied", value);
    }
    value.assign(value.size(), '#');  // the builder kept its own copy
  }
  ASSERT_EQ(h.fields().size(), expected.size());
  for (size_t i = 0; i < expected.size(); ++i) {
    EXPECT_EQ(h.fields()[i].value, expected[i]) << i;
    EXPECT_EQ(h.fields()[i].name, i % 3 == 0 ? "static" : "copied") << i;
  }
}

TEST(HeaderBuilderTest, EmptyAndExactlyFittingCopies) {
  HeaderBuilder h;
  h.AddCopy("empty", "");
  const std::string fill(HeaderBuilder::kInlineStorage, 'x');
  h.AddCopy("fill", fill);
  h.AddCopy("over", "y");
  ASSERT_EQ(h.fields().size(), 3u);
  EXPECT_EQ(h.fields()[0].value, "");
  EXPECT_EQ(h.fields()[1].value, fill);
  EXPECT_EQ(h.fields()[2].value, "y");
}

// A value longer than the whole inline storage goes to the overflow at once;
// the inline storage stays free for the short ones after it.
TEST(HeaderBuilderTest, AValueLongerThanTheInlineStorage) {
  HeaderBuilder h;
  std::string long_value(HeaderBuilder::kInlineStorage + 1, 'l');
  h.AddCopy("long", long_value);
  std::string short_value(HeaderBuilder::kInlineStorage, 's');
  h.AddCopy("short", short_value);
  std::string changing(3 * HeaderBuilder::kInlineStorage, 'c');
  h.AddChangingCopy("changing", changing);
  const std::string expected_long = long_value;
  const std::string expected_short = short_value;
  const std::string expected_changing = changing;
  long_value.assign(long_value.size(), '#');  // the builder kept its copies
  short_value.assign(short_value.size(), '#');
  changing.assign(changing.size(), '#');
  ASSERT_EQ(h.fields().size(), 3u);
  EXPECT_EQ(h.fields()[0].name, "long");
  EXPECT_EQ(h.fields()[0].value, expected_long);
  EXPECT_EQ(h.fields()[1].value, expected_short);
  EXPECT_EQ(h.fields()[2].value, expected_changing);
  EXPECT_FALSE(h.fields()[0].index_name_only);
  EXPECT_TRUE(h.fields()[2].index_name_only);
}

TEST(HeaderBuilderTest, ChangingCopiesAreMarkedIndexNameOnly) {
  HeaderBuilder h;
  h.AddCopy("a", "1");
  h.AddChangingCopy("grpc-timeout", "99m");
  h.Add("b", "2");
  ASSERT_EQ(h.fields().size(), 3u);
  EXPECT_FALSE(h.fields()[0].index_name_only);
  EXPECT_TRUE(h.fields()[1].index_name_only);
  EXPECT_EQ(h.fields()[1].value, "99m");
  EXPECT_FALSE(h.fields()[2].index_name_only);
}

TEST(HeaderBuilderTest, StatusAndBinaryMetadataAreCopied) {
  HeaderBuilder h;
  {
    Status status(StatusCode::NOT_FOUND, "no such thing: 100%");
    h.AddStatus(status);
    Metadata md;
    md.Add("x-bin", std::string("\x01\x02\x03", 3));
    md.Add("x-text", "plain");
    h.AddMetadata(md);
    ASSERT_EQ(h.fields().size(), 4u);
    // Names and plain values are views of md (they must outlive the builder).
    EXPECT_EQ(h.fields()[2].name, "x-bin");
    EXPECT_EQ(h.fields()[3].value, "plain");
  }
  // The built values are the builder's own: they outlive the status and md.
  EXPECT_EQ(h.fields()[0].name, "grpc-status");
  EXPECT_EQ(h.fields()[0].value, "5");
  EXPECT_EQ(h.fields()[1].name, "grpc-message");
  EXPECT_EQ(h.fields()[1].value, "no such thing: 100%25");
  EXPECT_EQ(h.fields()[2].value, "AQID");
}

}  // namespace
}  // namespace internal
}  // namespace rpc
