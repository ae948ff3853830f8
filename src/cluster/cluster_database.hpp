// cluster/cluster_database.hpp: a strata::Database opened on a FoundationDB cluster.
//
// One FDBDatabase handle (fdb_create_database on Options::cluster_file), with the options
// FoundationDB has for what strata's Options set: the transaction defaults (timeout, retry
// limit, maximum retry delay) and MAX_WATCHES. The rest of Options (mvcc_window,
// keep_mvcc_window, durability, checkpoint_log_bytes) belongs to the cluster there: it is
// checked as open() checks it in process, and otherwise unused.
//
// Thread safety: every method from any thread; transactions share the database.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>

#include "strata/database.hpp"

#include "cluster/client.hpp"

namespace strata::cluster {

class ClusterDatabase {
 public:
  // Loads the client library (cluster/client.hpp) and opens the cluster. Throws
  // invalid_argument (9003) for Options open() refuses in process, and for a path given
  // with a cluster file; the client's errors; FoundationDB's error from
  // fdb_create_database.
  static std::shared_ptr<ClusterDatabase> open(const Options& options);
  ClusterDatabase(const FdbApi& api, FDBDatabase* db, std::chrono::milliseconds timeout)
      : api_(api), db_(db), default_timeout_(timeout) {}
  ~ClusterDatabase();
  ClusterDatabase(const ClusterDatabase&) = delete;
  ClusterDatabase& operator=(const ClusterDatabase&) = delete;

  const FdbApi& api() const { return api_; }
  FDBDatabase* handle() const { return db_; }
  // Options::transaction_timeout: what a transaction starts with and reset() returns to.
  std::chrono::milliseconds default_timeout() const { return default_timeout_; }

  // A read version fresh from the cluster: at least every version committed before the call.
  Version read_version() const;
  DatabaseStats stats() const;

  // What this handle's transactions saw (DatabaseStats: the client's view).
  void count_commit() { commits_.fetch_add(1, std::memory_order_relaxed); }
  void count_conflict() { conflicts_.fetch_add(1, std::memory_order_relaxed); }

 private:
  const FdbApi& api_;
  FDBDatabase* db_;
  const std::chrono::milliseconds default_timeout_;
  std::atomic<std::uint64_t> commits_{0};
  std::atomic<std::uint64_t> conflicts_{0};
};

}  // namespace strata::cluster
