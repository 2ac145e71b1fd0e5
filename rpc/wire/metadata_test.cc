#include "rpc/wire/metadata.h"

#include <string>
#include <vector>

#include "gtest/gtest.h"

namespace rpc {
namespace {

TEST(MetadataTest, KeepsOrderAndRepeats) {
  Metadata md;
  EXPECT_TRUE(md.empty());
  md.Add("b", "1");
  md.Add("a", "2");
  md.Add("b", "3");
  ASSERT_EQ(md.size(), 3u);
  EXPECT_EQ(md[0], Metadata::value_type("b", "1"));
  EXPECT_EQ(md[1], Metadata::value_type("a", "2"));
  EXPECT_EQ(md.Get("b"), "1");
  EXPECT_EQ(md.Get("c"), std::nullopt);
  EXPECT_EQ(md.GetAll("b"), (std::vector<std::string_view>{"1", "3"}));
  EXPECT_EQ(md.Count("b"), 2u);
  EXPECT_EQ(md.Remove("b"), 2u);
  EXPECT_EQ(md, (Metadata{{"a", "2"}}));
  std::vector<std::string> keys;
  for (const auto& [k, v] : md) keys.push_back(k + "=" + v);
  EXPECT_EQ(keys, std::vector<std::string>{"a=2"});
  md.clear();
  EXPECT_TRUE(md.empty());
}

TEST(MetadataKeyTest, Syntax) {
  EXPECT_TRUE(IsValidMetadataKey("x-request-id"));
  EXPECT_TRUE(IsValidMetadataKey("a.b_c-9"));
  EXPECT_TRUE(IsValidMetadataKey("trace-proto-bin"));
  for (const char* bad : {"", "X-Upper", "sp ace", "colon:", ":path", "slash/",
                          "tab\t", "\x80", "caf\xc3\xa9"}) {
    EXPECT_FALSE(IsValidMetadataKey(bad)) << bad;
  }
  EXPECT_TRUE(IsBinaryKey("trace-proto-bin"));
  EXPECT_TRUE(IsBinaryKey("-bin"));
  EXPECT_FALSE(IsBinaryKey("bin"));
  EXPECT_FALSE(IsBinaryKey("x-binary"));
}

TEST(MetadataKeyTest, EveryOctet) {
  for (int c = 0; c < 256; ++c) {
    const std::string key(1, static_cast<char>(c));
    const bool ok = (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') ||
                    c == '_' || c == '-' || c == '.';
    EXPECT_EQ(IsValidMetadataKey(key), ok) << c;
    const std::string value = "v" + key;
    EXPECT_EQ(IsValidAsciiValue(value), c >= 0x20 && c <= 0x7e) << c;
  }
  EXPECT_TRUE(IsValidAsciiValue(""));
}

TEST(MetadataKeyTest, Reserved) {
  for (const char* key : {":path",
                          ":authority",
                          ":status",
                          "te",
                          "content-type",
                          "user-agent",
                          "grpc-timeout",
                          "grpc-encoding",
                          "grpc-accept-encoding",
                          "grpc-status",
                          "grpc-message",
                          "grpc-status-details-bin",
                          "grpc-message-type",
                          "grpc-future-thing",
                          "host",
                          "connection",
                          "keep-alive",
                          "proxy-connection",
                          "upgrade",
                          "transfer-encoding"}) {
    EXPECT_TRUE(IsReservedHeader(key)) << key;
    EXPECT_FALSE(ValidateUserMetadata(key, "x").ok()) << key;
  }
  for (const char* key :
       {"authorization", "x-grpc-thing", "grpc", "grpcx-a", "te2", "cookie"}) {
    EXPECT_FALSE(IsReservedHeader(key)) << key;
    EXPECT_TRUE(ValidateUserMetadata(key, "x").ok()) << key;
  }
}

TEST(MetadataTest, ValidateUserMetadata) {
  EXPECT_TRUE(ValidateUserMetadata("x-id", "printable ~ value").ok());
  EXPECT_TRUE(ValidateUserMetadata("x-id", "").ok());
  EXPECT_TRUE(ValidateUserMetadata("x-bin", std::string("\0\xff\n", 3)).ok());
  const absl::Status bad_value = ValidateUserMetadata("x-id", "line\nbreak");
  EXPECT_EQ(bad_value.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(bad_value.message().find("-bin"), absl::string_view::npos);
  EXPECT_EQ(ValidateUserMetadata("X-Id", "v").code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(ValidateUserMetadata("grpc-status", "0").code(),
            absl::StatusCode::kInvalidArgument);

  Metadata md{{"a", "1"}, {"b-bin", std::string("\x01", 1)}};
  EXPECT_TRUE(ValidateUserMetadata(md).ok());
  md.Add("content-type", "text/plain");
  EXPECT_FALSE(ValidateUserMetadata(md).ok());
}

TEST(MetadataWireTest, EncodeValue) {
  EXPECT_EQ(EncodeMetadataValue("x-id", "abc"), "abc");
  // Unpadded, as the spec says to emit.
  EXPECT_EQ(EncodeMetadataValue("x-bin", "f"), "Zg");
  EXPECT_EQ(EncodeMetadataValue("x-bin", std::string("\0\xff", 2)), "AP8");
}

TEST(MetadataWireTest, DecodeBinaryHeader) {
  std::vector<std::string> out;
  ASSERT_TRUE(DecodeBinaryHeader("Zm9v", &out).ok());
  ASSERT_TRUE(DecodeBinaryHeader("Zg==", &out).ok());
  ASSERT_TRUE(DecodeBinaryHeader("Zg", &out).ok());
  EXPECT_EQ(out, (std::vector<std::string>{"foo", "f", "f"}));

  // Joined repeats, with optional whitespace after the comma.
  out.clear();
  ASSERT_TRUE(DecodeBinaryHeader("Zm9v,Zg==, Zm8 ,AP8", &out).ok());
  EXPECT_EQ(out, (std::vector<std::string>{"foo", "f", "fo",
                                           std::string("\0\xff", 2)}));
  out.clear();
  ASSERT_TRUE(DecodeBinaryHeader("", &out).ok());
  EXPECT_EQ(out, std::vector<std::string>{""});

  out = {"keep"};
  EXPECT_FALSE(DecodeBinaryHeader("Zm9v,Z", &out).ok());
  EXPECT_FALSE(DecodeBinaryHeader("Zm 9v", &out).ok());
  EXPECT_FALSE(DecodeBinaryHeader("Zm9v!", &out).ok());
  EXPECT_EQ(out, std::vector<std::string>{"keep"});

  EXPECT_EQ(*DecodeBinaryValue("Zm9vYg"), "foob");
  EXPECT_FALSE(DecodeBinaryValue("Zm9v,Zg").ok());
}

}  // namespace
}  // namespace rpc
