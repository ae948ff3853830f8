// Size and location calls: approximate size, estimated range size, range split points,
// addresses for a key.
#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "fdb_c/fdb_c.h"
#include "fdb_c_test_util.hpp"

namespace fdbc_test {
namespace {

using Metadata = FdbTest;

int64_t int64_of(FDBFuture* f, fdb_error_t* error) {
  int64_t v = -1;
  *error = wait(f);
  if (*error == 0) *error = fdb_future_get_int64(f, &v);
  return v;
}

int64_t approximate_size(const Tr& tr) {
  Future f(fdb_transaction_get_approximate_size(tr.get()));
  fdb_error_t e = -1;
  int64_t v = int64_of(f.get(), &e);
  EXPECT_EQ(e, 0);
  return v;
}

TEST_F(Metadata, ApproximateSizeGrowsWithWrites) {
  Tr tr = make_tr();
  int64_t empty = approximate_size(tr);
  EXPECT_GE(empty, 0);
  set(tr, k("a"), std::string(1000, 'v'));
  int64_t one = approximate_size(tr);
  EXPECT_GE(one - empty, 1000 + len(k("a")));
  set(tr, k("b"), std::string(5000, 'v'));
  int64_t two = approximate_size(tr);
  EXPECT_GE(two - one, 5000 + len(k("b")));
  clear_range(tr, k("c"), k("d"));
  EXPECT_GT(approximate_size(tr), two);
}

TEST_F(Metadata, ApproximateSizeCountsReadKeysButNotReadValues) {
  ASSERT_EQ(write(k("a"), std::string(50000, 'v')), 0);
  Tr tr = make_tr();
  int64_t before = approximate_size(tr);
  ASSERT_EQ(get(tr, k("a")).error, 0);
  int64_t after = approximate_size(tr);
  EXPECT_GE(after, before);
  EXPECT_LT(after - before, 50000);
}

TEST_F(Metadata, ApproximateSizeStartsOverAfterReset) {
  Tr tr = make_tr();
  int64_t empty = approximate_size(tr);
  set(tr, k("a"), std::string(1000, 'v'));
  fdb_transaction_reset(tr.get());
  EXPECT_EQ(approximate_size(tr), empty);
}

int64_t estimated(const Tr& tr, const std::string& b, const std::string& e, fdb_error_t* error) {
  Future f(fdb_transaction_get_estimated_range_size_bytes(tr.get(), u8(b), len(b), u8(e), len(e)));
  return int64_of(f.get(), error);
}

TEST_F(Metadata, EstimatedRangeSizeIsTheSumOfKeysAndValues) {
  int64_t total = 0;
  for (int i = 0; i < 10; ++i) {
    std::string key = k("r" + std::to_string(i));
    std::string value(100 * (i + 1), 'v');
    ASSERT_EQ(write(key, value), 0);
    total += len(key) + len(value);
  }
  ASSERT_EQ(write(k("s"), "outside"), 0);
  Tr tr = make_tr();
  fdb_error_t e = -1;
  EXPECT_EQ(estimated(tr, k("r"), k("s"), &e), total);
  EXPECT_EQ(e, 0);
  EXPECT_EQ(estimated(tr, k("x"), k("y"), &e), 0);
  EXPECT_EQ(e, 0);
}

TEST_F(Metadata, EstimatedRangeSizeAddsNoConflict) {
  ASSERT_EQ(write(k("r"), "v"), 0);
  Tr tr = make_tr();
  fdb_error_t e = -1;
  estimated(tr, k("r"), k("s"), &e);
  ASSERT_EQ(e, 0);
  ASSERT_EQ(write(k("r"), "changed"), 0);
  set(tr, k("z"), "x");
  EXPECT_EQ(commit(tr), 0);
}

std::vector<std::string> split_points(const Tr& tr, const std::string& b, const std::string& e,
                                      int64_t chunk, fdb_error_t* error) {
  Future f(fdb_transaction_get_range_split_points(tr.get(), u8(b), len(b), u8(e), len(e), chunk));
  std::vector<std::string> out;
  *error = wait(f);
  if (*error != 0) return out;
  const FDBKey* keys = nullptr;
  int n = 0;
  *error = fdb_future_get_key_array(f.get(), &keys, &n);
  for (int i = 0; *error == 0 && i < n; ++i) out.push_back(str(keys[i].key, keys[i].key_length));
  return out;
}

TEST_F(Metadata, RangeSplitPointsStartAndEndWithTheRange) {
  int64_t total = 0;
  std::vector<std::string> keys;
  for (int i = 0; i < 20; ++i) {
    char name[16];
    std::snprintf(name, sizeof name, "r%02d", i);
    keys.push_back(k(name));
    std::string value(100 - len(keys.back()), 'v');  // 100 bytes a row
    ASSERT_EQ(write(keys.back(), value), 0);
    total += 100;
  }
  Tr tr = make_tr();
  fdb_error_t e = -1;
  std::vector<std::string> points = split_points(tr, k("r"), k("s"), 500, &e);
  ASSERT_EQ(e, 0);
  ASSERT_GE(points.size(), 2u);
  EXPECT_EQ(points.front(), k("r"));
  EXPECT_EQ(points.back(), k("s"));
  for (std::size_t i = 1; i < points.size(); ++i) EXPECT_LT(points[i - 1], points[i]);
  // Interior points are keys of the range: about one per 500 bytes.
  for (std::size_t i = 1; i + 1 < points.size(); ++i)
    EXPECT_NE(std::find(keys.begin(), keys.end(), points[i]), keys.end()) << points[i];
  int interior = static_cast<int>(points.size()) - 2;
  EXPECT_GE(interior, static_cast<int>(total / 500) - 1);
  EXPECT_LE(interior, static_cast<int>(total / 500) + 1);
}

TEST_F(Metadata, RangeSplitPointsWithALargeChunkAreJustTheEnds) {
  for (int i = 0; i < 5; ++i) ASSERT_EQ(write(k("r" + std::to_string(i)), "value"), 0);
  Tr tr = make_tr();
  fdb_error_t e = -1;
  std::vector<std::string> points = split_points(tr, k("r"), k("s"), 1 << 30, &e);
  ASSERT_EQ(e, 0);
  EXPECT_EQ(points, (std::vector<std::string>{k("r"), k("s")}));
}

// FoundationDB builds each of these calls' range first, inside RETURN_FUTURE_ON_ERROR
// (bindings/c/fdb_c.cpp in apple/foundationdb), and a KeyRangeRef whose begin is after its
// end throws inverted_range (2005, fdbclient/FDBTypes.h): the future fails with it, before
// the chunk size is looked at, and an empty range is no error.
TEST_F(Metadata, AnInvertedRangeFailsEveryRangeMetricWithInvertedRange) {
  Tr tr = make_tr();
  const std::string b = k("b"), a = k("a");
  Future size(
      fdb_transaction_get_estimated_range_size_bytes(tr.get(), u8(b), len(b), u8(a), len(a)));
  EXPECT_EQ(wait(size), 2005);
  Future points(
      fdb_transaction_get_range_split_points(tr.get(), u8(b), len(b), u8(a), len(a), 1000));
  EXPECT_EQ(wait(points), 2005);
  Future no_chunk(
      fdb_transaction_get_range_split_points(tr.get(), u8(b), len(b), u8(a), len(a), 0));
  EXPECT_EQ(wait(no_chunk), 2005);
  Future ranges(
      fdb_transaction_get_blob_granule_ranges(tr.get(), u8(b), len(b), u8(a), len(a), 10));
  EXPECT_EQ(wait(ranges), 2005);
  Future summaries(
      fdb_transaction_summarize_blob_granules(tr.get(), u8(b), len(b), u8(a), len(a), -2, 10));
  EXPECT_EQ(wait(summaries), 2005);
  fdb_error_t e = -1;
  EXPECT_EQ(estimated(tr, b, b, &e), 0);
  EXPECT_EQ(e, 0);
}

TEST_F(Metadata, AddressesForKeyIsOnePlaceholder) {
  Tr tr = make_tr();
  Future f(fdb_transaction_get_addresses_for_key(tr.get(), u8(k("a")), len(k("a"))));
  ASSERT_EQ(wait(f), 0);
  const char** strings = nullptr;
  int n = 0;
  ASSERT_EQ(fdb_future_get_string_array(f.get(), &strings, &n), 0);
  ASSERT_EQ(n, 1);
  EXPECT_STREQ(strings[0], "127.0.0.1:4500");
}

}  // namespace
}  // namespace fdbc_test
