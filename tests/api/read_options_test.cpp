// The read controls a FoundationDB client needs beyond the basics: a chosen read version,
// read-your-writes off (for reads and for snapshot reads only), byte-limited range reads,
// the transaction's size, and watch notification by callback.
#include <atomic>
#include <thread>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "api/api_test_util.hpp"
#include "support/error_matchers.hpp"
#include "support/test_database.hpp"

namespace strata::apitest {
namespace {

using strata::testing::ThrowsCode;

TEST(SetReadVersion, ReadsTheDatabaseAsOfThatVersion) {
  Database db = testing::open_database();
  put(db, "k", "old");
  Transaction holder = db.create_transaction();
  Version old_version = holder.read_version();  // keeps "old" from being collected
  put(db, "k", "new");

  Transaction tr = db.create_transaction();
  tr.set_read_version(old_version);
  EXPECT_EQ(tr.read_version(), old_version);
  EXPECT_EQ(tr.get("k"), "old");
  EXPECT_EQ(read_key(db, "k"), "new");
}

// docs/decisions/0005: a key that lived only between live readers' versions is collected
// at once, so a version inside its life can no longer be read exactly, unless a live
// transaction holds that very version.
TEST(SetReadVersion, RefusesAVersionAtWhichACollectedShortLivedKeyExisted) {
  STRATA_SKIP_ON_CLUSTER(
      "the cluster keeps every version for its MVCC window (5 s), whoever holds it");
  Database db = testing::open_database();
  put(db, "base", "b");
  Transaction holder = db.create_transaction();
  const Version held = holder.read_version();  // an old reader; it cannot see "item"
  Transaction writer = db.create_transaction();
  writer.set("item", "x");
  writer.commit();
  const Version born = writer.committed_version();
  db.run([](Transaction& tr) { tr.clear("item"); });
  put(db, "other", "o");  // one more batch, so collection has looked at "item"

  Transaction at_born = db.create_transaction();
  EXPECT_THAT([&] { at_born.set_read_version(born); }, ThrowsCode(ErrorCode::transaction_too_old));
  Transaction at_held = db.create_transaction();
  at_held.set_read_version(held);  // held by `holder`: everything it saw is kept
  EXPECT_EQ(at_held.get("base"), "b");
  EXPECT_EQ(at_held.get("item"), std::nullopt);
  EXPECT_EQ(holder.get("item"), std::nullopt);
}

TEST(SetReadVersion, ConflictsWithWritesCommittedAfterThatVersion) {
  Database db = testing::open_database();
  put(db, "k", "1");
  Transaction holder = db.create_transaction();
  Version v = holder.read_version();
  put(db, "k", "2");

  Transaction tr = db.create_transaction();
  tr.set_read_version(v);
  ASSERT_EQ(tr.get("k"), "1");
  tr.set("other", "x");
  EXPECT_TRUE(commit_conflicts(tr));
}

TEST(SetReadVersion, FailsOnceAVersionIsFixed) {
  Database db = testing::open_database();
  Transaction tr = db.create_transaction();
  (void)tr.get("a");
  EXPECT_THAT([&] { tr.set_read_version(db.committed_version()); },
              ThrowsCode(ErrorCode::read_version_already_set));
}

TEST(SetReadVersion, FailsForAFutureVersion) {
  STRATA_SKIP_ON_CLUSTER(
      "FoundationDB reports a future read version at the first read, not at set_read_version");
  Database db = testing::open_database();
  Transaction tr = db.create_transaction();
  EXPECT_THAT([&] { tr.set_read_version(db.committed_version() + 1); },
              ThrowsCode(ErrorCode::future_version));
}

TEST(SetReadVersion, FailsForAVersionAlreadyCollected) {
  STRATA_SKIP_ON_CLUSTER(
      "the cluster keeps every version for its MVCC window (5 s), whoever holds it");
  Database db = testing::open_database();
  put(db, "k", "1");
  Version old_version = db.committed_version();
  for (int i = 0; i < 100; ++i) put(db, "k", std::to_string(i));  // no reader holds old
  Transaction tr = db.create_transaction();
  EXPECT_THAT([&] { tr.set_read_version(old_version); },
              ThrowsCode(ErrorCode::transaction_too_old));
}

TEST(ReadYourWritesDisabled, ReadsIgnoreTheTransactionsOwnWrites) {
  Database db = testing::open_database();
  put(db, "a", "stored");
  Transaction tr = db.create_transaction();
  tr.set_read_your_writes(false);
  tr.set("a", "mine");
  tr.set("b", "mine");
  EXPECT_EQ(tr.get("a"), "stored");
  EXPECT_EQ(tr.get("b"), std::nullopt);
  EXPECT_EQ(tr.get_range("", "\xff"), (std::vector<KeyValue>{{"a", "stored"}}));
  tr.commit();
  EXPECT_EQ(read_key(db, "a"), "mine");
}

TEST(ReadYourWritesDisabled, ReadsConflictEvenOnKeysTheTransactionWrote) {
  Database db = testing::open_database();
  Transaction tr = db.create_transaction();
  tr.set_read_your_writes(false);
  tr.set("k", "mine");
  (void)tr.get("k");  // with read-your-writes on, this read would add no conflict
  put(db, "k", "theirs");
  EXPECT_TRUE(commit_conflicts(tr));
}

// As FoundationDB, whose transaction without read-your-writes hands reads and explicit
// read conflict ranges straight to the database's transaction: nothing is subtracted for
// the keys this transaction wrote (with read-your-writes on, those keys add no conflict).
TEST(ReadYourWritesDisabled, RangeReadsAndExplicitReadConflictsKeepTheKeysItWrote) {
  for (int form = 0; form < 3; ++form) {
    Database db = testing::open_database();
    Transaction tr = db.create_transaction();
    tr.set_read_your_writes(false);
    tr.set("k", "mine");
    if (form == 0) (void)tr.get_range("a", "z");
    if (form == 1) tr.add_read_conflict_range("a", "z");
    if (form == 2) tr.add_read_conflict_key("k");
    put(db, "k", "theirs");
    EXPECT_TRUE(commit_conflicts(tr)) << "form " << form;
  }
}

TEST(ReadYourWritesDisabled, OnlyBeforeTheFirstReadOrWrite) {
  Database db = testing::open_database();
  Transaction tr = db.create_transaction();
  tr.set("a", "1");
  EXPECT_THAT([&] { tr.set_read_your_writes(false); },
              ThrowsCode(ErrorCode::client_invalid_operation));
}

TEST(ReadYourWritesDisabled, WatchesAreDisabled) {
  Database db = testing::open_database();
  Transaction tr = db.create_transaction();
  tr.set_read_your_writes(false);
  EXPECT_THAT([&] { (void)tr.watch("k"); }, ThrowsCode(ErrorCode::watches_disabled));
}

TEST(ReadYourWritesDisabled, ResetTurnsItBackOn) {
  Database db = testing::open_database();
  Transaction tr = db.create_transaction();
  tr.set_read_your_writes(false);
  tr.reset();
  tr.set("a", "mine");
  EXPECT_EQ(tr.get("a"), "mine");
}

TEST(SnapshotReadYourWrites, DisabledSnapshotReadsSeeOnlyTheDatabase) {
  Database db = testing::open_database();
  put(db, "a", "stored");
  Transaction tr = db.create_transaction();
  tr.set("a", "mine");
  tr.set_snapshot_read_your_writes(false);
  EXPECT_EQ(tr.snapshot().get("a"), "stored");
  EXPECT_EQ(tr.get("a"), "mine");  // serializable reads still see it
  tr.set_snapshot_read_your_writes(true);
  EXPECT_EQ(tr.snapshot().get("a"), "mine");
}

TEST(TargetBytes, StopsAfterTheRowThatReachesTheTarget) {
  Database db = testing::open_database();
  put_all(db, {{"a", "12345"}, {"b", "12345"}, {"c", "12345"}});  // 6 bytes per row
  Transaction tr = db.create_transaction();
  EXPECT_EQ(tr.get_range("a", "z", {.target_bytes = 7}).size(), 2u);
  EXPECT_EQ(tr.get_range("a", "z", {.target_bytes = 6}).size(), 1u);
  EXPECT_EQ(tr.get_range("a", "z", {.target_bytes = 1}).size(), 1u);
  EXPECT_EQ(tr.get_range("a", "z", {.reverse = true, .target_bytes = 7}),
            (std::vector<KeyValue>{{"c", "12345"}, {"b", "12345"}}));
  EXPECT_THAT([&] { (void)tr.get_range("a", "z", {.target_bytes = -1}); },
              ThrowsCode(ErrorCode::range_limits_invalid));
}

TEST(TargetBytes, AReadStoppedByBytesConflictsOnlyUpToItsLastRow) {
  Database db = testing::open_database();
  put_all(db, {{"a", "12345"}, {"b", "12345"}, {"c", "12345"}});
  Transaction tr = db.create_transaction();
  ASSERT_EQ(tr.get_range("a", "z", {.target_bytes = 6}).size(), 1u);  // stops at "a"
  tr.set("w", "1");
  put(db, "b", "changed");  // beyond what the read depended on
  EXPECT_FALSE(commit_conflicts(tr));
}

TEST(ApproximateSize, GrowsWithWritesAndReads) {
  Database db = testing::open_database();
  Transaction tr = db.create_transaction();
  std::size_t empty = tr.approximate_size();
  tr.set("key", std::string(100, 'v'));
  std::size_t after_set = tr.approximate_size();
  EXPECT_GE(after_set, empty + 103);
  (void)tr.get("other");
  EXPECT_GT(tr.approximate_size(), after_set);
}

TEST(WatchOnReady, RunsOnceWhenTheWatchFires) {
  Database db = testing::open_database();
  Transaction tr = db.create_transaction();
  Watch w = tr.watch("k");
  tr.commit();
  std::atomic<int> calls{0};
  w.on_ready([&] { calls.fetch_add(1); });
  EXPECT_EQ(calls.load(), 0);
  put(db, "k", "changed");  // in process: fires on this thread, inside the commit
  // On a cluster it fires on FoundationDB's network thread; a waiter returns once the
  // callbacks set before the firing have run.
  if (testing::on_cluster()) w.wait();
  EXPECT_EQ(calls.load(), 1);
  EXPECT_TRUE(w.wait_for(std::chrono::milliseconds(0)));
  put(db, "k", "again");
  EXPECT_EQ(calls.load(), 1);
}

TEST(WatchOnReady, RunsAtOnceWhenAlreadyFinished) {
  Database db = testing::open_database();
  Transaction tr = db.create_transaction();
  Watch w = tr.watch("k");
  tr.commit();
  w.cancel();
  bool called = false;
  w.on_ready([&] { called = true; });
  EXPECT_TRUE(called);
  EXPECT_FALSE(w.wait_for(std::chrono::milliseconds(0)));
}

TEST(WatchOnReady, CancellingTheTransactionFailsItsUncommittedWatches) {
  Database db = testing::open_database();
  Transaction tr = db.create_transaction();
  Watch w = tr.watch("k");
  bool called = false;
  w.on_ready([&] { called = true; });
  tr.cancel();
  EXPECT_TRUE(called);
  EXPECT_THAT([&] { w.wait(); }, ThrowsCode(ErrorCode::transaction_cancelled));
}

}  // namespace
}  // namespace strata::apitest
