// fdb_transaction_get_key: key selector resolution (FoundationDB developer-guide.rst, "Key
// selectors"), clamping, own writes, and exactly the read conflict ranges FoundationDB's
// ReadYourWrites.cpp adds.
#include <string>

#include <gtest/gtest.h>

#include "fdb_c/fdb_c.h"
#include "fdb_c_test_util.hpp"

namespace fdbc_test {
namespace {

// Keys a, c, e, g under the test's prefix.
class Selectors : public FdbTest {
 protected:
  void SetUp() override {
    FdbTest::SetUp();
    ASSERT_EQ(run([&](const Tr& tr) {
                for (const char* s : {"a", "c", "e", "g"}) set(tr, k(s), s);
                return 0;
              }),
              0);
  }
  std::string resolve(const Selector& s) {
    Tr tr = make_tr();
    Key r = get_key(tr, s);
    EXPECT_EQ(r.error, 0) << s.key << " " << s.or_equal << " " << s.offset;
    return r.key;
  }
  // Whether a transaction that resolved `s` conflicts with a later commit writing `key`.
  fdb_error_t conflict_after(const Selector& s, const std::string& key, bool snapshot = false) {
    Tr tr = make_tr();
    Key r = get_key(tr, s, snapshot);
    EXPECT_EQ(r.error, 0);
    EXPECT_EQ(write(key, "changed"), 0);
    set(tr, k("zz"), "x");
    fdb_error_t e = commit(tr);
    // Put the key back for the next case.
    EXPECT_EQ(run([&](const Tr& t) {
                clear(t, key);
                for (const char* c : {"a", "c", "e", "g"}) set(t, k(c), c);
                clear(t, k("zz"));
                return 0;
              }),
              0);
    return e;
  }
};

TEST_F(Selectors, TheFourNamedSelectors) {
  EXPECT_EQ(resolve(first_greater_or_equal(k("c"))), k("c"));
  EXPECT_EQ(resolve(first_greater_or_equal(k("b"))), k("c"));
  EXPECT_EQ(resolve(first_greater_than(k("c"))), k("e"));
  EXPECT_EQ(resolve(first_greater_than(k("b"))), k("c"));
  EXPECT_EQ(resolve(last_less_than(k("c"))), k("a"));
  EXPECT_EQ(resolve(last_less_than(k("d"))), k("c"));
  EXPECT_EQ(resolve(last_less_or_equal(k("c"))), k("c"));
  EXPECT_EQ(resolve(last_less_or_equal(k("d"))), k("c"));
}

TEST_F(Selectors, Offsets) {
  EXPECT_EQ(resolve(first_greater_or_equal(k("c")) + 1), k("e"));
  EXPECT_EQ(resolve(first_greater_or_equal(k("a")) + 3), k("g"));
  EXPECT_EQ(resolve(last_less_than(k("e")) + -1), k("a"));
  EXPECT_EQ(resolve(last_less_or_equal(k("g")) + -2), k("c"));
  EXPECT_EQ(resolve(first_greater_than(k("a")) + 1), k("e"));
  EXPECT_EQ(resolve(Selector{k("d"), false, 2}), k("g"));  // last < d is c; two keys on: g
}

TEST_F(Selectors, ClampsToTheEndsOfTheKeyspace) {
  EXPECT_EQ(resolve(last_less_than(std::string("\x00", 1))), "");
  EXPECT_EQ(resolve(last_less_or_equal(k("a")) + -1000), "");
  EXPECT_EQ(resolve(first_greater_or_equal("\xff")), "\xff");
  EXPECT_EQ(resolve(first_greater_than(k("g")) + 1000), "\xff");
}

TEST_F(Selectors, SeesOwnWrites) {
  Tr tr = make_tr();
  set(tr, k("b"), "mine");
  clear(tr, k("e"));
  EXPECT_EQ(get_key(tr, first_greater_or_equal(k("b"))).key, k("b"));
  EXPECT_EQ(get_key(tr, first_greater_than(k("c"))).key, k("g"));
  EXPECT_EQ(get_key(tr, last_less_than(k("c"))).key, k("b"));
  // Snapshot reads too, by default.
  EXPECT_EQ(get_key(tr, first_greater_or_equal(k("b")), /*snapshot=*/true).key, k("b"));
}

// offset > 0, or_equal false: [k, r + 00).
TEST_F(Selectors, FirstGreaterOrEqualConflictRange) {
  Selector s = first_greater_or_equal(k("b"));  // resolves to c
  EXPECT_EQ(conflict_after(s, k("a")), 0);
  EXPECT_EQ(conflict_after(s, k("b")), 1020);
  EXPECT_EQ(conflict_after(s, k("bb")), 1020);
  EXPECT_EQ(conflict_after(s, k("c")), 1020);
  EXPECT_EQ(conflict_after(s, k("ca")), 0);
}

// offset > 0, or_equal true: [k + 00, r + 00).
TEST_F(Selectors, FirstGreaterThanConflictRange) {
  Selector s = first_greater_than(k("c"));  // resolves to e
  EXPECT_EQ(conflict_after(s, k("c")), 0);
  EXPECT_EQ(conflict_after(s, k("d")), 1020);
  EXPECT_EQ(conflict_after(s, k("e")), 1020);
  EXPECT_EQ(conflict_after(s, k("f")), 0);
}

// offset <= 0, or_equal false: [r, k).
TEST_F(Selectors, LastLessThanConflictRange) {
  Selector s = last_less_than(k("e"));  // resolves to c
  EXPECT_EQ(conflict_after(s, k("b")), 0);
  EXPECT_EQ(conflict_after(s, k("c")), 1020);
  EXPECT_EQ(conflict_after(s, k("d")), 1020);
  EXPECT_EQ(conflict_after(s, k("e")), 0);
}

// offset <= 0, or_equal true: [r, k + 00).
TEST_F(Selectors, LastLessOrEqualConflictRange) {
  Selector s = last_less_or_equal(k("f"));  // resolves to e
  EXPECT_EQ(conflict_after(s, k("d")), 0);
  EXPECT_EQ(conflict_after(s, k("e")), 1020);
  EXPECT_EQ(conflict_after(s, k("f")), 1020);
  EXPECT_EQ(conflict_after(s, k("fa")), 0);
}

TEST_F(Selectors, SnapshotGetKeyAddsNoConflict) {
  EXPECT_EQ(conflict_after(first_greater_or_equal(k("b")), k("b"), /*snapshot=*/true), 0);
}

TEST_F(Selectors, GetKeyBeyondFFClampsOrFails) {
  Tr tr = make_tr();
  Key r = get_key(tr, first_greater_or_equal("\xff/x"));
  // Resolution clamps at \xff (the selector key itself is beyond the legal range).
  if (r.error == 0) {
    EXPECT_EQ(r.key, "\xff");
  } else {
    EXPECT_EQ(r.error, 2004);
  }
}

}  // namespace
}  // namespace fdbc_test
