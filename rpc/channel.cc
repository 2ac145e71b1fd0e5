#include "rpc/channel.h"

#include <arpa/inet.h>
#include <netdb.h>
#include <sys/socket.h>

#include <algorithm>
#include <cstring>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/synchronization/notification.h"
#include "rpc/wire/content_type.h"
#include "transport/tcp.h"
#include "transport/tls_endpoint.h"

namespace rpc {

namespace {

std::string StripScheme(std::string target) {
  for (const char* prefix : {"dns:///", "dns:", "ipv4:", "ipv6:"}) {
    if (absl::StartsWith(target, prefix)) return target.substr(strlen(prefix));
  }
  return target;
}

// Numeric hosts and "localhost" directly; other names through getaddrinfo
// (blocking: names are resolved on the channel's loop when connecting).
absl::StatusOr<transport::SocketAddress> Resolve(const std::string& authority) {
  absl::StatusOr<transport::SocketAddress> addr =
      transport::SocketAddress::ParseHostPort(authority);
  if (addr.ok()) return addr;
  const size_t colon = authority.rfind(':');
  uint32_t port = 0;
  if (colon == std::string::npos ||
      !absl::SimpleAtoi(authority.substr(colon + 1), &port) || port > 65535) {
    return absl::InvalidArgumentError("bad target \"" + authority +
                                      "\": want host:port");
  }
  const std::string host = authority.substr(0, colon);
  addrinfo hints;
  memset(&hints, 0, sizeof(hints));
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* result = nullptr;
  if (getaddrinfo(host.c_str(), nullptr, &hints, &result) != 0 ||
      result == nullptr) {
    return absl::UnavailableError("cannot resolve " + host);
  }
  char buf[INET6_ADDRSTRLEN] = {};
  const addrinfo* ai = result;
  const void* src =
      ai->ai_family == AF_INET
          ? static_cast<const void*>(
                &reinterpret_cast<const sockaddr_in*>(ai->ai_addr)->sin_addr)
          : static_cast<const void*>(
                &reinterpret_cast<const sockaddr_in6*>(ai->ai_addr)->sin6_addr);
  inet_ntop(ai->ai_family, src, buf, sizeof(buf));
  freeaddrinfo(result);
  return transport::SocketAddress::Parse(buf, static_cast<uint16_t>(port));
}

size_t Limit(int v) { return v < 0 ? SIZE_MAX : static_cast<size_t>(v); }

}  // namespace

Channel::Channel(std::string target, std::shared_ptr<ChannelCredentials> creds,
                 const ChannelArguments& args,
                 std::unique_ptr<transport::EventLoopThread> loop_thread)
    : target_(std::move(target)),
      authority_(StripScheme(target_)),
      creds_(creds != nullptr ? std::move(creds)
                              : InsecureChannelCredentials()),
      args_(args),
      user_agent_(BuildUserAgent(args.user_agent_prefix)),
      loop_thread_(std::move(loop_thread)),
      loop_(loop_thread_->loop()),
      backoff_(args.initial_backoff),
      self_(std::make_shared<Channel*>(this)) {
  call_options_.max_receive_message_size = Limit(args.max_receive_message_size);
  call_options_.max_send_message_size = Limit(args.max_send_message_size);
  call_options_.encoding = args.compression_algorithm;
  call_options_.compression_threshold = args.compression_threshold;
}

Channel::~Channel() {
  absl::Notification done;
  loop_->Post([this, &done] {
    closing_ = true;
    *self_ = nullptr;
    auto waiting = std::move(waiting_);
    for (auto& call : waiting) {
      call->LoopFail(Status(StatusCode::UNAVAILABLE, "channel closed"));
    }
    transports_.clear();  // Fails their calls.
    current_ = nullptr;
    done.Notify();
  });
  done.WaitForNotification();
  loop_thread_.reset();
}

std::shared_ptr<internal::ClientCall> Channel::CreateCall(
    const std::string& path, absl::Time deadline, const Metadata& metadata,
    std::optional<compression::Encoding> encoding) {
  if (encoding.has_value()) {
    internal::ClientCallOptions options = call_options_;
    options.encoding = *encoding;
    return std::make_shared<internal::ClientCall>(this, loop_, path, deadline,
                                                  metadata, options);
  }
  return std::make_shared<internal::ClientCall>(this, loop_, path, deadline,
                                                metadata, call_options_);
}

void Channel::LoopStartCall(std::shared_ptr<internal::ClientCall> call) {
  if (closing_) {
    call->LoopFail(Status(StatusCode::UNAVAILABLE, "channel closed"));
    return;
  }
  if (current_ != nullptr && current_->accepting()) {
    call->LoopStart(current_);
    return;
  }
  if (!connecting_ && absl::Now() < next_attempt_) {
    call->LoopFail(Status(
        StatusCode::UNAVAILABLE,
        "failed to connect to " + authority_ + " (waiting to reconnect)"));
    return;
  }
  waiting_.push_back(std::move(call));
  if (!connecting_) LoopConnect();
}

void Channel::LoopConnect() {
  connecting_ = true;
  if (!creds_->status().ok()) {
    LoopOnConnected(creds_->status());
    return;
  }
  absl::StatusOr<transport::SocketAddress> addr = Resolve(authority_);
  if (!addr.ok()) {
    LoopOnConnected(addr.status());
    return;
  }
  if (creds_->tls_context() != nullptr) {
    std::string name = args_.ssl_target_name_override;
    if (name.empty()) name = authority_.substr(0, authority_.rfind(':'));
    if (name.size() > 2 && name.front() == '[') {
      name = name.substr(1, name.size() - 2);
    }
    transport::TlsConnect(
        loop_, *addr, creds_->tls_context(), name, args_.connect_timeout,
        [self = self_](
            absl::StatusOr<std::unique_ptr<transport::TlsEndpoint>> endpoint) {
          if (*self == nullptr) return;
          if (!endpoint.ok()) {
            (*self)->LoopOnConnected(endpoint.status());
          } else {
            (*self)->LoopOnConnected(
                std::unique_ptr<transport::Endpoint>(std::move(*endpoint)));
          }
        });
    return;
  }
  transport::TcpConnect(
      loop_, *addr, args_.connect_timeout,
      [self = self_](
          absl::StatusOr<std::unique_ptr<transport::TcpEndpoint>> endpoint) {
        if (*self == nullptr) return;
        if (!endpoint.ok()) {
          (*self)->LoopOnConnected(endpoint.status());
        } else {
          (*self)->LoopOnConnected(
              std::unique_ptr<transport::Endpoint>(std::move(*endpoint)));
        }
      });
}

void Channel::LoopOnConnected(
    absl::StatusOr<std::unique_ptr<transport::Endpoint>> endpoint) {
  connecting_ = false;
  auto waiting = std::move(waiting_);
  waiting_.clear();
  if (!endpoint.ok()) {
    next_attempt_ = absl::Now() + backoff_;
    backoff_ = std::min(backoff_ * 1.6, args_.max_backoff);
    const Status status(StatusCode::UNAVAILABLE,
                        "failed to connect to " + authority_ + ": " +
                            std::string(endpoint.status().message()));
    for (auto& call : waiting) call->LoopFail(status);
    return;
  }
  backoff_ = args_.initial_backoff;
  next_attempt_ = absl::InfinitePast();
  internal::ClientTransportOptions options;
  options.connection.role = transport::Role::kClient;
  options.keepalive_time = args_.keepalive_time;
  options.keepalive_timeout = args_.keepalive_timeout;
  options.keepalive_permit_without_calls = args_.keepalive_permit_without_calls;
  internal::ClientTransport::Host* host = this;
  auto t = std::make_unique<internal::ClientTransport>(
      host, std::move(*endpoint), options);
  current_ = t.get();
  transports_[current_] = std::move(t);
  current_->Start();
  for (auto& call : waiting) call->LoopStart(current_);
}

void Channel::OnTransportDraining(internal::ClientTransport* transport) {
  if (current_ == transport) current_ = nullptr;
}

void Channel::OnTransportClosed(internal::ClientTransport* transport) {
  if (current_ == transport) current_ = nullptr;
  loop_->Post([self = self_, transport] {
    if (*self != nullptr) (*self)->transports_.erase(transport);
  });
}

std::shared_ptr<Channel> CreateChannel(
    const std::string& target,
    const std::shared_ptr<ChannelCredentials>& creds) {
  return CreateCustomChannel(target, creds, ChannelArguments());
}

std::shared_ptr<Channel> CreateCustomChannel(
    const std::string& target, const std::shared_ptr<ChannelCredentials>& creds,
    const ChannelArguments& args) {
  absl::StatusOr<std::unique_ptr<transport::EventLoopThread>> thread =
      transport::EventLoopThread::Start("rpc-channel");
  if (!thread.ok()) return nullptr;
  return std::make_shared<Channel>(target, creds, args, std::move(*thread));
}

}  // namespace rpc
