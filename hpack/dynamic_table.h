// RFC 7541 section 2.3.2 / 4: the dynamic table, as one contiguous byte ring.
//
// Storage: every entry's name and value sit back to back in one byte ring, and
// a second ring of small fixed-size records says where. Both are sized for a
// `capacity` (the largest total entry size they hold) that starts at 0 and
// grows on demand: an Insert whose entry does not fit the storage (after
// evicting down to max_size) reallocates it for min(max_size, max(needed,
// twice the old capacity, kMinCapacity)). An idle table (a connection that
// never indexes a field) costs nothing, a busy one reaches its final size after
// a few doublings, and then inserting and evicting in steady state allocates
// nothing. Whatever a peer sends, the storage (storage_bytes()), with M the
// largest max_size the table has had, is at most a byte ring of 2 * M octets
// and M / 32 32-octet records, each rounded up to a power of two, plus
// kReadSlack octets after the ring: 3 * M (+ 32) when M is a power of two (the
// default 4096: 12 KiB), under 6 * M otherwise (worst just above one: 4128
// takes 24 KiB). Lookup adds two maps of 2 * M / 32
// 8-octet slots, also rounded up (at least 8): from M = 128 on, M more at a
// power of two and under 2 * M more otherwise.
//
// An entry never wraps around the end of the byte ring (so its name and value
// are plain string_views): when it does not fit before the end, it starts over
// at the beginning. With a ring of at least 2 * capacity bytes, the RFC's size
// accounting (32 + name + value per entry, total <= max_size) guarantees the
// live bytes plus the skipped gap always fit.
//
// Indexing: Get(0) is the newest entry (HPACK index 62), Get(num_entries() - 1)
// the oldest.
//
// Each entry carries an opaque `flags` octet set when it is inserted: the
// decoder stores the entry's RFC 9113 validation outcome there so later
// references need no rescan.
//
// Lookup (encoder side, when constructed with enable_lookup): name -> newest
// entry with that name, and name+value -> newest equal entry, through two hash
// maps kept up to date on every insert and eviction. Each entry has a 32-bit id
// (insertion count, wrapping); a map hit is confirmed by comparing bytes, so
// hash collisions only cost compression. Without lookup (the decoder) an
// insert keeps neither ids nor hash tags, and one that fits the storage is
// placed inline (Insert).

#ifndef HPACK_DYNAMIC_TABLE_H_
#define HPACK_DYNAMIC_TABLE_H_

#include <cassert>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string_view>

#include "hpack/field_index.h"
#include "hpack/header_list.h"
#include "hpack/string_hash.h"

namespace hpack {

class DynamicTable {
 public:
  // RFC 7541 section 4.1: the size of an entry is name + value + 32 octets.
  static constexpr uint32_t kEntryOverhead = 32;
  // The protocol's initial SETTINGS_HEADER_TABLE_SIZE (RFC 9113 section 6.5.2).
  static constexpr uint32_t kDefaultMaxSize = 4096;

  // The first storage allocated, in RFC octets (grows from there).
  static constexpr uint32_t kMinCapacity = 512;
  // Octets past the byte ring's end that may be read (not written): an
  // entry's bytes (name(i).data()) are readable up to data() + kReadSlack
  // whatever its length, so a short entry can be copied with one fixed-size
  // copy (HeaderList::kPaddedCopy; the value past the ring is garbage).
  static constexpr uint32_t kReadSlack = 32;

  // A table with max_size() == max_size and no storage yet (see above).
  // `enable_lookup` turns on FindName/FindField (they then cost two hash-map
  // updates per insert and eviction; the decoder leaves it off).
  explicit DynamicTable(uint32_t max_size = kDefaultMaxSize,
                        bool enable_lookup = false);

  // A moved-from table is empty, with its max_size() and lookup kept and no
  // storage (as if just constructed; its version() still only grows), not
  // one that counts entries in storage it no longer owns.
  DynamicTable(DynamicTable&& o) noexcept;
  DynamicTable& operator=(DynamicTable&& o) noexcept;

