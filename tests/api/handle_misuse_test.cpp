// Misuse of the public handles (Database, Transaction, ReadView, Watch) that their
// headers answer with an error rather than undefined behaviour: moved-from handles, and
// timeouts at the ends of milliseconds' range.
#include <chrono>
#include <optional>
#include <string>
#include <utility>

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
using testing::ThrowsCode;

TEST(MovedFrom, TransactionThrowsClientInvalidOperation) {
  Database db = testing::open_database();
  Transaction a = db.create_transaction();
  Transaction b = std::move(a);
  EXPECT_THAT([&] { (void)a.get("k"); }, ThrowsCode(ErrorCode::client_invalid_operation));
  EXPECT_THAT([&] { a.set("k", "v"); }, ThrowsCode(ErrorCode::client_invalid_operation));
  EXPECT_THAT([&] { a.commit(); }, ThrowsCode(ErrorCode::client_invalid_operation));
  EXPECT_THAT([&] { a.reset(); }, ThrowsCode(ErrorCode::client_invalid_operation));
  EXPECT_THAT([&] { a.on_error(Error(ErrorCode::not_committed)); },
              ThrowsCode(ErrorCode::client_invalid_operation));
  EXPECT_THAT([&] { (void)a.snapshot().get("k"); },
              ThrowsCode(ErrorCode::client_invalid_operation));
  EXPECT_THAT([&] { (void)a.approximate_size(); }, ThrowsCode(ErrorCode::client_invalid_operation));
  // Assigning to it makes it usable again.
  a = db.create_transaction();
  a.set("k", "v");
  a.commit();
  EXPECT_EQ(read_key(db, "k"), "v");
}

// run() commits its transaction after f returns: one f moved away must not be dereferenced.
TEST(MovedFrom, RunWhoseBodyMovesItsTransactionOutThrows) {
  Database db = testing::open_database();
  std::optional<Transaction> escaped;
  EXPECT_THAT(
      [&] {
        db.run([&](Transaction& tr) {
          tr.set("k", "v");
          escaped.emplace(std::move(tr));
        });
      },
      ThrowsCode(ErrorCode::client_invalid_operation));
  ASSERT_TRUE(escaped.has_value());
  escaped->commit();
  EXPECT_EQ(read_key(db, "k"), "v");
}

TEST(MovedFrom, DatabaseThrowsClientInvalidOperation) {
  Database a = testing::open_database();
  Database b = std::move(a);
  EXPECT_THAT([&] { (void)a.create_transaction(); },
              ThrowsCode(ErrorCode::client_invalid_operation));
  EXPECT_THAT([&] { a.run([](Transaction& tr) { tr.set("k", "v"); }); },
              ThrowsCode(ErrorCode::client_invalid_operation));
  EXPECT_THAT([&] { (void)a.committed_version(); },
              ThrowsCode(ErrorCode::client_invalid_operation));
  EXPECT_THAT([&] { (void)a.opened_version(); }, ThrowsCode(ErrorCode::client_invalid_operation));
  EXPECT_THAT([&] { (void)a.stats(); }, ThrowsCode(ErrorCode::client_invalid_operation));
  EXPECT_THAT([&] { a.checkpoint(); }, ThrowsCode(ErrorCode::client_invalid_operation));
  a = b;  // assigning to it makes it usable again
  a.run([](Transaction& tr) { tr.set("k", "v"); });
  EXPECT_EQ(read_key(b, "k"), "v");
}

TEST(MovedFrom, WatchThrowsClientInvalidOperation) {
  Database db = testing::open_database();
  Transaction tr = db.create_transaction();
  Watch a = tr.watch("k");
  tr.commit();
  Watch b = std::move(a);
  EXPECT_THAT([&] { a.wait(); }, ThrowsCode(ErrorCode::client_invalid_operation));
  EXPECT_THAT([&] { a.wait_for(std::chrono::milliseconds(0)); },
              ThrowsCode(ErrorCode::client_invalid_operation));
  EXPECT_THAT([&] { a.cancel(); }, ThrowsCode(ErrorCode::client_invalid_operation));
  EXPECT_THAT([&] { a.on_ready([] {}); }, ThrowsCode(ErrorCode::client_invalid_operation));
  EXPECT_FALSE(b.wait_for(std::chrono::milliseconds(0))) << "the moved-to watch is still armed";
  a = b;  // assigning to it makes it usable again
  a.cancel();
  EXPECT_FALSE(b.wait_for(std::chrono::milliseconds(0)));
}

// milliseconds::max() is "no deadline" to many callers: now + max() overflows the clock's
// nanoseconds, and unchecked it would land in the past and every operation would throw
// transaction_timed_out at once.
TEST(Timeouts, TransactionTimeoutOfMillisecondsMaxNeverExpires) {
  Database db = testing::open_database();
  Transaction tr = db.create_transaction();
  tr.set_timeout(std::chrono::milliseconds::max());
  tr.set("k", "v");
  EXPECT_EQ(tr.get("k"), "v");
  EXPECT_NO_THROW(tr.commit());

  Options options;
  options.transaction_timeout = std::chrono::milliseconds::max();
  Database with_default = testing::open_database(options);
  EXPECT_NO_THROW(with_default.run([](Transaction& t) { t.set("k", "v"); }));
  EXPECT_EQ(read_key(with_default, "k"), "v");
}

// A negative timeout waits not at all. now + milliseconds::min() (or any timeout below about
// -292 years) overflows the clock's nanoseconds: unchecked, UBSan would report it, and a
// release build would wrap -10^13 ms to a deadline some 267 years ahead.
TEST(Timeouts, WatchWaitForWithAHugeNegativeTimeoutReturnsAtOnce) {
  Database db = testing::open_database();
  Transaction tr = db.create_transaction();
  Watch w = tr.watch("k");
  tr.commit();
  EXPECT_FALSE(w.wait_for(std::chrono::milliseconds(-1)));
  EXPECT_FALSE(w.wait_for(std::chrono::milliseconds::min()));
  EXPECT_FALSE(w.wait_for(std::chrono::milliseconds(-10'000'000'000'000)));
}

}  // namespace
}  // namespace strata
