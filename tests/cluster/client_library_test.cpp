// The cluster backend's client library (src/cluster/client.cpp): what a program is told
// when the library is missing, is not FoundationDB's client, or is too old, and that the
// build tree's libfdb_c.so, loaded with dlopen beside the strata linked into this test,
// opens a cluster that the public API then drives.
//
// FoundationDB's client refuses API versions it does not support with
// api_version_not_supported (2203): fdb_c.h's fdb_select_api_version and
// flow/error_definitions.h in apple/foundationdb.
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <string>

#include <gtest/gtest.h>

#include "strata/strata.hpp"

#include "support/error_matchers.hpp"
#include "support/test_database.hpp"
#include <dlfcn.h>
#include <unistd.h>

namespace strata {
namespace {

using testing::ThrowsCode;
using testing::ThrowsCodeWith;

Options cluster_with(const std::string& library) {
  Options o;
  o.cluster_file = testing::test_cluster_file();
  o.client_library = library;
  return o;
}

TEST(ClientLibrary, AMissingLibraryIsAClearError) {
  EXPECT_THAT([] { (void)Database::open(cluster_with("/nonexistent/libfdb_c.so")); },
              ThrowsCodeWith(ErrorCode::client_library_unavailable, "/nonexistent/libfdb_c.so"));
  EXPECT_THAT([] { (void)Database::open(cluster_with("/nonexistent/libfdb_c.so")); },
              ThrowsCodeWith(ErrorCode::client_library_unavailable,
                             "install FoundationDB's client package"));
}

TEST(ClientLibrary, ALibraryWithoutTheCApiIsAClearError) {
  EXPECT_THAT([] { (void)Database::open(cluster_with(STRATA_TEST_NOT_FDB_C)); },
              ThrowsCodeWith(ErrorCode::client_library_unavailable,
                             "is not FoundationDB's client library: it has no "
                             "fdb_get_max_api_version"));
}

TEST(ClientLibrary, ALibraryOlderThanApi710IsAClearError) {
  EXPECT_THAT([] { (void)Database::open(cluster_with(STRATA_TEST_OLD_FDB_C)); },
              ThrowsCodeWith(ErrorCode::api_version_not_supported,
                             "supports FoundationDB API versions up to 700; strata needs 710"));
}

// The API version is selected once per process, so a network that failed to set up
// cannot be set up again: every open gets the first error. In a child process (a fresh
// one: the gtest "threadsafe" style runs this test alone), since a failed start is final.
TEST(ClientLibrary, ANetworkThatFailedToStartKeepsItsError) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(
      {
        int failures = 0;
        for (int i = 0; i < 2; ++i) {
          try {
            (void)Database::open(cluster_with(STRATA_TEST_UNSTARTABLE_FDB_C));
            ++failures;
          } catch (const Error& e) {
            if (e.code() != 4100) ++failures;  // internal_error, not 2201
          }
        }
        std::exit(failures);
      },
      ::testing::ExitedWithCode(0), "");
}

// At exit the network is stopped and its thread joined (fdb_stop_network: "You must call
// this function and wait for fdb_run_network() to return before allowing your program to
// exit", https://apple.github.io/foundationdb/api-c.html), and from then on no future
// becomes ready ("fdb_run_network: must be called ... before any asynchronous functions in
// this API can be expected to complete", same page). Objects that outlive it, here held
// for an atexit handler registered before the first open (as statics made before it would
// be), are refused with client_invalid_operation (2000) where they would wait forever, a
// commit_async calls back at once with that error, and their destructors let the process
// exit. In a child process: the network stops only at its exit.
TEST(ClientLibrary, ObjectsThatOutliveTheNetworkRefuseToWaitAndLetTheProcessExit) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(
      {
        struct Held {
          std::optional<Database> db;
          std::optional<Transaction> tr;
          std::optional<Watch> watch;
        };
        static Held* held = new Held;  // NOLINT: the handler below owns it, at exit
        std::atexit([] {
          ::alarm(60);  // a wait that never ends fails the test (SIGALRM) instead of hanging it
          int failures = 0;
          auto refused = [&](auto&& call) {
            try {
              call();
              ++failures;
            } catch (const Error& e) {
              if (e.code() != static_cast<int>(ErrorCode::client_invalid_operation) ||
                  std::string(e.what()).find("network has stopped") == std::string::npos) {
                ++failures;
              }
            }
          };
          refused([] { (void)held->tr->get("outlived/key"); });
          refused([] { held->watch->wait(); });  // pending: would wait forever
          refused([] { (void)held->db->committed_version(); });
          {
            Transaction writer = held->db->create_transaction();
            writer.set("outlived/key", "w");
            refused([&] { writer.commit(); });
            std::optional<int> async_code;
            writer.commit_async([&](const Error* e) {
              if (e != nullptr) async_code = e->code();
            });
            if (async_code != static_cast<int>(ErrorCode::client_invalid_operation)) ++failures;
          }
          // The last owners of the watch, the transaction and the database: their
          // destructors return, and the process ends.
          held->watch.reset();
          held->tr.reset();
          held->db.reset();
          std::_Exit(failures);
        });
        held->db.emplace(Database::open(cluster_with(STRATA_TEST_FDB_C)));
        held->db->run([](Transaction& tr) { tr.set("outlived/key", "v"); });
        held->tr.emplace(held->db->create_transaction());
        if (held->tr->get("outlived/key") != "v") std::_Exit(98);
        {
          Transaction watcher = held->db->create_transaction();
          held->watch.emplace(watcher.watch("outlived/key"));
          watcher.commit();
        }
        std::exit(99);  // the handler's _Exit gives the result
      },
      ::testing::ExitedWithCode(0), "");
}

