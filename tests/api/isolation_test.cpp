// One test per isolation anomaly serializable transactions must prevent, and one per
// rule that keeps conflicts from being reported where none exists. Each race is made
// deterministic in one thread: tr1 reads, tr2 writes and commits, tr1 commits.
#include <string>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "strata/database.hpp"
#include "strata/transaction.hpp"

#include "api/api_test_util.hpp"
#include "support/error_matchers.hpp"
#include "support/test_database.hpp"

namespace strata {
namespace {

using apitest::commit_conflicts;
using apitest::put;
using apitest::put_all;
using apitest::read_key;
using testing::ThrowsCode;

int as_int(const std::optional<std::string>& v) { return v ? std::stoi(*v) : 0; }

// Two increments read the same counter; the second to commit must fail, or one
// increment is lost.
TEST(Isolation, LostUpdate) {
  Database db = testing::open_database();
  put(db, "counter", "0");
  Transaction tr1 = db.create_transaction();
  Transaction tr2 = db.create_transaction();
  int seen1 = as_int(tr1.get("counter"));
  int seen2 = as_int(tr2.get("counter"));
  tr2.set("counter", std::to_string(seen2 + 1));
  tr2.commit();
  tr1.set("counter", std::to_string(seen1 + 1));
  EXPECT_THAT([&] { tr1.commit(); }, ThrowsCode(ErrorCode::not_committed));
  EXPECT_EQ(read_key(db, "counter"), "1");
}

// Invariant "at least one doctor on call": each transaction checks both and takes
// itself off call. Disjoint write sets, overlapping read sets: the second must fail.
TEST(Isolation, WriteSkew) {
  Database db = testing::open_database();
  put_all(db, {{"oncall/alice", "1"}, {"oncall/bob", "1"}});
  Transaction tr1 = db.create_transaction();
  Transaction tr2 = db.create_transaction();
  ASSERT_EQ(as_int(tr1.get("oncall/alice")) + as_int(tr1.get("oncall/bob")), 2);
  ASSERT_EQ(as_int(tr2.get("oncall/alice")) + as_int(tr2.get("oncall/bob")), 2);
  tr1.set("oncall/alice", "0");
  tr2.set("oncall/bob", "0");
  tr2.commit();
  EXPECT_THAT([&] { tr1.commit(); }, ThrowsCode(ErrorCode::not_committed));
  EXPECT_EQ(as_int(read_key(db, "oncall/alice")) + as_int(read_key(db, "oncall/bob")), 1);
}

// A range read followed by a concurrent insert into the range: the reader's decision
// (here: a count) would be based on a set of rows that no longer exists.
TEST(Isolation, Phantom) {
  Database db = testing::open_database();
  put_all(db, {{"order/1", "a"}, {"order/3", "b"}, {"other", "c"}});
  Transaction tr1 = db.create_transaction();
  std::size_t count = tr1.get_range("order/", "order0").size();
  ASSERT_EQ(count, 2u);
  Transaction tr2 = db.create_transaction();
  tr2.set("order/2", "phantom");  // never existed: only the range read can catch it
  tr2.commit();
  tr1.set("order-count", std::to_string(count));
  EXPECT_THAT([&] { tr1.commit(); }, ThrowsCode(ErrorCode::not_committed));
  EXPECT_EQ(read_key(db, "order-count"), std::nullopt);
}

// The reverse-direction phantom: a delete of a row the range read saw.
TEST(Isolation, PhantomDelete) {
  Database db = testing::open_database();
  put_all(db, {{"order/1", "a"}, {"order/3", "b"}});
  Transaction tr1 = db.create_transaction();
  ASSERT_EQ(tr1.get_range("order/", "order0", {.reverse = true}).size(), 2u);
  Transaction tr2 = db.create_transaction();
  tr2.clear_range("order/", "order/2");
  tr2.commit();
  tr1.set("order-count", "2");
  EXPECT_THAT([&] { tr1.commit(); }, ThrowsCode(ErrorCode::not_committed));
}

// A transfer between x and y commits between tr1's two reads: tr1 must still see one
// consistent state (sum 100), and cannot commit a write based on it.
TEST(Isolation, ReadSkew) {
  Database db = testing::open_database();
  put_all(db, {{"x", "50"}, {"y", "50"}});
  Transaction tr1 = db.create_transaction();
  int x = as_int(tr1.get("x"));
  Transaction tr2 = db.create_transaction();
  tr2.set("x", "25");
  tr2.set("y", "75");
  tr2.commit();
  int y = as_int(tr1.get("y"));
  EXPECT_EQ(x + y, 100) << "tr1 saw x before and y after the transfer";
  EXPECT_EQ(tr1.get_range("x", "z").size(), 2u);
  EXPECT_EQ(as_int(tr1.get_range("x", "z")[1].value), 50);
  tr1.set("sum", std::to_string(x + y));
  EXPECT_THAT([&] { tr1.commit(); }, ThrowsCode(ErrorCode::not_committed));
}

// Uncommitted writes are invisible to other transactions, before and after a failed
// commit, and become visible only to transactions that start after the commit.
TEST(Isolation, DirtyRead) {
  Database db = testing::open_database();
  put(db, "k", "clean");
  Transaction writer = db.create_transaction();
  writer.set("k", "dirty");
  writer.set("new", "dirty");
  Transaction reader = db.create_transaction();
  EXPECT_EQ(reader.get("k"), "clean");
  EXPECT_EQ(reader.get("new"), std::nullopt);
  EXPECT_EQ(reader.get_range("", "\xff").size(), 1u);
  writer.commit();
  EXPECT_EQ(reader.get("new"), std::nullopt) << "reader's read version predates the commit";
  EXPECT_EQ(read_key(db, "new"), "dirty");
}

// A transaction that fails with 1020 applies none of its writes (atomicity).
TEST(Isolation, FailedCommitAppliesNothing) {
  Database db = testing::open_database();
  put(db, "guard", "0");
  Transaction tr1 = db.create_transaction();
  (void)tr1.get("guard");
  tr1.set("a", "1");
  tr1.clear_range("guard", "guard0");
  tr1.set("z", "1");
  put(db, "guard", "1");
  EXPECT_TRUE(commit_conflicts(tr1));
  EXPECT_EQ(read_key(db, "a"), std::nullopt);
  EXPECT_EQ(read_key(db, "z"), std::nullopt);
  EXPECT_EQ(read_key(db, "guard"), "1");
}

// Writes without reads never conflict, whatever commits in between; the last commit
// wins.
TEST(Isolation, BlindWritesNeverConflict) {
  Database db = testing::open_database();
  put(db, "k", "0");
  Transaction tr1 = db.create_transaction();
  Transaction tr2 = db.create_transaction();
  tr1.set("k", "1");
  tr1.clear_range("x", "z");
  tr2.set("k", "2");
  tr2.clear_range("x", "z");
  tr2.commit();
  EXPECT_NO_THROW(tr1.commit());
  EXPECT_EQ(read_key(db, "k"), "1");
}

// A transaction's own writes never make it fail, even writes over what it read.
TEST(Isolation, OwnWritesNeverCauseOwnConflict) {
  Database db = testing::open_database();
  put(db, "k", "0");
  Transaction tr = db.create_transaction();
  tr.get_range("", "\xff");
  tr.set("k", "1");
  tr.clear_range("a", "z");
  EXPECT_NO_THROW(tr.commit());
}

TEST(Isolation, SnapshotReadsAddNoConflict) {
  Database db = testing::open_database();
  put_all(db, {{"k1", "a"}, {"k2", "b"}});
  Transaction tr1 = db.create_transaction();
  ReadView snap = tr1.snapshot();
  EXPECT_EQ(snap.get("k1"), "a");
  EXPECT_EQ(snap.get_range("k", "l").size(), 2u);
  EXPECT_EQ(snap.get_range("k", "l", {.limit = 1, .reverse = true}).size(), 1u);
  Transaction tr2 = db.create_transaction();
  tr2.set("k1", "changed");
  tr2.set("k15", "inserted");
  tr2.clear("k2");
  tr2.commit();
  tr1.set("derived", "x");
  EXPECT_NO_THROW(tr1.commit());
}

TEST(Isolation, ReadOnlyTransactionsNeverConflict) {
  Database db = testing::open_database();
  put(db, "k", "0");
  Transaction tr1 = db.create_transaction();
  (void)tr1.get("k");
  tr1.get_range("", "\xff");
  tr1.add_read_conflict_range("a", "z");
  put(db, "k", "1");
  EXPECT_NO_THROW(tr1.commit());
  EXPECT_EQ(tr1.committed_version(), -1);
}

// A read-only transaction does not make others conflict either: it has no write set.
TEST(Isolation, ReadOnlyTransactionsCauseNoConflict) {
  Database db = testing::open_database();
  put(db, "k", "0");
  Transaction writer = db.create_transaction();
  (void)writer.get("k");
  Transaction ro = db.create_transaction();
  (void)ro.get("k");
  ro.commit();
  writer.set("k", "1");
  EXPECT_NO_THROW(writer.commit());
}

// A commit at exactly the reader's read version is visible to it, so it is no conflict.
TEST(Isolation, WriteAtExactlyReadVersionDoesNotConflict) {
  Database db = testing::open_database();
  Transaction w = db.create_transaction();
  w.set("k", "v");
  w.commit();
  Transaction tr = db.create_transaction();
  ASSERT_EQ(tr.read_version(), w.committed_version());
  EXPECT_EQ(tr.get("k"), "v");
  tr.set("k2", "x");
  EXPECT_NO_THROW(tr.commit());
}

// The converse boundary: a commit one version after the read version does conflict.
TEST(Isolation, WriteJustAfterReadVersionConflicts) {
  Database db = testing::open_database();
  Transaction tr = db.create_transaction();
  Version rv = tr.read_version();
  (void)tr.get("k");
  Transaction w = db.create_transaction();
  w.set("k", "v");
  w.commit();
  ASSERT_GT(w.committed_version(), rv);
  tr.set("k2", "x");
  EXPECT_TRUE(commit_conflicts(tr));
}

// Conflicts come only from commits after the read version, however many commits
// happened before it.
TEST(Isolation, CommitsBeforeReadVersionNeverConflict) {
  Database db = testing::open_database();
  for (int i = 0; i < 10; ++i) put(db, "k", std::to_string(i));
  Transaction tr = db.create_transaction();
  (void)tr.get("k");
  tr.get_range("", "l");
  put(db, "unrelated", "x");
  tr.set("k", "mine");
  EXPECT_NO_THROW(tr.commit());
}

// Atomic operations add write conflicts only: increments by many transactions never
// conflict with each other, and none is lost.
TEST(Isolation, AtomicAddsNeverConflictAndNoneIsLost) {
  Database db = testing::open_database();
  Transaction tr1 = db.create_transaction();
  Transaction tr2 = db.create_transaction();
  (void)tr1.read_version();
  (void)tr2.read_version();
  tr1.atomic_op(MutationType::add, "n", std::string("\x01", 1));
  tr2.atomic_op(MutationType::add, "n", std::string("\x02", 1));
  tr2.commit();
  EXPECT_NO_THROW(tr1.commit());
  EXPECT_EQ(read_key(db, "n"), std::string("\x03", 1));
}

// ...but a reader of the key conflicts with an atomic operation on it.
TEST(Isolation, AtomicOpMakesReadersOfTheKeyConflict) {
  Database db = testing::open_database();
  Transaction reader = db.create_transaction();
  (void)reader.get("n");
  Transaction adder = db.create_transaction();
  adder.atomic_op(MutationType::add, "n", std::string("\x01", 1));
  adder.commit();
  reader.set("other", "x");
  EXPECT_TRUE(commit_conflicts(reader));
}

}  // namespace
}  // namespace strata
