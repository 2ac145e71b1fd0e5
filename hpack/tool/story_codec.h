// Our HPACK codec applied to hpack-test-case stories: decode and compare
// (verify), and encode (to publish our wire output in the corpus' format).

#ifndef HPACK_TOOL_STORY_CODEC_H_
#define HPACK_TOOL_STORY_CODEC_H_

#include <cstddef>
#include <cstdint>
#include <string>

#include "hpack/tool/story.h"

namespace hpack {
namespace tool {

struct VerifyResult {
  bool ok = false;
  // Cases decoded and compared (all of them when ok).
  size_t cases = 0;
  // Cases whose fields our decoder flagged as invalid under RFC 9113
  // section 8.2.1 (a stream error: the block still decoded and is compared).
  // The corpus predates RFC 9113: some values have leading or trailing spaces.
  size_t invalid_field_cases = 0;
  // When !ok: "case 3 (seqno 3): header 2: expected \"a: b\", got \"a: c\"", or
  // the decode error, or "case 0: no wire".
  std::string mismatch;
};

// Decodes every case's wire with one decoder context (an hpack::Decoder with
// the protocol's initial table size, 4096, and no header list size limit) and
// compares the result with the case's headers, in order. A case's
// header_table_size is applied as an acknowledged SETTINGS change
// (Decoder::SetMaxTableSizeLimit) before its block. Stops at the first
// mismatch.
VerifyResult VerifyStory(const Story& story);

// The story with every case's wire replaced by our encoder's output for its
// headers, one encoder context per story, with dynamic table size `table_size`:
// the peer is taken to have sent SETTINGS_HEADER_TABLE_SIZE = table_size before
// the first block (recorded as the first case's header_table_size; later cases
// carry none), and our encoder uses that whole size. Seqnos are renumbered from
// 0; the description says who encoded it.
Story EncodeStory(const Story& story, uint32_t table_size);

}  // namespace tool
}  // namespace hpack

#endif  // HPACK_TOOL_STORY_CODEC_H_
