// RangeResult::more, FoundationDB's "more" flag of a limited range read. FoundationDB's C
// API documents it for fdb_future_get_keyvalue_array: "out_more: Set to true if (but not
// necessarily only if) values remain in the key range requested (possibly beyond the limits
// requested)" (https://apple.github.io/foundationdb/api-c.html#c.fdb_future_get_keyvalue_array;
// the same words on RangeResultRef::more in apple/foundationdb fdbclient/include/fdbclient/
// FDBTypes.h). So false promises the range is exhausted, and a reader pages on while true.
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "api/api_test_util.hpp"

namespace strata::apitest {
namespace {

// Every row of [begin, end) read in pages of `page` rows, each page starting after the
// last one's final key, until a page says no more; `pages` counts the reads.
template <class Reader>
std::vector<KeyValue> read_in_pages(Reader& reader, int page, bool reverse, int& pages) {
  std::vector<KeyValue> all;
  std::string begin = "", end = "\xff";
  pages = 0;
  for (;;) {
    RangeResult rows = reader.get_range(begin, end, {.limit = page, .reverse = reverse});
    ++pages;
    all.insert(all.end(), rows.begin(), rows.end());
    if (!rows.more) return all;
    EXPECT_FALSE(rows.empty()) << "more without a row to continue from";
    if (rows.empty()) return all;
    if (reverse) {
      end = rows.back().key;
    } else {
      begin = rows.back().key + '\0';
    }
  }
}

TEST(RangeMore, FalseWhenTheReadReachesTheEndOfTheRange) {
  Database db = five_rows();
  Transaction tr = db.create_transaction();
  for (bool reverse : {false, true}) {
    RangeResult all = tr.get_range("", "\xff", {.reverse = reverse});
    EXPECT_EQ(all.size(), 5u);
    EXPECT_FALSE(all.more);
    RangeResult under_limit = tr.get_range("a", "b", {.limit = 4, .reverse = reverse});
    EXPECT_EQ(under_limit.size(), 3u);
    EXPECT_FALSE(under_limit.more);
    EXPECT_FALSE(tr.get_range("c", "d", {.limit = 1, .reverse = reverse}).more);  // no rows
    EXPECT_FALSE(tr.get_range("b", "a", {.limit = 1, .reverse = reverse}).more);  // begin > end
    EXPECT_FALSE(tr.get_range("a", "z", {.reverse = reverse, .target_bytes = 1000}).more);
  }
}

TEST(RangeMore, TrueWhenTheRowLimitOrTheByteTargetEndsTheRead) {
  Database db = five_rows();
  Transaction tr = db.create_transaction();
  RangeResult first_two = tr.get_range("", "\xff", {.limit = 2});
  EXPECT_EQ(first_two, (std::vector<KeyValue>{{"a1", "va1"}, {"a2", "va2"}}));
  EXPECT_TRUE(first_two.more);
  RangeResult last_two = tr.get_range("", "\xff", {.limit = 2, .reverse = true});
  EXPECT_EQ(last_two, (std::vector<KeyValue>{{"b2", "vb2"}, {"b1", "vb1"}}));
  EXPECT_TRUE(last_two.more);
  // Each row is 5 bytes of key and value: 6 bytes end the read after the second.
  RangeResult by_bytes = tr.get_range("", "\xff", {.target_bytes = 6});
  EXPECT_EQ(by_bytes.size(), 2u);
  EXPECT_TRUE(by_bytes.more);
}

// "Not necessarily only if": a read that a limit ends on the range's last row says more,
// and the next page, empty, says no more.
TEST(RangeMore, ALimitReachedOnTheLastRowStillSaysMore) {
  Database db = five_rows();
  Transaction tr = db.create_transaction();
  RangeResult rows = tr.get_range("a", "b", {.limit = 3});
  EXPECT_EQ(rows.size(), 3u);
  EXPECT_TRUE(rows.more);
  RangeResult next = tr.get_range(rows.back().key + '\0', "b", {.limit = 3});
  EXPECT_TRUE(next.empty());
  EXPECT_FALSE(next.more);
}

// Paging by `more` reads every row once, in order, through the transaction's own writes
// (a set, a cleared row, a cleared range) and through snapshot reads.
TEST(RangeMore, PagingByMoreReadsEveryRowOnce) {
  Database db = five_rows();
  Transaction tr = db.create_transaction();
  tr.set("a25", "mine");
  tr.clear("a3");
  tr.clear_range("b0", "b2");
  const std::vector<KeyValue> expected = {
      {"a1", "va1"}, {"a2", "va2"}, {"a25", "mine"}, {"b2", "vb2"}};
  const std::vector<KeyValue> expected_reverse(expected.rbegin(), expected.rend());
  for (int page : {1, 2, 3, 4, 5}) {
    int pages = 0;
    EXPECT_EQ(read_in_pages(tr, page, false, pages), expected) << "page " << page;
    EXPECT_EQ(pages, 4 / page + 1) << "page " << page;  // a full last page says more
    EXPECT_EQ(read_in_pages(tr, page, true, pages), expected_reverse) << "page " << page;
    ReadView snapshot = tr.snapshot();
    EXPECT_EQ(read_in_pages(snapshot, page, false, pages), expected) << "page " << page;
  }
}

// Code written when get_range returned a std::vector still compiles and works.
TEST(RangeMore, TheResultIsStillAVector) {
  Database db = five_rows();
  Transaction tr = db.create_transaction();
  std::vector<KeyValue> rows = tr.get_range("a", "b", {.limit = 2});
  EXPECT_EQ(rows.size(), 2u);
  const auto read = [&]() -> std::vector<KeyValue> { return tr.get_range("b", "c"); };
  EXPECT_EQ(read().size(), 2u);
}

}  // namespace
}  // namespace strata::apitest
