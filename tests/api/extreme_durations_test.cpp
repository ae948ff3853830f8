// Every duration the API takes, at its extremes: Options::mvcc_window,
// transaction_timeout and transaction_max_retry_delay, Transaction::set_timeout and
// set_max_retry_delay, Watch::wait_for. The longest mean "no limit" (a window or timeout
// the clock cannot count to is never reached); none overflows into an earlier deadline.
#include <chrono>
#include <optional>
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
using std::chrono::milliseconds;
using testing::ThrowsCode;

// milliseconds::max(), the first window whose nanoseconds overflow, and the longest that
// does not.
constexpr milliseconds kLongWindows[] = {milliseconds::max(), milliseconds(9'223'372'036'855),
                                         milliseconds(9'223'372'036'854)};

Options window(milliseconds w) {
  Options o;
  o.mvcc_window = w;
  return o;
}

// A commit that read checks the read's age against the window: with the window taken
// for no limit it commits (docs/decisions/0030); a window left to overflow would make every
// such commit transaction_too_old, and Database::run retry it for ever.
TEST(ExtremeDurations, TheLongestMvccWindowsAreNoLimit) {
  for (milliseconds w : kLongWindows) {
    Database db = testing::open_database(window(w));
    Transaction first = db.create_transaction();
    EXPECT_EQ(first.get("k"), std::nullopt);
    first.set("k", "v");
    EXPECT_NO_THROW(first.commit()) << w.count();
    EXPECT_EQ(read_key(db, "k"), "v") << w.count();
    // A transaction that read keeps reading and commits.
    Transaction tr = db.create_transaction();
    EXPECT_EQ(tr.get("k"), "v");
    EXPECT_EQ(tr.get_range("a", "z").size(), 1U);
    tr.set("k", "w");
    EXPECT_NO_THROW(tr.commit()) << w.count();
  }
}

// With keep_mvcc_window, a window the clock cannot count keeps a version handed out for
// good: an old version nobody holds any more still reads after later commits (the
// retention's deadline saturates rather than overflow).
TEST(ExtremeDurations, TheLongestKeptMvccWindowsKeepAVersionHandedOut) {
  for (milliseconds w : kLongWindows) {
    Options o = window(w);
    o.keep_mvcc_window = true;
    Database db = testing::open_database(o);
    Version old = 0;
    {
      Transaction t = db.create_transaction();
      t.set("k", "old");
      t.commit();
      old = t.committed_version();  // handed out: kept for the window
    }
    for (int i = 0; i < 100; ++i) db.run([](Transaction& tr) { tr.set("k", "new"); });
    Transaction tr = db.create_transaction();
    tr.set_read_version(old);
    EXPECT_EQ(tr.get("k"), "old") << w.count();
  }
}

TEST(ExtremeDurations, MvccWindowsOfZeroAndBelowAreRefused) {
  for (milliseconds w : {milliseconds(0), milliseconds(-1), milliseconds::min()}) {
    EXPECT_THAT([&] { (void)testing::open_database(window(w)); },
                ThrowsCode(ErrorCode::invalid_argument))
        << w.count();
  }
}

TEST(ExtremeDurations, TheLongestTransactionTimeoutsAreNoLimit) {
  Options o;
  o.transaction_timeout = milliseconds::max();
  Database db = testing::open_database(o);
  db.run([](Transaction& tr) { tr.set("k", "v"); });
  Transaction tr = db.create_transaction();
  tr.set_timeout(milliseconds::max());
  EXPECT_EQ(tr.get("k"), "v");
  tr.set("k", "w");
  EXPECT_NO_THROW(tr.commit());
  o.transaction_timeout = milliseconds::min();
  EXPECT_THAT([&] { (void)testing::open_database(o); }, ThrowsCode(ErrorCode::invalid_argument));
  Transaction t2 = db.create_transaction();
  EXPECT_THAT([&] { t2.set_timeout(milliseconds::min()); },
              ThrowsCode(ErrorCode::invalid_argument));
}

// A retry waits at most the maximum retry delay; the longest maximum still starts the
// backoff at FoundationDB's 10 ms, so one retry returns.
TEST(ExtremeDurations, TheLongestMaximumRetryDelayStillRetries) {
  Options o;
  o.transaction_max_retry_delay = milliseconds::max();
  Database db = testing::open_database(o);
  Transaction tr = db.create_transaction();
  tr.set_max_retry_delay(milliseconds::max());
  EXPECT_NO_THROW(tr.on_error(Error(ErrorCode::not_committed)));
  EXPECT_THAT([&] { tr.set_max_retry_delay(milliseconds::min()); },
              ThrowsCode(ErrorCode::invalid_argument));
  o.transaction_max_retry_delay = milliseconds::min();
  EXPECT_THAT([&] { (void)testing::open_database(o); }, ThrowsCode(ErrorCode::invalid_argument));
}

// A wait of no time, or less, reports the watch's state at once.
TEST(ExtremeDurations, WatchWaitsOfTheMostNegativeDurationReturnAtOnce) {
  Database db = testing::open_database();
  Transaction tr = db.create_transaction();
  Watch w = tr.watch("k");
  tr.commit();
  EXPECT_FALSE(w.wait_for(milliseconds::min()));
  EXPECT_FALSE(w.wait_for(milliseconds(0)));
}

}  // namespace
}  // namespace strata
