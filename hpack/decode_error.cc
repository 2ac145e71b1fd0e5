#include "hpack/decode_error.h"

namespace hpack {

const char* DecodeErrorName(DecodeError error) {
  switch (error) {
    case DecodeError::kOk:
      return "ok";
    case DecodeError::kInvalidFieldName:
      return "invalid_field_name";
    case DecodeError::kInvalidFieldValue:
      return "invalid_field_value";
    case DecodeError::kHeaderListTooLarge:
      return "header_list_too_large";
    case DecodeError::kTruncated:
      return "truncated";
    case DecodeError::kIntegerOverflow:
      return "integer_overflow";
    case DecodeError::kStringTooLong:
      return "string_too_long";
    case DecodeError::kIndexZero:
      return "index_zero";
    case DecodeError::kIndexOutOfRange:
      return "index_out_of_range";
    case DecodeError::kHuffmanEos:
      return "huffman_eos";
    case DecodeError::kHuffmanPaddingTooLong:
      return "huffman_padding_too_long";
    case DecodeError::kHuffmanPaddingNotOnes:
      return "huffman_padding_not_ones";
    case DecodeError::kTableSizeUpdateNotAtStart:
      return "table_size_update_not_at_start";
    case DecodeError::kTableSizeUpdateTooLarge:
      return "table_size_update_too_large";
    case DecodeError::kMissingTableSizeUpdate:
      return "missing_table_size_update";
  }
  return "unknown";
}

}  // namespace hpack
