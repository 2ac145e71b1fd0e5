#include "rpc/server_builder.h"

#include <algorithm>
#include <cstdint>
#include <limits>
#include <utility>

#include "rpc/internal/metadata_limits.h"
#include "rpc/internal/server_options.h"

namespace rpc {

ServerBuilder::ServerBuilder()
    : options_(std::make_unique<internal::ServerOptions>()) {}

ServerBuilder::~ServerBuilder() = default;
ServerBuilder::ServerBuilder(ServerBuilder&&) noexcept = default;
ServerBuilder& ServerBuilder::operator=(ServerBuilder&&) noexcept = default;

ServerBuilder& ServerBuilder::AddListeningPort(
    const std::string& address, std::shared_ptr<ServerCredentials> creds,
    int* selected_port) {
  addresses_.push_back(address);
  credentials_.push_back(std::move(creds));
  selected_ports_.push_back(selected_port);
  return *this;
}

ServerBuilder& ServerBuilder::RegisterService(Service* service) {
  services_.push_back(service);
  return *this;
}

ServerBuilder& ServerBuilder::SetNumLoops(int n) {
  options_->num_loops = n > 0 ? n : 1;
  return *this;
}

ServerBuilder& ServerBuilder::SetWorkerThreads(int min, int max) {
  options_->min_workers = min > 0 ? min : 1;
  options_->max_workers = max;
  return *this;
}

ServerBuilder& ServerBuilder::SetMaxPendingCalls(int n) {
  options_->max_pending_calls = n > 0 ? static_cast<size_t>(n) : 0;
  return *this;
}

ServerBuilder& ServerBuilder::SetWorkerIdleTime(absl::Duration idle) {
  options_->worker_idle_time =
      idle < absl::ZeroDuration() ? absl::ZeroDuration() : idle;
  return *this;
}

ServerBuilder& ServerBuilder::SetWorkerLeaderFollower(bool on) {
  options_->worker_leader_follower = on;
  return *this;
}

ServerBuilder& ServerBuilder::SetMaxReceiveMessageSize(int bytes) {
  options_->limits.max_receive_message_size =
      bytes < 0 ? SIZE_MAX : static_cast<size_t>(bytes);
  return *this;
}

ServerBuilder& ServerBuilder::SetMaxSendMessageSize(int bytes) {
  options_->limits.max_send_message_size =
      bytes < 0 ? SIZE_MAX : static_cast<size_t>(bytes);
  return *this;
}

ServerBuilder& ServerBuilder::SetMaxMetadataSize(int bytes) {
  max_metadata_size_ = bytes < 0 ? -1 : bytes;
  return *this;
}

ServerBuilder& ServerBuilder::SetAbsoluteMaxMetadataSize(int bytes) {
  absolute_max_metadata_size_ = bytes < 0 ? -1 : bytes;
  return *this;
}

ServerBuilder& ServerBuilder::SetDefaultCompressionAlgorithm(
    compression::Encoding encoding) {
  options_->limits.default_encoding = encoding;
  return *this;
}

ServerBuilder& ServerBuilder::SetCompressionThreshold(size_t bytes) {
  options_->limits.compression_threshold = bytes;
  return *this;
}

ServerBuilder& ServerBuilder::SetKeepaliveTime(absl::Duration time) {
  options_->keepalive.keepalive_time = time;
  return *this;
}

ServerBuilder& ServerBuilder::SetKeepaliveTimeout(absl::Duration timeout) {
  options_->keepalive.keepalive_timeout = timeout;
  return *this;
}

ServerBuilder& ServerBuilder::SetKeepalivePermitWithoutCalls(bool permit) {
  options_->keepalive.permit_without_calls = permit;
  return *this;
}

ServerBuilder& ServerBuilder::SetMinPingIntervalWithoutData(
    absl::Duration interval) {
  options_->keepalive.min_ping_interval_without_data = interval;
  return *this;
}

ServerBuilder& ServerBuilder::SetMaxPingStrikes(int max_strikes) {
  // Negative is a mistake, not "unlimited" (0): keep the setting.
  if (max_strikes >= 0) options_->keepalive.max_ping_strikes = max_strikes;
  return *this;
}

ServerBuilder& ServerBuilder::SetMaxConnectionIdle(absl::Duration idle) {
  options_->keepalive.max_connection_idle = idle;
  return *this;
}

ServerBuilder& ServerBuilder::SetMaxConnectionAge(absl::Duration age) {
  options_->keepalive.max_connection_age = age;
  return *this;
}

ServerBuilder& ServerBuilder::SetMaxConnectionAgeGrace(absl::Duration grace) {
  options_->keepalive.max_connection_age_grace = grace;
  return *this;
}

ServerBuilder& ServerBuilder::SetMaxConcurrentStreams(int max_streams) {
  options_->max_concurrent_streams = max_streams < 0
                                         ? transport::kSettingUnlimited
                                         : static_cast<uint32_t>(max_streams);
  return *this;
}

ServerBuilder& ServerBuilder::AddChannelArgument(const std::string& name,
                                                 int value) {
  if (value < 0) return *this;
  // gRPC's convention: INT_MAX milliseconds is "infinite".
  const absl::Duration ms = value == std::numeric_limits<int>::max()
                                ? absl::InfiniteDuration()
                                : absl::Milliseconds(value);
  if (name == "grpc.keepalive_time_ms") {
    SetKeepaliveTime(ms);
  } else if (name == "grpc.keepalive_timeout_ms") {
    SetKeepaliveTimeout(ms);
  } else if (name == "grpc.keepalive_permit_without_calls") {
    SetKeepalivePermitWithoutCalls(value != 0);
  } else if (name == "grpc.http2.min_ping_interval_without_data_ms") {
    SetMinPingIntervalWithoutData(ms);
  } else if (name == "grpc.http2.max_ping_strikes") {
    SetMaxPingStrikes(value);
  } else if (name == "grpc.max_connection_idle_ms") {
    SetMaxConnectionIdle(ms);
  } else if (name == "grpc.max_connection_age_ms") {
    SetMaxConnectionAge(ms);
  } else if (name == "grpc.max_connection_age_grace_ms") {
    SetMaxConnectionAgeGrace(ms);
  } else if (name == "grpc.max_metadata_size") {
    SetMaxMetadataSize(value);
  } else if (name == "grpc.absolute_max_metadata_size") {
    SetAbsoluteMaxMetadataSize(value);
  } else if (name == "grpc.max_concurrent_streams") {
    SetMaxConcurrentStreams(value);
  } else if (name == "h2rpc.busy_poll_us") {
    SetBusyPoll(absl::Microseconds(value));
  }
  return *this;
}

ServerBuilder& ServerBuilder::SetBusyPoll(absl::Duration budget) {
  options_->busy_poll = std::max(budget, absl::ZeroDuration());
  return *this;
}

std::unique_ptr<Server> ServerBuilder::BuildAndStart() {
  options_->limits.metadata = internal::MetadataLimits::FromArgs(
      max_metadata_size_, absolute_max_metadata_size_);
  std::vector<Service*> services = services_;
  std::unique_ptr<internal::DefaultHealthCheckService> health =
      internal::MakeDefaultHealthCheckService(services_);
  if (health != nullptr) services.push_back(health->service());
  return Server::Start(*options_, std::move(services), std::move(health),
                       addresses_, credentials_, selected_ports_);
}

}  // namespace rpc
