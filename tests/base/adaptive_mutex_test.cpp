// AdaptiveMutex: the commit path's lock (in-memory commits, the collection horizon).
#include "base/adaptive_mutex.hpp"

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
// preempted, so waiters both spin and sleep. A lost update shows a broken exclusion (and
// ThreadSanitizer reports the race).
TEST(AdaptiveMutex, ExcludesAcrossManyThreads) {
  AdaptiveMutex mu;
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
