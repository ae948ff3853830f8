// tests/support/failing_allocator.hpp: a global operator new that fails on demand, for tests
// of what running out of memory does. failing_allocator.cpp replaces operator new and
// delete (plain, array and aligned, with their sized deletes) for the whole program, so it
// is linked into a test executable of its own.
//
// Thread safety: the countdown is per thread; only the arming thread's allocations count.
#pragma once

namespace strata::testing::failing_allocator {

// Makes the n-th operator new from now on this thread (1: the next) throw std::bad_alloc;
// 0 disarms. Clears fired().
void fail_nth(long n);
// As fail_nth, but the n-th and every later operator new on this thread throw, until
// fail_nth(0) disarms.
void fail_from(long n);
// Whether an armed allocation has failed since fail_nth or fail_from.
bool fired();

}  // namespace strata::testing::failing_allocator
