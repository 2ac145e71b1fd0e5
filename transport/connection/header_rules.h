// The field rules of RFC 9113 sections 8.2 and 8.3 for one header block: a
// request's headers, a response's headers, or trailers. The Connection checks
// every block it receives (a breach makes the message malformed: stream error
// PROTOCOL_ERROR, RFC 9113 8.1.1) and every block it is asked to send (a
// breach fails the submit with kInvalidArgument).
//
// Checked:
//  * pseudo-header fields come before regular fields (8.3), appear at most
//    once, are only those defined for the kind of block (requests: :method,
//    :scheme, :authority, :path; responses: :status; trailers: none);
//  * a request has :method, :scheme and a non-empty :path starting with '/'
//    (or "*" for OPTIONS) (8.3.1); CONNECT (8.5) is simplified: it must have
//    :authority and no :scheme or :path (extended CONNECT, RFC 8441's
//    :protocol, is not supported: an unknown pseudo-header);
//  * a response has :status of three digits, not 101 (8.3.2, 8.6);
//  * connection-specific fields are rejected: connection, keep-alive,
//    proxy-connection, transfer-encoding, upgrade (8.2.2); `te` only with the
//    value "trailers";
//  * content-length is digits only, and repeated values agree (its match with
//    the DATA received is the Connection's check, 8.1.1).
// Not checked here: field name/value characters of received blocks (the HPACK
// decoder validates those; CheckHeaders does it when asked, for blocks we
// send), and host/:authority agreement.

#ifndef TRANSPORT_CONNECTION_HEADER_RULES_H_
#define TRANSPORT_CONNECTION_HEADER_RULES_H_

#include <cstdint>
#include <string_view>

#include "hpack/header_list.h"

namespace transport {

enum class HeaderRuleError : uint8_t {
  kOk = 0,
  kInvalidField,        // A name or value breaks 8.2.1 (outgoing checks).
  kPseudoAfterRegular,  // 8.3: pseudo-headers first.
  kUnknownPseudo,       // Not defined for this kind of block.
  kDuplicatePseudo,     // 8.3.1/8.3.2: at most once.
  kPseudoInTrailers,    // 8.1: trailers carry no pseudo-headers.
  kMissingMethod,       // 8.3.1.
  kMissingScheme,       // 8.3.1.
  kMissingPath,         // 8.3.1.
  kBadPath,             // 8.3.1: empty, or not '/'-first (nor "*").
  kBadConnect,          // 8.5: CONNECT needs :authority, no :scheme/:path.
  kMissingStatus,       // 8.3.2.
  kBadStatus,           // 8.3.2: not 3 digits, or 101 (8.6).
  kConnectionSpecific,  // 8.2.2.
  kBadTe,               // 8.2.2: te other than "trailers".
  kBadContentLength,    // Not digits, or repeated with another value.
};

// "ok", "invalid_field", ...: a stable name for every value.
const char* HeaderRuleErrorName(HeaderRuleError error);

enum class HeaderKind : uint8_t { kRequest, kResponse, kTrailers };

// What the Connection needs from a valid block.
struct HeaderInfo {
  int64_t content_length = -1;  // -1: absent.
  bool is_head = false;         // Request: :method HEAD.
  int status = 0;               // Response: :status.
  bool informational() const { return status >= 100 && status < 200; }
};

// Field-at-a-time checker: Add each field in order, then Finish. Stops at the
// first error (later Adds return it).
class HeaderChecker {
 public:
  // validate_fields: also check each name and value (hpack field_validation).
  explicit HeaderChecker(HeaderKind kind, bool validate_fields = false)
      : kind_(kind), validate_fields_(validate_fields) {}

  HeaderRuleError Add(const hpack::HeaderField& field);
  HeaderRuleError Finish(HeaderInfo* info);

 private:
  HeaderRuleError AddPseudo(const hpack::HeaderField& field);
  HeaderRuleError AddRegular(const hpack::HeaderField& field);
  HeaderRuleError Fail(HeaderRuleError e) { return error_ = e; }

  HeaderKind kind_;
  bool validate_fields_;
  bool seen_regular_ = false;
  HeaderRuleError error_ = HeaderRuleError::kOk;
  uint8_t seen_pseudo_ = 0;  // Bits of PseudoBit (header_rules.cc).
  std::string_view method_;
  std::string_view path_;
  HeaderInfo info_;
};

// Checks a whole block (any range of hpack::HeaderField: a HeaderList, a
// span). On kOk fills *info.
template <typename Range>
HeaderRuleError CheckHeaders(HeaderKind kind, const Range& fields,
                             HeaderInfo* info, bool validate_fields = false) {
  HeaderChecker checker(kind, validate_fields);
  for (const hpack::HeaderField& f : fields) {
    const HeaderRuleError e = checker.Add(f);
    if (e != HeaderRuleError::kOk) return e;
  }
  return checker.Finish(info);
}

}  // namespace transport

#endif  // TRANSPORT_CONNECTION_HEADER_RULES_H_
