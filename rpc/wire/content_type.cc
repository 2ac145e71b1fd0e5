#include "rpc/wire/content_type.h"

#include <cstddef>

namespace rpc {

namespace {

char Lower(char c) { return (c >= 'A' && c <= 'Z') ? c + ('a' - 'A') : c; }

bool StartsWithIgnoreCase(std::string_view s, std::string_view prefix) {
  if (s.size() < prefix.size()) return false;
  for (size_t i = 0; i < prefix.size(); ++i) {
    if (Lower(s[i]) != prefix[i]) return false;
  }
  return true;
}

bool EqualsIgnoreCase(std::string_view a, std::string_view lower) {
  return a.size() == lower.size() && StartsWithIgnoreCase(a, lower);
}

}  // namespace

ContentTypeKind ClassifyContentType(std::string_view value) {
  if (!StartsWithIgnoreCase(value, kGrpcContentType)) {
    return ContentTypeKind::kNotGrpc;
  }
  std::string_view rest = value.substr(kGrpcContentType.size());
  // Split off parameters.
  const size_t semi = rest.find(';');
  std::string_view subtype =
      semi == std::string_view::npos ? rest : rest.substr(0, semi);
  while (!subtype.empty() && (subtype.back() == ' ' || subtype.back() == '\t'))
    subtype.remove_suffix(1);
  if (subtype.empty()) {
    // Whitespace directly after "application/grpc" without ';' is not a
    // media type.
    if (semi == std::string_view::npos && !rest.empty()) {
      return ContentTypeKind::kNotGrpc;
    }
    return ContentTypeKind::kProto;
  }
  if (subtype[0] != '+' || subtype.size() == 1) {
    return ContentTypeKind::kNotGrpc;
  }
  return EqualsIgnoreCase(subtype, "+proto") ? ContentTypeKind::kProto
                                             : ContentTypeKind::kOther;
}

std::string BuildUserAgent(std::string_view prefix) {
  std::string out;
  out.reserve(prefix.size() + 1 + kUserAgentProduct.size());
  if (!prefix.empty()) {
    out.append(prefix);
    out.push_back(' ');
  }
  out.append(kUserAgentProduct);
  return out;
}

}  // namespace rpc
