// A transaction's life through the public API: Database::run and on_error (the retry loop,
// its limits and backoff), database-wide defaults, reset, cancel, timeout, use after
// commit, versionstamps, MVCC snapshots across history, and the handles' ownership.
#include <chrono>
#include <optional>
#include <stdexcept>
#include <string>
#include <thread>
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

using apitest::five_rows;
using apitest::keys_of;
using apitest::put;
using apitest::read_key;
using apitest::spin_for;
using ::testing::ElementsAre;
using testing::ThrowsCode;

// ---- Database::run ------------------------------------------------------------------

TEST(DatabaseRun, ReturnsTheValueOfF) {
  Database db = five_rows();
  std::string got = db.run([](Transaction& tr) { return *tr.get("a1") + "!"; });
  EXPECT_EQ(got, "va1!");
}

TEST(DatabaseRun, CommitsTheWritesOfF) {
  Database db = testing::open_database();
  db.run([](Transaction& tr) { tr.set("k", "v"); });
  EXPECT_EQ(read_key(db, "k"), "v");
}

TEST(DatabaseRun, RetriesNotCommittedUntilCommitSucceeds) {
  Database db = testing::open_database();
  put(db, "counter", "0");
  int attempts = 0;
  int result = db.run([&](Transaction& tr) {
    ++attempts;
    int value = std::stoi(*tr.get("counter"));
    if (attempts == 1) put(db, "counter", "10");  // a concurrent commit: this attempt conflicts
    tr.set("counter", std::to_string(value + 1));
    return value + 1;
  });
  EXPECT_EQ(attempts, 2);
  EXPECT_EQ(result, 11);
  EXPECT_EQ(read_key(db, "counter"), "11");
}

TEST(DatabaseRun, NonRetryableErrorPropagatesAfterOneAttempt) {
  Database db = testing::open_database();
  int attempts = 0;
  EXPECT_THAT(
      [&] {
        db.run([&](Transaction& tr) {
          ++attempts;
          tr.set("\xff/system", "x");
        });
      },
      ThrowsCode(ErrorCode::key_outside_legal_range));
  EXPECT_EQ(attempts, 1);
}

TEST(DatabaseRun, ForeignExceptionPropagatesAndNothingCommits) {
  Database db = testing::open_database();
  EXPECT_THROW(db.run([](Transaction& tr) {
    tr.set("k", "v");
    throw std::runtime_error("application failure");
  }),
               std::runtime_error);
  EXPECT_EQ(read_key(db, "k"), std::nullopt);
}

// ---- on_error, reset, cancel, timeout -----------------------------------------------

TEST(OnError, RethrowsNonRetryableErrors) {
  Database db = testing::open_database();
  for (ErrorCode c : {ErrorCode::key_too_large, ErrorCode::transaction_cancelled,
                      ErrorCode::transaction_timed_out, ErrorCode::used_during_commit,
                      ErrorCode::inverted_range}) {
    Transaction tr = db.create_transaction();  // a rethrow cancels it (below)
    EXPECT_THAT([&] { tr.on_error(Error(c)); }, ThrowsCode(c));
  }
}

// on_error(success) is misuse, client_invalid_operation (2000), as FoundationDB's
// (fdbclient/NativeAPI.actor.cpp, Transaction::onError) and strata's C API answer; it is
// not "rethrown" as an error.
TEST(OnError, SuccessIsClientInvalidOperation) {
  Database db = testing::open_database();
  Transaction tr = db.create_transaction();
  EXPECT_THAT([&] { tr.on_error(Error(ErrorCode::success)); },
              ThrowsCode(ErrorCode::client_invalid_operation));
}

// FoundationDB's client (fdbclient/ReadYourWrites.actor.cpp, RYWImpl::onError, API 610 on):
// when on_error rethrows (an error that is not retryable, or the retry limit reached) the
// transaction stays cancelled until reset(), so its writes cannot be committed by mistake. The C
// API does the same (tests/fdb_c, OnError.GivingTheErrorBackCancelsTheTransactionUntilReset).
TEST(OnError, RethrowingLeavesTheTransactionCancelledUntilReset) {
  Database db = testing::open_database();
  Transaction tr = db.create_transaction();
  tr.set("k", "half done");
  EXPECT_THAT([&] { tr.on_error(Error(ErrorCode::value_too_large)); },
              ThrowsCode(ErrorCode::value_too_large));
  EXPECT_THAT([&] { tr.commit(); }, ThrowsCode(ErrorCode::transaction_cancelled));
  EXPECT_THAT([&] { tr.on_error(Error(ErrorCode::not_committed)); },
              ThrowsCode(ErrorCode::transaction_cancelled));
  tr.reset();
  tr.commit();
  EXPECT_EQ(read_key(db, "k"), std::nullopt);
}

