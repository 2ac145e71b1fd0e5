#include "hpack/dynamic_table.h"

#include <algorithm>
#include <deque>
#include <random>
#include <string>
#include <utility>

#include "gtest/gtest.h"
#include "hpack/string_hash.h"

namespace hpack {
namespace {

struct ModelEntry {
  std::string name;
  std::string value;
  uint8_t flags;
};

// The RFC's table, written the obvious way: newest first.
class Model {
 public:
  explicit Model(uint32_t max_size) : max_size_(max_size) {}
  void SetMaxSize(uint32_t m) {
    max_size_ = m;
    Evict();
  }
  void Insert(const std::string& n, const std::string& v, uint8_t flags) {
    if (n.size() + v.size() + 32 > max_size_) {
      entries_.clear();
      size_ = 0;
      return;
    }
    entries_.push_front({n, v, flags});
    size_ += n.size() + v.size() + 32;
    Evict();
  }
  const std::deque<ModelEntry>& entries() const { return entries_; }
  size_t size() const { return size_; }

 private:
  void Evict() {
    while (size_ > max_size_) {
      size_ -= entries_.back().name.size() + entries_.back().value.size() + 32;
      entries_.pop_back();
    }
  }
  uint32_t max_size_;
  size_t size_ = 0;
  std::deque<ModelEntry> entries_;
};

void ExpectSame(const DynamicTable& t, const Model& m) {
  ASSERT_EQ(t.num_entries(), m.entries().size());
  ASSERT_EQ(t.size(), m.size());
  for (size_t i = 0; i < t.num_entries(); ++i) {
    ASSERT_EQ(t.name(i), m.entries()[i].name) << i;
    ASSERT_EQ(t.value(i), m.entries()[i].value) << i;
    ASSERT_EQ(t.flags(i), m.entries()[i].flags) << i;
    // The decoder copies name and value in one go: they must be adjacent.
    ASSERT_EQ(t.value(i).data(), t.name(i).data() + t.name(i).size()) << i;
    ASSERT_EQ(t.entry_size(i),
              m.entries()[i].name.size() + m.entries()[i].value.size() + 32);
  }
}

TEST(DynamicTableTest, StartsEmpty) {
  DynamicTable t;
  EXPECT_EQ(t.max_size(), 4096u);
  EXPECT_EQ(t.size(), 0u);
  EXPECT_EQ(t.num_entries(), 0u);
}

// RFC 7541 C.3: the sizes after each request (57, 110, 164), newest entry
// first.
TEST(DynamicTableTest, C3_SizeAccounting) {
  DynamicTable t;
  t.Insert(":authority", "www.example.com");
  EXPECT_EQ(t.size(), 57u);
  t.Insert("cache-control", "no-cache");
  EXPECT_EQ(t.size(), 110u);
  t.Insert("custom-key", "custom-value");
  EXPECT_EQ(t.size(), 164u);
  ASSERT_EQ(t.num_entries(), 3u);
  EXPECT_EQ(t.name(0), "custom-key");
  EXPECT_EQ(t.value(0), "custom-value");
  EXPECT_EQ(t.name(1), "cache-control");
  EXPECT_EQ(t.name(2), ":authority");
  EXPECT_EQ(t.value(2), "www.example.com");
}

// RFC 7541 C.5 with a 256-octet table: inserting :status 307 evicts :status
// 302, and the third response evicts down to 215.
TEST(DynamicTableTest, C5_EvictionAt256) {
  DynamicTable t(256);
  t.Insert(":status", "302");
  t.Insert("cache-control", "private");
  t.Insert("date", "Mon, 21 Oct 2013 20:13:21 GMT");
  t.Insert("location", "https://www.example.com");
  EXPECT_EQ(t.size(), 222u);
  t.Insert(":status", "307");
  EXPECT_EQ(t.size(), 222u);
  ASSERT_EQ(t.num_entries(), 4u);
  EXPECT_EQ(t.value(0), "307");
  EXPECT_EQ(t.name(3), "cache-control");
  t.Insert("date", "Mon, 21 Oct 2013 20:13:22 GMT");
  t.Insert("content-encoding", "gzip");
  t.Insert("set-cookie",
           "foo=ASDJKHQKBZXOQWEOPIUAXQWEOIU; max-age=3600; version=1");
  EXPECT_EQ(t.size(), 215u);
  ASSERT_EQ(t.num_entries(), 3u);
  EXPECT_EQ(t.name(0), "set-cookie");
  EXPECT_EQ(t.name(1), "content-encoding");
  EXPECT_EQ(t.name(2), "date");
}

TEST(DynamicTableTest, EntryLargerThanTableEmptiesIt) {
  DynamicTable t(100);
  EXPECT_TRUE(t.Insert("a", "b"));
  EXPECT_TRUE(t.Insert("", std::string(68, 'x')));  // Exactly 100.
  EXPECT_EQ(t.num_entries(), 1u);
  EXPECT_EQ(t.size(), 100u);
  EXPECT_FALSE(t.Insert("", std::string(69, 'x')));
  EXPECT_EQ(t.num_entries(), 0u);
  EXPECT_EQ(t.size(), 0u);
}

TEST(DynamicTableTest, SetMaxSizeEvictsOldestFirst) {
  DynamicTable t;
  t.Insert("a", "1");  // 34 each.
  t.Insert("b", "2");
  t.Insert("c", "3");
  t.SetMaxSize(68);
  ASSERT_EQ(t.num_entries(), 2u);
  EXPECT_EQ(t.name(0), "c");
  EXPECT_EQ(t.name(1), "b");
  t.SetMaxSize(0);
  EXPECT_EQ(t.num_entries(), 0u);
  EXPECT_FALSE(t.Insert("a", "1"));
}

TEST(DynamicTableTest, GrowingPastCapacityKeepsEntriesAndLookups) {
  DynamicTable t(128, /*enable_lookup=*/true);
  t.Insert("a", "1");
  t.Insert("b", "2");
  t.Insert("c", "3");
  EXPECT_EQ(t.capacity(), 128u);
  t.SetMaxSize(100000);
  EXPECT_EQ(t.capacity(), 128u);  // Grows when entries need it.
  ASSERT_EQ(t.num_entries(), 3u);
  EXPECT_EQ(t.name(0), "c");
  EXPECT_EQ(t.value(2), "1");
  EXPECT_EQ(t.FindField(HashField(HashString("a"), HashString("1")), "a", "1"),
            2);
  EXPECT_EQ(t.FindName(HashString("b"), "b"), 1);
  for (int i = 0; i < 1000; ++i)
    t.Insert("k" + std::to_string(i), std::string(60, 'v'));
  EXPECT_LE(t.size(), 100000u);
  EXPECT_GE(t.capacity(), t.size());
  EXPECT_LE(t.capacity(), 100000u);
  EXPECT_EQ(t.FindName(HashString("k999"), "k999"), 0);
  EXPECT_EQ(t.FindField(HashField(HashString("a"), HashString("1")), "a", "1"),
            1002);
}

// A table allocates nothing until an entry needs storage, then grows by
// doubling from kMinCapacity up to max_size, never beyond.
TEST(DynamicTableTest, StorageGrowsOnDemandUpToMaxSize) {
  DynamicTable t(4096);
  EXPECT_EQ(t.capacity(), 0u);
  t.SetMaxSize(65536);
  EXPECT_EQ(t.capacity(), 0u);
  t.SetMaxSize(4096);
  ASSERT_TRUE(t.Insert("a", "1"));
  EXPECT_EQ(t.capacity(), DynamicTable::kMinCapacity);
  uint32_t last = t.capacity();
  for (int i = 0; i < 200; ++i) {
    ASSERT_TRUE(t.Insert("k" + std::to_string(i), std::string(20, 'v')));
    EXPECT_GE(t.capacity(), t.size());
    EXPECT_TRUE(t.capacity() == last || t.capacity() == 2 * last ||
                t.capacity() == 4096u)
        << t.capacity();
    last = t.capacity();
  }
  EXPECT_EQ(t.capacity(), 4096u);
  EXPECT_EQ(t.name(0), "k199");
  EXPECT_EQ(t.value(0), std::string(20, 'v'));
  // An entry larger than the storage grows it at once.
  DynamicTable big(100000);
  ASSERT_TRUE(big.Insert("n", std::string(3000, 'x')));
  EXPECT_GE(big.capacity(), 3033u);
  EXPECT_EQ(big.value(0), std::string(3000, 'x'));
}

// The memory bound of the header: full to max_size M with the most entries it
// can hold (M / 32 empty ones, every record slot in use) and churned once
// around, the storage is 3 * M at a power of two, under 6 * M otherwise (4 * M
// and 8 * M with the lookup maps), plus the ring's kReadSlack.
TEST(DynamicTableTest, StorageStaysWithinTheBoundWhenFull) {
  struct Case {
    uint32_t max_size;
    size_t bytes;         // Expected storage_bytes() without lookup.
    size_t lookup_bytes;  // With lookup.
  };
  constexpr size_t kSlack = DynamicTable::kReadSlack;
  for (const Case& c :
       {Case{4096, 8192 + 128 * 32 + kSlack, 8192 + 128 * 32 + 4096 + kSlack},
        Case{4128, 16384 + 256 * 32 + kSlack, 16384 + 256 * 32 + 8192 + kSlack},
        Case{65536, 131072 + 2048 * 32 + kSlack,
             131072 + 2048 * 32 + 65536 + kSlack}}) {
    for (bool lookup : {false, true}) {
      DynamicTable t(c.max_size, lookup);
      const size_t max_entries = c.max_size / DynamicTable::kEntryOverhead;
      for (size_t i = 0; i < 2 * max_entries + 7; ++i) {
        ASSERT_TRUE(t.Insert("", "", static_cast<uint8_t>(i)));
        const size_t live = std::min(i + 1, max_entries);
        ASSERT_EQ(t.num_entries(), live);
        // Every live entry is still in its record slot.
        for (size_t k = 0; k < live; k += live / 8 + 1) {
          ASSERT_EQ(t.flags(k), static_cast<uint8_t>(i - k)) << k;
        }
      }
      EXPECT_EQ(t.size(), max_entries * DynamicTable::kEntryOverhead);
      EXPECT_EQ(t.capacity(), c.max_size);
      const size_t m = c.max_size;
      const bool pow2 = (m & (m - 1)) == 0;
      const size_t bound = (lookup ? 4 : 3) * m + kSlack;
      EXPECT_EQ(t.storage_bytes(), lookup ? c.lookup_bytes : c.bytes)
          << m << " " << lookup;
      if (pow2) {
        EXPECT_EQ(t.storage_bytes(), bound) << m << " " << lookup;
      } else {
        EXPECT_LT(t.storage_bytes(), 2 * bound) << m << " " << lookup;
      }
    }
  }
}

// Allocate's power-of-two rounding seen through storage_bytes() at small
// reservations: record counts (capacity / 32) of 0 (rounded to 1), 1, 2, 3
// and 4, and byte rings (2 * capacity, at least 16) at, below and above
// powers of two.
TEST(DynamicTableTest, StorageRoundsEachRingUpToAPowerOfTwo) {
  const auto pow2_at_least = [](uint64_t n) {
    uint64_t p = 1;
    while (p < n) p *= 2;
    return p;
  };
  for (uint32_t c : {1u, 8u, 9u, 31u, 32u, 33u, 63u, 64u, 65u, 96u, 127u, 128u,
                     129u, 4096u, 4097u}) {
    DynamicTable t(c);
    t.Reserve(c);
    EXPECT_EQ(t.capacity(), c);
    const uint64_t ring =
        pow2_at_least(std::max<uint64_t>(16, 2 * uint64_t{c}));
    const uint64_t records = pow2_at_least(c / DynamicTable::kEntryOverhead);
    EXPECT_EQ(t.storage_bytes(), ring + DynamicTable::kReadSlack + records * 32)
        << c;
  }
}

// Insert's inline path (no lookup, the entry fits the storage) against the
// out-of-line one (every insert with lookup) and the model at the limits: an
// entry of exactly max_size, one octet larger, one that needs an eviction,
// max_size 0, and after SetMaxSize below and above the storage's capacity.
TEST(DynamicTableTest, InlineInsertAgreesWithOutOfLineAtTheLimits) {
  DynamicTable fast(256);
  DynamicTable slow(256, /*enable_lookup=*/true);
  Model m(256);
  fast.Reserve(256);
  slow.Reserve(256);
  const auto set_max = [&](uint32_t max_size) {
    fast.SetMaxSize(max_size);
    slow.SetMaxSize(max_size);
    m.SetMaxSize(max_size);
  };
  // An entry of `size` RFC octets (size >= 32), its name and value adjacent.
  const auto insert = [&](size_t size, char c) {
    const std::string joined(size - DynamicTable::kEntryOverhead, c);
    const std::string_view j(joined);
    const std::string_view name = j.substr(0, j.size() / 2);
    const std::string_view value = j.substr(j.size() / 2);
    const bool fits = size <= fast.max_size();
    EXPECT_EQ(fast.Insert(name, value, 1), fits) << size;
    EXPECT_EQ(slow.Insert(name, value, 1), fits) << size;
    m.Insert(std::string(name), std::string(value), 1);
    ExpectSame(fast, m);
    ExpectSame(slow, m);
  };
  insert(256, 'a');  // Exactly max_size, into the empty table.
  insert(33, 'b');   // Evicts it.
  insert(200, 'c');  // Evicts nothing: 233.
  set_max(100);      // Evicts both; capacity stays 256.
  insert(33, 'd');
  insert(68, 'e');  // 101 > 100: evicts 'd'.
  insert(100, 'f');
  insert(101, 'g');  // Larger than max_size (but not the storage): empties.
  EXPECT_EQ(fast.num_entries(), 0u);
  set_max(0);
  insert(32, 'h');  // The smallest entry, larger than max_size 0.
  set_max(1000);    // Above the storage's capacity: the next inserts grow it.
  for (char c = 'i'; c <= 'r'; ++c) insert(90, c);
  insert(1000, 's');
  insert(1001, 't');
  EXPECT_EQ(fast.capacity(), slow.capacity());
}

TEST(DynamicTableTest, LookupFindsNewestAndForgetsEvicted) {
  DynamicTable t(200, /*enable_lookup=*/true);
  const auto field = [](const char* n, const char* v) {
    return HashField(HashString(n), HashString(v));
  };
  t.Insert("x-a", "1");
  t.Insert("x-a", "2");
  t.Insert("x-b", "1");
  EXPECT_EQ(t.FindName(HashString("x-a"), "x-a"), 1);
  EXPECT_EQ(t.FindField(field("x-a", "1"), "x-a", "1"), 2);
  EXPECT_EQ(t.FindField(field("x-a", "2"), "x-a", "2"), 1);
  EXPECT_EQ(t.FindField(field("x-a", "3"), "x-a", "3"), -1);
  EXPECT_EQ(t.FindName(HashString("x-c"), "x-c"), -1);
  // A wrong hash for the right strings, or the right hash for wrong strings,
  // misses.
  EXPECT_EQ(t.FindField(field("x-a", "1"), "x-a", "2"), -1);
  t.Insert("x-c",
           std::string(100, 'c'));  // 135: evicts x-a:1 and x-a:2 (36 each).
  EXPECT_EQ(t.FindField(field("x-a", "1"), "x-a", "1"), -1);
  EXPECT_EQ(t.FindName(HashString("x-a"), "x-a"), -1);
  EXPECT_EQ(t.FindName(HashString("x-b"), "x-b"), 1);
  // A lookup-disabled table never finds anything.
  DynamicTable plain;
  plain.Insert("x-a", "1");
  EXPECT_EQ(plain.FindName(HashString("x-a"), "x-a"), -1);
}

TEST(DynamicTableTest, KeepsFlagsPerEntry) {
  DynamicTable t;
  t.Insert("a", "1", 0);
  t.Insert("B", "2", 1);
  t.Insert("c", "\n", 2);
  EXPECT_EQ(t.flags(0), 2);
  EXPECT_EQ(t.flags(1), 1);
  EXPECT_EQ(t.flags(2), 0);
}

// Random churn against the model: sizes from empty to the whole table exercise
// the byte ring's wrap-around; any overlap would corrupt an older entry's
// bytes. Without lookup, inserts that fit the storage take Insert's inline
// path (reservations and max sizes below the storage's capacity included),
// the others the out-of-line one.
void ChurnAgainstModel(uint32_t capacity, bool lookup) {
  std::mt19937 rng(capacity + 1);
  DynamicTable t(capacity, lookup);
  Model m(capacity);
  uint32_t max_size = capacity;
  for (int step = 0; step < 20000; ++step) {
    const int action = rng() % 100;
    if (action < 3) {
      max_size = rng() % (capacity + 1);
      t.SetMaxSize(max_size);
      m.SetMaxSize(max_size);
    } else if (action < 4) {
      t.Reserve(static_cast<uint32_t>(rng() % (capacity + 1)));
    } else {
      const size_t limit = max_size + 8;
      const size_t total = rng() % 4 == 0 ? rng() % (limit + 1) : rng() % 40;
      const size_t name_len = total == 0 ? 0 : rng() % (total + 1);
      std::string name(name_len, static_cast<char>('a' + step % 26));
      std::string value(total - name_len, static_cast<char>('A' + step % 26));
      if (!name.empty()) name[0] = static_cast<char>('0' + step % 10);
      const uint8_t flags = static_cast<uint8_t>(rng() % 4);
      if (rng() % 2 == 0) {
        t.Insert(name, value, flags);
      } else {
        // Name and value adjacent in one buffer, as the decoder passes them:
        // Place's one-copy path (16-32 octets in two 16-octet moves).
        const std::string joined = name + value;
        const std::string_view j(joined);
        t.Insert(j.substr(0, name.size()), j.substr(name.size()), flags);
      }
      m.Insert(name, value, flags);
    }
    ASSERT_NO_FATAL_FAILURE(ExpectSame(t, m)) << capacity << " step " << step;
    if (lookup && !m.entries().empty()) {
      const size_t i = rng() % m.entries().size();
      const ModelEntry& e = m.entries()[i];
      const long found = t.FindField(
          HashField(HashString(e.name), HashString(e.value)), e.name, e.value);
      ASSERT_GE(found, 0);
      ASSERT_EQ(t.name(found), e.name);
      ASSERT_EQ(t.value(found), e.value);
      // Newest equal entry.
      for (long j = 0; j < found; ++j) {
        ASSERT_FALSE(m.entries()[j].name == e.name &&
                     m.entries()[j].value == e.value);
      }
      const long by_name = t.FindName(HashString(e.name), e.name);
      ASSERT_GE(by_name, 0);
      ASSERT_LE(by_name, static_cast<long>(i));
      ASSERT_EQ(t.name(by_name), e.name);
    }
  }
}

TEST(DynamicTableTest, AgreesWithModelUnderRandomChurn) {
  for (const bool lookup : {true, false}) {
    for (uint32_t capacity : {0u, 64u, 256u, 4096u}) {
      SCOPED_TRACE(lookup ? "lookup" : "no lookup");
      ChurnAgainstModel(capacity, lookup);
    }
  }
}

// A moved-to table has the entries; the moved-from one is empty and usable
// (the member-wise move left it counting entries in storage it no longer
// owned: ASan reported the use after free).
TEST(DynamicTableTest, MovedFromTableIsEmptyAndUsable) {
  for (bool lookup : {false, true}) {
    SCOPED_TRACE(lookup ? "lookup" : "no lookup");
    DynamicTable from(4096, lookup);
    ASSERT_TRUE(from.Insert("name-a", "value-a"));
    ASSERT_TRUE(from.Insert("name-b", "value-b"));
    const uint64_t version = from.version();
    DynamicTable to(std::move(from));
    ASSERT_EQ(to.num_entries(), 2u);
    EXPECT_EQ(to.name(0), "name-b");
    EXPECT_EQ(to.value(1), "value-a");
    EXPECT_GT(to.version(), version);
    // NOLINTNEXTLINE(bugprone-use-after-move): the state under test.
    EXPECT_EQ(from.num_entries(), 0u);
    EXPECT_EQ(from.size(), 0u);
    EXPECT_EQ(from.capacity(), 0u);
    EXPECT_EQ(from.max_size(), 4096u);
    EXPECT_GT(from.version(), version);
    const uint64_t b = HashString("name-b");
    EXPECT_EQ(from.FindName(b, "name-b"), -1);
    EXPECT_EQ(from.FindField(HashField(b, HashString("value-b")), "name-b",
                             "value-b"),
              -1);
    ASSERT_TRUE(from.Insert("name-c", "value-c"));
    ASSERT_EQ(from.num_entries(), 1u);
    EXPECT_EQ(from.name(0), "name-c");
    EXPECT_EQ(from.value(0), "value-c");
    if (lookup) {
      EXPECT_EQ(from.FindName(HashString("name-c"), "name-c"), 0);
    }
    // Assignment over a table with entries, then back.
    to = std::move(from);
    ASSERT_EQ(to.num_entries(), 1u);
    EXPECT_EQ(to.name(0), "name-c");
    EXPECT_EQ(from.num_entries(), 0u);
    from = std::move(to);
    EXPECT_EQ(from.name(0), "name-c");
    EXPECT_EQ(to.num_entries(), 0u);
  }
}

}  // namespace
}  // namespace hpack
