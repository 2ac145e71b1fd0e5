#include "hpack/decoder.h"

#include <algorithm>
#include <array>
#include <cstring>

#include "hpack/field_validation.h"
#include "hpack/huffman/huffman.h"
#include "hpack/static_table.h"
#include "hpack/varint.h"

namespace hpack {
namespace {

constexpr size_t kFirstDynamicIndex = StaticTable::kSize + 1;  // 62

// The static table's entries with name and value joined in 32-octet slots
// (every entry's name + value is at most 28 octets), so an indexed static
// field is one fixed 32-octet copy (HeaderList::Appender::AppendPadded)
// instead of two copies of variable length.
struct JoinedStaticEntry {
  char bytes[HeaderList::kPaddedCopy];
  uint8_t name_len;
  uint8_t value_len;
};

constexpr std::array<JoinedStaticEntry, StaticTable::kSize + 1>
BuildJoinedStatic() {
  std::array<JoinedStaticEntry, StaticTable::kSize + 1> t{};
  for (size_t i = 1; i <= StaticTable::kSize; ++i) {
    const StaticEntry& e = static_table_internal::kStaticEntries[i];
    size_t k = 0;
    for (char c : e.name) t[i].bytes[k++] = c;
    for (char c : e.value) t[i].bytes[k++] = c;
    t[i].name_len = static_cast<uint8_t>(e.name.size());
    t[i].value_len = static_cast<uint8_t>(e.value.size());
  }
  return t;
}

constexpr std::array<JoinedStaticEntry, StaticTable::kSize + 1> kJoinedStatic =
    BuildJoinedStatic();
static_assert(HeaderList::kPaddedCopy <= DynamicTable::kReadSlack,
              "a dynamic entry is read up to kPaddedCopy octets");

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

inline DecodeError Decoder::DecodeString(const uint8_t** p, const uint8_t* end,
                                         HeaderList::Appender* out, size_t pos,
                                         size_t* len, size_t* asked) {
  if (*p == end) return DecodeError::kTruncated;
  const bool huffman = (**p & 0x80) != 0;
  uint32_t n;
  const VarintStatus vs = DecodeVarint(7, p, end, &n);
  if (vs != VarintStatus::kOk) return FromVarint(vs);
  if (n > static_cast<size_t>(end - *p)) return DecodeError::kStringTooLong;
  if (n == 0) {
    *len = 0;
  } else if (!huffman) {
    char* base = out->Ensure(pos, n);
    *asked += n;
    HeaderList::CopyBytes(base + pos, reinterpret_cast<const char*>(*p), n);
    *len = n;
  } else {
    const size_t bound = HuffmanMaxDecodedLength(n);
    char* base = out->Ensure(pos, bound);
    *asked += bound;
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

  // The list's per-field state in a local (see HeaderList::Appender; its
  // address goes only to DecodeString, which is inlined), written back once
  // after the loop, whichever way the block ends.
  // A kept field takes at least one block octet and 32 octets of the list
  // size: the records for that many are reserved at once (at most
  // max_list / 32 records of 16 octets: half the list limit's octets).
  HeaderList::Appender out(
      list,
      std::min<size_t>(static_cast<size_t>(end - p),
                       max_header_list_size_ / HeaderList::kFieldOverhead));
  size_t block_size = 0;
  DecodeError stream_error = DecodeError::kOk;
  const size_t max_list = max_header_list_size_;
  // block_size is the RFC 9113 size of every field so far, dropped ones
  // included. Every field is kept until the first one that would take the
  // list past max_list, and none after it; so until then the list's size is
  // block_size, and a field is kept iff block_size with it is <= max_list
  // (block_size only grows: once over, every later field is over too). From
  // then on fields are still decoded (the table must stay in step) and
  // validated, but not kept.
  DecodeError e = DecodeError::kOk;

  while (p < end) {
    const uint8_t first = *p;

    if (first & 0x80) {  // RFC 7541 6.1: indexed header field.
      uint32_t index;
      const VarintStatus vs = DecodeVarint(7, &p, end, &index);
      if (vs != VarintStatus::kOk) {
        e = FromVarint(vs);
        break;
      }
      // name_len + value_len octets at `bytes`, readable up to
      // bytes + HeaderList::kPaddedCopy (both tables pad).
      const char* bytes;
      size_t name_len;
      size_t value_len;
      uint8_t flags = kFieldValid;
      if (index - 1 < StaticTable::kSize) {  // 1..61; index 0 wraps around.
        const JoinedStaticEntry& se = kJoinedStatic[index];
        bytes = se.bytes;
        name_len = se.name_len;
        value_len = se.value_len;
      } else if (index == 0) {
        e = DecodeError::kIndexZero;
        break;
      } else {
        const size_t i = index - kFirstDynamicIndex;
        if (i >= table_.num_entries()) {
          e = DecodeError::kIndexOutOfRange;
          break;
        }
        const std::string_view name = table_.name(i);
        bytes = name.data();
        name_len = name.size();
        value_len = table_.value(i).size();
        flags = table_.flags(i);
      }
      block_size += name_len + value_len + HeaderList::kFieldOverhead;
      if (block_size > max_list) {
        if (stream_error == DecodeError::kOk) {
          stream_error = DecodeError::kHeaderListTooLarge;
        }
      } else {
        out.AppendPadded(bytes, name_len, value_len);
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
      e = DecodeError::kTableSizeUpdateNotAtStart;
      break;
    } else {
      prefix_bits = 4;
      never_indexed = (first & 0x10) != 0;
    }
    uint32_t name_index;
    const VarintStatus vs = DecodeVarint(prefix_bits, &p, end, &name_index);
    if (vs != VarintStatus::kOk) {
      e = FromVarint(vs);
      break;
    }

    // Name then value go to the arena's tail; they become a field only if it
    // fits.
    const bool over_limit = block_size > max_list;
    const size_t start = out.size();
    size_t asked = 0;  // Arena octets asked for (octets_copied()).
    size_t name_len = 0;
    size_t full_name_len = 0;  // Also for a name not copied (below).
    uint8_t flags = kFieldValid;
    if (name_index == 0) {
      e = DecodeString(&p, end, &out, start, &name_len, &asked);
      if (e != DecodeError::kOk) {
        out.CountScratch(asked);
        break;
      }
      if (!IsValidFieldName(std::string_view(out.data() + start, name_len))) {
        flags |= kFieldNameInvalid;
      }
      full_name_len = name_len;
    } else if (name_index <= StaticTable::kSize) {
      // A static name, copied out as a dynamic one is (below): it is at most
      // 27 octets of its 32-octet slot, so one fixed move, no call (the value
      // then overwrites the rest).
      const JoinedStaticEntry& se = kJoinedStatic[name_index];
      full_name_len = se.name_len;
      if (indexing || !over_limit) {
        out.CopyPaddedAt(start, se.bytes);
        asked += full_name_len;
        name_len = full_name_len;
      }
    } else {
      const size_t i = name_index - kFirstDynamicIndex;
      if (i >= table_.num_entries()) {
        e = DecodeError::kIndexOutOfRange;
        break;
      }
      const std::string_view name = table_.name(i);
      flags |= table_.flags(i) & kFieldNameInvalid;
      full_name_len = name.size();
      // Copied out even when the field is kept in the table only: the entry the
      // name comes from may be evicted by the insertion (RFC 7541 section 4.4).
      // Not needed at all for a field that is neither kept nor indexed.
      if (indexing || !over_limit) {
        char* base = out.Ensure(start, name.size());
        asked += name.size();
        HeaderList::CopyBytes(base + start, name.data(), name.size());
        name_len = name.size();
      }
    }
    size_t value_len = 0;
    e = DecodeString(&p, end, &out, start + name_len, &value_len, &asked);
    if (e != DecodeError::kOk) {
      out.CountScratch(asked);
      break;
    }
    const std::string_view name(out.data() + start, name_len);
    const std::string_view value(out.data() + start + name_len, value_len);
    if (!IsValidFieldValue(value)) flags |= kFieldValueInvalid;
    block_size += full_name_len + value_len + HeaderList::kFieldOverhead;

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
    if (block_size > max_list) {
      out.CountScratch(asked);
      if (stream_error == DecodeError::kOk) {
        stream_error = DecodeError::kHeaderListTooLarge;
      }
    } else {
      out.CountScratch(asked - name_len - value_len);
      out.AddRecord(name_len, value_len,
                    never_indexed ? HeaderList::kSensitive : 0u);
    }
    if (flags != kFieldValid && stream_error == DecodeError::kOk) {
      stream_error = FromValidity(flags);
    }
  }
  out.Commit();
  block_list_size_ = block_size;
  return e != DecodeError::kOk ? e : stream_error;
}

}  // namespace hpack
