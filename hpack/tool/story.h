// hpack-test-case stories: reading and writing the JSON files of
// https://github.com/http2jp/hpack-test-case (vendored in
// third_party/hpack_test_case).
//
// A story is a sequence of header blocks that share one HPACK context:
//
//   {
//     "description": "...",
//     "context": "request",              // optional: "request" or "response"
//     "cases": [
//       {
//         "seqno": 0,
//         "header_table_size": 4096,     // optional or null; see Case
//         "wire": "8286...",             // optional (absent in raw-data)
//         "headers": [ {":method": "GET"}, {":path": "/"} ]
//       }, ...
//     ]
//   }
//
// Parsing is strict about types (a number where a string belongs is an error
// with the case number) and lenient about unknown keys, which are ignored.

#ifndef HPACK_TOOL_STORY_H_
#define HPACK_TOOL_STORY_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace hpack {
namespace tool {

// One header field as text: (name, value).
using Field = std::pair<std::string, std::string>;

struct Case {
  int seqno = 0;
  // SETTINGS_HEADER_TABLE_SIZE sent and acknowledged just before this case.
  // Absent or null: unchanged (the protocol's initial 4096 before the first
  // case).
  std::optional<uint32_t> header_table_size;
  // The encoded header block (octets, not hex); meaningful only when has_wire.
  std::string wire;
  bool has_wire = false;
  std::vector<Field> headers;
};

struct Story {
  std::string description;
  // "request", "response", or empty when the file does not say.
  std::string context;
  std::vector<Case> cases;
};

// Parses a story from JSON text. On failure returns false and sets *error
// (never null).
bool ParseStory(std::string_view json_text, Story* story, std::string* error);

// Reads and parses a story file; *error names the file on failure.
bool ReadStoryFile(const std::string& path, Story* story, std::string* error);

// The story as JSON, in the corpus' layout and key order (description, context
// when set, cases with seqno, header_table_size when set, wire when has_wire,
// headers), indented by 2, ending with a newline.
std::string StoryToJson(const Story& story);

// "8286" <-> "\x82\x86". HexToBytes accepts upper and lower case and returns
// false on an odd length or a non-hex character.
bool HexToBytes(std::string_view hex, std::string* bytes);
std::string BytesToHex(std::string_view bytes);

// The whole file, or false.
bool ReadFile(const std::string& path, std::string* contents);

}  // namespace tool
}  // namespace hpack

#endif  // HPACK_TOOL_STORY_H_
