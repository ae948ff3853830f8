// Opening a FoundationDB cluster as a strata::Database.
#include "cluster/cluster_database.hpp"

#include <chrono>
#include <climits>
#include <string>

#include "cluster/cluster_transaction.hpp"
#include "cluster/future.hpp"
#include "cluster/options.hpp"

namespace strata::cluster {
namespace {

// An FDBTransaction, destroyed with its owner (on every path, throws included).
class TransactionHandle {
 public:
  TransactionHandle(const FdbApi& api, FDBTransaction* tr) : api_(api), tr_(tr) {}
  ~TransactionHandle() {
    if (!network_stopped()) api_.transaction_destroy(tr_);
  }
  TransactionHandle(const TransactionHandle&) = delete;
  TransactionHandle& operator=(const TransactionHandle&) = delete;
  FDBTransaction* get() const { return tr_; }

 private:
  const FdbApi& api_;
  FDBTransaction* tr_;
};

[[noreturn]] void refuse(const std::string& what) {
  throw Error(ErrorCode::invalid_argument, what);
}

// The checks Database::open makes in process (engine/database_impl.cpp), for the same
// Options on a cluster.
void check(const Options& o) {
  if (!o.path.empty()) {
    refuse("Options::path and Options::cluster_file name two databases; give one");
  }
  if (o.mvcc_window.count() <= 0) {
    refuse("mvcc_window must be positive, got " + std::to_string(o.mvcc_window.count()) + " ms");
  }
  if (o.transaction_timeout.count() < 0) {
    refuse("transaction_timeout must not be negative, got " +
           std::to_string(o.transaction_timeout.count()) + " ms");
  }
  if (o.transaction_retry_limit < -1) {
    refuse("transaction_retry_limit must be -1 (no limit) or more, got " +
           std::to_string(o.transaction_retry_limit));
  }
  if (o.transaction_max_retry_delay.count() < 0) {
    refuse("transaction_max_retry_delay must not be negative, got " +
           std::to_string(o.transaction_max_retry_delay.count()) + " ms");
  }
  if (o.max_watches > kMaxWatchesCeiling) {
    refuse("max_watches must be at most " + std::to_string(kMaxWatchesCeiling) + ", got " +
           std::to_string(o.max_watches));
  }
}

void set_option(const FdbApi& api, FDBDatabase* db, int option, std::int64_t value) {
  const std::string bytes = int_option(value);
  if (const fdb_error_t e =
          api.database_set_option(db, option, reinterpret_cast<const std::uint8_t*>(bytes.data()),
                                  static_cast<int>(bytes.size()))) {
    throw_fdb(api, e, "setting database option " + std::to_string(option));
  }
}

}  // namespace

std::shared_ptr<ClusterDatabase> ClusterDatabase::open(const Options& options) {
  check(options);
  const FdbApi& api = client(options.client_library);
  FDBDatabase* raw = nullptr;
  const std::string file = options.cluster_file.string();
  if (const fdb_error_t e = api.create_database(file.c_str(), &raw)) {
    throw_fdb(api, e, "opening the cluster of " + file);
  }
  std::shared_ptr<ClusterDatabase> db;
  try {
    db = std::make_shared<ClusterDatabase>(api, raw, options.transaction_timeout);
  } catch (...) {
    api.database_destroy(raw);  // not yet the handle's
    throw;
  }
  set_option(api, raw, FDB_DB_OPTION_TRANSACTION_TIMEOUT, clamp_ms(options.transaction_timeout));
  set_option(api, raw, FDB_DB_OPTION_TRANSACTION_RETRY_LIMIT, options.transaction_retry_limit);
  set_option(api, raw, FDB_DB_OPTION_TRANSACTION_MAX_RETRY_DELAY,
             clamp_ms(options.transaction_max_retry_delay));
  set_option(api, raw, FDB_DB_OPTION_MAX_WATCHES, static_cast<std::int64_t>(options.max_watches));
  return db;
}

ClusterDatabase::~ClusterDatabase() {
  if (!network_stopped()) api_.database_destroy(db_);
}

Version ClusterDatabase::read_version() const {
  check_may_block("committed_version");
  FDBTransaction* raw = nullptr;
  if (const fdb_error_t e = api_.database_create_transaction(db_, &raw)) throw_fdb(api_, e);
  const TransactionHandle tr(api_, raw);
  std::int64_t version = 0;
  {
    const Future f(api_, api_.transaction_get_read_version(tr.get()));  // before tr goes
    const fdb_error_t e = f.wait_code();
    const fdb_error_t g = e != 0 ? e : api_.future_get_int64(f.get(), &version);
    if (g != 0) throw_fdb(api_, g, "reading the cluster's version");
  }
  return version;
}

DatabaseStats ClusterDatabase::stats() const {
  DatabaseStats s;
  s.commits = commits_.load(std::memory_order_relaxed);
  s.conflicts = conflicts_.load(std::memory_order_relaxed);
  return s;
}

}  // namespace strata::cluster
