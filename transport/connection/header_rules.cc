#include "transport/connection/header_rules.h"

#include <limits>

#include "hpack/field_validation.h"

namespace transport {
namespace {

enum PseudoBit : uint8_t {
  kMethod = 1,
  kScheme = 2,
  kAuthority = 4,
  kPath = 8,
  kStatus = 16,
};

// The bit of a pseudo-header name, 0 if unknown.
uint8_t PseudoBitOf(std::string_view name) {
  if (name == ":method") return kMethod;
  if (name == ":scheme") return kScheme;
  if (name == ":authority") return kAuthority;
  if (name == ":path") return kPath;
  if (name == ":status") return kStatus;
  return 0;
}

bool EqualsIgnoreCase(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    char c = a[i];
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
    if (c != b[i]) return false;
  }
  return true;
}

// Digits only, at most 2^63-1; -1 otherwise.
int64_t ParseContentLength(std::string_view v) {
  if (v.empty()) return -1;
  int64_t n = 0;
  for (const char c : v) {
    if (c < '0' || c > '9') return -1;
    if (n > (std::numeric_limits<int64_t>::max() - 9) / 10) return -1;
    n = n * 10 + (c - '0');
  }
  return n;
}

}  // namespace

const char* HeaderRuleErrorName(HeaderRuleError error) {
  switch (error) {
    case HeaderRuleError::kOk:
      return "ok";
    case HeaderRuleError::kInvalidField:
      return "invalid_field";
    case HeaderRuleError::kPseudoAfterRegular:
      return "pseudo_after_regular";
    case HeaderRuleError::kUnknownPseudo:
      return "unknown_pseudo";
    case HeaderRuleError::kDuplicatePseudo:
      return "duplicate_pseudo";
    case HeaderRuleError::kPseudoInTrailers:
      return "pseudo_in_trailers";
    case HeaderRuleError::kMissingMethod:
      return "missing_method";
    case HeaderRuleError::kMissingScheme:
      return "missing_scheme";
    case HeaderRuleError::kMissingPath:
      return "missing_path";
    case HeaderRuleError::kBadPath:
      return "bad_path";
    case HeaderRuleError::kBadConnect:
      return "bad_connect";
    case HeaderRuleError::kMissingStatus:
      return "missing_status";
    case HeaderRuleError::kBadStatus:
      return "bad_status";
    case HeaderRuleError::kConnectionSpecific:
      return "connection_specific";
    case HeaderRuleError::kBadTe:
      return "bad_te";
    case HeaderRuleError::kBadContentLength:
      return "bad_content_length";
  }
  return "unknown";
}

HeaderRuleError HeaderChecker::Add(const hpack::HeaderField& field) {
  if (error_ != HeaderRuleError::kOk) return error_;
  if (validate_fields_ &&
      hpack::ValidateField(field.name, field.value) != hpack::kFieldValid) {
    return Fail(HeaderRuleError::kInvalidField);
  }
  if (!field.name.empty() && field.name[0] == ':') return AddPseudo(field);
  return AddRegular(field);
}

HeaderRuleError HeaderChecker::AddPseudo(const hpack::HeaderField& field) {
  if (kind_ == HeaderKind::kTrailers) {
    return Fail(HeaderRuleError::kPseudoInTrailers);
  }
  if (seen_regular_) return Fail(HeaderRuleError::kPseudoAfterRegular);
  const uint8_t bit = PseudoBitOf(field.name);
  const bool allowed = kind_ == HeaderKind::kRequest
                           ? (bit != 0 && bit != kStatus)
                           : bit == kStatus;
  if (!allowed) return Fail(HeaderRuleError::kUnknownPseudo);
  if ((seen_pseudo_ & bit) != 0) return Fail(HeaderRuleError::kDuplicatePseudo);
  seen_pseudo_ |= bit;
  switch (bit) {
    case kMethod:
      method_ = field.value;
      break;
    case kPath:
      path_ = field.value;
      break;
    case kStatus: {
      const std::string_view v = field.value;
      if (v.size() != 3 || v[0] < '1' || v[0] > '9' || v[1] < '0' ||
          v[1] > '9' || v[2] < '0' || v[2] > '9') {
        return Fail(HeaderRuleError::kBadStatus);
      }
      info_.status = (v[0] - '0') * 100 + (v[1] - '0') * 10 + (v[2] - '0');
      if (info_.status == 101) return Fail(HeaderRuleError::kBadStatus);
      break;
    }
    default:
      break;
  }
  return HeaderRuleError::kOk;
}

HeaderRuleError HeaderChecker::AddRegular(const hpack::HeaderField& field) {
  seen_regular_ = true;
  const std::string_view name = field.name;
  // Only a few lengths can name a field with a rule: one compare for most.
  switch (name.size()) {
    case 2:
      if (name == "te" && !EqualsIgnoreCase(field.value, "trailers")) {
        return Fail(HeaderRuleError::kBadTe);
      }
      break;
    case 7:
      if (name == "upgrade") return Fail(HeaderRuleError::kConnectionSpecific);
      break;
    case 10:
      if (name == "connection" || name == "keep-alive") {
        return Fail(HeaderRuleError::kConnectionSpecific);
      }
      break;
    case 14:
      if (name == "content-length") {
        const int64_t n = ParseContentLength(field.value);
        if (n < 0 || (info_.content_length >= 0 && info_.content_length != n)) {
          return Fail(HeaderRuleError::kBadContentLength);
        }
        info_.content_length = n;
      }
      break;
    case 16:
      if (name == "proxy-connection") {
        return Fail(HeaderRuleError::kConnectionSpecific);
      }
      break;
    case 17:
      if (name == "transfer-encoding") {
        return Fail(HeaderRuleError::kConnectionSpecific);
      }
      break;
    default:
      break;
  }
  return HeaderRuleError::kOk;
}

HeaderRuleError HeaderChecker::Finish(HeaderInfo* info) {
  if (error_ != HeaderRuleError::kOk) return error_;
  switch (kind_) {
    case HeaderKind::kRequest: {
      if ((seen_pseudo_ & kMethod) == 0)
        return Fail(HeaderRuleError::kMissingMethod);
      if (method_ == "CONNECT") {
        if ((seen_pseudo_ & kAuthority) == 0 ||
            (seen_pseudo_ & (kScheme | kPath)) != 0) {
          return Fail(HeaderRuleError::kBadConnect);
        }
        break;
      }
      if ((seen_pseudo_ & kScheme) == 0)
        return Fail(HeaderRuleError::kMissingScheme);
      if ((seen_pseudo_ & kPath) == 0)
        return Fail(HeaderRuleError::kMissingPath);
      if (path_.empty() ||
          (path_[0] != '/' && !(path_ == "*" && method_ == "OPTIONS"))) {
        return Fail(HeaderRuleError::kBadPath);
      }
      info_.is_head = method_ == "HEAD";
      break;
    }
    case HeaderKind::kResponse:
      if ((seen_pseudo_ & kStatus) == 0)
        return Fail(HeaderRuleError::kMissingStatus);
      break;
    case HeaderKind::kTrailers:
      break;
  }
  *info = info_;
  return HeaderRuleError::kOk;
}

}  // namespace transport
