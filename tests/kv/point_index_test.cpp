#include "kv/point_index.hpp"

#include <atomic>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

namespace strata::kv {
namespace {

struct TestNode {
  std::string k;
  std::string_view key() const { return k; }
};

using Index = PointIndex<TestNode>;

std::string key_of(int i) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "k%06d", i);
  return buf;
}

// Owns the nodes and the tables an index retires; frees them when the test ends, as the
// store would once no reader holds them.
class Owner {
 public:
  TestNode* node(std::string key) {
    nodes_.push_back(std::make_unique<TestNode>(TestNode{std::move(key)}));
    return nodes_.back().get();
  }
  void retire(Index::Table* t) {
    if (t != nullptr) tables_.push_back(t);
  }
  // A node for `key`, inserted into `index`.
  TestNode* insert(Index& index, std::string key) {
    TestNode* n = node(std::move(key));
    retire(index.insert(n));
    return n;
  }
  // Nodes for key_of(from) .. key_of(to - 1), inserted into `index`, appended to `out`.
  void insert_range(Index& index, int from, int to, std::vector<TestNode*>& out) {
    for (int i = from; i < to; ++i) out.push_back(insert(index, key_of(i)));
  }
  std::size_t retired() const { return tables_.size(); }
  ~Owner() {
    for (Index::Table* t : tables_) Index::destroy(t);
  }

 private:
  std::vector<std::unique_ptr<TestNode>> nodes_;
  std::vector<Index::Table*> tables_;
};

TEST(PointIndex, EmptyIndexFindsNothing) {
  Index index;
  EXPECT_EQ(index.find(""), nullptr);
  EXPECT_EQ(index.find("a"), nullptr);
  EXPECT_EQ(index.size(), 0U);
}

TEST(PointIndex, FindsExactKeysOnly) {
  Owner owner;
  Index index;
  TestNode* a = owner.node("a");
  TestNode* ab = owner.node("ab");
  TestNode* empty = owner.node("");
  for (TestNode* n : {a, ab, empty}) owner.retire(index.insert(n));
  EXPECT_EQ(index.find("a"), a);
  EXPECT_EQ(index.find("ab"), ab);
  EXPECT_EQ(index.find(""), empty);
  EXPECT_EQ(index.find("b"), nullptr);
  EXPECT_EQ(index.find(std::string("a\0", 2)), nullptr);
}

TEST(PointIndex, GrowsAndKeepsEveryKey) {
  Owner owner;
  Index index;
  const int n = 100000;
  std::vector<TestNode*> nodes;
  owner.insert_range(index, 0, n, nodes);
  EXPECT_GT(owner.retired(), 0U) << "the table never grew";
  EXPECT_EQ(index.size(), static_cast<std::size_t>(n));
  // Between the rebuild load and the maximum load.
  EXPECT_LE(index.capacity(), static_cast<std::size_t>(n) * 100 / 72 + 2);
  EXPECT_GE(index.capacity(), static_cast<std::size_t>(n) * 100 / 90);
  for (int i = 0; i < n; ++i) ASSERT_EQ(index.find(key_of(i)), nodes[i]) << i;
  EXPECT_EQ(index.find(key_of(n)), nullptr);
}

// Growth into a table of huge pages is prepared ahead: from 85 % load the next table is
// mapped, and advance() faults in one 2 MiB page of it per call, no further than the
// current table's fill from 85 % to 90 % asks for; the growth then uses it.
TEST(PointIndex, GrowthIntoHugePagesIsPreparedAhead) {
  constexpr std::size_t kPage = std::size_t{2} << 20;
  Owner owner;
  Index index;
  std::vector<TestNode*> nodes;
  int next = 0;
  // Until a table whose successor spans three huge pages or more (over 4 MiB) reaches its
  // preparing load.
  while (index.prepared_bytes() == 0 || index.capacity() < 500000) {
    ASSERT_LT(next, 2000000) << "no growth was ever prepared";
    nodes.push_back(owner.insert(index, key_of(next++)));
  }
  EXPECT_FALSE(index.migrating());
  EXPECT_TRUE(index.advancing()) << "a prepared table is faulted in by advance()";
  const std::size_t before_growth = index.capacity();
  EXPECT_GT(index.size(), before_growth * 85 / 100 - 2);
  EXPECT_EQ(index.prepared_bytes(), kPage) << "only the header page is touched at first";
  // At the band's start the table wants no more than its first pages, however often the
  // writer calls.
  for (int i = 0; i < 64; ++i) owner.retire(index.advance());
  const std::size_t early = index.prepared_bytes();
  EXPECT_LE(early, 2 * kPage);
  // Just below the growth it wants the whole table: one page per advance() until then.
  const std::size_t full = before_growth * 90 / 100 - 1;
  while (index.size() < full) nodes.push_back(owner.insert(index, key_of(next++)));
  std::size_t faulted = early;
  for (int i = 0; i < 64; ++i) {
    owner.retire(index.advance());
    if (index.prepared_bytes() == faulted) break;
    EXPECT_EQ(index.prepared_bytes(), faulted + kPage);
    faulted = index.prepared_bytes();
  }
  EXPECT_GT(faulted, early) << "the rest of the table is wanted by then";
  EXPECT_FALSE(index.migrating());
  while (!index.migrating()) nodes.push_back(owner.insert(index, key_of(next++)));
  EXPECT_EQ(index.prepared_bytes(), 0U) << "the prepared table is now the current one";
  EXPECT_GE(index.capacity(), index.size() * 100 / 72);
  EXPECT_LE(index.capacity(), index.size() * 100 / 72 + 2);
  while (index.migrating()) owner.retire(index.advance());
  for (int i = 0; i < next; ++i) ASSERT_EQ(index.find(key_of(i)), nodes[i]) << i;
}

