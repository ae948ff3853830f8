// Misuses of the public API that must not compile. CTest compiles this file once for each
// STRATA_MISUSE value (tests/api/CMakeLists.txt) and expects the error named there; 0 is
// the control, the same calls used correctly, which must compile.
#include <cstdint>

#include <strata/strata.hpp>

void misuse(strata::Transaction& tr, const strata::Element& e, const strata::Queue& q,
            strata::Database& db) {
#if STRATA_MISUSE == 1
  tr.watch("k");  // a dropped Watch is cancelled at once
#elif STRATA_MISUSE == 2
  (void)e.get<int>();  // integers are std::int64_t
#elif STRATA_MISUSE == 3
  tr.get("k");  // a read whose value is thrown away
#elif STRATA_MISUSE == 4
  q.dequeue(db);  // an item taken off the queue and lost
#else
  strata::Watch w = tr.watch("k");
  w.cancel();
  (void)e.get<std::int64_t>();
  (void)tr.get("k");
  (void)q.dequeue(db);
#endif
}