TEST(OnError, RetryableErrorResetsTheTransaction) {
  Database db = testing::open_database();
  put(db, "k", "old");
  for (ErrorCode c : {ErrorCode::not_committed, ErrorCode::transaction_too_old,
                      ErrorCode::commit_unknown_result}) {
    Transaction tr = db.create_transaction();
    Version rv = tr.read_version();
    tr.set("k", "discarded");
    tr.set("other", "discarded");
    put(db, "k", "newer");
    tr.on_error(Error(c));
    EXPECT_EQ(tr.get("other"), std::nullopt) << static_cast<int>(c);
    EXPECT_EQ(tr.get("k"), "newer") << "a fresh read version after the retry";
    EXPECT_GT(tr.read_version(), rv);
    tr.commit();
    EXPECT_EQ(tr.committed_version(), -1) << "the discarded writes were not committed";
  }
}

// A transaction keeps its writes and point reads in an arena with a small inline buffer;
// these outgrow it many times over, across retries and a reset.
TEST(OnError, WritesBeyondTheTransactionArenaSurviveRetriesAndReset) {
  Database db = testing::open_database();
  Transaction tr = db.create_transaction();
  auto key = [](int i) { return "key" + std::to_string(i); };
  for (int round = 0; round < 3; ++round) {
    const std::string value(300 + round, static_cast<char>('a' + round));
    for (int i = 0; i < 200; ++i) {
      (void)tr.get("read" + std::to_string(i));
      tr.set(key(i), value);
    }
    EXPECT_EQ(tr.get(key(199)), value);
    EXPECT_EQ(tr.get_range("key", "kez").size(), 200u);
    if (round == 0) tr.on_error(Error(ErrorCode::not_committed));
    if (round == 1) tr.reset();
  }
  tr.commit();
  Transaction check = db.create_transaction();
  std::vector<KeyValue> rows = check.get_range("key", "kez");
  ASSERT_EQ(rows.size(), 200u);
  for (const KeyValue& row : rows) EXPECT_EQ(row.value, std::string(302, 'c')) << row.key;
}

TEST(OnError, RetryAfterConflictCanCommit) {
  Database db = testing::open_database();
  Transaction tr = db.create_transaction();
  (void)tr.get("k");
  put(db, "k", "concurrent");
  tr.set("k", "mine");
  try {
    tr.commit();
    FAIL() << "expected not_committed";
  } catch (const Error& e) {
    ASSERT_EQ(e.code(), 1020);
    tr.on_error(e);
  }
  EXPECT_EQ(tr.get("k"), "concurrent");
  tr.set("k", "mine");
  tr.commit();
  EXPECT_EQ(read_key(db, "k"), "mine");
}

TEST(OnError, RetryLimitRethrowsTheErrorGivenOnceTheRetriesAreUsed) {
  Database db = testing::open_database();
  Transaction tr = db.create_transaction();
  tr.set_retry_limit(2);
  tr.set_max_retry_delay(std::chrono::milliseconds(1));
  tr.on_error(Error(ErrorCode::not_committed));
  tr.on_error(Error(ErrorCode::transaction_too_old));  // the limit survives the retries
  EXPECT_THAT([&] { tr.on_error(Error(ErrorCode::commit_unknown_result)); },
              ThrowsCode(ErrorCode::commit_unknown_result));
}

TEST(OnError, RetryLimitZeroRetriesNothingAndResetRestoresNoLimit) {
  Database db = testing::open_database();
  Transaction tr = db.create_transaction();
  tr.set_retry_limit(0);
  EXPECT_THAT([&] { tr.on_error(Error(ErrorCode::not_committed)); },
              ThrowsCode(ErrorCode::not_committed));
  tr.reset();  // the limit and the count start over
  tr.set_max_retry_delay(std::chrono::milliseconds(0));
  for (int i = 0; i < 20; ++i) EXPECT_NO_THROW(tr.on_error(Error(ErrorCode::not_committed))) << i;
}

TEST(OnError, RetryLimitAndDelayRejectBadValues) {
  Database db = testing::open_database();
  Transaction tr = db.create_transaction();
  EXPECT_THAT([&] { tr.set_retry_limit(-2); }, ThrowsCode(ErrorCode::invalid_argument));
  EXPECT_THAT([&] { tr.set_max_retry_delay(std::chrono::milliseconds(-1)); },
              ThrowsCode(ErrorCode::invalid_argument));
  EXPECT_NO_THROW(tr.set_retry_limit(-1));  // no limit
}

// With a maximum of 0, only the first retry waits (a random part of 10 ms, as
// FoundationDB's): forty retries take nowhere near the ~20 s the default 1 s maximum gives.
TEST(OnError, MaxRetryDelayCapsTheBackoffFromTheSecondRetry) {
  Database db = testing::open_database();
  Transaction tr = db.create_transaction();
  tr.set_max_retry_delay(std::chrono::milliseconds(0));
  const auto start = std::chrono::steady_clock::now();
  for (int i = 0; i < 40; ++i) tr.on_error(Error(ErrorCode::not_committed));
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(2));
}

