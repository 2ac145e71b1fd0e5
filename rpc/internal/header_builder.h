// HeaderBuilder: the fields of one header block to submit, as views plus the
// storage for the values that had to be built (encoded "-bin" values, status
// numbers, percent-encoded messages). Views stay valid while the builder
// lives. A block of up to kInlineFields fields whose built values total up to
// kInlineStorage octets (every request and response of a call without large
// custom metadata) allocates nothing: builders live on the stack of the call
// path. Also the reading side: ParseMetadata collects custom metadata.

#ifndef RPC_INTERNAL_HEADER_BUILDER_H_
#define RPC_INTERNAL_HEADER_BUILDER_H_

#include <cstddef>
#include <forward_list>
#include <string>
#include <string_view>

#include "absl/container/inlined_vector.h"
#include "absl/types/span.h"
#include "hpack/header_list.h"
#include "rpc/wire/metadata.h"
#include "rpc/wire/status.h"

namespace rpc {
namespace internal {

class HeaderBuilder {
 public:
  static constexpr size_t kInlineFields = 16;
  static constexpr size_t kInlineStorage = 128;

  HeaderBuilder() = default;
  // The fields point into the builder's own storage.
  HeaderBuilder(const HeaderBuilder&) = delete;
  HeaderBuilder& operator=(const HeaderBuilder&) = delete;

  // `name` and `value` must outlive the builder (literals, or strings the
  // caller keeps).
  void Add(std::string_view name, std::string_view value) {
    fields_.push_back({name, value});
  }
  // Keeps a copy of `value`.
  void AddCopy(std::string_view name, std::string_view value);
  // Keeps a copy of a value that changes from call to call (grpc-timeout):
  // marked hpack::HeaderField::index_name_only, so it does not churn the
  // connection's HPACK table.
  void AddChangingCopy(std::string_view name, std::string_view value) {
    AddCopy(name, value);
    fields_.back().index_name_only = true;
  }
  // Custom metadata: valid pairs only (metadata.h), "-bin" values base64.
  void AddMetadata(const Metadata& metadata);
  // grpc-status, grpc-message (percent-encoded; omitted when empty) and
  // grpc-status-details-bin.
  void AddStatus(const Status& status);

  absl::Span<const hpack::HeaderField> fields() const { return fields_; }

 private:
  // Built values: in inline_ while they fit, then each in overflow_ (its
  // elements never move; unlike a std::deque, an empty one has no storage).
  char inline_[kInlineStorage];
  size_t inline_used_ = 0;
  std::forward_list<std::string> overflow_;
  absl::InlinedVector<hpack::HeaderField, kInlineFields> fields_;
};

// Appends the custom metadata of a received header block to *out: pseudo
// headers and reserved names (metadata.h) are skipped, "-bin" values decoded
// (undecodable ones dropped).
void ParseMetadata(const hpack::HeaderList& headers, Metadata* out);

// The value of the first field named `name`, or empty.
std::string_view FindHeader(const hpack::HeaderList& headers,
                            std::string_view name);

}  // namespace internal
}  // namespace rpc

#endif  // RPC_INTERNAL_HEADER_BUILDER_H_
