// hpack::Encoder: RFC 7541 header block encoding.
//
// Strategy (the general path; the answer cache below only replays its
// answers):
//  * A field equal to a static table entry, or to a dynamic one, is sent as
//    an index (1 octet for the static table and the 65 newest dynamic
//    entries). An index_name_only field (below) is the exception: it is
//    compared only with the static table and with the newest dynamic entry of
//    its name (no hash of its value), so when it equals an older dynamic
//    entry it is sent as a literal, not an index.
//  * Sensitive fields are sent as "literal never indexed" (RFC 7541
//    section 6.2.3), never entering any table: those the caller marks
//    (HeaderField::sensitive), `authorization`, `proxy-authorization`, and
//    `cookie` values shorter than 20 octets (short enough to be guessed by
//    compression side channels; RFC 7541 section 7.1.3).
//  * A field the caller marks HeaderField::index_name_only (its value changes
//    from block to block) whose name has an index is sent as "literal without
//    indexing" with that index (RFC 7541 section 6.2.2): the table does not
//    change, so the answer cache below keeps hitting for the other fields.
//  * Every other field is sent as "literal with incremental indexing" so its
//    next occurrence is an index (repeated fields, `:path` included, cost one
//    octet from then on), unless the indexing policy below says its value
//    will not come back in time. Fields whose entry would take more than
//    3/4 of the table are sent without indexing, so one huge value does not
//    flush the whole table.
//  * Indexing policy (ShouldIndex): each such literal is classified as a
//    repeat (the same name and value went out as a literal while fewer than
//    max_size() octets have been inserted since: had it been indexed then, it
//    would still be in the table) or fresh. Per name, over about its last 64
//    literals, a name whose literals were repeats less than a threshold of
//    the time (dates, content-length, unique paths, changing cookies) has
//    its fresh values sent "without indexing" (name indexed), so they do not
//    evict entries that do come back; a repeat is always indexed (its third
//    occurrence is an index). The first 16 literals of every name are
//    indexed. "Within the table's reach" (capped at 256 KiB) makes the rule
//    follow the table size, and so does the threshold, measured: 50% below
//    512 octets (a slot is dear), 15% from 512 on.
//    State: 256 field slots and 256 name slots, direct-mapped (2 KiB,
//    constant per connection), updated only on this path.
//  * Names come from the table when possible (static first: its indexes are
//    shorter).
//  * Each string is Huffman-coded only when that is strictly shorter: it is
//    Huffman-coded straight into the output, bounded to one octet less than
//    the raw length, and the length prefix is filled in afterwards; when the
//    bound is hit the raw octets are written instead.
//  * Lookups hash each name and value once (string_hash.h) and probe the
//    static table and the dynamic table's two hash maps; a hit is confirmed
//    by comparing bytes.
//  * When the peer's SETTINGS_HEADER_TABLE_SIZE changes, the next block
//    starts with the table size update(s): the smallest size reached since
//    the previous block when it is below the current size (RFC 7541
//    section 4.2), then the final one.
//
// Answer cache: a field at the same position as in the previous block, with
// the same bytes as the entry the general path sent there as a one-octet
// index, gets that index again without hashing or probing: a static entry's
// always, a dynamic entry's as long as the table has not changed since
// (Options::cache_answers; encoder_test's AnswerCacheEqualsTheGeneralPath
// holds both byte-identical).
//
// Output. EncodeBlock() writes the block into a buffer the encoder owns and
// reuses, and returns a view of it (valid until the next call to a non-const
// method). The block is produced once and never re-encoded: the transport
// copies it into its output buffer (AppendBlock() does exactly that for a
// std::string), or, when the block exceeds the peer's SETTINGS_MAX_FRAME_SIZE,
// takes it NextChunk() at a time and writes each chunk after its own HEADERS /
// CONTINUATION frame header. Chunks are views, so splitting costs no copy
// either. (Encoding straight into the transport's buffer would save the one
// copy of a typically 10-100 octet block, at the price of re-encoding or moving
// it whenever a frame boundary falls inside; views keep both simple.)
//
// Names must already be lowercase (HTTP/2 requires it; see ToLowerAscii in
// field_validation.h). The encoder does not validate fields: that is the job of
// whoever accepts them from users. Steady state (repeated fields, output buffer
// grown) allocates nothing.

#ifndef HPACK_ENCODER_H_
#define HPACK_ENCODER_H_

