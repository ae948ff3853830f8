// Transaction basics through the public API: reads and writes, read-your-writes, reads
// into a caller's string, the read version and commit results. The retry loop and the
// transaction's life (reset, cancel, timeout, versionstamps) are in transaction_life_test.cpp.
#include "strata/transaction.hpp"

#include <map>
#include <optional>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "strata/database.hpp"

#include "api/api_test_util.hpp"
#include "support/error_matchers.hpp"
#include "support/test_database.hpp"

namespace strata {
namespace {

using apitest::five_rows;
using apitest::keys_of;
using apitest::put;
using apitest::read_key;
using ::testing::ElementsAre;
using ::testing::IsEmpty;
using testing::ThrowsCode;

// ---- Basic reads and writes ---------------------------------------------------------

// Transactions of many writes, committed alone: one appending past every stored key (its
// keys linked one behind the other), one among the stored keys (its paths walked together
// first), each with clears, a range clear and atomic adds mixed in. Every key lands in order
// and every read, point or range, agrees with a model.
TEST(TransactionBasics, LargeTransactionsLandInKeyOrderAmongTheStoredKeys) {
  Database db = testing::open_database({});
  std::map<std::string, std::string> model;
  auto key = [](int i) {
    std::string k = std::to_string(i);
    return "k" + std::string(5 - k.size(), '0') + k;
  };
  const std::string one("\x01\0\0\0\0\0\0\0", 8);
  auto commit = [&](int first, int last, int step) {
    db.run([&](Transaction& tr) {
      for (int i = first; i < last; i += step) tr.set(key(i), "v" + std::to_string(i));
      tr.clear(key(first + step));
      tr.clear_range(key(first + 10 * step), key(first + 13 * step));
      tr.atomic_op(MutationType::add, key(first + 20 * step), one);
    });
    for (int i = first; i < last; i += step) model[key(i)] = "v" + std::to_string(i);
    model.erase(key(first + step));
    model.erase(model.lower_bound(key(first + 10 * step)),
                model.lower_bound(key(first + 13 * step)));
    std::string& added = model[key(first + 20 * step)];
    // add: the operand's width (FoundationDB: fdbclient/include/fdbclient/Atomic.h)
    added.resize(one.size(), '\0');
    added[0] = static_cast<char>(added[0] + 1);
  };
  commit(0, 2000, 2);     // into the empty store
  commit(2000, 3000, 1);  // past every stored key
  commit(1, 2000, 2);     // between stored keys
  commit(501, 1501, 4);   // a few, far between the stored keys
  using Rows = std::vector<std::pair<std::string, std::string>>;
  Rows listed;  // in the list's order
  for (const KeyValue& kv : db.run([](Transaction& tr) { return tr.get_range("", "\xff"); })) {
    listed.emplace_back(kv.key, kv.value);
  }
  EXPECT_EQ(listed, Rows(model.begin(), model.end()));
  db.run([&](Transaction& tr) {
    for (int i = 0; i < 3000; ++i) {
      const auto it = model.find(key(i));
      EXPECT_EQ(tr.get(key(i)), it == model.end() ? std::nullopt : std::optional(it->second))
          << key(i);
      // A range read seeks through the list's upper levels.
      const auto next = tr.get_range(key(i), "\xff", {.limit = 1});
      const auto expected = model.lower_bound(key(i));
      ASSERT_EQ(next.size(), expected == model.end() ? 0u : 1u) << key(i);
      if (!next.empty()) {
        EXPECT_EQ(next[0].key, expected->first) << key(i);
      }
    }
  });
}

TEST(TransactionBasics, GetOfMissingKeyIsAbsent) {
  Database db = testing::open_database();
  Transaction tr = db.create_transaction();
  EXPECT_EQ(tr.get("nothing"), std::nullopt);
}

TEST(TransactionBasics, CommittedSetIsVisibleToLaterTransactions) {
  Database db = testing::open_database();
  put(db, "k", "v");
  EXPECT_EQ(read_key(db, "k"), "v");
  put(db, "k", "w");
  EXPECT_EQ(read_key(db, "k"), "w");
}

TEST(TransactionBasics, EmptyValueIsDistinctFromAbsent) {
  Database db = testing::open_database();
  put(db, "k", "");
  EXPECT_EQ(read_key(db, "k"), std::string());
}

TEST(TransactionBasics, BinaryKeysAndValuesRoundTrip) {
  Database db = testing::open_database();
  std::string key("k\0\x01\xfe", 4), value("\0\xff\0", 3);
  put(db, key, value);
  EXPECT_EQ(read_key(db, key), value);
  EXPECT_EQ(read_key(db, "k"), std::nullopt);
}

// The empty key is a legal key, and it sorts before every other key.
TEST(TransactionBasics, EmptyKeyIsALegalKey) {
  Database db = five_rows();
  put(db, "", "empty-key");
  EXPECT_EQ(read_key(db, ""), "empty-key");
  Transaction tr = db.create_transaction();
  EXPECT_EQ(tr.get_range("", "\xff").front(), (KeyValue{"", "empty-key"}));
  EXPECT_EQ(tr.get_range("", "\xff", {.reverse = true}).back(), (KeyValue{"", "empty-key"}));
  EXPECT_EQ(tr.get_range("", std::string(1, '\0')).size(), 1u);
  tr.clear("");
  tr.commit();
  EXPECT_EQ(read_key(db, ""), std::nullopt);
  EXPECT_EQ(db.create_transaction().get_range("", "\xff").size(), 5u);
}

TEST(TransactionBasics, ClearRemovesCommittedKey) {
  Database db = five_rows();
  Transaction tr = db.create_transaction();
  tr.clear("a2");
  tr.clear("never-existed");
  tr.commit();
  EXPECT_EQ(read_key(db, "a2"), std::nullopt);
  EXPECT_EQ(read_key(db, "a1"), "va1");
}

TEST(TransactionBasics, ClearRangeRemovesExactlyTheHalfOpenRange) {
  Database db = five_rows();
  Transaction tr = db.create_transaction();
  tr.clear_range("a2", "b1");
  tr.commit();
  EXPECT_THAT(keys_of(db.create_transaction().get_range("", "\xff")),
              ElementsAre("a1", "b1", "b2"));
}

TEST(TransactionBasics, ClearRangeKeyRangeOverloadAndEmptyRange) {
  Database db = five_rows();
  Transaction tr = db.create_transaction();
  tr.clear_range(KeyRange{"b", "c"});
  tr.clear_range("a1", "a1");  // empty: no effect, no error
  tr.commit();
  EXPECT_THAT(keys_of(db.create_transaction().get_range("", "\xff")),
              ElementsAre("a1", "a2", "a3"));
}

TEST(TransactionBasics, GetRangeReturnsHalfOpenRangeInKeyOrder) {
  Database db = five_rows();
  Transaction tr = db.create_transaction();
  std::vector<KeyValue> rows = tr.get_range("a2", "b2");
  EXPECT_THAT(rows,
              ElementsAre(KeyValue{"a2", "va2"}, KeyValue{"a3", "va3"}, KeyValue{"b1", "vb1"}));
}

TEST(TransactionBasics, GetRangeKeyRangeOverloadMatchesStringOverload) {
  Database db = five_rows();
  Transaction tr = db.create_transaction();
  for (RangeOptions o :
       {RangeOptions{}, RangeOptions{2, false}, RangeOptions{2, true}, RangeOptions{0, true}}) {
    EXPECT_EQ(tr.get_range(KeyRange{"a", "b2"}, o), tr.get_range("a", "b2", o));
    EXPECT_EQ(tr.snapshot().get_range(KeyRange{"a", "b2"}, o), tr.get_range("a", "b2", o));
  }
}

TEST(TransactionBasics, GetRangeLimitReturnsFirstRows) {
  Database db = five_rows();
  Transaction tr = db.create_transaction();
  EXPECT_THAT(keys_of(tr.get_range("a", "c", {.limit = 2})), ElementsAre("a1", "a2"));
  EXPECT_THAT(keys_of(tr.get_range("a", "c", {.limit = 5})),
              ElementsAre("a1", "a2", "a3", "b1", "b2"));
  EXPECT_THAT(keys_of(tr.get_range("a", "c", {.limit = 50})),
              ElementsAre("a1", "a2", "a3", "b1", "b2"));
}

TEST(TransactionBasics, GetRangeReverseReturnsRowsDescendingFromEnd) {
  Database db = five_rows();
  Transaction tr = db.create_transaction();
  EXPECT_THAT(keys_of(tr.get_range("a2", "b2", {.reverse = true})), ElementsAre("b1", "a3", "a2"));
  EXPECT_THAT(keys_of(tr.get_range("a", "c", {.limit = 2, .reverse = true})),
              ElementsAre("b2", "b1"));
}

TEST(TransactionBasics, GetRangeWithBeginAtOrAfterEndIsEmpty) {
  Database db = five_rows();
  Transaction tr = db.create_transaction();
  EXPECT_THAT(tr.get_range("a2", "a2"), IsEmpty());
  EXPECT_THAT(tr.get_range("b", "a"), IsEmpty());
  EXPECT_THAT(tr.get_range("b", "a", {.reverse = true}), IsEmpty());
}

TEST(TransactionBasics, FullKeySpaceRangeEndsAtFF) {
  Database db = five_rows();
  Transaction tr = db.create_transaction();
  EXPECT_EQ(tr.get_range("", "\xff").size(), 5u);
  EXPECT_EQ(tr.get_range("", "\xff", {.reverse = true}).front().key, "b2");
}

// ---- Read-your-writes ---------------------------------------------------------------

// Deleted keys an old reader still holds (so collection keeps them) are skipped in bulk;
// the walk over them must still stop at `end` and never return a key past it.
TEST(TransactionBasics, GetRangeOverManyDeletedKeysStopsAtEnd) {
  Database db = testing::open_database();
  for (int i = 0; i < 100; ++i) put(db, "a" + std::to_string(1000 + i), "v");
  put(db, "b", "after");
  Transaction holder = db.create_transaction();
  Version old_version = holder.read_version();  // keeps the deleted keys in the store
  db.run([](Transaction& tr) { tr.clear_range("a", "b"); });

  for (int end = 1000; end <= 1100; end += 7) {
    Transaction tr = db.create_transaction();
    EXPECT_THAT(tr.get_range("a", "a" + std::to_string(end)), ::testing::IsEmpty()) << end;
  }
  Transaction tr = db.create_transaction();
  EXPECT_THAT(keys_of(tr.get_range("a", "c")), ::testing::ElementsAre("b"));
  EXPECT_THAT(keys_of(tr.get_range("a", "b")), ::testing::IsEmpty());
  EXPECT_EQ(holder.get_range("a", "b").size(), 100u);
  EXPECT_EQ(holder.read_version(), old_version);
}

TEST(ReadYourWrites, GetSeesOwnSetBeforeCommit) {
  Database db = five_rows();
  Transaction tr = db.create_transaction();
  tr.set("a1", "new");
  tr.set("zz", "fresh");
  EXPECT_EQ(tr.get("a1"), "new");
  EXPECT_EQ(tr.get("zz"), "fresh");
}

TEST(ReadYourWrites, GetSeesOwnClearAndClearRange) {
  Database db = five_rows();
  Transaction tr = db.create_transaction();
  tr.clear("a1");
  tr.clear_range("b", "c");
  EXPECT_EQ(tr.get("a1"), std::nullopt);
  EXPECT_EQ(tr.get("b1"), std::nullopt);
  EXPECT_EQ(tr.get("a2"), "va2");
}

TEST(ReadYourWrites, ClearRangeHidesCommittedRowsFromGetRange) {
  Database db = five_rows();
  Transaction tr = db.create_transaction();
  tr.clear_range("a2", "b2");
  EXPECT_THAT(keys_of(tr.get_range("", "\xff")), ElementsAre("a1", "b2"));
  EXPECT_THAT(keys_of(tr.get_range("", "\xff", {.reverse = true})), ElementsAre("b2", "a1"));
}

TEST(ReadYourWrites, SetInsideClearedRangeShows) {
  Database db = five_rows();
  Transaction tr = db.create_transaction();
  tr.clear_range("a", "c");
  tr.set("a2", "again");
  tr.set("a25", "new");
  EXPECT_EQ(tr.get("a2"), "again");
  EXPECT_THAT(tr.get_range("", "\xff"),
              ElementsAre(KeyValue{"a2", "again"}, KeyValue{"a25", "new"}));
}

TEST(ReadYourWrites, ClearRangeAfterSetRemovesTheSet) {
  Database db = five_rows();
  Transaction tr = db.create_transaction();
  tr.set("a15", "x");
  tr.clear_range("a1", "a2");
  EXPECT_EQ(tr.get("a15"), std::nullopt);
  EXPECT_THAT(keys_of(tr.get_range("a", "b")), ElementsAre("a2", "a3"));
}

TEST(ReadYourWrites, ForwardRangeMergesOwnSetsWithStoreRows) {
  Database db = five_rows();
  Transaction tr = db.create_transaction();
  tr.set("a0", "x");
  tr.set("a2", "over");
  tr.set("a25", "y");
  tr.clear("b1");
  EXPECT_THAT(tr.get_range("a", "c"),
              ElementsAre(KeyValue{"a0", "x"}, KeyValue{"a1", "va1"}, KeyValue{"a2", "over"},
                          KeyValue{"a25", "y"}, KeyValue{"a3", "va3"}, KeyValue{"b2", "vb2"}));
  EXPECT_THAT(keys_of(tr.get_range("a", "c", {.limit = 3})), ElementsAre("a0", "a1", "a2"));
}

TEST(ReadYourWrites, ReverseRangeMergesOwnWritesWithStoreRows) {
  Database db = five_rows();
  Transaction tr = db.create_transaction();
  tr.set("b3", "x");
  tr.set("a25", "y");
  tr.clear("b2");
  tr.clear_range("a1", "a2");
  EXPECT_THAT(keys_of(tr.get_range("a", "c", {.reverse = true})),
              ElementsAre("b3", "b1", "a3", "a25", "a2"));
  EXPECT_THAT(keys_of(tr.get_range("a", "c", {.limit = 3, .reverse = true})),
              ElementsAre("b3", "b1", "a3"));
}

TEST(ReadYourWrites, SnapshotViewSeesOwnWrites) {
  Database db = five_rows();
  Transaction tr = db.create_transaction();
  tr.set("a0", "x");
  tr.clear("a1");
  tr.clear_range("b", "c");
  ReadView view = tr.snapshot();
  EXPECT_EQ(view.get("a0"), "x");
  EXPECT_EQ(view.get("a1"), std::nullopt);
  EXPECT_THAT(keys_of(view.get_range("", "\xff")), ElementsAre("a0", "a2", "a3"));
  EXPECT_THAT(keys_of(view.get_range("", "\xff", {.limit = 1, .reverse = true})),
              ElementsAre("a3"));
}

TEST(ReadYourWrites, OwnWritesAreInvisibleToOtherTransactionsUntilCommit) {
  Database db = five_rows();
  Transaction writer = db.create_transaction();
  writer.set("a1", "dirty");
  writer.set("c", "dirty");
  EXPECT_EQ(read_key(db, "a1"), "va1");
  EXPECT_EQ(read_key(db, "c"), std::nullopt);
  writer.commit();
  EXPECT_EQ(read_key(db, "c"), "dirty");
}

// ---- get into a caller's string ------------------------------------------------------

TEST(GetInto, FillsTheStringOrEmptiesItAndSaysWhichAcrossStoreAndOwnWrites) {
  Database db = five_rows();
  Transaction tr = db.create_transaction();
  tr.set("a0", "own");
  tr.clear("a2");
  tr.clear_range("b", "c");
  std::string out = "left over from before";
  EXPECT_TRUE(tr.get("a1", out));  // from the store
  EXPECT_EQ(out, "va1");
  EXPECT_TRUE(tr.get("a0", out));  // own set
  EXPECT_EQ(out, "own");
  EXPECT_FALSE(tr.get("a2", out));  // own clear
  EXPECT_EQ(out, "");
  out = "x";
  EXPECT_FALSE(tr.get("b1", out));  // own clear_range
  EXPECT_EQ(out, "");
  out = "x";
  EXPECT_FALSE(tr.get("nothing", out));  // absent in the store
  EXPECT_EQ(out, "");
  out = "x";
  EXPECT_FALSE(tr.get(std::string(20000, 'k'), out));  // longer than any key can be
  EXPECT_EQ(out, "");
  EXPECT_TRUE(tr.snapshot().get("a3", out));
  EXPECT_EQ(out, "va3");
  EXPECT_FALSE(tr.snapshot().get("b2", out));
  EXPECT_EQ(out, "");
  // The key may be a view of the string it is read into.
  std::string key_then_value = "a1";
  EXPECT_TRUE(tr.get(key_then_value, key_then_value));
  EXPECT_EQ(key_then_value, "va1");
}

TEST(GetInto, ReusesTheStringsRoomForValuesThatFit) {
  Database db = testing::open_database();
  put(db, "long", std::string(300, 'L'));
  put(db, "short", std::string(100, 's'));
  Transaction tr = db.create_transaction();
  std::string out;
  ASSERT_TRUE(tr.get("long", out));
  const char* room = out.data();
  ASSERT_TRUE(tr.get("short", out));
  EXPECT_EQ(out, std::string(100, 's'));
  EXPECT_EQ(out.data(), room);  // assigned in place, not a new allocation
}

TEST(GetInto, SeesAPendingAtomicAddOverTheStoredValue) {
  Database db = testing::open_database();
  const std::string one("\x01\0\0\0\0\0\0\0", 8);
  put(db, "n", one);
  Transaction tr = db.create_transaction();
  tr.atomic_op(MutationType::add, "n", one);
  tr.atomic_op(MutationType::add, "fresh", one);
  std::string out;
  EXPECT_TRUE(tr.get("n", out));
  EXPECT_EQ(out, std::string("\x02\0\0\0\0\0\0\0", 8));
  EXPECT_TRUE(tr.get("fresh", out));
  EXPECT_EQ(out, one);
}

TEST(GetInto, LeavesTheStringAsItWasWhenTheReadThrows) {
  Database db = five_rows();
  Transaction tr = db.create_transaction();
  std::string out = "kept";
  EXPECT_THAT([&] { (void)tr.get("\xff/system", out); },
              ThrowsCode(ErrorCode::key_outside_legal_range));
  EXPECT_EQ(out, "kept");
  std::string stamped_value = "value" + std::string(10, '\0');
  stamped_value += std::string("\x05\0\0\0", 4);  // offset 5: the 10 stamp bytes
  tr.atomic_op(MutationType::set_versionstamped_value, "a1", stamped_value);
  EXPECT_THAT([&] { (void)tr.get("a1", out); }, ThrowsCode(ErrorCode::accessed_unreadable));
  EXPECT_EQ(out, "kept");
}

TEST(GetInto, ConflictsLikeGetAndNotThroughTheSnapshotView) {
  Database db = five_rows();
  std::string out;
  auto write_a1 = [](Transaction& tr) { tr.set("a1", "new"); };
  EXPECT_TRUE(apitest::reader_conflicts_with(
      db, [&](Transaction& tr) { (void)tr.get("a1", out); }, write_a1));
  EXPECT_FALSE(apitest::reader_conflicts_with(
      db, [&](Transaction& tr) { (void)tr.get("a2", out); }, write_a1));
  EXPECT_FALSE(apitest::reader_conflicts_with(
      db, [&](Transaction& tr) { (void)tr.snapshot().get("a1", out); }, write_a1));
}

// ---- Read version -------------------------------------------------------------------

TEST(ReadVersion, IsTakenAtFirstReadNotAtCreation) {
  Database db = testing::open_database();
  Transaction tr = db.create_transaction();
  put(db, "k", "committed-after-creation");
  EXPECT_EQ(tr.get("k"), "committed-after-creation");
}

TEST(ReadVersion, CommitAfterFirstReadIsInvisible) {
  Database db = five_rows();
  Transaction tr = db.create_transaction();
  EXPECT_EQ(tr.get("a1"), "va1");
  Version rv = tr.read_version();
  Transaction other = db.create_transaction();
  other.set("a2", "changed");
  other.set("a15", "inserted");
  other.clear("b1");
  other.commit();
  EXPECT_GT(other.committed_version(), rv);
  EXPECT_EQ(tr.get("a2"), "va2");
  EXPECT_EQ(tr.get("a15"), std::nullopt);
  EXPECT_EQ(tr.get("b1"), "vb1");
  EXPECT_THAT(keys_of(tr.get_range("", "\xff")), ElementsAre("a1", "a2", "a3", "b1", "b2"));
  EXPECT_THAT(keys_of(tr.snapshot().get_range("", "\xff", {.reverse = true})),
              ElementsAre("b2", "b1", "a3", "a2", "a1"));
  EXPECT_EQ(tr.read_version(), rv);
}

TEST(ReadVersion, SeesExactlyCommitsAtOrBelowIt) {
  Database db = testing::open_database();
  Transaction w1 = db.create_transaction();
  w1.set("k", "1");
  w1.commit();
  Transaction tr = db.create_transaction();
  Version rv = tr.read_version();
  EXPECT_EQ(rv, w1.committed_version());
  EXPECT_EQ(rv, db.committed_version());
  put(db, "k", "2");
  EXPECT_EQ(tr.get("k"), "1");
}

TEST(ReadVersion, ExplicitReadVersionFixesVersionBeforeAnyRead) {
  Database db = testing::open_database();
  Transaction tr = db.create_transaction();
  Version rv = tr.read_version();
  put(db, "k", "later");
  EXPECT_EQ(tr.get("k"), std::nullopt);
  EXPECT_EQ(tr.read_version(), rv);
}

// ---- Commit results -----------------------------------------------------------------

TEST(CommittedVersion, ReadOnlyCommitReportsMinusOne) {
  Database db = five_rows();
  Transaction tr = db.create_transaction();
  (void)tr.get("a1");
  tr.commit();
  EXPECT_EQ(tr.committed_version(), -1);
  Transaction nothing = db.create_transaction();
  nothing.commit();
  EXPECT_EQ(nothing.committed_version(), -1);
}

TEST(CommittedVersion, WritingCommitsReportIncreasingVersions) {
  Database db = testing::open_database();
  Version last = db.committed_version();
  for (int i = 0; i < 5; ++i) {
    Transaction tr = db.create_transaction();
    tr.set("k", std::to_string(i));
    tr.commit();
    EXPECT_GT(tr.committed_version(), 0);
    EXPECT_GT(tr.committed_version(), last);
    EXPECT_EQ(tr.committed_version(), db.committed_version());
    last = tr.committed_version();
  }
}

TEST(CommittedVersion, BeforeCommitIsAnInvalidOperation) {
  Database db = testing::open_database();
  Transaction tr = db.create_transaction();
  tr.set("k", "v");
  EXPECT_THAT([&] { (void)tr.committed_version(); },
              ThrowsCode(ErrorCode::client_invalid_operation));
}

TEST(CommittedVersion, ClearOfAbsentKeyIsStillAWritingCommit) {
  Database db = testing::open_database();
  Transaction tr = db.create_transaction();
  tr.clear("absent");
  tr.commit();
  EXPECT_GT(tr.committed_version(), 0);
}

}  // namespace
}  // namespace strata
