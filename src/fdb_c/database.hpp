// fdb_c/database.hpp: FDBDatabase, a handle on one of the process's strata databases, and
// FDBTenant, a handle on a tenant of it.
//
// Which database a handle opens is in docs/fdb_c.md ("Which database"). Databases are
// opened once per target and kept for the life of the process. A tenant shares its
// database handle's options, and keeps them after the handle is destroyed (FoundationDB's
// bindings may destroy a database before the tenants opened from it).
//
// Thread safety: every method may be called from any thread.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "strata/database.hpp"

#include "base/adaptive_mutex.hpp"
#include "base/mutex.hpp"
#include "fdb_c/fdb_c.h"
#include "fdb_c/options.hpp"

namespace strata::fdb_c {

// What a database handle and its tenants share.
class DatabaseState {
 public:
  // `connection_record`: what the handle was made from, as FoundationDB's client status
  // names it ("file: <path>", "default file", "connection string: <string>").
  DatabaseState(Database db, std::string connection_record)
      : database_(std::move(db)), connection_record_(std::move(connection_record)) {}

  const Database& database() const { return database_; }
  const std::string& connection_record() const { return connection_record_; }
  // The transaction options a new transaction starts from (the TRANSACTION_* database
  // options), and a database option applied to them.
  TransactionOptions defaults() const {
    base::UniqueLock lock(mu_);
    return defaults_;
  }
  // Counts the changes to the defaults: a transaction that took them at a count still
  // current has them as they are, without taking the lock.
  std::uint64_t defaults_changes() const {
    return defaults_changes_.load(std::memory_order_acquire);
  }
  fdb_error_t set_option(FDBDatabaseOption option, const uint8_t* value, int value_length);
  // FoundationDB's DatabaseContext::deferredError: the first value refused of an option
  // its client checks on its network thread (database_option_deferred), or 0. From then
  // on every read and commit of the handle's transactions fails with it, those made
  // before included (FoundationDB checks it before the transaction's own), as do the
  // handle's own operations but get_client_status. Options set after it are not applied.
  fdb_error_t deferred_error() const { return deferred_.load(std::memory_order_acquire); }

  // FoundationDB's MAX_WATCHES, counted per handle as its client counts them: a watch
  // takes one from its creation until its future is ready. False (too_many_watches) when
  // the handle's limit is reached.
  bool take_watch() const;
  void give_back_watch() const;

 private:
  fdb_error_t apply_option(FDBDatabaseOption option, const uint8_t* value, int value_length);

  Database database_;
  const std::string connection_record_;
  mutable base::AdaptiveMutex mu_;  // taken by every transaction made: held for a copy
  TransactionOptions defaults_ GUARDED_BY(mu_);
  // Moved on under mu_ after each change to defaults_ (release), so that a count read
  // (acquire) before defaults() is at most the count of what defaults() returns.
  std::atomic<std::uint64_t> defaults_changes_{0};
  std::atomic<std::int64_t> max_watches_{10'000};
  mutable std::atomic<std::int64_t> watches_{0};  // outstanding watches of this handle
  // deferred_error(): read by every read and commit, on a line of its own, away from the
  // counts that watches write.
  alignas(64) std::atomic<fdb_error_t> deferred_{0};
};

// A new FDBTransaction in *out on `state`'s database, from its current defaults;
// `unavailable` as FDB_transaction's. Returns 0 or the error.
fdb_error_t create_transaction(std::shared_ptr<const DatabaseState> state, fdb_error_t unavailable,
                               FDBTransaction** out);

// fdb_database_get_client_status's JSON document for a handle made from
// `connection_record`.
std::string client_status(std::string_view connection_record);

}  // namespace strata::fdb_c

struct FDB_database {
  FDB_database(strata::Database db, std::string connection_record)
      : state(std::make_shared<strata::fdb_c::DatabaseState>(std::move(db),
                                                             std::move(connection_record))) {}

  std::shared_ptr<strata::fdb_c::DatabaseState> state;
};

// strata answers as a cluster whose tenant mode is disabled (FoundationDB's default):
// a tenant opens, and its transactions fail every read, watch and commit with
// tenants_disabled (docs/decisions/0018).
struct FDB_tenant {
  // The name is not kept: with tenants disabled no call looks it up.
  explicit FDB_tenant(std::shared_ptr<strata::fdb_c::DatabaseState> s) : state(std::move(s)) {}

  std::shared_ptr<strata::fdb_c::DatabaseState> state;
};
