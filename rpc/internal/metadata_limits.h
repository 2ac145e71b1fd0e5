// MetadataLimits: how much metadata a connection accepts (gRPC's
// GRPC_ARG_MAX_METADATA_SIZE, the soft limit, and
// GRPC_ARG_ABSOLUTE_MAX_METADATA_SIZE, the hard one), and what the
// transport is told so that metadata over them fails one call, never the
// connection.
//
// Sizes are RFC 9113 6.5.2 header list sizes (name + value + 32 per field,
// pseudo-headers and gRPC's own fields included), as in gRPC.
//
// Defaults and derivation are gRPC core's (chttp2): soft 8 KiB, hard 16 KiB;
// a soft limit left unset is max(8 KiB, 0.8 x hard), a hard limit left unset
// max(16 KiB, 1.25 x soft). The hard limit is the SETTINGS_MAX_HEADER_LIST_SIZE
// we advertise, so a peer that honours it fails such a call locally.
//
// Received metadata over the soft limit fails its call with
// RESOURCE_EXHAUSTED "received metadata size exceeds soft limit (X vs. S)"
// (or "hard limit (X vs. H)" above that): a request gets a Trailers-Only
// answer, a response or its trailers fail the client's call (the stream is
// reset). grpc++ rejects a list between the two limits with a probability
// rising linearly from 0 to 1; we reject it every time, so that a call's
// fate does not depend on chance and a client hears of growing metadata at
// the first call over the soft limit. Set the soft limit as high as the
// hard one to accept everything up to the hard limit.
//
// The fields of a list over the soft limit are decoded (the HPACK context
// must stay in step) and dropped. The transport's hard cap on a header
// block's octets (max_header_block_bytes) is 2 MiB, or twice the larger
// limit when that is larger, but never more than kMaxHeaderBlockBytes
// (8 MiB: the most one connection's peer can make us buffer for a block,
// whatever the limits). Connection errors are the transport's: a block past
// that cap, a CONTINUATION flood, a block left unfinished, an HPACK bomb and
// the HPACK decoder's COMPRESSION_ERRORs.

#ifndef RPC_INTERNAL_METADATA_LIMITS_H_
#define RPC_INTERNAL_METADATA_LIMITS_H_

#include <cstddef>
#include <string>

#include "absl/status/status.h"
#include "absl/types/span.h"
#include "hpack/header_list.h"
#include "rpc/wire/status.h"
#include "transport/connection/connection.h"

namespace rpc {
namespace internal {

struct MetadataLimits {
  static constexpr size_t kDefaultSoft = 8 << 10;
  static constexpr size_t kDefaultHard = 16 << 10;
  // The ceiling on the hard cap ApplyTo derives from the limits.
  static constexpr size_t kMaxHeaderBlockBytes = 8 << 20;

  size_t soft = kDefaultSoft;
  size_t hard = kDefaultHard;

  // gRPC's rules for the two channel arguments; negative: not set.
  static MetadataLimits FromArgs(int soft, int hard);

  // Sets the header list limits of `options` (SETTINGS_MAX_HEADER_LIST_SIZE,
  // the soft limit, the hard cap on a header block).
  void ApplyTo(transport::ConnectionOptions* options) const;

  // The RESOURCE_EXHAUSTED message for received metadata of `size`.
  std::string ReceivedTooLarge(size_t size) const;
};

// The call's status when a submit of `fields` (request or response
// headers, trailers) on `connection` failed with `submitted`: the
// transport refuses a list over the peer's SETTINGS_MAX_HEADER_LIST_SIZE
// with kResourceExhausted before anything is sent, and that is gRPC's
// RESOURCE_EXHAUSTED "to-be-sent metadata size exceeds peer limit (X vs.
// L)"; any other failure is `otherwise` with the submit's message.
Status SubmitFailure(const absl::Status& submitted,
                     absl::Span<const hpack::HeaderField> fields,
                     const transport::Connection& connection,
                     StatusCode otherwise);
// Whether SubmitFailure(submitted, ...) is the peer's limit.
bool OverPeerLimit(const absl::Status& submitted,
                   absl::Span<const hpack::HeaderField> fields,
                   const transport::Connection& connection);

}  // namespace internal
}  // namespace rpc

#endif  // RPC_INTERNAL_METADATA_LIMITS_H_
