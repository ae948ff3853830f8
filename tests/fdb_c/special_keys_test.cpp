// The special key space's transaction module: \xff\xff/transaction/conflicting_keys/ under
// REPORT_CONFLICTING_KEYS, read_conflict_range/ and write_conflict_range/, read as
// FoundationDB's clients read them (get_range, get, key selectors), and the module errors
// for the rest of the space.
#include <string>

#include <gtest/gtest.h>

#include "fdb_c/fdb_c.h"
#include "fdb_c_test_util.hpp"

namespace fdbc_test {
namespace {

const std::string kModule("\xff\xff/transaction/", 15);
const std::string kConflicting = kModule + "conflicting_keys/";
const std::string kReads = kModule + "read_conflict_range/";
const std::string kWrites = kModule + "write_conflict_range/";
const std::string kFF2("\xff\xff", 2);

std::string nul(const std::string& key) { return key + std::string(1, '\0'); }

class SpecialKeys : public FdbTest {
 protected:
  // tr reads x, y and the range [r/, r0) under this test's prefix; another transaction then
  // writes y and r/5; tr writes a dummy key and commits.
  fdb_error_t conflict(const Tr& tr) {
    EXPECT_EQ(get(tr, k("x")).error, 0);
    EXPECT_EQ(get(tr, k("y")).error, 0);
    EXPECT_EQ(get_range(tr, k("r/"), k("r0")).error, 0);
    EXPECT_EQ(write(k("y"), "w"), 0);
    EXPECT_EQ(write(k("r/5"), "w"), 0);
    set(tr, k("dummy"), "d");
    return commit(tr);
  }
  // The whole of a namespace.
  static Range all_of(const Tr& tr, const std::string& ns) {
    return get_range(tr, ns, ns + std::string("\xff\xff", 2));
  }
};

TEST_F(SpecialKeys, ConflictingKeysAreReportedAfterAFailedCommit) {
  Tr tr = make_tr();
  ASSERT_EQ(set_option(tr, FDB_TR_OPTION_REPORT_CONFLICTING_KEYS), 0);
  ASSERT_EQ(conflict(tr), 1020);
  const Range r = all_of(tr, kConflicting);
  ASSERT_EQ(r.error, 0);
  EXPECT_EQ(r.rows, (Rows{{kConflicting + k("r/"), "1"},
                          {kConflicting + k("r0"), "0"},
                          {kConflicting + k("y"), "1"},
                          {kConflicting + nul(k("y")), "0"}}));
  EXPECT_FALSE(r.more);
  // A point read of one boundary, and of a key that is none.
  EXPECT_EQ(get(tr, kConflicting + k("y")).value, "1");
  EXPECT_TRUE(get(tr, kConflicting + k("y")).present);
  EXPECT_FALSE(get(tr, kConflicting + k("x")).present);
  // on_error forgets them.
  ASSERT_EQ(on_error(tr, 1020), 0);
  EXPECT_TRUE(all_of(tr, kConflicting).rows.empty());
}

TEST_F(SpecialKeys, WithoutTheOptionNothingIsReported) {
  Tr tr = make_tr();
  ASSERT_EQ(conflict(tr), 1020);
  const Range r = all_of(tr, kConflicting);
  EXPECT_EQ(r.error, 0);
  EXPECT_TRUE(r.rows.empty());
}

// REPORT_CONFLICTING_KEYS is not a persistent option: the retry forgets it, as
// FoundationDB's on_error does (set it on every attempt, or on the database).
TEST_F(SpecialKeys, TheOptionIsForgottenByTheRetry) {
  Tr tr = make_tr();
  ASSERT_EQ(set_option(tr, FDB_TR_OPTION_REPORT_CONFLICTING_KEYS), 0);
  ASSERT_EQ(conflict(tr), 1020);
  EXPECT_EQ(all_of(tr, kConflicting).rows.size(), 4u);
  ASSERT_EQ(on_error(tr, 1020), 0);
  ASSERT_EQ(conflict(tr), 1020);
  EXPECT_TRUE(all_of(tr, kConflicting).rows.empty());
  ASSERT_EQ(on_error(tr, 1020), 0);
  ASSERT_EQ(set_option(tr, FDB_TR_OPTION_REPORT_CONFLICTING_KEYS), 0);  // set again: reports
  ASSERT_EQ(conflict(tr), 1020);
  EXPECT_EQ(all_of(tr, kConflicting).rows.size(), 4u);
}

TEST_F(SpecialKeys, TheDatabaseOptionReportsForEveryTransactionAndAfterReset) {
  Db d = open_db();
  ASSERT_EQ(fdb_database_set_option(d.get(), FDB_DB_OPTION_TRANSACTION_REPORT_CONFLICTING_KEYS,
                                    nullptr, 0),
            0);
  Tr tr = make_tr(d.get());
  fdb_transaction_reset(tr.get());
  ASSERT_EQ(conflict(tr), 1020);
  EXPECT_EQ(all_of(tr, kConflicting).rows.size(), 4u);
}

TEST_F(SpecialKeys, ReadAndWriteConflictRangesAsFoundationDBsExample) {
  Tr tr = make_tr();
  const std::string foo = k("foo"), bar = k("bar/"), bar0 = k("bar0");
  ASSERT_EQ(fdb_transaction_add_conflict_range(tr.get(), u8(foo), len(foo), u8(nul(foo)),
                                               len(nul(foo)), FDB_CONFLICT_RANGE_TYPE_READ),
            0);
  ASSERT_EQ(fdb_transaction_add_conflict_range(tr.get(), u8(bar), len(bar), u8(bar0), len(bar0),
                                               FDB_CONFLICT_RANGE_TYPE_READ),
            0);
  set(tr, k("s"), "v");
  clear_range(tr, k("c1"), k("c5"));
  EXPECT_EQ(all_of(tr, kReads).rows, (Rows{{kReads + bar, "1"},
                                           {kReads + bar0, "0"},
                                           {kReads + foo, "1"},
                                           {kReads + nul(foo), "0"}}));
  EXPECT_EQ(all_of(tr, kWrites).rows, (Rows{{kWrites + k("c1"), "1"},
                                            {kWrites + k("c5"), "0"},
                                            {kWrites + k("s"), "1"},
                                            {kWrites + nul(k("s")), "0"}}));
  // Reading the special keys added no conflict range of its own.
  EXPECT_EQ(all_of(tr, kReads).rows.size(), 4u);
}

TEST_F(SpecialKeys, TheWholeModuleInOrderWithLimitsReverseAndSelectors) {
  Tr tr = make_tr();
  ASSERT_EQ(set_option(tr, FDB_TR_OPTION_REPORT_CONFLICTING_KEYS), 0);
  ASSERT_EQ(conflict(tr), 1020);
  const Range whole = get_range(tr, kModule, std::string("\xff\xff/transaction0", 15));
  ASSERT_EQ(whole.error, 0);
  // 4 conflicting rows, then the reads (x, y and [r/, r0): 6 rows), then the write (2).
  ASSERT_EQ(whole.rows.size(), 12u);
  EXPECT_EQ(whole.rows[0].first, kConflicting + k("r/"));
  EXPECT_EQ(whole.rows[4].first, kReads + k("r/"));
  EXPECT_EQ(whole.rows[11].first, kWrites + nul(k("dummy")));

  const Range first_two = get_range(tr, kModule, kModule + "\xff", {.limit = 2});
  EXPECT_EQ(first_two.rows, Rows(whole.rows.begin(), whole.rows.begin() + 2));
  EXPECT_TRUE(first_two.more);
  const Range last_three = get_range(tr, kModule, kModule + "\xff", {.limit = 3, .reverse = true});
  EXPECT_EQ(last_three.rows, (Rows{whole.rows[11], whole.rows[10], whole.rows[9]}));

  // Selectors resolve over the module's rows.
  EXPECT_EQ(get_key(tr, first_greater_than(kConflicting + k("r/"))).key, whole.rows[1].first);
  EXPECT_EQ(get_key(tr, last_less_than(kReads)).key, whole.rows[3].first);
  EXPECT_EQ(get_key(tr, first_greater_or_equal(kModule) + 5).key, whole.rows[5].first);
  EXPECT_EQ(get_key(tr, first_greater_or_equal(kModule) + 100).key,
            std::string("\xff\xff/transaction0", 15));
  const Range middle = get_range(tr, first_greater_than(kConflicting + k("r/")),
                                 first_greater_or_equal(kModule) + 3);
  EXPECT_EQ(middle.rows, (Rows{whole.rows[1], whole.rows[2]}));
}

TEST_F(SpecialKeys, ReadsOutsideTheModuleFailAsFoundationDBsUnlessRelaxed) {
  Tr tr = make_tr();
  EXPECT_EQ(get(tr, kFF2 + "/status/json").error, 2113);
  EXPECT_EQ(get_range(tr, kFF2 + "/metrics/", kFF2 + "/metrics0").error, 2113);
  // FoundationDB's own examples: ranges that leave the module.
  EXPECT_EQ(get_range(tr, kFF2 + "/transactio", kFF2 + "/transaction0").error, 2112);
  EXPECT_EQ(get_range(tr, kFF2 + "/transaction/", kFF2 + "/transaction1").error, 2112);
  EXPECT_NE(std::string(fdb_get_error(2112)).find("crosses modules"), std::string::npos);

  ASSERT_EQ(set_option(tr, FDB_TR_OPTION_SPECIAL_KEY_SPACE_RELAXED), 0);
  const Value status = get(tr, kFF2 + "/status/json");
  EXPECT_EQ(status.error, 0);
  EXPECT_FALSE(status.present);
  set(tr, k("s"), "v");
  const Range across = get_range(tr, kFF2, std::string("\xff\xff\xff", 3));
  ASSERT_EQ(across.error, 0);
  EXPECT_EQ(across.rows, (Rows{{kWrites + k("s"), "1"}, {kWrites + nul(k("s")), "0"}}));
}

TEST_F(SpecialKeys, KeysBetweenTheSystemAndSpecialSpacesStayUnreachable) {
  Tr tr = make_tr();
  EXPECT_EQ(get(tr, "\xff/x").error, 2004);
  EXPECT_EQ(get(tr, std::string("\xff\xff\xff", 3)).error, 2004);
  set(tr, kWrites + "x", "v");  // writes to special keys: 2004, deferred to the commit
  EXPECT_EQ(commit(tr), 2004);
}

}  // namespace
}  // namespace fdbc_test
