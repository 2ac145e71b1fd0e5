#include "rpc/internal/metadata_limits.h"

#include <algorithm>
#include <cstdint>

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
  // hard limit: keep the hard cap well above it, and let CONTINUATIONs of
  // our max frame size carry it.
  const size_t cap =
      std::max(options->max_header_block_bytes, 2 * std::max(soft, hard));
  options->max_header_block_bytes = cap;
  const size_t frames = cap / options->local_settings.max_frame_size + 1;
  options->max_continuation_frames = static_cast<uint32_t>(std::min<size_t>(
      std::max<size_t>(options->max_continuation_frames, frames), UINT32_MAX));
}

std::string MetadataLimits::ReceivedTooLarge(size_t size) const {
  const bool hard_exceeded = size > hard;
  return std::string("received metadata size exceeds ") +
         (hard_exceeded ? "hard" : "soft") + " limit (" + std::to_string(size) +
         " vs. " + std::to_string(hard_exceeded ? hard : soft) + ")";
}

std::string ToBeSentTooLarge(size_t size, size_t peer_limit) {
  return "to-be-sent metadata size exceeds peer limit (" +
         std::to_string(size) + " vs. " + std::to_string(peer_limit) + ")";
}

}  // namespace internal
}  // namespace rpc
