// Content coding of the example file server's responses (issue 6): which
// encoding a GET or HEAD of a file is sent in, from the request's
// `accept-encoding`, negotiated by rpc::compression's Negotiator (its fast
// path for the values browsers and curl send, the general parser otherwise);
// and the compressed bodies of one version of a file, each made once.
//
// Rules (ChooseCoding):
//   * A file smaller than min_bytes (default 1 KiB, as
//     rpc::compression::kDefaultCompressionThreshold), larger than max_bytes
//     (default 16 MiB: it would be compressed whole, in memory), or of a type
//     that is compressed already (images but SVG, PDF, archives) is not
//     negotiated: it is sent as it is, without `vary`. RFC 9110 12.5.3 lets a
//     server send identity when it has no other representation; we do so even
//     for `identity;q=0`, as for any response we do not compress.
//   * Otherwise the response varies with accept-encoding (`vary:
//     accept-encoding`, identity answers included) and the encoding is
//     Negotiator::Negotiate of the header's value: no header or `identity`
//     gives identity, `gzip;q=0` excludes gzip, and so on
//     (rpc/compression/README.md). When nothing is acceptable, identity
//     included (`identity;q=0` alone, `*;q=0`), the answer is 406 Not
//     Acceptable: RFC 9110 12.5.3 allows it, and serving identity would be
//     what the client just ruled out.
//   * A body that does not get smaller compressed is sent as identity (still
//     with `vary`).

#ifndef EXAMPLES_CONTENT_CODING_H_
#define EXAMPLES_CONTENT_CODING_H_

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

#include "rpc/compression/codec.h"
#include "rpc/compression/encoding.h"
#include "rpc/compression/negotiator.h"
#include "transport/slice/slice.h"

namespace examples {

using rpc::compression::Encoding;

struct CodingOptions {
  // Not owned; must outlive the server.
  const rpc::compression::Negotiator* negotiator =
      &rpc::compression::kDefaultNegotiator;
  size_t min_bytes = rpc::compression::kDefaultCompressionThreshold;
  size_t max_bytes = size_t{16} << 20;
};

struct CodingDecision {
  Encoding encoding = Encoding::kIdentity;
  bool vary = false;            // Send `vary: accept-encoding`.
  bool not_acceptable = false;  // Answer 406.
};

// Whether a body of this content type is worth compressing (not an image
// other than SVG, not PDF, not an archive).
bool CompressibleType(std::string_view content_type);

// `accept_encoding`: the request's value, nullopt if absent.
CodingDecision ChooseCoding(const CodingOptions& options,
                            std::optional<std::string_view> accept_encoding,
                            size_t size, std::string_view content_type);

// The compressed bodies of one version of a file, at most one per encoding,
// each compressed once (the codec's default level) on first use. Owned by
// one thread.
class EncodedVariants {
 public:
  // Whether Get(e, ...) has been answered before (it then ignores `original`).
  bool computed(Encoding e) const { return state_[Index(e)] != kUnknown; }

  // The body `original` in `e` (not identity), or nullptr when compressed it
  // is not smaller (or the codec failed): send identity.
  const transport::Slice* Get(Encoding e, std::string_view original);

  // How many times a body was compressed (tests).
  int compressions() const { return compressions_; }

 private:
  enum State : uint8_t { kUnknown, kReady, kNotSmaller };
  static size_t Index(Encoding e) { return static_cast<size_t>(e); }

  std::array<State, rpc::compression::kNumEncodings> state_{};
  std::array<transport::Slice, rpc::compression::kNumEncodings> data_;
  int compressions_ = 0;
};

}  // namespace examples

#endif  // EXAMPLES_CONTENT_CODING_H_
