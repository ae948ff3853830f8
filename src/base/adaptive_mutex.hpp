// base/adaptive_mutex.hpp: a mutex that spins briefly before it sleeps (glibc's
// PTHREAD_MUTEX_ADAPTIVE_NP; a plain mutex elsewhere).
//
// For short critical sections that many threads enter, such as a commit: glibc's default
// mutex sleeps in the kernel at the first sign of contention, and with more threads than
// cores every commit then paid a futex sleep and wake-up (docs/benchmarks.md, session 10).
// The adaptive kind spins for about as long as the lock is usually held first.
//
// Thread safety: as std::mutex (BasicLockable; use with std::lock_guard / std::unique_lock).
#pragma once

#include <pthread.h>

namespace strata::base {

class AdaptiveMutex {
 public:
  AdaptiveMutex() {
    pthread_mutexattr_t attr;
    pthread_mutexattr_init(&attr);
#if defined(PTHREAD_ADAPTIVE_MUTEX_INITIALIZER_NP)
    pthread_mutexattr_settype(&attr, PTHREAD_MUTEX_ADAPTIVE_NP);
#endif
    pthread_mutex_init(&mu_, &attr);
    pthread_mutexattr_destroy(&attr);
  }
  ~AdaptiveMutex() { pthread_mutex_destroy(&mu_); }
  AdaptiveMutex(const AdaptiveMutex&) = delete;
  AdaptiveMutex& operator=(const AdaptiveMutex&) = delete;

  void lock() { pthread_mutex_lock(&mu_); }
  void unlock() { pthread_mutex_unlock(&mu_); }

 private:
  pthread_mutex_t mu_;
};

}  // namespace strata::base
