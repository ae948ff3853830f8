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
  EXPECT_LE(mu.streak_skips(), AdaptiveMutex::kMaxSkips);
}

// A waiter gets the lock from a thread that takes it again and again for as long as the
// waiter is kept out. Each hold lasts 10 us, so the waiter finds the lock held and
// defers; the lock is free only for the moment between two holds, never for a grace, so
// the waiter gets in once its streak has run out (or when the holder is preempted between
// two holds), then as a plain waiter that spins or sleeps.
TEST(AdaptiveMutex, AWaiterGetsTheLockFromAThreadThatKeepsRetakingIt) {
  AdaptiveMutex mu(AdaptiveMutex::Policy::streaks);
  std::atomic<bool> holding{false};
  std::atomic<bool> got_in{false};
  std::uint64_t retakes = 0;
  std::thread holder([&] {
    while (!got_in.load(std::memory_order_acquire)) {
      std::lock_guard lock(mu);
      ++retakes;
      holding.store(true, std::memory_order_release);
      const auto until = std::chrono::steady_clock::now() + std::chrono::microseconds(10);
      while (std::chrono::steady_clock::now() < until) {
      }
    }
  });
  while (!holding.load(std::memory_order_acquire)) std::this_thread::yield();
  {
    std::lock_guard lock(mu);
    got_in.store(true, std::memory_order_release);
  }
  holder.join();
  EXPECT_GT(retakes, 0U);
}

// A waiter that defers takes a lock that nobody else wants once the grace has passed,
// and sees what the last holder wrote.
TEST(AdaptiveMutex, AWaiterTakesALockLeftFree) {
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
  // A wait that let nobody through makes the next one skip its streak; one that found
  // the lock free took it at once.
  EXPECT_LE(mu.streak_skips(), 1U);
}

// A waiter that gave up spinning sleeps until the holder unlocks, then sees what the
// holder wrote before it.
TEST(AdaptiveMutex, ASleepingWaiterIsWokenByTheUnlock) {
  AdaptiveMutex mu;
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

}  // namespace
}  // namespace strata::base
