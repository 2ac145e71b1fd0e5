// HeaderField and HeaderList: the fields of one header block, as the decoder
// produces them and the encoder consumes them.
//
// A HeaderList keeps every name and value in one byte arena, back to back, and
// a vector of (offset, lengths) records. clear() keeps both allocations, so
// decoding block after block into the same list allocates nothing once the list
// has grown to the largest block seen. Views returned by the list stay valid
// until the list is next modified.

#ifndef HPACK_HEADER_LIST_H_
#define HPACK_HEADER_LIST_H_

#include <algorithm>
#include <cassert>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <iterator>
#include <memory>
#include <string_view>
#include <utility>

namespace hpack {

struct HeaderField {
  std::string_view name;
  std::string_view value;
  // Encoder input: never add this field to any table, and send it as "never
  // indexed" (RFC 7541 section 6.2.3) so intermediaries do not either. Decoder
  // output: the field arrived as "never indexed" (a proxy must re-encode it the
  // same way, RFC 7541 section 7.1.3).
  bool sensitive = false;
  // Encoder input: the value changes from block to block (a timeout, a
  // request id), so indexing it would only churn the table. Once a table has
  // the name, the field is sent as "literal without indexing" (RFC 7541
  // section 6.2.2) naming that entry: the table stays as it is, and with it the
  // indexes of the fields that do repeat. (The first occurrence of a name not
  // in the static table is indexed as usual, so the name gets an index.)
  // Ignored by the decoder, never set by it.
  bool index_name_only = false;
};

namespace internal {

// 16 <= n <= 32 octets: two overlapping 16-octet moves, inline (reads exactly
// [src, src + n), writes exactly [dst, dst + n)). The list's copies and the
// dynamic table's adjacent name + value share it.
__attribute__((always_inline)) inline void Copy16To32(char* dst,
                                                      const char* src,
                                                      size_t n) {
  char head[16];
  char tail[16];
  std::memcpy(head, src, 16);
  std::memcpy(tail, src + n - 16, 16);
  std::memcpy(dst, head, 16);
  std::memcpy(dst + n - 16, tail, 16);
}

}  // namespace internal

class HeaderList {
 public:
  // RFC 9113 section 6.5.2: a field counts name + value + 32 octets towards the
  // header list size (SETTINGS_MAX_HEADER_LIST_SIZE).
  static constexpr size_t kFieldOverhead = 32;
  // See Appender::AppendPadded.
  static constexpr size_t kPaddedCopy = 32;

  HeaderList() = default;
  HeaderList(const HeaderList& other) { *this = other; }
  HeaderList& operator=(const HeaderList& other);
  // A moved-from list is empty, with no storage.
  HeaderList(HeaderList&& other) noexcept { *this = std::move(other); }
  HeaderList& operator=(HeaderList&& other) noexcept {
    arena_ = std::move(other.arena_);
    arena_size_ = std::exchange(other.arena_size_, 0);
    arena_capacity_ = std::exchange(other.arena_capacity_, 0);
    octets_copied_ = std::exchange(other.octets_copied_, 0);
    records_ = std::move(other.records_);
    num_records_ = std::exchange(other.num_records_, 0);
    records_capacity_ = std::exchange(other.records_capacity_, 0);
    return *this;
  }

  size_t size() const { return num_records_; }
  bool empty() const { return num_records_ == 0; }

  // Field i, 0 <= i < size() (unchecked).
  HeaderField operator[](size_t i) const {
    const Record& r = records_[i];
    const char* p = arena_.get() + r.offset;
    return HeaderField{std::string_view(p, r.name_len),
                       std::string_view(p + r.name_len, r.value_len),
                       (r.flags & kSensitive) != 0,
                       (r.flags & kIndexNameOnly) != 0};
  }

  // The RFC 9113 header list size: sum over the fields of name + value + 32.
  // The arena holds exactly the fields' names and values, back to back, so
  // this is computed, not kept (one store less per appended field).
  size_t header_list_size() const {
    return arena_size_ + num_records_ * kFieldOverhead;
  }

  // Removes every field; keeps the storage.
  void clear() {
    num_records_ = 0;
    arena_size_ = 0;
    octets_copied_ = 0;
  }

  // Appends a field, copying its bytes (grows the storage if needed). `name`
  // and `value` must not point into this list.
  void Append(std::string_view name, std::string_view value,
              bool sensitive = false) {
    AppendWithFlags(name, value, sensitive ? kSensitive : 0u);
  }
  // The same for a whole field, its flags (sensitive, index_name_only)
  // included: a copy encodes as the original does.
  void Append(const HeaderField& field) {
    AppendWithFlags(field.name, field.value,
                    (field.sensitive ? kSensitive : 0u) |
                        (field.index_name_only ? kIndexNameOnly : 0u));
  }

  // Grows the storage to hold `fields` fields of `bytes` name and value octets
  // in total.
  void Reserve(size_t fields, size_t bytes);

