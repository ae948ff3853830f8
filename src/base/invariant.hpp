// base/invariant.hpp: invariants stated as checks that run in the sanitizer builds.
//
// STRATA_INVARIANT(condition) aborts with the condition's text and place when it is false,
// in builds with STRATA_DEBUG_INVARIANTS set (CMake sets it with STRATA_SANITIZE, so the
// asan, tsan and fuzz presets run them; the option STRATA_DEBUG_INVARIANTS sets it in any
// build). Elsewhere it compiles to nothing and its condition is not evaluated, so a check
// may cost a few loads and comparisons where it stands, but never a walk the code would
// not make anyway; whole-structure checks run only where the structure is walked already
// (a destructor).
//
// Unlike assert(), it does not depend on NDEBUG: the sanitizer presets are optimised
// builds that define NDEBUG.
#pragma once

#include <cstdio>
#include <cstdlib>

namespace strata::base {

#if defined(STRATA_DEBUG_INVARIANTS) && STRATA_DEBUG_INVARIANTS
inline constexpr bool kDebugInvariants = true;
#else
inline constexpr bool kDebugInvariants = false;
#endif

[[noreturn, gnu::cold]] inline void invariant_failed(const char* condition, const char* file,
                                                     int line) noexcept {
  std::fprintf(stderr, "strata: invariant failed at %s:%d: %s\n", file, line, condition);
  std::abort();
}

}  // namespace strata::base

#if defined(STRATA_DEBUG_INVARIANTS) && STRATA_DEBUG_INVARIANTS
#define STRATA_INVARIANT(condition)   \
  ((condition) ? static_cast<void>(0) \
               : ::strata::base::invariant_failed(#condition, __FILE__, __LINE__))
#else
#define STRATA_INVARIANT(condition) static_cast<void>(0)
#endif
