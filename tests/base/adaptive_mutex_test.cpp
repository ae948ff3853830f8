// AdaptiveMutex: the commit path's lock (in-memory commits, the collection horizon).
#include "base/adaptive_mutex.hpp"

#include <atomic>
#include <chrono>
#include <cstdint>
#include <mutex>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include <sched.h>

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

// A waiter that defers and finds the lock left free takes it once the grace has passed,
// sees what the last holder wrote, and makes the next contended wait skip its streak. The
// waiter may reach lock() only after the unlock (then it takes the lock at once), or find
// its streak over before it (then it takes the lock as a plain waiter), so the test
// repeats, for up to 10 s, until one wait went through the grace. It needs the two threads
// on two CPUs at once.
TEST(AdaptiveMutex, AWaiterTakesALockLeftFreeAfterTheGrace) {
  cpu_set_t cpus;
  CPU_ZERO(&cpus);
  if (sched_getaffinity(0, sizeof(cpus), &cpus) != 0 || CPU_COUNT(&cpus) < 2) {
    GTEST_SKIP() << "needs two CPUs";
  }
  const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  std::uint32_t waits_that_let_nobody_through = 0;
  while (waits_that_let_nobody_through == 0 && std::chrono::steady_clock::now() < give_up) {
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
    // Spins rather than yields: a yield may outlast the waiter's whole streak.
    while (!arrived.load(std::memory_order_acquire)) {
    }
    value = 42;
    mu.unlock();
    waiter.join();
    EXPECT_EQ(seen, 42);
    EXPECT_LE(mu.streak_skips(), 1U);  // one wait, so at most one skip
    waits_that_let_nobody_through += mu.streak_skips();
  }
  EXPECT_GE(waits_that_let_nobody_through, 1U);
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

}  // namespace
}  // namespace strata::base
