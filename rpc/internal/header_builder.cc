#include "rpc/internal/header_builder.h"

#include <cstring>

#include "rpc/wire/percent.h"

namespace rpc {
namespace internal {

void HeaderBuilder::AddCopy(std::string_view name, std::string_view value) {
  if (value.size() <= kInlineStorage - inline_used_) {
    char* const copy = inline_ + inline_used_;
    if (!value.empty()) std::memcpy(copy, value.data(), value.size());
    inline_used_ += value.size();
    fields_.push_back({name, std::string_view(copy, value.size())});
    return;
  }
  fields_.push_back({name, overflow_.emplace_front(value)});
}

void HeaderBuilder::AddMetadata(const Metadata& metadata) {
  for (const auto& [key, value] : metadata) {
    if (!ValidateUserMetadata(key, value).ok()) continue;
    if (IsBinaryKey(key)) {
      AddCopy(key, EncodeMetadataValue(key, value));
    } else {
      Add(key, value);
    }
  }
}

void HeaderBuilder::AddStatus(const Status& status) {
  Add("grpc-status", GrpcStatusValue(status.error_code()));
  if (!status.error_message().empty()) {
    AddCopy("grpc-message", PercentEncode(status.error_message()));
  }
  if (!status.error_details().empty()) {
    AddCopy(
        "grpc-status-details-bin",
        EncodeMetadataValue("grpc-status-details-bin", status.error_details()));
  }
}

void ParseMetadata(const hpack::HeaderList& headers, Metadata* out) {
  for (size_t i = 0; i < headers.size(); ++i) {
    hpack::HeaderField f = headers[i];
    if (f.name.empty() || IsReservedHeader(f.name)) continue;
    if (IsBinaryKey(f.name)) {
      std::vector<std::string> values;
      if (!DecodeBinaryHeader(f.value, &values).ok()) continue;
      for (std::string& v : values) out->Add(std::string(f.name), std::move(v));
    } else {
      out->Add(std::string(f.name), std::string(f.value));
    }
  }
}

std::string_view FindHeader(const hpack::HeaderList& headers,
                            std::string_view name) {
  for (size_t i = 0; i < headers.size(); ++i) {
    hpack::HeaderField f = headers[i];
    if (f.name == name) return f.value;
  }
  return {};
}

}  // namespace internal
}  // namespace rpc