// A reserve sizes the table for the given count at once: the index then fills to it with
// no further growth, and keeps every key it held before (copied over as usual).
TEST(PointIndex, AReserveMakesRoomForThatManyKeys) {
  Owner owner;
  Index index;
  std::vector<TestNode*> nodes;
  owner.insert_range(index, 0, 1000, nodes);
  const std::size_t before = owner.retired();
  const int n = 50000;
  EXPECT_FALSE(index.advancing()) << "a small table prepares no successor";
  owner.retire(index.reserve(n));
  EXPECT_TRUE(index.migrating()) << "the 1,000 keys are copied over incrementally";
  EXPECT_TRUE(index.advancing());
  const std::size_t capacity = index.capacity();
  EXPECT_GE(capacity * 90 / 100, static_cast<std::size_t>(n));
  EXPECT_LE(capacity, static_cast<std::size_t>(n) * 100 / 72 + 2);
  // Every key stays findable while the copy runs, and the later keys cause no growth.
  for (int i = 0; i < 1000; ++i) ASSERT_EQ(index.find(key_of(i)), nodes[i]) << i;
  owner.insert_range(index, 1000, n, nodes);
  EXPECT_EQ(index.capacity(), capacity) << "the table grew after all";
  EXPECT_FALSE(index.migrating());
  EXPECT_FALSE(index.advancing()) << "the copy is over and no successor is prepared";
  EXPECT_EQ(owner.retired(), before + 1) << "only the small table was replaced";
  for (int i = 0; i < n; ++i) ASSERT_EQ(index.find(key_of(i)), nodes[i]) << i;
}

TEST(PointIndex, AReserveWithinTheCurrentRoomChangesNothing) {
  Owner owner;
  Index index;
  std::vector<TestNode*> nodes;
  owner.insert_range(index, 0, 10000, nodes);
  while (index.migrating()) owner.retire(index.advance());
  const std::size_t capacity = index.capacity();
  EXPECT_EQ(index.reserve(capacity * 90 / 100), nullptr);
  EXPECT_EQ(index.reserve(10), nullptr);
  EXPECT_EQ(index.capacity(), capacity);
  EXPECT_FALSE(index.migrating());
}

// A reserve that lands while a growth's copy runs finishes that copy first.
TEST(PointIndex, AReserveDuringAMigrationKeepsEveryKey) {
  Owner owner;
  Index index;
  std::vector<TestNode*> nodes;
  int next = 0;
  while (!index.migrating() || index.size() < 5000) {
    nodes.push_back(owner.insert(index, key_of(next++)));
  }
  owner.retire(index.reserve(100000));
  owner.insert_range(index, next, 20000, nodes);
  while (index.migrating()) owner.retire(index.advance());
  for (int i = 0; i < 20000; ++i) ASSERT_EQ(index.find(key_of(i)), nodes[i]) << i;
  EXPECT_GE(index.capacity() * 90 / 100, 100000U);
}

TEST(PointIndex, ErasedKeysAreGoneAndTheTableShrinks) {
  Owner owner;
  Index index;
  const int n = 20000;
  std::vector<TestNode*> nodes;
  owner.insert_range(index, 0, n, nodes);
  std::size_t full = index.capacity();
  for (int i = 0; i < n; i += 2) owner.retire(index.erase(nodes[i]));
  for (int i = 0; i < n; ++i) {
    ASSERT_EQ(index.find(key_of(i)), i % 2 == 0 ? nullptr : nodes[i]) << i;
  }
  for (int i = 1; i < n - 10; i += 2) owner.retire(index.erase(nodes[i]));
  EXPECT_LT(index.capacity(), full / 4) << "a mostly empty table should shrink";
  for (int i = n - 9; i < n; i += 2) EXPECT_EQ(index.find(key_of(i)), nodes[i]);
}

