// base/thread_annotations.hpp: lock contracts the compiler checks.
//
// Clang's thread-safety analysis (https://clang.llvm.org/docs/ThreadSafetyAnalysis.html)
// reads these attributes: a mutex type is a CAPABILITY, a member it protects is
// GUARDED_BY it, a function that must be called with it held REQUIRES it, and one that
// takes or gives it back ACQUIRE or RELEASE it. Under clang the build makes every
// violation an error (-Wthread-safety, CMakeLists.txt); under other compilers the macros
// are empty.
//
// The analysis follows locks within a function: state that one thread owns by role (the
// commit pipeline's leader) rather than by a lock is stated in comments, not here.
#pragma once

#if defined(__clang__)
#define STRATA_THREAD_ANNOTATION(x) __attribute__((x))
#else
#define STRATA_THREAD_ANNOTATION(x)
#endif

#define CAPABILITY(name) STRATA_THREAD_ANNOTATION(capability(name))
#define SCOPED_CAPABILITY STRATA_THREAD_ANNOTATION(scoped_lockable)
#define GUARDED_BY(mu) STRATA_THREAD_ANNOTATION(guarded_by(mu))
#define PT_GUARDED_BY(mu) STRATA_THREAD_ANNOTATION(pt_guarded_by(mu))
#define REQUIRES(...) STRATA_THREAD_ANNOTATION(requires_capability(__VA_ARGS__))
#define EXCLUDES(...) STRATA_THREAD_ANNOTATION(locks_excluded(__VA_ARGS__))
#define ACQUIRE(...) STRATA_THREAD_ANNOTATION(acquire_capability(__VA_ARGS__))
#define RELEASE(...) STRATA_THREAD_ANNOTATION(release_capability(__VA_ARGS__))
#define TRY_ACQUIRE(...) STRATA_THREAD_ANNOTATION(try_acquire_capability(__VA_ARGS__))
#define ASSERT_CAPABILITY(x) STRATA_THREAD_ANNOTATION(assert_capability(x))
#define RETURN_CAPABILITY(x) STRATA_THREAD_ANNOTATION(lock_returned(x))
#define NO_THREAD_SAFETY_ANALYSIS STRATA_THREAD_ANNOTATION(no_thread_safety_analysis)
