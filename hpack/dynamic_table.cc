#include "hpack/dynamic_table.h"

#include <algorithm>
#include <cassert>
#include <cstring>
#include <memory>
#include <utility>

#include "hpack/string_hash.h"

namespace hpack {
namespace {

// n <= 2^63. One bit scan, not a doubling loop (which took about 60 Ir of a
// cold decoder's first allocation).
uint64_t RoundUpToPowerOfTwo(uint64_t n) {
  return n <= 1 ? 1 : uint64_t{1} << (64 - __builtin_clzll(n - 1));
}

}  // namespace

DynamicTable::DynamicTable(uint32_t max_size, bool enable_lookup)
    : max_size_(max_size), lookup_(enable_lookup) {}

DynamicTable::DynamicTable(DynamicTable&& o) noexcept { *this = std::move(o); }

DynamicTable& DynamicTable::operator=(DynamicTable&& o) noexcept {
  if (this == &o) return *this;
  max_size_ = o.max_size_;
  size_ = std::exchange(o.size_, 0);
  // Both versions move past every version either had, so nothing cached
  // against either table before the move matches it after.
  version_ = std::max(version_, o.version_) + 1;
  o.version_ = version_;
  capacity_ = std::exchange(o.capacity_, 0);
  lookup_ = o.lookup_;
  storage_ = std::move(o.storage_);
  bytes_ = std::exchange(o.bytes_, nullptr);
  byte_mask_ = std::exchange(o.byte_mask_, 0);
  tail_ = std::exchange(o.tail_, 0);
  records_ = std::exchange(o.records_, nullptr);
  record_mask_ = std::exchange(o.record_mask_, 0);
  first_ = std::exchange(o.first_, 0);
  count_ = std::exchange(o.count_, 0);
  next_id_ = std::exchange(o.next_id_, 0);
  by_name_ = std::move(o.by_name_);
  by_field_ = std::move(o.by_field_);
  return *this;
}

void DynamicTable::Allocate(uint32_t capacity) {
  // Byte ring: at least twice the capacity (see the header), at least 16
  // octets.
  const uint64_t ring =
      RoundUpToPowerOfTwo(std::max<uint64_t>(16, 2 * uint64_t{capacity}));
  // Records: every entry takes at least kEntryOverhead octets of the
  // capacity, so at most capacity / kEntryOverhead are live at once; the ring
  // of records (first_, count_) needs no spare slot.
  const size_t records = RoundUpToPowerOfTwo(capacity / kEntryOverhead);

  std::unique_ptr<char[]> storage(
      new char[ring + kReadSlack + records * sizeof(Record)]);
  char* bytes = storage.get();
  static_assert(alignof(Record) <= 16 && kReadSlack % alignof(Record) == 0,
                "new char[] is 16-aligned");
  // ring is a power of two >= 16, so the records are aligned; trivial, so
  // this only begins their lifetime.
  Record* recs = reinterpret_cast<Record*>(bytes + ring + kReadSlack);
  std::uninitialized_default_construct_n(recs, records);
  // Move the live entries over, oldest first, re-laid from logical position 0.
  uint64_t tail = 0;
  for (size_t k = 0; k < count_; ++k) {
    const size_t i = count_ - 1 - k;  // Position, oldest first.
    Record r = record(i);
    const size_t n = size_t{r.name_len} + r.value_len;
    std::memcpy(bytes + tail, bytes_ + (r.pos & byte_mask_), n);
    r.pos = tail;
    tail += n;
    recs[k] = r;
  }
  storage_ = std::move(storage);
  bytes_ = bytes;
  records_ = recs;
  byte_mask_ = ring - 1;
  record_mask_ = records - 1;
  tail_ = tail;
  first_ = 0;
  capacity_ = capacity;
  ++version_;
  if (lookup_) {
    by_name_.Reset(capacity / kEntryOverhead);
    by_field_.Reset(capacity / kEntryOverhead);
    for (size_t k = 0; k < count_; ++k) {
      const Record& r = records_[k];
      const uint32_t id = next_id_ - static_cast<uint32_t>(count_ - k);
      by_name_.Insert(r.name_tag, id);
      by_field_.Insert(r.field_tag, id);
    }
  }
}

size_t DynamicTable::storage_bytes() const {
  if (capacity_ == 0) return 0;
  size_t n =
      (byte_mask_ + 1) + kReadSlack + (record_mask_ + 1) * sizeof(Record);
  if (lookup_) {
    n +=
        (by_name_.slot_count() + by_field_.slot_count()) * 2 * sizeof(uint32_t);
  }
  return n;
}

void DynamicTable::Reserve(uint32_t capacity) {
  if (capacity > capacity_) Allocate(capacity);
}

void DynamicTable::SetMaxSize(uint32_t max_size) {
  max_size_ = max_size;
  ++version_;
  while (size_ > max_size_) EvictOldest();
}

void DynamicTable::EvictOldest() {
  const Record& r = records_[first_];
  size_ -= r.name_len + r.value_len + kEntryOverhead;
  if (lookup_) {
    const uint32_t id = next_id_ - static_cast<uint32_t>(count_);
    by_name_.Erase(r.name_tag, id);
    by_field_.Erase(r.field_tag, id);
  }
  first_ = (first_ + 1) & record_mask_;
  --count_;
  ++version_;
}

void DynamicTable::EvictAll() {
  while (count_ > 0) EvictOldest();
}

bool DynamicTable::InsertAndHash(std::string_view name, std::string_view value,
                                 uint8_t flags) {
  const uint64_t name_hash = HashString(name);
  return InsertHashed(name, value, flags, name_hash,
                      HashField(name_hash, HashString(value)));
}

bool DynamicTable::InsertHashed(std::string_view name, std::string_view value,
                                uint8_t flags, uint64_t name_hash,
                                uint64_t field_hash) {
  const uint64_t n = uint64_t{name.size()} + value.size();
  if (n + kEntryOverhead > max_size_) {
    EvictAll();
    return false;
  }
  const uint32_t entry_size = static_cast<uint32_t>(n + kEntryOverhead);
  while (size_ + entry_size > max_size_) EvictOldest();
  if (size_ + entry_size > capacity_) {
    // size_ + entry_size <= max_size_ here, so the growth stops at max_size_.
    Allocate(std::min(max_size_, std::max({size_ + entry_size, 2 * capacity_,
                                           kMinCapacity})));
  }

  Record& r = Place(name, value, flags);
  if (lookup_) {
    r.name_tag = FieldIndex::Tag(name_hash);
    r.field_tag = FieldIndex::Tag(field_hash);
    const uint32_t id = next_id_++;
    by_name_.Insert(name_hash, id);
    by_field_.Insert(field_hash, id);
  }
  return true;
}

}  // namespace hpack
