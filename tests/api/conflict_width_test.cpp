// One test per conflict-range rule of FoundationDB's fdbclient/ReadYourWrites.cpp (reads:
// RYWImpl::read, addConflictRange; writes: updateConflictMap). Each probes both sides of a rule's
// boundary: a write just inside the range must conflict (the range is not too narrow) and a write
// just outside must not (not too wide).
//
// The race is apitest::reader_conflicts_with: tr1 fixes its read version and reads, tr2
// writes and commits, tr1 writes a dummy key and commits.
#include <functional>
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

using apitest::put_all;
using apitest::reader_conflicts_with;
using testing::ThrowsCode;

// k1..k5 exist. Every probe runs on a fresh copy of that data, so a probe's committed
// write never changes what the next probe reads.
Database five_keys() {
  Database db = testing::open_database();
  put_all(db, {{"k1", "1"}, {"k2", "2"}, {"k3", "3"}, {"k4", "4"}, {"k5", "5"}});
  return db;
}

class ConflictWidth : public ::testing::Test {
 protected:
  // Does a read made by `reader` conflict with another transaction that runs `writer`?
  static bool conflicts(const std::function<void(Transaction&)>& reader,
                        const std::function<void(Transaction&)>& writer) {
    Database db = five_keys();
    return reader_conflicts_with(db, reader, writer);
  }
  static bool read_conflicts_with_set(const std::function<void(Transaction&)>& reader,
                                      const std::string& key) {
    return conflicts(reader, [&](Transaction& tr) { tr.set(key, "w"); });
  }
  static bool read_conflicts_with_clear(const std::function<void(Transaction&)>& reader,
                                        const std::string& key) {
    return conflicts(reader, [&](Transaction& tr) { tr.clear(key); });
  }
};

std::string with_nul(std::string key) { return key + std::string(1, '\0'); }

// ---- 3.4: get --------------------------------------------------------------------------

TEST_F(ConflictWidth, GetConflictsOnExactlyTheKey) {
  auto read_k3 = [](Transaction& tr) { (void)tr.get("k3"); };
  EXPECT_TRUE(read_conflicts_with_set(read_k3, "k3"));
  EXPECT_TRUE(read_conflicts_with_clear(read_k3, "k3"));
  EXPECT_FALSE(read_conflicts_with_set(read_k3, with_nul("k3"))) << "k3+\\0 is outside";
  EXPECT_FALSE(read_conflicts_with_set(read_k3, "k2\xff")) << "just before k3";
  EXPECT_FALSE(read_conflicts_with_set(read_k3, "k3a"));
}

TEST_F(ConflictWidth, GetOfAbsentKeyConflictsWithItsInsertion) {
  auto read_absent = [](Transaction& tr) { EXPECT_EQ(tr.get("k25"), std::nullopt); };
  EXPECT_TRUE(read_conflicts_with_set(read_absent, "k25"));
  EXPECT_FALSE(read_conflicts_with_set(read_absent, "k26"));
}

TEST_F(ConflictWidth, GetOfKeyThisTransactionSetAddsNoConflict) {
  auto set_then_get = [](Transaction& tr) {
    tr.set("k3", "mine");
    EXPECT_EQ(tr.get("k3"), "mine");
  };
  EXPECT_FALSE(read_conflicts_with_set(set_then_get, "k3"));
}

TEST_F(ConflictWidth, GetOfKeyThisTransactionClearedAddsNoConflict) {
  auto clear_then_get = [](Transaction& tr) {
    tr.clear("k3");
    (void)tr.get("k3");
  };
  EXPECT_FALSE(read_conflicts_with_set(clear_then_get, "k3"));
  auto clear_range_then_get = [](Transaction& tr) {
    tr.clear_range("k2", "k4");
    (void)tr.get("k3");
    (void)tr.get("k25");
  };
  EXPECT_FALSE(read_conflicts_with_set(clear_range_then_get, "k3"));
  EXPECT_FALSE(read_conflicts_with_set(clear_range_then_get, "k25"));
}

