// ChannelArguments::SetInt/SetString with gRPC's argument names.

#include <climits>

#include "absl/time/time.h"
#include "gtest/gtest.h"
#include "rpc/channel.h"

namespace rpc {
namespace {

TEST(ChannelArgumentsTest, GrpcIntegerNames) {
  ChannelArguments args;
  EXPECT_TRUE(args.SetInt("grpc.keepalive_time_ms", 10000));
  EXPECT_TRUE(args.SetInt("grpc.keepalive_timeout_ms", 500));
  EXPECT_TRUE(args.SetInt("grpc.keepalive_permit_without_calls", 1));
  EXPECT_TRUE(args.SetInt("grpc.initial_reconnect_backoff_ms", 100));
  EXPECT_TRUE(args.SetInt("grpc.max_reconnect_backoff_ms", 2000));
  EXPECT_TRUE(args.SetInt("grpc.min_reconnect_backoff_ms", 3000));
  EXPECT_TRUE(args.SetInt("grpc.dns_min_time_between_resolutions_ms", 50));
  EXPECT_TRUE(args.SetInt("grpc.max_receive_message_length", 1 << 20));
  EXPECT_TRUE(args.SetInt("grpc.max_send_message_length", 1 << 10));
  EXPECT_EQ(args.keepalive_time, absl::Seconds(10));
  EXPECT_EQ(args.keepalive_timeout, absl::Milliseconds(500));
  EXPECT_TRUE(args.keepalive_permit_without_calls);
  EXPECT_EQ(args.initial_backoff, absl::Milliseconds(100));
  EXPECT_EQ(args.max_backoff, absl::Seconds(2));
  EXPECT_EQ(args.min_connect_timeout, absl::Seconds(3));
  EXPECT_EQ(args.dns_min_time_between_resolutions, absl::Milliseconds(50));
  EXPECT_EQ(args.max_receive_message_size, 1 << 20);
  EXPECT_EQ(args.max_send_message_size, 1 << 10);
  // INT_MAX is gRPC's "off" for keepalive.
  EXPECT_TRUE(args.SetInt("grpc.keepalive_time_ms", INT_MAX));
  EXPECT_EQ(args.keepalive_time, absl::InfiniteDuration());
  EXPECT_TRUE(args.SetInt("grpc.keepalive_permit_without_calls", 0));
  EXPECT_FALSE(args.keepalive_permit_without_calls);
}

TEST(ChannelArgumentsTest, GrpcStringNames) {
  ChannelArguments args;
  EXPECT_TRUE(args.SetString("grpc.lb_policy_name", "round_robin"));
  EXPECT_TRUE(args.SetString("grpc.ssl_target_name_override", "foo.test"));
  EXPECT_TRUE(args.SetString("grpc.primary_user_agent", "my-app/1.0"));
  EXPECT_EQ(args.load_balancing_policy_name, "round_robin");
  EXPECT_EQ(args.ssl_target_name_override, "foo.test");
  EXPECT_EQ(args.user_agent_prefix, "my-app/1.0");
}

TEST(ChannelArgumentsTest, UnknownNamesAndNegativeDurationsChangeNothing) {
  ChannelArguments args;
  const ChannelArguments defaults;
  EXPECT_FALSE(args.SetInt("grpc.no_such_argument", 1));
  EXPECT_FALSE(args.SetString("grpc.keepalive_time_ms", "10"));
  EXPECT_FALSE(args.SetInt("grpc.lb_policy_name", 1));
  EXPECT_FALSE(args.SetInt("grpc.keepalive_time_ms", -1));
  EXPECT_FALSE(args.SetInt("grpc.initial_reconnect_backoff_ms", -5));
  EXPECT_EQ(args.keepalive_time, defaults.keepalive_time);
  EXPECT_EQ(args.initial_backoff, defaults.initial_backoff);
  EXPECT_EQ(args.load_balancing_policy_name, "pick_first");
}

TEST(ChannelArgumentsTest, RetryNames) {
  ChannelArguments args;
  EXPECT_TRUE(args.enable_retries);
  EXPECT_EQ(args.per_rpc_retry_buffer_size, size_t{256} << 10);
  EXPECT_TRUE(args.SetInt("grpc.enable_retries", 0));
  EXPECT_FALSE(args.enable_retries);
  EXPECT_TRUE(args.SetInt("grpc.per_rpc_retry_buffer_size", 1000));
  EXPECT_EQ(args.per_rpc_retry_buffer_size, 1000u);
  EXPECT_FALSE(args.SetInt("grpc.per_rpc_retry_buffer_size", -1));
  EXPECT_EQ(args.per_rpc_retry_buffer_size, 1000u);
}

}  // namespace
}  // namespace rpc
