#include "hpack/header_list.h"

#include <algorithm>

namespace hpack {

HeaderList& HeaderList::operator=(const HeaderList& other) {
  if (this == &other) return *this;
  clear();
  Reserve(other.size(), other.arena_size_);
  if (other.arena_size_ > 0) {
    std::memcpy(arena_.get(), other.arena_.get(), other.arena_size_);
  }
  if (other.num_records_ > 0) {
    std::memcpy(records_.get(), other.records_.get(),
                other.num_records_ * sizeof(Record));
  }
  num_records_ = other.num_records_;
  arena_size_ = other.arena_size_;
  return *this;
}

void HeaderList::Reserve(size_t fields, size_t bytes) {
  if (fields > records_capacity_) ReserveRecords(fields);
  if (bytes > arena_capacity_) GrowArena(arena_size_, bytes);
}

void HeaderList::GrowArena(size_t used, size_t needed) {
  const size_t capacity = std::max({needed, 2 * arena_capacity_, size_t{256}});
  std::unique_ptr<char[]> arena(
      new char[capacity]);  // Uninitialized on purpose.
  if (used > 0) std::memcpy(arena.get(), arena_.get(), used);
  arena_ = std::move(arena);
  arena_capacity_ = capacity;
}

void HeaderList::ReserveRecords(size_t fields) {
  std::unique_ptr<Record[]> records(new Record[fields]);
  if (num_records_ > 0) {
    std::memcpy(records.get(), records_.get(), num_records_ * sizeof(Record));
  }
  records_ = std::move(records);
  records_capacity_ = fields;
}

bool operator==(const HeaderList& a, const HeaderList& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    const HeaderField x = a[i];
    const HeaderField y = b[i];
    if (x.name != y.name || x.value != y.value || x.sensitive != y.sensitive ||
        x.index_name_only != y.index_name_only) {
      return false;
    }
  }
  return true;
}

}  // namespace hpack