// 3.2: a read conflict recorded before a later write stays in place.
TEST_F(ConflictWidth, ReadThenOverwriteStillConflicts) {
  auto get_then_set = [](Transaction& tr) {
    (void)tr.get("k3");
    tr.set("k3", "mine");
  };
  EXPECT_TRUE(read_conflicts_with_set(get_then_set, "k3"));
  auto range_then_clear = [](Transaction& tr) {
    tr.get_range("k2", "k4");
    tr.clear_range("k2", "k4");
  };
  EXPECT_TRUE(read_conflicts_with_set(range_then_clear, "k35"));
}

// ---- 3.4: get_range ------------------------------------------------------------------

TEST_F(ConflictWidth, ForwardLimitedReadConflictsOnlyUpToLastReturnedKey) {
  auto read2 = [](Transaction& tr) {
    ASSERT_EQ(apitest::keys_of(tr.get_range("k0", "k9", {.limit = 2})),
              (std::vector<std::string>{"k1", "k2"}));
  };
  EXPECT_TRUE(read_conflicts_with_set(read2, "k0")) << "begin is inside";
  EXPECT_TRUE(read_conflicts_with_set(read2, "k15")) << "a gap before the last row";
  EXPECT_TRUE(read_conflicts_with_set(read2, "k2")) << "the last returned row";
  EXPECT_TRUE(read_conflicts_with_clear(read2, "k1"));
  EXPECT_FALSE(read_conflicts_with_set(read2, with_nul("k2"))) << "just after the last row";
  EXPECT_FALSE(read_conflicts_with_set(read2, "k25"));
  EXPECT_FALSE(read_conflicts_with_clear(read2, "k3")) << "the next, unreturned row";
  EXPECT_FALSE(read_conflicts_with_set(read2, "k8"));
}

TEST_F(ConflictWidth, ExactlyLimitRowsCountsAsMore) {
  // Exactly `limit` rows exist in the range; the read still conflicts only up to the
  // last one, as if more might follow.
  auto read_all_five = [](Transaction& tr) {
    ASSERT_EQ(tr.get_range("k0", "k9", {.limit = 5}).size(), 5u);
  };
  EXPECT_TRUE(read_conflicts_with_set(read_all_five, "k5"));
  EXPECT_FALSE(read_conflicts_with_set(read_all_five, "k6"));
  EXPECT_FALSE(read_conflicts_with_set(read_all_five, "k8"));
}

TEST_F(ConflictWidth, LimitAboveRowCountConflictsOnWholeRange) {
  auto read_fewer = [](Transaction& tr) {
    ASSERT_EQ(tr.get_range("k0", "k9", {.limit = 6}).size(), 5u);
  };
  EXPECT_TRUE(read_conflicts_with_set(read_fewer, "k6"));
  EXPECT_TRUE(read_conflicts_with_set(read_fewer, "k8\xff"));
  EXPECT_FALSE(read_conflicts_with_set(read_fewer, "k9"));
}

TEST_F(ConflictWidth, ReverseLimitedReadConflictsFromSmallestReturnedKeyToEnd) {
  auto read2 = [](Transaction& tr) {
    ASSERT_EQ(apitest::keys_of(tr.get_range("k0", "k9", {.limit = 2, .reverse = true})),
              (std::vector<std::string>{"k5", "k4"}));
  };
  EXPECT_TRUE(read_conflicts_with_set(read2, "k4")) << "smallest returned key is inside";
  EXPECT_TRUE(read_conflicts_with_set(read2, "k45"));
  EXPECT_TRUE(read_conflicts_with_set(read2, "k8")) << "after the last row, before end";
  EXPECT_TRUE(read_conflicts_with_clear(read2, "k5"));
  EXPECT_FALSE(read_conflicts_with_set(read2, "k3\xff")) << "just before the smallest row";
  EXPECT_FALSE(read_conflicts_with_clear(read2, "k3"));
  EXPECT_FALSE(read_conflicts_with_set(read2, "k0"));
  EXPECT_FALSE(read_conflicts_with_set(read2, "k9")) << "end is exclusive";
}

TEST_F(ConflictWidth, ReverseExactlyLimitRowsCountsAsMore) {
  auto read_all_five = [](Transaction& tr) {
    ASSERT_EQ(tr.get_range("k0", "k9", {.limit = 5, .reverse = true}).size(), 5u);
  };
  EXPECT_TRUE(read_conflicts_with_set(read_all_five, "k1"));
  EXPECT_FALSE(read_conflicts_with_set(read_all_five, "k0"));
}

