// AdaptiveMutex: the commit path's lock (in-memory commits, the collection horizon).
#include "base/adaptive_mutex.hpp"

#include <atomic>
#include <chrono>
#include <cstdint>
#include <mutex>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

namespace strata::base {
namespace {

TEST(AdaptiveMutex, UncontendedLockAndUnlock) {
  AdaptiveMutex mu;
  for (int i = 0; i < 3; ++i) {
    std::lock_guard lock(mu);
    EXPECT_FALSE(mu.has_sleepers());
  }
}

// More threads than cores, each adding to a plain counter under the lock: holders are
// preempted, so waiters both spin and sleep (and, with streaks, defer). A lost update
// shows a broken exclusion (and ThreadSanitizer reports the race).
void expect_exclusion(AdaptiveMutex& mu) {
  constexpr int kThreads = 8;
  constexpr int kAdds = 20000;
  std::uint64_t counter = 0;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < kAdds; ++i) {
        std::lock_guard lock(mu);
        counter = counter + 1;
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(counter, std::uint64_t{kThreads} * kAdds);
}

TEST(AdaptiveMutex, ExcludesAcrossManyThreads) {
  AdaptiveMutex mu;
  expect_exclusion(mu);
}

TEST(AdaptiveMutex, ExcludesAcrossManyThreadsWithStreaks) {
  AdaptiveMutex mu(AdaptiveMutex::Policy::streaks);
  expect_exclusion(mu);
}

// A waiter that defers (with streaks) takes the lock once the holder leaves it free, and
// sees what the holder wrote. Whether its looks found the lock free for a whole grace
// depends on the scheduler, so this wait leaves at most one skip; StreakWait's tests
// below drive each of its decisions.
TEST(AdaptiveMutex, ADeferringWaiterTakesTheLockOnceItIsLeftFree) {
  AdaptiveMutex mu(AdaptiveMutex::Policy::streaks);
  std::atomic<bool> arrived{false};
  int value = 0;
  int seen = -1;
  mu.lock();
  std::thread waiter([&] {
    arrived.store(true, std::memory_order_release);
    std::lock_guard lock(mu);
    seen = value;
  });
  while (!arrived.load(std::memory_order_acquire)) std::this_thread::yield();
  value = 42;
  mu.unlock();
  waiter.join();
  EXPECT_EQ(seen, 42);
  EXPECT_LE(mu.streak_skips(), 1U);  // one wait, so at most one skip
}

// A waiter that gave up spinning (and, with streaks, deferring) sleeps until the holder
// unlocks, then sees what the holder wrote before it.
void expect_sleeper_woken(AdaptiveMutex& mu) {
  int value = 0;
  int seen = -1;
  mu.lock();
  std::thread waiter([&] {
    std::lock_guard lock(mu);
    seen = value;
  });
  while (!mu.has_sleepers()) std::this_thread::yield();  // it stopped spinning
  value = 42;
  mu.unlock();
  waiter.join();
  EXPECT_EQ(seen, 42);
  EXPECT_FALSE(mu.has_sleepers());
}

TEST(AdaptiveMutex, ASleepingWaiterIsWokenByTheUnlock) {
  AdaptiveMutex mu;
  expect_sleeper_woken(mu);
}

// With streaks the waiter first defers while the lock stays held, then spins and sleeps.
TEST(AdaptiveMutex, AWaiterWhoseStreakRanOutSleepsUntilTheUnlock) {
  AdaptiveMutex mu(AdaptiveMutex::Policy::streaks);
  expect_sleeper_woken(mu);
  EXPECT_EQ(mu.streak_skips(), 0U);  // the lock never sat free: nothing to skip
}

// The backoff's rule, step by step: waits defer until one lets nobody through; then the
// next 1, 3, 7, ... waits skip, up to kMaxSkips; a wait that lets someone through starts
// over.
TEST(StreakBackoff, SkipsDoubleAfterWaitsThatLetNobodyThroughAndResetAfterOneThatDid) {
  StreakBackoff b;
  EXPECT_TRUE(b.defer());
  EXPECT_TRUE(b.defer());
  const auto skipped_then_deferred = [&](std::uint32_t n) {
    for (std::uint32_t i = 0; i < n; ++i) {
      if (b.defer()) return false;
    }
    return b.defer();
  };
  b.let_nobody_through();
  EXPECT_EQ(b.skips(), 1U);
  EXPECT_TRUE(skipped_then_deferred(1));
  b.let_nobody_through();
  EXPECT_TRUE(skipped_then_deferred(3));
  b.let_nobody_through();
  EXPECT_TRUE(skipped_then_deferred(7));
  b.let_someone_through();
  EXPECT_TRUE(b.defer());
  b.let_nobody_through();
  EXPECT_TRUE(skipped_then_deferred(1));  // from the bottom again
  for (int i = 0; i < 20; ++i) b.let_nobody_through();
  EXPECT_EQ(b.skips(), StreakBackoff::kMaxSkips);
  EXPECT_TRUE(skipped_then_deferred(StreakBackoff::kMaxSkips));
  b.let_nobody_through();  // the level stays at the cap
  EXPECT_EQ(b.skips(), StreakBackoff::kMaxSkips);
  b.let_someone_through();
  EXPECT_EQ(b.skips(), 0U);
  EXPECT_TRUE(b.defer());
}

// StreakWait, look by look, on a clock the test sets.
class StreakWaitTest : public ::testing::Test {
 protected:
  using Next = StreakWait::Next;
  static StreakWait::Clock::time_point at(std::chrono::nanoseconds since_start) {
    return kStart + since_start;
  }
  static constexpr StreakWait::Clock::time_point kStart{std::chrono::seconds(1)};
  static constexpr std::chrono::nanoseconds kLook = std::chrono::nanoseconds(500);
  StreakWait wait_{kStart};
  StreakBackoff backoff_;
};

TEST_F(StreakWaitTest, ALockFoundFreeForTheGraceIsTakenAndTheNextWaitsSkip) {
  EXPECT_EQ(wait_.look(at(kLook), false), Next::look_again);
  EXPECT_EQ(wait_.look(at(2 * kLook), true), Next::look_again);  // free since here
  EXPECT_EQ(wait_.look(at(2 * kLook + StreakWait::kGrace - kLook), true), Next::look_again);
  EXPECT_EQ(wait_.look(at(2 * kLook + StreakWait::kGrace), true), Next::take);
  wait_.took(backoff_);
  EXPECT_EQ(backoff_.skips(), 1U);  // it let nobody through
}

TEST_F(StreakWaitTest, ALockTakenBetweenTwoLooksRestartsTheGraceAndResetsTheBackoff) {
  backoff_.let_nobody_through();
  backoff_.let_nobody_through();
  ASSERT_EQ(backoff_.skips(), 3U);
  EXPECT_EQ(wait_.look(at(kLook), true), Next::look_again);
  EXPECT_EQ(wait_.look(at(2 * kLook), false), Next::look_again);  // someone took it
  EXPECT_EQ(wait_.look(at(3 * kLook), true), Next::look_again);   // the grace starts over
  EXPECT_EQ(wait_.look(at(3 * kLook + StreakWait::kGrace - kLook), true), Next::look_again);
  EXPECT_EQ(wait_.look(at(3 * kLook + StreakWait::kGrace), true), Next::take);
  wait_.took(backoff_);
  EXPECT_EQ(backoff_.skips(), 0U);  // deferring let someone through
}

TEST_F(StreakWaitTest, ATakeThatLostTheRaceCountsAsSomeoneLetThrough) {
  backoff_.let_nobody_through();
  EXPECT_EQ(wait_.look(at(kLook), true), Next::look_again);
  EXPECT_EQ(wait_.look(at(kLook + StreakWait::kGrace), true), Next::take);
  wait_.lost_the_race();
  EXPECT_EQ(wait_.look(at(2 * kLook + StreakWait::kGrace), true), Next::look_again);
  EXPECT_EQ(wait_.look(at(2 * kLook + 2 * StreakWait::kGrace), true), Next::take);
  wait_.took(backoff_);
  EXPECT_EQ(backoff_.skips(), 0U);
}

TEST_F(StreakWaitTest, AWaitThatSawTheLockTakenResetsTheBackoffEvenPastTheStreak) {
  backoff_.let_nobody_through();
  EXPECT_EQ(wait_.look(at(kLook), true), Next::look_again);
  EXPECT_EQ(wait_.look(at(2 * kLook), false), Next::look_again);  // someone took it
  EXPECT_EQ(wait_.look(at(StreakWait::kStreak), true), Next::take);
  wait_.took(backoff_);
  EXPECT_EQ(backoff_.skips(), 0U);
}

TEST_F(StreakWaitTest, AStreakThatRunsOutWithTheLockHeldStopsDeferring) {
  EXPECT_EQ(wait_.look(at(StreakWait::kStreak - kLook), false), Next::look_again);
  EXPECT_EQ(wait_.look(at(StreakWait::kStreak), false), Next::stop_deferring);
}

TEST_F(StreakWaitTest, AfterTheStreakTheFirstFreeLookTakesTheLockAndLeavesTheBackoff) {
  backoff_.let_nobody_through();
  EXPECT_EQ(wait_.look(at(StreakWait::kStreak - kLook), false), Next::look_again);
  EXPECT_EQ(wait_.look(at(StreakWait::kStreak), true), Next::take);  // no grace
  wait_.took(backoff_);
  EXPECT_EQ(backoff_.skips(), 1U);  // a wait cut short says nothing either way
}

}  // namespace
}  // namespace strata::base
