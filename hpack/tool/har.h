// HAR (HTTP Archive, the format browsers export from their developer tools) to
// HTTP/2 messages, for the compression ratio table.
//
// Reads log.entries[] in file order. Each entry whose URL is http: or
// https: gives
//  * a request: :method (request.method), :scheme and :path (path and query of
//    request.url; "/" when empty), :authority (the Host header if there is
//    one, else the URL's host[:port]), then request.headers in order with
//    lowercased names;
//  * a response, unless response.status is 0 (what browsers write for
//    requests that got none): :status, then response.headers in order with
//    lowercased names.
// Dropped from both: pseudo-headers already present in the HAR (HTTP/2
// captures list them; they are rebuilt as above), host (it became
// :authority), the connection-specific fields RFC 9113 section 8.2.2 forbids
// (connection, keep-alive, proxy-connection, transfer-encoding, upgrade, and
// any field the connection header names), and te unless its value is
// "trailers".
//
// One conversation (HPACK context) per host and direction, in order of first
// appearance: "<authority> requests", "<authority> responses".

#ifndef HPACK_TOOL_HAR_H_
#define HPACK_TOOL_HAR_H_

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "hpack/tool/message.h"

namespace hpack {
namespace tool {

struct HarStats {
  size_t entries = 0;            // log.entries[] in the file.
  size_t skipped_entries = 0;    // Not http: or https:.
  size_t skipped_responses = 0;  // Status 0.
};

// True if the JSON text looks like a HAR document (an object with log.entries).
bool LooksLikeHar(std::string_view json_text);

// Appends the file's conversations to *out (see above). On failure returns
// false with *error set and leaves *out as it was.
bool ParseHar(std::string_view json_text, std::vector<Conversation>* out,
              HarStats* stats, std::string* error);

}  // namespace tool
}  // namespace hpack

#endif  // HPACK_TOOL_HAR_H_
