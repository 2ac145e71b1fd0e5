// The Huffman code of HPACK string literals (RFC 7541 Section 5.2 and
// Appendix B).
//
// Stateless functions over whole strings: a literal's length is known before
// its octets are read, so there is nothing to resume. Encoding pads the last
// octet with the most significant bits of EOS (1 bits). Decoding rejects what
// Section 5.2 calls a decoding error: a complete EOS code, padding longer than
// 7 bits, and padding that is not a prefix of EOS.
//
// clang-format off
//   uint8_t buf[64];
//   size_t n = hpack::HuffmanEncodeBounded(value, buf, value.size() - 1);
//   if (n == 0) {
//     // Send `value` as a raw literal: Huffman would not be shorter.
//   }
//
//   std::string text;
//   if (hpack::HuffmanDecode(encoded, &text) !=
//       hpack::HuffmanDecodeStatus::kOk) {
//     // A decoding error (RFC 7541 Section 5.2): COMPRESSION_ERROR, a
//     // connection error.
//   }
// clang-format on

#ifndef HPACK_HUFFMAN_HUFFMAN_H_
#define HPACK_HUFFMAN_HUFFMAN_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace hpack {

// Octets the Huffman encoding of `in` occupies (bits rounded up to octets).
size_t HuffmanEncodedLength(std::string_view in);

// Writes the Huffman encoding of `in` (with EOS-prefix padding of 1 bits) to
// `out`, which must have room for HuffmanEncodedLength(in) octets. Returns the
// octets written, which is HuffmanEncodedLength(in) (0 for empty `in`).
size_t HuffmanEncode(std::string_view in, uint8_t* out);

// Encodes `in` into out[0, max_len) only if its encoding takes at most max_len
// octets. Returns the octets written, or 0 when the encoding would exceed
// max_len (the bytes in out[0, max_len) are then unspecified). Never writes at
// or past out + max_len. An empty `in` encodes to nothing and also returns 0.
// Encoders use it with max_len = in.size() - 1 to "encode first, fill the
// length in after": 0 then means "send it raw".
size_t HuffmanEncodeBounded(std::string_view in, uint8_t* out, size_t max_len);

// Octets past max_len that HuffmanEncodeBoundedWithSlack may overwrite.
inline constexpr size_t kHuffmanEncodeSlack = 8;

// HuffmanEncodeBounded for callers with kHuffmanEncodeSlack writable octets
// after out + max_len: the same return value and the same octets in
// out[0, returned length), but out[returned length, max_len +
// kHuffmanEncodeSlack) may be overwritten with junk. Faster on short strings
// (no octet-at-a-time tail). The tests hold it equal to HuffmanEncodeBounded.
size_t HuffmanEncodeBoundedWithSlack(std::string_view in, uint8_t* out,
                                     size_t max_len);

// The outcome of decoding. Every value other than kOk is a decoding error of
// RFC 7541 Section 5.2, which the HPACK decoder turns into a COMPRESSION_ERROR
// (connection error).
enum class HuffmanDecodeStatus {
  kOk,
  kEosInData,       // The 30-bit EOS code appears in the string.
  kPaddingTooLong,  // More than 7 bits follow the last complete code.
  kPaddingNotOnes,  // The bits after the last complete code are not all 1 (not
                    // EOS's prefix).
};

// "kOk", "kEosInData", ...: the enumerator's name. Never null.
const char* HuffmanDecodeStatusName(HuffmanDecodeStatus s);

// Max octets a Huffman string of `encoded_len` octets can decode to (shortest
// code is 5 bits).
constexpr size_t HuffmanMaxDecodedLength(size_t encoded_len) {
  return encoded_len * 8 / 5;
}

// Decodes in[0, len) into `out`, which must have room for
// HuffmanMaxDecodedLength(len) octets; on kOk sets *out_len. Never reads past
// in + len or writes past that bound. On an error *out_len is left alone and
// out[0, HuffmanMaxDecodedLength(len)) is unspecified. The error returned is
// the first one met reading left to right: kEosInData where EOS ends, else one
// of the padding errors at the end.
[[nodiscard]] HuffmanDecodeStatus HuffmanDecode(const uint8_t* in, size_t len,
                                                uint8_t* out, size_t* out_len);

// Convenience: appends the decoded octets to *out. Reuses its capacity: no
// allocation when out->capacity() - out->size() >=
// HuffmanMaxDecodedLength(in.size()), nor for a short `in` (up to 640 octets)
// whose decoded octets fit in the spare capacity. On an error *out is left as
// it was.
[[nodiscard]] HuffmanDecodeStatus HuffmanDecode(std::string_view in,
                                                std::string* out);

}  // namespace hpack

#endif  // HPACK_HUFFMAN_HUFFMAN_H_
