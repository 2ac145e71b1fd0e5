// HeaderBuilder: the fields of one header block to submit, as views plus the
// storage for the values that had to be built (encoded "-bin" values, status
// numbers, percent-encoded messages). Views stay valid while the builder
// lives. Also the reading side: ParseMetadata collects custom metadata.

#ifndef RPC_INTERNAL_HEADER_BUILDER_H_
#define RPC_INTERNAL_HEADER_BUILDER_H_

#include <deque>
#include <string>
#include <string_view>
#include <vector>

#include "absl/types/span.h"
#include "hpack/header_list.h"
#include "rpc/wire/metadata.h"
#include "rpc/wire/status.h"

namespace rpc {
namespace internal {

class HeaderBuilder {
 public:
  // `name` and `value` must outlive the builder (literals, or strings the
  // caller keeps).
  void Add(std::string_view name, std::string_view value) {
    fields_.push_back({name, value});
  }
  // Keeps a copy of `value`.
  void AddCopy(std::string_view name, std::string value) {
    storage_.push_back(std::move(value));
    fields_.push_back({name, storage_.back()});
  }
  // Custom metadata: valid pairs only (metadata.h), "-bin" values base64.
  void AddMetadata(const Metadata& metadata);
  // grpc-status, grpc-message (percent-encoded; omitted when empty) and
  // grpc-status-details-bin.
  void AddStatus(const Status& status);

  absl::Span<const hpack::HeaderField> fields() const { return fields_; }

 private:
  std::deque<std::string> storage_;
  std::vector<hpack::HeaderField> fields_;
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