TEST_F(ConflictWidth, UnlimitedReadConflictsOnWholeRangeIncludingBeyondLastRow) {
  for (bool reverse : {false, true}) {
    auto read_all = [&](Transaction& tr) { (void)tr.get_range("k0", "k9", {.reverse = reverse}); };
    EXPECT_TRUE(read_conflicts_with_set(read_all, "k0")) << reverse;
    EXPECT_TRUE(read_conflicts_with_set(read_all, "k8")) << reverse;
    EXPECT_TRUE(read_conflicts_with_set(read_all, "k3")) << reverse;
    EXPECT_FALSE(read_conflicts_with_set(read_all, "k9")) << reverse;
    EXPECT_FALSE(read_conflicts_with_set(read_all, "j")) << reverse;
  }
}

TEST_F(ConflictWidth, EmptyRangeReadOfAnEmptyRegionConflictsWithInsertion) {
  auto read_gap = [](Transaction& tr) { EXPECT_TRUE(tr.get_range("m", "n").empty()); };
  EXPECT_TRUE(read_conflicts_with_set(read_gap, "m5"));
  EXPECT_FALSE(read_conflicts_with_set(read_gap, "n"));
}

TEST_F(ConflictWidth, BeginAtOrAfterEndAddsNoConflict) {
  auto inverted = [](Transaction& tr) {
    tr.get_range("k3", "k3");
    tr.get_range("k4", "k2");
    tr.get_range("k4", "k2", {.limit = 1, .reverse = true});
  };
  EXPECT_FALSE(read_conflicts_with_set(inverted, "k3"));
  EXPECT_FALSE(read_conflicts_with_set(inverted, "k2"));
}

TEST_F(ConflictWidth, RangeReadConflictExcludesKeysThisTransactionWrote) {
  auto write_then_read = [](Transaction& tr) {
    tr.set("k2", "mine");
    tr.clear_range("k3", "k4");
    tr.get_range("k0", "k9");
  };
  EXPECT_FALSE(read_conflicts_with_set(write_then_read, "k2"));
  EXPECT_FALSE(read_conflicts_with_set(write_then_read, "k3"));
  EXPECT_FALSE(read_conflicts_with_set(write_then_read, "k35"));
  EXPECT_TRUE(read_conflicts_with_set(write_then_read, with_nul("k2")));
  EXPECT_TRUE(read_conflicts_with_set(write_then_read, "k4"));
  EXPECT_TRUE(read_conflicts_with_set(write_then_read, "k1"));
}

// A limited read whose last row is the transaction's own write stops there too.
TEST_F(ConflictWidth, LimitedReadEndingOnOwnWriteStopsAtIt) {
  auto read = [](Transaction& tr) {
    tr.set("k15", "mine");
    ASSERT_EQ(apitest::keys_of(tr.get_range("k0", "k9", {.limit = 2})),
              (std::vector<std::string>{"k1", "k15"}));
  };
  EXPECT_TRUE(read_conflicts_with_set(read, "k1"));
  EXPECT_FALSE(read_conflicts_with_set(read, "k15"));
  EXPECT_FALSE(read_conflicts_with_clear(read, "k2"));
}

TEST_F(ConflictWidth, SnapshotRangeReadAddsNoConflict) {
  auto snap = [](Transaction& tr) {
    tr.snapshot().get_range("k0", "k9");
    (void)tr.snapshot().get("k3");
  };
  EXPECT_FALSE(read_conflicts_with_set(snap, "k3"));
  EXPECT_FALSE(read_conflicts_with_set(snap, "k6"));
}

// ---- 3.4: explicit read conflict ranges ---------------------------------------------

TEST_F(ConflictWidth, AddReadConflictRangeBehavesAsRead) {
  auto add = [](Transaction& tr) { tr.add_read_conflict_range("m", "p"); };
  EXPECT_TRUE(read_conflicts_with_set(add, "m"));
  EXPECT_TRUE(read_conflicts_with_set(add, "o\xff"));
  EXPECT_FALSE(read_conflicts_with_set(add, "p"));
  EXPECT_FALSE(read_conflicts_with_set(add, "l\xff"));
}

