#include "hpack/field_index.h"

#include <cstring>

namespace hpack {

void FieldIndex::Reset(size_t max_keys) {
  size_t slots = 8;
  while (slots < 2 * max_keys) slots *= 2;
  slots_.reset(new Slot[slots]);
  mask_ = slots - 1;
  Clear();
}

void FieldIndex::Clear() {
  if (!slots_) return;
  std::memset(slots_.get(), 0, (mask_ + 1) * sizeof(Slot));  // tag 0: empty.
  size_ = 0;
}

void FieldIndex::Insert(uint64_t hash, uint32_t id) {
  const uint32_t tag = Tag(hash);
  size_t s = tag & mask_;
  while (slots_[s].tag != 0) {
    if (slots_[s].tag == tag) {
      slots_[s].id = id;
      return;
    }
    s = (s + 1) & mask_;
  }
  slots_[s] = Slot{tag, id};
  ++size_;
}

void FieldIndex::Erase(uint64_t hash, uint32_t id) {
  if (size_ == 0) return;
  const uint32_t tag = Tag(hash);
  size_t s = tag & mask_;
  while (true) {
    if (slots_[s].tag == 0) return;
    if (slots_[s].tag == tag) break;
    s = (s + 1) & mask_;
  }
  if (slots_[s].id != id) return;
  // Backward-shift deletion: move later members of the probe run into the hole
  // when their home slot is not cyclically within (hole, their slot].
  size_t hole = s;
  size_t j = s;
  while (true) {
    j = (j + 1) & mask_;
    if (slots_[j].tag == 0) break;
    const size_t home = slots_[j].tag & mask_;
    const bool stays =
        (hole <= j) ? (hole < home && home <= j) : (hole < home || home <= j);
    if (!stays) {
      slots_[hole] = slots_[j];
      hole = j;
    }
  }
  slots_[hole] = Slot{0, 0};
  --size_;
}

}  // namespace hpack
