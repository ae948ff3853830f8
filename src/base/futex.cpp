#include "base/futex.hpp"

#if defined(__linux__)
#include <linux/futex.h>
#include <sys/syscall.h>
#include <unistd.h>
#endif

namespace strata::base {

#if defined(__linux__)
void futex_wait(std::atomic<std::int32_t>& word, std::int32_t expected) {
  syscall(SYS_futex, reinterpret_cast<std::int32_t*>(&word), FUTEX_WAIT_PRIVATE, expected, nullptr,
          nullptr, 0);
}
void futex_wake_one(std::atomic<std::int32_t>& word) {
  syscall(SYS_futex, reinterpret_cast<std::int32_t*>(&word), FUTEX_WAKE_PRIVATE, 1, nullptr,
          nullptr, 0);
}
void futex_wake_all(std::atomic<std::int32_t>& word) {
  syscall(SYS_futex, reinterpret_cast<std::int32_t*>(&word), FUTEX_WAKE_PRIVATE, INT32_MAX, nullptr,
          nullptr, 0);
}
#else
void futex_wait(std::atomic<std::int32_t>& word, std::int32_t expected) {
  word.wait(expected, std::memory_order_acquire);
}
void futex_wake_one(std::atomic<std::int32_t>& word) { word.notify_one(); }
void futex_wake_all(std::atomic<std::int32_t>& word) { word.notify_all(); }
#endif

}  // namespace strata::base
