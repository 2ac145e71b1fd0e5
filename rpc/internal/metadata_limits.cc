#include "rpc/internal/metadata_limits.h"

#include <algorithm>
#include <cstdint>
#include <string>

namespace rpc {
namespace internal {

MetadataLimits MetadataLimits::FromArgs(int soft, int hard) {
  MetadataLimits limits;
  if (soft >= 0) {
    limits.soft = static_cast<size_t>(soft);
  } else if (hard >= 0) {
    limits.soft = std::max(kDefaultSoft, static_cast<size_t>(0.8 * hard));
  }
  if (hard >= 0) {
    limits.hard = static_cast<size_t>(hard);
  } else if (soft >= 0) {
    limits.hard =
        std::max(kDefaultHard, static_cast<size_t>(1.25 * limits.soft));
  }
  return limits;
}

void MetadataLimits::ApplyTo(transport::ConnectionOptions* options) const {
  // The transport keeps fields up to the smaller limit (a soft limit above
  // the hard one is the hard one); 0 there would mean "the advertised one".
  const size_t keep = std::max<size_t>(std::min(soft, hard), 1);
  options->soft_max_header_list_size = keep;
  options->local_settings.max_header_list_size =
      static_cast<uint32_t>(std::min<size_t>(hard, UINT32_MAX));
  // A peer that honours the setting may send a block about as large as the
  // hard limit: keep the hard cap well above it, up to a ceiling on what one
  // peer can make us hold (limits near INT_MAX would otherwise mean GiBs).
  // The transport lets a block take as many CONTINUATIONs as its size needs
  // at an average of 1 KiB each.
  const size_t larger = std::max(soft, hard);
  const size_t derived =
      larger > kMaxHeaderBlockBytes / 2 ? kMaxHeaderBlockBytes : 2 * larger;
  options->max_header_block_bytes =
      std::max(options->max_header_block_bytes, derived);
}

std::string MetadataLimits::ReceivedTooLarge(size_t size) const {
  const bool hard_exceeded = size > hard;
  return std::string("received metadata size exceeds ") +
         (hard_exceeded ? "hard" : "soft") + " limit (" + std::to_string(size) +
         " vs. " + std::to_string(hard_exceeded ? hard : soft) + ")";
}

bool OverPeerLimit(const absl::Status& submitted,
                   absl::Span<const hpack::HeaderField> fields,
                   const transport::Connection& connection) {
  // kResourceExhausted has other reasons too (a client's pending streams);
  // the transport checks the peer's limit first.
  return absl::IsResourceExhausted(submitted) &&
         hpack::HeaderListSize(fields) >
             connection.remote_settings().max_header_list_size;
}

Status SubmitFailure(const absl::Status& submitted,
                     absl::Span<const hpack::HeaderField> fields,
                     const transport::Connection& connection,
                     StatusCode otherwise) {
  if (OverPeerLimit(submitted, fields, connection)) {
    return Status(
        StatusCode::RESOURCE_EXHAUSTED,
        "to-be-sent metadata size exceeds peer limit (" +
            std::to_string(hpack::HeaderListSize(fields)) + " vs. " +
            std::to_string(connection.remote_settings().max_header_list_size) +
            ")");
  }
  return Status(otherwise, std::string(submitted.message()));
}

}  // namespace internal
}  // namespace rpc
