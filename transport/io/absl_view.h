// ToAbsl / ToStd: the crossing points between transport's string views and
// Abseil's.
//
// Transport takes and returns std::string_view everywhere. Debian's Abseil is
// built with ABSL_OPTION_USE_STD_STRING_VIEW 0, so absl::string_view is a
// class of its own that converts neither from nor to std::string_view; calls
// into absl (StrCat, StrSplit, SimpleAtoi, Status messages) go through these.
// With an Abseil that aliases the two types they are the identity, so code
// using them compiles either way.

#ifndef TRANSPORT_IO_ABSL_VIEW_H_
#define TRANSPORT_IO_ABSL_VIEW_H_

#include <string_view>

#include "absl/strings/string_view.h"

namespace transport {

inline absl::string_view ToAbsl(std::string_view s) {
  return absl::string_view(s.data(), s.size());
}

inline std::string_view ToStd(absl::string_view s) {
  return std::string_view(s.data(), s.size());
}

}  // namespace transport

#endif  // TRANSPORT_IO_ABSL_VIEW_H_
