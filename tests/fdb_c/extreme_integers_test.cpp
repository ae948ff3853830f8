// Every integer argument of the C API's reads at its extreme values: selector offsets,
// row limits, byte targets, streaming modes, iteration numbers, split-point chunk sizes and
// integer options. Each either answers as a smaller value would or fails with the error
// FoundationDB gives an invalid value; none wraps around into another error.
#include <climits>
#include <cstdint>
#include <string>

#include <gtest/gtest.h>

#include "fdb_c/fdb_c.h"
#include "fdb_c_test_util.hpp"

namespace fdbc_test {
namespace {

// Keys a, c, e under the test's prefix, and nothing else at or after "\xff" below the
// prefix's end; other tests' prefixes may hold keys before and after ours.
class ExtremeIntegers : public FdbTest {
 protected:
  void SetUp() override {
    FdbTest::SetUp();
    ASSERT_EQ(run([&](const Tr& tr) {
                for (const char* s : {"a", "c", "e"}) set(tr, k(s), s);
                return 0;
              }),
              0);
  }
  Key resolve(const Selector& s) {
    Tr tr = make_tr();
    return get_key(tr, s);
  }
};

// FoundationDB's developer guide (Key selectors): a selector that would describe a key
// before the first key of the database resolves to "", one past the last to the end of
// the keyspace. INT_MIN and INT_MIN + 1 step back 2^31 + 1 and 2^31 keys, one more than an
// int holds.
TEST_F(ExtremeIntegers, MostNegativeOffsetsResolveToTheEmptyKey) {
  for (int offset : {INT_MIN, INT_MIN + 1, INT_MIN + 2, -2'000'000'000}) {
    for (bool or_equal : {false, true}) {
      Key r = resolve(Selector{k("c"), or_equal, offset});
      EXPECT_EQ(r.error, 0) << offset << " " << or_equal;
      EXPECT_EQ(r.key, "") << offset << " " << or_equal;
    }
  }
}

TEST_F(ExtremeIntegers, MostPositiveOffsetsResolveToTheEndOfTheKeyspace) {
  for (int offset : {INT_MAX, INT_MAX - 1}) {
    for (bool or_equal : {false, true}) {
      Key r = resolve(Selector{k("c"), or_equal, offset});
      EXPECT_EQ(r.error, 0) << offset << " " << or_equal;
      EXPECT_EQ(r.key, "\xff") << offset << " " << or_equal;
    }
  }
}

TEST_F(ExtremeIntegers, ExtremeOffsetsAsRangeBounds) {
  Tr tr = make_tr();
  // From "" to the first key >= c: everything before c, ours a included.
  Range r = get_range(tr, Selector{k("c"), false, INT_MIN}, first_greater_or_equal(k("c")), {});
  ASSERT_EQ(r.error, 0);
  ASSERT_FALSE(r.rows.empty());
  EXPECT_EQ(r.rows.back().first, k("a"));
  // From c to "\xff": c, e and whatever sorts after this test's prefix.
  r = get_range(tr, first_greater_or_equal(k("c")), Selector{k("c"), true, INT_MAX}, {});
  ASSERT_EQ(r.error, 0);
  ASSERT_GE(r.rows.size(), 2U);
  EXPECT_EQ(r.rows[0].first, k("c"));
  EXPECT_EQ(r.rows[1].first, k("e"));
  // Both ends "" (INT_MIN + 1): empty, no error.
  r = get_range(tr, Selector{k("a"), false, INT_MIN + 1}, Selector{k("e"), true, INT_MIN}, {});
  EXPECT_EQ(r.error, 0);
  EXPECT_TRUE(r.rows.empty());
  // Both ends "\xff": empty, no error.
  r = get_range(tr, Selector{k("a"), false, INT_MAX}, Selector{k("e"), true, INT_MAX}, {});
  EXPECT_EQ(r.error, 0);
  EXPECT_TRUE(r.rows.empty());
}

// The largest limit and byte target are "more than there is"; the smallest are below -1,
// which FoundationDB's GetRangeLimits rejects as range_limits_invalid (2012).
TEST_F(ExtremeIntegers, ExtremeLimitsAndByteTargets) {
  Tr tr = make_tr();
  Range r = get_range(tr, prefix(), prefix_end(), {.limit = INT_MAX});
  EXPECT_EQ(r.error, 0);
  EXPECT_EQ(r.rows.size(), 3U);
  EXPECT_FALSE(r.more);
  r = get_range(tr, prefix(), prefix_end(), {.target_bytes = INT_MAX});
  EXPECT_EQ(r.error, 0);
  EXPECT_EQ(r.rows.size(), 3U);
  r = get_range(tr, prefix(), prefix_end(),
                {.limit = INT_MAX, .target_bytes = INT_MAX, .mode = FDB_STREAMING_MODE_EXACT});
  EXPECT_EQ(r.error, 0);
  EXPECT_EQ(r.rows.size(), 3U);
  EXPECT_EQ(get_range(tr, prefix(), prefix_end(), {.limit = INT_MIN}).error, 2012);
  EXPECT_EQ(get_range(tr, prefix(), prefix_end(), {.target_bytes = INT_MIN}).error, 2012);
  EXPECT_EQ(get_range(tr, prefix(), prefix_end(), {.limit = INT_MIN, .reverse = true}).error, 2012);
}

// An iteration number past the last of the iterator's batch sizes keeps the largest; zero and
// below are client_invalid_operation (2000), as are streaming modes outside the enum.
TEST_F(ExtremeIntegers, ExtremeIterationsAndModes) {
  Tr tr = make_tr();
  Range r = get_range(tr, prefix(), prefix_end(),
                      {.mode = FDB_STREAMING_MODE_ITERATOR, .iteration = INT_MAX});
  EXPECT_EQ(r.error, 0);
  EXPECT_EQ(r.rows.size(), 3U);
  EXPECT_EQ(get_range(tr, prefix(), prefix_end(),
                      {.mode = FDB_STREAMING_MODE_ITERATOR, .iteration = INT_MIN})
                .error,
            2000);
  for (int mode : {INT_MIN, -3, 5, INT_MAX}) {
    EXPECT_EQ(
        get_range(tr, prefix(), prefix_end(), {.mode = static_cast<FDBStreamingMode>(mode)}).error,
        2000)
        << mode;
  }
}

// A negative length reads as an empty key; INT_MIN included.
TEST_F(ExtremeIntegers, MostNegativeLengthsAreEmptyKeys) {
  Tr tr = make_tr();
  Future f(fdb_transaction_get_key(tr.get(), u8(k("c")), INT_MIN, 0, 1, 0));
  Key r = key_of(f.get());
  EXPECT_EQ(r.error, 0);
  Future v(fdb_transaction_get(tr.get(), u8(k("c")), INT_MIN, 0));
  EXPECT_EQ(value_of(v.get()).error, 0);
}

TEST_F(ExtremeIntegers, ExtremeSplitPointChunkSizes) {
  Tr tr = make_tr();
  Future big(fdb_transaction_get_range_split_points(
      tr.get(), u8(prefix()), len(prefix()), u8(prefix_end()), len(prefix_end()), INT64_MAX));
  EXPECT_EQ(wait(big), 0);
  Future smallest(fdb_transaction_get_range_split_points(
      tr.get(), u8(prefix()), len(prefix()), u8(prefix_end()), len(prefix_end()), INT64_MIN));
  EXPECT_EQ(wait(smallest), 2000);
}

// Integer options take an int64; FoundationDB bounds TIMEOUT, RETRY_LIMIT and
// MAX_RETRY_DELAY to an int's range and SIZE_LIMIT to [32, 10,000,000], answering
// invalid_option_value (2006) outside them.
TEST_F(ExtremeIntegers, ExtremeIntegerOptions) {
  Tr tr = make_tr();
  // Checked on the network thread: the error is deferred to the next read (options_test.cpp).
  for (auto o :
       {FDB_TR_OPTION_RETRY_LIMIT, FDB_TR_OPTION_MAX_RETRY_DELAY, FDB_TR_OPTION_SIZE_LIMIT}) {
    for (int64_t v : {INT64_MAX, INT64_MIN}) {
      Tr other = make_tr();
      EXPECT_EQ(set_option(other, o, v), 0) << o;
      EXPECT_EQ(get(other, k("a")).error, 2006) << o;
    }
  }
  EXPECT_EQ(set_option(tr, FDB_TR_OPTION_TIMEOUT, INT_MAX), 0);
  EXPECT_EQ(set_option(tr, FDB_TR_OPTION_RETRY_LIMIT, INT_MAX), 0);
  EXPECT_EQ(set_option(tr, FDB_TR_OPTION_MAX_RETRY_DELAY, INT_MAX), 0);
  EXPECT_EQ(get(tr, k("a")).value, "a");
  EXPECT_EQ(on_error(tr, 1020), 0);
}

}  // namespace
}  // namespace fdbc_test
