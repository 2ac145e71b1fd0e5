#include "examples/content_coding.h"

#include <memory>
#include <string>

namespace examples {

bool CompressibleType(std::string_view content_type) {
  if (content_type.substr(0, 6) == "image/") {
    return content_type == "image/svg+xml" || content_type == "image/x-icon";
  }
  static constexpr std::string_view kCompressed[] = {
      "application/pdf", "application/zip", "application/gzip",
      "application/zstd", "application/x-xz"};
  for (std::string_view t : kCompressed) {
    if (content_type == t) return false;
  }
  return true;
}

CodingDecision ChooseCoding(const CodingOptions& options,
                            std::optional<std::string_view> accept_encoding,
                            size_t size, std::string_view content_type) {
  CodingDecision decision;
  if (size < options.min_bytes || size > options.max_bytes ||
      !CompressibleType(content_type)) {
    return decision;  // Not negotiated: identity, no vary.
  }
  decision.vary = true;
  const std::optional<Encoding> encoding =
      accept_encoding.has_value()
          ? options.negotiator->Negotiate(*accept_encoding)
          : options.negotiator->Negotiate(std::nullopt);
  if (!encoding.has_value()) {
    decision.not_acceptable = true;
  } else {
    decision.encoding = *encoding;
  }
  return decision;
}

const transport::Slice* EncodedVariants::Get(Encoding e,
                                             std::string_view original) {
  const size_t i = Index(e);
  if (e == Encoding::kIdentity) return nullptr;
  if (state_[i] == kUnknown) {
    // One compressor per encoding and thread: its context is reused.
    thread_local std::array<std::unique_ptr<rpc::compression::Compressor>,
                            rpc::compression::kNumEncodings>
        compressors;
    if (compressors[i] == nullptr) {
      compressors[i] = std::make_unique<rpc::compression::Compressor>(e);
    }
    std::string out;
    ++compressions_;
    if (compressors[i]->Compress(original, &out).ok() &&
        out.size() < original.size()) {
      data_[i] = transport::Slice::Copy(out);
      state_[i] = kReady;
    } else {
      state_[i] = kNotSmaller;
    }
  }
  return state_[i] == kReady ? &data_[i] : nullptr;
}

}  // namespace examples
