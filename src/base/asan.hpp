// base/asan.hpp: marking memory that a pool keeps, unused, as off limits under
// AddressSanitizer, so that a stray access to it is reported as a use after free would be.
// Outside ASan builds the marks compile to nothing.
#pragma once

#if defined(__SANITIZE_ADDRESS__)
#define STRATA_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define STRATA_ASAN 1
#endif
#endif

#ifdef STRATA_ASAN
#include <sanitizer/asan_interface.h>
#define STRATA_POISON(p, n) ASAN_POISON_MEMORY_REGION(p, n)
#define STRATA_UNPOISON(p, n) ASAN_UNPOISON_MEMORY_REGION(p, n)
#else
#define STRATA_POISON(p, n) ((void)(p), (void)(n))
#define STRATA_UNPOISON(p, n) ((void)(p), (void)(n))
#endif
