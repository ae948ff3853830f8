#include "base/wait_word.hpp"

#if defined(__linux__)
#include <linux/futex.h>
#include <sys/syscall.h>
#include <unistd.h>
#endif

namespace strata::base {
namespace {

void cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  asm volatile("yield");
#endif
}

#if defined(__linux__)
// Sleeps while *word == expected (the kernel checks atomically); returns on a change, a
// wake or spuriously.
void sleep_on(std::atomic<std::int32_t>& word, std::int32_t expected) {
  syscall(SYS_futex, reinterpret_cast<std::int32_t*>(&word), FUTEX_WAIT_PRIVATE, expected, nullptr,
          nullptr, 0);
}
void wake_one(std::atomic<std::int32_t>& word) {
  syscall(SYS_futex, reinterpret_cast<std::int32_t*>(&word), FUTEX_WAKE_PRIVATE, 1, nullptr,
          nullptr, 0);
}
#else
void sleep_on(std::atomic<std::int32_t>& word, std::int32_t expected) {
  word.wait(expected, std::memory_order_acquire);
}
void wake_one(std::atomic<std::int32_t>& word) { word.notify_one(); }
#endif

}  // namespace

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
    sleep_on(word_, sleeping);
    seen = word_.load(std::memory_order_acquire);
    if (seen != sleeping) return seen;
  }
}

void WaitWord::set(std::int32_t value) {
  if (word_.exchange(value, std::memory_order_acq_rel) & kSleeping) wake_one(word_);
}

}  // namespace strata::base
