// AdaptiveMutex: the commit path's lock (in-memory commits, the collection horizon).
#include "base/adaptive_mutex.hpp"

#include <algorithm>
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
  threads.reserve(kThreads);
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
  static constexpr std::chrono::nanoseconds kGrace = StreakWait::kShort.grace;
  static constexpr std::chrono::nanoseconds kStreak = StreakWait::kShort.streak;
  StreakWait wait_{kStart};
  StreakBackoff backoff_;
};

TEST_F(StreakWaitTest, ALockFoundFreeForTheGraceIsTakenAndTheNextWaitsSkip) {
  EXPECT_EQ(wait_.look(at(kLook), false), Next::look_again);
  EXPECT_EQ(wait_.look(at(2 * kLook), true), Next::look_again);  // free since here
  EXPECT_EQ(wait_.look(at(2 * kLook + kGrace - kLook), true), Next::look_again);
  EXPECT_EQ(wait_.look(at(2 * kLook + kGrace), true), Next::take);
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
  EXPECT_EQ(wait_.look(at(3 * kLook + kGrace - kLook), true), Next::look_again);
  EXPECT_EQ(wait_.look(at(3 * kLook + kGrace), true), Next::take);
  wait_.took(backoff_);
  EXPECT_EQ(backoff_.skips(), 0U);  // deferring let someone through
}

TEST_F(StreakWaitTest, ATakeThatLostTheRaceCountsAsSomeoneLetThrough) {
  backoff_.let_nobody_through();
  EXPECT_EQ(wait_.look(at(kLook), true), Next::look_again);
  EXPECT_EQ(wait_.look(at(kLook + kGrace), true), Next::take);
  wait_.lost_the_race();
  EXPECT_EQ(wait_.look(at(2 * kLook + kGrace), true), Next::look_again);
  EXPECT_EQ(wait_.look(at(2 * kLook + 2 * kGrace), true), Next::take);
  wait_.took(backoff_);
  EXPECT_EQ(backoff_.skips(), 0U);
}

TEST_F(StreakWaitTest, AWaitThatSawTheLockTakenResetsTheBackoffEvenPastTheStreak) {
  backoff_.let_nobody_through();
  EXPECT_EQ(wait_.look(at(kLook), true), Next::look_again);
  EXPECT_EQ(wait_.look(at(2 * kLook), false), Next::look_again);  // someone took it
  EXPECT_EQ(wait_.look(at(kStreak), true), Next::take);
  wait_.took(backoff_);
  EXPECT_EQ(backoff_.skips(), 0U);
}

TEST_F(StreakWaitTest, AStreakThatRunsOutWithTheLockHeldStopsDeferring) {
  EXPECT_EQ(wait_.look(at(kStreak - kLook), false), Next::look_again);
  EXPECT_EQ(wait_.look(at(kStreak), false), Next::stop_deferring);
}

TEST_F(StreakWaitTest, AfterTheStreakTheFirstFreeLookTakesTheLockAndLeavesTheBackoff) {
  backoff_.let_nobody_through();
  EXPECT_EQ(wait_.look(at(kStreak - kLook), false), Next::look_again);
  EXPECT_EQ(wait_.look(at(kStreak), true), Next::take);  // no grace
  wait_.took(backoff_);
  EXPECT_EQ(backoff_.skips(), 1U);  // a wait cut short says nothing either way
}

TEST_F(StreakWaitTest, TheLongLengthDefersLongerForTheGraceAndTheStreak) {
  StreakWait wait(kStart, StreakWait::kLong);
  ASSERT_GT(StreakWait::kLong.grace, kStreak);
  EXPECT_EQ(wait.look(at(kLook), true), Next::look_again);
  EXPECT_EQ(wait.look(at(kLook + kGrace), true), Next::look_again);  // past the short grace
  EXPECT_EQ(wait.look(at(kLook + StreakWait::kLong.grace), true), Next::take);
  StreakWait held(kStart, StreakWait::kLong);
  EXPECT_EQ(held.look(at(kStreak), false), Next::look_again);  // past the short streak
  EXPECT_EQ(held.look(at(StreakWait::kLong.streak), false), Next::stop_deferring);
}

