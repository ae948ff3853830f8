#include "support/failing_allocator.hpp"

#include <algorithm>
#include <cstddef>
#include <cstdlib>
#include <new>

namespace strata::testing::failing_allocator {
namespace {

thread_local long t_countdown = 0;   // 0: disarmed
thread_local bool t_sticky = false;  // fail_from: every allocation from the armed one on
thread_local bool t_fired = false;

// Throws std::bad_alloc if this is the armed allocation (or a later one, under fail_from).
void count_down() {
  if (t_countdown > 0 && --t_countdown == 0) {
    t_fired = true;
    if (t_sticky) t_countdown = 1;
    throw std::bad_alloc();
  }
}

void* allocate(std::size_t size) {
  count_down();
  void* p = std::malloc(size != 0 ? size : 1);
  if (p == nullptr) throw std::bad_alloc();
  return p;
}

// Freed with std::free, as allocate's.
void* allocate_aligned(std::size_t size, std::align_val_t alignment) {
  count_down();
  void* p = nullptr;
  const std::size_t align = std::max(static_cast<std::size_t>(alignment), sizeof(void*));
  if (posix_memalign(&p, align, size != 0 ? size : 1) != 0) throw std::bad_alloc();
  return p;
}

}  // namespace

void fail_nth(long n) {
  t_countdown = n;
  t_sticky = false;
  t_fired = false;
}

void fail_from(long n) {
  fail_nth(n);
  t_sticky = n > 0;
}

bool fired() { return t_fired; }

}  // namespace strata::testing::failing_allocator

namespace fa = strata::testing::failing_allocator;

// The replaceable forms: plain, array and aligned, with their sized deletes. (The nothrow
// forms of the library call these, or keep to their own pair.)
void* operator new(std::size_t size) { return fa::allocate(size); }
void* operator new[](std::size_t size) { return fa::allocate(size); }
void* operator new(std::size_t size, std::align_val_t alignment) {
  return fa::allocate_aligned(size, alignment);
}
void* operator new[](std::size_t size, std::align_val_t alignment) {
  return fa::allocate_aligned(size, alignment);
}
void operator delete(void* p) noexcept { std::free(p); }
void operator delete[](void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }
void operator delete[](void* p, std::size_t) noexcept { std::free(p); }
void operator delete(void* p, std::align_val_t) noexcept { std::free(p); }
void operator delete[](void* p, std::align_val_t) noexcept { std::free(p); }
void operator delete(void* p, std::size_t, std::align_val_t) noexcept { std::free(p); }
void operator delete[](void* p, std::size_t, std::align_val_t) noexcept { std::free(p); }
