#include "hpack/decoder.h"

#include <algorithm>
#include <cstring>

#include "hpack/field_validation.h"
#include "hpack/huffman/huffman.h"
#include "hpack/static_table.h"
#include "hpack/varint.h"

namespace hpack {
namespace {

constexpr size_t kFirstDynamicIndex = StaticTable::kSize + 1;  // 62

DecodeError FromVarint(VarintStatus s) {
  return s == VarintStatus::kTruncated ? DecodeError::kTruncated
                                       : DecodeError::kIntegerOverflow;
}

DecodeError FromHuffman(HuffmanDecodeStatus s) {
  switch (s) {
    case HuffmanDecodeStatus::kOk:
      return DecodeError::kOk;
    case HuffmanDecodeStatus::kEosInData:
      return DecodeError::kHuffmanEos;
    case HuffmanDecodeStatus::kPaddingTooLong:
      return DecodeError::kHuffmanPaddingTooLong;
    case HuffmanDecodeStatus::kPaddingNotOnes:
      return DecodeError::kHuffmanPaddingNotOnes;
  }
  return DecodeError::kHuffmanEos;
}

// The stream error a field's FieldValidity bits stand for.
DecodeError FromValidity(uint8_t flags) {
  return (flags & kFieldNameInvalid) ? DecodeError::kInvalidFieldName
                                     : DecodeError::kInvalidFieldValue;
}

}  // namespace

Decoder::Decoder() : Decoder(Options()) {}

Decoder::Decoder(const Options& options)
    : table_(options.max_table_size),
      limit_(options.max_table_size),
      max_header_list_size_(options.max_header_list_size) {}

void Decoder::SetMaxTableSizeLimit(uint32_t limit) {
  if (limit < table_.max_size()) {
    required_max_ = update_required_ ? std::min(required_max_, limit) : limit;
    update_required_ = true;
  }
  limit_ = limit;
}

DecodeError Decoder::Decode(std::string_view block, HeaderList* list) {
  list->clear();
  block_list_size_ = 0;
  if (error_ != DecodeError::kOk) return error_;
  const uint8_t* p = reinterpret_cast<const uint8_t*>(block.data());
  const DecodeError e = DecodeBlock(p, p + block.size(), list);
  if (IsConnectionError(e)) error_ = e;
  return e;
}

DecodeError Decoder::DecodeString(const uint8_t** p, const uint8_t* end,
                                  HeaderList* list, size_t pos, size_t* len) {
  if (*p == end) return DecodeError::kTruncated;
  const bool huffman = (**p & 0x80) != 0;
  uint32_t n;
  const VarintStatus vs = DecodeVarint(7, p, end, &n);
  if (vs != VarintStatus::kOk) return FromVarint(vs);
  if (n > static_cast<size_t>(end - *p)) return DecodeError::kStringTooLong;
  if (n == 0) {
    *len = 0;
  } else if (!huffman) {
    char* base = list->EnsureArena(pos, n);
    HeaderList::CopyBytes(base + pos, reinterpret_cast<const char*>(*p), n);
    *len = n;
  } else {
    char* base = list->EnsureArena(pos, HuffmanMaxDecodedLength(n));
    size_t out_len = 0;
    const HuffmanDecodeStatus hs =
        HuffmanDecode(*p, n, reinterpret_cast<uint8_t*>(base + pos), &out_len);
    if (hs != HuffmanDecodeStatus::kOk) return FromHuffman(hs);
    *len = out_len;
  }
  *p += n;
  return DecodeError::kOk;
}

DecodeError Decoder::DecodeBlock(const uint8_t* p, const uint8_t* end,
                                 HeaderList* list) {
  // RFC 7541 section 4.2: dynamic table size updates, only before the first
  // field.
  bool updated = false;
  while (p < end && (*p & 0xe0) == 0x20) {
    uint32_t size;
    const VarintStatus vs = DecodeVarint(5, &p, end, &size);
    if (vs != VarintStatus::kOk) return FromVarint(vs);
    const uint32_t allowed =
        (update_required_ && !updated) ? required_max_ : limit_;
    if (size > allowed) return DecodeError::kTableSizeUpdateTooLarge;
    table_.SetMaxSize(size);
    updated = true;
  }
  if (update_required_) {
    if (!updated) return DecodeError::kMissingTableSizeUpdate;
    update_required_ = false;
  }

  DecodeError stream_error = DecodeError::kOk;
  const size_t max_list = max_header_list_size_;
  // Set once a field did not fit: from then on fields are decoded (the table
  // must stay in step) and validated, but not kept.
  bool over_limit = false;

  while (p < end) {
    const uint8_t first = *p;

    if (first & 0x80) {  // RFC 7541 6.1: indexed header field.
      uint32_t index;
      const VarintStatus vs = DecodeVarint(7, &p, end, &index);
      if (vs != VarintStatus::kOk) return FromVarint(vs);
      std::string_view name;
      std::string_view value;
      uint8_t flags = kFieldValid;
      bool adjacent = false;  // value.data() == name.data() + name.size().
      if (index - 1 < StaticTable::kSize) {  // 1..61; index 0 wraps around.
        const StaticEntry& e = StaticTable::Get(index);
        name = e.name;
        value = e.value;
      } else if (index == 0) {
        return DecodeError::kIndexZero;
      } else {
        const size_t i = index - kFirstDynamicIndex;
        if (i >= table_.num_entries()) return DecodeError::kIndexOutOfRange;
        name = table_.name(i);
        value = table_.value(i);
        flags = table_.flags(i);
        adjacent = true;
      }
      block_list_size_ +=
          name.size() + value.size() + HeaderList::kFieldOverhead;
      if (!over_limit) {
        if (list->list_size_ + name.size() + value.size() +
                HeaderList::kFieldOverhead >
            max_list) {
          over_limit = true;
          if (stream_error == DecodeError::kOk) {
            stream_error = DecodeError::kHeaderListTooLarge;
          }
        } else if (adjacent) {
          list->AppendJoined(name.data(), name.size(), value.size());
        } else {
          list->Append(name, value);
        }
      }
      if (flags != kFieldValid && stream_error == DecodeError::kOk) {
        stream_error = FromValidity(flags);
      }
      continue;
    }

    // RFC 7541 6.2: literal header field, with incremental indexing (01),
    // without indexing (0000) or never indexed (0001). 001 is a size update,
    // too late here.
    int prefix_bits;
    bool indexing = false;
    bool never_indexed = false;
    if (first & 0x40) {
      prefix_bits = 6;
      indexing = true;
    } else if (first & 0x20) {
      return DecodeError::kTableSizeUpdateNotAtStart;
    } else {
      prefix_bits = 4;
      never_indexed = (first & 0x10) != 0;
    }
    uint32_t name_index;
    const VarintStatus vs = DecodeVarint(prefix_bits, &p, end, &name_index);
    if (vs != VarintStatus::kOk) return FromVarint(vs);

    // Name then value go to the arena's tail; they become a field only if it
    // fits.
    const size_t start = list->arena_size();
    size_t name_len = 0;
    size_t full_name_len = 0;  // Also for a name not copied (below).
    uint8_t flags = kFieldValid;
    if (name_index == 0) {
      const DecodeError e = DecodeString(&p, end, list, start, &name_len);
      if (e != DecodeError::kOk) return e;
      if (!IsValidFieldName(
              std::string_view(list->arena_data() + start, name_len))) {
        flags |= kFieldNameInvalid;
      }
      full_name_len = name_len;
    } else {
      std::string_view name;
      if (name_index <= StaticTable::kSize) {
        name = StaticTable::Get(name_index).name;
      } else {
        const size_t i = name_index - kFirstDynamicIndex;
        if (i >= table_.num_entries()) return DecodeError::kIndexOutOfRange;
        name = table_.name(i);
        flags |= table_.flags(i) & kFieldNameInvalid;
      }
      full_name_len = name.size();
      // Copied out even when the field is kept in the table only: the entry the
      // name comes from may be evicted by the insertion (RFC 7541 section 4.4).
      // Not needed at all for a field that is neither kept nor indexed.
      if (indexing || !over_limit) {
        char* base = list->EnsureArena(start, name.size());
        HeaderList::CopyBytes(base + start, name.data(), name.size());
        name_len = name.size();
      }
    }
    size_t value_len;
    const DecodeError e =
        DecodeString(&p, end, list, start + name_len, &value_len);
    if (e != DecodeError::kOk) return e;
    const std::string_view name(list->arena_data() + start, name_len);
    const std::string_view value(list->arena_data() + start + name_len,
                                 value_len);
    if (!IsValidFieldValue(value)) flags |= kFieldValueInvalid;
    block_list_size_ += full_name_len + value_len + HeaderList::kFieldOverhead;

    if (indexing) {
      const uint64_t entry_size =
          uint64_t{name_len} + value_len + DynamicTable::kEntryOverhead;
      if (table_.capacity() == 0 && entry_size <= table_.max_size()) {
        // A fresh table's first entry: reserve for the rest of the block at
        // once instead of doubling from 512 two or three times in a cold
        // block. 4 table octets per remaining block octet is a heuristic, not
        // a bound: header text decodes to at most 8/5 of its Huffman octets
        // and each entry adds 32, but a field with an indexed name or a short
        // value adds more per octet, and a reference adds nothing. At most
        // max_size, which the table may reach anyway. An entry larger than
        // max_size is not inserted (Insert empties the table): no reserve.
        const uint64_t want = entry_size + 4 * static_cast<uint64_t>(end - p);
        table_.Reserve(static_cast<uint32_t>(std::min<uint64_t>(
            table_.max_size(),
            std::max<uint64_t>(want, DynamicTable::kMinCapacity))));
      }
      table_.Insert(name, value, flags);
    }
    if (!over_limit) {
      if (list->list_size_ + name_len + value_len + HeaderList::kFieldOverhead >
          max_list) {
        over_limit = true;
        if (stream_error == DecodeError::kOk) {
          stream_error = DecodeError::kHeaderListTooLarge;
        }
      } else {
        list->AddRecord(start, name_len, value_len,
                        never_indexed ? HeaderList::kSensitive : 0u);
      }
    }
    if (flags != kFieldValid && stream_error == DecodeError::kOk) {
      stream_error = FromValidity(flags);
    }
  }
  return stream_error;
}

}  // namespace hpack