#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <memory>
#include <string>
#include <string_view>

#include "hpack/dynamic_table.h"
#include "hpack/header_list.h"
#include "hpack/string_hash.h"

namespace hpack {

class Encoder {
 public:
  struct Options {
    // The largest dynamic table this encoder uses, whatever the peer allows: it
    // bounds the encoder's memory (about 3x this). The table starts at
    // min(this, 4096).
    uint32_t max_table_size = DynamicTable::kDefaultMaxSize;
    // False: never Huffman-code (for tests and comparisons).
    bool use_huffman = true;
    // False: always take the general lookup path (tests hold the answer
    // cache equal to it).
    bool cache_answers = true;
  };

  Encoder();
  explicit Encoder(const Options& options);

  // Neither copyable nor movable (nothing moves one: each lives in its
  // connection). The member-wise move it had copied the answer cache's
  // unwritten, indeterminate entries, and left the moved-from encoder with
  // its cache and output capacity but no buffer: its next block stored
  // through a null pointer.
  Encoder(const Encoder&) = delete;
  Encoder& operator=(const Encoder&) = delete;

  // The peer's SETTINGS_HEADER_TABLE_SIZE, each time a SETTINGS frame carries
  // it (the initial value is the protocol default, 4096). The encoder uses
  // min(size, options.max_table_size) from the next block on, which starts with
  // the update(s).
  void SetPeerMaxTableSize(uint32_t size);

  // Encodes one header block and returns it. The view points into the encoder's
  // buffer and stays valid until the next call to a non-const method.
  std::string_view EncodeBlock(const HeaderField* fields, size_t count);
  std::string_view EncodeBlock(std::initializer_list<HeaderField> fields) {
    return EncodeBlock(fields.begin(), fields.size());
  }
  // Any range of HeaderField (std::vector<HeaderField>, HeaderList, ...).
  // Range is iterated twice while the table has no storage (see
  // ReserveTable): fine for containers, not for single-pass ranges.
  template <typename Range>
  std::string_view EncodeBlock(const Range& fields) {
    using std::begin;
    using std::end;
    return EncodeFields(begin(fields), end(fields));
  }

  // EncodeBlock, then appends the block to *out (reusing its capacity).
  template <typename Range>
  void AppendBlock(const Range& fields, std::string* out) {
    const std::string_view block = EncodeBlock(fields);
    out->append(block.data(), block.size());
  }
  void AppendBlock(std::initializer_list<HeaderField> fields,
                   std::string* out) {
    const std::string_view block = EncodeBlock(fields);
    out->append(block.data(), block.size());
  }

  // Splits a block into frame payloads: returns the first min(max_octets,
  // rest->size()) octets of *rest and removes them from it. Call until
  // rest->empty(); max_octets >= 1.
  static std::string_view NextChunk(std::string_view* rest, size_t max_octets) {
    const std::string_view chunk = rest->substr(0, max_octets);
    rest->remove_prefix(chunk.size());
    return chunk;
  }

  // The encoder's view of the peer's dynamic table (lookup enabled).
  const DynamicTable& table() const { return table_; }

