// PriorityQueue recipe: exact key layout, order (equal priorities in push order), both ends,
// and concurrent producers/consumers checked against a log of commit versions.
#include "strata/priority_queue.hpp"

#include <algorithm>
#include <atomic>
#include <deque>
#include <iterator>
#include <map>
#include <mutex>
#include <optional>
#include <random>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "strata/database.hpp"
#include "strata/error.hpp"

#include "recipes_test_util.hpp"
#include "support/error_matchers.hpp"
#include "support/test_database.hpp"

namespace strata {
namespace {

using recipestest::read_all;
using recipestest::scaled;
using testing::ThrowsCode;

TEST(PriorityQueueLayout, KeysArePriorityCountAndTwentyRandomBytes) {
  Database db = testing::open_database();
  PriorityQueue pq;
  pq.push(db, "a", 5);
  pq.push(db, "b", 5);
  pq.push(db, "c", 3);

  Subspace space(Tuple{"P"});
  EXPECT_EQ(space.key(), std::string("\x02P\x00", 3));
  auto rows = read_all(db, space.range());
  ASSERT_EQ(rows.size(), 3u);
  std::vector<std::pair<std::int64_t, std::int64_t>> seen;
  for (const KeyValue& kv : rows) {
    EXPECT_EQ(kv.key.substr(0, 3), std::string("\x02P\x00", 3));
    Tuple t = space.unpack(kv.key);
    ASSERT_EQ(t.size(), 3u);
    ASSERT_TRUE(t[2].is<Bytes>());
    EXPECT_EQ(t[2].get<Bytes>().data.size(), 20u);
    seen.emplace_back(t[0].get<std::int64_t>(), t[1].get<std::int64_t>());
  }
  // Sorted by priority then count; the first count of each priority is 0.
  EXPECT_EQ(seen, (std::vector<std::pair<std::int64_t, std::int64_t>>{{3, 0}, {5, 0}, {5, 1}}));
  EXPECT_EQ(rows[0].value, "c");
  // (5, 1, ...): 02 50 00 | 15 05 | 15 01 | 01 ...
  EXPECT_EQ(rows[2].key.substr(0, 8), std::string("\x02P\x00\x15\x05\x15\x01\x01", 8));
  // A push writes only its item (no signal key, no bookkeeping).
  EXPECT_EQ(recipestest::read_prefix(db, space.key()).size(), 3u);
}

class PriorityQueueModes : public ::testing::TestWithParam<bool> {};
INSTANTIATE_TEST_SUITE_P(Modes, PriorityQueueModes, ::testing::Values(false, true),
                         [](const auto& param_info) {
                           return param_info.param ? "HighContention" : "Simple";
                         });

TEST_P(PriorityQueueModes, OrderAndBothEnds) {
  Database db = testing::open_database();
  PriorityQueue pq(Subspace(Tuple{"P"}), GetParam());
  EXPECT_EQ(pq.pop_min(db), std::nullopt);
  EXPECT_EQ(pq.pop_max(db), std::nullopt);
  EXPECT_EQ(pq.peek_min(db), std::nullopt);
  EXPECT_EQ(pq.peek_max(db), std::nullopt);
  pq.push(db, "m1", 5);
  pq.push(db, "lo1", 1);
  pq.push(db, "hi1", 9);
  pq.push(db, "m2", 5);
  pq.push(db, "lo2", 1);
  pq.push(db, "hi2", 9);
  pq.push(db, "m3", 5);
  EXPECT_EQ(pq.peek_min(db), "lo1");
  EXPECT_EQ(pq.peek_max(db), "hi2");  // the last item: highest priority, latest push
  EXPECT_EQ(pq.peek_min(db), "lo1");  // peeks remove nothing
  EXPECT_EQ(pq.pop_min(db), "lo1");
  EXPECT_EQ(pq.pop_min(db), "lo2");
  EXPECT_EQ(pq.pop_max(db), "hi2");
  EXPECT_EQ(pq.pop_max(db), "hi1");
  EXPECT_EQ(pq.pop_min(db), "m1");  // equal priorities in push order
  EXPECT_EQ(pq.pop_min(db), "m2");
  EXPECT_EQ(pq.pop_max(db), "m3");
  EXPECT_EQ(pq.pop_min(db), std::nullopt);
  EXPECT_TRUE(read_all(db, pq.subspace().range()).empty());
  EXPECT_TRUE(recipestest::read_prefix(db, pq.subspace().key() + "\xff").empty());
}

TEST_P(PriorityQueueModes, PopsIntoABufferTakeBothEndsAndEmptyItWhenNothingIsTaken) {
  Database db = testing::open_database();
  PriorityQueue pq(Subspace(Tuple{"P"}), GetParam());
  std::string out = "stale";
  EXPECT_FALSE(pq.pop_min(db, out));
  EXPECT_EQ(out, "");
  out = "stale";
  EXPECT_FALSE(pq.pop_max(db, out));
  EXPECT_EQ(out, "");
  const std::string big(200, 'x');
  pq.push(db, big + "mid", 5);
  pq.push(db, "lo", 1);
  pq.push(db, big + "hi", 9);
  ASSERT_TRUE(pq.pop_max(db, out));
  EXPECT_EQ(out, big + "hi");
  ASSERT_TRUE(pq.pop_min(db, out));
  EXPECT_EQ(out, "lo");
  ASSERT_TRUE(pq.pop_min(db, out));
  EXPECT_EQ(out, big + "mid");
  EXPECT_FALSE(pq.pop_max(db, out));
  EXPECT_EQ(out, "");
  EXPECT_TRUE(read_all(db, pq.subspace().range()).empty());
}

// Item keys differ in length with their priority (a packed integer takes 1 to 9 bytes) and
// their id (a 00 byte is escaped): pops from both ends on one thread take keys that grow
// and shrink in turn, and each clears exactly the item it read.
TEST_P(PriorityQueueModes, PopsKeysThatGrowAndShrinkInTurn) {
  Database db = testing::open_database();
  PriorityQueue pq(Subspace(Tuple{"P"}), GetParam());
  // Sorted, so that the model's map pops as the queue should.
  std::map<std::int64_t, std::deque<std::string>> model;
  for (int round = 0; round < 20; ++round) {
    for (std::int64_t p : {std::int64_t{300}, std::int64_t{0}, std::int64_t{1} << 40,
                           std::int64_t{-70000}, std::int64_t{7}}) {
      const std::string value = std::to_string(p) + "/" + std::to_string(round);
      pq.push(db, value, p);
      model[p].push_back(value);
    }
  }
  for (int i = 0; !model.empty(); ++i) {
    std::string expected;
    if (i % 2 == 0) {  // the lowest priority's first item
      expected = model.begin()->second.front();
      model.begin()->second.pop_front();
      if (model.begin()->second.empty()) model.erase(model.begin());
      ASSERT_EQ(pq.pop_min(db), expected) << i;
    } else {  // the highest priority's last item
      auto last = std::prev(model.end());
      expected = last->second.back();
      last->second.pop_back();
      if (last->second.empty()) model.erase(last);
      ASSERT_EQ(pq.pop_max(db), expected) << i;
    }
  }
  EXPECT_EQ(pq.pop_min(db), std::nullopt);
  EXPECT_TRUE(read_all(db, pq.subspace().range()).empty());
}

TEST(PriorityQueue, AnyElementOrdersByTupleOrder) {
  Database db = testing::open_database();
  PriorityQueue pq;
  pq.push(db, "s-b", "b");
  pq.push(db, "n", nullptr);  // null sorts first
  pq.push(db, "s-a", "a");
  pq.push(db, "neg", -7);
  Transaction tr = db.create_transaction();
  EXPECT_EQ(pq.pop_min(tr), "n");
  EXPECT_EQ(pq.pop_min(tr), "s-a");  // strings (0x02) before integers (0x14)
  EXPECT_EQ(pq.pop_max(tr), "neg");
  EXPECT_EQ(pq.peek_max(tr), "s-b");
  tr.commit();
  EXPECT_EQ(pq.pop_min(db), "s-b");
  EXPECT_EQ(pq.pop_min(db), std::nullopt);
}

// The trap the header warns of: an integer priority pops before any double, however small
// the double (integer codes 0x0c..0x1c sort before the double's 0x21).
TEST(PriorityQueue, EveryIntegerPriorityPopsBeforeEveryDouble) {
  Database db = testing::open_database();
  PriorityQueue pq;
  pq.push(db, "two and a half", 2.5);
  pq.push(db, "a hundred", 100);
  EXPECT_EQ(pq.pop_min(db), "a hundred");
  EXPECT_EQ(pq.pop_min(db), "two and a half");
}

// A push counts the items of its own level only. Bytes{"a\0"} packs as Bytes{"a"}'s level
// followed by FF 00, so its items sort right after the level of Bytes{"a"} and share its
// bytes: a push of "a" that reads them must see them as a higher level's (push tests a key
// against the level's end, level + FF, without building it), and the pushes of "a" count
// 0, 1 among themselves, as integer levels do beside a higher one.
TEST(PriorityQueue, PushCountsItsLevelAloneWhenAHigherLevelExtendsItsBytes) {
  Database db = testing::open_database();
  PriorityQueue pq;
  const Bytes low{std::string("a")};
  const Bytes high{std::string("a\0", 2)};
  pq.push(db, "high", high);
  pq.push(db, "low-0", low);
  pq.push(db, "low-1", low);
  pq.push(db, "int-0", 7);
  pq.push(db, "int-1", 7);
  Subspace space(Tuple{"P"});
  std::vector<std::pair<std::string, std::int64_t>> seen;
  for (const KeyValue& kv : read_all(db, space.range())) {
    seen.emplace_back(kv.value, space.unpack(kv.key)[1].get<std::int64_t>());
  }
  // Byte strings (01) sort before integers (15).
  EXPECT_EQ(seen, (std::vector<std::pair<std::string, std::int64_t>>{
                      {"low-0", 0}, {"low-1", 1}, {"high", 0}, {"int-0", 0}, {"int-1", 1}}));
  EXPECT_EQ(pq.pop_max(db), "int-1");
  EXPECT_EQ(pq.pop_min(db), "low-0");
  EXPECT_EQ(pq.pop_min(db), "low-1");
  EXPECT_EQ(pq.pop_min(db), "high");
  EXPECT_EQ(pq.pop_min(db), "int-0");
}

TEST(PriorityQueue, NestedTuplePriorityKeysAsTheSubspaceWouldPackThem) {
  Database db = testing::open_database();
  PriorityQueue pq;
  const Element priority(Tuple{"x", 2});
  pq.push(db, "first", priority);
  pq.push(db, "second", priority);
  Subspace level = Subspace(Tuple{"P"})[priority];
  auto rows = read_all(db, level.range());
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(level.unpack(rows[0].key)[0].get<std::int64_t>(), 0);
  EXPECT_EQ(level.unpack(rows[1].key)[0].get<std::int64_t>(), 1);
  EXPECT_EQ(pq.pop_min(db), "first");
  EXPECT_EQ(pq.pop_min(db), "second");
}

TEST(PriorityQueue, IncompleteVersionstampPriorityIsRefusedAndWritesNothing) {
  Database db = testing::open_database();
  PriorityQueue pq;
  Transaction tr = db.create_transaction();
  EXPECT_THAT([&] { pq.push(tr, "v", Element(Versionstamp::incomplete())); },
              ThrowsCode(ErrorCode::invalid_argument));
  tr.commit();
  EXPECT_TRUE(read_all(db, Subspace(Tuple{"P"}).range()).empty());
}

// One push or pop as the log saw it. An item is present at version v iff
// push_version <= v < pop_version.
struct Logged {
  int priority = 0;
  Version push_version = 0;
  Version pop_version = 0;  // 0: never popped
  Version pop_read_version = 0;
};

// 4 producers and 4 consumers through the Transaction& overloads, each commit logged; every
// pop must return an item no greater than any item present at its read version (hence
// throughout its transaction), and every item is popped exactly once.
TEST(PriorityQueueConcurrency, PopMinNeverSkipsASmallerItem) {
  Database db = testing::open_database();
  PriorityQueue pq;
  const int producers = 4, consumers = 4, per_producer = scaled(2000, 1000);
  const int total = producers * per_producer;
  std::vector<Logged> log(total);
  std::atomic<int> popped{0};
  std::atomic<long> push_conflicts{0}, pop_conflicts{0};
  std::vector<std::thread> threads;
  for (int p = 0; p < producers; ++p) {
    threads.emplace_back([&, p] {
      std::mt19937 rng(p);
      Transaction tr = db.create_transaction();
      for (int s = 0; s < per_producer; ++s) {
        int id = p * per_producer + s;
        int priority = static_cast<int>(rng() % 16);
        for (;;) {
          try {
            pq.push(tr, std::to_string(id), priority);
            tr.commit();
            log[id].priority = priority;
            log[id].push_version = tr.committed_version();
            tr.reset();
            break;
          } catch (const Error& e) {
            if (e.error_code() == ErrorCode::not_committed) ++push_conflicts;
            tr.on_error(e);
          }
        }
      }
    });
  }
  std::mutex pops_mu;
  std::vector<int> pop_order;
  for (int c = 0; c < consumers; ++c) {
    threads.emplace_back([&] {
      Transaction tr = db.create_transaction();
      while (popped.load() < total) {
        try {
          auto v = pq.pop_min(tr);
          if (!v) {
            tr.reset();
            std::this_thread::yield();
            continue;
          }
          Version read_version = tr.read_version();
          tr.commit();
          int id = std::stoi(*v);
          log[id].pop_version = tr.committed_version();
          log[id].pop_read_version = read_version;
          {
            std::lock_guard lock(pops_mu);
            pop_order.push_back(id);
          }
          ++popped;
          tr.reset();
        } catch (const Error& e) {
          if (e.error_code() == ErrorCode::not_committed) ++pop_conflicts;
          tr.on_error(e);
        }
      }
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(push_conflicts.load(), 0);

  std::vector<int> count(total, 0);
  for (int id : pop_order) ++count[id];
  EXPECT_EQ(std::count(count.begin(), count.end(), 1), total);

  int violations = 0;
  for (const Logged& pop : log) {
    const Version r = pop.pop_read_version;
    for (const Logged& other : log) {
      if (&other == &pop) continue;
      bool present = other.push_version <= r && r < other.pop_version;
      if (present && other.priority < pop.priority) ++violations;
    }
  }
  EXPECT_EQ(violations, 0);
  std::printf("[ stats    ] pop_min: %d items, %ld pop conflicts\n", total, pop_conflicts.load());
}

// Both modes through the Database& overloads: exactly once, and with the producers done
// first, each consumer sees non-decreasing priorities (pop_min) or non-increasing (pop_max).
TEST_P(PriorityQueueModes, FourProducersFourConsumersExactlyOnce) {
  for (bool max : {false, true}) {
    Database db = testing::open_database();
    PriorityQueue pq(Subspace(Tuple{"P"}), GetParam());
    const int per_producer = scaled(5000, 1000), total = 4 * per_producer;
    std::vector<std::thread> threads;
    for (int p = 0; p < 4; ++p) {
      threads.emplace_back([&, p] {
        std::mt19937 rng(p + 100);
        for (int s = 0; s < per_producer; ++s) {
          int id = p * per_producer + s;
          pq.push(db, std::to_string(rng() % 32) + ":" + std::to_string(id),
                  static_cast<int>(rng() % 32));
        }
      });
    }
    for (auto& t : threads) t.join();
    threads.clear();
    std::vector<std::vector<int>> seen(4);
    for (int c = 0; c < 4; ++c) {
      threads.emplace_back([&, c] {
        for (;;) {
          auto v = max ? pq.pop_max(db) : pq.pop_min(db);
          if (!v) break;
          seen[c].push_back(std::stoi(v->substr(v->find(':') + 1)));
        }
      });
    }
    for (auto& t : threads) t.join();
    std::vector<int> count(total, 0);
    for (auto& s : seen)
      for (int id : s) ++count[id];
    EXPECT_EQ(std::count(count.begin(), count.end(), 1), total);
  }
}

}  // namespace
}  // namespace strata