TEST_F(ConflictWidth, AddReadConflictKeyCoversExactlyTheKey) {
  auto add = [](Transaction& tr) { tr.add_read_conflict_key("k3"); };
  EXPECT_TRUE(read_conflicts_with_set(add, "k3"));
  EXPECT_FALSE(read_conflicts_with_set(add, with_nul("k3")));
}

TEST_F(ConflictWidth, AddReadConflictRangeExcludesKeysThisTransactionWrote) {
  auto write_then_add = [](Transaction& tr) {
    tr.set("n", "mine");
    tr.clear_range("o", "o5");
    tr.add_read_conflict_range("m", "p");
  };
  EXPECT_FALSE(read_conflicts_with_set(write_then_add, "n"));
  EXPECT_FALSE(read_conflicts_with_set(write_then_add, "o3"));
  EXPECT_TRUE(read_conflicts_with_set(write_then_add, with_nul("n")));
  EXPECT_TRUE(read_conflicts_with_set(write_then_add, "o5"));
  EXPECT_TRUE(read_conflicts_with_set(write_then_add, "m"));
}

// The key form takes the same exclusions: a key this transaction set or cleared (point or
// range) adds no conflict; a key with only pending atomic operations still does.
TEST_F(ConflictWidth, AddReadConflictKeyExcludesKeysThisTransactionWrote) {
  auto set_then_add = [](Transaction& tr) {
    tr.set("k3", "mine");
    tr.add_read_conflict_key("k3");
  };
  auto range_then_add = [](Transaction& tr) {
    tr.clear_range("k0", "k5");
    tr.add_read_conflict_key("k3");
  };
  auto atomic_then_add = [](Transaction& tr) {
    tr.atomic_op(MutationType::add, "k3", std::string(8, '\0'));
    tr.add_read_conflict_key("k3");
  };
  EXPECT_FALSE(read_conflicts_with_set(set_then_add, "k3"));
  EXPECT_FALSE(read_conflicts_with_set(range_then_add, "k3"));
  EXPECT_TRUE(read_conflicts_with_set(atomic_then_add, "k3"));
}

// [key, key+00), the range FoundationDB's bindings add for one key, behaves as the key
// form: the same width and the same exclusions.
TEST_F(ConflictWidth, AddReadConflictRangeOfOneKeyIsTheKeyForm) {
  auto add = [](Transaction& tr) { tr.add_read_conflict_range("k3", with_nul("k3")); };
  EXPECT_TRUE(read_conflicts_with_set(add, "k3"));
  EXPECT_FALSE(read_conflicts_with_set(add, with_nul("k3")));
  EXPECT_FALSE(read_conflicts_with_set(add, "k2\xff"));
  auto set_then_add = [](Transaction& tr) {
    tr.set("k3", "mine");
    tr.add_read_conflict_range("k3", with_nul("k3"));
  };
  auto range_then_add = [](Transaction& tr) {
    tr.clear_range("k0", "k5");
    tr.add_read_conflict_range("k3", with_nul("k3"));
  };
  auto atomic_then_add = [](Transaction& tr) {
    tr.atomic_op(MutationType::add, "k3", std::string(8, '\0'));
    tr.add_read_conflict_range("k3", with_nul("k3"));
  };
  EXPECT_FALSE(read_conflicts_with_set(set_then_add, "k3"));
  EXPECT_FALSE(read_conflicts_with_set(range_then_add, "k3"));
  EXPECT_TRUE(read_conflicts_with_set(atomic_then_add, "k3"));
  // Not one key: a range ending in 00 after a longer key still covers what lies between.
  auto wider = [](Transaction& tr) { tr.add_read_conflict_range("k", with_nul("k3")); };
  EXPECT_TRUE(read_conflicts_with_set(wider, "k2"));
}

TEST_F(ConflictWidth, EmptyAddReadConflictRangeAddsNothing) {
  auto add = [](Transaction& tr) { tr.add_read_conflict_range("k3", "k3"); };
  EXPECT_FALSE(read_conflicts_with_set(add, "k3"));
}

// ---- explicit conflict ranges and the read version ------------------------------------
//
// FoundationDB's ReadYourWritesTransaction::addReadConflictRange only records the range
// (fdbclient/ReadYourWrites.cpp), and a commit starts a transaction that has no read
// version yet (NativeAPI's tryCommit calls TransactionState::startTransaction): the range
// is checked from the first read's version, or from one taken at commit.

