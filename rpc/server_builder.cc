#include "rpc/server_builder.h"

#include <cstdint>
#include <utility>

namespace rpc {

ServerBuilder::ServerBuilder() = default;

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
  options_.num_loops = n > 0 ? n : 1;
  return *this;
}

ServerBuilder& ServerBuilder::SetWorkerThreads(int min, int max) {
  options_.min_workers = min > 0 ? min : 1;
  options_.max_workers = max;
  return *this;
}

ServerBuilder& ServerBuilder::SetMaxReceiveMessageSize(int bytes) {
  options_.limits.max_receive_message_size =
      bytes < 0 ? SIZE_MAX : static_cast<size_t>(bytes);
  return *this;
}

ServerBuilder& ServerBuilder::SetMaxSendMessageSize(int bytes) {
  options_.limits.max_send_message_size =
      bytes < 0 ? SIZE_MAX : static_cast<size_t>(bytes);
  return *this;
}

ServerBuilder& ServerBuilder::SetDefaultCompressionAlgorithm(
    compression::Encoding encoding) {
  options_.limits.default_encoding = encoding;
  return *this;
}

ServerBuilder& ServerBuilder::SetCompressionThreshold(size_t bytes) {
  options_.limits.compression_threshold = bytes;
  return *this;
}

std::unique_ptr<Server> ServerBuilder::BuildAndStart() {
  std::unique_ptr<Server> server(new Server(options_, services_));
  if (!server->Start(addresses_, credentials_, selected_ports_).ok())
    return nullptr;
  return server;
}

}  // namespace rpc
