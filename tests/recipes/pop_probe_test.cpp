// The pop probe (recipes/pop_probe.hpp): pops work with none installed, as in real use, and
// an installed probe sees exactly the pops made while it is installed, from either recipe
// and either mode.
#include <cstdint>
#include <optional>
#include <string>

#include <gtest/gtest.h>

#include "strata/database.hpp"
#include "strata/priority_queue.hpp"
#include "strata/queue.hpp"
#include "strata/subspace.hpp"
#include "strata/tuple.hpp"

#include "pop_probe_util.hpp"
#include "recipes/contention.hpp"
#include "recipes/high_contention.hpp"

namespace strata {
namespace {

using recipestest::CountingProbe;
using recipestest::PopEvent;
using recipestest::ScopedPopProbe;

class PopProbeModes : public ::testing::TestWithParam<bool> {};

INSTANTIATE_TEST_SUITE_P(Modes, PopProbeModes, ::testing::Values(false, true),
                         [](const auto& param_info) {
                           return param_info.param ? "HighContention" : "Simple";
                         });

TEST_P(PopProbeModes, PopsWorkWithNoProbeInstalled) {
  recipes_detail::install_pop_probe(nullptr);
  Database db = Database::open();
  const Queue q(Subspace(Tuple{"Q"}), GetParam());
  const PriorityQueue pq(Subspace(Tuple{"PQ"}), GetParam());
  q.enqueue(db, "a");
  q.enqueue(db, "b");
  pq.push(db, "low", Element(std::int64_t{1}));
  pq.push(db, "high", Element(std::int64_t{9}));
  EXPECT_EQ(q.dequeue(db), "a");
  std::string out;
  EXPECT_TRUE(q.dequeue(db, out));
  EXPECT_EQ(out, "b");
  EXPECT_EQ(q.dequeue(db), std::nullopt);
  EXPECT_EQ(pq.pop_max(db), "high");
  EXPECT_EQ(pq.pop_min(db), "low");
  EXPECT_EQ(pq.pop_min(db), std::nullopt);
}

// One client, so nothing conflicts: every pop is one transaction with one commit, whether it
// finds an item or not, and nothing retries, waits or skips the fast path. The contention
// hints are the process's, keyed by the queue's name: an earlier test's lost race may have
// closed the fast path for these names, so they start over here.
TEST_P(PopProbeModes, ACountingProbeCountsExactlyThePopsMadeWhileInstalled) {
  Database db = Database::open();
  const Queue q(Subspace(Tuple{"Q"}), GetParam());
  const PriorityQueue pq(Subspace(Tuple{"PQ"}), GetParam());
  auto start_over = [](const Subspace& items, const Tuple& requests) {
    recipes_detail::contention_hints(recipes_detail::bookkeeping(items, requests).key()).reset();
  };
  start_over(q.subspace(), Tuple{"pop"});
  start_over(pq.subspace(), Tuple{"pop", "min"});
  start_over(pq.subspace(), Tuple{"pop", "max"});
  for (int i = 0; i < 10; ++i) q.enqueue(db, "item " + std::to_string(i));
  for (int i = 0; i < 4; ++i) pq.push(db, "p", Element(std::int64_t{i}));

  EXPECT_EQ(q.dequeue(db), "item 0");  // before: not counted
  CountingProbe counts;
  {
    const ScopedPopProbe installed(counts);
    EXPECT_EQ(q.dequeue(db), "item 1");
    std::string out;
    EXPECT_TRUE(q.dequeue(db, out));
    EXPECT_EQ(pq.pop_min(db), "p");
    EXPECT_EQ(pq.pop_max(db), "p");
    EXPECT_TRUE(pq.pop_min(db, out));
    EXPECT_TRUE(pq.pop_max(db, out));
    EXPECT_EQ(pq.pop_min(db), std::nullopt);  // an empty pop is a pop too
  }
  EXPECT_EQ(q.dequeue(db), "item 3");  // after: not counted
  EXPECT_EQ(pq.pop_max(db), std::nullopt);

  EXPECT_EQ(counts[PopEvent::pop], 7U);
  EXPECT_EQ(counts.commits(), 7U);
  for (PopEvent event : {PopEvent::retry, PopEvent::fulfil_race, PopEvent::fast_path_loss,
                         PopEvent::sleep, PopEvent::help, PopEvent::fast_path_skip}) {
    EXPECT_EQ(counts[event], 0U) << "event " << static_cast<int>(event);
  }
}

}  // namespace
}  // namespace strata
