// base/mutex.hpp: std::mutex and std::condition_variable with lock contracts the compiler
// checks (base/thread_annotations.hpp).
//
// libstdc++'s mutex and locks carry no annotations, so members guarded by a std::mutex
// cannot be checked. Mutex is a std::mutex that is a capability; UniqueLock holds one (or
// an AdaptiveMutex) for a scope, and may let it go and take it again, as std::unique_lock;
// CondVar waits with a MutexLock held. Each compiles to the std:: calls it wraps.
//
// A wait's condition is written as a loop around wait() in the function that holds the
// lock (`while (!ready_) cv_.wait(lock);`) rather than as a predicate: the analysis checks
// a lambda as a function of its own, which holds no lock.
//
// Thread safety: as std::mutex and std::condition_variable.
#pragma once

#include <chrono>
#include <condition_variable>
#include <mutex>

#include "base/thread_annotations.hpp"

namespace strata::base {

class CAPABILITY("mutex") Mutex {
 public:
  Mutex() = default;
  Mutex(const Mutex&) = delete;
  Mutex& operator=(const Mutex&) = delete;

  void lock() ACQUIRE() { mu_.lock(); }
  void unlock() RELEASE() { mu_.unlock(); }
  bool try_lock() TRY_ACQUIRE(true) { return mu_.try_lock(); }

 private:
  friend class CondVar;
  std::mutex mu_;
};

// Holds `mu` (a Mutex, AdaptiveMutex or any capability with lock() and unlock()) from
// construction to destruction, but for unlock() ... lock() in between and after release().
template <class M>
class SCOPED_CAPABILITY UniqueLock {
 public:
  explicit UniqueLock(M& mu) ACQUIRE(mu) : mu_(mu) { mu_.lock(); }
  ~UniqueLock() RELEASE() {
    if (held_) mu_.unlock();
  }
  UniqueLock(const UniqueLock&) = delete;
  UniqueLock& operator=(const UniqueLock&) = delete;

  void unlock() RELEASE() {
    held_ = false;
    mu_.unlock();
  }
  void lock() ACQUIRE() {
    mu_.lock();
    held_ = true;
  }
  // Lets go of the lock without unlocking it, as std::unique_lock::release: the caller has
  // handed it to code that unlocks it later, perhaps on another thread.
  void release() RELEASE() { held_ = false; }

 private:
  friend class CondVar;
  M& mu_;
  bool held_ = true;
};

using MutexLock = UniqueLock<Mutex>;

class CondVar {
 public:
  // Lets the lock go while it sleeps, and holds it again when it returns (also on a
  // spurious wake-up: the caller loops on its condition).
  void wait(MutexLock& lock) {
    std::unique_lock<std::mutex> held(lock.mu_.mu_, std::adopt_lock);
    cv_.wait(held);
    held.release();
  }
  // The same for a function that holds `mu` without a lock of its own (one that REQUIRES it).
  void wait(Mutex& mu) REQUIRES(mu) {
    std::unique_lock<std::mutex> held(mu.mu_, std::adopt_lock);
    cv_.wait(held);
    held.release();
  }
  // The same, until `deadline` at the latest: false when it passed.
  template <class Clock, class Duration>
  bool wait_until(MutexLock& lock, const std::chrono::time_point<Clock, Duration>& deadline) {
    std::unique_lock<std::mutex> held(lock.mu_.mu_, std::adopt_lock);
    const std::cv_status status = cv_.wait_until(held, deadline);
    held.release();
    return status == std::cv_status::no_timeout;
  }
  void notify_one() noexcept { cv_.notify_one(); }
  void notify_all() noexcept { cv_.notify_all(); }

 private:
  std::condition_variable cv_;
};

}  // namespace strata::base
