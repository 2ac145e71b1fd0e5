// The header compression table of the HTTP working group's 2013 compressor
// comparison (https://github.com/http2/compression-test): for each dynamic
// table size, the octets our HPACK encoder produces for a set of messages,
// against the octets of the same messages as HTTP/1.1 text, with the spread of
// the per-message ratios; requests and responses apart. README.md defines every
// number precisely.

#ifndef HPACK_TOOL_RATIO_H_
#define HPACK_TOOL_RATIO_H_

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "hpack/tool/message.h"
#include "hpack/tool/story.h"

namespace hpack {
namespace tool {

// The message as HTTP/1.1 text (the ratio's denominator):
//   request:  "<:method> <:path> HTTP/1.1\r\n", then "Host: <:authority>\r\n"
//             when there is an :authority;
//   response: "HTTP/1.1 <:status> <reason>\r\n" (RFC 9110's reason phrase,
//             empty if the code has none);
// then "<name>: <value>\r\n" for every field that is not a pseudo-header, in
// order, and a final "\r\n". :scheme and any other pseudo-header have no
// HTTP/1.1 text. A request without :path uses :authority as its target
// (CONNECT), or "*".
std::string Http1Text(const Message& message);

// RFC 9110 section 15's reason phrase for `status`, or "".
const char* ReasonPhrase(int status);

// A story as one conversation (a story shares one context). Each message is a
// request when the story's context is "request", a response when it is
// "response", and otherwise a response if it has a :status field, else a
// request. When every case has wire and no case changes the table size from
// 4096, each message's story_wire_octets is its case's wire size.
Conversation ConversationFromStory(const Story& story, const std::string& name);

// Another HPACK implementation, set beside ours in the table: its encoder's
// octets on the same messages (each of its blocks is decoded by our decoder as
// a check), and its decoder run on our blocks (so every block we count also
// decodes there). hpack_tool_nghttp2 passes nghttp2's (nghttp2_peer.h).
class PeerEncoder {
 public:
  virtual ~PeerEncoder() = default;
  // The next block of the context for `fields`; false on failure.
  virtual bool Encode(const std::vector<Field>& fields, std::string* block) = 0;
};
class PeerDecoder {
 public:
  virtual ~PeerDecoder() = default;
  // Decodes the next block of the context; false on a decoding error.
  virtual bool Decode(std::string_view block, std::vector<Field>* fields) = 0;
};
struct Peer {
  std::string name;         // Column title: "nghttp2".
  std::string description;  // Title line: "nghttp2 1.52.0 deflater".
  // A fresh context whose peer announced SETTINGS_HEADER_TABLE_SIZE =
  // table_size before the first block (as for our encoder).
  std::function<std::unique_ptr<PeerEncoder>(uint32_t table_size)> make_encoder;
  // A fresh decoding context that acknowledged table_size.
  std::function<std::unique_ptr<PeerDecoder>(uint32_t table_size)> make_decoder;
};

// One row of the table: one table size, one direction.
struct RatioRow {
  uint32_t table_size = 0;
  bool requests = true;
  size_t messages = 0;
  uint64_t encoded_octets = 0;  // Sum of the header blocks' octets.
  uint64_t http1_octets = 0;    // Sum of the Http1Text sizes.
  double ratio = 0;             // encoded_octets / http1_octets.
  // Over the per-message ratios (a block's octets / its HTTP/1.1 octets):
  double min = 0;
  double max = 0;
  double mean = 0;
  // Population standard deviation (divides by the message count).
  double stddev = 0;
  // With a peer: its encoder's octets for the same messages.
  bool has_peer = false;
  std::string peer_name;
  uint64_t peer_octets = 0;
  // Table size 4096, every message from a story with wire: the sum of those
  // blocks (the implementation that wrote the stories, for comparison).
  bool has_story_wire = false;
  uint64_t story_wire_octets = 0;
};

// Encodes every conversation with a fresh hpack::Encoder per table size (the
// peer is taken to have sent SETTINGS_HEADER_TABLE_SIZE = table size before the
// first block, so for sizes other than 4096 the first block carries the table
// size update), decodes each block again with a matching Decoder as a check,
// and returns the rows: for each table size in order, requests then responses
// (a direction without messages has no row). Returns false with *error set if a
// block does not decode back to its fields. With `peer`, the peer's encoder
// encodes every message too (its blocks checked with our decoder) and the
// peer's decoder decodes ours; a failure or mismatch there is an error too.
bool ComputeRatios(const std::vector<Conversation>& conversations,
                   const std::vector<uint32_t>& table_sizes,
                   std::vector<RatioRow>* rows, std::string* error,
                   const Peer* peer = nullptr);

// The rows as an aligned text table, one section per direction; with a peer,
// two more columns: its octets and ours / its; a "story wire" column when a
// row of the section has one ("-" in the others).
std::string FormatRatioTable(const std::vector<RatioRow>& rows);

}  // namespace tool
}  // namespace hpack

#endif  // HPACK_TOOL_RATIO_H_
