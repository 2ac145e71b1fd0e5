// hpack::Decoder: RFC 7541 header block decoding into a HeaderList, with RFC
// 9113 field validation and header list size limits.
//
// Input is one complete header block: the transport reassembles HEADERS (or
// PUSH_PROMISE) and its CONTINUATION frames first, and bounds the reassembled
// size itself. There is no streaming input, so no state lives between a field's
// octets across calls.
//
// Usage:
//
// clang-format off
//   hpack::Decoder decoder;    // One per connection (the peer's encoder
//                              // context).
//   hpack::HeaderList fields;  // Reuse it: clear() keeps its storage.
//   hpack::DecodeError e = decoder.Decode(block, &fields);
//   if (e == hpack::DecodeError::kOk) {
//     ... use fields ...
//   } else if (hpack::IsStreamError(e)) {
//     ... reset the stream, keep the connection ...
//   } else {
//     ... GOAWAY(COMPRESSION_ERROR): the decoder refuses everything from now
//     on ...
//   }
// clang-format on
//
// Guarantees:
//  * Memory: the list never holds more than max_header_list_size() (RFC 9113
//    sizes: name + value + 32 per field); the size check comes before a field
//    is copied, so a block that references one 4 KiB entry thousands of times
//    stops adding fields at the limit (an "HPACK bomb" costs one table lookup
//    per reference from then on). Besides the list the only scratch is the
//    list's arena tail, holding at most one literal being decoded (<= 8/5 of
//    its encoded octets), and the list's records, reserved at the start of a
//    block for min(block octets, max_header_list_size() / 32) fields (each
//    kept field takes at least one block octet and 32 list octets). The dynamic
//    table never exceeds the limit set with SetMaxTableSizeLimit (2x that in
//    bytes, see dynamic_table.h).
//  * Validation: every field's name and value are checked
//    (field_validation.h). A dynamic table entry remembers its outcome, so
//    referencing it costs no rescan, and an invalid field still enters the
//    table when sent with incremental indexing (the encoder's table has it)
//    and fails again in every later block that references it.
//  * Table state: on kOk and on every stream error the whole block has been
//    processed and the dynamic table matches the peer encoder's. On a
//    connection error it does not, and the decoder is failed for good.
//  * Steady state: once `list` and the table have grown to the traffic's
//    size, decoding performs no heap allocation.

#ifndef HPACK_DECODER_H_
#define HPACK_DECODER_H_

#include <cstddef>
#include <cstdint>
#include <string_view>

#include "hpack/decode_error.h"
#include "hpack/dynamic_table.h"
#include "hpack/header_list.h"

namespace hpack {

class Decoder {
 public:
  struct Options {
    // SETTINGS_HEADER_TABLE_SIZE in force when decoding starts: both the limit
    // for table size updates and the table's initial max size. Keep the
    // protocol default of 4096 unless both ends agree otherwise out of band
    // (tests; RFC 7541 C.5 uses 256). Later changes go through
    // SetMaxTableSizeLimit.
    uint32_t max_table_size = DynamicTable::kDefaultMaxSize;
    // SETTINGS_MAX_HEADER_LIST_SIZE we advertise (RFC 9113 section 6.5.2
    // accounting).
    size_t max_header_list_size = 64 * 1024;
  };

  Decoder();
  explicit Decoder(const Options& options);

  Decoder(Decoder&&) = default;
  Decoder& operator=(Decoder&&) = default;

  // Decodes one complete header block into *list (cleared first; its storage is
  // reused).
  //
  // Returns kOk, or:
  //  * a stream error (IsStreamError): kInvalidFieldName / kInvalidFieldValue
  //    (the first invalid field in block order), or kHeaderListTooLarge.
  //    Whichever happened first is reported. *list holds, for logging, the
  //    fields before the first one that would exceed max_header_list_size()
  //    (invalid ones included): every field only if the limit was not reached.
  //    The decoder remains usable.
  //  * a connection error (IsConnectionError): the block is corrupt or breaks
  //    RFC 7541; *list holds the fields before the error. The error is
  //    sticky: this and every later call return it without reading their
  //    input.
  [[nodiscard]] DecodeError Decode(std::string_view block, HeaderList* list);

  // Our SETTINGS_HEADER_TABLE_SIZE changed and the peer acknowledged it. Later
  // table size updates must not exceed `limit`. If the limit (or the smallest
  // limit set since the last block) is below the table's current max size, the
  // next block must start with a size update no larger than that smallest limit
  // (else kMissingTableSizeUpdate / kTableSizeUpdateTooLarge). May allocate
  // when `limit` exceeds every earlier limit.
  void SetMaxTableSizeLimit(uint32_t limit);
  uint32_t max_table_size_limit() const { return limit_; }

  void set_max_header_list_size(size_t size) { max_header_list_size_ = size; }
  size_t max_header_list_size() const { return max_header_list_size_; }

  // The RFC 9113 size (name + value + 32 per field) of every field of the
  // last block decoded, the ones dropped past max_header_list_size()
  // included: what the peer sent, for "X vs. limit" messages. Counted up to
  // the first connection error; 0 before the first block. An HPACK bomb
  // counts every reference (size_t: no overflow, a block holds at most
  // 2^32 octets of 1-octet references to entries of at most 2^32 octets).
  size_t block_list_size() const { return block_list_size_; }

  // kOk, or the connection error that failed this decoder.
  DecodeError error() const { return error_; }

  // The dynamic table (entries' flags are FieldValidity bits).
  const DynamicTable& table() const { return table_; }

 private:
  DecodeError DecodeBlock(const uint8_t* p, const uint8_t* end,
                          HeaderList* list);
  // Decodes a string literal into out's arena at `pos` (scratch until the
  // field is kept); adds the octets it asked the arena for to *asked.
  // Inlined into DecodeBlock, so `out` stays in registers.
  __attribute__((always_inline)) static inline DecodeError DecodeString(
      const uint8_t** p, const uint8_t* end, HeaderList::Appender* out,
      size_t pos, size_t* len, size_t* asked);

  DynamicTable table_;
  uint32_t limit_;
  // When update_required_, the block's first size update must be <=
  // required_max_.
  uint32_t required_max_ = 0;
  bool update_required_ = false;
  size_t max_header_list_size_;
  size_t block_list_size_ = 0;
  DecodeError error_ = DecodeError::kOk;
};

}  // namespace hpack

#endif  // HPACK_DECODER_H_
