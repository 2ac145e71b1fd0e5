#include "hpack/static_table.h"

#include <string>
#include <utility>
#include <vector>

#include "gtest/gtest.h"

namespace hpack {
namespace {

// RFC 7541 Appendix A, typed in again as the specification the table is checked
// against.
const std::vector<std::pair<std::string, std::string>>& Appendix() {
  static const auto* table =
      new std::vector<std::pair<std::string, std::string>>{
          {":authority", ""},
          {":method", "GET"},
          {":method", "POST"},
          {":path", "/"},
          {":path", "/index.html"},
          {":scheme", "http"},
          {":scheme", "https"},
          {":status", "200"},
          {":status", "204"},
          {":status", "206"},
          {":status", "304"},
          {":status", "400"},
          {":status", "404"},
          {":status", "500"},
          {"accept-charset", ""},
          {"accept-encoding", "gzip, deflate"},
          {"accept-language", ""},
          {"accept-ranges", ""},
          {"accept", ""},
          {"access-control-allow-origin", ""},
          {"age", ""},
          {"allow", ""},
          {"authorization", ""},
          {"cache-control", ""},
          {"content-disposition", ""},
          {"content-encoding", ""},
          {"content-language", ""},
          {"content-length", ""},
          {"content-location", ""},
          {"content-range", ""},
          {"content-type", ""},
          {"cookie", ""},
          {"date", ""},
          {"etag", ""},
          {"expect", ""},
          {"expires", ""},
          {"from", ""},
          {"host", ""},
          {"if-match", ""},
          {"if-modified-since", ""},
          {"if-none-match", ""},
          {"if-range", ""},
          {"if-unmodified-since", ""},
          {"last-modified", ""},
          {"link", ""},
          {"location", ""},
          {"max-forwards", ""},
          {"proxy-authenticate", ""},
          {"proxy-authorization", ""},
          {"range", ""},
          {"referer", ""},
          {"refresh", ""},
          {"retry-after", ""},
          {"server", ""},
          {"set-cookie", ""},
          {"strict-transport-security", ""},
          {"transfer-encoding", ""},
          {"user-agent", ""},
          {"vary", ""},
          {"via", ""},
          {"www-authenticate", ""}};
  return *table;
}

TEST(StaticTableTest, HasTheSixtyOneEntriesOfAppendixA) {
  ASSERT_EQ(Appendix().size(), StaticTable::kSize);
  for (size_t i = 1; i <= StaticTable::kSize; ++i) {
    EXPECT_EQ(StaticTable::Get(i).name, Appendix()[i - 1].first) << i;
    EXPECT_EQ(StaticTable::Get(i).value, Appendix()[i - 1].second) << i;
    EXPECT_EQ(
        StaticTable::EntrySize(i),
        Appendix()[i - 1].first.size() + Appendix()[i - 1].second.size() + 32);
  }
}

TEST(StaticTableTest, FindNameReturnsTheFirstIndexOfEveryName) {
  for (size_t i = 1; i <= StaticTable::kSize; ++i) {
    const std::string& name = Appendix()[i - 1].first;
    size_t first = i;
    while (first > 1 && Appendix()[first - 2].first == name) --first;
    EXPECT_EQ(StaticTable::FindName(name), first) << name;
    EXPECT_EQ(StaticTable::FindName(name, HashString(name)), first) << name;
  }
}

TEST(StaticTableTest, FindFieldReturnsEveryEntry) {
  for (size_t i = 1; i <= StaticTable::kSize; ++i) {
    EXPECT_EQ(StaticTable::FindField(Appendix()[i - 1].first,
                                     Appendix()[i - 1].second),
              i)
        << i;
  }
}

TEST(StaticTableTest, MissesReturnZero) {
  for (const char* name : {"", "x-custom", "Accept", ":authorit", ":authority ",
                           "cookie2", "content-typ", "www-authenticatE"}) {
    EXPECT_EQ(StaticTable::FindName(name), 0u) << name;
  }
  EXPECT_EQ(StaticTable::FindName(std::string_view(":path\0", 6)), 0u);
  EXPECT_EQ(StaticTable::FindField(":method", "PUT"), 0u);
  EXPECT_EQ(StaticTable::FindField(":method", "get"), 0u);
  EXPECT_EQ(StaticTable::FindField(":status", "201"), 0u);
  EXPECT_EQ(StaticTable::FindField("accept-encoding", "gzip"), 0u);
  EXPECT_EQ(StaticTable::FindField("cookie", "a=b"), 0u);
  EXPECT_EQ(StaticTable::FindField("x-custom", ""), 0u);
}

TEST(StaticTableTest, FindValueLooksOnlyAtTheNamesRun) {
  EXPECT_EQ(StaticTable::FindValue(8, "500"), 14u);
  EXPECT_EQ(StaticTable::FindValue(2, "POST"), 3u);
  EXPECT_EQ(StaticTable::FindValue(2, "/"),
            0u);  // :path's value, not :method's.
  EXPECT_EQ(StaticTable::FindValue(1, ""), 1u);
}

TEST(StaticTableTest, NamedIndexesMatchTheTable) {
  EXPECT_EQ(StaticTable::Get(StaticTable::kAuthorizationIndex).name,
            "authorization");
  EXPECT_EQ(StaticTable::Get(StaticTable::kCookieIndex).name, "cookie");
  EXPECT_EQ(StaticTable::Get(StaticTable::kProxyAuthorizationIndex).name,
            "proxy-authorization");
}

}  // namespace
}  // namespace hpack