TEST(ExplicitConflictRanges, AReadConflictRangeTakesNoReadVersion) {
  for (int form = 0; form < 2; ++form) {
    Database db = five_keys();
    Transaction tr = db.create_transaction();
    if (form == 0) tr.add_read_conflict_range("k1", "k4");
    if (form == 1) tr.add_read_conflict_key("k3");
    apitest::put(db, "k3", "before any read");
    tr.set("~dummy", "x");
    EXPECT_FALSE(apitest::commit_conflicts(tr)) << "form " << form;
  }
}

TEST(ExplicitConflictRanges, TheFirstReadTakesTheVersionTheyAreCheckedFrom) {
  Database db = five_keys();
  Transaction tr = db.create_transaction();
  tr.add_read_conflict_key("k3");
  apitest::put(db, "k3", "before the read");
  (void)tr.get("k1");
  apitest::put(db, "k3", "after the read");
  tr.set("~dummy", "x");
  EXPECT_TRUE(apitest::commit_conflicts(tr));
}

// Whether a transaction prepared by `setup` (before any read), then set to read at a
// version older than a write of k3, conflicts with that write at commit.
bool conflicts_from_an_earlier_version(Database& db,
                                       const std::function<void(Transaction&)>& setup) {
  Transaction holder = db.create_transaction();  // keeps its version readable in process
  const Version before = holder.read_version();
  apitest::put(db, "k3", "after the version");
  Transaction tr = db.create_transaction();
  setup(tr);
  tr.set_read_version(before);
  tr.set("~dummy", "x");
  return apitest::commit_conflicts(tr);
}

// With no read version taken, one may still be set: setReadVersion throws
// read_version_already_set only once the transaction has one.
TEST(ExplicitConflictRanges, AReadVersionSetAfterThemIsWhereTheyAreCheckedFrom) {
  Database db = five_keys();
  EXPECT_TRUE(conflicts_from_an_earlier_version(
      db, [](Transaction& tr) { tr.add_read_conflict_range("k1", "k4"); }));
}

// Read-your-writes may still be turned off: READ_YOUR_WRITES_DISABLE throws
// client_invalid_operation only once reads are under way, or the snapshot cache or the
// write map holds something. The ranges added before it stay in ReadYourWrites' own
// conflict map, which a commit with the option set never sends to the database's
// transaction (ReadYourWritesTransaction's commit): they conflict no more.
TEST(ExplicitConflictRanges, TurningReadYourWritesOffAfterThemDropsThem) {
  Database db = five_keys();
  for (int form = 0; form < 2; ++form) {
    EXPECT_FALSE(conflicts_from_an_earlier_version(db,
                                                   [&](Transaction& tr) {
                                                     if (form == 0)
                                                       tr.add_read_conflict_range("k1", "k4");
                                                     if (form == 1) tr.add_read_conflict_key("k3");
                                                     const std::size_t size = tr.approximate_size();
                                                     tr.set_read_your_writes(false);
                                                     EXPECT_EQ(tr.approximate_size(), size)
                                                         << "still counted, as FoundationDB's";
                                                     EXPECT_TRUE(tr.read_conflict_ranges().empty())
                                                         << "form " << form;
                                                   }))
        << "form " << form;
  }
  // Added with read-your-writes off, they are the database transaction's own and stay.
  EXPECT_TRUE(conflicts_from_an_earlier_version(db, [](Transaction& tr) {
    tr.set_read_your_writes(false);
    tr.add_read_conflict_range("k1", "k4");
  }));
}