  // Octets of names and values currently held, and the arena's capacity.
  size_t arena_size() const { return arena_size_; }
  size_t arena_capacity() const { return arena_capacity_; }
  // The memory the list holds: the arena and the field records.
  size_t capacity_bytes() const {
    return arena_capacity_ + records_capacity_ * sizeof(Record);
  }
  // The work of filling the list since the last clear(): octets the arena was
  // asked to take, for kept fields and for scratch (a literal decoded and then
  // not kept; a Huffman string counts its bound, 8/5 of its encoded length).
  // Decoder::Decode clears the list first, so this is one block's copying: an
  // HPACK bomb's references past the list size limit add nothing.
  size_t octets_copied() const { return octets_copied_; }

  // Forward iteration over the fields, in order.
  class const_iterator {
   public:
    using iterator_category = std::forward_iterator_tag;
    using value_type = HeaderField;
    using difference_type = std::ptrdiff_t;
    using pointer = void;
    using reference = HeaderField;

    const_iterator(const HeaderList* list, size_t i) : list_(list), i_(i) {}
    HeaderField operator*() const { return (*list_)[i_]; }
    const_iterator& operator++() {
      ++i_;
      return *this;
    }
    const_iterator operator++(int) {
      const_iterator old = *this;
      ++i_;
      return old;
    }
    bool operator==(const const_iterator& o) const { return i_ == o.i_; }
    bool operator!=(const const_iterator& o) const { return i_ != o.i_; }

   private:
    const HeaderList* list_;
    size_t i_;
  };
  const_iterator begin() const { return const_iterator(this, 0); }
  const_iterator end() const { return const_iterator(this, size()); }

 private:
  friend class Decoder;

  // Record::flags bits: HeaderField's sensitive and index_name_only.
  static constexpr uint32_t kSensitive = 1;
  static constexpr uint32_t kIndexNameOnly = 2;

  struct Record {
    uint32_t offset;
    uint32_t name_len;
    uint32_t value_len;
    uint32_t flags;  // kSensitive | kIndexNameOnly.
  };

  void AppendWithFlags(std::string_view name, std::string_view value,
                       uint32_t flags) {
    const size_t n = name.size() + value.size();
    char* p = EnsureArena(arena_size_, n) + arena_size_;
    CopyBytes(p, name.data(), name.size());
    CopyBytes(p + name.size(), value.data(), value.size());
    AddRecord(arena_size_, name.size(), value.size(), flags);
  }

  // Returns the arena's base address after making sure [0, used + n) fits,
  // preserving the first `used` octets (which may include scratch beyond
  // arena_size()).
  char* EnsureArena(size_t used, size_t n) {
    octets_copied_ += n;
    if (arena_capacity_ - used < n) GrowArena(used, used + n);
    return arena_.get();
  }
  void GrowArena(size_t used, size_t needed);
  // GrowArena, returning the new capacity.
  size_t GrowArenaTo(size_t used, size_t needed) {
    GrowArena(used, needed);
    return arena_capacity_;
  }
  void GrowRecords() { ReserveRecords(2 * records_capacity_ + 16); }
  void ReserveRecords(size_t fields);

  // Copies n octets, reading exactly [src, src + n) and writing exactly
  // [dst, dst + n) (no slack needed on either side). Names and many values
  // are at most 16 octets, and many name + value pairs (a dynamic entry is
  // copied in one piece) at most 32: those take two overlapping 16-, 8-, 4-
  // or 1-octet moves instead of a call to memcpy (about 20 Ir with the
  // call). The ranges must not overlap.
  static void CopyBytes(char* dst, const char* src, size_t n) {
    if (n > 32) {
      std::memcpy(dst, src, n);
    } else if (n > 16) {
      internal::Copy16To32(dst, src, n);
    } else if (n >= 8) {
      uint64_t head;
      uint64_t tail;
      std::memcpy(&head, src, 8);
      std::memcpy(&tail, src + n - 8, 8);
      std::memcpy(dst, &head, 8);
      std::memcpy(dst + n - 8, &tail, 8);
    } else if (n >= 4) {
      uint32_t head;
      uint32_t tail;
      std::memcpy(&head, src, 4);
      std::memcpy(&tail, src + n - 4, 4);
      std::memcpy(dst, &head, 4);
      std::memcpy(dst + n - 4, &tail, 4);
    } else if (n > 0) {
      // 1-3 octets: first, middle, last (some coincide).
      const char a = src[0];
      const char b = src[n >> 1];
      const char c = src[n - 1];
      dst[0] = a;
      dst[n >> 1] = b;
      dst[n - 1] = c;
    }
  }
  char* arena_data() { return arena_.get(); }

  // Records a field whose name starts at arena `offset` and whose value follows
  // it, and makes the arena end after the value. `flags`: kSensitive,
  // kIndexNameOnly.
  void AddRecord(size_t offset, size_t name_len, size_t value_len,
                 uint32_t flags) {
    // One predictable compare, then four stores through a pointer.
    if (num_records_ == records_capacity_) GrowRecords();
    Record& r = records_[num_records_++];
    r.offset = static_cast<uint32_t>(offset);
    r.name_len = static_cast<uint32_t>(name_len);
    r.value_len = static_cast<uint32_t>(value_len);
    r.flags = flags;
    arena_size_ = offset + name_len + value_len;
  }