 private:
  void BeginBlock();
  static uint64_t EntryOctets(const HeaderField& f) {
    return uint64_t{f.name.size()} + f.value.size() +
           DynamicTable::kEntryOverhead;
  }
  // The first insertion (the table has no storage yet) reserves room for its
  // whole block at once: octets (block_octets_), rounded up to
  // DynamicTable::kMinCapacity and capped at the max size. One allocation
  // instead of doubling from kMinCapacity while the block is encoded (each
  // step reallocates, moves the entries and rebuilds both hash maps); blocks
  // that insert nothing allocate nothing. Later blocks grow the table as it
  // needs.
  void ReserveTable(uint64_t octets);
  // Until the table has storage, each block sums its ReserveOctets for the
  // first insertion; a table of size 0 never gets any, so its blocks skip
  // the sum.
  bool NeedsReserve() const {
    return table_.capacity() == 0 && table_.max_size() != 0;
  }
  // f's RFC size unless it certainly stays out of the table (sensitive, or
  // over 3/4 of it), else 0. Static matches and the other never-indexed
  // kinds are counted, so the reservation may exceed what the block inserts:
  // telling them apart takes a static table lookup per field, which made
  // cold encodes 10-13% slower (callgrind, hpack/README.md).
  static uint64_t ReserveOctets(const HeaderField& f, uint32_t max_size) {
    const uint64_t entry_size = EntryOctets(f);
    return f.sensitive || !FitsTable(entry_size, max_size) ? 0 : entry_size;
  }
  // The 3/4 rule (encoder.h's strategy): whether such an entry may go in.
  static bool FitsTable(uint64_t entry_size, uint32_t max_size) {
    return entry_size * 4 <= uint64_t{max_size} * 3;
  }
  template <typename It>
  std::string_view EncodeFields(It first, It last) {
    BeginBlock();
    if (NeedsReserve()) {
      block_octets_ = 0;
      for (It it = first; it != last; ++it) {
        block_octets_ += ReserveOctets(*it, table_.max_size());
      }
    }
    while (true) {
      // Checked here so a block with no answers to reuse (a cold one) does
      // not call the run per field.
      if (field_pos_ < answers_valid_) first = EncodeCachedRun(first, last);
      if (first == last) break;
      EncodeFieldGeneral(*first, field_pos_++);
      ++first;
    }
    return EndBlock();
  }
  // Sends the fields from `first` on while the answer cache hits (one octet
  // each); returns the first that misses, or `last`. Works on locals: a store
  // through the uint8_t output may alias any member, so members read in the
  // loop would be reloaded after every octet. Both lengths are compared
  // before either BytesEqual (which compares them again; inline, that test
  // folds away): letting BytesEqual's own compare go first measured 1,559
  // Ir for EncodeRequestSteadyState against 1,539. `pos != capacity` is
  // live: a general field leaves only its bound's slack free, and the run
  // after it may be longer (the run stops; the general path grows the
  // buffer).
  template <typename It>
  It EncodeCachedRun(It first, It last) {
    size_t field_pos = field_pos_;
    const size_t valid = answers_valid_;
    const bool dynamic_valid = answers_version_ == table_.version();
    uint8_t* const buf = buf_.get();
    const size_t capacity = capacity_;
    size_t pos = pos_;
    for (; first != last && field_pos < valid && pos != capacity;
         ++first, ++field_pos) {
      const HeaderField& f = *first;
      const Answer& a = answers_[field_pos];
      if (a.octet == 0 || f.sensitive ||
          (a.octet >= 0x80 + kFirstDynamicIndex && !dynamic_valid) ||
          f.name.size() != a.name_len || f.value.size() != a.value_len ||
          !BytesEqual(f.name, std::string_view(a.name, a.name_len)) ||
          !BytesEqual(f.value, std::string_view(a.value, a.value_len))) {
        break;
      }
      buf[pos++] = a.octet;
    }
    pos_ = pos;
    field_pos_ = field_pos;
    return first;
  }
  void EncodeFieldGeneral(const HeaderField& field, size_t field_pos);
  std::string_view EndBlock() {
    // The dynamic answers hold while the table is still at the version this
    // block started with. If the block changed it, they may be stale, and
    // table_.version() has already moved past that version for good (it only
    // grows), so the next run finds them invalid.
    answers_version_ = block_start_version_;
    if (cache_answers_) {
      answers_valid_ = static_cast<uint32_t>(
          field_pos_ < kCachedFields ? field_pos_ : kCachedFields);
    }
    return std::string_view(reinterpret_cast<const char*>(buf_.get()), pos_);
  }
  // The indexing policy (encoder.h's strategy) for a field about to be sent
  // as a literal that could be indexed: true to index it. Updates the
  // statistics it reads.
  bool ShouldIndex(uint64_t name_hash, uint64_t field_hash);
  void EmitSizeUpdate(uint32_t size);
  // Literal representation: `high_bits` and `prefix_bits` of the first octet,
  // the name's table index (0: literal name).
  void EmitLiteral(uint8_t high_bits, int prefix_bits, size_t name_index,
                   std::string_view name, std::string_view value);
  uint8_t* EncodeString(std::string_view s, uint8_t* out) const;
  void EnsureRoom(size_t n) {
    if (capacity_ - pos_ < n) Grow(pos_ + n);
  }
  void Grow(size_t needed);

  DynamicTable table_;
  uint32_t max_table_size_;
  bool use_huffman_;
  bool cache_answers_;

