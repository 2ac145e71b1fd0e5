// The decoder's outcomes: kOk, or what went wrong, with a name for each.
//
// Two classes, decided here where the error is defined:
//
//  * Stream errors: the block was decoded to its end and the dynamic table
//    holds exactly what the encoder's does, so the connection can go on. The
//    request or response is malformed (RFC 9113 section 8.1.1: reset the
//    stream with PROTOCOL_ERROR) or too large (RFC 9113 section 10.5.1:
//    refuse it, e.g. 431 or RST_STREAM).
//  * Connection errors: the HPACK context can no longer be trusted. The
//    transport sends GOAWAY with COMPRESSION_ERROR (RFC 9113 section 4.3),
//    and the decoder refuses every later block (it returns the same error
//    again).

#ifndef HPACK_DECODE_ERROR_H_
#define HPACK_DECODE_ERROR_H_

#include <cstdint>

namespace hpack {

enum class DecodeError : uint8_t {
  kOk = 0,

  // ---- Stream errors (the decoder stays usable) ----
  // A name breaks RFC 9113 section 8.2.1 (see field_validation.h).
  kInvalidFieldName,
  // A value breaks RFC 9113 section 8.2.1.
  kInvalidFieldValue,
  // The fields exceed the decoder's max header list size.
  kHeaderListTooLarge,

  // ---- Connection errors (sticky) ----
  // The block ends inside a representation or an integer.
  kTruncated,
  // An integer above 2^32-1, or too many octets long.
  kIntegerOverflow,
  // A string literal's length runs past the end of the block.
  kStringTooLong,
  // Index 0 in an indexed field (RFC 7541 section 6.1).
  kIndexZero,
  // An index past the static and dynamic tables.
  kIndexOutOfRange,
  // EOS symbol inside a Huffman string (RFC 7541 section 5.2).
  kHuffmanEos,
  // More than 7 bits of Huffman padding.
  kHuffmanPaddingTooLong,
  // Huffman padding that is not the EOS prefix (all ones).
  kHuffmanPaddingNotOnes,
  // A dynamic table size update after a field (RFC 7541 section 4.2).
  kTableSizeUpdateNotAtStart,
  // An update above the limit (our SETTINGS_HEADER_TABLE_SIZE), or above the
  // smallest limit since the previous block.
  kTableSizeUpdateTooLarge,
  // The limit went below the table size and the next block did not start
  // with an update (RFC 7541 section 4.2).
  kMissingTableSizeUpdate,
};

// "ok", "invalid_field_name", ...: a stable snake_case name for every value.
const char* DecodeErrorName(DecodeError error);

// True for the connection errors above.
constexpr bool IsConnectionError(DecodeError error) {
  return error >= DecodeError::kTruncated;
}

// True for the stream errors above.
constexpr bool IsStreamError(DecodeError error) {
  return error != DecodeError::kOk && !IsConnectionError(error);
}

}  // namespace hpack

#endif  // HPACK_DECODE_ERROR_H_