// The first retry's backoff is not capped: twenty first retries under a maximum of 0 wait
// ~100 ms in all (under 20 ms has probability ~4e-13); capped, they would not wait.
TEST(OnError, FirstRetryWaitsPartOfTenMillisecondsWhateverTheMaximum) {
  Database db = testing::open_database();
  const auto start = std::chrono::steady_clock::now();
  for (int i = 0; i < 20; ++i) {
    Transaction tr = db.create_transaction();
    tr.set_max_retry_delay(std::chrono::milliseconds(0));
    tr.on_error(Error(ErrorCode::not_committed));
  }
  EXPECT_GE(std::chrono::steady_clock::now() - start, std::chrono::milliseconds(20));
}

// Delays of up to a minute were allowed; the 200 ms timeout ends the retrying at its
// deadline, not after the backoff that spans it.
TEST(OnError, TimeoutCutsADelayShort) {
  Database db = testing::open_database();
  Transaction tr = db.create_transaction();
  tr.set_timeout(std::chrono::milliseconds(200));
  tr.set_max_retry_delay(std::chrono::minutes(1));
  const auto start = std::chrono::steady_clock::now();
  EXPECT_THAT(
      [&] {
        for (int i = 0; i < 40; ++i) tr.on_error(Error(ErrorCode::not_committed));
      },
      ThrowsCode(ErrorCode::transaction_timed_out));
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(5));
}

TEST(DatabaseRun, StopsAtTheRetryLimitItsBodySets) {
  Database db = testing::open_database();
  int attempts = 0;
  EXPECT_THAT(
      [&] {
        db.run([&](Transaction& tr) {
          tr.set_retry_limit(3);
          tr.set_max_retry_delay(std::chrono::milliseconds(1));
          ++attempts;
          throw Error(ErrorCode::not_committed);
        });
      },
      ThrowsCode(ErrorCode::not_committed));
  EXPECT_EQ(attempts, 4);  // the first attempt and three retries
}

// ---- Database-wide transaction defaults (Options::transaction_*) ----------------------

Options retry_defaults(int limit,
                       std::chrono::milliseconds max_delay = std::chrono::milliseconds(1)) {
  Options o;
  o.transaction_retry_limit = limit;
  o.transaction_max_retry_delay = max_delay;
  return o;
}

Options timeout_default(std::chrono::milliseconds timeout) {
  Options o;
  o.transaction_timeout = timeout;
  return o;
}

TEST(DatabaseDefaults, RetryLimitBoundsEveryRunAndEveryTransaction) {
  Database db = testing::open_database(retry_defaults(2));
  int attempts = 0;
  EXPECT_THAT(
      [&] {
        db.run([&](Transaction&) {
          ++attempts;
          throw Error(ErrorCode::not_committed);
        });
      },
      ThrowsCode(ErrorCode::not_committed));
  EXPECT_EQ(attempts, 3);
  Transaction tr = db.create_transaction();
  tr.on_error(Error(ErrorCode::not_committed));
  tr.on_error(Error(ErrorCode::not_committed));
  EXPECT_THAT([&] { tr.on_error(Error(ErrorCode::not_committed)); },
              ThrowsCode(ErrorCode::not_committed));
}

TEST(DatabaseDefaults, TheTransactionsOwnSettingWinsUntilReset) {
  Database db = testing::open_database(retry_defaults(1));
  Transaction tr = db.create_transaction();
  tr.set_retry_limit(-1);
  for (int i = 0; i < 5; ++i) EXPECT_NO_THROW(tr.on_error(Error(ErrorCode::not_committed))) << i;
  tr.reset();  // back to the database's limit of 1, and a count of 0
  tr.on_error(Error(ErrorCode::not_committed));
  EXPECT_THAT([&] { tr.on_error(Error(ErrorCode::not_committed)); },
              ThrowsCode(ErrorCode::not_committed));
}

// A destroyed transaction is kept as the thread's spare and reused by the next one, on
// whichever database: each takes its own database's defaults.
TEST(DatabaseDefaults, AReusedTransactionTakesTheNewDatabasesDefaults) {
  Database limited = testing::open_database(retry_defaults(0));
  Database free = testing::open_database(retry_defaults(-1, std::chrono::milliseconds(0)));
  for (int round = 0; round < 3; ++round) {
    {
      Transaction tr = limited.create_transaction();
      EXPECT_THAT([&] { tr.on_error(Error(ErrorCode::not_committed)); },
                  ThrowsCode(ErrorCode::not_committed));
    }
    Transaction tr = free.create_transaction();
    for (int i = 0; i < 5; ++i) EXPECT_NO_THROW(tr.on_error(Error(ErrorCode::not_committed)));
  }
}