  // The answer cache: EncodeField's one-octet index answers, by field
  // position in the block. answers_[i] holds the previous block's field i:
  // the index the general path sent for it (0: it sent something else) and
  // the bytes of the entry that index names (a static entry's, or the
  // dynamic table's own copy), so a hit costs two length compares and two
  // BytesEqual (inline up to 48 octets, memcmp above). A static answer
  // (index < 62) holds whatever the dynamic table does. The general path
  // looks in the dynamic table first (the newest entry with the name, then
  // its value), but no dynamic entry ever equals a static one: a field is
  // inserted only after the static table was searched for it and had no full
  // match (the paths that skip that search, a dynamic hit and the
  // never-indexed kinds, insert nothing). So for a field equal to a static
  // entry the dynamic lookup misses, and the general path sends that static
  // index again. A dynamic answer is used only while the table is unchanged
  // since it was filled (answers_version_ == table_.version(), and the block
  // that filled it changed nothing), so the general path would find the same
  // entry and its bytes are still where a.name and a.value point. Sensitive
  // fields never hit (the general path sends them as literals).
  struct Answer {
    const char* name;
    const char* value;
    uint32_t name_len;
    uint32_t value_len;
    // The index's one-octet representation, 0x80 | 1..126; 0: no answer.
    uint8_t octet;
  };
  static void SetAnswer(Answer* a, size_t index, std::string_view name,
                        std::string_view value) {
    *a = Answer{name.data(), value.data(), static_cast<uint32_t>(name.size()),
                static_cast<uint32_t>(value.size()),
                static_cast<uint8_t>(0x80 | index)};
  }
  static constexpr size_t kCachedFields = 64;
  // HPACK index of dynamic position 0 (static table size + 1).
  static constexpr size_t kFirstDynamicIndex = 62;
  // Only answers that are one-octet indexes (62 + position < 127) are kept.
  static constexpr size_t kCachedMaxPosition = 127 - kFirstDynamicIndex;
  // answers_[0, answers_valid_) are filled: the previous block's field count
  // (capped), 0 while the cache is off. Entries past it are never read (nor
  // copied: the encoder does not move), so a new encoder does not zero the
  // 2 KiB array; of an entry whose octet is 0 only the octet is read.
  Answer answers_[kCachedFields];
  uint32_t answers_valid_ = 0;
  // table_.version() when the block that filled answers_ started: equal to it
  // again only while nothing changed since, so the dynamic answers hold.
  uint64_t answers_version_ = ~uint64_t{0};
  uint64_t block_start_version_ = 0;
  size_t field_pos_ = 0;  // Position of the next field in the block.
  // The sum of the block's ReserveOctets while the table has no storage.
  uint64_t block_octets_ = 0;

  // The indexing policy's state: fixed-size, 2 KiB, nothing per connection
  // beyond it (direct-mapped by hash; a collision replaces the slot and only
  // costs compression). Small on purpose: a new encoder zeroes it.
  // A field sent as a literal: a 16-bit tag of its hash, and
  // inserted_octets_ / 8 then (wrapping every 512 KiB inserted).
  struct SeenField {
    uint16_t tag = 0;  // 0: empty (tags have the low bit set).
    uint16_t inserted_units = 0;
  };
  // Per name, over about its last kNameWindow literals: how many were fresh
  // values, how many repeated one seen within the table's reach.
  struct NameStats {
    uint16_t tag = 0;
    uint8_t fresh = 0;
    uint8_t repeats = 0;
  };
  static constexpr size_t kSeenSlots = 256;
  static constexpr size_t kNameSlots = 256;
  static constexpr uint32_t kNameWindow = 64;  // Both counts halve past it.
  static constexpr uint32_t kMinNameSamples = 16;
  // The repeat test's reach, in 8-octet units: half the 16-bit range, so a
  // distance past it is fresh rather than wrapped into a repeat.
  static constexpr uint32_t kMaxReach = 0x7fff;
  SeenField seen_[kSeenSlots];
  NameStats names_[kNameSlots];
  // RFC sizes of every entry this encoder inserted (wrapping).
  uint32_t inserted_octets_ = 0;

  // Table size the peer's decoder currently has (as last signaled, or the
  // initial 4096).
  uint32_t announced_size_ = DynamicTable::kDefaultMaxSize;
  // Pending change: the size to end up at, and the smallest size since the last
  // block.
  bool update_pending_ = false;
  uint32_t target_size_ = 0;
  uint32_t min_target_size_ = 0;

  std::unique_ptr<uint8_t[]> buf_;
  size_t capacity_ = 0;
  size_t pos_ = 0;
};

}  // namespace hpack

#endif  // HPACK_ENCODER_H_
