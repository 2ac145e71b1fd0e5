// A small open-addressing hash map from a key's hash to a 32-bit entry id, used
// by DynamicTable to find entries by name and by name+value for the encoder.
//
// Keys are hashes, not strings, and only their low 32 bits count (the "tag"):
// the map holds at most one id per tag (Insert replaces), and callers confirm a
// hit by comparing the entry's bytes, so a tag collision only costs a missed
// match. Slots are 8 octets (tag, id); linear probing, load factor <= 1/2,
// deletion by backward shift (no tombstones), so probe sequences stay short
// under the constant insert/evict churn of an HPACK table. Never allocates
// except in Reset().

#ifndef HPACK_FIELD_INDEX_H_
#define HPACK_FIELD_INDEX_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <utility>

namespace hpack {

class FieldIndex {
 public:
  FieldIndex() = default;
  // A moved-from map is empty (and must be Reset before an Insert), not one
  // that counts keys in storage it no longer has.
  FieldIndex(FieldIndex&& o) noexcept { *this = std::move(o); }
  FieldIndex& operator=(FieldIndex&& o) noexcept {
    slots_ = std::move(o.slots_);
    mask_ = std::exchange(o.mask_, 0);
    size_ = std::exchange(o.size_, 0);
    return *this;
  }

  // The part of a hash the map keys on: its low 32 bits, never 0 (0 marks an
  // empty slot).
  static uint32_t Tag(uint64_t hash) {
    const uint32_t tag = static_cast<uint32_t>(hash);
    return tag == 0 ? 1 : tag;
  }

  // Empties the map and sizes it for up to `max_keys` keys at once
  // (allocates).
  void Reset(size_t max_keys);

  // Empties the map, keeping its storage.
  void Clear();

  // Maps Tag(hash) to `id`, replacing any id it had. Requires fewer than
  // max_keys keys (from Reset) to be present before the call.
  void Insert(uint64_t hash, uint32_t id);

  // If Tag(hash) is present, stores its id and returns true.
  bool Find(uint64_t hash, uint32_t* id) const {
    if (size_ == 0) return false;  // Also covers "never Reset".
    const uint32_t tag = Tag(hash);
    const Slot* slots = slots_.get();
    size_t s = tag & mask_;
    while (slots[s].tag != 0) {
      if (slots[s].tag == tag) {
        *id = slots[s].id;
        return true;
      }
      s = (s + 1) & mask_;
    }
    return false;
  }

  // Removes Tag(hash) if it currently maps to `id` (otherwise a newer entry
  // with the same tag has replaced it, and stays).
  void Erase(uint64_t hash, uint32_t id);

  size_t size() const { return size_; }
  size_t slot_count() const { return mask_ + 1; }

 private:
  struct Slot {
    uint32_t tag;  // 0: empty.
    uint32_t id;
  };

  std::unique_ptr<Slot[]> slots_;  // mask_ + 1 slots once Reset.
  size_t mask_ = 0;
  size_t size_ = 0;
};

}  // namespace hpack

#endif  // HPACK_FIELD_INDEX_H_
