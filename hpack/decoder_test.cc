#include "hpack/decoder.h"

#include <random>
#include <set>
#include <string>

#include "gtest/gtest.h"
#include "hpack/encoder.h"
#include "hpack/field_validation.h"
#include "hpack/static_table.h"
#include "hpack/test_util.h"
#include "hpack/varint.h"

namespace hpack {
namespace {

using testing::Fields;
using testing::HexToBytes;
using testing::LiteralIndexed;
using testing::Str;
using testing::ToFields;
using testing::Varint;

// First octet of a literal without indexing and with a literal name.
const std::string kLiteralNoIndex(1, '\0');

Decoder::Options WithListLimit(size_t limit) {
  Decoder::Options options;
  options.max_header_list_size = limit;
  return options;
}

DecodeError DecodeHex(Decoder* d, const char* hex, HeaderList* list) {
  return d->Decode(HexToBytes(hex), list);
}

// --- Representations
// -------------------------------------------------------------------

TEST(DecoderTest, EmptyBlockIsAnEmptyList) {
  Decoder d;
  HeaderList list;
  list.Append("stale", "field");
  EXPECT_EQ(d.Decode("", &list), DecodeError::kOk);
  EXPECT_TRUE(list.empty());
}

// A moved-to decoder keeps the connection's table; the moved-from one
// decodes as a fresh one (its table empty, not counting entries in storage
// the move took).
TEST(DecoderTest, MovedFromDecoderStartsEmpty) {
  Decoder from;
  HeaderList list;
  ASSERT_EQ(from.Decode(LiteralIndexed("x-a", "1") + LiteralIndexed("x-b", "2"),
                        &list),
            DecodeError::kOk);
  Decoder to(std::move(from));
  ASSERT_EQ(to.Decode("\xbe\xbf", &list), DecodeError::kOk);  // 62, 63.
  EXPECT_EQ(ToFields(list), (Fields{{"x-b", "2"}, {"x-a", "1"}}));
  // NOLINTNEXTLINE(bugprone-use-after-move): the state under test.
  EXPECT_EQ(from.table().num_entries(), 0u);
  EXPECT_EQ(from.Decode("\xbe", &list), DecodeError::kIndexOutOfRange);
}

TEST(DecoderTest, EachLiteralKind) {
  Decoder d;
  HeaderList list;
  // Without indexing (name index 4 = :path), never indexed (literal name), and
  // with incremental indexing (name index 1 = :authority).
  ASSERT_EQ(d.Decode("\x04" + Str("/a") + "\x10" + Str("x-secret") + Str("s") +
                         "\x41" + Str("example.com"),
                     &list),
            DecodeError::kOk);
  EXPECT_EQ(ToFields(list), (Fields{{":path", "/a"},
                                    {"x-secret", "s"},
                                    {":authority", "example.com"}}));
  EXPECT_FALSE(list[0].sensitive);
  EXPECT_TRUE(list[1].sensitive);
  EXPECT_FALSE(list[2].sensitive);
  ASSERT_EQ(d.table().num_entries(), 1u);
  EXPECT_EQ(d.table().name(0), ":authority");
  // The indexed entry is now index 62, and a literal can borrow its name.
  ASSERT_EQ(d.Decode("\xbe\x0f\x2f" + Str("other.com"), &list),
            DecodeError::kOk);
  EXPECT_EQ(ToFields(list), (Fields{{":authority", "example.com"},
                                    {":authority", "other.com"}}));
  EXPECT_EQ(d.table().num_entries(), 1u);
}

// Indexed fields are copied with one fixed 32-octet move when name + value
// fit (reading past a short entry: the static slots and the ring's slack),
// memcpy otherwise: every length around those edges, entries at every ring
// position (a 256-octet table wraps often), every static entry, each field
// appended after fields of other lengths.
TEST(DecoderTest, IndexedFieldsOfEveryLengthCopyExactly) {
  Decoder::Options options;
  options.max_table_size = 256;
  Decoder d(options);
  HeaderList list;
  for (size_t n = 1; n <= 70; ++n) {  // name + value octets.
    const std::string name = std::string(n / 3 + 1, 'a' + n % 26);
    const std::string value = std::string(n - name.size(), 'A' + n % 26);
    ASSERT_EQ(d.Decode(LiteralIndexed(name, value), &list), DecodeError::kOk);
    // The new entry (62), a static one (n % 61 + 1), the entry again.
    const std::string block = std::string(1, '\xbe') +
                              Varint(n % 61 + 1, 7, 0x80) +
                              std::string(1, '\xbe');
    ASSERT_EQ(d.Decode(block, &list), DecodeError::kOk) << n;
    ASSERT_EQ(list.size(), 3u);
    const StaticEntry& e = StaticTable::Get(n % 61 + 1);
    EXPECT_EQ(list[0].name, name) << n;
    EXPECT_EQ(list[0].value, value) << n;
    EXPECT_EQ(list[1].name, e.name) << n;
    EXPECT_EQ(list[1].value, e.value) << n;
    EXPECT_EQ(list[2].name, name) << n;
    EXPECT_EQ(list[2].value, value) << n;
    EXPECT_EQ(list.header_list_size(),
              2 * (n + 32) + e.name.size() + e.value.size() + 32);
  }
}

TEST(DecoderTest, HuffmanStringsDecode) {
  Decoder d;
  HeaderList list;
  // RFC 7541 C.4.1's :authority, and an empty Huffman string (no padding at
  // all).
  ASSERT_EQ(DecodeHex(&d, "418cf1e3c2e5f23a6ba0ab90f4ff 0480", &list),
            DecodeError::kOk);
  EXPECT_EQ(ToFields(list),
            (Fields{{":authority", "www.example.com"}, {":path", ""}}));
}

// RFC 7541 section 4.4: the new entry may name an entry that its own insertion
// evicts.
TEST(DecoderTest, InsertionMayEvictTheEntryItTakesItsNameFrom) {
  Decoder::Options options;
  options.max_table_size = 64;
  Decoder d(options);
  HeaderList list;
  ASSERT_EQ(d.Decode(LiteralIndexed("name", "val1"), &list),
            DecodeError::kOk);  // 40.
  ASSERT_EQ(d.Decode("\x7e" + Str("val2"), &list), DecodeError::kOk);
  EXPECT_EQ(ToFields(list), (Fields{{"name", "val2"}}));
  ASSERT_EQ(d.table().num_entries(), 1u);
  EXPECT_EQ(d.table().name(0), "name");
  EXPECT_EQ(d.table().value(0), "val2");
}

TEST(DecoderTest, EntryLargerThanTheTableEmptiesItButIsStillAField) {
  Decoder d;
  HeaderList list;
  ASSERT_EQ(d.Decode(LiteralIndexed("a", "1"), &list), DecodeError::kOk);
  const std::string big(5000, 'v');
  ASSERT_EQ(d.Decode(LiteralIndexed("big", big), &list), DecodeError::kOk);
  EXPECT_EQ(ToFields(list), (Fields{{"big", big}}));
  EXPECT_EQ(d.table().num_entries(), 0u);
}

// --- Table size updates
// ------------------------------------------------------------------

TEST(DecoderTest, SeveralSizeUpdatesAtTheStart) {
  Decoder d;
  HeaderList list;
  ASSERT_EQ(d.Decode(LiteralIndexed("a", "1"), &list), DecodeError::kOk);
  // 0 (evicts everything), then 4096 again.
  ASSERT_EQ(DecodeHex(&d, "20 3fe11f 82", &list), DecodeError::kOk);
  EXPECT_EQ(d.table().num_entries(), 0u);
  EXPECT_EQ(d.table().max_size(), 4096u);
  EXPECT_EQ(ToFields(list), (Fields{{":method", "GET"}}));
}

TEST(DecoderTest, SizeUpdateAboveTheLimit) {
  Decoder d;
  HeaderList list;
  EXPECT_EQ(DecodeHex(&d, "3fe21f", &list),
            DecodeError::kTableSizeUpdateTooLarge);  // 4097
}

TEST(DecoderTest, SizeUpdateAfterAField) {
  Decoder d;
  HeaderList list;
  EXPECT_EQ(DecodeHex(&d, "82 20", &list),
            DecodeError::kTableSizeUpdateNotAtStart);
}

TEST(DecoderTest, LoweredLimitRequiresAnUpdate) {
  HeaderList list;
  {
    Decoder d;
    d.SetMaxTableSizeLimit(100);
    EXPECT_EQ(DecodeHex(&d, "82", &list), DecodeError::kMissingTableSizeUpdate);
  }
  {
    Decoder d;
    d.SetMaxTableSizeLimit(100);
    EXPECT_EQ(DecodeHex(&d, "", &list), DecodeError::kMissingTableSizeUpdate);
  }
  {
    Decoder d;
    d.SetMaxTableSizeLimit(100);
    EXPECT_EQ(DecodeHex(&d, "3f46 82", &list),
              DecodeError::kTableSizeUpdateTooLarge);  // 101
  }
  {
    Decoder d;
    d.SetMaxTableSizeLimit(100);
    ASSERT_EQ(DecodeHex(&d, "3f45 82", &list), DecodeError::kOk);  // 100
    EXPECT_EQ(d.table().max_size(), 100u);
    EXPECT_EQ(DecodeHex(&d, "82", &list), DecodeError::kOk);  // Only once.
  }
}

TEST(DecoderTest, LimitLoweredThenRaisedRequiresTheMinimumFirst) {
  HeaderList list;
  {
    Decoder d;
    d.SetMaxTableSizeLimit(100);
    d.SetMaxTableSizeLimit(4096);
    EXPECT_EQ(DecodeHex(&d, "3fe11f 82", &list),
              DecodeError::kTableSizeUpdateTooLarge);
  }
  {
    Decoder d;
    d.SetMaxTableSizeLimit(100);
    d.SetMaxTableSizeLimit(4096);
    ASSERT_EQ(DecodeHex(&d, "3f45 3fe11f 82", &list), DecodeError::kOk);
    EXPECT_EQ(d.table().max_size(), 4096u);
  }
}

// RFC 7541 4.2: after two decreases (4096 -> 100 -> 2000) the smaller one
// must be signalled first; an update straight to the final 2000 is too large.
TEST(DecoderTest, Sec4_2_TwoDecreasesRequireTheSmallerFirst) {
  const auto lowered_twice = [] {
    Decoder d;
    d.SetMaxTableSizeLimit(100);
    d.SetMaxTableSizeLimit(2000);
    return d;
  };
  HeaderList list;
  Decoder d = lowered_twice();
  EXPECT_EQ(DecodeHex(&d, "3fb10f 82", &list),  // 2000
            DecodeError::kTableSizeUpdateTooLarge);
  d = lowered_twice();
  EXPECT_EQ(DecodeHex(&d, "3f46 82", &list),  // 101
            DecodeError::kTableSizeUpdateTooLarge);
  d = lowered_twice();
  ASSERT_EQ(DecodeHex(&d, "3f45 3fb10f 82", &list), DecodeError::kOk);
  EXPECT_EQ(d.table().max_size(), 2000u);
  EXPECT_EQ(ToFields(list), (Fields{{":method", "GET"}}));
}

TEST(DecoderTest, RaisedLimitAllowsButDoesNotRequireAnUpdate) {
  Decoder d;
  HeaderList list;
  d.SetMaxTableSizeLimit(8192);
  ASSERT_EQ(DecodeHex(&d, "82", &list), DecodeError::kOk);
  EXPECT_EQ(d.table().max_size(), 4096u);
  ASSERT_EQ(DecodeHex(&d, "3fe13f", &list), DecodeError::kOk);  // 8192
  EXPECT_EQ(d.table().max_size(), 8192u);
}

// --- Malformed blocks: connection errors, sticky
// ------------------------------------------

struct MalformedCase {
  const char* name;
  std::string block;
  DecodeError error;
};

TEST(DecoderTest, MalformedBlocksGiveTheirErrorAndStick) {
  const std::vector<MalformedCase> cases = {
      {"truncated indexed integer", HexToBytes("ff"), DecodeError::kTruncated},
      {"truncated name index", HexToBytes("7f80"), DecodeError::kTruncated},
      {"truncated size update", HexToBytes("3f"), DecodeError::kTruncated},
      {"missing name string", HexToBytes("40"), DecodeError::kTruncated},
      {"missing value string", HexToBytes("04"), DecodeError::kTruncated},
      {"truncated string length", HexToBytes("047f"), DecodeError::kTruncated},
      {"missing value after name", HexToBytes("400161"),
       DecodeError::kTruncated},
      {"integer above 2^32-1", HexToBytes("ffffffffff0f"),
       DecodeError::kIntegerOverflow},
      {"six continuation octets", HexToBytes("ff808080808000"),
       DecodeError::kIntegerOverflow},
      {"string length overflow", HexToBytes("047fffffffff0f"),
       DecodeError::kIntegerOverflow},
      {"name past the end", HexToBytes("40056162"),
       DecodeError::kStringTooLong},
      {"value past the end", HexToBytes("040a2f"), DecodeError::kStringTooLong},
      {"huge length past the end", HexToBytes("047fe1ffff0f61"),
       DecodeError::kStringTooLong},
      {"index zero", HexToBytes("80"), DecodeError::kIndexZero},
      {"index past empty table", HexToBytes("be"),
       DecodeError::kIndexOutOfRange},
      {"index far past the table", HexToBytes("ffe1ffff0f"),
       DecodeError::kIndexOutOfRange},
      {"name index past table", HexToBytes("7e0161"),
       DecodeError::kIndexOutOfRange},
      {"never-indexed name index past table", HexToBytes("1f2f0161"),
       DecodeError::kIndexOutOfRange},
      {"huffman EOS", HexToBytes("0484ffffffff"), DecodeError::kHuffmanEos},
      {"huffman padding of 8 ones", HexToBytes("0481ff"),
       DecodeError::kHuffmanPaddingTooLong},
      {"huffman padding of 11 ones", HexToBytes("04821fff"),
       DecodeError::kHuffmanPaddingTooLong},
      {"huffman padding of zeros", HexToBytes("048118"),
       DecodeError::kHuffmanPaddingNotOnes},
      {"huffman name padding of zeros", HexToBytes("40811801 61"),
       DecodeError::kHuffmanPaddingNotOnes},
      {"size update too large", HexToBytes("3fe21f"),
       DecodeError::kTableSizeUpdateTooLarge},
      {"size update after field", HexToBytes("823f00"),
       DecodeError::kTableSizeUpdateNotAtStart},
      {"error after good fields", HexToBytes("828684 80"),
       DecodeError::kIndexZero},
  };
  for (const MalformedCase& c : cases) {
    SCOPED_TRACE(c.name);
    Decoder d;
    HeaderList list;
    EXPECT_EQ(d.Decode(c.block, &list), c.error);
    EXPECT_TRUE(IsConnectionError(c.error));
    EXPECT_EQ(d.error(), c.error);
    // Sticky: a perfectly good block is refused with the same error, and yields
    // nothing.
    list.Append("stale", "field");
    EXPECT_EQ(DecodeHex(&d, "82", &list), c.error);
    EXPECT_TRUE(list.empty());
  }
}

// Every prefix of a valid block that ends mid-representation is an error, never
// a read past the end (run under ASan); prefixes that end between
// representations decode.
TEST(DecoderTest, EveryTruncationOfAValidBlockIsDetected) {
  const std::string block = HexToBytes(
      "828684418cf1e3c2e5f23a6ba0ab90f4ff"
      "4088 25a8 49e9 5ba9 7d7f 8925 a849 e95b b8e8 b4bf"
      "0f2f 0c 2f73 616d 706c 652f 7061 7468");
  const std::set<size_t> boundaries = {0, 1, 2, 3, 17, 37};
  for (size_t len = 0; len <= block.size(); ++len) {
    Decoder d;
    HeaderList list;
    // Copy into an exactly sized heap buffer so ASan sees any overread.
    const std::unique_ptr<char[]> exact(new char[len + 1]);
    std::memcpy(exact.get(), block.data(), len);
    const DecodeError e = d.Decode(std::string_view(exact.get(), len), &list);
    if (boundaries.count(len) || len == block.size()) {
      EXPECT_EQ(e, DecodeError::kOk) << len;
    } else {
      EXPECT_TRUE(e == DecodeError::kTruncated ||
                  e == DecodeError::kStringTooLong ||
                  e == DecodeError::kHuffmanPaddingTooLong ||
                  e == DecodeError::kHuffmanPaddingNotOnes)
          << len << " " << DecodeErrorName(e);
    }
  }
}

// Random input never crashes or overreads, and connection errors always stick.
TEST(DecoderTest, RandomInputIsHandled) {
  std::mt19937 rng(7);
  HeaderList list;
  for (int i = 0; i < 20000; ++i) {
    Decoder d;
    for (int block = 0; block < 3; ++block) {
      const size_t len = rng() % 40;
      const std::unique_ptr<char[]> buf(new char[len + 1]);
      for (size_t j = 0; j < len; ++j) buf[j] = static_cast<char>(rng());
      const DecodeError e = d.Decode(std::string_view(buf.get(), len), &list);
      if (IsConnectionError(e)) {
        EXPECT_EQ(d.Decode("", &list), e);
        break;
      }
    }
  }
}

// --- Header list size: a stream error, the table stays in step
// ----------------------------

TEST(DecoderTest, HeaderListLimitIsAStreamError) {
  Decoder d(WithListLimit(100));
  HeaderList list;
  // :method GET is 7 + 3 + 32 = 42: two fit in 100, the third does not.
  EXPECT_EQ(DecodeHex(&d, "82 82 82", &list), DecodeError::kHeaderListTooLarge);
  EXPECT_TRUE(IsStreamError(DecodeError::kHeaderListTooLarge));
  EXPECT_EQ(list.size(), 2u);
  EXPECT_LE(list.header_list_size(), 100u);
  // Fields after the limit are still processed for the table: this literal is
  // indexed.
  EXPECT_EQ(d.Decode("\x82\x82\x82" + LiteralIndexed("late", "entry"), &list),
            DecodeError::kHeaderListTooLarge);
  ASSERT_EQ(d.table().num_entries(), 1u);
  EXPECT_EQ(d.table().name(0), "late");
  // Not sticky, and the entry is there for the next block.
  EXPECT_EQ(d.error(), DecodeError::kOk);
  ASSERT_EQ(DecodeHex(&d, "be", &list), DecodeError::kOk);
  EXPECT_EQ(ToFields(list), (Fields{{"late", "entry"}}));
}

// RFC 9113 6.5.2 / RFC 7541 4.1: the literal that brings the list to exactly
// the limit fits; one octet less and it does not. :method GET counts
// 7 + 3 + 32 = 42, indexed (82) and as a literal without indexing that names
// static entry 2 (02, value "GET").
TEST(DecoderTest, Sec6_5_2_LiteralExactlyAtTheLimitFits) {
  const std::string block = "\x82\x02" + Str("GET");
  {
    Decoder d(WithListLimit(84));
    HeaderList list;
    EXPECT_EQ(d.Decode(block, &list), DecodeError::kOk);
    EXPECT_EQ(ToFields(list), (Fields{{":method", "GET"}, {":method", "GET"}}));
    EXPECT_EQ(list.header_list_size(), 84u);
  }
  {
    Decoder d(WithListLimit(83));
    HeaderList list;
    EXPECT_EQ(d.Decode(block, &list), DecodeError::kHeaderListTooLarge);
    EXPECT_EQ(ToFields(list), (Fields{{":method", "GET"}}));
  }
}

TEST(DecoderTest, ExactlyAtTheLimitFits) {
  Decoder d(WithListLimit(84));
  HeaderList list;
  EXPECT_EQ(DecodeHex(&d, "82 82", &list), DecodeError::kOk);
  EXPECT_EQ(list.header_list_size(), 84u);
  EXPECT_EQ(d.Decode(LiteralIndexed("a", "") + "\x82\x82", &list),
            DecodeError::kHeaderListTooLarge);
  EXPECT_EQ(ToFields(list), (Fields{{"a", ""}, {":method", "GET"}}));
}

// The HPACK bomb: one ~4 KiB entry, then a block referencing it 100000 times.
// Decoding stops adding at the limit, memory stays bounded, and the work is
// counted rather than timed: past the limit a reference copies nothing, so the
// block copies no more octets than the list keeps (a copy per reference would
// be 400 MB).
TEST(DecoderTest, HpackBombStopsAtTheLimit) {
  const size_t kLimit = 16 * 1024;
  Decoder d(WithListLimit(kLimit));
  HeaderList list;
  ASSERT_EQ(d.Decode(LiteralIndexed("x", std::string(4000, 'a')), &list),
            DecodeError::kOk);
  const std::string bomb(100000, '\xbe');
  EXPECT_EQ(d.Decode(bomb, &list), DecodeError::kHeaderListTooLarge);
  EXPECT_EQ(list.size(), 4u);  // 4033 each: a 5th would pass 16384.
  EXPECT_LE(list.header_list_size(), kLimit);
  EXPECT_LE(list.arena_capacity(), 2 * kLimit);
  EXPECT_EQ(list.octets_copied(), list.arena_size());
  // Literals that borrow the big entry's name, not indexed, past the limit:
  // no copies either.
  std::string borrow;
  for (int i = 0; i < 20000; ++i)
    borrow += std::string("\x0f\x2f\x00", 3);  // name 62, empty value
  EXPECT_EQ(d.Decode(bomb.substr(0, 10) + borrow, &list),
            DecodeError::kHeaderListTooLarge);
  EXPECT_LE(list.arena_capacity(), 2 * kLimit);
  EXPECT_EQ(list.octets_copied(), list.arena_size());
  // The connection goes on.
  ASSERT_EQ(DecodeHex(&d, "82", &list), DecodeError::kOk);
}

// --- Field validation: stream errors, remembered by the table
// -----------------------------

TEST(DecoderTest, InvalidNameIsReportedAndRemembered) {
  Decoder d;
  HeaderList list;
  EXPECT_EQ(d.Decode(LiteralIndexed("Foo", "bar"), &list),
            DecodeError::kInvalidFieldName);
  EXPECT_TRUE(IsStreamError(DecodeError::kInvalidFieldName));
  EXPECT_EQ(ToFields(list),
            (Fields{{"Foo", "bar"}}));     // Still decoded, for logging.
  ASSERT_EQ(d.table().num_entries(), 1u);  // Still indexed: in step.
  EXPECT_EQ(d.table().flags(0), kFieldNameInvalid);
  EXPECT_EQ(d.error(), DecodeError::kOk);
  // No smuggling: referencing the entry fails again...
  EXPECT_EQ(DecodeHex(&d, "82 be", &list), DecodeError::kInvalidFieldName);
  // ...and so does borrowing its name for a new (otherwise fine) field, which
  // in turn enters the table marked.
  EXPECT_EQ(d.Decode("\x7e" + Str("ok"), &list),
            DecodeError::kInvalidFieldName);
  EXPECT_EQ(d.table().flags(0), kFieldNameInvalid);
  EXPECT_EQ(DecodeHex(&d, "be", &list), DecodeError::kInvalidFieldName);
  // Valid blocks around it are fine.
  EXPECT_EQ(DecodeHex(&d, "82", &list), DecodeError::kOk);
}

TEST(DecoderTest, InvalidValueIsReportedAndRememberedButNotInheritedByName) {
  Decoder d;
  HeaderList list;
  EXPECT_EQ(d.Decode(LiteralIndexed("a", "b\n"), &list),
            DecodeError::kInvalidFieldValue);
  EXPECT_EQ(d.table().flags(0), kFieldValueInvalid);
  EXPECT_EQ(DecodeHex(&d, "be", &list), DecodeError::kInvalidFieldValue);
  // Same name, new valid value: fine.
  EXPECT_EQ(d.Decode("\x7e" + Str("c"), &list), DecodeError::kOk);
  EXPECT_EQ(d.table().flags(0), kFieldValid);
  EXPECT_EQ(DecodeHex(&d, "bf", &list), DecodeError::kInvalidFieldValue);
}

TEST(DecoderTest, EachValidationRuleIsApplied) {
  const std::vector<std::pair<std::string, std::string>> bad_names = {
      {"", "v"},      {":", "v"},
      {"a:b", "v"},   {"A", "v"},
      {"a b", "v"},   {"a\x7f", "v"},
      {"a\x80", "v"}, {std::string("a\0", 2), "v"}};
  for (const auto& [name, value] : bad_names) {
    Decoder d;
    HeaderList list;
    EXPECT_EQ(d.Decode(kLiteralNoIndex + Str(name) + Str(value), &list),
              DecodeError::kInvalidFieldName)
        << name;
  }
  const std::vector<std::string> bad_values = {
      std::string("\0", 1), "a\rb", "a\nb", " a", "a ", "\ta", "a\t"};
  for (const std::string& value : bad_values) {
    Decoder d;
    HeaderList list;
    EXPECT_EQ(d.Decode(std::string("\x04", 1) + Str(value), &list),
              DecodeError::kInvalidFieldValue)
        << value;
  }
}

TEST(DecoderTest, FirstStreamErrorInBlockOrderIsReported) {
  Decoder d(WithListLimit(200));
  HeaderList list;
  EXPECT_EQ(d.Decode(std::string("\x04", 1) + Str(" x") + kLiteralNoIndex +
                         Str("X") + Str("v"),
                     &list),
            DecodeError::kInvalidFieldValue);
  EXPECT_EQ(list.size(), 2u);
  EXPECT_EQ(d.Decode(kLiteralNoIndex + Str("X") + Str("v") +
                         std::string("\x04", 1) + Str(" x"),
                     &list),
            DecodeError::kInvalidFieldName);
  // Too large before the invalid field: too large wins.
  EXPECT_EQ(d.Decode(std::string("\x04", 1) + Str(std::string(300, 'p')) +
                         kLiteralNoIndex + Str("X") + Str("v"),
                     &list),
            DecodeError::kHeaderListTooLarge);
}

TEST(DecoderTest, ErrorNamesAreDistinct) {
  std::set<std::string> names;
  for (int e = 0; e <= static_cast<int>(DecodeError::kMissingTableSizeUpdate);
       ++e) {
    const std::string name = DecodeErrorName(static_cast<DecodeError>(e));
    EXPECT_NE(name, "unknown") << e;
    EXPECT_TRUE(names.insert(name).second) << name;
  }
  EXPECT_EQ(names.size(), 15u);
  EXPECT_FALSE(IsStreamError(DecodeError::kOk));
  EXPECT_FALSE(IsConnectionError(DecodeError::kOk));
  EXPECT_TRUE(IsStreamError(DecodeError::kInvalidFieldValue));
  EXPECT_TRUE(IsConnectionError(DecodeError::kMissingTableSizeUpdate));
}

// --- The soft-limit mode: past max_header_list_size fields are dropped, the
// table stays in step -----------------------------------------------------

// A block far over the limit, whose literals enter the table, then blocks
// that reference those entries (and evict some): the limited decoder drops
// the oversized block's fields but decodes every later block exactly as a
// decoder without a limit does.
TEST(DecoderTest, DroppedFieldsStillEnterTheTable) {
  Encoder encoder;
  Decoder limited(WithListLimit(200));
  Decoder unlimited(WithListLimit(SIZE_MAX));
  HeaderList got;
  HeaderList want;
  std::vector<HeaderField> big;
  std::vector<std::string> values;
  for (int i = 0; i < 40; ++i) values.push_back("value-" + std::to_string(i));
  for (int i = 0; i < 40; ++i) {
    big.push_back(HeaderField{"x-entry", values[i]});
  }
  const std::string oversized(encoder.EncodeBlock(big));
  ASSERT_EQ(limited.Decode(oversized, &got), DecodeError::kHeaderListTooLarge);
  ASSERT_EQ(unlimited.Decode(oversized, &want), DecodeError::kOk);
  EXPECT_EQ(got.size(), 4u);  // 7 + 7 + 32 = 46 each: four fit in 200.
  EXPECT_EQ(limited.block_list_size(), want.header_list_size());
  EXPECT_EQ(limited.table().num_entries(), unlimited.table().num_entries());
  // References to the newest entries (indexed), then new literals that evict
  // the oldest.
  for (int round = 0; round < 3; ++round) {
    std::vector<HeaderField> next;
    for (int i = 39; i >= 36; --i)
      next.push_back(HeaderField{"x-entry", values[i]});
    const std::string round_value(500, static_cast<char>('a' + round));
    next.push_back(HeaderField{"x-round", round_value});
    const std::string block(encoder.EncodeBlock(next));
    ASSERT_EQ(unlimited.Decode(block, &want), DecodeError::kOk);
    limited.set_max_header_list_size(4096);
    ASSERT_EQ(limited.Decode(block, &got), DecodeError::kOk) << round;
    limited.set_max_header_list_size(200);
    EXPECT_EQ(got, want) << round;
    EXPECT_EQ(limited.block_list_size(), want.header_list_size());
  }
}

// The same with the big entries: an oversized block whose first field is
// over the limit by itself keeps nothing, and the next block's reference to
// that field's entry decodes.
TEST(DecoderTest, OversizedLiteralEntersTheTable) {
  Decoder d(WithListLimit(1000));
  HeaderList list;
  const std::string value(3000, 'v');
  EXPECT_EQ(d.Decode(LiteralIndexed("x-big", value) + "\x82", &list),
            DecodeError::kHeaderListTooLarge);
  EXPECT_TRUE(list.empty());
  EXPECT_EQ(d.block_list_size(), 5 + 3000 + 32 + 42u);
  d.set_max_header_list_size(4096);
  ASSERT_EQ(DecodeHex(&d, "be 82", &list), DecodeError::kOk);
  EXPECT_EQ(ToFields(list), (Fields{{"x-big", value}, {":method", "GET"}}));
  EXPECT_EQ(d.block_list_size(), list.header_list_size());
}

// Past the limit, indexed literals that borrow a name (from the static
// table, then from the dynamic one) still enter the table with that name,
// though their fields are dropped.
TEST(DecoderTest, DroppedLiteralsWithIndexedNamesEnterTheTable) {
  Decoder d(WithListLimit(100));
  HeaderList list;
  const std::string value(100, 'v');
  EXPECT_EQ(d.Decode(LiteralIndexed("x-big", value) +
                         std::string("\x44\x02/x", 4) +    // :path (static 4).
                         std::string("\x7f\x00\x01w", 4),  // x-big (63).
                     &list),
            DecodeError::kHeaderListTooLarge);
  EXPECT_TRUE(list.empty());
  d.set_max_header_list_size(4096);
  ASSERT_EQ(DecodeHex(&d, "be bf c0", &list), DecodeError::kOk);
  EXPECT_EQ(ToFields(list),
            (Fields{{"x-big", "w"}, {":path", "/x"}, {"x-big", value}}));
}

// block_list_size counts what the peer sent, dropped fields included: an
// HPACK bomb's every reference.
TEST(DecoderTest, BlockListSizeCountsDroppedFields) {
  Decoder d(WithListLimit(16 * 1024));
  HeaderList list;
  ASSERT_EQ(d.Decode(LiteralIndexed("x", std::string(4000, 'a')), &list),
            DecodeError::kOk);
  EXPECT_EQ(d.block_list_size(), 4033u);
  EXPECT_EQ(d.Decode(std::string(1000, '\xbe'), &list),
            DecodeError::kHeaderListTooLarge);
  EXPECT_EQ(d.block_list_size(), 1000 * 4033u);
  // Literals borrowing the name, not indexed, past the limit: counted too.
  EXPECT_EQ(
      d.Decode(std::string(5, '\xbe') + std::string("\x0f\x2f\x01z", 4), &list),
      DecodeError::kHeaderListTooLarge);
  EXPECT_EQ(d.block_list_size(), 5 * 4033u + 1 + 1 + 32);
  ASSERT_EQ(DecodeHex(&d, "82", &list), DecodeError::kOk);
  EXPECT_EQ(d.block_list_size(), 42u);
}

TEST(DecoderTest, ListStorageIsReused) {
  Decoder d;
  HeaderList list;
  const std::string block = LiteralIndexed("x-long", std::string(1000, 'z'));
  ASSERT_EQ(d.Decode(block, &list), DecodeError::kOk);
  const size_t capacity = list.arena_capacity();
  for (int i = 0; i < 10; ++i) {
    ASSERT_EQ(DecodeHex(&d, "be be", &list), DecodeError::kOk);
    EXPECT_EQ(list.size(), 2u);
  }
  EXPECT_LE(list.arena_capacity(), std::max<size_t>(capacity, 2048));
}

}  // namespace
}  // namespace hpack
