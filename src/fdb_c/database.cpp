// The fdb_*database* entry points and the process's table of open databases.
#include "fdb_c/database.hpp"

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <string>
#include <string_view>

#include "base/mutex.hpp"
#include "fdb_c/api_version.hpp"
#include "fdb_c/bytes.hpp"
#include "fdb_c/error_codes.hpp"
#include "fdb_c/fdb_c.h"
#include "fdb_c/future.hpp"
#include "fdb_c/network.hpp"
#include "fdb_c/transaction.hpp"

namespace strata::fdb_c {
namespace {

constexpr std::string_view kStrataPrefix = "strata:";

// The directory a connection string names ("strata:<dir>"), or "" for the in-memory
// database.
std::string target_of(std::string_view connection) {
  if (connection.substr(0, kStrataPrefix.size()) == kStrataPrefix) {
    return std::string(connection.substr(kStrataPrefix.size()));
  }
  return {};
}

std::string target_of_cluster_file(const char* path) {
  if (path == nullptr || *path == '\0') {
    const char* dir = std::getenv("STRATA_FDB_PATH");
    return dir != nullptr ? std::string(dir) : std::string();
  }
  std::ifstream in(path);
  std::string first_line;
  if (in) std::getline(in, first_line);
  return target_of(first_line);
}

// One strata database per target for the life of the process (never destroyed: a
// binding's threads may still use it while static destructors run at exit).
struct OpenDatabases {
  base::Mutex mu;
  std::map<std::string, Database> by_target GUARDED_BY(mu);
};

Database open_target(const std::string& target) {
  static auto* open = new OpenDatabases();
  base::MutexLock lock(open->mu);
  auto it = open->by_target.find(target);
  if (it != open->by_target.end()) return it->second;
  Options options;
  // Each handle counts its own watches (MAX_WATCHES); the database holds them all.
  options.max_watches = static_cast<std::size_t>(kMaxWatchesCeiling);
  // As a cluster: a read version handed out reads for the window (docs/decisions/0026).
  options.keep_mvcc_window = true;
  if (!target.empty()) {
    options.path = target;
    options.durability = Durability::fsync;
  }
  Database db = Database::open(options);
  if (db.committed_version() == 0) {
    // FoundationDB never hands out read version 0 (and set_read_version refuses it): a
    // fresh database's first version comes from a commit that writes nothing.
    Transaction first = db.create_transaction();
    first.add_write_conflict_range("", std::string_view("\x00", 1));
    first.commit();
  }
  open->by_target.emplace(target, db);
  return db;
}

fdb_error_t create_database(const std::string& target, const std::string& record,
                            FDBDatabase** out) {
  if (api_version() == 0) return kApiVersionUnset;
  if (!Network::instance().is_set_up()) return kNetworkNotSetup;  // as FoundationDB's client
  if (out == nullptr) return kClientInvalidOperation;
  try {
    *out = new FDB_database(open_target(target), record);
    return 0;
  } catch (...) {
    return current_error();
  }
}

// A JSON string for `s`.
std::string json_string(std::string_view s) {
  std::string out = "\"";
  for (const char c : s) {
    const auto u = static_cast<unsigned char>(c);
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (u < 0x20) {
      char escaped[8];
      std::snprintf(escaped, sizeof escaped, "\\u%04x", u);
      out += escaped;
    } else {
      out += c;
    }
  }
  return out + '"';
}

}  // namespace

// FoundationDB's client status document (its multi-version client's shape, which wraps the
// database's own report): one in-process database, always connected.
std::string client_status(std::string_view connection_record) {
  char protocol[32];
  std::snprintf(protocol, sizeof protocol, "%llx",
                static_cast<unsigned long long>(kServerProtocol));
  const std::string quoted_protocol = json_string(protocol);
  return "{\"Healthy\":true,\"InitializationState\":\"created\",\"ConnectionRecord\":" +
         json_string(connection_record) + ",\"ProtocolVersion\":" + quoted_protocol +
         ",\"AvailableClients\":[{\"ProtocolVersion\":" + quoted_protocol +
         ",\"ReleaseVersion\":" + json_string(kReleaseVersion) +
         ",\"ThreadIndex\":0}],\"DatabaseStatus\":{\"Healthy\":true,"
         "\"Coordinators\":[],\"Connections\":[],\"NumConnectionsFailed\":0}}";
}

fdb_error_t create_transaction(std::shared_ptr<const DatabaseState> state, fdb_error_t unavailable,
                               FDBTransaction** out) {
  if (out == nullptr) return kClientInvalidOperation;
  try {
    *out = new FDB_transaction(std::move(state), unavailable);
    return 0;
  } catch (...) {
    return current_error();
  }
}

fdb_error_t DatabaseState::set_option(FDBDatabaseOption option, const uint8_t* value,
                                      int value_length) {
  // Once the handle has its deferred error, FoundationDB's client applies no option
  // (ThreadSafeDatabase::setOption checks it first) but still answers an unknown code.
  if (deferred_error() != 0) return database_option_known(option) ? 0 : kInvalidOption;
  const fdb_error_t e = apply_option(option, value, value_length);
  if (e == 0 || !database_option_deferred(option)) return e;
  // FoundationDB's client sets these on its network thread and keeps what that throws as
  // the database's deferred error (ThreadSafeDatabase::setOption, onMainThreadVoid with
  // DatabaseContext::deferredError): the call succeeds.
  fdb_error_t none = 0;
  deferred_.compare_exchange_strong(none, e, std::memory_order_release, std::memory_order_relaxed);
  return 0;
}

fdb_error_t DatabaseState::apply_option(FDBDatabaseOption option, const uint8_t* value,
                                        int value_length) {
  if (option == FDB_DB_OPTION_MAX_WATCHES) {
    std::int64_t limit = 0;
    if (fdb_error_t e = int_option(value, value_length, 0, kMaxWatchesCeiling, limit)) return e;
    max_watches_.store(limit, std::memory_order_relaxed);
    return 0;
  }
  base::UniqueLock lock(mu_);
  const fdb_error_t e = apply_database_option(defaults_, option, value, value_length);
  if (e == 0) defaults_changes_.fetch_add(1, std::memory_order_release);
  return e;
}

bool DatabaseState::take_watch() const {
  const std::int64_t limit = max_watches_.load(std::memory_order_relaxed);
  std::int64_t n = watches_.load(std::memory_order_relaxed);
  do {
    if (n >= limit) return false;
  } while (!watches_.compare_exchange_weak(n, n + 1, std::memory_order_relaxed));
  return true;
}

void DatabaseState::give_back_watch() const { watches_.fetch_sub(1, std::memory_order_relaxed); }

}  // namespace strata::fdb_c