TEST(ClientLibrary, APathAndAClusterFileTogetherAreInvalid) {
  Options o = cluster_with(STRATA_TEST_FDB_C);
  o.path = "/tmp/strata-not-opened";
  EXPECT_THAT([&] { (void)Database::open(o); },
              ThrowsCodeWith(ErrorCode::invalid_argument, "cluster_file"));
  EXPECT_FALSE(std::filesystem::exists(o.path));
}

TEST(ClientLibrary, TheBuildTreesLibraryOpensACluster) {
  Database db = Database::open(cluster_with(STRATA_TEST_FDB_C));
  db.run([](Transaction& tr) { tr.set("cluster-key", "v"); });
  Transaction tr = db.create_transaction();
  EXPECT_EQ(tr.get("cluster-key"), "v");
  tr.set("other", "w");
  tr.commit();
  EXPECT_GT(tr.committed_version(), 0);
  EXPECT_GE(db.committed_version(), tr.committed_version());
  EXPECT_EQ(db.opened_version(), 0);  // no opening of a cluster is older than another
  EXPECT_GE(db.stats().commits, 2u);
  // A second handle is the same cluster.
  Database again = Database::open(cluster_with(STRATA_TEST_FDB_C));
  EXPECT_EQ(again.create_transaction().get("other"), "w");
}

TEST(ClientLibrary, ErrorsKeepFoundationDBsNumbers) {
  Database db = Database::open(cluster_with(STRATA_TEST_FDB_C));
  Transaction reader = db.create_transaction();
  (void)reader.get("counted");
  db.run([](Transaction& tr) { tr.set("counted", "1"); });
  reader.set("counted", "2");
  EXPECT_THAT([&] { reader.commit(); }, ThrowsCode(ErrorCode::not_committed));
  EXPECT_GE(db.stats().conflicts, 1u);
}

TEST(ClientLibrary, AnotherNameForTheRunningLibraryOpensIt) {
  (void)Database::open(cluster_with(STRATA_TEST_FDB_C));  // the process's client
  // A symlink to the same file: the loader gives the same handle (RTLD_NOLOAD), so it is
  // the running client, as "" and "libfdb_c.so" are when both find the same file.
  const std::filesystem::path other = std::filesystem::temp_directory_path() /
                                      ("strata-other-" + std::to_string(::getpid()) + ".so");
  std::filesystem::create_symlink(std::filesystem::absolute(STRATA_TEST_FDB_C), other);
  Database db = Database::open(cluster_with(other.string()));
  db.run([](Transaction& tr) { tr.set("another-name", "v"); });
  EXPECT_EQ(db.create_transaction().get("another-name"), "v");
  std::filesystem::remove(other);
}

TEST(ClientLibrary, ASecondLibraryIsRefusedWithoutBeingLoaded) {
  (void)Database::open(cluster_with(STRATA_TEST_FDB_C));  // the process's client
  // A copy is another file, so another library: FoundationDB's network is one per process.
  const std::filesystem::path copy = std::filesystem::temp_directory_path() /
                                     ("strata-copy-" + std::to_string(::getpid()) + ".so");
  std::filesystem::copy_file(STRATA_TEST_FDB_C, copy,
                             std::filesystem::copy_options::overwrite_existing);
  EXPECT_THAT([&] { (void)Database::open(cluster_with(copy.string())); },
              ThrowsCodeWith(ErrorCode::client_invalid_operation, "one client library"));
  EXPECT_EQ(dlopen(copy.c_str(), RTLD_NOW | RTLD_NOLOAD), nullptr);  // never loaded
  // A library that does not exist is refused the same way: the check comes first.
  EXPECT_THAT([] { (void)Database::open(cluster_with("/nonexistent/libfdb_c.so")); },
              ThrowsCodeWith(ErrorCode::client_invalid_operation, "one client library"));
  std::filesystem::remove(copy);
}

}  // namespace
}  // namespace strata
