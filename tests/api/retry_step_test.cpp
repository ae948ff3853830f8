// Transaction::retry_step, the one retry rule on_error and the C API's
// fdb_transaction_on_error share: which errors retry, the backoff's growth and cap,
// RETRY_LIMIT, MAX_RETRY_DELAY, the timeout, what a give-up does, and which options a
// retry keeps. The step only decides (it never sleeps), so none of this waits.
//
// The expected answers are FoundationDB's client (7.x):
//  - fdbclient/NativeAPI.actor.cpp, Transaction::onError and getBackoff: the retryable
//    codes; a backoff that starts at DEFAULT_BACKOFF (0.01 s), waits a random part of it
//    and then doubles it up to the maximum; transaction_too_old and future_version wait
//    min(FUTURE_VERSION_RETRY_DELAY = 0.01 s, the maximum) and leave the backoff alone;
//  - fdbclient/ReadYourWrites.actor.cpp, RYWImpl::onError: a transaction already ended by
//    a cancel or a timeout fails with that; the retry counts before the limit is checked;
//    past the limit the given error comes back; an error given back cancels the
//    transaction from API 610 on (resets it before); a timeout that fires during the
//    backoff fails the on_error future with transaction_timed_out;
//  - fdbclient/ReadYourWrites.actor.cpp, resetRyow, and fdbclient/vexillographer/fdb.options:
//    a retry resets the options but the persistent ones, TIMEOUT, RETRY_LIMIT and
//    MAX_RETRY_DELAY (SIZE_LIMIT is not persistent);
//  - bindings/c/fdb_c.cpp, fdb_error_predicate(RETRYABLE): the retryable codes.
#include <algorithm>
#include <chrono>
#include <optional>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "strata/database.hpp"
#include "strata/transaction.hpp"

#include "api/api_test_util.hpp"
#include "support/error_matchers.hpp"

