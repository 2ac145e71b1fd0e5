// The decoder's storage paths (HeaderList::Appender, the fixed 32-octet copy
// of short indexed fields, the per-block record reservation, the computed
// header list size): the bounds of every copy, the list after an error in
// the middle of a block, the RFC 9113 size accounting at the limit, and the
// reservation with extreme limits. Most of these pass silently on a wrong
// bound unless run under --config=asan (reads and writes past an allocation)
// or with assertions on (the record reservation's assert in Appender).

#include <algorithm>
#include <cstdint>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "gtest/gtest.h"
#include "hpack/decoder.h"
#include "hpack/huffman/huffman.h"
#include "hpack/static_table.h"
#include "hpack/test_util.h"

namespace hpack {
namespace {

using testing::Fields;
using testing::LiteralIndexed;
using testing::Str;
using testing::ToFields;
using testing::Varint;

// A Huffman-coded string literal.
std::string HuffStr(const std::string& s) {
  std::string out(HuffmanEncodedLength(s), '\0');
  HuffmanEncode(s, reinterpret_cast<uint8_t*>(&out[0]));
  return Varint(out.size(), 7, 0x80) + out;
}

// Literal without indexing, literal name.
std::string LiteralNotIndexed(const std::string& name,
                              const std::string& value) {
  return std::string(1, '\0') + Str(name) + Str(value);
}

// Octets of the fields' names and values, and their RFC 9113 size.
size_t Octets(const Fields& fields) {
  size_t n = 0;
  for (const auto& [name, value] : fields) n += name.size() + value.size();
  return n;
}
size_t ListSize(const Fields& fields) {
  return Octets(fields) + fields.size() * HeaderList::kFieldOverhead;
}

// The list is exactly `want`, and its sizes and counters agree with it.
void ExpectList(const HeaderList& list, const Fields& want) {
  EXPECT_EQ(ToFields(list), want);
  EXPECT_EQ(list.size(), want.size());
  EXPECT_EQ(list.arena_size(), Octets(want));
  EXPECT_EQ(list.header_list_size(), ListSize(want));
  EXPECT_GE(list.octets_copied(), list.arena_size());
  EXPECT_LE(list.arena_size(), list.arena_capacity());
}

// A name of n >= 1 valid octets and a value of m octets, each octet telling
// its position (so a copy from the wrong place or of the wrong length shows).
std::string Name(size_t n) {
  std::string s;
  for (size_t i = 0; i < n; ++i) s.push_back(static_cast<char>('a' + i % 26));
  return s;
}
std::string Value(size_t m) {
  std::string s;
  for (size_t i = 0; i < m; ++i) s.push_back(static_cast<char>('A' + i % 26));
  return s;
}

// --- Source bounds of the fixed 32-octet copy: the dynamic ring
// -------------------------------------------------------------------

// A dynamic entry of every length around the 32-octet copy, starting at every
// offset of the byte ring: the entries before it move the ring's tail to
// `offset`, so the entry ends anywhere up to the ring's last octet, or (not
// fitting) starts over at offset 0. It must never be split across the ring's
// end (its name and value are one run of octets: the fixed copy and the one
// memcpy read it so), and an indexed reference and a literal borrowing its
// name must copy exactly its octets. Tables of 256 (a 512-octet ring) and 100
// (a 256-octet ring with 4 records).
TEST(DecoderStorageTest, DynamicEntryAtEveryRingOffset) {
  for (const uint32_t table_size : {256u, 100u}) {
    const size_t ring = table_size == 256 ? 512 : 256;
    const size_t max_entry = table_size - DynamicTable::kEntryOverhead;
    // The fillers: at most this many octets each, so that each fits the table
    // and a run of them stays within the ring's first lap.
    const size_t filler_max = max_entry;
    std::vector<size_t> lengths;
    for (size_t n = 1; n <= 40; ++n) lengths.push_back(n);
    lengths.push_back(63);
    lengths.push_back(64);
    lengths.push_back(max_entry);
    for (const size_t n : lengths) {
      for (const size_t name_len : {size_t{1}, (n + 1) / 2, n}) {
        const std::string name = Name(name_len);
        const std::string value = Value(n - name_len);
        for (size_t offset = 0; offset < ring; ++offset) {
          Decoder::Options options;
          options.max_table_size = table_size;
          Decoder d(options);
          HeaderList list;
          // Fillers from ring offset 0 (the table's first insert sizes its
          // storage for max_size at once, so the ring stays where it is) up
          // to `offset`, then the entry.
          const char* base = nullptr;
          size_t left = offset;
          while (left > 0) {
            const size_t f = std::min(left, filler_max);
            ASSERT_EQ(
                d.Decode(LiteralIndexed("z", std::string(f - 1, 'z')), &list),
                DecodeError::kOk);
            if (base == nullptr) base = d.table().name(0).data();
            left -= f;
          }
          ASSERT_EQ(d.Decode(LiteralIndexed(name, value), &list),
                    DecodeError::kOk);
          ASSERT_EQ(d.table().capacity(), table_size);
          ASSERT_EQ(d.table().name(0), name);
          if (base == nullptr) base = d.table().name(0).data();
          const size_t at =
              static_cast<size_t>(d.table().name(0).data() - base);
          ASSERT_EQ(at, offset + n <= ring ? offset : 0)
              << table_size << " " << n << " " << offset;
          ASSERT_LE(at + n, ring);
          ASSERT_EQ(d.table().value(0).data(),
                    d.table().name(0).data() + name_len);
          // Indexed, a static one between, indexed again, then a literal that
          // borrows the entry's name.
          ASSERT_EQ(d.Decode("\xbe\x82\xbe\x0f\x2f" + Str("v"), &list),
                    DecodeError::kOk);
          const Fields want = {
              {name, value}, {":method", "GET"}, {name, value}, {name, "v"}};
          ExpectList(list, want);
          if (::testing::Test::HasFailure()) {
            FAIL() << table_size << " " << n << " " << name_len << " "
                   << offset;
          }
        }
      }
    }
  }
}

// --- Source bounds: the static slots
// -------------------------------------------------------------------

// Every static entry, alone and after a literal of every length up to 40
// (so the fixed copy lands at every arena alignment), is copied exactly.
TEST(DecoderStorageTest, EveryStaticEntryAfterEveryLiteralLength) {
  Decoder d;
  HeaderList list;
  for (size_t lit = 0; lit <= 40; ++lit) {
    std::string block = lit == 0 ? "" : LiteralNotIndexed("l", Value(lit - 1));
    Fields want;
    if (lit > 0) want.emplace_back("l", Value(lit - 1));
    for (uint32_t i = 1; i <= StaticTable::kSize; ++i) {
      block += Varint(i, 7, 0x80);
      const StaticEntry& e = StaticTable::Get(i);
      want.emplace_back(std::string(e.name), std::string(e.value));
    }
    ASSERT_EQ(d.Decode(block, &list), DecodeError::kOk);
    ExpectList(list, want);
  }
}

// --- Destination bounds: the arena
// -------------------------------------------------------------------

// The fixed copy writes 32 octets even for a shorter field: the arena must
// have them. A fresh list's arena is 256 octets; a literal fills it to 256 - k
// (k = 0..40), then a short static field, a short dynamic one and a 32-octet
// dynamic one each need room for the full 32 octets (under asan, a write past
// the arena is a heap-buffer-overflow).
TEST(DecoderStorageTest, ShortIndexedFieldAtTheArenaEnd) {
  Decoder d;
  HeaderList scratch;
  ASSERT_EQ(
      d.Decode(LiteralIndexed(Name(16), Value(16)) + LiteralIndexed("dk", "dv"),
               &scratch),
      DecodeError::kOk);
  for (size_t k = 0; k <= 40; ++k) {
    for (const char* field : {"\x82", "\xbe", "\xbf"}) {
      HeaderList list;
      const size_t fill = 256 - k;
      const std::string literal = LiteralNotIndexed("f", Value(fill - 1));
      ASSERT_EQ(d.Decode(literal, &list), DecodeError::kOk);
      ASSERT_EQ(list.arena_capacity(), 256u);  // Else the test proves nothing.
      list.clear();
      ASSERT_EQ(d.Decode(literal + field + field, &list), DecodeError::kOk);
      using Field = std::pair<std::string, std::string>;
      const Field f = field[0] == '\x82'   ? Field(":method", "GET")
                      : field[0] == '\xbe' ? Field("dk", "dv")
                                           : Field(Name(16), Value(16));
      ExpectList(list, {{"f", Value(fill - 1)}, f, f});
    }
  }
}

// --- The list after an error in the middle of a block
// -------------------------------------------------------------------

// Fields of every kind (static and dynamic indexed, literals with a static,
// dynamic and literal name, raw and Huffman, one long enough to grow the
// arena), then a connection error of every kind. The list holds exactly the
// fields before the error, with sizes that agree (the Appender's write-back
// on the error path), block_list_size() counts them, the error sticks, and the
// list, reused by another decoder, decodes the next block correctly. Before
// 4894e39 the decoder returned from the loop with the list's members updated
// field by field; the result must be the same.
TEST(DecoderStorageTest, ConnectionErrorMidBlockLeavesTheFieldsBeforeIt) {
  const std::string prefix =
      "\x82" + std::string("\xbe") +  // Static, then the dynamic entry.
      LiteralNotIndexed("x-lit", "v") + "\x04" + Str("/p") + "\x0f\x2f" +
      HuffStr("huffman value") + std::string(1, '\0') + HuffStr("x-huff") +
      Str(Value(1000));
  const Fields prefix_fields = {
      {":method", "GET"},      {"dk", "dv"},
      {"x-lit", "v"},          {":path", "/p"},
      {"dk", "huffman value"}, {"x-huff", Value(1000)}};
  struct Case {
    const char* what;
    std::string suffix;
    DecodeError error;
  };
  const std::vector<Case> cases = {
      {"index 0", "\x80", DecodeError::kIndexZero},
      {"indexed past the table", "\xc0", DecodeError::kIndexOutOfRange},
      {"name index past the table", "\x0f\x30" + Str("v"),
       DecodeError::kIndexOutOfRange},
      {"indexed name past the table, indexing", "\x7f\x02" + Str("v"),
       DecodeError::kIndexOutOfRange},
      {"bad Huffman padding in a name", std::string("\x00\x81\x00", 3),
       DecodeError::kHuffmanPaddingNotOnes},
      {"EOS in a value",
       LiteralNotIndexed("n", "").substr(0, 3) + "\x84\xff\xff\xff\xff",
       DecodeError::kHuffmanEos},
      {"bad Huffman in an indexed literal's value",
       "\x40" + Str("new-name") + std::string("\x81\x00", 2),
       DecodeError::kHuffmanPaddingNotOnes},
      {"size update after a field", "\x20",
       DecodeError::kTableSizeUpdateNotAtStart},
      {"name missing", std::string(1, '\0'), DecodeError::kTruncated},
      {"value missing", std::string(1, '\0') + Str("n"),
       DecodeError::kTruncated},
      {"name too long",
       std::string("\x00\x05"
                   "ab",
                   4),
       DecodeError::kStringTooLong},
      {"value too long", std::string(1, '\0') + Str("n") + "\x7f\x10" + "ab",
       DecodeError::kStringTooLong},
      {"value of a borrowed name too long",
       "\x0f\x2f\x05"
       "ab",
       DecodeError::kStringTooLong},
      {"index overflow", "\xff\xff\xff\xff\xff\xff",
       DecodeError::kIntegerOverflow},
      {"index truncated", "\xff\xff", DecodeError::kTruncated},
  };
  for (const size_t limit : {size_t{64} << 10, ListSize(prefix_fields)}) {
    for (const Case& c : cases) {
      SCOPED_TRACE(c.what);
      Decoder::Options options;
      options.max_header_list_size = limit;
      Decoder d(options);
      HeaderList list;
      ASSERT_EQ(d.Decode(LiteralIndexed("dk", "dv"), &list), DecodeError::kOk);
      // A field after the error (not after a truncation: it would complete
      // it), never read.
      const std::string after =
          c.error == DecodeError::kTruncated ? "" : "\x82";
      ASSERT_EQ(d.Decode(prefix + c.suffix + after, &list), c.error);
      ExpectList(list, prefix_fields);
      EXPECT_EQ(d.block_list_size(), ListSize(prefix_fields));
      // The same list, as the error left it, into another decoder: correct
      // from the first field.
      Decoder fresh(options);
      const std::string next = "\x82" + LiteralIndexed("dk", "dv") + "\xbe";
      ASSERT_EQ(fresh.Decode(next, &list), DecodeError::kOk);
      ExpectList(list, {{":method", "GET"}, {"dk", "dv"}, {"dk", "dv"}});
      // Sticky, reading nothing; the list is emptied.
      EXPECT_EQ(d.Decode(next, &list), c.error);
      ExpectList(list, {});
      EXPECT_EQ(d.block_list_size(), 0u);
    }
  }
}

// The same with fields dropped at the list size limit before the error: the
// connection error wins over the stream error, and the list holds the fields
// before the first one that did not fit.
TEST(DecoderStorageTest, ConnectionErrorAfterTheLimitWasReached) {
  // :method GET is 42: two fit in 100, the third does not.
  Decoder d(Decoder::Options{DynamicTable::kDefaultMaxSize, 100});
  HeaderList list;
  EXPECT_EQ(d.Decode("\x82\x82\x82" + LiteralIndexed("late", "entry") + "\x82" +
                         "\x80",
                     &list),
            DecodeError::kIndexZero);
  ExpectList(list, {{":method", "GET"}, {":method", "GET"}});
  EXPECT_EQ(d.block_list_size(), 4 * 42u + 4 + 5 + 32);
}

// Stream errors (the size limit, an invalid field) in the middle of a block:
// the block goes on, the list holds what the contract says, and the next
// block on the same decoder and list is decoded from a table in step.
TEST(DecoderStorageTest, StreamErrorMidBlockThenTheNextBlock) {
  Decoder d(Decoder::Options{DynamicTable::kDefaultMaxSize, 200});
  HeaderList list;
  // 42 + 42 + (4 + 100 + 32) = 220 > 200: the literal is dropped, but
  // indexed; the field after it would fit alone but is dropped too.
  EXPECT_EQ(
      d.Decode("\x82\x82" + LiteralIndexed("big1", Value(100)) + "\x82", &list),
      DecodeError::kHeaderListTooLarge);
  ExpectList(list, {{":method", "GET"}, {":method", "GET"}});
  EXPECT_EQ(d.block_list_size(), 42 * 3 + 136u);
  // An invalid name (kept, reported) and an entry to reference.
  EXPECT_EQ(d.Decode(LiteralIndexed("Bad", "x") + "\xbf", &list),
            DecodeError::kInvalidFieldName);
  ExpectList(list, {{"Bad", "x"}, {"big1", Value(100)}});
  // 36 + 42 + 136 > 200: big1 is dropped; the invalid name came first.
  EXPECT_EQ(d.Decode("\xbe\x82\xbf", &list), DecodeError::kInvalidFieldName);
  ExpectList(list, {{"Bad", "x"}, {":method", "GET"}});
  EXPECT_EQ(d.Decode("\xbf\x82", &list), DecodeError::kOk);
  ExpectList(list, {{"big1", Value(100)}, {":method", "GET"}});
}

// --- RFC 9113 section 6.5.2 accounting at the limit
// -------------------------------------------------------------------

// Each kind of field as the one that reaches the limit: exactly at the limit
// it is kept, one octet over it is not (nor any field after it, however
// small), and header_list_size() and block_list_size() are name + value + 32
// per field, as before 4894e39.
TEST(DecoderStorageTest, EveryFieldKindAtTheLimit) {
  struct Kind {
    const char* what;
    std::string wire;
    std::string name;
    std::string value;
  };
  const std::vector<Kind> kinds = {
      {"static indexed", "\x82", ":method", "GET"},
      {"static indexed, long", "\x94", "access-control-allow-origin", ""},
      {"dynamic indexed, 32 octets", "\xbf", Name(16), Value(16)},
      {"dynamic indexed, 33 octets", "\xbe", Name(16), Value(17)},
      {"dynamic indexed, short", "\xc0", "dk", "dv"},
      {"static name", "\x04" + Str("/path"), ":path", "/path"},
      {"dynamic name", "\x0f\x31" + Str("vv"), "dk", "vv"},
      {"literal name", LiteralNotIndexed("x-a", "b"), "x-a", "b"},
      {"literal name, indexing", LiteralIndexed("x-i", "bc"), "x-i", "bc"},
      {"huffman",
       std::string(1, '\0') + HuffStr("x-huff") + HuffStr("some value"),
       "x-huff", "some value"},
  };
  for (const Kind& k : kinds) {
    SCOPED_TRACE(k.what);
    const size_t field = k.name.size() + k.value.size() + 32;
    for (const size_t first : {size_t{0}, size_t{1}}) {
      const std::string lead = first ? "\x82" : "";
      const size_t lead_size = first ? 42 : 0;
      const size_t exact = lead_size + field;
      for (const size_t limit : {exact - 1, exact, exact + 1}) {
        Decoder d(Decoder::Options{DynamicTable::kDefaultMaxSize, limit});
        HeaderList list;
        const Fields setup = {
            {"dk", "dv"}, {Name(16), Value(16)}, {Name(16), Value(17)}};
        std::string setup_block;
        for (const auto& [name, value] : setup)
          setup_block += LiteralIndexed(name, value);
        ASSERT_EQ(d.Decode(setup_block, &list),
                  limit >= ListSize(setup) ? DecodeError::kOk
                                           : DecodeError::kHeaderListTooLarge);
        // The field, then the smallest field there is (42, but it cannot fit
        // either: the limit is reached).
        const DecodeError e = d.Decode(lead + k.wire + "\x82", &list);
        Fields want;
        if (first) want.emplace_back(":method", "GET");
        if (limit >= exact) want.emplace_back(k.name, k.value);
        EXPECT_EQ(e, DecodeError::kHeaderListTooLarge) << limit;
        ExpectList(list, want);
        EXPECT_EQ(d.block_list_size(), exact + 42) << limit;
        // Without the trailing field: at the limit and above it, kOk.
        EXPECT_EQ(d.Decode(lead + k.wire, &list),
                  limit >= exact ? DecodeError::kOk
                                 : DecodeError::kHeaderListTooLarge);
        EXPECT_EQ(list.header_list_size(), limit >= exact ? exact : lead_size);
      }
    }
  }
}

// Limits below one field: nothing is kept (and no records are needed).
TEST(DecoderStorageTest, LimitsBelowOneField) {
  for (const size_t limit : {size_t{0}, size_t{1}, size_t{31}, size_t{41}}) {
    Decoder d(Decoder::Options{DynamicTable::kDefaultMaxSize, limit});
    HeaderList list;
    EXPECT_EQ(d.Decode("\x82" + LiteralIndexed("a", "b") + "\xbe", &list),
              DecodeError::kHeaderListTooLarge);
    ExpectList(list, {});
    // limit / 32 records reserved: none below 32.
    EXPECT_EQ(list.capacity_bytes() - list.arena_capacity(),
              limit < 32 ? 0u : 16u)
        << limit;
    EXPECT_EQ(d.block_list_size(), 42 + 34 + 34u);
  }
  // 32 holds one field with an empty name and value (invalid, but kept).
  Decoder d(Decoder::Options{DynamicTable::kDefaultMaxSize, 32});
  HeaderList list;
  EXPECT_EQ(
      d.Decode(LiteralNotIndexed("", "") + LiteralNotIndexed("", ""), &list),
      DecodeError::kInvalidFieldName);
  ExpectList(list, {{"", ""}});
}

// --- Record reservation
// -------------------------------------------------------------------

constexpr size_t kRecordBytes = 16;  // HeaderList's private Record.

// With no list size limit (SIZE_MAX; limit / 32 does not overflow into a
// small number), an empty block reserves nothing, and a block of 1 MiB of
// 1-octet indexed fields keeps every one (the reservation covers them all:
// with assertions on, Appender::AddRecord checks it).
TEST(DecoderStorageTest, UnlimitedListReservesPerBlockOctet) {
  for (const size_t limit : {std::numeric_limits<size_t>::max(),
                             std::numeric_limits<size_t>::max() - 31}) {
    Decoder d(Decoder::Options{DynamicTable::kDefaultMaxSize, limit});
    HeaderList list;
    EXPECT_EQ(d.Decode("", &list), DecodeError::kOk);
    EXPECT_EQ(list.capacity_bytes(), 0u);
    const size_t n = size_t{1} << 20;
    ASSERT_EQ(d.Decode(std::string(n, '\x82'), &list), DecodeError::kOk);
    ASSERT_EQ(list.size(), n);
    EXPECT_EQ(list.header_list_size(), n * 42);
    EXPECT_EQ(list[n - 1].name, ":method");
    EXPECT_EQ(list[n - 1].value, "GET");
    EXPECT_EQ(d.block_list_size(), n * 42);
    // The next block, on the same list, is no bigger.
    const size_t capacity = list.capacity_bytes();
    ASSERT_EQ(d.Decode(std::string(n, '\x84'), &list), DecodeError::kOk);
    EXPECT_EQ(list.size(), n);
    EXPECT_EQ(list.capacity_bytes(), capacity);
  }
}

// The reservation is min(block octets, limit / 32) records: a 1 MiB block
// with the default limit (a literal cut short, a bomb) reserves 2048, not a
// million; exactly limit / 32 fields of 32 octets fit in it.
TEST(DecoderStorageTest, ReservationIsBoundedByTheLimit) {
  const size_t limit = size_t{64} << 10;
  Decoder d(Decoder::Options{DynamicTable::kDefaultMaxSize, limit});
  HeaderList list;
  std::string cut = std::string(1, '\0') + Str("n") + Varint(1 << 21, 7, 0);
  cut.resize(1 << 20, 'a');
  EXPECT_EQ(d.Decode(cut, &list), DecodeError::kStringTooLong);
  EXPECT_LE(list.capacity_bytes(), (limit / 32) * kRecordBytes + 256);
  // A million references to an empty-name-empty-value entry... the smallest
  // possible field is 32: exactly limit / 32 of them fit.
  Decoder e(Decoder::Options{DynamicTable::kDefaultMaxSize, limit});
  HeaderList empty;
  EXPECT_EQ(e.Decode(LiteralIndexed("", ""), &empty),
            DecodeError::kInvalidFieldName);
  // The entry is invalid: that stream error comes first.
  EXPECT_EQ(e.Decode(std::string(1 << 20, '\xbe'), &empty),
            DecodeError::kInvalidFieldName);
  EXPECT_EQ(empty.size(), limit / 32);
  EXPECT_EQ(empty.header_list_size(), limit);
  EXPECT_LE(empty.capacity_bytes(), (limit / 32) * kRecordBytes + 256);
}

// --- Dynamic table resizes
// -------------------------------------------------------------------

// Size updates to 0 and back mid-connection, SETTINGS limits lowered and
// raised, and the storage growing (each reallocation moves the entries into a
// new ring with its own slack): every entry is referenced after each step.
TEST(DecoderStorageTest, TableResizesKeepEveryEntryCopyable) {
  Decoder d;
  HeaderList list;
  Fields live;  // Newest first, as the table's indexes.
  auto insert = [&](size_t i) {
    const std::string name = "k" + std::to_string(i);
    const std::string value = Value(i % 50);
    live.insert(live.begin(), {name, value});
    return LiteralIndexed(name, value);
  };
  auto check_all = [&](size_t entries) {
    std::string block;
    Fields want;
    for (size_t i = 0; i < entries; ++i) {
      block += Varint(62 + i, 7, 0x80);
      want.push_back(live[i]);
    }
    ASSERT_EQ(d.Decode(block, &list), DecodeError::kOk);
    ExpectList(list, want);
  };
  // Fill to 4096 (reserved for the block, grown by later blocks).
  size_t next = 0;
  for (int b = 0; b < 8; ++b) {
    std::string block;
    for (int j = 0; j < 8; ++j) block += insert(next++);
    ASSERT_EQ(d.Decode(block, &list), DecodeError::kOk);
    ASSERT_LE(d.table().size(), d.table().max_size());
    check_all(d.table().num_entries());
  }
  // Update to 0 (empties the table) and back to 4096 in one block.
  ASSERT_EQ(d.Decode("\x20\x3f\xe1\x1f" + insert(next++), &list),
            DecodeError::kOk);
  ASSERT_EQ(d.table().num_entries(), 1u);
  check_all(1);
  // Update to 0 alone: every reference is out of range.
  ASSERT_EQ(d.Decode("\x20", &list), DecodeError::kOk);
  ASSERT_EQ(d.table().num_entries(), 0u);
  {
    Decoder copy = std::move(d);
    ASSERT_EQ(copy.Decode("\xbe", &list), DecodeError::kIndexOutOfRange);
  }
  // Raised limits: a new decoder whose table grows to 64 KiB in doublings.
  Decoder big;
  big.SetMaxTableSizeLimit(65536);
  live.clear();
  std::string block = "\x3f\xe1\xff\x03";  // Size update to 65536.
  d = std::move(big);
  for (int b = 0; b < 40; ++b) {
    for (int j = 0; j < 40; ++j) block += insert(next++);
    const uint32_t before = d.table().capacity();
    ASSERT_EQ(d.Decode(block, &list), DecodeError::kOk);
    block.clear();
    ASSERT_GE(d.table().capacity(), before);
    check_all(d.table().num_entries());
  }
  EXPECT_EQ(d.table().capacity(), 65536u);
  // SETTINGS lowered to 100: the next block must shrink the table first.
  d.SetMaxTableSizeLimit(100);
  live.resize(0);
  std::string lowered = "\x3f\x45";  // Size update to 100.
  lowered += insert(next++);
  lowered += insert(next++);
  ASSERT_EQ(d.Decode(lowered, &list), DecodeError::kOk);
  check_all(d.table().num_entries());
}

}  // namespace
}  // namespace hpack