// A replaced table is copied out a few slots per call; in between, lookups must find every
// key whichever table holds it, and erases and inserts must land in both as needed.
TEST(PointIndex, EveryKeyIsFoundWhileAMigrationIsUnderway) {
  Owner owner;
  Index index;
  std::map<std::string, TestNode*> model;
  int next = 0;
  auto add = [&] {
    std::string k = key_of(next++);
    model.emplace(k, owner.insert(index, k));
  };
  auto check_all = [&] {
    for (const auto& [k, n] : model) ASSERT_EQ(index.find(k), n) << k;
    ASSERT_EQ(index.find("absent"), nullptr);
  };
  while (next < 5000 || !index.migrating()) add();
  ASSERT_TRUE(index.migrating());
  std::size_t retired = owner.retired();
  check_all();
  // Erase some keys, old and new, mid-migration; they are gone from both tables.
  for (int i = 0; i < next; i += 7) {
    auto it = model.find(key_of(i));
    if (it == model.end()) continue;
    owner.retire(index.erase(it->second));
    model.erase(it);
    ASSERT_EQ(index.find(key_of(i)), nullptr);
  }
  check_all();
  while (index.migrating()) add();
  EXPECT_EQ(owner.retired(), retired + 1) << "the copied-out table is handed back once";
  check_all();
  EXPECT_EQ(index.size(), model.size());
}

// A writer that stops inserting and erasing (updates only) still finishes a migration
// through advance(), which the store calls once per commit.
TEST(PointIndex, AdvanceAloneFinishesAMigration) {
  Owner owner;
  Index index;
  std::vector<TestNode*> nodes;
  while (nodes.size() < 5000 || !index.migrating()) {
    nodes.push_back(owner.insert(index, key_of(static_cast<int>(nodes.size()))));
  }
  std::size_t retired = owner.retired();
  std::size_t steps = 0;
  while (index.migrating()) {
    owner.retire(index.advance());
    ASSERT_LT(++steps, index.capacity()) << "advance() makes no progress";
  }
  EXPECT_EQ(owner.retired(), retired + 1);
  EXPECT_EQ(index.advance(), nullptr);  // nothing to do now
  for (std::size_t i = 0; i < nodes.size(); ++i) {
    ASSERT_EQ(index.find(key_of(static_cast<int>(i))), nodes[i]);
  }
}

// Shrinking from a large table copies many old slots per call, so the small new table
// cannot fill up before the copy is done, however fast inserts follow.
TEST(PointIndex, InsertsRightAfterAShrinkDoNotOverfillTheNewTable) {
  Owner owner;
  Index index;
  std::vector<TestNode*> nodes;
  owner.insert_range(index, 0, 100000, nodes);
  for (int i = 0; i < 99000; ++i) owner.retire(index.erase(nodes[i]));
  owner.insert_range(index, 100000, 160000, nodes);
  for (int i = 0; i < 160000; ++i) {
    ASSERT_EQ(index.find(key_of(i)), i < 99000 ? nullptr : nodes[i]) << i;
  }
  EXPECT_EQ(index.size(), 61000U);
}

// A key unlinked and linked again (a new node) is found as the new node, however many
// times: tombstones are reused or dropped by rebuilds, never left to fill the table.
TEST(PointIndex, ChurnOfOneKeySetStaysBounded) {
  Owner owner;
  Index index;
  std::vector<TestNode*> live;
  owner.insert_range(index, 0, 1000, live);
  std::size_t capacity = index.capacity();
  for (int round = 0; round < 50; ++round) {
    for (int i = 0; i < 1000; ++i) {
      owner.retire(index.erase(live[i]));
      live[i] = owner.insert(index, key_of(i));
    }
  }
  EXPECT_LE(index.capacity(), capacity * 2);
  for (int i = 0; i < 1000; ++i) ASSERT_EQ(index.find(key_of(i)), live[i]);
}

// A queue's pattern: a new key in, the oldest out, a few live at a time. Erased slots go
// back to empty instead of piling up as tombstones, so the minimum-size table is never
// rebuilt.
TEST(PointIndex, ASmallChurningKeySetNeverRebuildsTheTable) {
  Owner owner;
  Index index;
  const std::size_t capacity = index.capacity();
  std::vector<TestNode*> live;
  for (int i = 0; i < 10000; ++i) {
    live.push_back(owner.insert(index, key_of(i)));
    if (live.size() > 3) {
      owner.retire(index.erase(live.front()));
      live.erase(live.begin());
    }
    ASSERT_FALSE(index.migrating()) << "key " << i;
  }
  EXPECT_EQ(index.capacity(), capacity);
  EXPECT_EQ(owner.retired(), 0u);
  for (TestNode* n : live) EXPECT_EQ(index.find(n->k), n);
}

