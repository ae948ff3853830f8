#include "base/adaptive_mutex.hpp"

#include "base/futex.hpp"

namespace strata::base {
namespace {

// Looks at the word before sleeping: 100 pauses, meant to last about as long as a few
// commits hold the lock, so a waiter behind a short hold takes it without a futex sleep
// (glibc's adaptive mutex also tries up to 100 times).
constexpr int kSpins = 100;

}  // namespace

void AdaptiveMutex::lock_contended() {
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

void AdaptiveMutex::wake_one() { futex_wake_one(state_); }

}  // namespace strata::base
