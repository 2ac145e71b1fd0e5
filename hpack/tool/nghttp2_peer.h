// nghttp2's HPACK codec (libnghttp2's nghttp2_hd_deflate_* and
// nghttp2_hd_inflate_*) as a Peer for the ratio table (ratio.h). A test peer
// (testonly, like every @nghttp2 user): only hpack_tool_nghttp2 links it, so
// hpack_tool itself stays free of it.

#ifndef HPACK_TOOL_NGHTTP2_PEER_H_
#define HPACK_TOOL_NGHTTP2_PEER_H_

#include "hpack/tool/ratio.h"

namespace hpack {
namespace tool {

// "nghttp2 <version> deflater": a fresh nghttp2_hd_deflater per context,
// created with the table size as its limit and told the peer's
// SETTINGS_HEADER_TABLE_SIZE (so for sizes other than 4096 its first block
// carries the update, as ours does). Its inflater checks our blocks.
Peer Nghttp2Peer();

}  // namespace tool
}  // namespace hpack

#endif  // HPACK_TOOL_NGHTTP2_PEER_H_
