#include "hpack/varint.h"

namespace hpack {

VarintStatus DecodeVarintContinuation(uint32_t prefix_value, const uint8_t** p,
                                      const uint8_t* end, uint32_t* value) {
  const uint8_t* q = *p + 1;
  uint64_t v = prefix_value;
  for (int i = 0; i < kMaxVarintContinuationOctets; ++i) {
    if (q == end) return VarintStatus::kTruncated;
    const uint8_t b = *q++;
    v += static_cast<uint64_t>(b & 0x7f) << (7 * i);
    if ((b & 0x80) == 0) {
      if (v > kMaxVarintValue) return VarintStatus::kOverflow;
      *value = static_cast<uint32_t>(v);
      *p = q;
      return VarintStatus::kOk;
    }
  }
  // Five continuation octets all said "more follows": no 32-bit value needs a
  // sixth.
  return VarintStatus::kOverflow;
}

}  // namespace hpack
