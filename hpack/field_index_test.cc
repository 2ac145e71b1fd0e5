#include "hpack/field_index.h"

#include <map>
#include <random>
#include <utility>

#include "gtest/gtest.h"

namespace hpack {
namespace {

TEST(FieldIndexTest, EmptyAndUnresetIndexFindsNothing) {
  FieldIndex index;
  uint32_t id = 7;
  EXPECT_FALSE(index.Find(123, &id));
  index.Erase(123, 0);  // No crash.
  EXPECT_EQ(id, 7u);
}

TEST(FieldIndexTest, InsertReplacesAndEraseChecksTheId) {
  FieldIndex index;
  index.Reset(8);
  index.Insert(42, 1);
  index.Insert(42, 2);  // Newer entry with the same key.
  uint32_t id = 0;
  ASSERT_TRUE(index.Find(42, &id));
  EXPECT_EQ(id, 2u);
  index.Erase(42, 1);  // The older entry's eviction leaves the newer one.
  ASSERT_TRUE(index.Find(42, &id));
  EXPECT_EQ(id, 2u);
  index.Erase(42, 2);
  EXPECT_FALSE(index.Find(42, &id));
  EXPECT_EQ(index.size(), 0u);
}

// Keys that all land in the same home slot: deletion must keep every other key
// reachable.
TEST(FieldIndexTest, CollidingKeysSurviveBackwardShiftDeletion) {
  FieldIndex index;
  index.Reset(8);
  const uint64_t slots = index.slot_count();
  for (uint32_t k = 0; k < 8; ++k) index.Insert(5 + k * slots, k);
  for (uint32_t gone = 0; gone < 8; ++gone) {
    index.Erase(5 + gone * slots, gone);
    for (uint32_t k = 0; k < 8; ++k) {
      uint32_t id = 99;
      EXPECT_EQ(index.Find(5 + k * slots, &id), k > gone) << gone << " " << k;
      if (k > gone) {
        EXPECT_EQ(id, k);
      }
    }
  }
}

TEST(FieldIndexTest, AgreesWithAMapUnderRandomChurn) {
  std::mt19937_64 rng(1);
  FieldIndex index;
  index.Reset(64);
  std::map<uint64_t, uint32_t> model;
  for (int step = 0; step < 200000; ++step) {
    // Few distinct keys with small values: many collisions and wrap-around
    // runs.
    const uint64_t key =
        (rng() % 96) * (step % 3 == 0 ? index.slot_count() : 1) + 3;
    if (model.size() < 64 && rng() % 2 == 0) {
      const uint32_t id = static_cast<uint32_t>(step);
      index.Insert(key, id);
      model[key] = id;
    } else if (!model.empty()) {
      auto it = model.lower_bound(key);
      if (it == model.end()) it = model.begin();
      index.Erase(it->first, it->second);
      model.erase(it);
    }
    ASSERT_EQ(index.size(), model.size());
    if (step % 97 == 0) {
      for (const auto& [k, v] : model) {
        uint32_t id = 0;
        ASSERT_TRUE(index.Find(k, &id)) << step;
        ASSERT_EQ(id, v);
      }
    }
  }
}

// A moved-from index is empty: Find on it must not read the moved slots.
TEST(FieldIndexTest, MovedFromIndexIsEmpty) {
  FieldIndex from;
  from.Reset(8);
  from.Insert(42, 7);
  FieldIndex to(std::move(from));
  uint32_t id = 0;
  EXPECT_TRUE(to.Find(42, &id));
  EXPECT_EQ(id, 7u);
  // NOLINTNEXTLINE(bugprone-use-after-move): the state under test.
  EXPECT_EQ(from.size(), 0u);
  EXPECT_FALSE(from.Find(42, &id));
  from.Reset(8);
  from.Insert(43, 9);
  to = std::move(from);
  EXPECT_TRUE(to.Find(43, &id));
  EXPECT_FALSE(to.Find(42, &id));
  EXPECT_FALSE(from.Find(43, &id));
}

}  // namespace
}  // namespace hpack
