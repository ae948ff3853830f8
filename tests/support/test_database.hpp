// tests/support/test_database.hpp: the database the public API and recipe tests run on.
//
// The same tests run twice (tests/api, tests/recipes CMakeLists): in process, and on a
// FoundationDB cluster through the cluster backend (docs/cluster.md). The second run sets
// STRATA_TEST_CLUSTER_LIBRARY to the build tree's libfdb_c.so, which the backend loads with
// dlopen; its database stands in for the cluster. Given a cluster file that names no strata
// directory, that library opens one in-memory database per process (docs/fdb_c.md, "Which
// database"), so every open_database() of a cluster run is the same database: each
// open_database() empties it (every key below \xff cleared), as a test on a real cluster
// would, so that it starts as a new in-process database does. Tests that hold two
// databases at once and expect them to be two skip themselves on a cluster.
//
// A test that cannot hold on a cluster says why and skips itself there:
//   STRATA_SKIP_ON_CLUSTER("reopens a durable directory");
// By hand: STRATA_TEST_CLUSTER_LIBRARY=build/release/lib/libfdb_c.so <test binary>.
#pragma once

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <string>

#include <gtest/gtest.h>

#include "strata/database.hpp"
#include "strata/transaction.hpp"

#include <unistd.h>

namespace strata::testing {

// The client library of a cluster run, or "" in process.
inline std::string cluster_library() {
  const char* p = std::getenv("STRATA_TEST_CLUSTER_LIBRARY");
  return p != nullptr ? std::string(p) : std::string();
}

inline bool on_cluster() { return !cluster_library().empty(); }

// A cluster file of FoundationDB's form, written once per process (and removed at exit).
inline const std::filesystem::path& test_cluster_file() {
  struct File {
    std::filesystem::path path;
    File() {
      const char* base = std::getenv("TMPDIR");
      path = std::filesystem::path(base != nullptr ? base : "/tmp") /
             ("strata-test-" + std::to_string(::getpid()) + ".cluster");
      std::ofstream(path) << "strata_test:test@127.0.0.1:4500\n";
    }
    ~File() {
      std::error_code ec;
      std::filesystem::remove(path, ec);
    }
  };
  static const File file;
  return file.path;
}

// `options` on a cluster: the cluster file and the client library added.
inline Options on_test_cluster(Options options) {
  options.cluster_file = test_cluster_file();
  options.client_library = cluster_library();
  return options;
}

// Database::open(options) on this run's backend: a new database in process, the emptied
// cluster on a cluster. On a cluster, a test that opens a directory (options.path) is a
// mistake: it must skip itself there.
inline Database open_database(Options options = {}) {
  if (!on_cluster()) return Database::open(std::move(options));
  if (!options.path.empty()) {
    throw std::logic_error(
        "a test of a durable directory runs in process only: skip it on a "
        "cluster (STRATA_SKIP_ON_CLUSTER)");
  }
  Database db = Database::open(on_test_cluster(std::move(options)));
  // Through a handle of its own, so that the database returned has counted nothing.
  static Database cleaner = Database::open(on_test_cluster({}));
  cleaner.run([](Transaction& tr) { tr.clear_range("", "\xff"); });
  return db;
}

}  // namespace strata::testing

// Skips the current test on a cluster, saying why.
#define STRATA_SKIP_ON_CLUSTER(reason)                                                 \
  do {                                                                                 \
    if (::strata::testing::on_cluster()) GTEST_SKIP() << "on a cluster: " << (reason); \
  } while (false)