  // The list's append state held in locals for the decoder's loop: a char
  // store into the arena may alias any member of the list, so appending
  // through the members reloads and stores them per field; an Appender that
  // lives in a register-allocated local (its address never taken) keeps them
  // in registers and writes them back once, in Commit(). While an Appender is
  // live the list itself must not be touched; scratch octets (see
  // octets_copied()) are counted as they are asked for. The records for
  // `max_fields` more fields are reserved up front, so appending a field
  // checks only the arena's room.
  class Appender {
   public:
    Appender(HeaderList* list, size_t max_fields)
        : list_(list),
          arena_(list->arena_.get()),
          size_(list->arena_size_),
          capacity_(list->arena_capacity_) {
      const size_t want = list->num_records_ + max_fields;
      if (want > list->records_capacity_) {
        list->ReserveRecords(std::max(want, 2 * list->records_capacity_));
      }
      record_ = list->records_.get() + list->num_records_;
#ifndef NDEBUG
      records_end_ = list->records_.get() + want;
#endif
    }

    // Octets of kept names and values.
    size_t size() const { return size_; }
    char* data() const { return arena_; }

    // As HeaderList::EnsureArena: the base after [0, used + n) fits.
    char* Ensure(size_t used, size_t n) {
      if (capacity_ - used < n) Grow(used, n);
      return arena_;
    }
    // Counts n octets of scratch towards octets_copied() (a kept field's
    // octets are counted by AddRecord).
    void CountScratch(size_t n) { scratch_ += n; }

    // As HeaderList::AddRecord at offset size(); at most max_fields times.
    void AddRecord(size_t name_len, size_t value_len, uint32_t flags) {
      assert(record_ < records_end_);
      record_->offset = static_cast<uint32_t>(size_);
      record_->name_len = static_cast<uint32_t>(name_len);
      record_->value_len = static_cast<uint32_t>(value_len);
      record_->flags = flags;
      ++record_;
      size_ += name_len + value_len;
    }
    // Appends a field whose name and value are adjacent at `bytes`, which
    // stays readable up to bytes + kPaddedCopy even when the field is shorter
    // (the decoder's static table and the dynamic table's ring pad for it).
    // Up to kPaddedCopy octets take one fixed 32-octet copy (two 16-octet
    // moves; the arena gets the slack), longer ones a memcpy.
    void AppendPadded(const char* bytes, size_t name_len, size_t value_len) {
      const size_t n = name_len + value_len;
      // Expected, so that the common copy falls through (laid out after the
      // longer one it cost a jump per indexed field: +8 Ir steady state).
      if (__builtin_expect(n <= kPaddedCopy, 1)) {
        CopyPaddedAt(size_, bytes);
      } else {
        std::memcpy(Ensure(size_, n) + size_, bytes, n);
      }
      AddRecord(name_len, value_len, 0);
    }

    // Copies the kPaddedCopy octets at `bytes` to arena position `pos`
    // (>= size(): scratch until a record takes it) with one fixed move.
    void CopyPaddedAt(size_t pos, const char* bytes) {
      char* dst = Ensure(pos, kPaddedCopy) + pos;
      char tmp[kPaddedCopy];
      std::memcpy(tmp, bytes, kPaddedCopy);
      std::memcpy(dst, tmp, kPaddedCopy);
    }

    // Writes the state back into the list.
    void Commit() {
      list_->octets_copied_ += size_ - list_->arena_size_ + scratch_;
      scratch_ = 0;
      list_->arena_size_ = size_;
      list_->num_records_ =
          static_cast<size_t>(record_ - list_->records_.get());
    }

   private:
    // Out of line; they take no pointer into the Appender (so it stays in
    // registers), and reload what they change.
    void Grow(size_t used, size_t n) {
      capacity_ = list_->GrowArenaTo(used, used + n);
      arena_ = list_->arena_.get();
    }
    HeaderList* list_;
    char* arena_;
    size_t size_;
    size_t capacity_;
    Record* record_;
#ifndef NDEBUG
    Record* records_end_;
#endif
    size_t scratch_ = 0;
  };

  std::unique_ptr<char[]> arena_;
  size_t arena_size_ = 0;
  size_t arena_capacity_ = 0;
  size_t octets_copied_ = 0;
  std::unique_ptr<Record[]> records_;  // Uninitialized past num_records_.
  size_t num_records_ = 0;
  size_t records_capacity_ = 0;
};

// Field-by-field equality (names, values and both flags).
bool operator==(const HeaderList& a, const HeaderList& b);
inline bool operator!=(const HeaderList& a, const HeaderList& b) {
  return !(a == b);
}

// The RFC 9113 section 6.5.2 header list size of `fields` (any range of
// HeaderField): what a peer's SETTINGS_MAX_HEADER_LIST_SIZE bounds.
template <typename Fields>
size_t HeaderListSize(const Fields& fields) {
  size_t n = 0;
  for (const HeaderField& f : fields) {
    n += f.name.size() + f.value.size() + HeaderList::kFieldOverhead;
  }
  return n;
}

}  // namespace hpack

#endif  // HPACK_HEADER_LIST_H_