// Keys that share a home slot sit in one run. Erasing one in the middle leaves a
// tombstone (the probe for the ones after it must go on); erasing the last one empties its
// slot and the tombstones before it, and nothing before them. This test sees the "nothing
// before": a walk back past the tombstones would lose the first key. That the slots are
// empty again, not tombstones, shows in ASmallChurningKeySetNeverRebuildsTheTable.
TEST(PointIndex, ErasingTheEndOfARunEmptiesItsTombstonesOnly) {
  Owner owner;
  Index index;
  const std::size_t capacity = index.capacity();
  // Five keys with one home slot in the starting table (home() is the hash's top bits).
  auto home = [&](const std::string& k) {
    return static_cast<std::size_t>((static_cast<Index::Table::Wide>(Index::hash(k)) * capacity) >>
                                    64U);
  };
  std::vector<std::string> same;
  for (int i = 0; same.size() < 5; ++i) {
    if (home(key_of(i)) == home(key_of(0))) same.push_back(key_of(i));
  }
  std::vector<TestNode*> nodes;
  for (const std::string& k : same) nodes.push_back(owner.insert(index, k));
  owner.retire(index.erase(nodes[1]));  // tombstone: 2, 3, 4 lie beyond it
  owner.retire(index.erase(nodes[2]));
  owner.retire(index.erase(nodes[3]));
  EXPECT_EQ(index.find(same[4]), nodes[4]);
  owner.retire(index.erase(nodes[4]));  // the run's end: 4, 3, 2, 1 empty again
  EXPECT_EQ(index.find(same[0]), nodes[0]);
  for (int i = 1; i < 5; ++i) EXPECT_EQ(index.find(same[i]), nullptr) << i;
  // The run is one key long again: new keys of that home fill slots 1, 2, ...
  TestNode* again = owner.insert(index, same[2]);
  EXPECT_EQ(index.find(same[2]), again);
  EXPECT_EQ(index.find(same[0]), nodes[0]);
  EXPECT_EQ(index.size(), 2u);
}

TEST(PointIndex, MatchesMapModelUnderRandomInsertAndErase) {
  Owner owner;
  Index index;
  std::map<std::string, TestNode*> model;
  std::mt19937_64 rng(7);
  for (int step = 0; step < 200000; ++step) {
    std::string k = key_of(static_cast<int>(rng() % 5000));
    auto it = model.find(k);
    if (it == model.end()) {
      model.emplace(k, owner.insert(index, k));
    } else if (rng() % 3 != 0) {
      owner.retire(index.erase(it->second));
      model.erase(it);
    }
    std::string probe = key_of(static_cast<int>(rng() % 5000));
    auto m = model.find(probe);
    ASSERT_EQ(index.find(probe), m == model.end() ? nullptr : m->second) << "step " << step;
  }
  EXPECT_EQ(index.size(), model.size());
}

// Readers look up keys that stay in the index while the writer inserts and erases others
// (growing, shrinking and rebuilding the table): they must always find them. Retired
// tables are freed only after the readers stop, as a pin would guarantee.
TEST(PointIndex, ReadersAlwaysFindStableKeysWhileTheWriterChurns) {
  Owner owner;
  Index index;
  const int stable = 500;
  std::vector<TestNode*> nodes;
  owner.insert_range(index, 0, stable, nodes);
  std::atomic<bool> done{false};
  std::atomic<long> misses{0};
  std::atomic<long> lookups{0};
  std::vector<std::thread> readers;
  for (int r = 0; r < 2; ++r) {
    readers.emplace_back([&, r] {
      std::mt19937 rng(static_cast<unsigned>(r));
      while (!done.load(std::memory_order_acquire)) {
        int i = static_cast<int>(rng() % stable);
        if (index.find(key_of(i)) != nodes[i]) misses.fetch_add(1);
        lookups.fetch_add(1, std::memory_order_relaxed);
      }
    });
  }
  // The readers are running before the churn starts.
  while (lookups.load() < 1000) std::this_thread::yield();
  std::vector<TestNode*> churn;
  for (int round = 0; round < 20; ++round) {
    for (int i = 0; i < 3000; ++i) {
      churn.push_back(owner.insert(index, "c" + key_of(round * 3000 + i)));
    }
    for (TestNode* n : churn) owner.retire(index.erase(n));
    churn.clear();
  }
  done.store(true, std::memory_order_release);
  for (std::thread& t : readers) t.join();
  EXPECT_EQ(misses.load(), 0);
  EXPECT_GT(owner.retired(), 20U);
}

}  // namespace
}  // namespace strata::kv
