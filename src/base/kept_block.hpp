// base/kept_block.hpp: one block of memory per thread and type, kept from the object a
// thread destroyed for the next one it makes. For objects made and destroyed once per
// transaction, where malloc's own caches cost more than the object's use.
//
// A class opts in with class-specific allocation:
//   static void* operator new(std::size_t size) { return base::KeptBlock<T>::take(size); }
//   static void operator delete(void* p, std::size_t size) noexcept {
//     base::KeptBlock<T>::give_back(p, size);
//   }
// T must be final (every block has sizeof(T)). Under AddressSanitizer a kept block is
// poisoned, so a use of a destroyed object is still reported. A thread's block is freed at
// its exit; blocks given back during the exit, after that, are freed at once.
//
// Thread safety: each thread has its own block; a block may be given back on another
// thread than the one that took it.
#pragma once

#include <cstddef>
#include <new>
#include <utility>

#include "base/asan.hpp"
#include "base/invariant.hpp"

namespace strata::base {

template <class T>
class KeptBlock {
 public:
  static void* take(std::size_t size) {
    STRATA_INVARIANT(size == sizeof(T));
    if (void* p = std::exchange(t_kept, nullptr)) {
      STRATA_UNPOISON(p, size);
      return p;
    }
    return ::operator new(size);
  }

  static void give_back(void* p, std::size_t size) noexcept {
    if (t_kept != nullptr || t_closed) {
      ::operator delete(p);
      return;
    }
    t_reaper.armed = true;  // the write makes the thread register the reaper
    STRATA_POISON(p, size);
    t_kept = p;
  }

 private:
  struct Reaper {
    bool armed = false;
    Reaper() = default;
    Reaper(const Reaper&) = delete;
    Reaper& operator=(const Reaper&) = delete;
    ~Reaper() {
      if (void* p = std::exchange(t_kept, nullptr)) {
        STRATA_UNPOISON(p, sizeof(T));
        ::operator delete(p);
      }
      t_closed = true;
    }
  };

  // Trivially destructible, so give_back may look at them at any point of the thread's
  // exit, after the reaper has run.
  static thread_local void* t_kept;
  static thread_local bool t_closed;
  static thread_local Reaper t_reaper;
};

template <class T>
thread_local void* KeptBlock<T>::t_kept = nullptr;
template <class T>
thread_local bool KeptBlock<T>::t_closed = false;
template <class T>
thread_local typename KeptBlock<T>::Reaper KeptBlock<T>::t_reaper;

}  // namespace strata::base
