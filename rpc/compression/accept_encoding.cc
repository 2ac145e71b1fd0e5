#include "rpc/compression/accept_encoding.h"

#include <string>

namespace rpc::compression {
namespace {

void AppendWeight(int16_t weight, std::string* out) {
  if (weight == AcceptEncoding::kNotListed) {
    out->push_back('-');
  } else {
    out->append(std::to_string(weight));
  }
}

}  // namespace

std::string DebugString(const AcceptEncoding& accept) {
  std::string out;
  for (Encoding e : kAllEncodings) {
    out.append(EncodingName(e));
    out.push_back('=');
    AppendWeight(accept.weight[static_cast<size_t>(e)], &out);
    out.push_back(' ');
  }
  out.append("*=");
  AppendWeight(accept.star, &out);
  return out;
}

}  // namespace rpc::compression