TEST(DatabaseDefaults, TimeoutAppliesFromCreationAndCanBeLifted) {
  Database db = testing::open_database(timeout_default(std::chrono::milliseconds(300)));
  Transaction timed = db.create_transaction();
  Transaction lifted = db.create_transaction();
  lifted.set_timeout(std::chrono::milliseconds(0));
  spin_for(std::chrono::milliseconds(320));
  EXPECT_THAT([&] { (void)timed.get("k"); }, ThrowsCode(ErrorCode::transaction_timed_out));
  EXPECT_EQ(lifted.get("k"), std::nullopt);
  timed.reset();  // the clock starts again, with the database's 300 ms
  EXPECT_EQ(timed.get("k"), std::nullopt);
}

TEST(DatabaseDefaults, BadValuesAreRefusedAtOpen) {
  EXPECT_THAT([] { (void)testing::open_database(timeout_default(std::chrono::milliseconds(-1))); },
              ThrowsCode(ErrorCode::invalid_argument));
  EXPECT_THAT([] { (void)testing::open_database(retry_defaults(-2)); },
              ThrowsCode(ErrorCode::invalid_argument));
  EXPECT_THAT(
      [] { (void)testing::open_database(retry_defaults(-1, std::chrono::milliseconds(-1))); },
      ThrowsCode(ErrorCode::invalid_argument));
  EXPECT_NO_THROW((void)testing::open_database(retry_defaults(-1, std::chrono::milliseconds(0))));
}

TEST(Reset, DiscardsWritesAndReadVersion) {
  Database db = testing::open_database();
  Transaction tr = db.create_transaction();
  tr.set("k", "v");
  Version rv = tr.read_version();
  put(db, "other", "x");
  tr.reset();
  EXPECT_EQ(tr.get("k"), std::nullopt);
  EXPECT_GT(tr.read_version(), rv);
  tr.commit();
  EXPECT_EQ(read_key(db, "k"), std::nullopt);
}

TEST(Reset, MakesACommittedTransactionReusable) {
  Database db = testing::open_database();
  Transaction tr = db.create_transaction();
  tr.set("a", "1");
  tr.commit();
  Version first = tr.committed_version();
  tr.reset();
  tr.set("b", "2");
  tr.commit();
  EXPECT_GT(tr.committed_version(), first);
  EXPECT_EQ(read_key(db, "b"), "2");
}

TEST(Cancel, EveryLaterOperationThrowsTransactionCancelled) {
  Database db = five_rows();
  Transaction tr = db.create_transaction();
  tr.set("a1", "never");
  tr.cancel();
  EXPECT_THAT([&] { (void)tr.get("a1"); }, ThrowsCode(ErrorCode::transaction_cancelled));
  EXPECT_THAT([&] { (void)tr.get_range("a", "b"); }, ThrowsCode(ErrorCode::transaction_cancelled));
  EXPECT_THAT([&] { (void)tr.snapshot().get("a1"); }, ThrowsCode(ErrorCode::transaction_cancelled));
  EXPECT_THAT([&] { tr.set("x", "y"); }, ThrowsCode(ErrorCode::transaction_cancelled));
  EXPECT_THAT([&] { tr.clear("x"); }, ThrowsCode(ErrorCode::transaction_cancelled));
  EXPECT_THAT([&] { tr.clear_range("a", "b"); }, ThrowsCode(ErrorCode::transaction_cancelled));
  EXPECT_THAT([&] { (void)tr.read_version(); }, ThrowsCode(ErrorCode::transaction_cancelled));
  EXPECT_THAT([&] { tr.commit(); }, ThrowsCode(ErrorCode::transaction_cancelled));
  EXPECT_EQ(read_key(db, "a1"), "va1") << "a cancelled transaction's writes never commit";
}

// on_error is one of the operations a cancel() refuses until reset() (FoundationDB's onError
// fails with transaction_cancelled once the transaction was cancelled): a retry loop must
// not bring a cancelled transaction back to life.
TEST(Cancel, OnErrorDoesNotClearTheCancellation) {
  Database db = testing::open_database();
  Transaction tr = db.create_transaction();
  tr.set_max_retry_delay(std::chrono::milliseconds(0));
  tr.cancel();
  EXPECT_THAT([&] { tr.on_error(Error(ErrorCode::not_committed)); },
              ThrowsCode(ErrorCode::transaction_cancelled));
  EXPECT_THAT([&] { (void)tr.get("k"); }, ThrowsCode(ErrorCode::transaction_cancelled));
  EXPECT_THAT([&] { tr.commit(); }, ThrowsCode(ErrorCode::transaction_cancelled));
}

TEST(Cancel, ResetClearsTheCancellation) {
  Database db = testing::open_database();
  Transaction tr = db.create_transaction();
  tr.set("k", "before-cancel");
  tr.cancel();
  tr.reset();
  EXPECT_EQ(tr.get("k"), std::nullopt);
  tr.set("k", "after-reset");
  tr.commit();
  EXPECT_EQ(read_key(db, "k"), "after-reset");
}