namespace fc = strata::fdb_c;

// No exception leaves these (docs/decisions/0038): an allocation that fails is
// unknown_error (4000), and a future that cannot be made is FDB_future::out_of_memory().
extern "C" {

fdb_error_t fdb_create_database(const char* cluster_file_path, FDBDatabase** out_database) {
  try {
    // The connection record as FoundationDB's client status names it.
    const std::string record = cluster_file_path != nullptr && *cluster_file_path != '\0'
                                   ? "file: " + std::string(cluster_file_path)
                                   : "default file";
    return fc::create_database(fc::target_of_cluster_file(cluster_file_path), record, out_database);
  } catch (...) {
    return fc::current_error();
  }
}

fdb_error_t fdb_create_database_from_connection_string(const char* connection_string,
                                                       FDBDatabase** out_database) {
  if (connection_string == nullptr) return fc::kClientInvalidOperation;
  try {
    return fc::create_database(fc::target_of(connection_string),
                               "connection string: " + std::string(connection_string),
                               out_database);
  } catch (...) {
    return fc::current_error();
  }
}

void fdb_database_destroy(FDBDatabase* d) { delete d; }

fdb_error_t fdb_database_set_option(FDBDatabase* d, FDBDatabaseOption option, const uint8_t* value,
                                    int value_length) {
  return d->state->set_option(option, value, value_length);
}

fdb_error_t fdb_database_create_transaction(FDBDatabase* d, FDBTransaction** out_transaction) {
  return fc::create_transaction(d->state, 0, out_transaction);
}

double fdb_database_get_main_thread_busyness(FDBDatabase* /*d*/) { return 0.0; }

fdb_error_t fdb_database_open_tenant(FDBDatabase* d, const uint8_t* /*tenant_name*/,
                                     int tenant_name_length, FDBTenant** out_tenant) {
  if (out_tenant == nullptr || tenant_name_length < 0) return fc::kClientInvalidOperation;
  try {
    *out_tenant = new FDB_tenant(d->state);
    return 0;
  } catch (...) {
    return fc::current_error();
  }
}

fdb_error_t fdb_tenant_create_transaction(FDBTenant* tenant, FDBTransaction** out_transaction) {
  return fc::create_transaction(tenant->state, fc::kTenantsDisabled, out_transaction);
}

// A tenant's id comes from the cluster's tenant map, which is empty while tenants are
// disabled: it fails as the tenant's transactions do.
// As a cluster's commit proxy answers for a name its tenant map lacks (a cluster without
// tenants has none): tenant_not_found.
FDBFuture* fdb_tenant_get_id(FDBTenant* /*tenant*/) {
  return FDB_future::failed(fc::kTenantNotFound);
}

void fdb_tenant_destroy(FDBTenant* tenant) { delete tenant; }

// Administration of a cluster's processes: one process, no workers, no recovery to force.

FDBFuture* fdb_database_reboot_worker(FDBDatabase* d, const uint8_t* /*address*/,
                                      int /*address_length*/, fdb_bool_t /*check*/,
                                      int /*duration*/) {
  if (const fdb_error_t e = d->state->deferred_error(); e != 0) return FDB_future::failed(e);
  // As FoundationDB for an address that is no worker's: 0, nothing rebooted.
  FDB_future::Result none{FDB_future::Kind::int64};
  return FDB_future::ready(std::move(none));
}

FDBFuture* fdb_database_force_recovery_with_data_loss(FDBDatabase* d, const uint8_t* /*dcid*/,
                                                      int /*dcid_length*/) {
  const fdb_error_t deferred = d->state->deferred_error();
  return FDB_future::failed(deferred != 0 ? deferred : fc::kUnsupportedOperation);
}

FDBFuture* fdb_database_create_snapshot(FDBDatabase* d, const uint8_t* /*uid*/, int /*uid_length*/,
                                        const uint8_t* /*snap_command*/,
                                        int /*snap_command_length*/) {
  const fdb_error_t deferred = d->state->deferred_error();
  return FDB_future::failed(deferred != 0 ? deferred : fc::kUnsupportedOperation);
}

FDBFuture* fdb_database_get_server_protocol(FDBDatabase* d, uint64_t expected_version) {
  // A connected handle's protocol comes from its own database, which checks its deferred
  // error first (MultiVersionDatabase's versionMonitorDb, ThreadSafeDatabase).
  if (const fdb_error_t e = d->state->deferred_error(); e != 0) return FDB_future::failed(e);
  // As FoundationDB: with an expected version, ready only once the protocol differs from
  // it. The in-process "server" never changes its protocol: that future stays pending
  // until cancelled or destroyed.
  if (expected_version == fc::kServerProtocol) {
    try {
      return FDB_future::pending(FDB_future::Kind::int64);
    } catch (...) {
      return FDB_future::out_of_memory();
    }
  }
  FDB_future::Result protocol{FDB_future::Kind::int64};
  protocol.int64 = static_cast<std::int64_t>(fc::kServerProtocol);
  return FDB_future::ready(std::move(protocol));
}

FDBFuture* fdb_database_get_client_status(FDBDatabase* d) {
  FDB_future::Result status{FDB_future::Kind::key};
  try {
    status.bytes = fc::client_status(d->state->connection_record());
  } catch (...) {
    return FDB_future::failed(fc::current_error());
  }
  return FDB_future::ready(std::move(status));
}

}  // extern "C"
