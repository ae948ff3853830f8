// Every error code and limit of the public API, each with its message checked: what() must name
// the error and the offending input.
#include <chrono>
#include <string>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "strata/database.hpp"
#include "strata/transaction.hpp"

#include "api/api_test_util.hpp"
#include "support/error_matchers.hpp"
#include "support/test_database.hpp"

namespace strata {
namespace {

using apitest::read_key;
using apitest::spin_for;
using testing::ThrowsCode;
using testing::ThrowsCodeWith;

constexpr std::size_t kKeyLimit = 10'000;
constexpr std::size_t kValueLimit = 100'000;

// ---- 2102 key_too_large, 2103 value_too_large --------------------------------------------

TEST(Limits, KeyOverTenThousandBytesIsKeyTooLarge) {
  Database db = testing::open_database();
  Transaction tr = db.create_transaction();
  EXPECT_THAT([&] { tr.set(std::string(kKeyLimit + 1, 'k'), "v"); },
              ThrowsCodeWith(ErrorCode::key_too_large, "10001 bytes"));
  EXPECT_THAT([&] { tr.set(std::string(kKeyLimit + 1, 'k'), "v"); },
              ThrowsCodeWith(ErrorCode::key_too_large, "key_too_large"));
}

TEST(Limits, KeyOfExactlyTenThousandBytesIsAllowed) {
  Database db = testing::open_database();
  std::string key(kKeyLimit, 'k');
  apitest::put(db, key, "v");
  EXPECT_EQ(read_key(db, key), "v");
}

TEST(Limits, ValueOverOneHundredThousandBytesIsValueTooLarge) {
  Database db = testing::open_database();
  Transaction tr = db.create_transaction();
  EXPECT_THAT([&] { tr.set("k", std::string(kValueLimit + 1, 'v')); },
              ThrowsCodeWith(ErrorCode::value_too_large, "100001 bytes"));
}

TEST(Limits, ValueOfExactlyOneHundredThousandBytesIsAllowed) {
  Database db = testing::open_database();
  apitest::put(db, "k", std::string(kValueLimit, 'v'));
  EXPECT_EQ(read_key(db, "k")->size(), kValueLimit);
}

// Reading a key no write could have made is not an error: it is absent.
TEST(Limits, GetOfOversizedKeyIsAbsentNotAnError) {
  Database db = testing::open_database();
  Transaction tr = db.create_transaction();
  EXPECT_EQ(tr.get(std::string(kKeyLimit + 1, 'k')), std::nullopt);
  EXPECT_EQ(tr.snapshot().get(std::string(kKeyLimit * 3, 'k')), std::nullopt);
  EXPECT_NO_THROW(tr.clear(std::string(kKeyLimit + 1, 'k')));
}

// Commits `tr`: true, or false when the commit fails on a conflict (any other error fails
// the test).
bool commits_unless_it_conflicts(Transaction& tr) {
  try {
    tr.commit();
    return true;
  } catch (const Error& e) {
    EXPECT_EQ(e.error_code(), ErrorCode::not_committed);
    return false;
  }
}

// FoundationDB 7.4 reads, clears and adds conflicts for keys up to 10,008 bytes (the
// 10,000-byte limit plus a tenant prefix's 8: getMaxReadKeySize), and cuts longer ends of
// conflict ranges and cleared ranges to 10,009 bytes, dropping a range left empty
// (fdbclient/NativeAPI.actor.cpp: Transaction::get, addReadConflictRange,
// addWriteConflictRange, clear; fdbclient/ReadYourWrites.actor.cpp: the same). A range
// read's conflict is cut only with read-your-writes on: without, NativeAPI adds the range
// as read (its extraConflictRanges).
TEST(Limits, RangeEndsOverTheReadKeyLimitAreCutAsFoundationDBCutsThem) {
  Database db = testing::open_database();
  constexpr std::size_t kReadLimit = kKeyLimit + 8;
  const std::string past(kReadLimit + 1, 'm');       // cut to itself
  const std::string a = past + "a", b = past + "b";  // [a, b) cut is empty
  const std::string beyond_n(kReadLimit + 1, 'n');   // [a, beyond_n) holds "n"
  const std::string near(kKeyLimit + 1, 'm');        // under the read limit: not cut
  const std::string near_a = near + "a", near_b = near + "b";
  const std::string within(kReadLimit, 'w'), over(kReadLimit + 1, 'w');

  // A transaction (reading its own writes unless `ryw` is false) whose read version is
  // fixed first runs `read`; a clear of everything commits; then the transaction, with a write of
  // its own, commits: false when that commit fails on a conflict.
  auto survives_a_clear_of_everything = [&](auto read, bool ryw = true) {
    Transaction tr = db.create_transaction();
    tr.set_read_your_writes(ryw);
    (void)tr.read_version();
    read(tr);
    tr.set("own", "1");
    db.run([](Transaction& other) { other.clear_range("", "\xff"); });
    return commits_unless_it_conflicts(tr);
  };
  EXPECT_TRUE(
      survives_a_clear_of_everything([&](Transaction& tr) { tr.add_read_conflict_range(a, b); }));
  EXPECT_TRUE(survives_a_clear_of_everything(
      [&](Transaction& tr) { EXPECT_TRUE(tr.get_range(a, b).empty()); }));
  EXPECT_TRUE(survives_a_clear_of_everything([&](Transaction& tr) {  // the limit-1 read
    EXPECT_EQ(tr.visit_range(a, b, {.limit = 1}, [](std::string_view, std::string_view) {}), 0u);
  }));
  EXPECT_TRUE(survives_a_clear_of_everything([&](Transaction& tr) {
    tr.add_read_conflict_key(over);
    EXPECT_EQ(tr.get(over), std::nullopt);
  }));
  EXPECT_FALSE(survives_a_clear_of_everything(
      [&](Transaction& tr) { tr.add_read_conflict_range(a, beyond_n); }));
  EXPECT_FALSE(survives_a_clear_of_everything(
      [&](Transaction& tr) { tr.add_read_conflict_range(near_a, near_b); }));
  EXPECT_FALSE(
      survives_a_clear_of_everything([&](Transaction& tr) { tr.add_read_conflict_key(within); }));
  EXPECT_FALSE(survives_a_clear_of_everything(
      [&](Transaction& tr) { EXPECT_EQ(tr.get(within), std::nullopt); }));
  EXPECT_FALSE(survives_a_clear_of_everything(
      [&](Transaction& tr) { EXPECT_TRUE(tr.get_range(a, b).empty()); }, /*ryw=*/false));
  // A watch refuses a key over 10,000 bytes before it reads it (no conflict left behind).
  EXPECT_TRUE(survives_a_clear_of_everything([&](Transaction& tr) {
    EXPECT_THAT([&] { (void)tr.watch(within); }, ThrowsCode(ErrorCode::key_too_large));
  }));

  // A read at a version fixed first (of everything, unless `range` says otherwise);
  // `write` commits; the reader, with a write of its own, commits: false when that commit
  // fails on a conflict.
  auto read_survives = [&](auto write, const KeyRange& range = {"", "\xff"}) {
    Transaction reader = db.create_transaction();
    (void)reader.get_range(range);
    reader.set("reader", "1");
    db.run([&](Transaction& tr) { write(tr); });
    return commits_unless_it_conflicts(reader);
  };
  EXPECT_TRUE(read_survives([&](Transaction& tr) { tr.add_write_conflict_range(a, b); }));
  EXPECT_TRUE(read_survives([&](Transaction& tr) { tr.clear_range(a, b); }));
  EXPECT_TRUE(read_survives([&](Transaction& tr) { tr.clear(over); }));
  EXPECT_FALSE(read_survives([&](Transaction& tr) { tr.add_write_conflict_range(a, beyond_n); }));
  EXPECT_FALSE(read_survives([&](Transaction& tr) { tr.clear_range(a, beyond_n); }));
  EXPECT_FALSE(read_survives([&](Transaction& tr) { tr.clear(within); }));
  // Ranges that meet only beyond every key: cut, ["a", past) and [past, "z") do not.
  EXPECT_TRUE(read_survives([&](Transaction& tr) { tr.clear_range(a, "z"); }, {"a", b}));
  EXPECT_TRUE(
      read_survives([&](Transaction& tr) { tr.add_write_conflict_range(a, "z"); }, {"a", b}));
}

// A clear of a key over 10,000 bytes but within the read limit is a write, as in
// FoundationDB 7.4: ReadYourWritesTransaction::clear(const KeyRef&) records [key, key+00)
// in its write map (fdbclient/ReadYourWrites.actor.cpp), so a later read of the key in the
// transaction is answered from there, absent and with no read conflict, and the clear
// counts toward the transaction's size (its mutation and its write conflict range).
TEST(Limits, AClearOfAKeyWithinTheReadLimitIsAWriteTheTransactionReadsBack) {
  Database db = testing::open_database();
  const std::string key(kKeyLimit + 8, 'w');
  const std::string key_end = key + std::string(1, '\0');
  const std::size_t range_bytes = key.size() + key_end.size();
  Transaction tr = db.create_transaction();
  const std::size_t before = tr.approximate_size();
  tr.clear(key);
  EXPECT_GE(tr.approximate_size() - before, 2 * range_bytes);
  EXPECT_EQ(tr.get(key), std::nullopt);
  EXPECT_TRUE(tr.get_range(key, key_end).empty());
  EXPECT_TRUE(tr.read_conflict_ranges().empty());
  EXPECT_EQ(tr.write_conflict_ranges(), (std::vector<KeyRange>{{key, key_end}}));
  // Its read conflicts hold nothing a write of the key can meet.
  tr.set("own", "1");
  db.run([&](Transaction& other) { other.add_write_conflict_key(key); });
  EXPECT_NO_THROW(tr.commit());
}

// ---- 2101 transaction_too_large ----------------------------------------------------------

TEST(Limits, TransactionOverTenMillionBytesFailsAtCommit) {
  Database db = testing::open_database();
  Transaction tr = db.create_transaction();
  std::string value(kValueLimit, 'v');
  for (int i = 0; i < 101; ++i) tr.set("big/" + std::to_string(i), value);  // no error yet
  EXPECT_THAT([&] { tr.commit(); }, ThrowsCodeWith(ErrorCode::transaction_too_large, "10000000"));
  EXPECT_EQ(read_key(db, "big/0"), std::nullopt) << "nothing of it was committed";
}

TEST(Limits, TransactionJustUnderTheLimitCommits) {
  Database db = testing::open_database();
  Transaction tr = db.create_transaction();
  std::string value(kValueLimit, 'v');
  for (int i = 0; i < 99; ++i) tr.set("big/" + std::to_string(i), value);
  EXPECT_NO_THROW(tr.commit());
  EXPECT_EQ(read_key(db, "big/98")->size(), kValueLimit);
}

// Read conflict ranges count toward the size, values read do not (FoundationDB:
// fdbclient/NativeAPI.actor.cpp, Transaction::getSize).
TEST(Limits, ReadConflictRangesCountTowardTransactionSize) {
  Database db = testing::open_database();
  Transaction tr = db.create_transaction();
  std::string long_prefix(kKeyLimit - 10, 'r');
  for (int i = 0; i < 600; ++i) {
    std::string b = long_prefix + std::to_string(1000 + i);
    tr.add_read_conflict_range(b, b + "z");
  }
  tr.set("k", "v");
  EXPECT_THAT([&] { tr.commit(); }, ThrowsCode(ErrorCode::transaction_too_large));
}

// ---- 2004 key_outside_legal_range ---------------------------------------------------------

TEST(Limits, KeysStartingWithFFAreOutsideLegalRange) {
  Database db = testing::open_database();
  Transaction tr = db.create_transaction();
  EXPECT_THAT([&] { tr.set("\xff/conf", "v"); },
              ThrowsCodeWith(ErrorCode::key_outside_legal_range, "\\xff/conf"));
  EXPECT_THAT([&] { (void)tr.get("\xff/conf"); },
              ThrowsCodeWith(ErrorCode::key_outside_legal_range, "\\xff/conf"));
  EXPECT_THAT([&] { (void)tr.get("\xff"); }, ThrowsCode(ErrorCode::key_outside_legal_range));
  EXPECT_THAT([&] { (void)tr.snapshot().get("\xff\xff"); },
              ThrowsCode(ErrorCode::key_outside_legal_range));
  EXPECT_THAT([&] { tr.clear("\xff/conf"); }, ThrowsCode(ErrorCode::key_outside_legal_range));
  EXPECT_THAT([&] { tr.add_read_conflict_key("\xff"); },
              ThrowsCode(ErrorCode::key_outside_legal_range));
  EXPECT_THAT([&] { tr.add_read_conflict_key("\xff/conf"); },
              ThrowsCode(ErrorCode::key_outside_legal_range));
  EXPECT_NO_THROW(tr.add_read_conflict_key("\xfe"));
}

TEST(Limits, RangeEndBeyondFFIsOutsideLegalRangeButFFItselfIsAllowed) {
  Database db = testing::open_database();
  apitest::put(db, "\xfe", "last legal");
  Transaction tr = db.create_transaction();
  std::string beyond("\xff\x00", 2);
  EXPECT_THAT([&] { (void)tr.get_range("a", beyond); },
              ThrowsCodeWith(ErrorCode::key_outside_legal_range, "\\xff\\x00"));
  EXPECT_THAT([&] { (void)tr.get_range("a", "\xff\xff", {.reverse = true}); },
              ThrowsCode(ErrorCode::key_outside_legal_range));
  EXPECT_THAT([&] { tr.clear_range("a", beyond); }, ThrowsCode(ErrorCode::key_outside_legal_range));
  EXPECT_THAT([&] { tr.add_read_conflict_range("a", beyond); },
              ThrowsCode(ErrorCode::key_outside_legal_range));
  EXPECT_THAT(tr.get_range("a", "\xff"), ::testing::ElementsAre(KeyValue{"\xfe", "last legal"}));
  EXPECT_NO_THROW(tr.clear_range("", "\xff"));
  EXPECT_NO_THROW(tr.add_read_conflict_range("", "\xff"));
  EXPECT_NO_THROW(tr.add_write_conflict_range("", "\xff"));
}

// ---- 2005 inverted_range -----------------------------------------------------------------

TEST(Limits, BeginAfterEndIsInvertedRangeForClearAndConflictRanges) {
  Database db = testing::open_database();
  Transaction tr = db.create_transaction();
  EXPECT_THAT([&] { tr.clear_range("zz", "aa"); },
              ThrowsCodeWith(ErrorCode::inverted_range, "'zz'"));
  EXPECT_THAT([&] { tr.clear_range(KeyRange{"zz", "aa"}); }, ThrowsCode(ErrorCode::inverted_range));
  EXPECT_THAT([&] { tr.add_read_conflict_range("zz", "aa"); },
              ThrowsCodeWith(ErrorCode::inverted_range, "'aa'"));
  EXPECT_THAT([&] { tr.add_write_conflict_range("zz", "aa"); },
              ThrowsCode(ErrorCode::inverted_range));
  // A read of an inverted range is simply empty (as FoundationDB).
  EXPECT_NO_THROW((void)tr.get_range("zz", "aa"));
}

// ---- 2012 range_limits_invalid -----------------------------------------------------------

TEST(Limits, NegativeLimitIsRangeLimitsInvalid) {
  Database db = testing::open_database();
  Transaction tr = db.create_transaction();
  EXPECT_THAT([&] { (void)tr.get_range("a", "b", {.limit = -1}); },
              ThrowsCodeWith(ErrorCode::range_limits_invalid, "-1"));
  EXPECT_THAT([&] { (void)tr.snapshot().get_range("a", "b", {.limit = -5, .reverse = true}); },
              ThrowsCodeWith(ErrorCode::range_limits_invalid, "-5"));
}

// ---- 1007 transaction_too_old ------------------------------------------------------------

// The window is measured with a coarse clock (the kernel's tick, 10 ms at most on Linux), so
// it is kept well above a tick: a quick transaction never looks too old, and one that
// waits kAged always does.
constexpr std::chrono::milliseconds kShortWindow{40};
constexpr std::chrono::milliseconds kAged{100};

Options short_window() {
  Options o;
  o.mvcc_window = kShortWindow;
  return o;
}

TEST(Limits, ReadAfterTheMvccWindowIsTransactionTooOld) {
  STRATA_SKIP_ON_CLUSTER("the MVCC window is the cluster's (5 s), not Options::mvcc_window");
  Database db = testing::open_database(short_window());
  apitest::put(db, "k", "v");
  Transaction tr = db.create_transaction();
  EXPECT_EQ(tr.get("k"), "v");
  spin_for(kAged);
  EXPECT_THAT([&] { (void)tr.get("k"); },
              ThrowsCodeWith(ErrorCode::transaction_too_old, "mvcc_window"));
  EXPECT_THAT([&] { (void)tr.get_range("a", "z"); }, ThrowsCode(ErrorCode::transaction_too_old));
}

// A transaction left open past its window does not keep the versions it read at: the next
// commits collect them, so an idle transaction cannot make memory grow without bound.
TEST(Limits, AnIdleTransactionPastTheWindowNoLongerHoldsItsVersion) {
  STRATA_SKIP_ON_CLUSTER("the MVCC window is the cluster's (5 s), not Options::mvcc_window");
  Database db = testing::open_database(short_window());
  apitest::put(db, "k", "v1");
  Transaction idle = db.create_transaction();
  EXPECT_EQ(idle.get("k"), "v1");
  const Version held = idle.read_version();
  apitest::put(db, "k", "v2");
  {  // within the window the version is kept: another transaction can still read at it
    Transaction t = db.create_transaction();
    t.set_read_version(held);
    EXPECT_EQ(t.get("k"), "v1");
  }
  spin_for(kAged);
  // Revocation is looked at every 64 commits, and a collection of overwrites alone may wait
  // up to seven more (docs/decisions/0041): then one collects past the version.
  for (int i = 0; i < 100; ++i) apitest::put(db, "k", "v3");
  Transaction late = db.create_transaction();
  EXPECT_THAT([&] { late.set_read_version(held); }, ThrowsCode(ErrorCode::transaction_too_old));
  EXPECT_THAT([&] { (void)idle.get("k"); }, ThrowsCode(ErrorCode::transaction_too_old));
  EXPECT_EQ(read_key(db, "k"), "v3");
}

// A read under way when the window ends keeps its version until it is over: the rows a
// visitor sees stay valid and consistent while other transactions overwrite them (under
// AddressSanitizer a freed record would be reported).
TEST(Limits, AReadUnderWayKeepsItsVersionPastTheWindow) {
  STRATA_SKIP_ON_CLUSTER("the MVCC window is the cluster's (5 s), not Options::mvcc_window");
  Database db = testing::open_database(short_window());
  db.run([](Transaction& tr) {
    for (int i = 0; i < 50; ++i) tr.set("k" + std::to_string(100 + i), "old");
  });
  Transaction tr = db.create_transaction();
  int rows = 0;
  tr.visit_range("k", "l", {}, [&](std::string_view, std::string_view value) {
    EXPECT_EQ(value, "old");
    if (rows++ == 0) {
      spin_for(kAged);
      for (int round = 0; round < 70; ++round) {  // collection revokes every 64 commits
        db.run([&](Transaction& w) {
          for (int i = 0; i < 50; ++i) w.set("k" + std::to_string(100 + i), std::string(90, 'n'));
        });
      }
    }
  });
  EXPECT_EQ(rows, 50);
  EXPECT_THAT([&] { (void)tr.get("k100"); }, ThrowsCode(ErrorCode::transaction_too_old));
  EXPECT_EQ(read_key(db, "k100"), std::string(90, 'n'));
}

TEST(Limits, CommitOfAnAgedReaderIsTransactionTooOld) {
  STRATA_SKIP_ON_CLUSTER("the MVCC window is the cluster's (5 s), not Options::mvcc_window");
  Database db = testing::open_database(short_window());
  Transaction tr = db.create_transaction();
  (void)tr.get("k");
  tr.set("k", "v");
  spin_for(kAged);
  EXPECT_THAT([&] { tr.commit(); }, ThrowsCode(ErrorCode::transaction_too_old));
  EXPECT_EQ(read_key(db, "k"), std::nullopt);
}

TEST(Limits, AgedWriteOnlyTransactionIsNeverTooOld) {
  Database db = testing::open_database(short_window());
  Transaction tr = db.create_transaction();
  tr.set("k", "v");
  spin_for(kAged);
  EXPECT_NO_THROW(tr.commit());
  EXPECT_GT(tr.committed_version(), 0);
}

// Too-old at commit needs read conflict ranges (FoundationDB: fdbclient/NativeAPI.actor.cpp,
// Transaction::getSize): snapshot reads add none, so an aged snapshot reader that writes still
// commits.
TEST(Limits, AgedSnapshotReaderWithWritesIsNotTooOld) {
  Database db = testing::open_database(short_window());
  Transaction tr = db.create_transaction();
  (void)tr.snapshot().get("k");
  tr.set("k", "v");
  spin_for(kAged);
  EXPECT_NO_THROW(tr.commit());
  EXPECT_EQ(read_key(db, "k"), "v");
}

// A read answered entirely from the transaction's own writes needs no store version.
TEST(Limits, AgedReadOfOwnWriteIsNotTooOld) {
  Database db = testing::open_database(short_window());
  Transaction tr = db.create_transaction();
  (void)tr.get("other");
  tr.set("k", "v");
  spin_for(kAged);
  EXPECT_EQ(tr.get("k"), "v");
}

TEST(Limits, TooOldIsRetriedByRun) {
  STRATA_SKIP_ON_CLUSTER("the MVCC window is the cluster's (5 s), not Options::mvcc_window");
  Database db = testing::open_database(short_window());
  int attempts = 0;
  db.run([&](Transaction& tr) {
    ++attempts;
    (void)tr.get("k");
    if (attempts == 1) spin_for(kAged);
    tr.set("k", "v");
  });
  EXPECT_EQ(attempts, 2);
  EXPECT_EQ(read_key(db, "k"), "v");
}

// ---- 1025, 2017, 1031 --------------------------------------------------------------------

TEST(Limits, CancelledTransactionNamesTheCancellation) {
  Database db = testing::open_database();
  Transaction tr = db.create_transaction();
  tr.cancel();
  EXPECT_THAT([&] { (void)tr.get("k"); },
              ThrowsCodeWith(ErrorCode::transaction_cancelled, "transaction_cancelled"));
  EXPECT_THAT([&] { tr.commit(); }, ThrowsCodeWith(ErrorCode::transaction_cancelled, "cancel"));
}

TEST(Limits, UseAfterCommitIsUsedDuringCommit) {
  Database db = testing::open_database();
  Transaction tr = db.create_transaction();
  tr.set("k", "v");
  tr.commit();
  EXPECT_THAT([&] { tr.set("k", "w"); },
              ThrowsCodeWith(ErrorCode::used_during_commit, "used_during_commit"));
  EXPECT_THAT([&] { (void)tr.get("k"); }, ThrowsCodeWith(ErrorCode::used_during_commit, "commit"));
}

TEST(Limits, TimedOutNamesTheTimeout) {
  Database db = testing::open_database();
  Transaction tr = db.create_transaction();
  tr.set_timeout(std::chrono::milliseconds(1));
  spin_for(std::chrono::milliseconds(2));
  EXPECT_THAT([&] { (void)tr.get("k"); }, ThrowsCodeWith(ErrorCode::transaction_timed_out, "1 ms"));
}

TEST(Limits, VersionstampErrorsNameTheirCause) {
  Database db = testing::open_database();
  Transaction tr = db.create_transaction();
  EXPECT_THAT([&] { (void)tr.versionstamp(); },
              ThrowsCodeWith(ErrorCode::client_invalid_operation, "versionstamp"));
  tr.commit();
  EXPECT_THAT([&] { (void)tr.versionstamp(); },
              ThrowsCodeWith(ErrorCode::no_commit_version, "read-only"));
}

// Retryability is part of each code's contract (api-error-codes.rst: 1007, 1020 and 1021; and 1042,
// a commit refused for memory, docs/decisions/0032).
TEST(Limits, OnlyTooOldNotCommittedAndUnknownResultAreRetryable) {
  for (ErrorCode c :
       {ErrorCode::transaction_too_old, ErrorCode::not_committed, ErrorCode::commit_unknown_result,
        ErrorCode::commit_proxy_memory_limit_exceeded}) {
    EXPECT_TRUE(Error(c).retryable()) << static_cast<int>(c);
  }
  for (ErrorCode c :
       {ErrorCode::transaction_cancelled, ErrorCode::transaction_timed_out,
        ErrorCode::client_invalid_operation, ErrorCode::key_outside_legal_range,
        ErrorCode::inverted_range, ErrorCode::range_limits_invalid, ErrorCode::used_during_commit,
        ErrorCode::no_commit_version, ErrorCode::transaction_too_large, ErrorCode::key_too_large,
        ErrorCode::value_too_large}) {
    EXPECT_FALSE(Error(c).retryable()) << static_cast<int>(c);
  }
}

// FoundationDB marks the commit started before its size and age checks, and (API 410 on)
// a failed commit leaves it so: every operation throws used_during_commit (2017) until
// reset or on_error, and the transaction's watches fail with the commit's error. strata
// left a transaction refused by these checks usable (its writes could be trimmed and
// committed) and its watches pending.
TEST(Limits, ACommitTooLargeEndsTheTransactionAndFailsItsWatches) {
  Database db = testing::open_database();
  Transaction tr = db.create_transaction();
  Watch w = tr.watch("w");
  std::string value(kValueLimit, 'v');
  for (int i = 0; i < 101; ++i) tr.set("big/" + std::to_string(i), value);
  EXPECT_THAT([&] { tr.commit(); }, ThrowsCode(ErrorCode::transaction_too_large));
  EXPECT_THAT([&] { w.wait_for(std::chrono::milliseconds(0)); },
              ThrowsCode(ErrorCode::transaction_too_large));
  EXPECT_THAT([&] { tr.clear_range("big/", "big0"); }, ThrowsCode(ErrorCode::used_during_commit));
  EXPECT_THAT([&] { tr.commit(); }, ThrowsCode(ErrorCode::used_during_commit));
  tr.reset();  // and then it is usable again
  tr.set("small", "v");
  tr.commit();
  EXPECT_EQ(read_key(db, "small"), "v");
}

// FoundationDB's SIZE_LIMIT: a lower limit refuses the commit as the default one does
// (the transaction ends, its watches fail). It is not a persistent option
// (fdbclient/vexillographer/fdb.options): on_error's retry, like reset, restores the
// default.
TEST(Limits, ASizeLimitOfItsOwnRefusesTheCommitAsTheDefaultDoes) {
  Database db = testing::open_database();
  Transaction tr = db.create_transaction();
  EXPECT_THAT([&] { tr.set_size_limit(31); }, ThrowsCode(ErrorCode::invalid_argument));
  EXPECT_THAT([&] { tr.set_size_limit(10'000'001); }, ThrowsCode(ErrorCode::invalid_argument));
  tr.set_size_limit(100);
  Watch w = tr.watch("w");
  tr.set("big", std::string(200, 'v'));
  EXPECT_THAT([&] { tr.commit(); }, ThrowsCode(ErrorCode::transaction_too_large));
  EXPECT_THAT([&] { w.wait_for(std::chrono::milliseconds(0)); },
              ThrowsCode(ErrorCode::transaction_too_large));
  EXPECT_THAT([&] { tr.commit(); }, ThrowsCode(ErrorCode::used_during_commit));

  tr.on_error(Error(ErrorCode::not_committed, "retry"));  // restores the default
  tr.set("big", std::string(200, 'v'));
  tr.commit();
  EXPECT_EQ(read_key(db, "big"), std::string(200, 'v'));
  tr.reset();
  tr.set_size_limit(100);
  tr.set("big", std::string(200, 'w'));
  EXPECT_THAT([&] { tr.commit(); }, ThrowsCode(ErrorCode::transaction_too_large));
  tr.reset();  // restores the default
  tr.set("big", std::string(200, 'w'));
  tr.commit();
  EXPECT_EQ(read_key(db, "big"), std::string(200, 'w'));
}

TEST(Limits, ACommitTooOldEndsTheTransactionAndFailsItsWatches) {
  STRATA_SKIP_ON_CLUSTER("the MVCC window is the cluster's (5 s), not Options::mvcc_window");
  Database db = testing::open_database(short_window());
  Transaction tr = db.create_transaction();
  (void)tr.get("k");
  Watch w = tr.watch("w");
  tr.set("k", "v");
  spin_for(kAged);
  EXPECT_THAT([&] { tr.commit(); }, ThrowsCode(ErrorCode::transaction_too_old));
  EXPECT_THAT([&] { w.wait_for(std::chrono::milliseconds(0)); },
              ThrowsCode(ErrorCode::transaction_too_old));
  EXPECT_THAT([&] { tr.set("k2", "v"); }, ThrowsCode(ErrorCode::used_during_commit));
  tr.on_error(Error(ErrorCode::transaction_too_old, ""));  // retryable: ready again
  tr.set("k", "v");
  tr.commit();
  EXPECT_EQ(read_key(db, "k"), "v");
}

// FoundationDB's size check counts the read conflicts its commit sends, merged: a key read
// 6,000 times counts once (counted per read, it would be 12 MB here, over the limit).
TEST(Limits, ReadingOneKeyAgainCountsItsConflictOnceTowardTheSize) {
  Database db = testing::open_database();
  Transaction tr = db.create_transaction();
  const std::string key(1000, 'k');
  for (int i = 0; i < 6000; ++i) (void)tr.get(key);
  for (int i = 0; i < 6000; ++i) (void)tr.get_range(key, key + "\x01", {.limit = 1});
  tr.set("x", "y");
  EXPECT_NO_THROW(tr.commit());
  EXPECT_EQ(read_key(db, "x"), "y");
}

// The read version is taken at the first read (FoundationDB: fdbclient/ReadYourWrites.cpp, the read
// version is fetched by the first read). A versionstamped key needs the lowest stamp its commit
// could get, and took a read version for it: later reads then missed commits made in between, and
// set_read_version failed (2010).
TEST(Limits, AVersionstampedKeyDoesNotFixTheReadVersion) {
  Database db = testing::open_database();
  const std::string stamped_key =
      std::string("s") + std::string(10, '\0') + std::string("\x01\x00\x00\x00", 4);
  Transaction tr = db.create_transaction();
  tr.atomic_op(MutationType::set_versionstamped_key, stamped_key, "v");
  apitest::put(db, "x", "1");
  EXPECT_EQ(tr.get("x"), "1");
  tr.commit();

  Transaction tr2 = db.create_transaction();
  tr2.atomic_op(MutationType::set_versionstamped_key, stamped_key, "w");
  EXPECT_NO_THROW(tr2.set_read_version(db.committed_version()));
  tr2.commit();
}

}  // namespace
}  // namespace strata
