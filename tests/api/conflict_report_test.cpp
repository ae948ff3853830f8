// Conflict reporting (FoundationDB's REPORT_CONFLICTING_KEYS) and the conflict sets a
// transaction exposes (its \xff\xff/transaction/read_conflict_range/ and
// write_conflict_range/ modules): set_report_conflicting_keys, conflicting_ranges,
// read_conflict_ranges, write_conflict_ranges.
#include <algorithm>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "strata/database.hpp"
#include "strata/error.hpp"
#include "strata/transaction.hpp"

#include "api/api_test_util.hpp"
#include "support/test_database.hpp"

namespace strata {
namespace {

using apitest::put_all;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

std::string with_nul(const std::string& key) { return key + std::string(1, '\0'); }

KeyRange range(std::string begin, std::string end) { return {std::move(begin), std::move(end)}; }
KeyRange point(const std::string& key) { return {key, with_nul(key)}; }

class ConflictReport : public ::testing::Test {
 protected:
  void SetUp() override {
    put_all(db_, {{"a1", "1"}, {"a2", "2"}, {"b1", "3"}, {"x", "4"}, {"y", "5"}});
  }

  // tr reads [a, b) and the keys x and y; then another transaction writes `written`.
  void read_then_overwrite(Transaction& tr, const std::vector<std::string>& written) {
    tr.get_range("a", "b");
    (void)tr.get("x");
    (void)tr.get("y");
    Transaction other = db_.create_transaction();
    for (const std::string& key : written) other.set(key, "w");
    other.commit();
    tr.set("~dummy", "d");
  }

  // The error of tr's commit; fails the test if it commits.
  static Error commit_error(Transaction& tr) {
    try {
      tr.commit();
    } catch (const Error& e) {
      return e;
    }
    ADD_FAILURE() << "the commit did not conflict";
    return Error(ErrorCode::success, "");
  }