// StreakTuner, epoch by epoch, on a clock and a count of acquisitions the test sets.
class StreakTunerTest : public ::testing::Test {
 protected:
  using Clock = StreakTuner::Clock;
  static constexpr Clock::time_point kStart{std::chrono::seconds(1)};
  static constexpr std::chrono::nanoseconds kEpoch = StreakTuner::kEpoch;

  // Runs one epoch of `length`, ticking as the holder would where its probe starts
  // counting (kSettle in) and at its end, `per_epoch` acquisitions later; returns the
  // length the tuner asks for at the end.
  bool run_epoch(std::uint64_t per_epoch, std::chrono::nanoseconds length = kEpoch) {
    const std::chrono::nanoseconds settle = std::min(length, StreakTuner::kSettle);
    now_ += settle;
    tuner_.tick(now_, taken_);
    now_ += length - settle;
    taken_ += per_epoch;
    return tuner_.tick(now_, taken_);
  }
  // Runs the probes of a cycle, the lock taken `short_rate` or `long_rate` times an epoch
  // under each length; returns the lengths asked for, epoch by epoch.
  std::vector<bool> run_probes(std::uint64_t short_rate, std::uint64_t long_rate) {
    std::vector<bool> asked;
    bool is_long = current_;
    for (int e = 0; e < StreakTuner::kProbes; ++e) {
      is_long = run_epoch(is_long ? long_rate : short_rate);
      asked.push_back(is_long);
    }
    current_ = is_long;
    return asked;
  }
  // Runs the rest of a cycle at `rate`; true if the tuner kept one length throughout.
  bool run_rest_of_cycle(std::uint64_t rate, bool expect_long) {
    bool kept = true;
    for (int e = StreakTuner::kProbes; e < StreakTuner::kCycle; ++e) {
      const bool is_long = run_epoch(rate);
      if (e + 1 < StreakTuner::kCycle) kept = kept && is_long == expect_long;
      current_ = is_long;
    }
    return kept;
  }

  StreakTuner tuner_;
  Clock::time_point now_ = kStart;
  std::uint64_t taken_ = 0;
  bool current_ = false;
};

TEST_F(StreakTunerTest, ProbesShortLongLongShortThenKeepsTheFasterForTheCycle) {
  ASSERT_FALSE(tuner_.tick(now_, taken_));  // starts short
  // Epochs 0-3 probe short, long, long, short; the tick ending epoch 3 starts epoch 4.
  EXPECT_EQ(run_probes(1000, 3000), (std::vector<bool>{true, true, false, true}));
  EXPECT_TRUE(tuner_.chose_long());
  EXPECT_TRUE(run_rest_of_cycle(2000, true));
  EXPECT_FALSE(current_);  // the next cycle starts with a short probe
  // A workload where the short length is the faster one: the next cycle goes back.
  EXPECT_EQ(run_probes(3000, 1000), (std::vector<bool>{true, true, false, false}));
  EXPECT_FALSE(tuner_.chose_long());
  EXPECT_TRUE(run_rest_of_cycle(2000, false));
}

TEST_F(StreakTunerTest, TheShortLengthMustBeFasterByTheMarginToBeChosen) {
  ASSERT_FALSE(tuner_.tick(now_, taken_));
  run_probes(1050, 1000);  // 5 % faster: under the margin
  EXPECT_TRUE(tuner_.chose_long());
  EXPECT_TRUE(run_rest_of_cycle(1000, true));
  run_probes(1200, 1000);  // 20 % faster
  EXPECT_FALSE(tuner_.chose_long());
}

TEST_F(StreakTunerTest, ComparesRatesNotCountsWhenEpochsDifferInLength) {
  ASSERT_FALSE(tuner_.tick(now_, taken_));
  // Long: 1,500 in 1.5 epochs is slower than short's 1,200 an epoch.
  run_epoch(1200);                  // short
  run_epoch(1500, kEpoch * 3 / 2);  // long
  run_epoch(1500, kEpoch * 3 / 2);  // long
  EXPECT_FALSE(run_epoch(1200));    // short; the choice: short
  EXPECT_FALSE(tuner_.chose_long());
}

