#include "base/adaptive_mutex.hpp"

#include <chrono>

#include "base/futex.hpp"

namespace strata::base {
namespace {

// Looks at the word before sleeping: 100 pauses, meant to last about as long as a few
// commits hold the lock, so a waiter behind a short hold takes it without a futex sleep
// (glibc's adaptive mutex also tries up to 100 times).
constexpr int kSpins = 100;

// How often a deferring waiter looks at the lock's word. Each look takes the word's line
// from the holder's CPU, and the holder's next lock or unlock takes it back, so a waiter
// that looked at every pause would slow the streak it waits out.
constexpr std::chrono::nanoseconds kLookEvery = std::chrono::microseconds(2);

static_assert(sizeof(AdaptiveMutex) <= 16, "the word and the streak state share a line");

}  // namespace

void AdaptiveMutex::lock_contended() {
  // A waiter whose streak ran out with the lock held then waits as a plain one: spinning
  // longer would keep its CPU from the threads that share it, while the lock stays away.
  if (!streaks_ || !backoff_.defer() || !lock_after_streak()) spin_then_sleep();
}

void AdaptiveMutex::spin_then_sleep() {
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
  // steady_clock is the vDSO's clock_gettime where the clock source allows (tens of
  // nanoseconds), against looks microseconds apart.
  using Clock = StreakWait::Clock;
  const Clock::time_point start = Clock::now();
  StreakWait wait(start, long_streaks() ? StreakWait::kLong : StreakWait::kShort);
  Clock::time_point next_look = start;
  for (;;) {
    cpu_relax();
    const Clock::time_point now = Clock::now();
    if (now < next_look) continue;
    next_look = now + kLookEvery;
    std::int32_t seen = state_.load(std::memory_order_relaxed);
    switch (wait.look(now, seen == kUnlocked)) {
      case StreakWait::Next::look_again:
        continue;
      case StreakWait::Next::stop_deferring:
        return false;
      case StreakWait::Next::take:
        break;
    }
    if (!state_.compare_exchange_strong(seen, kLocked, std::memory_order_acquire)) {
      wait.lost_the_race();
      continue;
    }
    wait.took(backoff_);  // the streak state is on the line just taken
    return true;
  }
}

void AdaptiveMutex::wake_one() { futex_wake_one(state_); }

}  // namespace strata::base
