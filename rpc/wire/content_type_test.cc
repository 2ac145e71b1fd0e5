#include "rpc/wire/content_type.h"

#include "gtest/gtest.h"

namespace rpc {
namespace {

TEST(ContentTypeTest, Grpc) {
  EXPECT_EQ(ClassifyContentType("application/grpc"), ContentTypeKind::kProto);
  EXPECT_EQ(ClassifyContentType("application/grpc+proto"),
            ContentTypeKind::kProto);
  EXPECT_EQ(ClassifyContentType("application/grpc;charset=utf-8"),
            ContentTypeKind::kProto);
  EXPECT_EQ(ClassifyContentType("application/grpc ; x=y"),
            ContentTypeKind::kProto);
  EXPECT_EQ(ClassifyContentType("application/grpc+proto; x=y"),
            ContentTypeKind::kProto);
  EXPECT_EQ(ClassifyContentType("Application/GRPC+Proto"),
            ContentTypeKind::kProto);
  EXPECT_EQ(ClassifyContentType("application/grpc+json"),
            ContentTypeKind::kOther);
  EXPECT_EQ(ClassifyContentType("application/grpc+custom;a=b"),
            ContentTypeKind::kOther);
  EXPECT_TRUE(IsGrpcContentType(kGrpcContentType));
}

TEST(ContentTypeTest, NotGrpc) {
  for (const char* bad :
       {"", "application/json", "text/plain", "application/grp",
        "application/grpcx", "application/grpc-web",
        "application/grpc-web+proto", "application/grpc+", "application/grpc ",
        "xapplication/grpc", " application/grpc"}) {
    EXPECT_EQ(ClassifyContentType(bad), ContentTypeKind::kNotGrpc) << bad;
    EXPECT_FALSE(IsGrpcContentType(bad)) << bad;
  }
  EXPECT_EQ(kUnsupportedMediaType, 415);
}

TEST(UserAgentTest, Build) {
  EXPECT_EQ(BuildUserAgent(), "h2rpc-c++/0.1");
  EXPECT_EQ(BuildUserAgent("my-app/2.0"), "my-app/2.0 h2rpc-c++/0.1");
}

}  // namespace
}  // namespace rpc