// A destroyed transaction becomes its thread's spare for the next create_transaction():
// the next one must start as new, whichever database it is on.
TEST(Reset, ANewTransactionStartsCleanAfterAFinishedOne) {
  STRATA_SKIP_ON_CLUSTER("two databases opened at once are one cluster");
  Database first = five_rows();
  Database second = testing::open_database();
  put(second, "only", "second");
  {
    Transaction tr = first.create_transaction();
    tr.set_read_your_writes(false);
    tr.set("pending", "never committed");
    (void)tr.get("a1");
    tr.set_timeout(std::chrono::milliseconds(1));
  }
  Transaction tr = second.create_transaction();
  EXPECT_EQ(tr.get("pending"), std::nullopt);
  EXPECT_EQ(tr.get("a1"), std::nullopt) << "reads the second database";
  EXPECT_EQ(tr.get("only"), "second");
  tr.set("mine", "x");
  EXPECT_EQ(tr.get("mine"), "x") << "read-your-writes is back on";
  spin_for(std::chrono::milliseconds(5));
  EXPECT_NO_THROW(tr.commit()) << "the timeout was not carried over";
  EXPECT_EQ(read_key(second, "mine"), "x");
  EXPECT_EQ(read_key(first, "mine"), std::nullopt);
}

// The next transaction on the same database starts as a new one: none of the last one's
// writes, read version or options, and a timeout counted from its own start (in process,
// the thread's spare strata transaction is reused; FoundationDB counts a transaction's
// timeout from its creation or reset: ReadYourWritesTransaction's creationTime, from which
// the TIMEOUT option counts, fdbclient/ReadYourWrites.actor.cpp).
TEST(Reset, ANewTransactionOnTheSameDatabaseStartsClean) {
  Database db = five_rows();
  for (const bool commit_first : {false, true}) {
    SCOPED_TRACE(commit_first ? "after a commit" : "after an abandoned transaction");
    {
      Transaction tr = db.create_transaction();
      tr.set_read_your_writes(false);
      tr.set_size_limit(64);
      (void)tr.get("a1");  // fixes the read version
      tr.set(commit_first ? "committed" : "pending", "x");
      if (commit_first) tr.commit();
    }
    put(db, "a1", commit_first ? "second" : "first");  // after that read version
    constexpr std::chrono::milliseconds kTimeout(1000);
    // Time passes (not a synchronisation): longer than the next transaction's timeout.
    std::this_thread::sleep_for(kTimeout + std::chrono::milliseconds(100));
    Transaction tr = db.create_transaction();
    tr.set_timeout(kTimeout);
    EXPECT_EQ(tr.get("a1"), commit_first ? "second" : "first") << "a read version of its own";
    EXPECT_EQ(tr.get("pending"), std::nullopt);
    tr.set("mine", std::string(100, 'm'));  // over the last one's size limit of 64 bytes
    EXPECT_EQ(tr.get("mine"), std::string(100, 'm')) << "read-your-writes is back on";
    EXPECT_NO_THROW(tr.commit()) << "neither the timeout nor the size limit carried over";
  }
  EXPECT_EQ(read_key(db, "committed"), "x");
  EXPECT_EQ(read_key(db, "pending"), std::nullopt);
}

// A thread's spare keeps its reader slot for the next transaction on the same database.
// Alternating between two databases, and closing one while the spare still holds a slot
// of it, must leave every read and write where it belongs (ASan: no slot of a closed
// database is touched).
TEST(Reset, AlternatingDatabasesOnOneThread) {
  STRATA_SKIP_ON_CLUSTER("two databases opened at once are one cluster");
  Database kept = testing::open_database();
  for (int round = 0; round < 3; ++round) {
    Database closed_later = testing::open_database();
    for (int i = 0; i < 100; ++i) {
      put(kept, "k", std::to_string(i));
      put(closed_later, "k", "other " + std::to_string(i));
      EXPECT_EQ(read_key(kept, "k"), std::to_string(i));
      EXPECT_EQ(read_key(closed_later, "k"), "other " + std::to_string(i));
    }
  }  // the spare's last transaction was on closed_later
  put(kept, "after", "close");
  EXPECT_EQ(read_key(kept, "after"), "close");
  std::thread([&kept] { put(kept, "thread", "exits holding a slot"); }).join();
  EXPECT_EQ(read_key(kept, "thread"), "exits holding a slot");
}

// Threads that finish transactions and exit: each thread's spare is freed at its exit
// (LeakSanitizer), and the database outlives none of it.
TEST(Reset, ThreadsThatExitFreeTheirSpareTransactions) {
  Database db = testing::open_database();
  std::vector<std::thread> threads;
  threads.reserve(4);
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&db, t] {
      for (int i = 0; i < 10; ++i) put(db, "t" + std::to_string(t), std::to_string(i));
    });
  }
  for (auto& th : threads) th.join();
  for (int t = 0; t < 4; ++t) EXPECT_EQ(read_key(db, "t" + std::to_string(t)), "9");
}