TEST_F(StreakTunerTest, AnIdleEpochIsNotCounted) {
  ASSERT_FALSE(tuner_.tick(now_, taken_));
  run_probes(1000, 3000);
  ASSERT_TRUE(tuner_.chose_long());
  EXPECT_TRUE(run_rest_of_cycle(2000, true));
  // Both short probes span an idle lock: counted, their acquisitions would make short the
  // faster, so the choice stays long only if they are left out.
  const std::chrono::nanoseconds idle = StreakTuner::kIdle + kEpoch;
  run_epoch(100000, idle);               // short, idle
  run_epoch(100);                        // long
  run_epoch(100);                        // long
  EXPECT_TRUE(run_epoch(100000, idle));  // short, idle
  EXPECT_TRUE(tuner_.chose_long());
  EXPECT_TRUE(run_rest_of_cycle(2000, true));
  // One short probe idle, the other counted on its own: short wins on that one.
  run_epoch(100000, idle);        // short, idle
  run_epoch(100);                 // long
  run_epoch(100);                 // long
  EXPECT_FALSE(run_epoch(1000));  // short, counted
  EXPECT_FALSE(tuner_.chose_long());
}

TEST_F(StreakTunerTest, ProbesThatMeasureOneLengthOnlyChooseIt) {
  ASSERT_FALSE(tuner_.tick(now_, taken_));
  // The long length slows the lock past counting (its probes idle by the clock): short.
  const std::chrono::nanoseconds idle = StreakTuner::kIdle + kEpoch;
  run_epoch(1000);                // short
  run_epoch(64, idle);            // long, too slow to count
  run_epoch(64, idle);            // long, too slow to count
  EXPECT_FALSE(run_epoch(1000));  // short
  EXPECT_FALSE(tuner_.chose_long());
  EXPECT_TRUE(run_rest_of_cycle(2000, false));
  // Neither measured: the last choice stays.
  run_epoch(64, idle);
  run_epoch(64, idle);
  run_epoch(64, idle);
  EXPECT_FALSE(run_epoch(64, idle));
  EXPECT_FALSE(tuner_.chose_long());
}

TEST_F(StreakTunerTest, AProbeLeavesOutTheWaitsBegunUnderTheOtherLength) {
  ASSERT_FALSE(tuner_.tick(now_, taken_));
  // Long's probes take many acquisitions within a long streak of their start (waits begun
  // under the short length) and few after it: counted, those would make long the faster.
  const std::chrono::nanoseconds streak = StreakWait::kLong.streak;
  run_epoch(1000);               // short
  for (int e = 0; e < 2; ++e) {  // long
    for (int half = 0; half < 2; ++half) {
      now_ += streak / 2;
      taken_ += 50000;
      tuner_.tick(now_, taken_);
    }
    now_ += kEpoch - streak;
    taken_ += 100;
    ASSERT_EQ(tuner_.tick(now_, taken_), e == 0);
  }
  EXPECT_FALSE(run_epoch(1000));  // short
  EXPECT_FALSE(tuner_.chose_long());
}

TEST_F(StreakTunerTest, TicksWithinAnEpochChangeNothing) {
  ASSERT_FALSE(tuner_.tick(now_, taken_));
  EXPECT_FALSE(run_epoch(500, kEpoch / 2));
  EXPECT_TRUE(run_epoch(500, kEpoch / 2));  // epoch 0 ends: the long probe starts
  EXPECT_TRUE(run_epoch(5, kEpoch / 4));
}

// A waiter under the long length defers while the lock is held for the whole long streak
// before it stops deferring and sleeps. A lower bound only: a waiter that used the short
// length would sleep after about a hundredth of it.
TEST(AdaptiveMutex, AWaiterUnderLongStreaksDefersForTheLongStreakBeforeSleeping) {
  AdaptiveMutex mu(AdaptiveMutex::Policy::streaks);
  mu.use_long_streaks(true);
  mu.lock();
  const auto start = std::chrono::steady_clock::now();
  std::thread waiter([&] { std::lock_guard lock(mu); });
  while (!mu.has_sleepers()) std::this_thread::yield();
  EXPECT_GE(std::chrono::steady_clock::now() - start, StreakWait::kLong.streak);
  mu.unlock();
  waiter.join();
}

TEST(AdaptiveMutex, LongStreaksAreTheOwnersChoice) {
  AdaptiveMutex mu(AdaptiveMutex::Policy::streaks);
  EXPECT_FALSE(mu.long_streaks());
  mu.use_long_streaks(true);
  EXPECT_TRUE(mu.long_streaks());
  mu.use_long_streaks(false);
  EXPECT_FALSE(mu.long_streaks());
}

}  // namespace
}  // namespace strata::base
