// fdb_transaction_on_error: which codes it retries, the soft reset, FoundationDB's backoff,
// RETRY_LIMIT and MAX_RETRY_DELAY, and a TIMEOUT that cuts a delay short.
#include <chrono>
#include <string>
#include <thread>

#include <gtest/gtest.h>

#include "fdb_c/fdb_c.h"
#include "fdb_c_test_util.hpp"

namespace fdbc_test {
namespace {

using Clock = std::chrono::steady_clock;
using OnError = FdbTest;

// on_error(e) and the time until its future was ready.
std::pair<fdb_error_t, Clock::duration> timed_on_error(const Tr& tr, fdb_error_t e) {
  auto start = Clock::now();
  fdb_error_t result = on_error(tr, e);
  return {result, Clock::now() - start};
}

TEST_F(OnError, RetryableCodesReset) {
  for (int code : {1007, 1009, 1020, 1021}) {
    Tr tr = make_tr();
    EXPECT_EQ(on_error(tr, code), 0) << code;
  }
}

TEST_F(OnError, OtherCodesAreReturned) {
  for (int code : {1000, 1025, 1031, 1036, 1101, 2000, 2004, 2005, 2017, 2101, 2102, 4100}) {
    Tr tr = make_tr();
    EXPECT_EQ(on_error(tr, code), code) << code;
  }
}

// FoundationDB's RETRYABLE codes that a single process never produces are retried too.
TEST_F(OnError, OtherRetryableCodesAreRetried) {
  for (int code : {1037, 1038, 1039, 1051, 1213}) {
    Tr tr = make_tr();
    ASSERT_EQ(set_option(tr, FDB_TR_OPTION_MAX_RETRY_DELAY, 1), 0);
    EXPECT_EQ(on_error(tr, code), 0) << code;
  }
}

TEST_F(OnError, SuccessIsClientInvalidOperation) {
  Tr tr = make_tr();
  EXPECT_EQ(on_error(tr, 0), 2000);
}

TEST_F(OnError, RetryDropsWritesAndTheReadVersion) {
  Tr tr = make_tr();
  set(tr, k("a"), "mine");
  ASSERT_FALSE(get(tr, k("b")).present);
  ASSERT_EQ(write(k("b"), "new"), 0);
  ASSERT_EQ(on_error(tr, 1020), 0);
  EXPECT_FALSE(get(tr, k("a")).present);
  EXPECT_EQ(get(tr, k("b")).value, "new");
  ASSERT_EQ(commit(tr), 0);
  EXPECT_FALSE(read(k("a")).present);
}

TEST_F(OnError, RetryAfterAConflictThenSucceeds) {
  ASSERT_EQ(write(k("n"), "0"), 0);
  Tr tr = make_tr();
  int attempts = 0;
  for (;;) {
    ++attempts;
    Value v = get(tr, k("n"));
    ASSERT_EQ(v.error, 0);
    if (attempts == 1) {
      ASSERT_EQ(write(k("n"), "5"), 0);  // a conflicting commit
    }
    set(tr, k("n"), v.value + "1");
    fdb_error_t e = commit(tr);
    if (e == 0) break;
    ASSERT_EQ(e, 1020);
    ASSERT_EQ(on_error(tr, e), 0);
    ASSERT_LT(attempts, 10);
  }
  EXPECT_EQ(attempts, 2);
  EXPECT_EQ(read(k("n")).value, "51");
}

// As FoundationDB's (resetRyow; fdb.options: "like all other transaction options ... must
// be reset after a call to onError" before 610): a retry keeps only the persistent
// options, TIMEOUT, RETRY_LIMIT and MAX_RETRY_DELAY; the others return to the database's
// defaults.
TEST_F(OnError, ARetryKeepsOnlyThePersistentOptions) {
  Tr tr = make_tr();
  ASSERT_EQ(set_option(tr, FDB_TR_OPTION_SIZE_LIMIT, 1000), 0);
  ASSERT_EQ(set_option(tr, FDB_TR_OPTION_RETRY_LIMIT, 1), 0);
  ASSERT_EQ(on_error(tr, 1020), 0);
  set(tr, k("a"), std::string(2000, 'v'));
  EXPECT_EQ(commit(tr), 0);             // SIZE_LIMIT is gone
  EXPECT_EQ(on_error(tr, 1020), 1020);  // RETRY_LIMIT stayed: the second retry is refused

  Db d = open_db();
  ASSERT_EQ(set_db_option(d.get(), FDB_DB_OPTION_TRANSACTION_SIZE_LIMIT, 1000), 0);
  Tr limited = make_tr(d.get());
  ASSERT_EQ(on_error(limited, 1020), 0);
  set(limited, k("a"), std::string(2000, 'v'));
  EXPECT_EQ(commit(limited), 2101);  // the database's default holds through the retry
}

TEST_F(OnError, TooOldAndFutureVersionWaitTenMilliseconds) {
  for (int code : {1007, 1009}) {
    Tr tr = make_tr();
    auto [e, took] = timed_on_error(tr, code);
    EXPECT_EQ(e, 0) << code;
    EXPECT_GE(took, 10ms) << code;
  }
}

TEST_F(OnError, CompletesOnTheNetworkThreadAfterItsDelay) {
  Tr tr = make_tr();
  auto start = Clock::now();
  Future f(fdb_transaction_on_error(tr.get(), 1007));
  CallbackProbe probe;
  ASSERT_EQ(fdb_future_set_callback(f.get(), &CallbackProbe::callback, &probe), 0);
  ASSERT_TRUE(probe.wait_calls(1));
  EXPECT_GE(Clock::now() - start, 10ms);
  EXPECT_EQ(probe.called_with(), 0);
  // Pending for 10 ms, so the callback (almost surely) came from the network thread; had
  // the delay already passed, set_callback would have run it here.
  EXPECT_TRUE(probe.called_on() == network_thread() ||
              probe.called_on() == std::this_thread::get_id());
}

TEST_F(OnError, RetryLimit) {
  Tr tr = make_tr();
  ASSERT_EQ(set_option(tr, FDB_TR_OPTION_RETRY_LIMIT, 2), 0);
  ASSERT_EQ(set_option(tr, FDB_TR_OPTION_MAX_RETRY_DELAY, 1), 0);
  EXPECT_EQ(on_error(tr, 1020), 0);
  EXPECT_EQ(on_error(tr, 1020), 0);
  EXPECT_EQ(on_error(tr, 1020), 1020);  // the original error, not a new one
}

// As FoundationDB (ReadYourWritesTransaction::reset copies the database's transaction
// defaults as they are then): a database option set after a transaction was made applies
// from its next reset, not the defaults the transaction was made with.
TEST_F(OnError, AResetTakesTheDatabasesDefaultsAsTheyAreThen) {
  Db d = open_db();
  Tr tr = make_tr(d.get());
  ASSERT_EQ(set_db_option(d.get(), FDB_DB_OPTION_TRANSACTION_RETRY_LIMIT, 0), 0);
  ASSERT_EQ(set_option(tr, FDB_TR_OPTION_MAX_RETRY_DELAY, 1), 0);
  EXPECT_EQ(on_error(tr, 1020), 0);  // made before the option: no limit
  fdb_transaction_reset(tr.get());
  EXPECT_EQ(on_error(tr, 1020), 1020);  // after the reset: the database's limit, 0
}

TEST_F(OnError, RetryLimitReturnsTheErrorItWasGiven) {
  Tr tr = make_tr();
  ASSERT_EQ(set_option(tr, FDB_TR_OPTION_RETRY_LIMIT, 1), 0);
  EXPECT_EQ(on_error(tr, 1007), 0);
  EXPECT_EQ(on_error(tr, 1021), 1021);
}

// As FoundationDB's from API 610: an on_error that gives the error back (not retryable, or
// past RETRY_LIMIT) cancels the transaction until reset, so a loop that went on anyway
// cannot commit what it wrote before.
TEST_F(OnError, GivingTheErrorBackCancelsTheTransactionUntilReset) {
  for (int code : {2004, 1020}) {
    const std::string key = k("a" + std::to_string(code));
    Tr tr = make_tr();
    ASSERT_EQ(set_option(tr, FDB_TR_OPTION_RETRY_LIMIT, 0), 0);
    set(tr, key, "1");
    EXPECT_EQ(on_error(tr, code), code);
    EXPECT_EQ(get(tr, key).error, 1025) << code;
    EXPECT_EQ(commit(tr), 1025) << code;
    EXPECT_EQ(on_error(tr, 1020), 1025) << code;
    EXPECT_FALSE(read(key).present) << code;
    fdb_transaction_reset(tr.get());
    set(tr, key, "1");
    EXPECT_EQ(commit(tr), 0) << code;
    EXPECT_TRUE(read(key).present) << code;
  }
}

TEST_F(OnError, RetryLimitZeroRetriesNothing) {
  Tr tr = make_tr();
  ASSERT_EQ(set_option(tr, FDB_TR_OPTION_RETRY_LIMIT, 0), 0);
  EXPECT_EQ(on_error(tr, 1020), 1020);
}

TEST_F(OnError, RetryLimitMinusOneIsUnlimited) {
  Tr tr = make_tr();
  ASSERT_EQ(set_option(tr, FDB_TR_OPTION_RETRY_LIMIT, 1), 0);
  ASSERT_EQ(set_option(tr, FDB_TR_OPTION_RETRY_LIMIT, -1), 0);
  ASSERT_EQ(set_option(tr, FDB_TR_OPTION_MAX_RETRY_DELAY, 1), 0);
  for (int i = 0; i < 20; ++i) ASSERT_EQ(on_error(tr, 1020), 0) << i;
}

TEST_F(OnError, ResetClearsTheRetryLimitAndTheCount) {
  Tr tr = make_tr();
  ASSERT_EQ(set_option(tr, FDB_TR_OPTION_RETRY_LIMIT, 1), 0);
  ASSERT_EQ(set_option(tr, FDB_TR_OPTION_MAX_RETRY_DELAY, 1), 0);
  ASSERT_EQ(on_error(tr, 1020), 0);
  fdb_transaction_reset(tr.get());
  ASSERT_EQ(set_option(tr, FDB_TR_OPTION_RETRY_LIMIT, 1), 0);
  EXPECT_EQ(on_error(tr, 1020), 0);  // the count started over
  EXPECT_EQ(on_error(tr, 1020), 1020);
}

TEST_F(OnError, DatabaseRetryLimitAppliesToNewTransactions) {
  Db d = open_db();
  ASSERT_EQ(set_db_option(d.get(), FDB_DB_OPTION_TRANSACTION_RETRY_LIMIT, 1), 0);
  ASSERT_EQ(set_db_option(d.get(), FDB_DB_OPTION_TRANSACTION_MAX_RETRY_DELAY, 1), 0);
  Tr tr = make_tr(d.get());
  EXPECT_EQ(on_error(tr, 1020), 0);
  EXPECT_EQ(on_error(tr, 1020), 1020);
}

// The delay before a retry is a random fraction of a backoff that starts at 10 ms and
// doubles to MAX_RETRY_DELAY (1 s by default). Eight retries by default wait on average
// 0.5 * (10 + 20 + ... + 640 + 1000) ms, about 1.1 s; under 50 ms has probability ~1e-6.
TEST_F(OnError, BackoffGrows) {
  Tr tr = make_tr();
  auto start = Clock::now();
  for (int i = 0; i < 8; ++i) ASSERT_EQ(on_error(tr, 1020), 0);
  EXPECT_GE(Clock::now() - start, 50ms);
}

TEST_F(OnError, MaxRetryDelayCapsTheBackoff) {
  Tr tr = make_tr();
  ASSERT_EQ(set_option(tr, FDB_TR_OPTION_MAX_RETRY_DELAY, 1), 0);
  auto start = Clock::now();
  for (int i = 0; i < 20; ++i) ASSERT_EQ(on_error(tr, 1020), 0);
  // At most 1 ms each; by default these would take about 5 s on average.
  EXPECT_LT(Clock::now() - start, 2s);
}

// As FoundationDB's: the cap applies from the second retry on. The first waits a random
// part of 10 ms however small the cap: twenty first retries under a cap of 0 wait ~100 ms
// in all (under 20 ms has probability ~4e-13); capped from the start they would not wait.
TEST_F(OnError, FirstRetryWaitsPartOfTenMillisecondsWhateverTheCap) {
  auto start = Clock::now();
  for (int i = 0; i < 20; ++i) {
    Tr tr = make_tr();
    ASSERT_EQ(set_option(tr, FDB_TR_OPTION_MAX_RETRY_DELAY, 0), 0);
    ASSERT_EQ(on_error(tr, 1020), 0);
  }
  EXPECT_GE(Clock::now() - start, 20ms);
  // Later retries are capped: forty more under a cap of 0 do not wait.
  Tr tr = make_tr();
  ASSERT_EQ(set_option(tr, FDB_TR_OPTION_MAX_RETRY_DELAY, 0), 0);
  ASSERT_EQ(on_error(tr, 1020), 0);
  auto later = Clock::now();
  for (int i = 0; i < 40; ++i) ASSERT_EQ(on_error(tr, 1020), 0);
  EXPECT_LT(Clock::now() - later, 2s);
}

TEST_F(OnError, TimeoutCutsADelayShort) {
  Tr tr = make_tr();
  ASSERT_EQ(set_option(tr, FDB_TR_OPTION_TIMEOUT, 200), 0);
  ASSERT_EQ(set_option(tr, FDB_TR_OPTION_MAX_RETRY_DELAY, 60000), 0);
  auto start = Clock::now();
  fdb_error_t e = 0;
  for (int i = 0; i < 40 && e == 0; ++i) e = on_error(tr, 1020);
  EXPECT_EQ(e, 1031);
  // Delays of up to a minute were possible; the timeout ended the wait at 200 ms.
  EXPECT_LT(Clock::now() - start, 5s);
}

}  // namespace
}  // namespace fdbc_test
