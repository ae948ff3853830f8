// PriorityQueue's blocking pops (pop_min_wait, pop_max_wait): the signal and waiter-count
// keys laid out as Queue's (docs/recipes.md), the race a wake-up could be lost in, timeouts,
// and many waiters in both modes. Waiters are awaited on watches of the count, never by
// sleeping.
#include <chrono>
#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "strata/database.hpp"
#include "strata/error.hpp"
#include "strata/priority_queue.hpp"

#include "recipes_test_util.hpp"
#include "support/test_database.hpp"

namespace strata {
namespace {

using namespace std::chrono_literals;
using recipestest::await_present;
using recipestest::expect_items_once;
using recipestest::le64;

// The default priority queue's keys, as docs/recipes.md lays them out: the signal is the
// bare prefix, the waiter count the first key after the items.
const std::string kSignalKey("\x02P\x00", 3);
const std::string kWaitersKey = kSignalKey + "\xff";

std::optional<std::string> committed(Database& db, const std::string& key) {
  Transaction tr = db.create_transaction();
  return tr.get(key);
}

TEST(PriorityQueueSignal, PushBumpsTheSignalOnlyWhileAWaiterIsRegistered) {
  Database db = testing::open_database();
  PriorityQueue pq;
  pq.push(db, "before", 1);
  EXPECT_EQ(pq.pop_min(db), "before");
  EXPECT_EQ(committed(db, kSignalKey), std::nullopt);  // nobody waited: no signal

  std::optional<std::string> got;
  std::thread waiter([&] { got = pq.pop_min_wait(db, 30s); });
  await_present(db, kWaitersKey);
  EXPECT_EQ(committed(db, kWaitersKey), le64(1));
  pq.push(db, "x", 7);
  waiter.join();
  EXPECT_EQ(got, "x");
  EXPECT_EQ(committed(db, kSignalKey), le64(1));
  EXPECT_EQ(committed(db, kWaitersKey), std::nullopt);  // the waiter left; a zero count is cleared
  pq.push(db, "after", 1);
  EXPECT_EQ(committed(db, kSignalKey), le64(1));
}

// A waiter woken by a commit of several pushes takes the lowest (pop_min_wait) or the
// highest (pop_max_wait) of them.
TEST(PriorityQueueSignal, AWokenWaiterTakesItsEndOfThePriorities) {
  Database db = testing::open_database();
  PriorityQueue pq;
  for (bool min : {true, false}) {
    std::optional<std::string> got;
    std::thread waiter([&] { got = min ? pq.pop_min_wait(db, 30s) : pq.pop_max_wait(db, 30s); });
    await_present(db, kWaitersKey);
    db.run([&](Transaction& tr) {
      pq.push(tr, "five", 5);
      pq.push(tr, "one", 1);
      pq.push(tr, "nine", 9);
    });
    waiter.join();
    EXPECT_EQ(got, min ? "one" : "nine");
    db.run([&](Transaction& tr) { tr.clear_range(pq.subspace().range()); });
  }
}

// The race that would lose a wake-up: a push reads "no waiters", then a waiter registers,
// finds the queue empty and sleeps. The push must not commit without signalling: its read
// of the count conflicts, and the retry signals.
TEST(PriorityQueueSignal, PushConflictsWithAWaiterRegisteringAfterItsRead) {
  Database db = testing::open_database();
  PriorityQueue pq;
  Transaction tr = db.create_transaction();
  pq.push(tr, "x", 1);
  db.run([&](Transaction& other) { other.atomic_op(MutationType::add, kWaitersKey, le64(1)); });
  try {
    tr.commit();
    FAIL() << "the push committed without seeing the new waiter";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), static_cast<int>(ErrorCode::not_committed));
    tr.on_error(e);
  }
  pq.push(tr, "x", 1);
  tr.commit();
  EXPECT_EQ(committed(db, kSignalKey), le64(1));
}