// A transaction made on one thread and destroyed on another becomes the second thread's
// spare; both threads go on making transactions (ASan, TSan).
TEST(Reset, ATransactionMayEndOnAnotherThread) {
  Database db = testing::open_database();
  Transaction made_here = db.create_transaction();
  made_here.set("k", "v");
  std::thread other([moved = std::move(made_here), &db]() mutable {
    moved.commit();
    { Transaction ends_here = std::move(moved); }
    put(db, "other", "done");
  });
  other.join();
  EXPECT_EQ(read_key(db, "k"), "v");
  EXPECT_EQ(read_key(db, "other"), "done");
}

// A transaction that ends with a pending watch fails it (transaction_cancelled) as it
// becomes the thread's spare, and the watch's listener runs there. A listener that ends
// another transaction makes that one the spare first: the first is then destroyed, and
// neither is lost (LeakSanitizer).
TEST(Reset, AWatchListenerMayEndAnotherTransactionAsItsOwnEnds) {
  STRATA_SKIP_ON_CLUSTER("a cluster's watch listeners run on its client's thread");
  Database db = testing::open_database();
  std::optional<Transaction> other(db.create_transaction());
  other->set("other", "never committed");
  std::optional<Watch> watch;  // outlives the transaction
  bool ran = false;
  {
    Transaction tr = db.create_transaction();
    watch.emplace(tr.watch("k"));
    watch->on_ready([&] {
      other.reset();
      ran = true;
    });
  }
  EXPECT_TRUE(ran);
  EXPECT_FALSE(other.has_value());
  put(db, "after", "both ended");
  EXPECT_EQ(read_key(db, "after"), "both ended");
  EXPECT_EQ(read_key(db, "other"), std::nullopt);
}

TEST(Timeout, OperationsAfterTheTimeoutThrowTimedOut) {
  Database db = testing::open_database();
  Transaction tr = db.create_transaction();
  tr.set_timeout(std::chrono::milliseconds(1));
  tr.set("k", "v");  // may or may not be inside the timeout; nothing is asserted about it
  spin_for(std::chrono::milliseconds(2));
  EXPECT_THAT([&] { (void)tr.get("k"); }, ThrowsCode(ErrorCode::transaction_timed_out));
  EXPECT_THAT([&] { tr.set("k", "v"); }, ThrowsCode(ErrorCode::transaction_timed_out));
  EXPECT_THAT([&] { tr.commit(); }, ThrowsCode(ErrorCode::transaction_timed_out));
  EXPECT_EQ(read_key(db, "k"), std::nullopt);
}

TEST(Timeout, TimedOutIsNotRetriedByOnError) {
  Database db = testing::open_database();
  Transaction tr = db.create_transaction();
  tr.set_timeout(std::chrono::milliseconds(1));
  spin_for(std::chrono::milliseconds(2));
  EXPECT_THAT([&] { tr.on_error(Error(ErrorCode::transaction_timed_out)); },
              ThrowsCode(ErrorCode::transaction_timed_out));
  // A retryable error after the timeout does not buy another attempt either.
  EXPECT_THAT([&] { tr.on_error(Error(ErrorCode::not_committed)); },
              ThrowsCode(ErrorCode::transaction_timed_out));
}

TEST(Timeout, IsKeptAcrossOnError) {
  Database db = testing::open_database();
  Transaction tr = db.create_transaction();
  tr.set_timeout(std::chrono::milliseconds(50));
  tr.set_max_retry_delay(std::chrono::milliseconds(0));  // too_old's 10 ms wait becomes 0
  tr.on_error(Error(ErrorCode::transaction_too_old));
  spin_for(std::chrono::milliseconds(60));
  EXPECT_THAT([&] { (void)tr.get("k"); }, ThrowsCode(ErrorCode::transaction_timed_out));
}

TEST(Timeout, ResetClearsTheTimeout) {
  Database db = testing::open_database();
  Transaction tr = db.create_transaction();
  tr.set_timeout(std::chrono::milliseconds(1));
  spin_for(std::chrono::milliseconds(2));
  tr.reset();
  tr.set("k", "v");
  tr.commit();
  EXPECT_EQ(read_key(db, "k"), "v");
}

// FoundationDB's fdb.options, transaction option `timeout`: "If set to 0, will disable all
// timeouts." The first timeout is far longer than a thread waits for a CPU on a loaded
// machine, so it does not run out before the second call replaces it: one that has run
// out has ended the transaction, and a new timeout changes nothing.
TEST(Timeout, ZeroDisablesTheTimeout) {
  Database db = testing::open_database();
  Transaction tr = db.create_transaction();
  tr.set_timeout(std::chrono::milliseconds(100));
  tr.set_timeout(std::chrono::milliseconds(0));
  spin_for(std::chrono::milliseconds(150));
  tr.set("k", "v");
  tr.commit();
  EXPECT_EQ(read_key(db, "k"), "v");
}

