// fdb_transaction_get_range: limits, byte targets, streaming modes and iteration sized as
// FoundationDB sizes its batches, reverse, snapshot, selector endpoints and the conflict
// ranges a limited read leaves.
#include <cstdio>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "fdb_c/fdb_c.h"
#include "fdb_c_test_util.hpp"

namespace fdbc_test {
namespace {

class Ranges : public FdbTest {
 protected:
  // `n` rows "r000".."r<n-1>", each exactly `row_bytes` bytes of key plus value.
  void fill(int n, int row_bytes) {
    keys_.clear();
    for (int i = 0; i < n; ++i) keys_.push_back(key(i));
    for (int start = 0; start < n; start += 50) {
      ASSERT_EQ(run([&](const Tr& tr) {
                  for (int i = start; i < n && i < start + 50; ++i) {
                    EXPECT_LT(len(keys_[i]), row_bytes);
                    set(tr, keys_[i], std::string(row_bytes - len(keys_[i]), 'v'));
                  }
                  return 0;
                }),
                0);
    }
  }
  std::string key(int i) const {
    char name[16];
    std::snprintf(name, sizeof name, "r%03d", i);
    return k(name);
  }
  // The keys of rows [from, to).
  std::vector<std::string> keys(int from, int to) const {
    return {keys_.begin() + from, keys_.begin() + to};
  }
  static std::vector<std::string> keys_of(const Range& r) {
    std::vector<std::string> out;
    for (const auto& row : r.rows) out.push_back(row.first);
    return out;
  }
  Range all(const RangeArgs& a) {
    Tr tr = make_tr();
    return get_range(tr, prefix(), prefix_end(), a);
  }

