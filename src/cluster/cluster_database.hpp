// cluster/cluster_database.hpp: a strata::Database opened on a FoundationDB cluster.
//
// One FDBDatabase handle (fdb_create_database on Options::cluster_file), with the options
// FoundationDB has for what strata's Options set: the transaction defaults (timeout, retry
// limit, maximum retry delay) and MAX_WATCHES. The rest of Options (mvcc_window,
// keep_mvcc_window, durability, checkpoint_log_bytes) belongs to the cluster there: it is
// checked as open() checks it in process, and otherwise unused.
//
// Transaction handles are reused: a strata transaction that ends gives its FDBTransaction
// back, reset, to a slot of the database picked by the thread, and the thread's next
// transaction takes it from there and resets it again (a reset costs less than a new handle and its
// destruction, on a cluster as in process). FoundationDB's reset is "similar to calling
// fdb_transaction_destroy followed by fdb_database_create_transaction" (its C API
// reference): options back to the database's defaults, uncommitted watches cancelled, the
// timeout counted from the reset. A spare holds no read version or watch, and goes with
// the database.
//
// Thread safety: every method from any thread; transactions share the database.
#pragma once

#include <array>
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

  // An FDBTransaction for a new strata transaction: the thread's spare one, reset, when
  // its slot holds one, else a new one. Its timeout counts from here. Throws
  // FoundationDB's error.
  FDBTransaction* take_transaction();
  // Ends a strata transaction's use of `tr`: reset and kept in the thread's slot, or
  // destroyed when the slot is taken.
  void give_back(FDBTransaction* tr) noexcept;

  // A read version fresh from the cluster: at least every version committed before the call.
  Version read_version() const;
  DatabaseStats stats() const;

  // What this handle's transactions saw (DatabaseStats: the client's view).
  void count_commit() { commits_.fetch_add(1, std::memory_order_relaxed); }
  void count_conflict() { conflicts_.fetch_add(1, std::memory_order_relaxed); }

 private:
  const FdbApi& api_;
  FDBDatabase* db_;
  // The spare handles, each slot on a cache line of its own, so that threads giving back
  // and taking in different slots do not share one.
  struct alignas(64) Spare {
    std::atomic<FDBTransaction*> tr{nullptr};
  };
  static constexpr std::size_t kSpares = 16;
  std::atomic<FDBTransaction*>& spare_slot();

  const std::chrono::milliseconds default_timeout_;
  std::array<Spare, kSpares> spares_;
  std::atomic<std::uint64_t> commits_{0};
  std::atomic<std::uint64_t> conflicts_{0};
};

}  // namespace strata::cluster