TEST(UsedDuringCommit, OperationsAfterCommitThrowUntilReset) {
  Database db = testing::open_database();
  Transaction tr = db.create_transaction();
  tr.set("k", "v");
  tr.commit();
  EXPECT_THAT([&] { (void)tr.get("k"); }, ThrowsCode(ErrorCode::used_during_commit));
  EXPECT_THAT([&] { (void)tr.get_range("a", "z"); }, ThrowsCode(ErrorCode::used_during_commit));
  EXPECT_THAT([&] { tr.set("k", "again"); }, ThrowsCode(ErrorCode::used_during_commit));
  EXPECT_THAT([&] { tr.clear("k"); }, ThrowsCode(ErrorCode::used_during_commit));
  EXPECT_THAT([&] { tr.commit(); }, ThrowsCode(ErrorCode::used_during_commit));
  EXPECT_EQ(read_key(db, "k"), "v");
  tr.reset();
  EXPECT_EQ(tr.get("k"), "v");
}

TEST(UsedDuringCommit, AlsoAfterAReadOnlyCommitAndAFailedCommit) {
  Database db = testing::open_database();
  Transaction ro = db.create_transaction();
  (void)ro.get("k");
  ro.commit();
  EXPECT_THAT([&] { (void)ro.get("k"); }, ThrowsCode(ErrorCode::used_during_commit));

  Transaction failed = db.create_transaction();
  (void)failed.get("k");
  put(db, "k", "x");
  failed.set("k", "y");
  EXPECT_THAT([&] { failed.commit(); }, ThrowsCode(ErrorCode::not_committed));
  EXPECT_THAT([&] { failed.set("k", "z"); }, ThrowsCode(ErrorCode::used_during_commit));
}

// ---- Versionstamps ------------------------------------------------------------------

TEST(Versionstamp, BeforeCommitIsAnInvalidOperation) {
  Database db = testing::open_database();
  Transaction tr = db.create_transaction();
  tr.set("k", "v");
  EXPECT_THAT([&] { (void)tr.versionstamp(); }, ThrowsCode(ErrorCode::client_invalid_operation));
}

TEST(Versionstamp, ReadOnlyTransactionHasNone) {
  Database db = testing::open_database();
  Transaction tr = db.create_transaction();
  (void)tr.get("k");
  tr.commit();
  EXPECT_THAT([&] { (void)tr.versionstamp(); }, ThrowsCode(ErrorCode::no_commit_version));
}

TEST(Versionstamp, IsTenBytesStartingWithTheBigEndianCommitVersion) {
  Database db = testing::open_database();
  for (int i = 0; i < 3; ++i) {
    Transaction tr = db.create_transaction();
    tr.set("k", std::to_string(i));
    tr.commit();
    std::string stamp = tr.versionstamp();
    ASSERT_EQ(stamp.size(), 10u);
    std::uint64_t version = 0;
    for (int b = 0; b < 8; ++b) version = (version << 8) | static_cast<unsigned char>(stamp[b]);
    EXPECT_EQ(static_cast<Version>(version), tr.committed_version());
  }
}

TEST(Versionstamp, ForgottenByReset) {
  Database db = testing::open_database();
  Transaction tr = db.create_transaction();
  tr.set("k", "v");
  tr.commit();
  (void)tr.versionstamp();
  tr.reset();
  EXPECT_THAT([&] { (void)tr.versionstamp(); }, ThrowsCode(ErrorCode::client_invalid_operation));
  EXPECT_THAT([&] { (void)tr.committed_version(); },
              ThrowsCode(ErrorCode::client_invalid_operation));
}

// ---- MVCC snapshots across history ------------------------------------------------------

// A reader's snapshot must survive any amount of later history: overwrites, deletes and
// inserts, and the garbage collection and conflict-history pruning they drive.
TEST(MvccSnapshot, OldReadVersionSurvivesManyLaterCommits) {
  Database db = five_rows();
  Transaction old_reader = db.create_transaction();
  ASSERT_EQ(old_reader.get("a1"), "va1");
  const int commits = apitest::scaled(3000, 600);
  for (int i = 0; i < commits; ++i) {
    Transaction tr = db.create_transaction();
    tr.set("a2", "overwrite " + std::to_string(i));
    tr.clear("b1");
    tr.set("a15/" + std::to_string(i % 50), "inserted");
    if (i % 7 == 0) tr.clear_range("a15/", "a15/5");
    tr.commit();
  }
  EXPECT_EQ(old_reader.get("a2"), "va2");
  EXPECT_EQ(old_reader.get("b1"), "vb1");
  EXPECT_THAT(old_reader.get_range("", "\xff"),
              ElementsAre(KeyValue{"a1", "va1"}, KeyValue{"a2", "va2"}, KeyValue{"a3", "va3"},
                          KeyValue{"b1", "vb1"}, KeyValue{"b2", "vb2"}));
  EXPECT_THAT(keys_of(old_reader.get_range("", "\xff", {.reverse = true})),
              ElementsAre("b2", "b1", "a3", "a2", "a1"));
  // A fresh reader sees the newest state.
  Transaction fresh = db.create_transaction();
  EXPECT_EQ(fresh.get("b1"), std::nullopt);
  EXPECT_EQ(fresh.get("a2"), "overwrite " + std::to_string(commits - 1));
}

