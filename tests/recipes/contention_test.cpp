// The contention hints (recipes/contention.hpp): the fast-path gate closes for `penalty`
// pops after a loss, a loss soon after it reopens doubles the penalty, and reset() brings
// back the hints a process starts with.
#include "recipes/contention.hpp"

#include <chrono>

#include <gtest/gtest.h>

namespace strata::recipes_detail {
namespace {

using std::chrono::microseconds;

// Pops the gate refuses, up to `most`, until it opens.
int closed_pops(ContentionHints& hints, int most) {
  int closed = 0;
  while (closed < most && !hints.fast_path_open()) ++closed;
  return closed;
}

TEST(ContentionHints, ALossClosesTheGateForThePenaltyAndAnotherDoublesIt) {
  ContentionHints hints;
  EXPECT_TRUE(hints.fast_path_open());
  hints.fast_path_lost();
  hints.fast_path_lost();  // a second loser of the same race closes it only once
  EXPECT_EQ(closed_pops(hints, 10'000), ContentionHints::kFirstPenalty);
  hints.fast_path_lost();
  EXPECT_EQ(closed_pops(hints, 10'000), 2 * ContentionHints::kFirstPenalty);
}

TEST(ContentionHints, ResetOpensTheGateAndForgetsWhatWasLearned) {
  ContentionHints hints;
  hints.pass_lost(microseconds(300));  // also a fast-path loss: the gate closes
  EXPECT_FALSE(hints.fast_path_open());
  EXPECT_EQ(hints.help_bound(microseconds(1)), microseconds(600));
  hints.reset();
  EXPECT_TRUE(hints.fast_path_open());
  EXPECT_EQ(hints.help_bound(microseconds(1)), microseconds(1));
  hints.fast_path_lost();
  EXPECT_EQ(closed_pops(hints, 10'000), ContentionHints::kFirstPenalty);
}

}  // namespace
}  // namespace strata::recipes_detail
