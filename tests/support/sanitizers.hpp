// Whether this test binary runs under ASan or TSan, and iteration counts scaled for it.
#pragma once

#include <cstdlib>

namespace strata::testing {

#if defined(__SANITIZE_THREAD__) || defined(__SANITIZE_ADDRESS__)
inline constexpr bool kSanitized = true;
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer) || __has_feature(address_sanitizer)
inline constexpr bool kSanitized = true;
#else
inline constexpr bool kSanitized = false;
#endif
#else
inline constexpr bool kSanitized = false;
#endif

// An iteration count: `release` in optimised builds, `sanitized` under ASan or TSan, and in
// a cluster run (tests/support/test_database.hpp), where every operation goes through the
// C API and a real cluster would keep a drained queue's deleted items in every pop's scan
// for its 5 s of versions.
inline int scaled(int release, int sanitized) {
  return kSanitized || std::getenv("STRATA_TEST_CLUSTER_LIBRARY") != nullptr ? sanitized : release;
}

}  // namespace strata::testing