// A write after the read version must still be found at commit however much unrelated
// history was recorded (and pruned) in between.
TEST(MvccSnapshot, ConflictSurvivesLaterUnrelatedHistory) {
  Database db = five_rows();
  Transaction stale = db.create_transaction();
  (void)stale.get("a1");
  stale.get_range("b", "c", {.limit = 1});
  Transaction clean = db.create_transaction();
  (void)clean.get("a3");
  clean.get_range("b", "c", {.limit = 1});
  put(db, "a1", "changed");
  const int commits = apitest::scaled(3000, 600);
  for (int i = 0; i < commits; ++i) put(db, "noise/" + std::to_string(i % 100), "x");
  stale.set("out", "stale");
  clean.set("out", "clean");
  EXPECT_THAT([&] { stale.commit(); }, ThrowsCode(ErrorCode::not_committed));
  EXPECT_NO_THROW(clean.commit());
}

// ---- Database and transaction handles ---------------------------------------------------

TEST(Handles, SeparateDatabasesAreIndependent) {
  STRATA_SKIP_ON_CLUSTER("two databases opened at once are one cluster");
  Database one = testing::open_database();
  Database two = testing::open_database();
  put(one, "k", "one");
  EXPECT_EQ(read_key(two, "k"), std::nullopt);
  Transaction t1 = one.create_transaction();
  Transaction t2 = two.create_transaction();
  (void)t1.get("k");
  (void)t2.get("k");
  put(two, "k", "two");
  t1.set("x", "1");
  EXPECT_NO_THROW(t1.commit()) << "a commit in another database is no conflict";
}

TEST(Handles, CopiesOfADatabaseShareOneStore) {
  Database db = testing::open_database();
  Database copy = db;
  put(copy, "k", "v");
  EXPECT_EQ(read_key(db, "k"), "v");
  EXPECT_EQ(db.committed_version(), copy.committed_version());
}

TEST(Handles, TransactionKeepsTheStoreAliveAfterTheLastDatabaseHandle) {
  std::optional<Transaction> tr;
  {
    Database db = testing::open_database();
    put(db, "k", "v");
    tr.emplace(db.create_transaction());
  }
  EXPECT_EQ(tr->get("k"), "v");
  tr->set("k2", "v2");
  EXPECT_NO_THROW(tr->commit());
}

// Database::run's transaction borrows the database (no reference count of its own); one
// moved out of run (here by throwing after the move) must take its own reference.
TEST(Handles, TransactionMovedOutOfRunKeepsTheStoreAlive) {
  struct Escape {};
  std::optional<Transaction> escaped;
  {
    Database db = testing::open_database();
    put(db, "k", "v");
    EXPECT_THROW(db.run([&](Transaction& tr) {
      tr.set("k2", "v2");
      escaped.emplace(std::move(tr));
      throw Escape{};
    }),
                 Escape);
  }
  ASSERT_TRUE(escaped.has_value());
  EXPECT_EQ(escaped->get("k"), "v");
  EXPECT_EQ(escaped->get("k2"), "v2");
  EXPECT_NO_THROW(escaped->commit());
}

TEST(Handles, MoveAssignedTransactionKeepsTheStoreAliveAndEndsTheOldOne) {
  struct Escape {};
  Database other = testing::open_database();
  Transaction target = other.create_transaction();
  target.set("left", "behind");
  {
    Database db = testing::open_database();
    put(db, "k", "v");
    EXPECT_THROW(db.run([&](Transaction& tr) {
      target = std::move(tr);
      throw Escape{};
    }),
                 Escape);
  }
  EXPECT_EQ(target.get("k"), "v");
  EXPECT_EQ(read_key(other, "left"), std::nullopt) << "the replaced transaction never committed";
}

TEST(Handles, MovedTransactionKeepsItsReadVersionAndWrites) {
  Database db = testing::open_database();
  Transaction a = db.create_transaction();
  Version rv = a.read_version();
  a.set("k", "mine");
  Transaction b = std::move(a);
  put(db, "other", "later");
  EXPECT_EQ(b.read_version(), rv);
  EXPECT_EQ(b.get("k"), "mine");
  EXPECT_EQ(b.snapshot().get("other"), std::nullopt);
  b.commit();
  EXPECT_EQ(read_key(db, "k"), "mine");
}

TEST(Handles, ManyDatabasesOpenedAndClosedInOneThread) {
  for (int i = 0; i < 200; ++i) {
    Database db = testing::open_database();
    Transaction reader = db.create_transaction();
    (void)reader.get("k");
    put(db, "k", std::to_string(i));
    EXPECT_EQ(read_key(db, "k"), std::to_string(i));
  }
}

}  // namespace
}  // namespace strata
