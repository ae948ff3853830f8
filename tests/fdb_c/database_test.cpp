// Databases: fdb_create_database and fdb_create_database_from_connection_string, which
// database a cluster file names, handles sharing one database, busyness.
#include <filesystem>
#include <fstream>
#include <string>

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

}  // namespace
}  // namespace fdbc_test