namespace strata::apitest {
namespace {

using std::chrono::milliseconds;
using std::chrono::nanoseconds;
using strata::testing::ThrowsCode;
using ::testing::IsEmpty;

constexpr nanoseconds kTenMs = milliseconds(10);

ErrorCode code(int number) { return static_cast<ErrorCode>(number); }

// Waits until the timeout of `tr` has passed (the passing of time is what is checked).
void let_expire(const Transaction& tr) {
  while (tr.ended_by() == ErrorCode::success) {
  }
}

TEST(RetryStep, RetryableErrorsRetryAndResetTheTransaction) {
  Database db = testing::open_database();
  // strata's retryable codes, and FoundationDB's that a single process never produces.
  for (int c :
       {1007, 1009, 1020, 1021, 1042, 1037, 1038, 1039, 1051, 1078, 1213, 1223, 1235, 1242}) {
    Transaction tr = db.create_transaction();
    tr.set("k", "written before the retry");
    const RetryStep step = tr.retry_step(code(c));
    EXPECT_EQ(step.error, ErrorCode::success) << c;
    EXPECT_TRUE(step.reset) << c;
    EXPECT_FALSE(step.cancelled) << c;
    EXPECT_EQ(tr.ended_by(), ErrorCode::success) << c;
    EXPECT_EQ(tr.get("k"), std::nullopt) << c << ": the writes went with the reset";
    EXPECT_TRUE(error_retryable(code(c))) << c;
  }
}

TEST(RetryStep, OtherErrorsAreGivenBackAndCancelTheTransaction) {
  Database db = testing::open_database();
  for (int c :
       {1000, 1025, 1031, 1032, 1036, 1101, 2000, 2004, 2005, 2017, 2101, 2102, 4100, 9001, 9010}) {
    Transaction tr = db.create_transaction();
    const RetryStep step = tr.retry_step(code(c));
    EXPECT_EQ(step.error, code(c)) << c;
    EXPECT_EQ(step.delay, nanoseconds(0)) << c;
    EXPECT_FALSE(step.reset) << c;
    EXPECT_TRUE(step.cancelled) << c;
    EXPECT_EQ(tr.ended_by(), ErrorCode::transaction_cancelled) << c;
    EXPECT_THAT([&] { tr.set("k", "v"); }, ThrowsCode(ErrorCode::transaction_cancelled)) << c;
  }
}

// Before API 610 an error given back resets the transaction instead: usable at once, its
// writes gone, its retry count kept.
TEST(RetryStep, GiveUpRestartResetsInsteadOfCancelling) {
  STRATA_SKIP_ON_CLUSTER("GiveUp::restart is the client before API 610; a cluster's refuses it");
  Database db = testing::open_database();
  Transaction tr = db.create_transaction();
  tr.set_retry_limit(0);
  tr.set("k", "lost");
  const RetryStep step = tr.retry_step(ErrorCode::not_committed, GiveUp::restart);
  EXPECT_EQ(step.error, ErrorCode::not_committed);
  EXPECT_TRUE(step.reset);
  EXPECT_FALSE(step.cancelled);
  EXPECT_EQ(tr.ended_by(), ErrorCode::success);
  EXPECT_EQ(tr.get("k"), std::nullopt);
  EXPECT_EQ(tr.retry_step(ErrorCode::not_committed, GiveUp::restart).error,
            ErrorCode::not_committed);  // the limit still holds
  tr.set("k", "kept");
  tr.commit();
  EXPECT_EQ(read_key(db, "k"), "kept");
}

TEST(RetryStep, SuccessIsMisuseAndChangesNothing) {
  Database db = testing::open_database();
  Transaction tr = db.create_transaction();
  tr.set_retry_limit(1);
  tr.set("k", "v");
  const RetryStep step = tr.retry_step(ErrorCode::success);
  EXPECT_EQ(step.error, ErrorCode::client_invalid_operation);
  EXPECT_FALSE(step.reset);
  EXPECT_EQ(tr.get("k"), "v");  // not reset
  // Not counted: the one retry the limit allows is still there.
  EXPECT_EQ(tr.retry_step(ErrorCode::not_committed).error, ErrorCode::success);
  EXPECT_EQ(tr.retry_step(ErrorCode::not_committed).error, ErrorCode::not_committed);
}

TEST(RetryStep, AnEndedTransactionAnswersWhatEndedIt) {
  Database db = testing::open_database();
  Transaction cancelled = db.create_transaction();
  cancelled.cancel();
  RetryStep step = cancelled.retry_step(ErrorCode::not_committed);
  EXPECT_EQ(step.error, ErrorCode::transaction_cancelled);
  EXPECT_FALSE(step.reset);
  EXPECT_FALSE(step.cancelled) << "ended before the step: the step did not cancel it";

  Transaction expired = db.create_transaction();
  expired.set_timeout(milliseconds(1));
  let_expire(expired);
  step = expired.retry_step(ErrorCode::not_committed);
  EXPECT_EQ(step.error, ErrorCode::transaction_timed_out);
  EXPECT_EQ(step.delay, nanoseconds(0));
  EXPECT_FALSE(step.reset);
}

// The first of a cancel and a passed timeout ends the transaction, as FoundationDB's reset
// promise is set once.
TEST(RetryStep, WhicheverOfCancelAndTimeoutCameFirstEndsTheTransaction) {
  Database db = testing::open_database();
  Transaction cancel_first = db.create_transaction();
  cancel_first.set_timeout(milliseconds(1));
  cancel_first.cancel();
  let_expire(cancel_first);  // returns at once: the cancel ended it
  spin_for(milliseconds(2));
  EXPECT_EQ(cancel_first.ended_by(), ErrorCode::transaction_cancelled);
  EXPECT_THAT([&] { (void)cancel_first.get("k"); }, ThrowsCode(ErrorCode::transaction_cancelled));

  Transaction timeout_first = db.create_transaction();
  timeout_first.set_timeout(milliseconds(1));
  let_expire(timeout_first);
  timeout_first.cancel();
  EXPECT_EQ(timeout_first.ended_by(), ErrorCode::transaction_timed_out);
  EXPECT_THAT([&] { (void)timeout_first.get("k"); }, ThrowsCode(ErrorCode::transaction_timed_out));
}

// A timeout that has passed is not undone by a new one, 0 included: only reset() is.
TEST(RetryStep, AnExpiredTimeoutStaysUntilReset) {
  Database db = testing::open_database();
  Transaction tr = db.create_transaction();
  tr.set_timeout(milliseconds(1));
  let_expire(tr);
  tr.set_timeout(milliseconds(0));
  EXPECT_EQ(tr.ended_by(), ErrorCode::transaction_timed_out);
  EXPECT_EQ(tr.retry_step(ErrorCode::not_committed).error, ErrorCode::transaction_timed_out);
  tr.reset();
  EXPECT_EQ(tr.ended_by(), ErrorCode::success);
}

// The first retry waits a random part of 10 ms; each later one a random part of a backoff
// that doubles, up to the maximum retry delay (1 s by default).
TEST(RetryStep, TheBackoffDoublesUpToTheMaximum) {
  STRATA_SKIP_ON_CLUSTER(
      "FoundationDB's on_error sleeps the backoff itself: the step's delay is 0");
  Database db = testing::open_database();
  std::vector<nanoseconds> seventh;
  for (int run = 0; run < 20; ++run) {
    Transaction tr = db.create_transaction();
    nanoseconds bound = kTenMs;
    for (int retry = 1; retry <= 9; ++retry) {
      const RetryStep step = tr.retry_step(ErrorCode::not_committed);
      ASSERT_EQ(step.error, ErrorCode::success);
      EXPECT_GE(step.delay, nanoseconds(0));
      EXPECT_LE(step.delay, bound) << "retry " << retry;
      if (retry == 7) seventh.push_back(step.delay);
      bound = std::min<nanoseconds>(bound * 2, milliseconds(1000));
    }
  }
  // The seventh retry's backoff is 640 ms: twenty of its delays all within the first
  // 10 ms has probability (1/64)^20.
  EXPECT_GT(*std::max_element(seventh.begin(), seventh.end()), kTenMs);
}

TEST(RetryStep, TheMaximumRetryDelayCapsTheBackoffFromTheSecondRetry) {
  STRATA_SKIP_ON_CLUSTER(
      "FoundationDB's on_error sleeps the backoff itself: the step's delay is 0");
  Database db = testing::open_database();
  Transaction tr = db.create_transaction();
  tr.set_max_retry_delay(milliseconds(15));
  EXPECT_LE(tr.retry_step(ErrorCode::not_committed).delay, kTenMs);
  for (int i = 0; i < 20; ++i) {
    EXPECT_LE(tr.retry_step(ErrorCode::not_committed).delay, milliseconds(15)) << i;
  }
  Transaction zero = db.create_transaction();
  zero.set_max_retry_delay(milliseconds(0));
  EXPECT_LE(zero.retry_step(ErrorCode::not_committed).delay, kTenMs);  // the first is not capped
  for (int i = 0; i < 20; ++i) {
    EXPECT_EQ(zero.retry_step(ErrorCode::not_committed).delay, nanoseconds(0)) << i;
  }
}

// transaction_too_old and future_version wait 10 ms exactly (at most the maximum), and do
// not grow the backoff.
TEST(RetryStep, TooOldAndFutureVersionWaitTenMillisecondsAndLeaveTheBackoff) {
  STRATA_SKIP_ON_CLUSTER(
      "FoundationDB's on_error sleeps the backoff itself: the step's delay is 0");
  Database db = testing::open_database();
  Transaction tr = db.create_transaction();
  for (int i = 0; i < 10; ++i) {
    EXPECT_EQ(tr.retry_step(ErrorCode::transaction_too_old).delay, kTenMs) << i;
    EXPECT_EQ(tr.retry_step(ErrorCode::future_version).delay, kTenMs) << i;
  }
  EXPECT_LE(tr.retry_step(ErrorCode::not_committed).delay, kTenMs);  // still the first backoff
  tr.set_max_retry_delay(milliseconds(3));
  EXPECT_EQ(tr.retry_step(ErrorCode::transaction_too_old).delay, milliseconds(3));
}

// RETRY_LIMIT n allows n retries; the next error, whatever it is, comes back as given.
TEST(RetryStep, TheRetryLimitGivesTheErrorBack) {
  Database db = testing::open_database();
  Transaction tr = db.create_transaction();
  tr.set_retry_limit(2);
  EXPECT_EQ(tr.retry_step(ErrorCode::not_committed).error, ErrorCode::success);
  EXPECT_EQ(tr.retry_step(ErrorCode::transaction_too_old).error, ErrorCode::success);
  const RetryStep step = tr.retry_step(ErrorCode::commit_unknown_result);
  EXPECT_EQ(step.error, ErrorCode::commit_unknown_result);
  EXPECT_EQ(step.delay, nanoseconds(0));
  EXPECT_EQ(tr.ended_by(), ErrorCode::transaction_cancelled);
}

// The count goes on when the limit refuses a retry: a limit lowered later is held against
// every retry so far.
TEST(RetryStep, ALimitSetLaterCountsTheRetriesSoFar) {
  Database db = testing::open_database();
  Transaction tr = db.create_transaction();
  for (int i = 0; i < 3; ++i)
    ASSERT_EQ(tr.retry_step(ErrorCode::not_committed).error, ErrorCode::success);
  tr.set_retry_limit(3);
  EXPECT_EQ(tr.retry_step(ErrorCode::not_committed).error, ErrorCode::not_committed);
}

// A timeout inside the backoff ends the retrying at the deadline: the step's delay runs to
// the deadline and its error is transaction_timed_out.
TEST(RetryStep, ATimeoutInsideTheBackoffEndsItAtTheDeadline) {
  STRATA_SKIP_ON_CLUSTER(
      "FoundationDB's on_error sleeps the backoff itself: the step's delay is 0");
  Database db = testing::open_database();
  Transaction tr = db.create_transaction();
  tr.set_timeout(milliseconds(100));
  tr.set_max_retry_delay(std::chrono::minutes(1));
  RetryStep step;
  for (int i = 0; i < 40 && step.error == ErrorCode::success; ++i) {
    step = tr.retry_step(ErrorCode::not_committed);
  }
  EXPECT_EQ(step.error, ErrorCode::transaction_timed_out);
  EXPECT_TRUE(step.reset);
  EXPECT_GT(step.delay, nanoseconds(0));
  EXPECT_LE(step.delay, milliseconds(100));
}

// A retry keeps the persistent options (timeout, retry limit, maximum retry delay) and
// returns the others to a new transaction's.
TEST(RetryStep, ARetryKeepsOnlyThePersistentOptions) {
  Database db = testing::open_database();
  Transaction tr = db.create_transaction();
  tr.set_timeout(std::chrono::hours(1));
  const auto deadline = tr.timeout_deadline();
  tr.set_retry_limit(2);
  tr.set_max_retry_delay(milliseconds(0));
  tr.set_size_limit(100);
  tr.set_read_your_writes(false);
  tr.set_snapshot_read_your_writes(false);
  tr.set_report_conflicting_keys(true);
  ASSERT_EQ(tr.retry_step(ErrorCode::not_committed).error, ErrorCode::success);

  EXPECT_EQ(tr.timeout_deadline(), deadline);  // still counted from the start
  tr.set("mine", "v");
  EXPECT_EQ(tr.get("mine"), "v");             // read-your-writes is back on
  EXPECT_EQ(tr.snapshot().get("mine"), "v");  // snapshot read-your-writes too
  (void)tr.get("contended");
  put(db, "contended", "newer");
  tr.set("big", std::string(200, 'v'));  // over the 100-byte limit, which is gone
  EXPECT_THAT([&] { tr.commit(); }, ThrowsCode(ErrorCode::not_committed));
  EXPECT_THAT(tr.conflicting_ranges(), IsEmpty());  // reporting is off

  EXPECT_EQ(tr.retry_step(ErrorCode::not_committed).delay, nanoseconds(0));  // the cap stays
  EXPECT_EQ(tr.retry_step(ErrorCode::not_committed).error, ErrorCode::not_committed);  // limit
}

TEST(RetryStep, ResetRestoresEveryOption) {
  Database db = testing::open_database();
  Transaction tr = db.create_transaction();
  tr.set_timeout(milliseconds(1));
  tr.set_retry_limit(0);
  tr.reset();
  EXPECT_EQ(tr.timeout_deadline(), std::chrono::steady_clock::time_point::max());
  EXPECT_EQ(tr.retry_step(ErrorCode::not_committed).error, ErrorCode::success);
}

// on_error is the step and its wait.
TEST(RetryStep, OnErrorThrowsTheErrorTheStepGivesBack) {
  Database db = testing::open_database();
  Transaction tr = db.create_transaction();
  tr.set_max_retry_delay(milliseconds(0));
  EXPECT_NO_THROW(tr.on_error(Error(ErrorCode::not_committed)));
  const Error given(ErrorCode::key_too_large, "the very error given");
  try {
    tr.on_error(given);
    FAIL() << "expected the error back";
  } catch (const Error& e) {
    EXPECT_EQ(e.detail(), "the very error given");
  }
  EXPECT_THAT([&] { tr.on_error(Error(ErrorCode::not_committed)); },
              ThrowsCode(ErrorCode::transaction_cancelled));
}

}  // namespace
}  // namespace strata::apitest