// A write conflict range enters FoundationDB's write map (WriteMap::addConflictRange), so
// READ_YOUR_WRITES_DISABLE is refused after it. A clear or a write conflict range left
// empty once its ends are cut is dropped before it reaches the map: no write then, and the
// commit is read-only.
TEST(ExplicitConflictRanges, AWriteConflictRangeCountsAsAWriteUnlessCutEmpty) {
  Database db = five_keys();
  Transaction tr = db.create_transaction();
  tr.add_write_conflict_range("k1", "k2");
  EXPECT_THAT([&] { tr.set_read_your_writes(false); },
              ThrowsCode(ErrorCode::client_invalid_operation));
  // With read-your-writes already off, writes bypass the write map: setting it off again
  // is allowed (and turning it on refused, which FoundationDB has no option for).
  Transaction off = db.create_transaction();
  off.set_read_your_writes(false);
  off.set("k1", "x");
  off.add_write_conflict_range("k1", "k2");
  EXPECT_NO_THROW(off.set_read_your_writes(false));
  EXPECT_THAT([&] { off.set_read_your_writes(true); },
              ThrowsCode(ErrorCode::client_invalid_operation));

  const std::string past(10'010, 'z');  // both ends cut to the same 10,009 bytes
  const std::string further = past + "z";
  for (int form = 0; form < 2; ++form) {
    Transaction cut = db.create_transaction();
    if (form == 0) cut.clear_range(past, further);
    if (form == 1) cut.add_write_conflict_range(past, further);
    EXPECT_NO_THROW(cut.set_read_your_writes(false)) << "form " << form;
    cut.commit();
    EXPECT_EQ(cut.committed_version(), -1) << "form " << form;
  }
}

// ---- 3.5: write conflict ranges --------------------------------------------------------

TEST_F(ConflictWidth, SetAndClearWriteExactlyTheKey) {
  auto read_range = [](Transaction& tr) { (void)tr.get_range("k3", "k4"); };
  EXPECT_TRUE(read_conflicts_with_set(read_range, "k3"));
  EXPECT_TRUE(read_conflicts_with_clear(read_range, "k3"));
  EXPECT_TRUE(read_conflicts_with_clear(read_range, "k35")) << "clearing an absent key";
  EXPECT_FALSE(read_conflicts_with_set(read_range, "k4"));
  EXPECT_FALSE(read_conflicts_with_clear(read_range, "k2\xff"));
}

TEST_F(ConflictWidth, ClearRangeWriteConflictCoversWholeHalfOpenRange) {
  auto read_absent_m5 = [](Transaction& tr) { (void)tr.get("m5"); };
  auto clear = [&](std::string b, std::string e) {
    return conflicts(read_absent_m5, [&](Transaction& tr) { tr.clear_range(b, e); });
  };
  EXPECT_TRUE(clear("m", "n")) << "no key existed in the range; the range still conflicts";
  EXPECT_TRUE(clear("m5", with_nul("m5")));
  EXPECT_FALSE(clear("m", "m5")) << "end is exclusive";
  EXPECT_FALSE(clear(with_nul("m5"), "n"));
  EXPECT_FALSE(clear("m5", "m5")) << "an empty clear_range writes nothing";
}

TEST_F(ConflictWidth, AddWriteConflictRangeMakesReadersConflictWithoutWriting) {
  auto read_k3 = [](Transaction& tr) { (void)tr.get("k3"); };
  EXPECT_TRUE(conflicts(read_k3, [](Transaction& tr) { tr.add_write_conflict_range("k2", "k4"); }));
  EXPECT_FALSE(
      conflicts(read_k3, [](Transaction& tr) { tr.add_write_conflict_range("k4", "k5"); }));
  EXPECT_FALSE(
      conflicts(read_k3, [](Transaction& tr) { tr.add_write_conflict_range("k2", "k3"); }));
  EXPECT_TRUE(conflicts(read_k3, [](Transaction& tr) { tr.add_write_conflict_key("k3"); }));
  EXPECT_FALSE(
      conflicts(read_k3, [](Transaction& tr) { tr.add_write_conflict_key(with_nul("k3")); }));

  Database db = five_keys();
  Transaction tr = db.create_transaction();
  tr.add_write_conflict_range("k0", "k9");
  tr.commit();
  EXPECT_EQ(apitest::dump(db).size(), 5u) << "a write conflict range changes no data";
}

TEST_F(ConflictWidth, AddWriteConflictRangeMakesTransactionNotReadOnly) {
  Database db = five_keys();
  Transaction tr = db.create_transaction();
  tr.add_write_conflict_range("x", "y");
  tr.commit();
  EXPECT_GT(tr.committed_version(), 0);
  EXPECT_NO_THROW((void)tr.versionstamp());

  // ...and so its reads are checked at commit.
  Transaction reader = db.create_transaction();
  (void)reader.get("k1");
  reader.add_write_conflict_key("x");
  apitest::put(db, "k1", "changed");
  EXPECT_TRUE(apitest::commit_conflicts(reader));
}

}  // namespace
}  // namespace strata
