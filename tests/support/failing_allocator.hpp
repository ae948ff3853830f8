// tests/support/failing_allocator.hpp: a global operator new that fails on demand, for tests
// of what running out of memory does. failing_allocator.cpp replaces operator new and
// delete for the whole program, so it is linked into a test executable of its own.
//
// Thread safety: the countdown is per thread; only the arming thread's allocations count.
#pragma once

namespace strata::testing::failing_allocator {

// Makes the n-th operator new from now on this thread (1: the next) throw std::bad_alloc;
// 0 disarms. Clears fired().
void fail_nth(long n);
// Whether the armed allocation has failed since fail_nth.
bool fired();

}  // namespace strata::testing::failing_allocator
