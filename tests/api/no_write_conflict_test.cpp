// NEXT_WRITE_NO_WRITE_CONFLICT_RANGE (Transaction::set_next_write_no_write_conflict_range),
// as FoundationDB's ReadYourWritesTransaction applies it (fdbclient/ReadYourWrites.cpp:
// set, clear and atomicOp take the flag first, getAndResetWriteConflictDisabled; WriteMap
// keeps a key's conflict once any write gave it one, WriteMap::mutate's is_conflict).
//
// The race is apitest::reader_conflicts_with: tr1 reads, tr2 writes and commits, tr1
// writes a dummy key and commits.
#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "strata/database.hpp"
#include "strata/transaction.hpp"

#include "api/api_test_util.hpp"
#include "support/error_matchers.hpp"
#include "support/test_database.hpp"

namespace strata {
namespace {

using apitest::reader_conflicts_with;
using ::testing::ElementsAre;
using testing::ThrowsCode;

class NoWriteConflict : public ::testing::Test {
 protected:
  bool read_conflicts_with(const std::string& read_key,
                           const std::function<void(Transaction&)>& writer) {
    return reader_conflicts_with(
        db_, [&](Transaction& tr) { (void)tr.get(read_key); }, writer);
  }

  Database db_ = testing::open_database();
};

TEST_F(NoWriteConflict, TheNextSetAddsNoWriteConflictAndIsStillWritten) {
  EXPECT_TRUE(read_conflicts_with("k", [](Transaction& tr) { tr.set("k", "1"); }));
  EXPECT_FALSE(read_conflicts_with("k", [](Transaction& tr) {
    tr.set_next_write_no_write_conflict_range();
    tr.set("k", "2");
  }));
  Transaction tr = db_.create_transaction();
  EXPECT_EQ(tr.get("k"), "2");
}

TEST_F(NoWriteConflict, OnlyTheNextWriteTakesIt) {
  auto writer = [](Transaction& tr) {
    tr.set_next_write_no_write_conflict_range();
    tr.set("a", "1");
    tr.set("b", "1");
  };
  EXPECT_FALSE(read_conflicts_with("a", writer));
  EXPECT_TRUE(read_conflicts_with("b", writer));
}

TEST_F(NoWriteConflict, AKeyAnotherWriteGaveARangeKeepsIt) {
  EXPECT_TRUE(read_conflicts_with("k", [](Transaction& tr) {
    tr.set("k", "1");
    tr.set_next_write_no_write_conflict_range();
    tr.set("k", "2");
  }));
  EXPECT_TRUE(read_conflicts_with("k", [](Transaction& tr) {
    tr.set_next_write_no_write_conflict_range();
    tr.set("k", "1");
    tr.add_write_conflict_range("k", std::string("k\0", 2));
  }));
  EXPECT_TRUE(read_conflicts_with("k", [](Transaction& tr) {
    tr.set_next_write_no_write_conflict_range();
    tr.set("k", "1");
    tr.clear("k");
  }));
}

TEST_F(NoWriteConflict, ClearsRangeClearsAndAtomicOperationsTakeIt) {
  EXPECT_FALSE(read_conflicts_with("k", [](Transaction& tr) {
    tr.set_next_write_no_write_conflict_range();
    tr.clear("k");
  }));
  EXPECT_FALSE(read_conflicts_with("k", [](Transaction& tr) {
    tr.set_next_write_no_write_conflict_range();
    tr.clear_range("a", "z");
  }));
  EXPECT_FALSE(read_conflicts_with("k", [](Transaction& tr) {
    tr.set_next_write_no_write_conflict_range();
    tr.atomic_op(MutationType::add, "k", int64_operand(1));
  }));
  // Control: each conflicts without the option.
  EXPECT_TRUE(read_conflicts_with("k", [](Transaction& tr) { tr.clear_range("a", "z"); }));
  EXPECT_TRUE(read_conflicts_with(
      "k", [](Transaction& tr) { tr.atomic_op(MutationType::add, "k", int64_operand(1)); }));
}

// The writes made before the option keep their ranges; the cleared range made after it,
// with the option taken, has one of its own.
TEST_F(NoWriteConflict, WriteConflictRangesNameOnlyTheWritesThatHaveOne) {
  Transaction tr = db_.create_transaction();
  tr.set("a", "1");
  tr.clear_range("c", "e");
  tr.set_next_write_no_write_conflict_range();
  tr.set("b", "1");
  tr.clear_range("f", "h");
  tr.atomic_op(MutationType::add, "x", int64_operand(1));
  EXPECT_THAT(tr.write_conflict_ranges(),
              ElementsAre(KeyRange{"a", std::string("a\0", 2)}, KeyRange{"c", "e"},
                          KeyRange{"f", "h"}, KeyRange{"x", std::string("x\0", 2)}));
  tr.commit();
  EXPECT_FALSE(read_conflicts_with("b", [](Transaction& t) {
    t.set_next_write_no_write_conflict_range();
    t.set("b", "2");
  }));
}

// FoundationDB's writes take the flag before their checks: one that throws takes it too.
TEST_F(NoWriteConflict, AWriteThatThrowsTakesItToo) {
  EXPECT_TRUE(read_conflicts_with("k", [](Transaction& tr) {
    tr.set_next_write_no_write_conflict_range();
    EXPECT_THAT([&] { tr.set("\xff/x", "1"); },
                testing::ThrowsCode(ErrorCode::key_outside_legal_range));
    tr.set("k", "1");
  }));
}

TEST_F(NoWriteConflict, ResetAndARetryClearIt) {
  EXPECT_TRUE(read_conflicts_with("k", [](Transaction& tr) {
    tr.set_next_write_no_write_conflict_range();
    tr.reset();
    tr.set("k", "1");
  }));
  EXPECT_TRUE(read_conflicts_with("k", [](Transaction& tr) {
    tr.set_next_write_no_write_conflict_range();
    tr.on_error(Error(ErrorCode::not_committed));
    tr.set("k", "1");
  }));
}

// FoundationDB's set hands a special key to its own space, and refuses the metadata
// version key, before it takes the flag (ReadYourWritesTransaction::set): the write after
// either is still the one without a range.
TEST_F(NoWriteConflict, ASetRefusedBeforeTheFlagLeavesItForTheNextWrite) {
  const std::pair<std::string, ErrorCode> refused[] = {
      {"\xff\xff/x", ErrorCode::key_outside_legal_range},
      {"\xff/metadataVersion", ErrorCode::client_invalid_operation},
  };
  for (const auto& write : refused) {
    SCOPED_TRACE(::testing::PrintToString(write.first));
    EXPECT_FALSE(read_conflicts_with("k", [&write](Transaction& tr) {
      tr.set_next_write_no_write_conflict_range();
      EXPECT_THAT([&] { tr.set(write.first, "1"); }, testing::ThrowsCode(write.second));
      tr.set("k", "1");
    }));
  }
}

// A clear of a key longer than any key but within FoundationDB 7.4's read limit is a write
// of the range [key, key+00) (ReadYourWritesTransaction::clear): it takes the flag as any
// clear does.
TEST_F(NoWriteConflict, AClearOfAKeyBeyondTheKeyLimitTakesIt) {
  const std::string long_key(10'004, 'k');
  EXPECT_TRUE(read_conflicts_with(long_key, [&](Transaction& tr) { tr.clear(long_key); }));
  EXPECT_FALSE(read_conflicts_with(long_key, [&](Transaction& tr) {
    tr.set_next_write_no_write_conflict_range();
    tr.clear(long_key);
  }));
  EXPECT_TRUE(read_conflicts_with(long_key, [&](Transaction& tr) {
    tr.set_next_write_no_write_conflict_range();
    tr.clear(long_key);
    tr.clear(long_key);
  }));
}

// A versionstamped value made without a range is not among the write conflict ranges;
// one made with a range is, as every other write.
TEST_F(NoWriteConflict, AVersionstampedValueWithoutARangeIsNotListed) {
  const std::string param = "id:" + std::string(10, '\0') + std::string("\x03\x00\x00\x00", 4);
  Transaction tr = db_.create_transaction();
  tr.set_next_write_no_write_conflict_range();
  tr.atomic_op(MutationType::set_versionstamped_value, "quiet", param);
  tr.atomic_op(MutationType::set_versionstamped_value, "loud", param);
  EXPECT_THAT(tr.write_conflict_ranges(), ElementsAre(KeyRange{"loud", std::string("loud\0", 5)}));
}

// The writes' ranges count toward the size once, with the writes, whether or not a write
// was made without one: a commit whose repeated reads merge under the limit is not refused.
TEST_F(NoWriteConflict, TheWritesRangesAreCountedOnceTowardTheSize) {
  for (const bool option : {false, true}) {
    SCOPED_TRACE(option ? "with the option" : "without");
    Transaction tr = db_.create_transaction();
    for (int i = 0; i < 100; ++i) tr.set("key-" + std::string(36, 'k') + std::to_string(i), "v");
    if (option) tr.set_next_write_no_write_conflict_range();
    tr.set("q", "v");
    tr.set_size_limit(tr.approximate_size() + 100);
    for (int i = 0; i < 200; ++i) (void)tr.get("r");  // the same read: merged at the commit
    EXPECT_NO_THROW(tr.commit());
  }
}

// FoundationDB's approximate size leaves out the range of a write made without one
// (fdbclient/ReadYourWrites.cpp, set, clear and atomicOp: `addWriteConflict ?
// sizeof(KeyRangeRef) + ... : 0`), so the transaction's limit does not count it either.
TEST_F(NoWriteConflict, AWriteWithoutARangeCountsOnlyItsOwnBytesTowardTheSize) {
  const std::string key(1000, 'k');
  auto size_after = [&](bool option, const std::function<void(Transaction&)>& write) {
    Transaction tr = db_.create_transaction();
    tr.set("other", "v");  // a write with a range before, and one after
    if (option) tr.set_next_write_no_write_conflict_range();
    write(tr);
    tr.set("after", "v");
    return tr.approximate_size();
  };
  const std::vector<std::pair<const char*, std::function<void(Transaction&)>>> writes = {
      {"set", [&](Transaction& tr) { tr.set(key, "v"); }},
      {"clear", [&](Transaction& tr) { tr.clear(key); }},
      {"atomic add", [&](Transaction& tr) { tr.atomic_op(MutationType::add, key, "\x01"); }},
  };
  for (const auto& [name, write] : writes) {
    SCOPED_TRACE(name);
    // The range [key, key+00) counts the key once more and the 00 byte.
    EXPECT_EQ(size_after(false, write) - size_after(true, write), key.size() + 1);
  }
  const std::string end(1000, 'm');
  auto clear_range = [&](Transaction& tr) { tr.clear_range(key, end); };
  EXPECT_EQ(size_after(false, clear_range) - size_after(true, clear_range), 2 * key.size());

  // A commit within the limit only without the range is not refused.
  Transaction tr = db_.create_transaction();
  tr.set_next_write_no_write_conflict_range();
  tr.set(key, "v");
  const std::size_t size = tr.approximate_size();
  tr.set_size_limit(size);
  EXPECT_NO_THROW(tr.commit());
  Transaction over = db_.create_transaction();
  over.set(key, "v");
  EXPECT_GT(over.approximate_size(), size);
  over.set_size_limit(size);
  EXPECT_THAT([&] { over.commit(); }, ThrowsCode(ErrorCode::transaction_too_large));
}

// The ranges of writes that a later clear without one covers still count: FoundationDB's
// WriteMap::clearNoConflict keeps them and its commit sends them. A commit over the limit
// with them is refused, though the running count of the writes left is small.
TEST_F(NoWriteConflict, RangesUnderAClearWithoutOneStillCountTowardTheLimit) {
  Transaction tr = db_.create_transaction();
  for (char c = 'a'; c < 'a' + 20; ++c) tr.set(std::string(1000, c), "v");
  tr.set_next_write_no_write_conflict_range();
  tr.clear_range("", "\xff");
  EXPECT_GT(tr.approximate_size(), 20'000U);
  tr.set_size_limit(10'000);
  EXPECT_THAT([&] { tr.commit(); }, ThrowsCode(ErrorCode::transaction_too_large));
  Transaction check = db_.create_transaction();
  EXPECT_EQ(check.get(std::string(1000, 'a')), std::nullopt);
}

// A key written many times counts its range once.
TEST_F(NoWriteConflict, AKeyWrittenAgainCountsItsRangeOnce) {
  auto size_after = [&](int writes) {
    Transaction tr = db_.create_transaction();
    tr.set_next_write_no_write_conflict_range();
    tr.set("quiet", "v");
    for (int i = 0; i < writes; ++i) tr.set(std::string(500, 'k'), "v");
    return tr.approximate_size();
  };
  EXPECT_EQ(size_after(1), size_after(20));
}

// A transaction whose only writes have no range still commits them, at a version of its
// own.
TEST_F(NoWriteConflict, ATransactionOfUnconflictedWritesOnlyCommits) {
  Transaction tr = db_.create_transaction();
  tr.set_next_write_no_write_conflict_range();
  tr.set("k", "v");
  EXPECT_TRUE(tr.write_conflict_ranges().empty());
  tr.commit();
  EXPECT_GT(tr.committed_version(), 0);
  Transaction check = db_.create_transaction();
  EXPECT_EQ(check.get("k"), "v");
}

}  // namespace
}  // namespace strata
