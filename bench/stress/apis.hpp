// The client APIs strata-stress drives (--api): strata's C++ API, and FoundationDB's C API
// in libfdb_c.so through fdb_c_client.hpp. The workloads are templates over one of these
// traits; the free functions below cover the few places where the two differ.
// STRATA_STRESS_FDB_C is 1 when the build has libfdb_c (STRATA_BUILD_FDB_C).
#pragma once

#include <cstdint>

#include "strata/strata.hpp"

#if STRATA_STRESS_FDB_C
#include "fdb_c_recipes.hpp"
#endif

namespace stress {

struct CppApi {
  static constexpr const char* kName = "cpp";
  using Database = strata::Database;
  using Transaction = strata::Transaction;
  using Error = strata::Error;
  using Queue = strata::Queue;
  using PriorityQueue = strata::PriorityQueue;
};

// Commits refused with not_committed (1020) so far.
inline std::uint64_t conflicts(strata::Database& db) { return db.stats().conflicts; }
// Makes the coming commit's versionstamp available afterwards (strata keeps it anyway).
inline void request_versionstamp(strata::Transaction&) {}

#if STRATA_STRESS_FDB_C
struct CApi {
  static constexpr const char* kName = "c";
  using Database = fdbc::Database;
  using Transaction = fdbc::Transaction;
  using Error = fdbc::Error;
  using Queue = fdbc::Queue;
  using PriorityQueue = fdbc::PriorityQueue;
};

inline std::uint64_t conflicts(fdbc::Database&) { return fdbc::Transaction::conflicts(); }
inline void request_versionstamp(fdbc::Transaction& tr) { tr.request_versionstamp(); }
#endif

}  // namespace stress
