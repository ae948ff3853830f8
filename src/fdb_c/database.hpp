// fdb_c/database.hpp: FDBDatabase, a handle on one of the process's strata databases.
//
// Which database a handle opens is in docs/fdb_c.md ("Which database"). Databases are
// opened once per target and kept for the life of the process.
//
// Thread safety: every method may be called from any thread.
#pragma once

#include <mutex>

#include "strata/database.hpp"

#include "fdb_c/options.hpp"

struct FDB_database {
  explicit FDB_database(strata::Database db) : database(std::move(db)) {}

  strata::Database database;
  std::mutex mu;
  strata::fdb_c::TransactionOptions defaults;  // guarded by mu
};
