// base/adaptive_mutex.hpp: a mutex that spins briefly before it sleeps, with its
// uncontended lock and unlock inline (one atomic instruction each).
//
// For short critical sections that many threads enter, such as a commit: a mutex that
// sleeps in the kernel at the first sign of contention makes every commit pay a futex
// sleep and wake-up with more threads than cores, so a waiter first spins for about as
// long as the lock is usually held. glibc's PTHREAD_MUTEX_ADAPTIVE_NP does the same
// through two library calls per hold; this one is inline.
//
// The word is Drepper's three states ("Futexes Are Tricky", 2011): unlocked, locked, and
// locked with sleepers, so an unlock makes a system call only when a waiter sleeps. Not
// fair: a spinning thread may take the lock before a sleeper it woke.
//
// Thread safety: as std::mutex (BasicLockable). A capability (base/thread_annotations.hpp):
// hold it with base::UniqueLock for the compiler to check what it guards.
#pragma once

#include <atomic>
#include <cstdint>

#include "base/invariant.hpp"
#include "base/thread_annotations.hpp"

namespace strata::base {

class CAPABILITY("mutex") AdaptiveMutex {
 public:
  AdaptiveMutex() = default;
  AdaptiveMutex(const AdaptiveMutex&) = delete;
  AdaptiveMutex& operator=(const AdaptiveMutex&) = delete;

  void lock() ACQUIRE() {
    std::int32_t unlocked = kUnlocked;
    if (!state_.compare_exchange_strong(unlocked, kLocked, std::memory_order_acquire)) {
      lock_contended();
    }
  }
  void unlock() RELEASE() {
    if (state_.exchange(kUnlocked, std::memory_order_release) == kSleepers) wake_one();
  }

  // States that the calling thread holds the lock where the compiler's analysis cannot see
  // it: in a lambda that another function runs under the lock. The sanitizer builds check
  // that the lock is held (by some thread: the word records no owner).
  void assert_held() const ASSERT_CAPABILITY(this) {
    STRATA_INVARIANT(state_.load(std::memory_order_relaxed) != kUnlocked);
  }

  // True while the lock is held and a waiter may sleep on it (for tests).
  bool has_sleepers() const { return state_.load(std::memory_order_acquire) == kSleepers; }

 private:
  static constexpr std::int32_t kUnlocked = 0;
  static constexpr std::int32_t kLocked = 1;
  static constexpr std::int32_t kSleepers = 2;  // locked, and a waiter may sleep

  void lock_contended();
  void wake_one();

  std::atomic<std::int32_t> state_{kUnlocked};
};

}  // namespace strata::base
