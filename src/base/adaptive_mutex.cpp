#include "base/adaptive_mutex.hpp"

#include <algorithm>

#include "base/futex.hpp"

namespace strata::base {
namespace {

// Looks at the word before sleeping: 100 pauses, meant to last about as long as a few
// commits hold the lock, so a waiter behind a short hold takes it without a futex sleep
// (glibc's adaptive mutex also tries up to 100 times).
constexpr int kSpins = 100;
// Policy::streaks: how often a deferring waiter looks at the lock's word. Each look takes
// the word's line from the holder's CPU, and the holder's next lock or unlock takes it
// back, so a waiter that looked at every pause would slow the streak it waits out.
constexpr std::chrono::nanoseconds kLookEvery = std::chrono::microseconds(2);
// Policy::streaks: how long a waiter whose streak ran out looks at the lock at every pause
// before it waits as a plain waiter: a sleeper would make every unlock a system call.
constexpr std::chrono::nanoseconds kEagerSpin = std::chrono::microseconds(20);

}  // namespace

void AdaptiveMutex::lock_contended() {
  if (streaks_) {
    const std::uint32_t skips = skips_.load(std::memory_order_relaxed);
    if (skips == 0) {
      if (lock_after_streak()) return;
    } else {
      skips_.store(skips - 1, std::memory_order_relaxed);
    }
  }
  for (int spin = 0; spin < kSpins; ++spin) {
    cpu_relax();
    std::int32_t seen = state_.load(std::memory_order_relaxed);
    if (seen == kUnlocked &&
        state_.compare_exchange_weak(seen, kLocked, std::memory_order_acquire)) {
      return;
    }
  }
  // Mark the word "sleepers" before each sleep, so that the holder's unlock wakes one; a
  // thread that gets the lock this way keeps the mark (at worst one wake-up too many).
  while (state_.exchange(kSleepers, std::memory_order_acquire) != kUnlocked) {
    futex_wait(state_, kSleepers);
  }
}

bool AdaptiveMutex::lock_after_streak() {
  // steady_clock is the vDSO's clock_gettime: tens of nanoseconds, against looks
  // microseconds apart.
  using Clock = std::chrono::steady_clock;
  const Clock::time_point start = Clock::now();
  Clock::time_point free_since;
  Clock::time_point next_look = start;
  bool free = false;    // the last look found the lock free (since free_since)
  bool passed = false;  // another thread took the lock while this one deferred
  for (;;) {
    cpu_relax();
    const Clock::time_point now = Clock::now();
    if (now < next_look) continue;
    const bool over = now - start >= kStreak;
    next_look = over ? now : now + kLookEvery;  // past the streak: at every pause
    std::int32_t seen = state_.load(std::memory_order_relaxed);
    if (seen != kUnlocked) {
      passed = passed || free;
      free = false;
      if (now - start >= kStreak + kEagerSpin) return false;
      continue;
    }
    if (!free) {
      free = true;
      free_since = now;
    }
    if (!over && now - free_since < kGrace) continue;
    if (!state_.compare_exchange_weak(seen, kLocked, std::memory_order_acquire)) continue;
    // The lock is this thread's: its line is here, and so are these writes.
    if (passed) {
      if (skips_.load(std::memory_order_relaxed) != 0) skips_.store(0, std::memory_order_relaxed);
    } else if (!over) {  // it sat free for the whole grace: nobody came back to it
      const std::uint32_t skips = skips_.load(std::memory_order_relaxed);
      skips_.store(std::min(2 * skips + 1, kMaxSkips), std::memory_order_relaxed);
    }
    return true;
  }
}

void AdaptiveMutex::wake_one() { futex_wake_one(state_); }

}  // namespace strata::base
