// Transactions: get/set/clear/clear_range, read-your-writes and snapshot reads, conflicts
// and add_conflict_range, commit, reset, cancel, and errors deferred from the void calls.
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "fdb_c/fdb_c.h"
#include "fdb_c_test_util.hpp"

namespace fdbc_test {
namespace {

using Transaction = FdbTest;

TEST_F(Transaction, SetThenCommitIsVisibleToLaterTransactions) {
  Tr tr = make_tr();
  set(tr, k("a"), "1");
  set(tr, k("b"), std::string("\0\xff", 2));
  ASSERT_EQ(commit(tr), 0);
  Value a = read(k("a"));
  Value b = read(k("b"));
  EXPECT_EQ(a.error, 0);
  EXPECT_TRUE(a.present);
  EXPECT_EQ(a.value, "1");
  EXPECT_EQ(b.value, std::string("\0\xff", 2));
}

TEST_F(Transaction, UncommittedWritesAreInvisibleToOthers) {
  Tr tr = make_tr();
  set(tr, k("a"), "1");
  EXPECT_FALSE(read(k("a")).present);
  fdb_transaction_destroy(tr.release());  // destroyed without commit: nothing written
  EXPECT_FALSE(read(k("a")).present);
}

TEST_F(Transaction, ReadsSeeOwnWrites) {
  ASSERT_EQ(write(k("a"), "old"), 0);
  ASSERT_EQ(write(k("b"), "old"), 0);
  Tr tr = make_tr();
  set(tr, k("a"), "new");
  clear(tr, k("b"));
  set(tr, k("c"), "c");
  EXPECT_EQ(get(tr, k("a")).value, "new");
  EXPECT_FALSE(get(tr, k("b")).present);
  EXPECT_EQ(get(tr, k("c")).value, "c");
  Range r = get_range(tr, prefix(), prefix_end());
  ASSERT_EQ(r.error, 0);
  EXPECT_EQ(r.rows, (Rows{{k("a"), "new"}, {k("c"), "c"}}));
}

TEST_F(Transaction, SnapshotReadsSeeOwnWritesByDefault) {
  Tr tr = make_tr();
  set(tr, k("a"), "mine");
  EXPECT_EQ(get(tr, k("a"), /*snapshot=*/true).value, "mine");
}

TEST_F(Transaction, ClearAndClearRange) {
  for (const char* s : {"a", "b", "c", "d", "e"}) ASSERT_EQ(write(k(s), s), 0);
  Tr tr = make_tr();
  clear(tr, k("a"));
  clear_range(tr, k("b"), k("d"));  // b and c, not d
  clear(tr, k("missing"));          // clearing an absent key is fine
  ASSERT_EQ(commit(tr), 0);
  Tr check = make_tr();
  Range r = get_range(check, prefix(), prefix_end());
  ASSERT_EQ(r.error, 0);
  EXPECT_EQ(r.rows, (Rows{{k("d"), "d"}, {k("e"), "e"}}));
}

TEST_F(Transaction, ClearRangeWithEqualEndsDoesNothing) {
  ASSERT_EQ(write(k("a"), "a"), 0);
  Tr tr = make_tr();
  clear_range(tr, k("a"), k("a"));
  ASSERT_EQ(commit(tr), 0);
  EXPECT_TRUE(read(k("a")).present);
}

TEST_F(Transaction, ReadThenConflictingWriteIsNotCommitted) {
  ASSERT_EQ(write(k("a"), "0"), 0);
  Tr t1 = make_tr();
  ASSERT_EQ(get(t1, k("a")).error, 0);
  ASSERT_EQ(write(k("a"), "1"), 0);
  set(t1, k("b"), "x");
  EXPECT_EQ(commit(t1), 1020);
}

TEST_F(Transaction, SnapshotReadAddsNoConflict) {
  ASSERT_EQ(write(k("a"), "0"), 0);
  Tr t1 = make_tr();
  ASSERT_EQ(get(t1, k("a"), /*snapshot=*/true).error, 0);
  ASSERT_EQ(write(k("a"), "1"), 0);
  set(t1, k("b"), "x");
  EXPECT_EQ(commit(t1), 0);
}

TEST_F(Transaction, ReadOfOwnWriteAddsNoConflict) {
  Tr t1 = make_tr();
  set(t1, k("a"), "mine");
  ASSERT_EQ(get(t1, k("a")).value, "mine");
  ASSERT_EQ(write(k("a"), "theirs"), 0);
  EXPECT_EQ(commit(t1), 0);
}

TEST_F(Transaction, BlindWritesNeverConflict) {
  Tr t1 = make_tr();
  ASSERT_GT(read_version(t1), 0);
  set(t1, k("a"), "1");
  ASSERT_EQ(write(k("a"), "2"), 0);
  EXPECT_EQ(commit(t1), 0);
  EXPECT_EQ(read(k("a")).value, "1");
}

TEST_F(Transaction, ReadConflictRangeConflictsAsIfRead) {
  Tr t1 = make_tr();
  ASSERT_GT(read_version(t1), 0);
  ASSERT_EQ(fdb_transaction_add_conflict_range(t1.get(), u8(k("a")), len(k("a")), u8(k("c")),
                                               len(k("c")), FDB_CONFLICT_RANGE_TYPE_READ),
            0);
  ASSERT_EQ(write(k("b"), "x"), 0);
  set(t1, k("z"), "x");
  EXPECT_EQ(commit(t1), 1020);
}

TEST_F(Transaction, ReadConflictRangeEndIsExclusive) {
  Tr t1 = make_tr();
  ASSERT_GT(read_version(t1), 0);
  ASSERT_EQ(fdb_transaction_add_conflict_range(t1.get(), u8(k("a")), len(k("a")), u8(k("c")),
                                               len(k("c")), FDB_CONFLICT_RANGE_TYPE_READ),
            0);
  ASSERT_EQ(write(k("c"), "x"), 0);
  set(t1, k("z"), "x");
  EXPECT_EQ(commit(t1), 0);
}

// [key, key + '\0'), the range a binding adds for one key (Python's add_read_conflict_key):
// it covers that key and not the next one, leaves out a key the transaction set itself
// (FoundationDB's ReadYourWritesTransaction::updateConflictMap, fdbclient/
// ReadYourWrites.actor.cpp, adds read conflicts only where the transaction wrote nothing),
// and a system key is refused at the commit as any range beyond \xff is.
TEST_F(Transaction, AOneKeyReadConflictRangeCoversThatKeyOnly) {
  const auto add_key = [](const Tr& tr, const std::string& key) {
    const std::string end = key + std::string(1, '\0');
    return fdb_transaction_add_conflict_range(tr.get(), u8(key), len(key), u8(end), len(end),
                                              FDB_CONFLICT_RANGE_TYPE_READ);
  };
  Tr next_key_written = make_tr();
  ASSERT_GT(read_version(next_key_written), 0);
  ASSERT_EQ(add_key(next_key_written, k("b")), 0);
  ASSERT_EQ(write(k("b") + std::string(1, '\0'), "x"), 0);
  set(next_key_written, k("z"), "x");
  EXPECT_EQ(commit(next_key_written), 0);

  Tr key_written = make_tr();
  ASSERT_GT(read_version(key_written), 0);
  ASSERT_EQ(add_key(key_written, k("b")), 0);
  ASSERT_EQ(write(k("b"), "y"), 0);
  set(key_written, k("z"), "y");
  EXPECT_EQ(commit(key_written), 1020);

  Tr own_write = make_tr();
  ASSERT_GT(read_version(own_write), 0);
  set(own_write, k("b"), "mine");
  ASSERT_EQ(add_key(own_write, k("b")), 0);
  ASSERT_EQ(write(k("b"), "theirs"), 0);
  EXPECT_EQ(commit(own_write), 0);
  EXPECT_EQ(read(k("b")).value, "mine");

  Tr system_key = make_tr();
  ASSERT_EQ(add_key(system_key, "\xff/sys"), 0);
  set(system_key, k("z"), "x");
  EXPECT_EQ(commit(system_key), 2004);

  // A versionstamped value is an independent write (FoundationDB's
  // OperationStack::isDependent, fdbclient/WriteMap.cpp), alone or in a cleared range: the
  // read conflict on its key adds nothing.
  const std::string operand = "v" + std::string(10, '\0') + std::string("\x01\x00\x00\x00", 4);
  for (bool in_a_clear : {false, true}) {
    Tr stamped = make_tr();
    ASSERT_GT(read_version(stamped), 0);
    if (in_a_clear) clear_range(stamped, k("a"), k("z"));
    atomic(stamped, k("m"), operand, FDB_MUTATION_TYPE_SET_VERSIONSTAMPED_VALUE);
    ASSERT_EQ(add_key(stamped, k("m")), 0);
    ASSERT_EQ(write(k("m"), "theirs"), 0);
    EXPECT_EQ(commit(stamped), 0) << (in_a_clear ? "in a clear" : "alone");
  }
}

TEST_F(Transaction, WriteConflictRangeMakesReadersConflictWithoutWritingData) {
  ASSERT_EQ(write(k("b"), "orig"), 0);
  Tr reader = make_tr();
  ASSERT_EQ(get(reader, k("b")).error, 0);

  Tr writer = make_tr();
  ASSERT_EQ(fdb_transaction_add_conflict_range(writer.get(), u8(k("a")), len(k("a")), u8(k("c")),
                                               len(k("c")), FDB_CONFLICT_RANGE_TYPE_WRITE),
            0);
  ASSERT_EQ(commit(writer), 0);
  // Not read-only: it has a write conflict range, so it got a commit version.
  EXPECT_GT(committed_version(writer), 0);
  EXPECT_EQ(read(k("b")).value, "orig");

  set(reader, k("z"), "x");
  EXPECT_EQ(commit(reader), 1020);
}

TEST_F(Transaction, InvertedConflictRangeFailsAtOnce) {
  Tr tr = make_tr();
  EXPECT_EQ(fdb_transaction_add_conflict_range(tr.get(), u8(k("b")), len(k("b")), u8(k("a")),
                                               len(k("a")), FDB_CONFLICT_RANGE_TYPE_READ),
            2005);
  EXPECT_EQ(fdb_transaction_add_conflict_range(tr.get(), u8(k("b")), len(k("b")), u8(k("a")),
                                               len(k("a")), FDB_CONFLICT_RANGE_TYPE_WRITE),
            2005);
}

TEST_F(Transaction, EmptyConflictRangeIsIgnored) {
  Tr tr = make_tr();
  EXPECT_EQ(fdb_transaction_add_conflict_range(tr.get(), u8(k("a")), len(k("a")), u8(k("a")),
                                               len(k("a")), FDB_CONFLICT_RANGE_TYPE_WRITE),
            0);
  ASSERT_EQ(commit(tr), 0);
  EXPECT_EQ(committed_version(tr), -1);  // nothing to write: read-only
}

TEST_F(Transaction, UnknownConflictRangeTypeIsClientInvalidOperation) {
  Tr tr = make_tr();
  fdb_error_t e = fdb_transaction_add_conflict_range(tr.get(), u8(k("a")), len(k("a")), u8(k("b")),
                                                     len(k("b")), 7);
  if (e == 0) {
    // Deferred: the commit reports it.
    EXPECT_EQ(commit(tr), 2000);
  } else {
    EXPECT_EQ(e, 2000);
  }
}

// ---- Deferred errors -----------------------------------------------------------------------

TEST_F(Transaction, SetOfSystemKeyFailsTheNextRead) {
  Tr tr = make_tr();
  std::string sys = "\xff/sys";
  set(tr, sys, "v");
  EXPECT_EQ(get(tr, k("a")).error, 2004);
}

TEST_F(Transaction, SetOfSystemKeyFailsTheCommit) {
  Tr tr = make_tr();
  std::string sys = "\xff/sys";
  set(tr, sys, "v");
  set(tr, k("a"), "v");
  EXPECT_EQ(commit(tr), 2004);
  EXPECT_FALSE(read(k("a")).present);
}

TEST_F(Transaction, KeyTooLargeIsDeferredToCommit) {
  Tr tr = make_tr();
  set(tr, k(std::string(10001, 'k')), "v");
  EXPECT_EQ(commit(tr), 2102);
}

TEST_F(Transaction, LargestKeyIsAccepted) {
  std::string key = k(std::string(10000 - prefix().size(), 'k'));
  ASSERT_EQ(key.size(), 10000u);
  Tr tr = make_tr();
  set(tr, key, "v");
  EXPECT_EQ(commit(tr), 0);
  EXPECT_TRUE(read(key).present);
}

TEST_F(Transaction, ClearRangeEndBeyondFFIsDeferredKeyOutsideLegalRange) {
  Tr tr = make_tr();
  clear_range(tr, k("a"), "\xff\x01");
  EXPECT_EQ(commit(tr), 2004);
}

TEST_F(Transaction, ConflictRangeBeyondFFIsDeferred) {
  Tr tr = make_tr();
  std::string end = "\xff\x01";
  EXPECT_EQ(fdb_transaction_add_conflict_range(tr.get(), u8(k("a")), len(k("a")), u8(end), len(end),
                                               FDB_CONFLICT_RANGE_TYPE_WRITE),
            0);
  EXPECT_EQ(commit(tr), 2004);
}

TEST_F(Transaction, ValueTooLargeIsDeferredToCommit) {
  Tr tr = make_tr();
  set(tr, k("a"), std::string(100001, 'v'));
  EXPECT_EQ(commit(tr), 2103);
}

TEST_F(Transaction, LargestValueIsAccepted) {
  Tr tr = make_tr();
  set(tr, k("a"), std::string(100000, 'v'));
  EXPECT_EQ(commit(tr), 0);
  EXPECT_EQ(read(k("a")).value.size(), 100000u);
}

TEST_F(Transaction, InvertedClearRangeFailsTheNextRead) {
  Tr tr = make_tr();
  clear_range(tr, k("b"), k("a"));
  EXPECT_EQ(get(tr, k("a")).error, 2005);
}

TEST_F(Transaction, InvertedClearRangeFailsTheCommit) {
  Tr tr = make_tr();
  clear_range(tr, k("b"), k("a"));
  EXPECT_EQ(commit(tr), 2005);
}

TEST_F(Transaction, ClearOfSystemKeyFailsTheCommit) {
  Tr tr = make_tr();
  std::string sys = "\xff/sys";
  clear(tr, sys);
  EXPECT_EQ(commit(tr), 2004);
}

TEST_F(Transaction, DeferredErrorFailsWatchAndReadVersion) {
  Tr tr = make_tr();
  std::string sys = "\xff/sys";
  set(tr, sys, "v");
  Future w(fdb_transaction_watch(tr.get(), u8(k("a")), len(k("a"))));
  EXPECT_TRUE(wait_ready_for(w));
  EXPECT_EQ(fdb_future_get_error(w.get()), 2004);
  Future rv(fdb_transaction_get_read_version(tr.get()));
  EXPECT_EQ(wait(rv), 2004);
}

TEST_F(Transaction, ResetClearsADeferredError) {
  Tr tr = make_tr();
  std::string sys = "\xff/sys";
  set(tr, sys, "v");
  fdb_transaction_reset(tr.get());
  set(tr, k("a"), "v");
  EXPECT_EQ(commit(tr), 0);
  EXPECT_TRUE(read(k("a")).present);
}

TEST_F(Transaction, ReadOfSystemKeyFailsAtOnce) {
  Tr tr = make_tr();
  std::string sys = "\xff/sys";
  EXPECT_EQ(get(tr, sys).error, 2004);
}

// Under them the system keyspace reads as one process has it: the shard map only
// (system_keys_test.cpp); writes stay refused.
TEST_F(Transaction, SystemKeyOptionsOpenTheSystemKeysForReadingOnly) {
  Tr tr = make_tr();
  EXPECT_EQ(set_option(tr, FDB_TR_OPTION_READ_SYSTEM_KEYS), 0);
  EXPECT_EQ(set_option(tr, FDB_TR_OPTION_ACCESS_SYSTEM_KEYS), 0);
  std::string sys = "\xff/sys";
  const Value v = get(tr, sys);
  EXPECT_EQ(v.error, 0);
  EXPECT_FALSE(v.present);
  set(tr, sys, "v");
  EXPECT_EQ(commit(tr), 2004);
}

TEST_F(Transaction, ReadOfOversizedKeyIsAbsentWithoutError) {
  Tr tr = make_tr();
  Value v = get(tr, k(std::string(10001, 'k')));
  EXPECT_EQ(v.error, 0);
  EXPECT_FALSE(v.present);
}

// ---- Commit, reset, cancel ---------------------------------------------------------------

TEST_F(Transaction, CommitAfterCommitIsUsedDuringCommit) {
  Tr tr = make_tr();
  set(tr, k("a"), "1");
  ASSERT_EQ(commit(tr), 0);
  EXPECT_EQ(commit(tr), 2017);
  fdb_transaction_reset(tr.get());
  set(tr, k("b"), "1");
  EXPECT_EQ(commit(tr), 0);
  EXPECT_TRUE(read(k("b")).present);
}

TEST_F(Transaction, ResetDropsWritesAndStartsOver) {
  Tr tr = make_tr();
  set(tr, k("a"), "1");
  fdb_transaction_reset(tr.get());
  EXPECT_FALSE(get(tr, k("a")).present);
  set(tr, k("b"), "2");
  ASSERT_EQ(commit(tr), 0);
  EXPECT_FALSE(read(k("a")).present);
  EXPECT_EQ(read(k("b")).value, "2");
}

TEST_F(Transaction, ResetTakesANewReadVersion) {
  Tr tr = make_tr();
  ASSERT_FALSE(get(tr, k("a")).present);
  ASSERT_EQ(write(k("a"), "new"), 0);
  EXPECT_FALSE(get(tr, k("a")).present);  // still at its old read version
  fdb_transaction_reset(tr.get());
  EXPECT_EQ(get(tr, k("a")).value, "new");
}

TEST_F(Transaction, CancelFailsEveryLaterCallUntilReset) {
  Tr tr = make_tr();
  set(tr, k("a"), "1");
  fdb_transaction_cancel(tr.get());
  EXPECT_EQ(get(tr, k("a")).error, 1025);
  Future rv(fdb_transaction_get_read_version(tr.get()));
  EXPECT_EQ(wait(rv), 1025);
  set(tr, k("b"), "1");
  EXPECT_EQ(commit(tr), 1025);
  EXPECT_FALSE(read(k("a")).present);
  fdb_transaction_reset(tr.get());
  set(tr, k("c"), "1");
  EXPECT_EQ(commit(tr), 0);
  EXPECT_TRUE(read(k("c")).present);
}

// on_error does not end a cancellation (FoundationDB's bindings' own unit tests check it):
// a retry loop around a cancelled transaction stops instead of retrying it.
TEST_F(Transaction, CancellationSurvivesOnErrorButNotReset) {
  Tr tr = make_tr();
  fdb_transaction_cancel(tr.get());
  EXPECT_EQ(on_error(tr, 1007), 1025);
  set(tr, k("a"), "1");
  EXPECT_EQ(commit(tr), 1025);
  EXPECT_EQ(on_error(tr, 1020), 1025);
  fdb_transaction_reset(tr.get());
  set(tr, k("a"), "1");
  EXPECT_EQ(commit(tr), 0);
  EXPECT_TRUE(read(k("a")).present);
}

TEST_F(Transaction, CancelTwiceIsHarmless) {
  Tr tr = make_tr();
  fdb_transaction_cancel(tr.get());
  fdb_transaction_cancel(tr.get());
  EXPECT_EQ(commit(tr), 1025);
}

TEST_F(Transaction, ReadOnlyCommitSucceeds) {
  Tr tr = make_tr();
  ASSERT_EQ(get(tr, k("a")).error, 0);
  ASSERT_EQ(write(k("a"), "changed"), 0);
  // No writes: nothing to check, so no conflict.
  EXPECT_EQ(commit(tr), 0);
  EXPECT_EQ(committed_version(tr), -1);
}

TEST_F(Transaction, EmptyCommitSucceeds) {
  Tr tr = make_tr();
  EXPECT_EQ(commit(tr), 0);
  EXPECT_EQ(committed_version(tr), -1);
}

TEST_F(Transaction, ManyTransactionsOnOneDatabase) {
  std::vector<Tr> trs;
  for (int i = 0; i < 20; ++i) {
    trs.push_back(make_tr());
    set(trs.back(), k("key" + std::to_string(i)), std::to_string(i));
  }
  for (auto& tr : trs) ASSERT_EQ(commit(tr), 0);
  Tr check = make_tr();
  EXPECT_EQ(get_range(check, prefix(), prefix_end()).rows.size(), 20u);
}

TEST_F(Transaction, OneTransactionFromSeveralThreads) {
  Tr tr = make_tr();
  constexpr int kThreads = 4;
  constexpr int kKeys = 50;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back([&, t] {
      for (int i = 0; i < kKeys; ++i) {
        std::string key = k("t" + std::to_string(t) + "/" + std::to_string(i));
        set(tr, key, "v");
        Value v = get(tr, key);
        EXPECT_EQ(v.error, 0);
        EXPECT_EQ(v.value, "v");
      }
    });
  for (auto& t : threads) t.join();
  ASSERT_EQ(commit(tr), 0);
  Tr check = make_tr();
  EXPECT_EQ(get_range(check, prefix(), prefix_end()).rows.size(),
            static_cast<std::size_t>(kThreads * kKeys));
}

}  // namespace
}  // namespace fdbc_test
