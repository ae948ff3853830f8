#include "base/wait_word.hpp"

#include "base/futex.hpp"

namespace strata::base {

std::int32_t WaitWord::wait_while(std::int32_t value, int spins) {
  std::int32_t seen = word_.load(std::memory_order_acquire);
  for (int spin = 0; spin < spins && seen == value; ++spin) {
    cpu_relax();
    seen = word_.load(std::memory_order_acquire);
  }
  if (seen != value) return seen;
  // Say we sleep; a set() between the load and here makes the exchange fail instead.
  const std::int32_t sleeping = value | kSleeping;
  if (!word_.compare_exchange_strong(seen, sleeping, std::memory_order_acquire)) return seen;
  for (;;) {
    futex_wait(word_, sleeping);
    seen = word_.load(std::memory_order_acquire);
    if (seen != sleeping) return seen;
  }
}

void WaitWord::set(std::int32_t value) {
  if (word_.exchange(value, std::memory_order_acq_rel) & kSleeping) futex_wake_one(word_);
}

}  // namespace strata::base
