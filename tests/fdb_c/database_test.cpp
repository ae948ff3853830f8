// Databases: fdb_create_database and fdb_create_database_from_connection_string, which
// database a cluster file names, handles sharing one database, busyness.
#include <filesystem>
#include <fstream>
#include <set>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "fdb_c/fdb_c.h"
#include "fdb_c_test_util.hpp"
#include <unistd.h>

namespace fdbc_test {
namespace {

using Databases = FdbTest;

TEST_F(Databases, DatabaseHandlesShareOneDatabase) {
  Db other = open_db();
  Tr tr = make_tr(other.get());
  set(tr, k("a"), "via other handle");
  ASSERT_EQ(commit(tr), 0);
  EXPECT_EQ(read(k("a")).value, "via other handle");
}

TEST_F(Databases, ConnectionStringAndClusterFileOpenTheSameInMemoryDatabase) {
  ASSERT_EQ(write(k("a"), "shared"), 0);
  FDBDatabase* d = nullptr;
  ASSERT_EQ(fdb_create_database_from_connection_string("desc:id@127.0.0.1:4500", &d), 0);
  Db from_string(d);
  Tr t1 = make_tr(from_string.get());
  EXPECT_EQ(get(t1, k("a")).value, "shared");

  d = nullptr;
  ASSERT_EQ(fdb_create_database("", &d), 0);
  Db from_empty(d);
  Tr t2 = make_tr(from_empty.get());
  EXPECT_EQ(get(t2, k("a")).value, "shared");
}

TEST_F(Databases, MainThreadBusynessIsAFraction) {
  double b = fdb_database_get_main_thread_busyness(db());
  EXPECT_GE(b, 0.0);
  EXPECT_LE(b, 1.0);
}

// A cluster file whose first line is "strata:<directory>" opens that directory durably: a
// database of its own, shared by every handle naming it.
TEST_F(Databases, StrataClusterFileOpensADurableDatabaseOfItsOwn) {
  namespace fs = std::filesystem;
  // Under the test temp directory, one per process, so a run from any working directory
  // leaves nothing in it; a previous run's copy with the same pid is removed.
  fs::path dir =
      fs::path(::testing::TempDir()) / ("strata-fdbc-durable-test-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  fs::path cluster_file = dir / "fdb.cluster";
  {
    std::ofstream out(cluster_file);
    out << "strata:" << (dir / "data").string() << "\n";
  }
  FDBDatabase* d = nullptr;
  ASSERT_EQ(fdb_create_database(cluster_file.c_str(), &d), 0);
  Db durable(d);
  Tr tr = make_tr(durable.get());
  set(tr, k("a"), "durable");
  ASSERT_EQ(commit(tr), 0);

  EXPECT_FALSE(read(k("a")).present);  // not the in-memory database
  d = nullptr;
  std::string connection = "strata:" + (dir / "data").string();
  ASSERT_EQ(fdb_create_database_from_connection_string(connection.c_str(), &d), 0);
  Db same(d);
  Tr t2 = make_tr(same.get());
  EXPECT_EQ(get(t2, k("a")).value, "durable");
  EXPECT_TRUE(fs::exists(dir / "data"));
  // The database stays open until the process exits, so its directory is left in the
  // temp directory.
}

// A durable database's commits made by a thread that has not waited for its last one
// complete on strata's pipeline thread once durable: one thread may have many in flight
// (their futures pending), and they share log syncs. (The first of a burst is made on the
// calling thread.) A call on a transaction whose commit is in flight waits for it; its
// versionstamp future, asked for before the commit, completes with it.
TEST_F(Databases, ADurableDatabaseTakesManyCommitsInFlightFromOneThread) {
  namespace fs = std::filesystem;
  fs::path dir =
      fs::path(::testing::TempDir()) / ("strata-fdbc-in-flight-test-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  const std::string connection = "strata:" + (dir / "data").string();
  FDBDatabase* d = nullptr;
  ASSERT_EQ(fdb_create_database_from_connection_string(connection.c_str(), &d), 0);
  Db durable(d);

  constexpr int kInFlight = 64;
  std::vector<Tr> trs;
  std::vector<Future> stamps;
  std::vector<Future> commits;
  for (int i = 0; i < kInFlight; ++i) {
    trs.push_back(make_tr(durable.get()));
    set(trs.back(), k("f" + std::to_string(i)), std::to_string(i));
    stamps.emplace_back(fdb_transaction_get_versionstamp(trs.back().get()));
    commits.emplace_back(fdb_transaction_commit(trs.back().get()));
  }
  // Every call on a committing transaction waits for its commit: the version is there.
  int64_t last_version = 0;
  ASSERT_EQ(fdb_transaction_get_committed_version(trs.back().get(), &last_version), 0);
  EXPECT_GT(last_version, 0);
  std::set<std::string> distinct_stamps;
  for (int i = 0; i < kInFlight; ++i) {
    ASSERT_EQ(wait(commits[static_cast<std::size_t>(i)]), 0) << i;
    ASSERT_EQ(wait(stamps[static_cast<std::size_t>(i)]), 0) << i;
    const uint8_t* key = nullptr;
    int length = 0;
    ASSERT_EQ(fdb_future_get_key(stamps[static_cast<std::size_t>(i)].get(), &key, &length), 0);
    ASSERT_EQ(length, 10);
    distinct_stamps.emplace(reinterpret_cast<const char*>(key), static_cast<std::size_t>(length));
  }
  EXPECT_EQ(distinct_stamps.size(), std::size_t{kInFlight});
  // Fewer versions than commits: commits that queued together shared a batch (a version,
  // a log write and a sync).
  std::set<int64_t> versions;
  for (const Tr& tr : trs) {
    int64_t v = 0;
    ASSERT_EQ(fdb_transaction_get_committed_version(tr.get(), &v), 0);
    versions.insert(v);
  }
  EXPECT_LT(versions.size(), std::size_t{kInFlight});
  Tr reader = make_tr(durable.get());
  for (int i = 0; i < kInFlight; ++i) {
    EXPECT_EQ(get(reader, k("f" + std::to_string(i))).value, std::to_string(i));
  }
  // Destroying a transaction right after its commit is issued (in flight: the one before
  // it is not waited for) waits for the commit.
  {
    Tr before = make_tr(durable.get());
    set(before, k("destroyed/before"), "kept");
    Future first(fdb_transaction_commit(before.get()));
    Tr tr = make_tr(durable.get());
    set(tr, k("destroyed"), "kept");
    Future f(fdb_transaction_commit(tr.get()));
    tr.reset();
    EXPECT_EQ(wait(f), 0);
    EXPECT_EQ(wait(first), 0);
  }
  Tr after = make_tr(durable.get());
  EXPECT_EQ(get(after, k("destroyed")).value, "kept");
}

}  // namespace
}  // namespace fdbc_test