  Database db_ = testing::open_database();
};

TEST_F(ConflictReport, NothingIsReportedUnlessAsked) {
  Transaction tr = db_.create_transaction();
  read_then_overwrite(tr, {"a2", "y"});
  EXPECT_EQ(commit_error(tr).error_code(), ErrorCode::not_committed);
  EXPECT_THAT(tr.conflicting_ranges(), IsEmpty());
}

TEST_F(ConflictReport, EveryConflictingReadIsReportedWholeAndNoOther) {
  Transaction tr = db_.create_transaction();
  tr.set_report_conflicting_keys(true);
  read_then_overwrite(tr, {"a2", "y"});
  const Error e = commit_error(tr);
  EXPECT_EQ(e.error_code(), ErrorCode::not_committed);
  // The range read is reported as read, [a, b), not narrowed to the write at a2; x, read
  // but not written, is not reported.
  EXPECT_THAT(tr.conflicting_ranges(), ElementsAre(range("a", "b"), point("y")));
  EXPECT_THAT(e.what(), HasSubstr("['a', 'b'), ['y', 'y\\x00')"));
}

TEST_F(ConflictReport, ARangeWriteIntoAPointReadIsReported) {
  Transaction tr = db_.create_transaction();
  tr.set_report_conflicting_keys(true);
  (void)tr.get("x");
  (void)tr.get("y");
  Transaction other = db_.create_transaction();
  other.clear_range("w", "xa");
  other.commit();
  tr.set("~dummy", "d");
  EXPECT_EQ(commit_error(tr).error_code(), ErrorCode::not_committed);
  EXPECT_THAT(tr.conflicting_ranges(), ElementsAre(point("x")));
}

TEST_F(ConflictReport, AdjacentConflictingReadsAreMerged) {
  Transaction tr = db_.create_transaction();
  tr.set_report_conflicting_keys(true);
  tr.add_read_conflict_range("a", "a5");
  tr.add_read_conflict_range("a5", "b");  // touching: one range [a, b) to the resolver
  tr.add_read_conflict_key("b1");
  (void)tr.get(with_nul("b1"));  // [b1\0, b1\0\0): touches b1's
  Transaction other = db_.create_transaction();
  other.set("a3", "w");
  other.set("b1", "w");
  other.set(with_nul("b1"), "w");
  other.commit();
  tr.set("~dummy", "d");
  EXPECT_EQ(commit_error(tr).error_code(), ErrorCode::not_committed);
  EXPECT_THAT(tr.conflicting_ranges(),
              ElementsAre(range("a", "b"), range("b1", with_nul(with_nul("b1")))));
}

// The report lasts until on_error, and so does the option: REPORT_CONFLICTING_KEYS is not
// one of FoundationDB's persistent options (fdbclient/vexillographer/fdb.options), so a
// retry turns it off (fdbclient/ReadYourWrites.actor.cpp, resetRyow) and a retry loop sets
// it on each attempt.
TEST_F(ConflictReport, TheReportAndTheOptionLastUntilOnError) {
  Transaction tr = db_.create_transaction();
  tr.set_report_conflicting_keys(true);
  read_then_overwrite(tr, {"x"});
  const Error first = commit_error(tr);
  EXPECT_THAT(tr.conflicting_ranges(), ElementsAre(point("x")));
  EXPECT_THAT(tr.conflicting_ranges(), ElementsAre(point("x")));  // reading it changes nothing
  tr.on_error(first);
  EXPECT_THAT(tr.conflicting_ranges(), IsEmpty());
  read_then_overwrite(tr, {"a1"});
  const Error second = commit_error(tr);
  EXPECT_EQ(second.error_code(), ErrorCode::not_committed);
  EXPECT_THAT(tr.conflicting_ranges(), IsEmpty());  // not reporting after on_error
  tr.on_error(second);
  tr.set_report_conflicting_keys(true);
  read_then_overwrite(tr, {"a1"});
  EXPECT_EQ(commit_error(tr).error_code(), ErrorCode::not_committed);
  EXPECT_THAT(tr.conflicting_ranges(), ElementsAre(range("a", "b")));
}

TEST_F(ConflictReport, ResetTurnsReportingOff) {
  Transaction tr = db_.create_transaction();
  tr.set_report_conflicting_keys(true);
  tr.reset();
  read_then_overwrite(tr, {"x"});
  EXPECT_EQ(commit_error(tr).error_code(), ErrorCode::not_committed);
  EXPECT_THAT(tr.conflicting_ranges(), IsEmpty());
}

TEST_F(ConflictReport, ACommitThatSucceedsReportsNothing) {
  Transaction tr = db_.create_transaction();
  tr.set_report_conflicting_keys(true);
  read_then_overwrite(tr, {"z"});
  tr.commit();
  EXPECT_THAT(tr.conflicting_ranges(), IsEmpty());
}

TEST_F(ConflictReport, ManyReadsOneConflictIsNamedAmongTheRest) {
  Transaction tr = db_.create_transaction();
  tr.set_report_conflicting_keys(true);
  for (int i = 0; i < 100; ++i) (void)tr.get("k" + std::to_string(i));
  Transaction other = db_.create_transaction();
  for (int i = 0; i < 100; i += 10) other.set("k" + std::to_string(i), "w");
  other.commit();
  tr.set("~dummy", "d");
  const Error e = commit_error(tr);
  std::vector<KeyRange> expected;
  for (int i = 0; i < 100; i += 10) expected.push_back(point("k" + std::to_string(i)));
  std::sort(expected.begin(), expected.end(),
            [](const KeyRange& a, const KeyRange& b) { return a.begin < b.begin; });
  EXPECT_EQ(tr.conflicting_ranges(), expected);
  EXPECT_THAT(e.what(), HasSubstr(" and 7 more"));
}

// ---- The conflict sets ------------------------------------------------------------------

TEST(ConflictSets, ReadConflictRangesAreMergedAndSortedAsFoundationDBsExample) {
  Database db = testing::open_database();
  Transaction tr = db.create_transaction();
  tr.add_read_conflict_key("foo");
  tr.add_read_conflict_range("bar/", "bar0");
  EXPECT_THAT(tr.read_conflict_ranges(), ElementsAre(range("bar/", "bar0"), point("foo")));
  EXPECT_THAT(tr.write_conflict_ranges(), IsEmpty());
}

TEST(ConflictSets, ReadsAddWhatTheyConflictOnAndSnapshotReadsNothing) {
  Database db = testing::open_database();
  put_all(db, {{"a", "1"}, {"b", "2"}, {"c", "3"}});
  Transaction tr = db.create_transaction();
  (void)tr.snapshot().get("q");
  tr.snapshot().get_range("", "\xff");
  EXPECT_THAT(tr.read_conflict_ranges(), IsEmpty());
  tr.get_range("a", "z", {.limit = 2});  // stops at b: conflicts on [a, b\0)
  (void)tr.get("m");
  EXPECT_THAT(tr.read_conflict_ranges(), ElementsAre(range("a", with_nul("b")), point("m")));
}

// A serializable range read conflicts on the span it depends on: all of [begin, end), or
// up to (from) its last row when a limit stopped it. A transaction with no writes to
// subtract adds that span whole; one with a write elsewhere goes through the subtraction.
// Both must give the model's rows and the same ranges, forward and reverse, visited or
// returned, whatever the limit (deleted keys in the store included).
TEST(ConflictSets, ALimitedReadConflictsAlikeWithAndWithoutWritesToSubtract) {
  Database db = testing::open_database();
  std::map<std::string, std::string> model;
  {
    Transaction tr = db.create_transaction();
    for (int i = 0; i < 20; i += 2) {
      const std::string key = "k" + std::to_string(10 + i);
      tr.set(key, "v" + key);
      model[key] = "v" + key;
    }
    tr.commit();
    Transaction del = db.create_transaction();  // leaves tombstones between the rows
    for (const char* key : {"k12", "k20", "k22"}) {
      del.clear(key);
      model.erase(key);
    }
    del.commit();
  }
  const std::vector<std::string> bounds = {"a", "k10", "k11", "k12", "k15", "k20", "k26", "k3"};
  for (const std::string& begin : bounds) {
    for (const std::string& end : bounds) {
      if (begin >= end) continue;
      for (int limit = 0; limit <= 3; ++limit) {
        for (bool reverse : {false, true}) {
          for (bool visit : {false, true}) {
            SCOPED_TRACE(begin + " " + end + " limit " + std::to_string(limit) +
                         (reverse ? " reverse" : "") + (visit ? " visited" : ""));
            std::vector<std::string> expect_rows;
            for (auto it = model.lower_bound(begin); it != model.lower_bound(end); ++it) {
              expect_rows.push_back(it->first);
            }
            if (reverse) std::reverse(expect_rows.begin(), expect_rows.end());
            const bool stopped = limit > 0 && expect_rows.size() >= static_cast<std::size_t>(limit);
            if (stopped) expect_rows.resize(static_cast<std::size_t>(limit));
            KeyRange expect_span = range(begin, end);
            if (stopped && reverse) expect_span.begin = expect_rows.back();
            if (stopped && !reverse) expect_span.end = with_nul(expect_rows.back());

            std::vector<std::vector<KeyRange>> conflicts;
            for (bool write_elsewhere : {false, true}) {
              Transaction tr = db.create_transaction();
              if (write_elsewhere) tr.set("z", "w");  // outside every range read
              std::vector<std::string> rows;
              const RangeOptions options{.limit = limit, .reverse = reverse};
              if (visit) {
                tr.visit_range(begin, end, options, [&](std::string_view key, std::string_view) {
                  rows.emplace_back(key);
                });
              } else {
                for (const KeyValue& row : tr.get_range(begin, end, options)) {
                  rows.push_back(row.key);
                }
              }
              EXPECT_EQ(rows, expect_rows) << (write_elsewhere ? "with a write" : "no write");
              conflicts.push_back(tr.read_conflict_ranges());
            }
            EXPECT_THAT(conflicts[0], ElementsAre(expect_span));
            EXPECT_EQ(conflicts[0], conflicts[1]);
          }
        }
      }
    }
  }
}

// With read-your-writes, a read conflict leaves out the keys the transaction wrote
// independently of their stored value: sets, clears and versionstamped values, alone or in
// a cleared range; an atomic operation on the stored value still reads it. As FoundationDB:
// ReadYourWritesTransaction::updateConflictMap (fdbclient/ReadYourWrites.actor.cpp) adds
// only unmodified ranges and dependent operations, and OperationStack::isDependent
// (fdbclient/WriteMap.cpp) counts neither a set, a clear nor a versionstamped value.
TEST(ConflictSets, AReadConflictLeavesOutIndependentWritesAndKeepsAtomicOnes) {
  Database db = testing::open_database();
  const std::string stamp_operand = std::string(10, '\0') + std::string("\x00\x00\x00\x00", 4);
  const auto write_all = [&](Transaction& tr) {
    tr.set("s", "v");
    tr.clear("c");
    tr.clear_range("r1", "r5");
    tr.atomic_op(MutationType::set_versionstamped_value, "v", stamp_operand);
    tr.atomic_op(MutationType::set_versionstamped_value, "r2", stamp_operand);  // in the clear
    tr.atomic_op(MutationType::add, "n", std::string("\x01\x00\x00\x00", 4));
  };
  Transaction keys = db.create_transaction();
  write_all(keys);
  for (const char* key : {"s", "c", "r2", "r3", "v", "n", "o"}) keys.add_read_conflict_key(key);
  EXPECT_THAT(keys.read_conflict_ranges(), ElementsAre(point("n"), point("o")));

  Transaction spans = db.create_transaction();
  write_all(spans);
  for (const char* key : {"s", "c", "r2", "r3", "v", "n", "o"}) {
    spans.add_read_conflict_range(key, with_nul(key));
  }
  EXPECT_THAT(spans.read_conflict_ranges(), ElementsAre(point("n"), point("o")));

  Transaction whole = db.create_transaction();
  write_all(whole);
  whole.add_read_conflict_range("a", "z");
  EXPECT_THAT(whole.read_conflict_ranges(),
              ElementsAre(range("a", "c"), range(with_nul("c"), "r1"), range("r5", "s"),
                          range(with_nul("s"), "v"), range(with_nul("v"), "z")));
}

TEST(ConflictSets, WriteConflictRangesCoverEveryKindOfWrite) {
  Database db = testing::open_database();
  Transaction tr = db.create_transaction();
  tr.set("s", "v");
  tr.clear("c");
  tr.clear_range("r1", "r5");
  tr.atomic_op(MutationType::add, "n", std::string("\x01\x00\x00\x00", 4));
  tr.add_write_conflict_key("w");
  tr.add_write_conflict_range("r4", "r9");  // overlaps the clear
  EXPECT_THAT(tr.write_conflict_ranges(),
              ElementsAre(point("c"), point("n"), range("r1", "r9"), point("s"), point("w")));
  tr.commit();
  // Still readable after the commit, unchanged.
  EXPECT_THAT(tr.write_conflict_ranges(),
              ElementsAre(point("c"), point("n"), range("r1", "r9"), point("s"), point("w")));
  tr.reset();
  EXPECT_THAT(tr.write_conflict_ranges(), IsEmpty());
}

TEST(ConflictSets, AVersionstampedKeyCoversEveryStampUntilCommitThenItsOwnKey) {
  Database db = testing::open_database();
  Transaction tr = db.create_transaction();
  const std::string offset("\x01\x00\x00\x00", 4);  // the stamp at byte 1
  tr.atomic_op(MutationType::set_versionstamped_key, "p" + std::string(10, '\0') + "s" + offset,
               "v");
  const std::vector<KeyRange> before = tr.write_conflict_ranges();
  ASSERT_EQ(before.size(), 1u);
  EXPECT_EQ(before[0].end, with_nul("p" + std::string(10, '\xff') + "s"));
  EXPECT_LT(before[0].begin, before[0].end);
  tr.commit();
  const std::string key = "p" + tr.versionstamp() + "s";
  EXPECT_THAT(tr.write_conflict_ranges(), ElementsAre(point(key)));
  EXPECT_GE(key, before[0].begin);
  EXPECT_LT(key, before[0].end);
}

}  // namespace
}  // namespace strata
