// base/wait_word.hpp: a word one thread waits on until another sets it (spin, then sleep).
//
// The waiter spins a little (a hand-off usually takes microseconds), then sleeps in the
// kernel (a Linux futex) until the word changes. set() wakes the waiter only when it went
// to sleep, so a hand-off to a spinning waiter makes no system call.
//
// Why not std::atomic<int>::wait: libstdc++ 12 calls sched_yield() a dozen times before
// it sleeps. With more client threads than cores that is a system call per yield and a
// pass through the scheduler each time, a large share of the CPU of many-client runs.
//
// Lifetime: the waiter may destroy the word as soon as wait_while() returns. set() reads
// and writes the word in one atomic exchange and afterwards only passes its address to the
// kernel's wake call, which touches no user memory (a wake of a reused address is at worst
// spurious, and every futex waiter loops on its condition).
//
// Thread safety: one waiter, any number of setters.
#pragma once

#include <atomic>
#include <cstdint>

namespace strata::base {

class WaitWord {
 public:
  explicit WaitWord(std::int32_t value = 0) : word_(value) {}
  WaitWord(const WaitWord&) = delete;
  WaitWord& operator=(const WaitWord&) = delete;

  std::int32_t load(std::memory_order order = std::memory_order_acquire) const {
    return word_.load(order) & ~kSleeping;
  }

  // True while a waiter sleeps in wait_while() (for tests and diagnostics).
  bool has_sleeper() const { return (word_.load(std::memory_order_acquire) & kSleeping) != 0; }

  // Blocks while the word holds `value`; returns the value that ended the wait (acquire).
  // Spins up to `spins` pause instructions before sleeping.
  std::int32_t wait_while(std::int32_t value, int spins);

  // Sets the word (release) and wakes the waiter if it sleeps. `value` must differ from
  // the value the waiter waits on, and be non-negative.
  void set(std::int32_t value);

 private:
  static constexpr std::int32_t kSleeping = std::int32_t{1} << 30;
  std::atomic<std::int32_t> word_;
};

}  // namespace strata::base
