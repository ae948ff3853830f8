// Read versions as a FoundationDB cluster serves them: a version handed out reads for the
// MVCC window, whether or not a transaction still holds it (storage servers keep
// MAX_READ_TRANSACTION_LIFE_VERSIONS, 5 s); a version too old fails the reads only; a
// version not yet committed makes reads and the commit wait for it (FUTURE_VERSION_DELAY,
// 1 s) before future_version; a fresh database never hands out version 0.
// The expected answers come from FoundationDB 7.4.6's source: fdbclient/NativeAPI.actor.cpp
// (Transaction::setVersion checks only v > 0), fdbclient/ReadYourWrites.actor.cpp
// (getReadVersion, getApproximateSize and getEstimatedRangeSizeBytes answer unless the
// transaction was reset or cancelled), fdbserver/storageserver.actor.cpp (waitForVersion:
// transaction_too_old below the oldest version kept, future_version after
// FUTURE_VERSION_DELAY), and bindings/python/tests/cancellation_timeout_tests.py (txn11).
#include <atomic>
#include <chrono>
#include <filesystem>
#include <string>
#include <thread>

#include <gtest/gtest.h>

#include "fdb_c/fdb_c.h"
#include "fdb_c_test_util.hpp"
#include <unistd.h>

namespace fdbc_test {
namespace {

using ReadVersionWindow = FdbTest;
using Clock = std::chrono::steady_clock;

// The C API's databases keep Options::mvcc_window's default.
constexpr auto kWindow = std::chrono::milliseconds(5000);

int64_t approximate_size(const Tr& tr) {
  Future f(fdb_transaction_get_approximate_size(tr.get()));
  if (wait(f) != 0) return -fdb_future_get_error(f.get());
  int64_t v = 0;
  EXPECT_EQ(fdb_future_get_int64(f.get(), &v), 0);
  return v;
}

fdb_error_t estimated_size_error(const Tr& tr, std::string_view b, std::string_view e) {
  Future f(fdb_transaction_get_estimated_range_size_bytes(tr.get(), u8(b), len(b), u8(e), len(e)));
  return wait(f);
}

fdb_error_t read_version_error(const Tr& tr) {
  Future f(fdb_transaction_get_read_version(tr.get()));
  return wait(f);
}

// The bindingtester's scripted test: a read version taken, two commits, then the version
// set on a new transaction once nobody holds it. A cluster answers the value at that
// version.
TEST_F(ReadVersionWindow, AVersionNobodyHoldsReadsWithinTheWindow) {
  ASSERT_EQ(write(k("a"), "old"), 0);
  int64_t old_version = 0;
  {
    Tr first = make_tr();
    old_version = read_version(first);
  }  // destroyed: no transaction holds old_version now
  ASSERT_EQ(write(k("a"), "new"), 0);
  ASSERT_EQ(write(k("a"), "newer"), 0);
  ASSERT_EQ(write(k("b"), "x"), 0);  // one more collection past the overwrites

  Tr tr = make_tr();
  fdb_transaction_set_read_version(tr.get(), old_version);
  Value v = get(tr, k("a"));
  ASSERT_EQ(v.error, 0);
  EXPECT_EQ(v.value, "old");
  EXPECT_FALSE(get(tr, k("b")).present);
}

// The bindingtester's GET_COMMITTED_VERSION then SET_READ_VERSION: a commit's version,
// handed out by fdb_transaction_get_committed_version, reads after the transaction is
// gone and the keys it wrote were overwritten or cleared.
TEST_F(ReadVersionWindow, ACommittedVersionHandedOutReadsLater) {
  int64_t committed = 0;
  {
    Tr writer = make_tr();
    set(writer, k("a"), "then");
    set(writer, k("item"), "x");
    ASSERT_EQ(commit(writer), 0);
    ASSERT_EQ(fdb_transaction_get_committed_version(writer.get(), &committed), 0);
  }
  ASSERT_EQ(write(k("a"), "now"), 0);
  {
    Tr popper = make_tr();
    clear(popper, k("item"));
    ASSERT_EQ(commit(popper), 0);
  }
  ASSERT_EQ(write(k("b"), "x"), 0);  // one more collection past the overwrite and the clear

  Tr tr = make_tr();
  fdb_transaction_set_read_version(tr.get(), committed);
  EXPECT_EQ(get(tr, k("a")).value, "then");
  EXPECT_EQ(get(tr, k("item")).value, "x");
}

// A version stays readable for the window after a newer one is committed (a read version
// handed out within the window reads, as on a cluster, whose versions age with time).
// Past the window a version fails the reads with transaction_too_old (1007), but calls
// that read nothing at it answer: the read version is the one set, the sizes are given.
// After cancel every call is transaction_cancelled (1025). The test waits out the window:
// the passing of time is what it checks.
TEST_F(ReadVersionWindow, AVersionPastTheWindowFailsOnlyTheReads) {
  ASSERT_EQ(write(k("a"), "old"), 0);
  int64_t old_version = 0;
  {
    Tr first = make_tr();
    old_version = read_version(first);
  }
  ASSERT_EQ(write(k("a"), "new"), 0);  // old_version is no longer the newest
  std::this_thread::sleep_for(kWindow + std::chrono::milliseconds(200));
  ASSERT_EQ(write(k("a"), "newer"), 0);  // a collection after the window passed

  Tr tr = make_tr();
  fdb_transaction_set_read_version(tr.get(), old_version);
  EXPECT_EQ(get(tr, k("a")).error, 1007);
  EXPECT_EQ(read_version(tr), old_version);
  EXPECT_GT(approximate_size(tr), -1);
  set(tr, k("c"), "x");
  EXPECT_GT(approximate_size(tr), 0);
  EXPECT_EQ(estimated_size_error(tr, k("a"), k("b")), 0);
  EXPECT_EQ(get(tr, k("a")).error, 1007);

  fdb_transaction_cancel(tr.get());
  EXPECT_EQ(get(tr, k("a")).error, 1025);
  EXPECT_EQ(read_version_error(tr), 1025);
  EXPECT_EQ(approximate_size(tr), -1025);
  EXPECT_EQ(estimated_size_error(tr, k("a"), k("b")), 1025);
  EXPECT_EQ(commit(tr), 1025);
}

// A version not yet committed: the read waits FUTURE_VERSION_DELAY (1 s) for it, then
// fails with future_version (1009); the commit waits for it too.
TEST_F(ReadVersionWindow, AFutureVersionFailsAfterTheDelay) {
  Tr probe = make_tr();
  const int64_t v = read_version(probe);
  Tr tr = make_tr();
  fdb_transaction_set_read_version(tr.get(), v + 1'000'000'000);
  EXPECT_EQ(read_version(tr), v + 1'000'000'000);
  const Clock::time_point start = Clock::now();
  EXPECT_EQ(get(tr, k("a")).error, 1009);
  EXPECT_GE(Clock::now() - start, std::chrono::milliseconds(900));

  Tr writer = make_tr();
  fdb_transaction_set_read_version(writer.get(), v + 1'000'000'000);
  set(writer, k("a"), "x");
  const Clock::time_point commit_start = Clock::now();
  EXPECT_EQ(commit(writer), 1009);
  EXPECT_GE(Clock::now() - commit_start, std::chrono::milliseconds(900));
}

// The wait ends when a commit publishes the version: the read then sees it.
TEST_F(ReadVersionWindow, AReadAtTheNextVersionWaitsForItsCommit) {
  Tr probe = make_tr();
  const int64_t v = read_version(probe);
  Tr tr = make_tr();
  fdb_transaction_set_read_version(tr.get(), v + 1);
  Value seen;
  std::thread reader([&] { seen = get(tr, k("a")); });
  ASSERT_EQ(write(k("a"), "arrived"), 0);  // the next version
  reader.join();
  ASSERT_EQ(seen.error, 0);
  EXPECT_EQ(seen.value, "arrived");
}

// The transaction's timeout cuts the wait short (1031), as in the Python binding's
// test_timeouts (txn11: a 1.5 s timeout, a first commit's 1009, then 1031).
TEST_F(ReadVersionWindow, TheTimeoutCutsTheWaitShort) {
  Tr probe = make_tr();
  const int64_t v = read_version(probe);
  Tr tr = make_tr();
  ASSERT_EQ(set_option(tr, FDB_TR_OPTION_TIMEOUT, 1500), 0);
  fdb_transaction_set_read_version(tr.get(), v + 1'000'000'000);
  (void)Future(fdb_transaction_get(tr.get(), u8(k("a")), len(k("a")), 0));
  EXPECT_EQ(commit(tr), 1009);
  ASSERT_EQ(on_error(tr, 1009), 0);
  ASSERT_EQ(set_option(tr, FDB_TR_OPTION_TIMEOUT, 1500), 0);
  fdb_transaction_set_read_version(tr.get(), v + 1'000'000'000);
  const Clock::time_point start = Clock::now();
  EXPECT_EQ(get(tr, k("a")).error, 1031);
  EXPECT_LT(Clock::now() - start, std::chrono::milliseconds(900));
  EXPECT_EQ(commit(tr), 1031);
}

// cancel() from another thread ends the wait with transaction_cancelled (1025), however
// the two threads interleave.
TEST_F(ReadVersionWindow, CancelEndsTheWait) {
  Tr probe = make_tr();
  const int64_t v = read_version(probe);
  Tr tr = make_tr();
  fdb_transaction_set_read_version(tr.get(), v + 1'000'000'000);
  Value seen;
  const Clock::time_point start = Clock::now();
  std::thread reader([&] { seen = get(tr, k("a")); });
  fdb_transaction_cancel(tr.get());
  reader.join();
  EXPECT_EQ(seen.error, 1025);
  EXPECT_LT(Clock::now() - start, std::chrono::milliseconds(900));
}

// A reset from another thread ends a commit's wait for its version with
// transaction_cancelled (FoundationDB's reset cancels what is under way on the
// transaction: fdbclient/ReadYourWrites.actor.cpp, resetRyow), and what comes after the
// reset is a new attempt the ended commit leaves alone: a versionstamp asked for then
// stays pending until that attempt's own commit, which succeeds and completes it.
// Whether the reset lands in the commit's wait depends on the two threads; the rounds go
// on until it has, several times.
TEST_F(ReadVersionWindow, AResetDuringACommitsWaitLeavesTheNextAttemptAlone) {
  Tr probe = make_tr();
  const int64_t v = read_version(probe);
  int in_wait = 0;
  for (int round = 0; round < 400 && in_wait < 5; ++round) {
    SCOPED_TRACE(round);
    Tr tr = make_tr();
    fdb_transaction_set_read_version(tr.get(), v + 1'000'000'000);
    set(tr, k("a"), "first");
    std::atomic<bool> started{false};
    fdb_error_t first = -1;
    std::thread committer([&] {
      started.store(true);
      first = commit(tr);
    });
    while (!started.load()) std::this_thread::yield();
    fdb_transaction_reset(tr.get());
    Future stamp(fdb_transaction_get_versionstamp(tr.get()));
    set(tr, k("a"), "second");
    committer.join();
    if (first != 1025) continue;  // the reset came before the commit began
    ++in_wait;
    EXPECT_FALSE(fdb_future_is_ready(stamp.get())) << fdb_future_get_error(stamp.get());
    EXPECT_EQ(commit(tr), 0);
    EXPECT_EQ(wait(stamp), 0);
  }
  EXPECT_GT(in_wait, 0);
}

// FoundationDB's sequencer starts past version 0 and set_read_version refuses 0
// (version_invalid): a fresh database's first read version is positive and can be set.
TEST_F(ReadVersionWindow, AFreshDatabaseHandsOutAPositiveVersion) {
  namespace fs = std::filesystem;
  fs::path dir = fs::path(::testing::TempDir()) /
                 ("strata-fdbc-fresh-version-test-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  const std::string connection = "strata:" + (dir / "data").string();
  FDBDatabase* d = nullptr;
  ASSERT_EQ(fdb_create_database_from_connection_string(connection.c_str(), &d), 0);
  Db fresh(d);
  Tr first = make_tr(fresh.get());
  const int64_t v = read_version(first);
  EXPECT_GT(v, 0);
  Tr again = make_tr(fresh.get());
  fdb_transaction_set_read_version(again.get(), v);
  EXPECT_EQ(get(again, k("a")).error, 0);
}

}  // namespace
}  // namespace fdbc_test
