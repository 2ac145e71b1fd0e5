#include "hpack/static_table.h"

#include <array>

namespace hpack {
namespace {

using static_table_internal::kStaticEntries;
using static_table_internal::kStaticTableSize;

// A power of two, more than twice the 52 distinct names.
constexpr size_t kSlots = 128;
constexpr size_t kSlotMask = kSlots - 1;

// Open addressing with linear probing: slot -> first index of a name, 0 when
// empty.
constexpr std::array<uint8_t, kSlots> BuildNameSlots() {
  std::array<uint8_t, kSlots> slots{};
  for (size_t i = 1; i <= kStaticTableSize; ++i) {
    if (kStaticEntries[i].name == kStaticEntries[i - 1].name) continue;
    size_t s = HashString(kStaticEntries[i].name) & kSlotMask;
    while (slots[s] != 0) s = (s + 1) & kSlotMask;
    slots[s] = static_cast<uint8_t>(i);
  }
  return slots;
}

constexpr std::array<uint8_t, kSlots> kNameSlots = BuildNameSlots();

}  // namespace

size_t StaticTable::FindName(std::string_view name, uint64_t name_hash) {
  size_t s = name_hash & kSlotMask;
  while (true) {
    const size_t i = kNameSlots[s];
    if (i == 0) return 0;
    if (BytesEqual(kStaticEntries[i].name, name)) return i;
    s = (s + 1) & kSlotMask;
  }
}

}  // namespace hpack
