#include "rpc/channel.h"

#include <climits>
#include <memory>
#include <utility>

#include "rpc/client_context.h"
#include "rpc/internal/channel_impl.h"
#include "rpc/internal/client_call.h"
#include "transport/io/event_loop.h"

namespace rpc {

Channel::Channel(std::unique_ptr<internal::ChannelImpl> impl)
    : impl_(std::move(impl)) {}

Channel::~Channel() = default;

const std::string& Channel::target() const { return impl_->target(); }

ConnectivityState Channel::GetState(bool try_to_connect) {
  return impl_->GetState(try_to_connect);
}

bool Channel::WaitForStateChangeImpl(ConnectivityState last_observed,
                                     absl::Time deadline) {
  return impl_->WaitForStateChange(last_observed, deadline);
}

std::shared_ptr<internal::ClientCall> Channel::CreateCall(
    const std::string& method, ClientContext* context) {
  return impl_->CreateCall(method, context->deadline(),
                           context->send_metadata(),
                           context->compression_algorithm());
}

bool ChannelArguments::SetInt(const std::string& name, int value) {
  struct Duration {
    const char* name;
    absl::Duration ChannelArguments::*field;
    bool int_max_is_infinite;
  };
  static constexpr Duration kDurations[] = {
      {"grpc.keepalive_time_ms", &ChannelArguments::keepalive_time, true},
      {"grpc.keepalive_timeout_ms", &ChannelArguments::keepalive_timeout, true},
      {"grpc.initial_reconnect_backoff_ms", &ChannelArguments::initial_backoff,
       false},
      {"grpc.max_reconnect_backoff_ms", &ChannelArguments::max_backoff, false},
      {"grpc.min_reconnect_backoff_ms", &ChannelArguments::min_connect_timeout,
       false},
      {"grpc.dns_min_time_between_resolutions_ms",
       &ChannelArguments::dns_min_time_between_resolutions, false},
  };
  for (const Duration& d : kDurations) {
    if (name != d.name) continue;
    if (value < 0) return false;
    // A reconnect backoff or connect timeout of 0 ms is no use.
    if (value < 1 && (d.field == &ChannelArguments::initial_backoff ||
                      d.field == &ChannelArguments::min_connect_timeout)) {
      return false;
    }
    this->*d.field = d.int_max_is_infinite && value == INT_MAX
                         ? absl::InfiniteDuration()
                         : absl::Milliseconds(value);
    return true;
  }
  if (name == "grpc.keepalive_permit_without_calls") {
    keepalive_permit_without_calls = value != 0;
  } else if (name == "grpc.max_receive_message_length") {
    max_receive_message_size = value;
  } else if (name == "grpc.max_send_message_length") {
    max_send_message_size = value;
  } else if (name == "grpc.max_metadata_size") {
    SetMaxMetadataSize(value);
  } else if (name == "grpc.absolute_max_metadata_size") {
    SetAbsoluteMaxMetadataSize(value);
  } else if (name == "grpc.enable_retries") {
    enable_retries = value != 0;
  } else if (name == "h2rpc.busy_poll_us") {
    if (value < 0) return false;
    busy_poll = absl::Microseconds(value);
  } else if (name == "grpc.per_rpc_retry_buffer_size") {
    if (value < 0) return false;
    per_rpc_retry_buffer_size = static_cast<size_t>(value);
  } else {
    return false;
  }
  return true;
}

bool ChannelArguments::SetString(const std::string& name,
                                 const std::string& value) {
  if (name == "grpc.lb_policy_name") {
    load_balancing_policy_name = value;
  } else if (name == "grpc.ssl_target_name_override") {
    ssl_target_name_override = value;
  } else if (name == "grpc.primary_user_agent") {
    user_agent_prefix = value;
  } else {
    return false;
  }
  return true;
}

std::shared_ptr<Channel> CreateChannel(
    const std::string& target,
    const std::shared_ptr<ChannelCredentials>& creds) {
  return CreateCustomChannel(target, creds, ChannelArguments());
}

std::shared_ptr<Channel> CreateCustomChannel(
    const std::string& target, const std::shared_ptr<ChannelCredentials>& creds,
    const ChannelArguments& args) {
  auto impl = std::make_unique<internal::ChannelImpl>(
      target, creds, args, internal::AcquireChannelLoop(args));
  // Without a loop the channel fails its calls (ChannelImpl).
  transport::EventLoop* const loop = impl->loop();
  return std::shared_ptr<Channel>(
      new Channel(std::move(impl)), [loop](Channel* c) {
        // The last reference may go away on a loop thread (an async callback
        // holding a stub): on the channel's own, waiting for it would deadlock;
        // on another loop's, waiting would stall that loop's connections (and
        // two loops waiting for each other would deadlock). So from any loop
        // thread the channel closes in a task of its own loop, with none of its
        // methods on the stack, and is freed in a later one
        // (ChannelImpl::~ChannelImpl).
        if (loop != nullptr && transport::EventLoop::Current() != nullptr) {
          loop->Post([c, loop] {
            internal::ChannelAccess::Impl(c)->CloseOnLoop();
            loop->Post([c] { delete c; });
          });
        } else {
          delete c;
        }
      });
}

}  // namespace rpc
