// The fdb_*database* entry points and the process's table of open databases.
#include "fdb_c/database.hpp"

#include <cstdlib>
#include <fstream>
#include <map>
#include <string>

#include "fdb_c/api_version.hpp"
#include "fdb_c/error_codes.hpp"
#include "fdb_c/fdb_c.h"
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
Database open_target(const std::string& target) {
  static auto* mu = new std::mutex();
  static auto* open = new std::map<std::string, Database>();
  std::lock_guard lock(*mu);
  auto it = open->find(target);
  if (it != open->end()) return it->second;
  Options options;
  if (!target.empty()) {
    options.path = target;
    options.durability = Durability::fsync;
  }
  Database db = Database::open(options);
  open->emplace(target, db);
  return db;
}

fdb_error_t create(const std::string& target, FDBDatabase** out) {
  if (api_version() == 0) return kApiVersionUnset;
  if (out == nullptr) return kClientInvalidOperation;
  try {
    *out = new FDB_database(open_target(target));
    return 0;
  } catch (const Error& e) {
    return to_fdb_error(e);
  } catch (...) {
    return kInternalError;
  }
}

}  // namespace
}  // namespace strata::fdb_c

namespace fc = strata::fdb_c;

extern "C" {

fdb_error_t fdb_create_database(const char* cluster_file_path, FDBDatabase** out_database) {
  return fc::create(fc::target_of_cluster_file(cluster_file_path), out_database);
}

fdb_error_t fdb_create_database_from_connection_string(const char* connection_string,
                                                       FDBDatabase** out_database) {
  if (connection_string == nullptr) return fc::kClientInvalidOperation;
  return fc::create(fc::target_of(connection_string), out_database);
}

void fdb_database_destroy(FDBDatabase* d) { delete d; }

fdb_error_t fdb_database_set_option(FDBDatabase* d, FDBDatabaseOption option, const uint8_t* value,
                                    int value_length) {
  std::lock_guard lock(d->mu);
  return fc::apply_database_option(d->defaults, option, value, value_length);
}

fdb_error_t fdb_database_create_transaction(FDBDatabase* d, FDBTransaction** out_transaction) {
  if (out_transaction == nullptr) return fc::kClientInvalidOperation;
  fc::TransactionOptions defaults;
  {
    std::lock_guard lock(d->mu);
    defaults = d->defaults;
  }
  try {
    *out_transaction = new FDB_transaction(d->database, defaults);
    return 0;
  } catch (...) {
    return fc::kInternalError;
  }
}

double fdb_database_get_main_thread_busyness(FDBDatabase* /*d*/) { return 0.0; }

}  // extern "C"
