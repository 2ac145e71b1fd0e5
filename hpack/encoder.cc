#include "hpack/encoder.h"

#include <algorithm>
#include <cstring>

#include "hpack/huffman/huffman.h"
#include "hpack/static_table.h"
#include "hpack/string_hash.h"
#include "hpack/varint.h"

namespace hpack {
namespace {

constexpr size_t kFirstDynamicIndex = StaticTable::kSize + 1;  // 62
static_assert(kFirstDynamicIndex == 62, "Encoder::kFirstDynamicIndex");
// Cookies shorter than this are sent never-indexed (RFC 7541 section 7.1.3).
constexpr size_t kMinIndexedCookieLength = 20;
// Worst case of a field's representation beyond its name and value octets: the
// first octet's integer and two string length prefixes.
constexpr size_t kFieldOverheadBound = 3 * kMaxVarintEncodedLength;
// Two size updates (min, then final) at the start of a block.
constexpr size_t kSizeUpdatesBound = 2 * kMaxVarintEncodedLength;

// The indexing policy's threshold (encoder.h), in percent of repeats, by table
// size. Measured on hpack-test-case raw-data (hpack/README.md): below 512
// octets a fresh value is worth a slot only for names that repeat at least
// half the time (256: 646,507 octets against 662,288 at 15%); from 512 on 15%
// is the best tried.
uint32_t RepeatPercent(uint32_t max_size) { return max_size < 512 ? 50 : 15; }

}  // namespace

Encoder::Encoder() : Encoder(Options()) {}

Encoder::Encoder(const Options& options)
    : table_(std::min(options.max_table_size, DynamicTable::kDefaultMaxSize),
             /*enable_lookup=*/true),
      max_table_size_(options.max_table_size),
      use_huffman_(options.use_huffman),
      cache_answers_(options.cache_answers) {
  // The peer's decoder starts at 4096; if we use less, the first block says so.
  if (max_table_size_ < DynamicTable::kDefaultMaxSize) {
    SetPeerMaxTableSize(DynamicTable::kDefaultMaxSize);
  }
}

void Encoder::SetPeerMaxTableSize(uint32_t size) {
  const uint32_t target = std::min(size, max_table_size_);
  min_target_size_ =
      update_pending_ ? std::min(min_target_size_, target) : target;
  target_size_ = target;
  update_pending_ = true;
}

void Encoder::Grow(size_t needed) {
  const size_t capacity = std::max({needed, 2 * capacity_, size_t{1024}});
  std::unique_ptr<uint8_t[]> buf(
      new uint8_t[capacity]);  // Uninitialized on purpose.
  if (pos_ > 0) std::memcpy(buf.get(), buf_.get(), pos_);
  buf_ = std::move(buf);
  capacity_ = capacity;
}

void Encoder::EmitSizeUpdate(uint32_t size) {
  pos_ += EncodeVarint(size, 5, 0x20, buf_.get() + pos_);
  table_.SetMaxSize(size);
  announced_size_ = size;
}

void Encoder::BeginBlock() {
  pos_ = 0;
  field_pos_ = 0;
  block_start_version_ = table_.version();
  if (!update_pending_) return;
  update_pending_ = false;
  EnsureRoom(kSizeUpdatesBound);
  // RFC 7541 section 4.2: if the size went below the peer's current one, that
  // minimum must be signaled (the peer's decoder may insist on it); then the
  // final size, if different.
  if (min_target_size_ < announced_size_) EmitSizeUpdate(min_target_size_);
  if (target_size_ != announced_size_) EmitSizeUpdate(target_size_);
}

void Encoder::ReserveTable(uint64_t octets) {
  table_.Reserve(static_cast<uint32_t>(std::min<uint64_t>(
      table_.max_size(),
      std::max<uint64_t>(octets, DynamicTable::kMinCapacity))));
}

std::string_view Encoder::EncodeBlock(const HeaderField* fields, size_t count) {
  return EncodeFields(fields, fields + count);
}

void Encoder::EncodeFieldGeneral(const HeaderField& field, size_t field_pos) {
  const std::string_view name = field.name;
  const std::string_view value = field.value;
  // The slack lets the last string's Huffman coder store past its bound.
  EnsureRoom(name.size() + value.size() + kFieldOverheadBound +
             kHuffmanEncodeSlack);
  uint8_t* const out = buf_.get() + pos_;
  // The answer cache (encoder.h) missed: this field's answer is recomputed.
  const bool cacheable = cache_answers_ && field_pos < kCachedFields;
  Answer* const answer = cacheable ? &answers_[field_pos] : nullptr;
  if (answer != nullptr) answer->octet = 0;

  const uint64_t name_hash = HashString(name);
  // The newest dynamic entry with this name. When its value is equal too, it is
  // the newest entry equal to the field, the answer the name+value lookup below
  // would give: a repeated field costs one hash of its (short) name, one probe
  // and one comparison. (The dynamic table never holds a field equal to a
  // static entry or one of the never-indexed kinds: those are never inserted.)
  const long by_name = table_.FindName(name_hash, name);
  if (by_name >= 0 && !field.sensitive &&
      BytesEqual(table_.value(by_name), value)) {
    if (answer != nullptr &&
        static_cast<size_t>(by_name) < kCachedMaxPosition) {
      SetAnswer(answer, kFirstDynamicIndex + static_cast<size_t>(by_name),
                table_.name(by_name), table_.value(by_name));
    }
    pos_ += EncodeVarint(kFirstDynamicIndex + static_cast<size_t>(by_name), 7,
                         0x80, out);
    return;
  }

  const size_t static_index = StaticTable::FindName(name, name_hash);
  const size_t name_index =
      static_index != 0 ? static_index
      : by_name >= 0    ? kFirstDynamicIndex + static_cast<size_t>(by_name)
                        : 0;

  if (field.sensitive || static_index == StaticTable::kAuthorizationIndex ||
      static_index == StaticTable::kProxyAuthorizationIndex ||
      (static_index == StaticTable::kCookieIndex &&
       value.size() < kMinIndexedCookieLength)) {
    EmitLiteral(0x10, 4, name_index, name, value);
    return;
  }

  if (static_index != 0) {
    const size_t full = StaticTable::FindValue(static_index, value);
    if (full != 0) {
      // Static indexes are 1..61: one octet.
      if (answer != nullptr) {
        SetAnswer(answer, full, StaticTable::Get(full).name,
                  StaticTable::Get(full).value);
      }
      pos_ += EncodeVarint(full, 7, 0x80, out);
      return;
    }
  }
  if (field.index_name_only && name_index != 0) {
    EmitLiteral(0x00, 4, name_index, name, value);
    return;
  }
  const uint64_t field_hash = HashField(name_hash, HashString(value));
  // Some entry has the name: an older one may have the value.
  if (by_name >= 0) {
    const long dynamic = table_.FindField(field_hash, name, value);
    if (dynamic >= 0) {
      pos_ += EncodeVarint(kFirstDynamicIndex + static_cast<size_t>(dynamic), 7,
                           0x80, out);
      return;
    }
  }

  const uint64_t entry_size = EntryOctets(field);
  if (FitsTable(entry_size, table_.max_size()) &&
      ShouldIndex(name_hash, field_hash)) {
    EmitLiteral(0x40, 6, name_index, name, value);
    if (table_.capacity() == 0) ReserveTable(block_octets_);
    table_.InsertHashed(name, value, 0, name_hash, field_hash);
    inserted_octets_ += static_cast<uint32_t>(entry_size);
  } else {
    EmitLiteral(0x00, 4, name_index, name, value);
  }
}

bool Encoder::ShouldIndex(uint64_t name_hash, uint64_t field_hash) {
  // Was this field sent as a literal recently enough that, had it been
  // indexed then, it would still be in the table now (at most max_size()
  // octets inserted since, counted in 8-octet units)? A 16-bit wrap of the
  // units, or a tag collision, only costs a misjudged repeat. The reach is
  // capped at half the 16-bit range (256 KiB): for a larger table the test
  // would otherwise be true for every distance, wrapped or not.
  SeenField& seen = seen_[field_hash & (kSeenSlots - 1)];
  const uint16_t field_tag = static_cast<uint16_t>(field_hash >> 48) | 1u;
  const uint16_t units = static_cast<uint16_t>(inserted_octets_ >> 3);
  const uint32_t reach = std::min<uint32_t>(table_.max_size() >> 3, kMaxReach);
  const bool repeat =
      seen.tag == field_tag &&
      static_cast<uint16_t>(units - seen.inserted_units) <= reach;
  seen.tag = field_tag;
  seen.inserted_units = units;

  NameStats& stats = names_[(name_hash >> 7) & (kNameSlots - 1)];
  const uint16_t name_tag = static_cast<uint16_t>(name_hash >> 48) | 1u;
  if (stats.tag != name_tag) stats = NameStats{name_tag, 0, 0};
  ++(repeat ? stats.repeats : stats.fresh);
  if (uint32_t{stats.fresh} + stats.repeats > kNameWindow) {
    stats.fresh /= 2;
    stats.repeats /= 2;
  }
  if (repeat) return true;
  const uint32_t samples = uint32_t{stats.fresh} + stats.repeats;
  return samples <= kMinNameSamples ||
         uint32_t{stats.repeats} * 100 >=
             samples * RepeatPercent(table_.max_size());
}

void Encoder::EmitLiteral(uint8_t high_bits, int prefix_bits, size_t name_index,
                          std::string_view name, std::string_view value) {
  uint8_t* out = buf_.get() + pos_;
  out += EncodeVarint(name_index, prefix_bits, high_bits, out);
  if (name_index == 0) out = EncodeString(name, out);
  out = EncodeString(value, out);
  pos_ = static_cast<size_t>(out - buf_.get());
}

uint8_t* Encoder::EncodeString(std::string_view s, uint8_t* out) const {
  const size_t n = s.size();
  // The raw length prefix is at least as long as any shorter Huffman length's,
  // so the Huffman octets go after it and move down only if their own prefix is
  // shorter.
  const size_t raw_prefix = VarintLength(n, 7);
  if (use_huffman_ && n > 1) {
    // EnsureRoom keeps kHuffmanEncodeSlack octets past every field's bound.
    const size_t h = HuffmanEncodeBoundedWithSlack(s, out + raw_prefix, n - 1);
    if (h != 0) {
      const size_t prefix = VarintLength(h, 7);
      if (prefix != raw_prefix) std::memmove(out + prefix, out + raw_prefix, h);
      EncodeVarint(h, 7, 0x80, out);
      return out + prefix + h;
    }
  }
  EncodeVarint(n, 7, 0, out);
  if (n > 0) std::memcpy(out + raw_prefix, s.data(), n);
  return out + raw_prefix + n;
}

}  // namespace hpack
