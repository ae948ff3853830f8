// base/lock_streak.hpp: the decisions of AdaptiveMutex's streaks policy, kept apart from
// the lock's word and the clock so that they can be driven step by step.
//
// StreakBackoff decides whether a contended wait defers at all; StreakWait decides, look
// by look, when a deferring wait takes the lock. base/adaptive_mutex.hpp says why waiters
// defer.
#pragma once

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>

namespace strata::base {

// When the waiters of a streaks lock defer: a wait that let nobody through makes the next
// `level` waits skip the streak, the level going 0, 1, 3, 7, ... up to kMaxSkips with each
// such wait in a row; a wait that saw another thread take the lock sets it back to 0. So
// where deferring helps, most waits defer, and where it never does, one wait in
// kMaxSkips + 1 pays a grace.
// Thread safety: any thread, relaxed: racing waiters may lose an update, which leaves a
// count in range; the policy needs no more.
class StreakBackoff {
 public:
  static constexpr std::uint32_t kMaxSkips = 1024;

  // At a contended lock: whether this wait defers (counting down a skip if not).
  bool defer() {
    const std::uint32_t skips = skips_.load(std::memory_order_relaxed);
    if (skips == 0) return true;
    skips_.store(skips - 1, std::memory_order_relaxed);
    return false;
  }
  // A deferring wait took the lock after it sat free for the whole grace.
  void let_nobody_through() {
    const std::uint32_t level = std::min(2 * level_.load(std::memory_order_relaxed) + 1, kMaxSkips);
    level_.store(level, std::memory_order_relaxed);
    skips_.store(level, std::memory_order_relaxed);
  }
  // A deferring wait saw another thread take the lock.
  void let_someone_through() {
    if (level_.load(std::memory_order_relaxed) != 0) level_.store(0, std::memory_order_relaxed);
    if (skips_.load(std::memory_order_relaxed) != 0) skips_.store(0, std::memory_order_relaxed);
  }
  // The waits left to skip.
  std::uint32_t skips() const { return skips_.load(std::memory_order_relaxed); }

 private:
  std::atomic<std::uint32_t> level_{0};
  std::atomic<std::uint32_t> skips_{0};
};

// One deferring wait, fed the time and the outcome of each look at the lock's word. It
// takes a lock its looks found free for kGrace (nobody on the holder's CPU wanted it
// again), or, once it has deferred for kStreak in all, the first time a look finds it free;
// a streak that runs out with the lock held stops deferring. The grace and the streak are
// a few and about ten commits' time: enough for the lock to cross between CPUs a tenth as
// often, short enough that a waiter whose own commit others wait for is not held up long.
// Thread safety: one waiting thread's.
class StreakWait {
 public:
  using Clock = std::chrono::steady_clock;
  static constexpr std::chrono::nanoseconds kGrace = std::chrono::microseconds(4);
  static constexpr std::chrono::nanoseconds kStreak = std::chrono::microseconds(10);

  enum class Next : std::uint8_t {
    look_again,      // keep deferring
    take,            // try to take the lock now
    stop_deferring,  // the streak ran out with the lock held
  };

  explicit StreakWait(Clock::time_point start) : start_(start) {}

  // A look at `now` that found the lock free or held.
  Next look(Clock::time_point now, bool found_free) {
    over_ = now - start_ >= kStreak;
    if (!found_free) {
      passed_ = passed_ || free_;  // someone took it between two looks
      free_ = false;
      return over_ ? Next::stop_deferring : Next::look_again;
    }
    if (!free_) {
      free_ = true;
      free_since_ = now;
    }
    if (!over_ && now - free_since_ < kGrace) return Next::look_again;
    return Next::take;
  }
  // The take after Next::take failed: another thread took the lock since the look.
  void lost_the_race() {
    passed_ = true;
    free_ = false;
  }
  // The take succeeded: tells the backoff what this wait saw. A wait that saw the lock
  // taken by another thread lets the next waits defer; one whose looks found it free for
  // the whole grace, within the streak, makes them skip.
  void took(StreakBackoff& backoff) const {
    if (passed_) {
      backoff.let_someone_through();
    } else if (!over_) {
      backoff.let_nobody_through();
    }
  }

 private:
  Clock::time_point start_;
  Clock::time_point free_since_;
  bool free_ = false;    // the looks since free_since_ found the lock free
  bool passed_ = false;  // another thread took the lock while this one deferred
  bool over_ = false;    // the last look came after the streak
};

}  // namespace strata::base
