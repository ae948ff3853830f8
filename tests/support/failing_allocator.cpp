#include "support/failing_allocator.hpp"

#include <cstddef>
#include <cstdlib>
#include <new>

namespace strata::testing::failing_allocator {
namespace {

thread_local long t_countdown = 0;  // 0: disarmed
thread_local bool t_fired = false;

void* allocate(std::size_t size) {
  if (t_countdown > 0 && --t_countdown == 0) {
    t_fired = true;
    throw std::bad_alloc();
  }
  void* p = std::malloc(size != 0 ? size : 1);
  if (p == nullptr) throw std::bad_alloc();
  return p;
}

}  // namespace

void fail_nth(long n) {
  t_countdown = n;
  t_fired = false;
}

bool fired() { return t_fired; }

}  // namespace strata::testing::failing_allocator

// The replaceable forms: plain and array, with their sized deletes. (The nothrow and
// aligned forms of the library call these or keep to their own pair.)
void* operator new(std::size_t size) { return strata::testing::failing_allocator::allocate(size); }
void* operator new[](std::size_t size) {
  return strata::testing::failing_allocator::allocate(size);
}
void operator delete(void* p) noexcept { std::free(p); }
void operator delete[](void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }
void operator delete[](void* p, std::size_t) noexcept { std::free(p); }