  uint32_t max_size() const { return max_size_; }
  // Sum of the RFC sizes of the entries; always <= max_size().
  uint32_t size() const { return size_; }
  size_t num_entries() const { return count_; }
  // The largest total entry size the current storage holds without
  // reallocating (0 until the first Insert).
  uint32_t capacity() const { return capacity_; }
  // Heap octets the storage takes (both rings and the lookup maps; 0 while
  // capacity() is 0): see the bound above.
  size_t storage_bytes() const;
  // Grows by one on every insertion, eviction, size change or reallocation
  // (never decreases: the encoder relies on an old value never coming back):
  // equal values mean every position, entry and lookup answer is unchanged.
  uint64_t version() const { return version_; }

  // Sets the maximum size (a dynamic table size update), evicting the oldest
  // entries until size() <= max_size. Allocates nothing: storage grows as
  // entries need it.
  void SetMaxSize(uint32_t max_size);

  // Allocates storage for `capacity` now (if larger than the current one;
  // never shrinks), so that inserts up to that total allocate nothing.
  void Reserve(uint32_t capacity);

  // Adds (name, value) as the newest entry, first evicting the oldest entries
  // until it fits (RFC 7541 section 4.4), growing the storage if the entries
  // then do not fit it. An entry larger than max_size() empties the table and
  // is not added; returns false then, true otherwise.
  // `name` and `value` must not point into this table (copy them out first: the
  // entry they come from may be evicted to make room). With lookup enabled, the
  // name and name+value hashes are computed here; InsertHashed takes them
  // precomputed.
  bool Insert(std::string_view name, std::string_view value,
              uint8_t flags = 0) {
    if (lookup_) return InsertAndHash(name, value, flags);
    // Without lookup (the decoder's table), an entry that fits beside the
    // live ones in the current storage (every insert of a cold block after
    // its first reservation) is placed here, inline: no call, no hash tags,
    // no eviction or growth to consider (about 50 Ir less per insert).
    const uint64_t total =
        uint64_t{size_} + name.size() + value.size() + kEntryOverhead;
    if (total <= capacity_ && total <= max_size_) {
      Place(name, value, flags);
      return true;
    }
    return InsertHashed(name, value, flags, 0, 0);
  }
  // Same as Insert, with name_hash == HashString(name) and
  // field_hash == HashField(name_hash, HashString(value)).
  bool InsertHashed(std::string_view name, std::string_view value,
                    uint8_t flags, uint64_t name_hash, uint64_t field_hash);

  // Entry `i`, 0 = newest; requires i < num_entries() (unchecked). The views
  // stay valid until the next Insert, SetMaxSize or Reserve. The value
  // directly follows the name in memory (one copy moves both).
  std::string_view name(size_t i) const {
    const Record& r = record(i);
    return std::string_view(bytes_ + (r.pos & byte_mask_), r.name_len);
  }
  std::string_view value(size_t i) const {
    const Record& r = record(i);
    return std::string_view(bytes_ + (r.pos & byte_mask_) + r.name_len,
                            r.value_len);
  }
  uint8_t flags(size_t i) const { return record(i).flags; }
  // RFC size of entry i.
  size_t entry_size(size_t i) const {
    const Record& r = record(i);
    return size_t{r.name_len} + r.value_len + kEntryOverhead;
  }

  // Lookup-enabled tables only (otherwise they always return -1). The position
  // (0 = newest) of the newest entry equal to (name, value), or -1. field_hash
  // as for InsertHashed.
  long FindField(uint64_t field_hash, std::string_view name,
                 std::string_view value) const {
    uint32_t id;
    if (!by_field_.Find(field_hash, &id)) return -1;
    const size_t i = PositionOfId(id);
    if (i >= count_ || !BytesEqual(this->name(i), name) ||
        !BytesEqual(this->value(i), value)) {
      return -1;
    }
    return static_cast<long>(i);
  }
  // The position of the newest entry named `name`, or -1. name_hash ==
  // HashString(name). Always inline: with BytesEqual inline, GCC stopped
  // inlining it into Encoder::EncodeFieldGeneral (EncodeRequestCold +440 Ir).
  __attribute__((always_inline)) long FindName(uint64_t name_hash,
                                               std::string_view name) const {
    uint32_t id;
    if (!by_name_.Find(name_hash, &id)) return -1;
    const size_t i = PositionOfId(id);
    if (i >= count_ || !BytesEqual(this->name(i), name)) return -1;
    return static_cast<long>(i);
  }

