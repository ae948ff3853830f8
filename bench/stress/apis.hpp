// The client API strata-stress drives: strata's C++ API and recipes, on an in-process
// database (--api cpp) or on a cluster database through FoundationDB's C API (--api c,
// --cluster-file; docs/cluster.md). The workloads are templates over these traits; the
// free functions below are where a client API could differ.
#pragma once

#include <cstdint>

#include "strata/strata.hpp"

namespace stress {

struct CppApi {
  static constexpr const char* kName = "cpp";
  using Database = strata::Database;
  using Transaction = strata::Transaction;
  using Error = strata::Error;
  using Queue = strata::Queue;
  using PriorityQueue = strata::PriorityQueue;
};

// Commits refused with not_committed (1020) so far (on a cluster: this client's).
inline std::uint64_t conflicts(strata::Database& db) { return db.stats().conflicts; }
// Makes the coming commit's versionstamp available afterwards (strata keeps it anyway).
inline void request_versionstamp(strata::Transaction&) {}

}  // namespace stress