// A push reads its level's last item and the waiter count with one reverse read when it
// can: the count is the last key of that read when it exists, else the last item at or above
// the level. Every case (the count, an item of the level, of a higher level, none) must
// number the item as the level's next and signal exactly while the count exists.
TEST(PriorityQueueSignal, PushesNumberOnPastAWaiterCountAndHigherLevels) {
  Database db = testing::open_database();
  PriorityQueue pq;
  pq.push(db, "a5", 5);
  pq.push(db, "a7", 7);
  db.run([&](Transaction& tr) { tr.atomic_op(MutationType::add, kWaitersKey, le64(1)); });
  pq.push(db, "b5", 5);  // the read finds the count: the level is read again
  pq.push(db, "c3", 3);
  pq.push(db, "d9", 9);  // no item at or above the level
  db.run([&](Transaction& tr) { tr.clear(kWaitersKey); });
  pq.push(db, "e5", 5);  // the read finds level 7's item: the level is read again
  pq.push(db, "f7", 7);  // the read finds this level's item
  pq.push(db, "g1", 1);
  Subspace space(Tuple{"P"});
  std::vector<std::pair<std::int64_t, std::int64_t>> seen;
  for (const KeyValue& kv : recipestest::read_all(db, space.range())) {
    Tuple t = space.unpack(kv.key);
    seen.emplace_back(t[0].get<std::int64_t>(), t[1].get<std::int64_t>());
  }
  EXPECT_EQ(seen, (std::vector<std::pair<std::int64_t, std::int64_t>>{
                      {1, 0}, {3, 0}, {5, 0}, {5, 1}, {5, 2}, {7, 0}, {7, 1}, {9, 0}}));
  EXPECT_EQ(committed(db, kSignalKey), le64(3));  // b5, c3 and d9 signalled
  EXPECT_EQ(committed(db, kWaitersKey), std::nullopt);
  EXPECT_EQ(pq.pop_min(db), "g1");
  EXPECT_EQ(pq.pop_max(db), "d9");
}

TEST(PriorityQueueSignal, WithAnEmptyPrefixEveryPushSignals) {
  Database db = testing::open_database();
  PriorityQueue pq{Subspace()};
  pq.push(db, "a", 2);
  pq.push(db, "b", 1);
  EXPECT_EQ(committed(db, ""), le64(2));
  EXPECT_EQ(pq.pop_min_wait(db, 0ms), "b");
}

TEST(PriorityQueueWait, TimesOutOnAnEmptyQueueAndANegativeTimeoutLooksOnce) {
  Database db = testing::open_database();
  PriorityQueue pq;
  const auto start = std::chrono::steady_clock::now();
  EXPECT_EQ(pq.pop_min_wait(db, 50ms), std::nullopt);
  EXPECT_GE(std::chrono::steady_clock::now() - start, 50ms);
  EXPECT_EQ(pq.pop_max_wait(db, -1ms), std::nullopt);
  EXPECT_EQ(pq.pop_max_wait(db, std::chrono::milliseconds::min()), std::nullopt);
  EXPECT_EQ(committed(db, kWaitersKey), std::nullopt);  // no waiter left behind
  pq.push(db, "lo", 1);
  pq.push(db, "hi", 2);
  EXPECT_EQ(pq.pop_max_wait(db, std::chrono::milliseconds::min()), "hi");
  EXPECT_EQ(pq.pop_min_wait(db, 0ms), "lo");
}

class PriorityQueueWaitModes : public ::testing::TestWithParam<bool> {};
INSTANTIATE_TEST_SUITE_P(Modes, PriorityQueueWaitModes, ::testing::Values(false, true),
                         [](const auto& param_info) {
                           return param_info.param ? "HighContention" : "Simple";
                         });

// Waiters of both kinds, registered before any push; each pushed item goes to exactly one.
TEST_P(PriorityQueueWaitModes, ManyWaitersEachItemToExactlyOne) {
  Database db = testing::open_database();
  PriorityQueue pq(Subspace(Tuple{"P"}), GetParam());
  constexpr int kWaiters = 8;
  std::vector<std::optional<std::string>> got(kWaiters);
  std::vector<std::thread> waiters;
  for (int w = 0; w < kWaiters; ++w) {
    waiters.emplace_back([&, w] {
      got[w] = w % 2 == 0 ? pq.pop_min_wait(db, std::chrono::milliseconds::max())
                          : pq.pop_max_wait(db, std::chrono::milliseconds::max());
    });
  }
  await_present(db, kWaitersKey);
  for (int i = 0; i < kWaiters; ++i) pq.push(db, "item" + std::to_string(i), i % 3);
  for (auto& t : waiters) t.join();
  expect_items_once(got);
  EXPECT_EQ(pq.peek_min(db), std::nullopt);
}

}  // namespace
}  // namespace strata
