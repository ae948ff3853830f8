// base::RetryBackoff: FoundationDB's wait before a retry (fdbclient/NativeAPI.actor.cpp,
// getBackoff), shared by the C++ API's on_error and the C API's. No clock: the waits are returned,
// not slept.
#include "base/retry_backoff.hpp"

#include <algorithm>
#include <chrono>

#include <gtest/gtest.h>

namespace strata::base {
namespace {

using Seconds = RetryBackoff::Seconds;
constexpr Seconds kOneSecond{1.0};

TEST(RetryBackoff, TooOldAndFutureVersionWaitTenMillisecondsAtMostTheCapAndDoNotGrow) {
  RetryBackoff b;
  EXPECT_EQ(b.next(ErrorCode::transaction_too_old, kOneSecond), Seconds(0.01));
  EXPECT_EQ(b.next(ErrorCode::future_version, kOneSecond), Seconds(0.01));
  EXPECT_EQ(b.next(ErrorCode::transaction_too_old, Seconds(0.002)), Seconds(0.002));
  // The backoff did not grow: a conflict still waits a part of 10 ms.
  EXPECT_LE(b.next(ErrorCode::not_committed, kOneSecond), Seconds(0.01));
}

TEST(RetryBackoff, WaitsARandomPartOfABackoffThatDoublesUpToTheCap) {
  RetryBackoff b;
  Seconds bound{0.01};
  for (int i = 0; i < 12; ++i) {
    Seconds wait = b.next(ErrorCode::not_committed, kOneSecond);
    EXPECT_GE(wait, Seconds(0)) << i;
    EXPECT_LE(wait, bound) << i;
    bound = std::min(bound * 2, kOneSecond);
  }
}

// The cap bounds the backoff from the second retry on; the first waits a part of 10 ms.
TEST(RetryBackoff, ACapOfZeroLeavesOnlyTheFirstWait) {
  RetryBackoff b;
  EXPECT_LE(b.next(ErrorCode::not_committed, Seconds(0)), Seconds(0.01));
  for (int i = 0; i < 5; ++i) EXPECT_EQ(b.next(ErrorCode::not_committed, Seconds(0)), Seconds(0));
  Seconds longest{0};
  for (int i = 0; i < 1000; ++i) {
    RetryBackoff fresh;
    longest = std::max(longest, fresh.next(ErrorCode::not_committed, Seconds(0)));
  }
  // 1,000 uniform draws in [0, 10 ms) all below 9 ms: probability 0.9^1000, ~2e-46.
  EXPECT_GT(longest, Seconds(0.009));
}

TEST(RetryBackoff, ResetStartsAgainAtTenMilliseconds) {
  RetryBackoff b;
  for (int i = 0; i < 10; ++i) b.next(ErrorCode::not_committed, kOneSecond);
  b.reset();
  EXPECT_LE(b.next(ErrorCode::not_committed, kOneSecond), Seconds(0.01));
}

}  // namespace
}  // namespace strata::base
