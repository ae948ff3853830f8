// Helpers shared by the public-API tests (tests/api): small wrappers over Database and
// Transaction so each test reads as the scenario it checks, plus the sanitizer-aware
// scaling of iteration counts.
#pragma once

#include <chrono>
#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "strata/database.hpp"
#include "strata/error.hpp"
#include "strata/transaction.hpp"

#include "support/sanitizers.hpp"
#include "support/test_database.hpp"

namespace strata::apitest {

using strata::testing::kSanitized;
using strata::testing::scaled;

using Store = std::map<std::string, std::string>;

// Commits `key = value` in a transaction of its own.
inline void put(Database& db, std::string_view key, std::string_view value) {
  Transaction tr = db.create_transaction();
  tr.set(key, value);
  tr.commit();
}

// Commits all of `rows` in one transaction.
inline void put_all(Database& db, const Store& rows) {
  Transaction tr = db.create_transaction();
  for (const auto& [k, v] : rows) tr.set(k, v);
  tr.commit();
}

// Everything readable, in a fresh transaction.
// A database holding a1 a2 a3 b1 b2 (values "v" + key).
inline Database five_rows() {
  Database db = testing::open_database();
  put_all(db, {{"a1", "va1"}, {"a2", "va2"}, {"a3", "va3"}, {"b1", "vb1"}, {"b2", "vb2"}});
  return db;
}

inline Store dump(Database& db) {
  Transaction tr = db.create_transaction();
  Store out;
  for (KeyValue& kv : tr.get_range("", "\xff")) out.emplace(std::move(kv.key), std::move(kv.value));
  return out;
}

// The committed value of `key` as a fresh transaction sees it.
inline std::optional<std::string> read_key(Database& db, std::string_view key) {
  Transaction tr = db.create_transaction();
  return tr.get(key);
}

// Commits `tr`; true when it failed with not_committed (1020). Any other error escapes.
inline bool commit_conflicts(Transaction& tr) {
  try {
    tr.commit();
    return false;
  } catch (const Error& e) {
    if (e.code() != static_cast<int>(ErrorCode::not_committed)) throw;
    return true;
  }
}

// Waits for wall-clock time to pass (not a synchronisation stand-in): spins on
// steady_clock until `d` has elapsed.
inline void spin_for(std::chrono::milliseconds d) {
  auto until = std::chrono::steady_clock::now() + d;
  while (std::chrono::steady_clock::now() < until) {
  }
}

// The deterministic race behind most conflict tests, in one thread:
//   tr1 fixes its read version and runs `reader`; tr2 runs `writer` and commits;
//   tr1 writes a dummy key (so it is not read-only) and commits.
// Returns true when tr1's commit failed with not_committed.
inline bool reader_conflicts_with(Database& db, const std::function<void(Transaction&)>& reader,
                                  const std::function<void(Transaction&)>& writer) {
  Transaction tr1 = db.create_transaction();
  (void)tr1.read_version();
  reader(tr1);
  Transaction tr2 = db.create_transaction();
  writer(tr2);
  tr2.commit();
  tr1.set("~dummy", "x");
  return commit_conflicts(tr1);
}

inline std::vector<std::string> keys_of(const std::vector<KeyValue>& rows) {
  std::vector<std::string> out;
  out.reserve(rows.size());
  for (const KeyValue& kv : rows) out.push_back(kv.key);
  return out;
}

}  // namespace strata::apitest
