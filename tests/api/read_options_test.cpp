// The read controls a FoundationDB client needs beyond the basics: a chosen read version,
// read-your-writes off (for reads and for snapshot reads only), byte-limited range reads,
// the transaction's size, and watch notification by callback.
#include <atomic>
#include <condition_variable>
#include <mutex>
#include <thread>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "api/api_test_util.hpp"
#include "durability/temp_dir.hpp"
#include "support/error_matchers.hpp"
#include "support/test_database.hpp"

namespace strata::apitest {
namespace {

using strata::testing::TempDir;
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

// Options::keep_mvcc_window (docs/decisions/0026): the versions a transaction hands out
// stay readable for the window after the transaction is gone, as on a FoundationDB
// cluster, whose storage servers keep MAX_READ_TRANSACTION_LIFE_VERSIONS (5 s) of
// versions (fdbserver/storageserver.actor.cpp: transaction_too_old only below the oldest
// version kept). The others go as with the option off.
Options keeping_versions() {
  Options o;
  o.keep_mvcc_window = true;
  return o;
}

// Commits enough batches for collection to look at everything written before.
void churn(Database& db) {
  for (int i = 0; i < 3; ++i) put(db, "churn", std::to_string(i));
}

TEST(KeptVersions, VersionsHandedOutReadAfterTheirTransactionsAreGone) {
  STRATA_SKIP_ON_CLUSTER("Options::keep_mvcc_window is the cluster's");
  Database db = testing::open_database(keeping_versions());
  put(db, "k", "first");
  Version read_at = 0;
  Version committed = 0;
  {
    Transaction reader = db.create_transaction();
    read_at = reader.read_version();
    Transaction writer = db.create_transaction();
    writer.set("k", "second");
    writer.set("item", "x");
    writer.commit();
    committed = writer.committed_version();
  }
  put(db, "k", "third");
  db.run([](Transaction& tr) { tr.clear("item"); });
  churn(db);

  Transaction at_read = db.create_transaction();
  at_read.set_read_version(read_at);
  EXPECT_EQ(at_read.get("k"), "first");
  EXPECT_EQ(at_read.get("item"), std::nullopt);
  Transaction at_commit = db.create_transaction();
  at_commit.set_read_version(committed);
  EXPECT_EQ(at_commit.get("k"), "second");
  EXPECT_EQ(at_commit.get("item"), "x");  // short-lived, kept for the version handed out
}

// While other threads commit (and collect) without pause, a commit's version asked for
// after the commit returned is still whole: the batch holds it in the committer's slot
// from before it is published until the transaction lets it go.
TEST(KeptVersions, ACommitVersionAskedForLaterIsWholeWhileOthersCommit) {
  STRATA_SKIP_ON_CLUSTER("Options::keep_mvcc_window is the cluster's");
  Database db = testing::open_database(keeping_versions());
  std::atomic<bool> stop{false};
  std::thread churner([&] {
    for (int i = 0; !stop.load(std::memory_order_relaxed); ++i) {
      db.run([&](Transaction& tr) { tr.set("churn", std::to_string(i)); });
    }
  });
  struct Joiner {  // also when a read below throws
    std::atomic<bool>& stop;
    std::thread& thread;
    ~Joiner() {
      stop.store(true);
      thread.join();
    }
  } joiner{stop, churner};
  const int rounds = testing::scaled(300, 50);
  for (int i = 0; i < rounds; ++i) {
    const std::string item = "item" + std::to_string(i);
    Version committed = 0;
    {
      Transaction writer = db.create_transaction();
      writer.set("k", std::to_string(i));
      writer.set(item, "x");
      writer.commit();
      committed = writer.committed_version();
    }
    db.run([&](Transaction& tr) { tr.clear(item); });
    Transaction tr = db.create_transaction();
    tr.set_read_version(committed);
    EXPECT_EQ(tr.get("k"), std::to_string(i));
    EXPECT_EQ(tr.get(item), "x");
    if (::testing::Test::HasFailure()) break;
  }
}

// Durable commits in flight from writers that never read (no reader slot of their own):
// the batch takes a slot for each and holds its version there until the transaction takes
// it over, also when the version is published later, once the log is synced.
TEST(KeptVersions, DurableBlindCommitsInFlightKeepTheirVersions) {
  STRATA_SKIP_ON_CLUSTER("a test of a durable directory runs in process only");
  TempDir dir;
  Options o = keeping_versions();
  o.path = dir.path();
  Database db = testing::open_database(o);
  constexpr int kCommits = 8;
  std::mutex mu;
  std::condition_variable settled;
  int done = 0;
  int failed = 0;
  std::vector<Transaction> writers;
  for (int i = 0; i < kCommits; ++i) {
    writers.push_back(db.create_transaction());
    writers.back().set("item" + std::to_string(i), "x");
    writers.back().commit_async([&](const Error* error) {
      std::lock_guard lock(mu);
      ++done;
      if (error != nullptr) ++failed;
      settled.notify_all();
    });
  }
  {
    std::unique_lock lock(mu);
    settled.wait(lock, [&] { return done == kCommits; });
  }
  ASSERT_EQ(failed, 0);
  std::vector<Version> versions;
  for (Transaction& w : writers) versions.push_back(w.committed_version());
  writers.clear();
  for (int i = 0; i < kCommits; ++i) {
    db.run([&](Transaction& tr) { tr.clear("item" + std::to_string(i)); });
  }
  churn(db);
  for (int i = 0; i < kCommits; ++i) {
    Transaction tr = db.create_transaction();
    tr.set_read_version(versions[static_cast<std::size_t>(i)]);
    EXPECT_EQ(tr.get("item" + std::to_string(i)), "x") << i;
  }
}

// A version no transaction handed out is not kept: a short-lived key alive there goes at
// once, and the version is refused with transaction_too_old (1007), as with the option
// off (decision 0005).
TEST(KeptVersions, AVersionNotHandedOutIsNotKept) {
  STRATA_SKIP_ON_CLUSTER("Options::keep_mvcc_window is the cluster's");
  Database db = testing::open_database(keeping_versions());
  put(db, "base", "b");
  db.run([](Transaction& tr) { tr.set("item", "x"); });
  const Version inside = db.committed_version();  // the database's, not a transaction's
  db.run([](Transaction& tr) { tr.clear("item"); });
  churn(db);
  Transaction tr = db.create_transaction();
  EXPECT_THAT([&] { tr.set_read_version(inside); }, ThrowsCode(ErrorCode::transaction_too_old));
}

// A versionstamped value puts the commit's version into the data, where a program can read
// it back without asking the transaction: the version is kept.
TEST(KeptVersions, AVersionstampedCommitsVersionIsKept) {
  STRATA_SKIP_ON_CLUSTER("Options::keep_mvcc_window is the cluster's");
  Database db = testing::open_database(keeping_versions());
  db.run([](Transaction& tr) {
    tr.set("k", "stamped then");
    tr.set("item", "x");
    tr.atomic_op(MutationType::set_versionstamped_value, "log",
                 std::string(10, '\0') + std::string("\x00\x00\x00\x00", 4));
  });
  const std::optional<std::string> stamp = read_key(db, "log");
  ASSERT_TRUE(stamp.has_value());
  std::uint64_t version = 0;
  for (int i = 0; i < 8; ++i) version = (version << 8) | static_cast<unsigned char>((*stamp)[i]);
  put(db, "k", "later");
  db.run([](Transaction& tr) { tr.clear("item"); });
  churn(db);
  Transaction tr = db.create_transaction();
  tr.set_read_version(static_cast<Version>(version));
  EXPECT_EQ(tr.get("k"), "stamped then");
  EXPECT_EQ(tr.get("item"), "x");
}

// FoundationDB answers a commit's version after a cancel (fdbclient/NativeAPI.actor.cpp:
// getCommittedVersion reads what the commit left); the version handed out then is kept.
TEST(KeptVersions, ACancelledTransactionStillHandsOutAKeptVersion) {
  STRATA_SKIP_ON_CLUSTER("Options::keep_mvcc_window is the cluster's");
  Database db = testing::open_database(keeping_versions());
  Version committed = 0;
  {
    Transaction writer = db.create_transaction();
    writer.set("item", "x");
    writer.commit();
    writer.cancel();
    committed = writer.committed_version();
  }
  db.run([](Transaction& tr) { tr.clear("item"); });
  churn(db);
  Transaction tr = db.create_transaction();
  tr.set_read_version(committed);
  EXPECT_EQ(tr.get("item"), "x");
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
    (void)tr.read_version();  // the conflicts are checked from here
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
