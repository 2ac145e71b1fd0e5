#include "rpc/server_context.h"

#include <utility>

#include "rpc/internal/server_call.h"

namespace rpc {

ServerContext::ServerContext(std::shared_ptr<internal::ServerCall> call)
    : call_(std::move(call)) {}

ServerContext::~ServerContext() = default;

absl::Time ServerContext::deadline() const { return call_->deadline; }

const Metadata& ServerContext::client_metadata() const {
  return call_->client_metadata;
}

std::string ServerContext::peer() const {
  return call_->peer != nullptr ? *call_->peer : std::string();
}

std::shared_ptr<const AuthContext> ServerContext::auth_context() const {
  return call_->auth_context != nullptr ? call_->auth_context
                                        : InsecureAuthContext();
}

const std::string& ServerContext::method() const {
  return call_->method()->path;
}

void ServerContext::AddInitialMetadata(const std::string& key,
                                       const std::string& value) {
  initial_metadata_.Add(key, value);
}

void ServerContext::AddTrailingMetadata(const std::string& key,
                                        const std::string& value) {
  trailing_metadata_.Add(key, value);
}

bool ServerContext::IsCancelled() const { return call_->IsCancelled(); }

void ServerContext::set_compression_algorithm(compression::Encoding encoding) {
  call_->SetResponseEncoding(encoding);
}

compression::Encoding ServerContext::request_compression_algorithm() const {
  return call_->request_encoding;
}

}  // namespace rpc
