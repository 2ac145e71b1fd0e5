#include "rpc/compression/encoding.h"

#include <array>
#include <cstddef>
#include <string_view>

namespace rpc::compression {
namespace {

constexpr size_t kNumSets = size_t{1} << kNumEncodings;
// Longest value: "identity, deflate, gzip, zstd".
constexpr size_t kMaxValueLength = 29;

// Every set's value, built at compile time.
struct AcceptEncodingValues {
  std::array<std::array<char, kMaxValueLength>, kNumSets> text{};
  std::array<size_t, kNumSets> length{};
};

constexpr AcceptEncodingValues BuildValues() {
  AcceptEncodingValues values;
  for (size_t bits = 0; bits < kNumSets; ++bits) {
    size_t n = 0;
    for (Encoding e : kAllEncodings) {
      if (!EncodingSet::FromBits(static_cast<uint8_t>(bits)).Contains(e)) {
        continue;
      }
      if (n != 0) {
        values.text[bits][n++] = ',';
        values.text[bits][n++] = ' ';
      }
      for (char c : EncodingName(e)) values.text[bits][n++] = c;
    }
    values.length[bits] = n;
  }
  return values;
}

constexpr AcceptEncodingValues kValues = BuildValues();
static_assert(kValues.length[kNumSets - 1] == kMaxValueLength);

}  // namespace

std::string_view GrpcAcceptEncodingValue(EncodingSet set) {
  return std::string_view(kValues.text[set.bits()].data(),
                          kValues.length[set.bits()]);
}

}  // namespace rpc::compression
