// base/futex.hpp: sleeping on a 32-bit word and waking its sleepers (a Linux futex; C++20's
// atomic wait elsewhere), and the pause a spin loop makes between looks.
//
// Thread safety: any thread. A wake-up may be spurious: callers loop on their condition.
#pragma once

#include <atomic>
#include <cstdint>

namespace strata::base {

// Sleeps while `word` holds `expected` (checked atomically with going to sleep); returns
// on a change, a wake or spuriously.
void futex_wait(std::atomic<std::int32_t>& word, std::int32_t expected);
// Wakes one thread sleeping in futex_wait on `word`, if any. Touches no user memory.
void futex_wake_one(std::atomic<std::int32_t>& word);
// Wakes every thread sleeping in futex_wait on `word` (one system call for all of them).
void futex_wake_all(std::atomic<std::int32_t>& word);

inline void cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  asm volatile("yield");
#endif
}

}  // namespace strata::base
