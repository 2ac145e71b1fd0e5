// HTTP messages as HTTP/2 field lists, grouped by the HPACK context that
// carries them: the common input of the compression ratio table (ratio.h),
// whether it came from hpack-test-case stories (ratio.h) or from HAR files
// (har.h).

#ifndef HPACK_TOOL_MESSAGE_H_
#define HPACK_TOOL_MESSAGE_H_

#include <string>
#include <vector>

#include "hpack/tool/story.h"

namespace hpack {
namespace tool {

struct Message {
  bool is_request = true;
  // HTTP/2 fields in order, pseudo-header fields included (lowercase names).
  std::vector<Field> fields;
  // The size of the block a story carries for this message (another
  // implementation's encoding, table size 4096), or -1 (no wire, a HAR file,
  // or a story that changes the table size).
  long story_wire_octets = -1;
};

// The messages one HPACK encoder context carries, in order.
struct Conversation {
  // Where it comes from, for error messages: "raw-data/story_00.json",
  // "www.example.com requests".
  std::string name;
  std::vector<Message> messages;
};

}  // namespace tool
}  // namespace hpack

#endif  // HPACK_TOOL_MESSAGE_H_
