// RFC 7541 section 5.1: integers with an N-bit prefix.
//
// An integer starts in the low N bits (1 <= N <= 8) of an octet whose high 8-N
// bits belong to the representation around it (the caller passes them in when
// encoding, and they are ignored when decoding). Values below 2^N-1 fit in the
// prefix; larger ones continue in octets of 7 bits each, least significant
// group first, the high bit saying "more follows".

#ifndef HPACK_VARINT_H_
#define HPACK_VARINT_H_

#include <cstddef>
#include <cstdint>

namespace hpack {

// The largest integer the decoder accepts. Every HPACK integer is an index, a
// length or a table size; none of them can meaningfully exceed 32 bits.
inline constexpr uint32_t kMaxVarintValue = 0xffffffffu;

// At most this many octets follow the prefix octet when decoding: 5 * 7 = 35
// bits, enough for any 32-bit value. More, even if they only add zeros, is
// rejected as an overflow (RFC 7541 section 5.1 allows limits on both value and
// octet length).
inline constexpr int kMaxVarintContinuationOctets = 5;

// Upper bound of EncodeVarint's output for any 64-bit value and prefix.
inline constexpr size_t kMaxVarintEncodedLength = 11;

enum class VarintStatus : uint8_t {
  kOk,
  kTruncated,  // The input ended before the integer did; nothing was consumed.
  kOverflow,   // Value above kMaxVarintValue, or too many continuation octets.
};

// Slow path of DecodeVarint; use DecodeVarint.
VarintStatus DecodeVarintContinuation(uint32_t prefix_value, const uint8_t** p,
                                      const uint8_t* end, uint32_t* value);

// Decodes an integer with a `prefix_bits`-bit prefix starting at *p, reading no
// further than `end`. On kOk stores the value and advances *p past the integer.
// On kTruncated or kOverflow, *p and *value are unchanged. *p == end is allowed
// (kTruncated).
inline VarintStatus DecodeVarint(int prefix_bits, const uint8_t** p,
                                 const uint8_t* end, uint32_t* value) {
  if (*p == end) return VarintStatus::kTruncated;
  const uint32_t max_prefix = (1u << prefix_bits) - 1;
  const uint32_t v = **p & max_prefix;
  if (v < max_prefix) {
    *value = v;
    ++*p;
    return VarintStatus::kOk;
  }
  // The slow path gets the addresses of copies: had it *p's and *value's, a
  // caller's cursor and result (a decoder's loop variables) would have to
  // live in memory for the whole loop, loaded and stored at every use.
  const uint8_t* q = *p;
  uint32_t result = 0;
  const VarintStatus s = DecodeVarintContinuation(max_prefix, &q, end, &result);
  if (s == VarintStatus::kOk) {
    *p = q;
    *value = result;
  }
  return s;
}

// Number of octets EncodeVarint writes for `value`.
inline size_t VarintLength(uint64_t value, int prefix_bits) {
  const uint64_t max_prefix = (uint64_t{1} << prefix_bits) - 1;
  if (value < max_prefix) return 1;
  value -= max_prefix;
  size_t n = 2;
  while (value >= 128) {
    value >>= 7;
    ++n;
  }
  return n;
}

// Writes `value` with a `prefix_bits`-bit prefix; `high_bits` (which must have
// no bit inside the prefix) are OR-ed into the first octet. `out` needs room
// for VarintLength(value, prefix_bits) octets (at most
// kMaxVarintEncodedLength). Returns the octets written.
inline size_t EncodeVarint(uint64_t value, int prefix_bits, uint8_t high_bits,
                           uint8_t* out) {
  const uint64_t max_prefix = (uint64_t{1} << prefix_bits) - 1;
  if (value < max_prefix) {
    out[0] = static_cast<uint8_t>(high_bits | value);
    return 1;
  }
  out[0] = static_cast<uint8_t>(high_bits | max_prefix);
  value -= max_prefix;
  size_t n = 1;
  while (value >= 128) {
    out[n++] = static_cast<uint8_t>(0x80 | (value & 0x7f));
    value >>= 7;
  }
  out[n++] = static_cast<uint8_t>(value);
  return n;
}

}  // namespace hpack

#endif  // HPACK_VARINT_H_
