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
// waiter lets the lock pass among the holder's CPU's threads for a while, as a cohort
// lock keeps a lock within a NUMA node (Dice, Marathe and Shavit, "Lock Cohorting",
// 2012): it looks at the lock every few microseconds (a look takes the line from the
// holder's CPU), and takes it only once its looks have found it free for kGrace (no
// thread there wanted it again), or once it has waited kStreak in all; from then on it
// takes the lock at the first chance, and spins a while before it waits as a plain
// waiter. A wait that let nobody through (its looks found the lock free for the whole
// grace) makes the waiters that follow skip the streak, for twice as many waits each
// time, up to kMaxSkips, so that threads that come back to the lock more slowly than the
// grace do not leave it idle; a wait that saw someone take the lock starts over. The
// uncontended lock and unlock are the same.
//
// Thread safety: as std::mutex (BasicLockable). A capability (base/thread_annotations.hpp):
// hold it with base::UniqueLock for the compiler to check what it guards.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>

#include "base/invariant.hpp"
#include "base/thread_annotations.hpp"

namespace strata::base {

class CAPABILITY("mutex") AdaptiveMutex {
 public:
  enum class Policy : std::uint8_t { plain, streaks };
  // A waiter takes a lock it sees free only after it stayed free this long (streaks).
  static constexpr std::chrono::nanoseconds kGrace = std::chrono::microseconds(4);
  // A waiter defers to the holder's CPU for at most this long in all (streaks).
  static constexpr std::chrono::nanoseconds kStreak = std::chrono::microseconds(50);
  // The most waits that skip the streak after waits that let nobody through.
  static constexpr std::uint32_t kMaxSkips = 1024;

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

  // True while the lock is held and a waiter may sleep on it (for tests).
  bool has_sleepers() const { return state_.load(std::memory_order_acquire) == kSleepers; }
  // Waits that will skip the streak (Policy::streaks; for tests).
  std::uint32_t streak_skips() const { return skips_.load(std::memory_order_relaxed); }

 private:
  static constexpr std::int32_t kUnlocked = 0;
  static constexpr std::int32_t kLocked = 1;
  static constexpr std::int32_t kSleepers = 2;  // locked, and a waiter may sleep

  void lock_contended();
  // Policy::streaks: waits while the lock passes among the holder's CPU's threads; true
  // once it took the lock, false when kStreak ran out with the lock held.
  bool lock_after_streak();
  void wake_one();

  std::atomic<std::int32_t> state_{kUnlocked};
  // Written by waiters only, relaxed: an approximate count is all the policy needs.
  std::atomic<std::uint32_t> skips_{0};
  const bool streaks_ = false;
};

}  // namespace strata::base
