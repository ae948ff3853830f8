// base/lock_streak.hpp: the decisions of AdaptiveMutex's streaks policy, kept apart from
// the lock's word and the clock so that they can be driven step by step.
//
// StreakBackoff decides whether a contended wait defers at all; StreakWait decides, look
// by look, when a deferring wait takes the lock; StreakTuner decides how long waits defer.
// base/adaptive_mutex.hpp says why waiters defer.
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

// How long a deferring wait lets the holder's CPU keep the lock: it takes a lock its looks
// found free for `grace`, and stops deferring after `streak` in all.
struct StreakLength {
  std::chrono::nanoseconds grace;
  std::chrono::nanoseconds streak;
};

// One deferring wait, fed the time and the outcome of each look at the lock's word. It
// takes a lock its looks found free for the grace (nobody on the holder's CPU wanted it
// again), or, once it has deferred for the streak in all, the first time a look finds it
// free; a streak that runs out with the lock held stops deferring. The short length is a
// few and about ten commits' time: enough for the lock to cross between CPUs a tenth as
// often, short enough that a waiter whose own commit others wait for is not held up long.
// The long one lets one CPU's threads run the lock's work back to back for a millisecond
// (StreakTuner says when).
// Thread safety: one waiting thread's.
class StreakWait {
 public:
  using Clock = std::chrono::steady_clock;
  static constexpr StreakLength kShort{std::chrono::microseconds(4), std::chrono::microseconds(10)};
  static constexpr StreakLength kLong{std::chrono::microseconds(30), std::chrono::milliseconds(1)};

  enum class Next : std::uint8_t {
    look_again,      // keep deferring
    take,            // try to take the lock now
    stop_deferring,  // the streak ran out with the lock held
  };

  explicit StreakWait(Clock::time_point start, StreakLength length = kShort)
      : start_(start), length_(length) {}

  // A look at `now` that found the lock free or held.
  Next look(Clock::time_point now, bool found_free) {
    over_ = now - start_ >= length_.streak;
    if (!found_free) {
      passed_ = passed_ || free_;  // someone took it between two looks
      free_ = false;
      return over_ ? Next::stop_deferring : Next::look_again;
    }
    if (!free_) {
      free_ = true;
      free_since_ = now;
    }
    if (!over_ && now - free_since_ < length_.grace) return Next::look_again;
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
  StreakLength length_;
  Clock::time_point free_since_;
  bool free_ = false;    // the looks since free_since_ found the lock free
  bool passed_ = false;  // another thread took the lock while this one deferred
  bool over_ = false;    // the last look came after the streak
};

// Which length a streaks lock's waiters use, chosen by measuring both. Where one CPU's
// threads can run the lock's work back to back (a queue's producers and consumers, whose
// commits touch the same few lines), long streaks move the lock and those lines between
// CPUs far less often and raise the lock's rate; where the work outside the lock is what
// runs in parallel, they can leave the other CPU waiting. Which one holds changes with the
// workload and with how far apart the host puts the CPUs, so every cycle of kCycle epochs
// begins with kProbes epochs that alternate the lengths (short, long, long, short: a
// drift in the machine's speed falls on both alike), and the rest of the cycle uses the
// long length unless the lock was taken kShortMargin times as often per second under the
// short one. A probe counts from kSettle into its epoch, once the waits begun under the
// other length are over. An epoch longer than kIdle (the lock left idle, or too slow to
// tick) is not counted; probes that measured one length only choose it, and probes that
// measured neither keep the last choice.
// Thread safety: the lock holder's (one thread at a time).
class StreakTuner {
 public:
  using Clock = StreakWait::Clock;
  static constexpr std::chrono::nanoseconds kEpoch = std::chrono::milliseconds(8);
  static constexpr std::chrono::nanoseconds kIdle = 4 * kEpoch;
  static constexpr std::chrono::nanoseconds kSettle = StreakWait::kLong.streak;
  static constexpr int kProbes = 4;
  static constexpr int kCycle = 32;
  // The short length is chosen only where its rate beats the long one's by this factor.
  static constexpr double kShortMargin = 1.1;

  // At `now`, with `taken` counting the lock's work so far (its acquisitions, or the
  // commits they made): whether waiters use the long length from now on. Called every few
  // acquisitions.
  bool tick(Clock::time_point now, std::uint64_t taken) {
    if (!started_) {
      started_ = true;
      start_epoch(now, taken);
      return long_;
    }
    const Clock::duration elapsed = now - epoch_start_;
    if (measure_start_ == epoch_start_ && elapsed >= kSettle) {  // settled
      measure_start_ = now;
      taken_at_measure_ = taken;
    }
    if (elapsed < kEpoch) return long_;
    if (epoch_ < kProbes && elapsed <= kIdle && now > measure_start_) {
      probe_taken_[long_ ? 1 : 0] += taken - taken_at_measure_;
      probe_time_[long_ ? 1 : 0] += now - measure_start_;
    }
    epoch_ = (epoch_ + 1) % kCycle;
    if (epoch_ < kProbes) {
      long_ = epoch_ == 1 || epoch_ == 2;
    } else if (epoch_ == kProbes) {
      choose();
      long_ = chosen_long_;
    }
    start_epoch(now, taken);
    return long_;
  }

  // Whether the last cycle's probes chose the long length (for tests).
  bool chose_long() const { return chosen_long_; }

 private:
  void start_epoch(Clock::time_point now, std::uint64_t taken) {
    epoch_start_ = measure_start_ = now;
    taken_at_measure_ = taken;
  }
  void choose() {
    const bool short_measured = probe_time_[0] > Clock::duration::zero();
    const bool long_measured = probe_time_[1] > Clock::duration::zero();
    if (short_measured && long_measured) {
      const double short_time = static_cast<double>(probe_time_[0].count());
      const double long_time = static_cast<double>(probe_time_[1].count());
      chosen_long_ = static_cast<double>(probe_taken_[0]) * long_time <=
                     kShortMargin * static_cast<double>(probe_taken_[1]) * short_time;
    } else if (short_measured || long_measured) {
      chosen_long_ = long_measured;
    }
    probe_taken_[0] = probe_taken_[1] = 0;
    probe_time_[0] = probe_time_[1] = Clock::duration::zero();
  }

  bool started_ = false;
  bool long_ = false;        // the length of the epoch under way
  bool chosen_long_ = true;  // the probes' choice
  int epoch_ = 0;            // within the cycle
  Clock::time_point epoch_start_;
  Clock::time_point measure_start_;  // of the epoch's probe; epoch_start_ while settling
  std::uint64_t taken_at_measure_ = 0;
  std::uint64_t probe_taken_[2] = {0, 0};  // [0] short, [1] long
  Clock::duration probe_time_[2] = {Clock::duration::zero(), Clock::duration::zero()};
};

}  // namespace strata::base
