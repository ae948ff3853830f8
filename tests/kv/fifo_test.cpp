#include "kv/fifo.hpp"

#include <cstdint>
#include <deque>
#include <random>

#include <gtest/gtest.h>

namespace strata::kv {
namespace {

// Random pushes and pops, in bursts that grow the ring, wrap around it and drain it,
// against std::deque.
TEST(Fifo, MatchesADequeThroughGrowthWrapAndDrain) {
  Fifo<std::uint64_t> fifo;
  std::deque<std::uint64_t> model;
  std::mt19937_64 rng(5);
  std::uint64_t next = 0;
  for (int round = 0; round < 400; ++round) {
    const int pushes = static_cast<int>(rng() % 300);
    const int pops = static_cast<int>(rng() % 300);
    for (int i = 0; i < pushes; ++i) {
      fifo.push_back(next);
      model.push_back(next++);
    }
    for (int i = 0; i < pops && !model.empty(); ++i) {
      ASSERT_EQ(fifo.front(), model.front());
      fifo.pop_front();
      model.pop_front();
    }
    ASSERT_EQ(fifo.size(), model.size());
    ASSERT_EQ(fifo.empty(), model.empty());
    for (std::size_t i = 0; i < model.size(); i += 17) ASSERT_EQ(fifo[i], model[i]);
  }
}

TEST(Fifo, ARingLargerThanKeptIsGivenBackWhenEmptyAndWorksAfter) {
  Fifo<int> fifo;
  for (int i = 0; i < 100000; ++i) fifo.push_back(i);
  for (int i = 0; i < 100000; ++i) {
    ASSERT_EQ(fifo.front(), i);
    fifo.pop_front();
  }
  EXPECT_TRUE(fifo.empty());
  fifo.push_back(7);
  fifo.push_back(8);
  EXPECT_EQ(fifo.front(), 7);
  fifo.pop_front();
  EXPECT_EQ(fifo.front(), 8);
  EXPECT_EQ(fifo.size(), 1u);
}

}  // namespace
}  // namespace strata::kv