 private:
  struct Record {
    // Logical byte position; the physical offset is pos & byte_mask_.
    uint64_t pos;
    // FieldIndex keys (low 32 bits of the hashes), to erase the entry from the
    // maps on eviction; set (and read) only with lookup enabled.
    uint32_t name_tag;
    uint32_t field_tag;
    uint32_t name_len;
    uint32_t value_len;
    uint8_t flags;
  };

  const Record& record(size_t i) const {
    return records_[(first_ + count_ - 1 - i) & record_mask_];
  }
  // Position (0 = newest) of the entry with this id; may be >= count_ for a
  // stale id.
  size_t PositionOfId(uint32_t id) const {
    return static_cast<uint32_t>(next_id_ - 1 - id);
  }
  bool InsertAndHash(std::string_view name, std::string_view value,
                     uint8_t flags);
  // Stores (name, value) as the newest entry and returns its record (its
  // lookup tags and id not set). Requires size() plus the entry's RFC size to
  // be at most both capacity() and max_size().
  Record& Place(std::string_view name, std::string_view value, uint8_t flags) {
    const uint64_t n = uint64_t{name.size()} + value.size();
    const uint64_t ring = byte_mask_ + 1;
    uint64_t pos = tail_;
    if ((pos & byte_mask_) + n > ring) pos = (pos + byte_mask_) & ~byte_mask_;
    // The header's invariant: the new bytes never reach the oldest live
    // entry's.
    assert(count_ == 0 || pos + n - records_[first_].pos <= ring);
    char* dst = bytes_ + (pos & byte_mask_);
    if (!value.empty() && value.data() == name.data() + name.size()) {
      // Adjacent (the decoder's literal, decoded into its list's arena): one
      // copy, not two (-20 Ir per insert).
      if (n >= 16 && n <= 32) {
        // Two overlapping 16-octet moves, inline (most decoded fields).
        internal::Copy16To32(dst, name.data(), n);
      } else {
        std::memcpy(dst, name.data(), n);
      }
    } else {
      if (!name.empty()) std::memcpy(dst, name.data(), name.size());
      if (!value.empty()) {
        std::memcpy(dst + name.size(), value.data(), value.size());
      }
    }
    tail_ = pos + n;
    Record& r = records_[(first_ + count_) & record_mask_];
    r.pos = pos;
    r.name_len = static_cast<uint32_t>(name.size());
    r.value_len = static_cast<uint32_t>(value.size());
    r.flags = flags;
    ++count_;
    ++version_;
    size_ += static_cast<uint32_t>(n + kEntryOverhead);
    return r;
  }
  void EvictOldest();
  void EvictAll();
  void Allocate(uint32_t capacity);

  uint32_t max_size_ = 0;
  uint32_t size_ = 0;
  uint64_t version_ = 0;
  uint32_t capacity_ = 0;
  bool lookup_ = false;

  // One allocation holds the byte ring and, after it, the record ring: a cold
  // decoder's first insert then costs one malloc and one free instead of two
  // each (about 400 Ir of glibc's for the default 4 KiB + 2 KiB).
  std::unique_ptr<char[]> storage_;
  char* bytes_ = nullptr;   // storage_.get().
  uint64_t byte_mask_ = 0;  // Ring size - 1; the ring size is a power of two.
  // Logical position where the next entry's bytes may start.
  uint64_t tail_ = 0;

  Record* records_ = nullptr;  // In storage_, after the byte ring.
  size_t record_mask_ = 0;
  size_t first_ = 0;  // Record slot of the oldest entry.
  size_t count_ = 0;
  // Id of the next inserted entry; the oldest entry's id is next_id_ - count_.
  // Kept (and used) only with lookup enabled.
  uint32_t next_id_ = 0;

  FieldIndex by_name_;
  FieldIndex by_field_;
};

}  // namespace hpack

#endif  // HPACK_DYNAMIC_TABLE_H_
