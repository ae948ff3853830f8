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
// Streaks (Policy::streaks, for the in-memory commit lock): a spinning waiter runs on
// another CPU than the holder, whose caches hold the lock and everything the next commit
// under it touches. Taken there, each commit would first fetch those lines across. So the
// waiter lets the holder's CPU keep the lock for a while (the holder coming back for its
// next commit, or the thread that CPU runs next), as a cohort lock keeps a lock within a
// NUMA node (Dice, Marathe and Shavit, "Lock Cohorting", 2012). It looks at the lock
// every few microseconds (a look takes the line from the holder's CPU), and takes it only
// once its looks have found it free for a grace (nobody there wanted it again), or once it
// has deferred for a streak's length in all (StreakWait); a waiter whose streak ran out
// with the lock held then spins and sleeps as a plain waiter does. A wait whose looks
// found the lock free for the whole grace makes the waiters that follow skip the streak
// (StreakBackoff), so that threads that come back to the lock more slowly than the grace
// do not leave it idle. How long a streak lasts is the lock owner's to choose
// (use_long_streaks(), after base::StreakTuner). The uncontended lock and unlock are the
// same.
//
// Thread safety: as std::mutex (BasicLockable). A capability (base/thread_annotations.hpp):
// hold it with base::UniqueLock for the compiler to check what it guards.
#pragma once

#include <atomic>
#include <cstdint>

#include "base/invariant.hpp"
#include "base/lock_streak.hpp"
#include "base/thread_annotations.hpp"

namespace strata::base {

// 16-byte aligned, so that the word and the streak state share a cache line: a waiter
// that took the lock updates the state without another miss.
class CAPABILITY("mutex") alignas(16) AdaptiveMutex {
 public:
  enum class Policy : std::uint8_t { plain, streaks };

  AdaptiveMutex() = default;
  explicit AdaptiveMutex(Policy policy) : streaks_(policy == Policy::streaks) {}
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

  // Policy::streaks: whether waits from now on defer for StreakWait::kLong rather than
  // kShort. Any thread.
  void use_long_streaks(bool on) {
    if (long_streaks_.load(std::memory_order_relaxed) != on) {
      long_streaks_.store(on, std::memory_order_relaxed);
    }
  }
  bool long_streaks() const { return long_streaks_.load(std::memory_order_relaxed); }

  // True while the lock is held and a waiter may sleep on it (for tests).
  bool has_sleepers() const { return state_.load(std::memory_order_acquire) == kSleepers; }
  // Waits that will skip the streak (Policy::streaks; for tests).
  std::uint32_t streak_skips() const { return backoff_.skips(); }

 private:
  static constexpr std::int32_t kUnlocked = 0;
  static constexpr std::int32_t kLocked = 1;
  static constexpr std::int32_t kSleepers = 2;  // locked, and a waiter may sleep

  void lock_contended();
  // Policy::streaks: defers to the holder's CPU; true once it took the lock, false when
  // the streak ran out with the lock held.
  bool lock_after_streak();
  // Spins a few pauses for the lock, then sleeps until it has it.
  void spin_then_sleep();
  void wake_one();

  std::atomic<std::int32_t> state_{kUnlocked};
  bool streaks_ = false;
  std::atomic<bool> long_streaks_{false};
  StreakBackoff backoff_;  // Policy::streaks; written by waiters only
};

}  // namespace strata::base
