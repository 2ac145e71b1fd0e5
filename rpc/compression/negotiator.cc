#include "rpc/compression/negotiator.h"

#include <optional>
#include <string_view>

#include "rpc/compression/accept_encoding.h"

namespace rpc::compression {

std::optional<Encoding> Negotiator::NegotiateWithParser(
    std::string_view value) const {
  return compression::Negotiate(ParseAcceptEncoding(value), preference_);
}

}  // namespace rpc::compression