  std::vector<std::string> keys_;
};

TEST_F(Ranges, UnlimitedReadReturnsEverythingInOrder) {
  fill(30, 100);
  Range r = all({});
  ASSERT_EQ(r.error, 0);
  EXPECT_EQ(keys_of(r), keys(0, 30));
  EXPECT_FALSE(r.more);
  EXPECT_EQ(r.rows[0].second, std::string(100 - len(keys_[0]), 'v'));
}

TEST_F(Ranges, RowLimit) {
  fill(10, 100);
  Range r = all({.limit = 3});
  ASSERT_EQ(r.error, 0);
  EXPECT_EQ(keys_of(r), keys(0, 3));
  EXPECT_TRUE(r.more);
}

TEST_F(Ranges, LimitEqualToTheRowsLeftStillSaysMore) {
  fill(10, 100);
  Range r = all({.limit = 10});
  ASSERT_EQ(r.error, 0);
  EXPECT_EQ(r.rows.size(), 10u);
  EXPECT_TRUE(r.more);
}

TEST_F(Ranges, LimitAboveTheRowsLeftSaysNoMore) {
  fill(10, 100);
  Range r = all({.limit = 11});
  ASSERT_EQ(r.error, 0);
  EXPECT_EQ(r.rows.size(), 10u);
  EXPECT_FALSE(r.more);
}

TEST_F(Ranges, ReverseWithLimit) {
  fill(10, 100);
  Range r = all({.limit = 3, .reverse = true});
  ASSERT_EQ(r.error, 0);
  EXPECT_EQ(keys_of(r), (std::vector<std::string>{keys_[9], keys_[8], keys_[7]}));
  EXPECT_TRUE(r.more);
}

TEST_F(Ranges, ReverseUnlimited) {
  fill(10, 100);
  Range r = all({.reverse = true});
  ASSERT_EQ(r.error, 0);
  std::vector<std::string> expected(keys_.rbegin(), keys_.rend());
  EXPECT_EQ(keys_of(r), expected);
  EXPECT_FALSE(r.more);
}

TEST_F(Ranges, EmptyAndInvertedRangesAreEmptyWithoutError) {
  fill(5, 100);
  Tr tr = make_tr();
  Range same = get_range(tr, keys_[2], keys_[2]);
  EXPECT_EQ(same.error, 0);
  EXPECT_TRUE(same.rows.empty());
  EXPECT_FALSE(same.more);
  Range inverted = get_range(tr, keys_[3], keys_[1]);
  EXPECT_EQ(inverted.error, 0);
  EXPECT_TRUE(inverted.rows.empty());
  EXPECT_FALSE(inverted.more);
}

TEST_F(Ranges, EndAtFFIsAllowed) {
  fill(3, 100);
  Tr tr = make_tr();
  Range r = get_range(tr, prefix(), "\xff");
  ASSERT_EQ(r.error, 0);
  EXPECT_GE(r.rows.size(), 3u);
}

TEST_F(Ranges, EndpointsBeyondFFAreKeyOutsideLegalRange) {
  fill(3, 100);
  Tr tr = make_tr();
  EXPECT_EQ(get_range(tr, prefix(), "\xff\x01").error, 2004);
  EXPECT_EQ(get_range(tr, "\xff\x01", "\xff\x02").error, 2004);
}

// ---- Byte targets and streaming modes ---------------------------------------------------

// Rows are 100 bytes each, so a byte target T ends a batch after ceil(T / 100) rows.
TEST_F(Ranges, ModesSizeBatchesByBytes) {
  fill(100, 100);
  struct Case {
    FDBStreamingMode mode;
    std::size_t rows;
    bool more;
  };
  for (const Case& c : {Case{FDB_STREAMING_MODE_SMALL, 3, true},    // 256
                        Case{FDB_STREAMING_MODE_MEDIUM, 10, true},  // 1000: the 10th row reaches it
                        Case{FDB_STREAMING_MODE_LARGE, 41, true},   // 4096
                        Case{FDB_STREAMING_MODE_SERIAL, 100, false},
                        Case{FDB_STREAMING_MODE_WANT_ALL, 100, false}}) {
    Range r = all({.mode = c.mode});
    ASSERT_EQ(r.error, 0) << "mode " << c.mode;
    EXPECT_EQ(r.rows.size(), c.rows) << "mode " << c.mode;
    EXPECT_EQ(r.more, c.more) << "mode " << c.mode;
    if (!r.rows.empty()) {
      EXPECT_EQ(r.rows.front().first, keys_[0]);
    }
  }
}

TEST_F(Ranges, ReverseBatchesAreSizedTheSameWay) {
  fill(100, 100);
  Range r = all({.mode = FDB_STREAMING_MODE_SMALL, .reverse = true});
  ASSERT_EQ(r.error, 0);
  EXPECT_EQ(keys_of(r), (std::vector<std::string>{keys_[99], keys_[98], keys_[97]}));
  EXPECT_TRUE(r.more);
}

TEST_F(Ranges, TargetBytesAndTheModeTargetTheSmallerWins) {
  fill(100, 100);
  struct Case {
    int target;
    FDBStreamingMode mode;
    std::size_t rows;
  };
  for (const Case& c :
       {Case{250, FDB_STREAMING_MODE_WANT_ALL, 3}, Case{150, FDB_STREAMING_MODE_SMALL, 2},
        Case{1000, FDB_STREAMING_MODE_SMALL, 3}, Case{500, FDB_STREAMING_MODE_EXACT, 5},
        Case{300, FDB_STREAMING_MODE_ITERATOR, 3}, Case{100, FDB_STREAMING_MODE_SERIAL, 1}}) {
    // EXACT needs a row limit; a large one leaves the byte target in charge.
    int limit = c.mode == FDB_STREAMING_MODE_EXACT ? 90 : 0;
    Range r = all({.limit = limit, .target_bytes = c.target, .mode = c.mode});
    ASSERT_EQ(r.error, 0) << c.target << "/" << c.mode;
    EXPECT_EQ(r.rows.size(), c.rows) << c.target << "/" << c.mode;
    EXPECT_TRUE(r.more) << c.target << "/" << c.mode;
  }
}

TEST_F(Ranges, ATinyTargetStillReturnsOneRow) {
  fill(5, 100);
  Range r = all({.target_bytes = 1});
  ASSERT_EQ(r.error, 0);
  EXPECT_EQ(keys_of(r), keys(0, 1));
  EXPECT_TRUE(r.more);
}

TEST_F(Ranges, RowLimitBelowTheByteTargetWins) {
  fill(100, 100);
  Range r = all({.limit = 5, .mode = FDB_STREAMING_MODE_MEDIUM});
  ASSERT_EQ(r.error, 0);
  EXPECT_EQ(r.rows.size(), 5u);
  EXPECT_TRUE(r.more);
  Range bytes = all({.limit = 20, .mode = FDB_STREAMING_MODE_MEDIUM});
  ASSERT_EQ(bytes.error, 0);
  EXPECT_EQ(bytes.rows.size(), 10u);
  EXPECT_TRUE(bytes.more);
}

TEST_F(Ranges, ExactReturnsTheLimit) {
  fill(100, 100);
  Range r = all({.limit = 60, .mode = FDB_STREAMING_MODE_EXACT});
  ASSERT_EQ(r.error, 0);
  EXPECT_EQ(r.rows.size(), 60u);
  EXPECT_TRUE(r.more);
}

// Rows of 1000 bytes: ITERATOR's byte targets 4096, 6144, ... 120000 end batches after
// ceil(target / 1000) rows; iterations past 10 stay at 120000.
TEST_F(Ranges, IteratorGrowsItsBatchesByIteration) {
  fill(200, 1000);
  const std::size_t expected[] = {5, 7, 10, 14, 21, 32, 47, 70, 80, 120, 120, 120};
  for (int iteration = 1; iteration <= 12; ++iteration) {
    Range r = all({.mode = FDB_STREAMING_MODE_ITERATOR, .iteration = iteration});
    ASSERT_EQ(r.error, 0) << "iteration " << iteration;
    EXPECT_EQ(r.rows.size(), expected[iteration - 1]) << "iteration " << iteration;
    EXPECT_TRUE(r.more) << "iteration " << iteration;
  }
}

TEST_F(Ranges, IterationBelowOneIsClientInvalidOperation) {
  fill(3, 100);
  EXPECT_EQ(all({.mode = FDB_STREAMING_MODE_ITERATOR, .iteration = 0}).error, 2000);
  EXPECT_EQ(all({.mode = FDB_STREAMING_MODE_ITERATOR, .iteration = -1}).error, 2000);
}

// -1 is "unlimited", as 0 (FoundationDB's GetRangeLimits); below it the limits are invalid.
TEST_F(Ranges, LimitsBelowMinusOneAreRangeLimitsInvalid) {
  fill(3, 100);
  EXPECT_EQ(all({.limit = -2}).error, 2012);
  EXPECT_EQ(all({.target_bytes = -2}).error, 2012);
  EXPECT_EQ(all({.limit = -1}).error, 0);
  EXPECT_EQ(all({.limit = -1}).rows.size(), 3U);
  EXPECT_EQ(all({.target_bytes = -1}).rows.size(), 3U);
  EXPECT_EQ(all({.limit = -1, .mode = FDB_STREAMING_MODE_EXACT}).error, 2210);
}

TEST_F(Ranges, ExactWithoutALimitIsExactModeWithoutLimits) {
  fill(3, 100);
  EXPECT_EQ(all({.mode = FDB_STREAMING_MODE_EXACT}).error, 2210);
}

// How a binding iterates: ITERATOR mode, iteration counting up, each batch starting after
// the last key of the previous one, until `more` is false.
TEST_F(Ranges, IteratingBatchByBatchReadsEveryRowOnce) {
  fill(200, 1000);
  Tr tr = make_tr();
  std::vector<std::string> seen;
  Selector begin = first_greater_or_equal(prefix());
  Selector end = first_greater_or_equal(prefix_end());
  int batches = 0;
  for (int iteration = 1;; ++iteration) {
    Range r =
        get_range(tr, begin, end, {.mode = FDB_STREAMING_MODE_ITERATOR, .iteration = iteration});
    ASSERT_EQ(r.error, 0);
    ++batches;
    for (const auto& row : r.rows) seen.push_back(row.first);
    if (!r.more) break;
    ASSERT_FALSE(r.rows.empty());
    begin = first_greater_than(r.rows.back().first);
    ASSERT_LT(batches, 100);
  }
  EXPECT_EQ(seen, keys_);
  EXPECT_GT(batches, 3);
}

TEST_F(Ranges, IteratingBackwardsReadsEveryRowOnce) {
  fill(200, 1000);
  Tr tr = make_tr();
  std::vector<std::string> seen;
  Selector begin = first_greater_or_equal(prefix());
  Selector end = first_greater_or_equal(prefix_end());
  for (int iteration = 1;; ++iteration) {
    Range r =
        get_range(tr, begin, end,
                  {.mode = FDB_STREAMING_MODE_ITERATOR, .iteration = iteration, .reverse = true});
    ASSERT_EQ(r.error, 0);
    for (const auto& row : r.rows) seen.push_back(row.first);
    if (!r.more) break;
    ASSERT_FALSE(r.rows.empty());
    end = first_greater_or_equal(r.rows.back().first);
    ASSERT_LT(iteration, 100);
  }
  std::vector<std::string> expected(keys_.rbegin(), keys_.rend());
  EXPECT_EQ(seen, expected);
}

TEST_F(Ranges, LimitedIterationWithALimit) {
  fill(25, 100);
  Tr tr = make_tr();
  std::vector<std::string> seen;
  Selector begin = first_greater_or_equal(prefix());
  for (int i = 0; i < 10; ++i) {
    Range r = get_range(tr, begin, first_greater_or_equal(prefix_end()), {.limit = 10});
    ASSERT_EQ(r.error, 0);
    for (const auto& row : r.rows) seen.push_back(row.first);
    if (!r.more) break;
    begin = first_greater_than(r.rows.back().first);
  }
  EXPECT_EQ(seen, keys_);
}

// ---- Selector endpoints ----------------------------------------------------------------

TEST_F(Ranges, SelectorEndpoints) {
  fill(20, 100);
  Tr tr = make_tr();
  // (r005, r010]
  Range a = get_range(tr, first_greater_than(keys_[5]), first_greater_than(keys_[10]));
  ASSERT_EQ(a.error, 0);
  EXPECT_EQ(keys_of(a), keys(6, 11));
  // [r004, r010): last_less_than(r005) is r004.
  Range b = get_range(tr, last_less_than(keys_[5]), first_greater_or_equal(keys_[10]));
  ASSERT_EQ(b.error, 0);
  EXPECT_EQ(keys_of(b), keys(4, 10));
  // Offsets: first_greater_or_equal(r005) + 2 is r007; end first_greater_or_equal(r010) + 1
  // is r011 (exclusive).
  Range c =
      get_range(tr, first_greater_or_equal(keys_[5]) + 2, first_greater_or_equal(keys_[10]) + 1);
  ASSERT_EQ(c.error, 0);
  EXPECT_EQ(keys_of(c), keys(7, 11));
  // Keys between rows: "r005a" sorts after r005.
  Range d =
      get_range(tr, last_less_or_equal(keys_[5] + "a"), first_greater_or_equal(keys_[7] + "a"));
  ASSERT_EQ(d.error, 0);
  EXPECT_EQ(keys_of(d), keys(5, 8));
}

TEST_F(Ranges, SelectorsResolvingToAnInvertedRangeAreEmpty) {
  fill(10, 100);
  Tr tr = make_tr();
  Range r = get_range(tr, first_greater_or_equal(keys_[5]), last_less_than(keys_[5]));
  EXPECT_EQ(r.error, 0);
  EXPECT_TRUE(r.rows.empty());
}

TEST_F(Ranges, SelectorRangeSeesOwnWrites) {
  fill(5, 100);
  Tr tr = make_tr();
  set(tr, keys_[2] + "x", "mine");
  clear(tr, keys_[3]);
  Range r = get_range(tr, first_greater_than(keys_[1]), first_greater_than(keys_[4]));
  ASSERT_EQ(r.error, 0);
  EXPECT_EQ(keys_of(r), (std::vector<std::string>{keys_[2], keys_[2] + "x", keys_[4]}));
}

// ---- Conflicts from range reads ------------------------------------------------------------

TEST_F(Ranges, UnlimitedReadConflictsOnTheWholeRange) {
  fill(10, 100);
  Tr tr = make_tr();
  ASSERT_EQ(get_range(tr, prefix(), prefix_end()).error, 0);
  ASSERT_EQ(write(keys_[8] + "x", "new"), 0);
  set(tr, k("z"), "x");
  EXPECT_EQ(commit(tr), 1020);
}

TEST_F(Ranges, ForwardLimitConflictsOnlyUpToTheLastRow) {
  fill(10, 100);
  Tr tr = make_tr();
  Range r = get_range(tr, prefix(), prefix_end(), {.limit = 1});
  ASSERT_EQ(keys_of(r), keys(0, 1));
  ASSERT_EQ(write(keys_[5], "changed"), 0);  // after the row read
  set(tr, k("z"), "x");
  EXPECT_EQ(commit(tr), 0);
}

TEST_F(Ranges, ForwardLimitConflictsOnTheRowsItReturned) {
  fill(10, 100);
  Tr tr = make_tr();
  Range r = get_range(tr, prefix(), prefix_end(), {.limit = 2});
  ASSERT_EQ(keys_of(r), keys(0, 2));
  ASSERT_EQ(write(keys_[1], "changed"), 0);
  set(tr, k("z"), "x");
  EXPECT_EQ(commit(tr), 1020);
}

TEST_F(Ranges, ReverseLimitConflictsOnlyFromTheLastRowReturned) {
  fill(10, 100);
  Tr tr = make_tr();
  Range r = get_range(tr, prefix(), prefix_end(), {.limit = 2, .reverse = true});
  ASSERT_EQ(keys_of(r), (std::vector<std::string>{keys_[9], keys_[8]}));
  ASSERT_EQ(write(keys_[3], "changed"), 0);  // before the rows read
  set(tr, k("a"), "x");
  EXPECT_EQ(commit(tr), 0);
}

TEST_F(Ranges, ByteTargetConflictsOnlyUpToTheLastRow) {
  fill(10, 100);
  Tr tr = make_tr();
  Range r = get_range(tr, prefix(), prefix_end(), {.mode = FDB_STREAMING_MODE_SMALL});
  ASSERT_EQ(keys_of(r), keys(0, 3));
  ASSERT_EQ(write(keys_[7], "changed"), 0);
  set(tr, k("z"), "x");
  EXPECT_EQ(commit(tr), 0);
}

TEST_F(Ranges, SnapshotRangeReadAddsNoConflict) {
  fill(10, 100);
  Tr tr = make_tr();
  ASSERT_EQ(get_range(tr, prefix(), prefix_end(), {.snapshot = true}).error, 0);
  ASSERT_EQ(write(keys_[4], "changed"), 0);
  set(tr, k("z"), "x");
  EXPECT_EQ(commit(tr), 0);
}

TEST_F(Ranges, ResultOutlivesLaterWrites) {
  fill(5, 100);
  Tr tr = make_tr();
  Future f(start_range(tr.get(), first_greater_or_equal(prefix()),
                       first_greater_or_equal(prefix_end()), {}));
  ASSERT_EQ(wait(f), 0);
  clear_range(tr, prefix(), prefix_end());
  ASSERT_EQ(commit(tr), 0);
  Range r = range_of(f.get());
  ASSERT_EQ(r.error, 0);
  EXPECT_EQ(keys_of(r), keys_);
}

}  // namespace
}  // namespace fdbc_test
