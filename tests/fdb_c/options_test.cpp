// Transaction and database options: TIMEOUT, RETRY_LIMIT, SIZE_LIMIT,
// READ_YOUR_WRITES_DISABLE, SNAPSHOT_RYW_ENABLE/DISABLE, database defaults, and options that
// are accepted without effect.
#include <chrono>
#include <functional>
#include <iterator>
#include <string>
#include <thread>
#include <utility>

#include <gtest/gtest.h>

#include "fdb_c/fdb_c.h"
#include "fdb_c_test_util.hpp"

namespace fdbc_test {
namespace {

using Options = FdbTest;

// Lets a transaction timeout of `ms` expire. Passing time is what is under test here.
void let_expire(int ms) { std::this_thread::sleep_for(std::chrono::milliseconds(ms + 50)); }

TEST_F(Options, TimeoutFailsEveryCallAfterItExpires) {
  Tr tr = make_tr();
  ASSERT_EQ(set_option(tr, FDB_TR_OPTION_TIMEOUT, 20), 0);
  set(tr, k("a"), "1");
  let_expire(20);
  EXPECT_EQ(get(tr, k("a")).error, 1031);
  Future rv(fdb_transaction_get_read_version(tr.get()));
  EXPECT_EQ(wait(rv), 1031);
  EXPECT_EQ(commit(tr), 1031);
  EXPECT_FALSE(read(k("a")).present);
}

TEST_F(Options, TimeoutIsNotRetryable) {
  Tr tr = make_tr();
  ASSERT_EQ(set_option(tr, FDB_TR_OPTION_TIMEOUT, 20), 0);
  let_expire(20);
  ASSERT_EQ(commit(tr), 1031);
  EXPECT_EQ(on_error(tr, 1031), 1031);
}

TEST_F(Options, TimeoutZeroMeansNone) {
  Tr tr = make_tr();
  ASSERT_EQ(set_option(tr, FDB_TR_OPTION_TIMEOUT, 20), 0);
  ASSERT_EQ(set_option(tr, FDB_TR_OPTION_TIMEOUT, 0), 0);
  let_expire(20);
  set(tr, k("a"), "1");
  EXPECT_EQ(commit(tr), 0);
}

// As FoundationDB's, where the expiry fires and ends the transaction: a TIMEOUT set after
// it (0 included) does not bring it back; only reset does.
TEST_F(Options, AnExpiredTimeoutIsNotUndoneByANewOne) {
  Tr tr = make_tr();
  ASSERT_EQ(set_option(tr, FDB_TR_OPTION_TIMEOUT, 20), 0);
  set(tr, k("a"), "1");
  let_expire(20);
  ASSERT_EQ(set_option(tr, FDB_TR_OPTION_TIMEOUT, 0), 0);
  EXPECT_EQ(commit(tr), 1031);
  EXPECT_EQ(on_error(tr, 1020), 1031);
  EXPECT_FALSE(read(k("a")).present);
  fdb_transaction_reset(tr.get());
  set(tr, k("a"), "1");
  EXPECT_EQ(commit(tr), 0);
}

TEST_F(Options, ResetClearsTheTimeout) {
  Tr tr = make_tr();
  ASSERT_EQ(set_option(tr, FDB_TR_OPTION_TIMEOUT, 20), 0);
  fdb_transaction_reset(tr.get());
  let_expire(20);
  set(tr, k("a"), "1");
  EXPECT_EQ(commit(tr), 0);
}

TEST_F(Options, ResetRestartsTheTimeoutClock) {
  Tr tr = make_tr();
  ASSERT_EQ(set_option(tr, FDB_TR_OPTION_TIMEOUT, 20), 0);
  let_expire(20);
  ASSERT_EQ(get(tr, k("a")).error, 1031);
  fdb_transaction_reset(tr.get());
  ASSERT_EQ(set_option(tr, FDB_TR_OPTION_TIMEOUT, 60000), 0);
  set(tr, k("a"), "1");
  EXPECT_EQ(commit(tr), 0);
}

TEST_F(Options, WatchAfterTheTimeoutIsTimedOut) {
  Tr tr = make_tr();
  ASSERT_EQ(set_option(tr, FDB_TR_OPTION_TIMEOUT, 20), 0);
  let_expire(20);
  Future w(fdb_transaction_watch(tr.get(), u8(k("w")), len(k("w"))));
  ASSERT_TRUE(wait_ready_for(w));
  EXPECT_EQ(fdb_future_get_error(w.get()), 1031);
}

TEST_F(Options, DatabaseTimeoutAppliesToNewTransactions) {
  Db d = open_db();
  ASSERT_EQ(set_db_option(d.get(), FDB_DB_OPTION_TRANSACTION_TIMEOUT, 20), 0);
  Tr tr = make_tr(d.get());
  let_expire(20);
  EXPECT_EQ(get(tr, k("a")).error, 1031);
}

TEST_F(Options, SizeLimit) {
  Tr tr = make_tr();
  ASSERT_EQ(set_option(tr, FDB_TR_OPTION_SIZE_LIMIT, 1000), 0);
  set(tr, k("a"), std::string(2000, 'v'));
  EXPECT_EQ(commit(tr), 2101);
  EXPECT_FALSE(read(k("a")).present);

  Tr small = make_tr();
  ASSERT_EQ(set_option(small, FDB_TR_OPTION_SIZE_LIMIT, 1000), 0);
  set(small, k("a"), std::string(100, 'v'));
  EXPECT_EQ(commit(small), 0);
}

// A commit refused by SIZE_LIMIT ends the transaction as FoundationDB's commitAndWatch
// does: its watches fail with 2101, and it takes no more watches or commits (2017).
TEST_F(Options, ACommitRefusedBySizeLimitFailsItsWatchesAndEndsTheTransaction) {
  Tr tr = make_tr();
  ASSERT_EQ(set_option(tr, FDB_TR_OPTION_SIZE_LIMIT, 100), 0);
  const std::string key = k("watched");
  Future w(fdb_transaction_watch(tr.get(), u8(key), len(key)));
  set(tr, k("big"), std::string(1000, 'x'));
  ASSERT_EQ(commit(tr), 2101);
  ASSERT_TRUE(wait_ready_for(w));
  EXPECT_EQ(fdb_future_get_error(w.get()), 2101);
  Future again(fdb_transaction_watch(tr.get(), u8(key), len(key)));
  ASSERT_TRUE(wait_ready_for(again));
  EXPECT_EQ(fdb_future_get_error(again.get()), 2017);
  EXPECT_EQ(commit(tr), 2017);
}

TEST_F(Options, DefaultSizeLimitIsTenMillionBytes) {
  Tr tr = make_tr();
  std::string value(100000, 'v');
  for (int i = 0; i < 101; ++i) set(tr, k("big" + std::to_string(i)), value);
  EXPECT_EQ(commit(tr), 2101);
}

TEST_F(Options, DatabaseSizeLimitAppliesToNewTransactions) {
  Db d = open_db();
  ASSERT_EQ(set_db_option(d.get(), FDB_DB_OPTION_TRANSACTION_SIZE_LIMIT, 1000), 0);
  Tr tr = make_tr(d.get());
  set(tr, k("a"), std::string(2000, 'v'));
  EXPECT_EQ(commit(tr), 2101);
}

TEST_F(Options, ReadYourWritesDisable) {
  ASSERT_EQ(write(k("a"), "committed"), 0);
  Tr tr = make_tr();
  ASSERT_EQ(set_option(tr, FDB_TR_OPTION_READ_YOUR_WRITES_DISABLE), 0);
  set(tr, k("a"), "mine");
  set(tr, k("b"), "mine");
  EXPECT_EQ(get(tr, k("a")).value, "committed");
  EXPECT_FALSE(get(tr, k("b")).present);
  Range r = get_range(tr, prefix(), prefix_end());
  ASSERT_EQ(r.error, 0);
  EXPECT_EQ(r.rows, (Rows{{k("a"), "committed"}}));
  ASSERT_EQ(commit(tr), 0);
  EXPECT_EQ(read(k("a")).value, "mine");
  EXPECT_EQ(read(k("b")).value, "mine");
}

// FoundationDB's client refuses READ_YOUR_WRITES_DISABLE with client_invalid_operation once
// the transaction has started a read or made a write while reading its writes
// (ReadYourWritesTransaction::setOption: `reading.getFutureCount() > 0 || !cache.empty() ||
// !writes.empty()`). `reading` counts every get, get_key, get_range and watch ever started,
// reading its writes or not; a write made while it reads its writes goes to its write map,
// one made after READ_YOUR_WRITES_DISABLE straight to the database transaction. The
// refusal is the transaction's deferred error (ThreadSafeTransaction::setOption applies
// the option on the network thread, onMainThreadVoid with deferredError): the call
// returns 0, and the next read or commit fails with 2000.
fdb_error_t refused_later(const Tr& tr, FDBTransactionOption o, const std::string& key) {
  EXPECT_EQ(set_option(tr, o), 0);
  const fdb_error_t read = get(tr, key).error;
  EXPECT_EQ(commit(tr), read);  // the same deferred error
  return read;
}

TEST_F(Options, ReadYourWritesDisableAfterAReadOrAWriteIsInvalid) {
  Tr read = make_tr();
  ASSERT_EQ(get(read, k("a")).error, 0);
  EXPECT_EQ(refused_later(read, FDB_TR_OPTION_READ_YOUR_WRITES_DISABLE, k("later")), 2000);
  Tr wrote = make_tr();
  set(wrote, k("a"), "1");
  EXPECT_EQ(refused_later(wrote, FDB_TR_OPTION_READ_YOUR_WRITES_DISABLE, k("later")), 2000);
}

TEST_F(Options, ReadYourWritesDisableAgainAfterAnyReadIsInvalid) {
  ASSERT_EQ(write(k("a"), "committed"), 0);
  auto disabled = [] {
    Tr tr = make_tr();
    EXPECT_EQ(set_option(tr, FDB_TR_OPTION_READ_YOUR_WRITES_DISABLE), 0);
    return tr;
  };
  Tr by_get = disabled();
  ASSERT_EQ(get(by_get, k("a")).value, "committed");
  EXPECT_EQ(refused_later(by_get, FDB_TR_OPTION_READ_YOUR_WRITES_DISABLE, k("later")), 2000);
  Tr by_snapshot_get = disabled();
  ASSERT_EQ(get(by_snapshot_get, k("a"), /*snapshot=*/true).value, "committed");
  EXPECT_EQ(refused_later(by_snapshot_get, FDB_TR_OPTION_READ_YOUR_WRITES_DISABLE, k("later")),
            2000);
  Tr by_get_key = disabled();
  ASSERT_EQ(get_key(by_get_key, first_greater_or_equal(k("a"))).error, 0);
  EXPECT_EQ(refused_later(by_get_key, FDB_TR_OPTION_READ_YOUR_WRITES_DISABLE, k("later")), 2000);
  Tr by_range = disabled();
  ASSERT_EQ(get_range(by_range, prefix(), prefix_end()).error, 0);
  EXPECT_EQ(refused_later(by_range, FDB_TR_OPTION_READ_YOUR_WRITES_DISABLE, k("later")), 2000);
  Tr by_addresses = disabled();
  Future addresses(
      fdb_transaction_get_addresses_for_key(by_addresses.get(), u8(k("a")), len(k("a"))));
  ASSERT_EQ(wait(addresses), 0);
  EXPECT_EQ(refused_later(by_addresses, FDB_TR_OPTION_READ_YOUR_WRITES_DISABLE, k("later")), 2000);
  // Reset and on_error start the count again.
  fdb_transaction_reset(by_get.get());
  EXPECT_EQ(set_option(by_get, FDB_TR_OPTION_READ_YOUR_WRITES_DISABLE), 0);
  EXPECT_EQ(get(by_get, k("a")).error, 0);  // accepted: nothing deferred
  ASSERT_EQ(on_error(by_range, 1020), 0);
  EXPECT_EQ(set_option(by_range, FDB_TR_OPTION_READ_YOUR_WRITES_DISABLE), 0);
  EXPECT_EQ(get(by_range, k("a")).error, 0);
}

// What FoundationDB's client answers without starting a read leaves the option settable a
// second time: a get of a key longer than any key, a range whose begin is not below its
// end, a read of the special key space; and writes made after the first.
TEST_F(Options, ReadYourWritesDisableAgainAfterWhatIsNoReadIsAccepted) {
  Tr tr = make_tr();
  ASSERT_EQ(set_option(tr, FDB_TR_OPTION_READ_YOUR_WRITES_DISABLE), 0);
  set(tr, k("a"), "mine");
  ASSERT_FALSE(get(tr, std::string(20'000, 'k')).present);
  ASSERT_EQ(get_range(tr, k("b"), k("a")).error, 0);
  ASSERT_EQ(get_range(tr, first_greater_than(k("a")), first_greater_or_equal(k("a"))).error, 0);
  ASSERT_EQ(get(tr, "\xff\xff/transaction/conflicting_keys/").error, 0);
  EXPECT_EQ(set_option(tr, FDB_TR_OPTION_READ_YOUR_WRITES_DISABLE), 0);
  ASSERT_EQ(commit(tr), 0);
  EXPECT_EQ(read(k("a")).value, "mine");
}

TEST_F(Options, WatchWithReadYourWritesDisabledIsWatchesDisabled) {
  Tr tr = make_tr();
  ASSERT_EQ(set_option(tr, FDB_TR_OPTION_READ_YOUR_WRITES_DISABLE), 0);
  Future w(fdb_transaction_watch(tr.get(), u8(k("w")), len(k("w"))));
  ASSERT_TRUE(wait_ready_for(w));
  EXPECT_EQ(fdb_future_get_error(w.get()), 1034);
}

TEST_F(Options, ResetRestoresReadYourWrites) {
  Tr tr = make_tr();
  ASSERT_EQ(set_option(tr, FDB_TR_OPTION_READ_YOUR_WRITES_DISABLE), 0);
  fdb_transaction_reset(tr.get());
  set(tr, k("a"), "mine");
  EXPECT_EQ(get(tr, k("a")).value, "mine");
}

TEST_F(Options, SnapshotReadYourWritesDisable) {
  ASSERT_EQ(write(k("a"), "committed"), 0);
  Tr tr = make_tr();
  ASSERT_EQ(set_option(tr, FDB_TR_OPTION_SNAPSHOT_RYW_DISABLE), 0);
  set(tr, k("a"), "mine");
  EXPECT_EQ(get(tr, k("a"), /*snapshot=*/true).value, "committed");
  EXPECT_EQ(get(tr, k("a"), /*snapshot=*/false).value, "mine");
  Range r = get_range(tr, prefix(), prefix_end(), {.snapshot = true});
  ASSERT_EQ(r.error, 0);
  EXPECT_EQ(r.rows, (Rows{{k("a"), "committed"}}));
}

TEST_F(Options, SnapshotReadYourWritesEnableUndoesDisable) {
  Tr tr = make_tr();
  ASSERT_EQ(set_option(tr, FDB_TR_OPTION_SNAPSHOT_RYW_DISABLE), 0);
  ASSERT_EQ(set_option(tr, FDB_TR_OPTION_SNAPSHOT_RYW_ENABLE), 0);
  set(tr, k("a"), "mine");
  EXPECT_EQ(get(tr, k("a"), /*snapshot=*/true).value, "mine");
}

// The two options count: disables must outnumber enables (FoundationDB's rule).
TEST_F(Options, SnapshotReadYourWritesOptionsCount) {
  Tr tr = make_tr();
  ASSERT_EQ(set_option(tr, FDB_TR_OPTION_SNAPSHOT_RYW_DISABLE), 0);
  ASSERT_EQ(set_option(tr, FDB_TR_OPTION_SNAPSHOT_RYW_DISABLE), 0);
  ASSERT_EQ(set_option(tr, FDB_TR_OPTION_SNAPSHOT_RYW_ENABLE), 0);
  set(tr, k("a"), "mine");
  EXPECT_FALSE(get(tr, k("a"), /*snapshot=*/true).present);
  ASSERT_EQ(set_option(tr, FDB_TR_OPTION_SNAPSHOT_RYW_ENABLE), 0);
  EXPECT_EQ(get(tr, k("a"), /*snapshot=*/true).value, "mine");
}

TEST_F(Options, DatabaseSnapshotReadYourWritesDisable) {
  Db d = open_db();
  ASSERT_EQ(fdb_database_set_option(d.get(), FDB_DB_OPTION_SNAPSHOT_RYW_DISABLE, nullptr, 0), 0);
  Tr tr = make_tr(d.get());
  set(tr, k("a"), "mine");
  EXPECT_FALSE(get(tr, k("a"), /*snapshot=*/true).present);
  ASSERT_EQ(fdb_database_set_option(d.get(), FDB_DB_OPTION_SNAPSHOT_RYW_ENABLE, nullptr, 0), 0);
  Tr tr2 = make_tr(d.get());
  set(tr2, k("a"), "mine");
  EXPECT_EQ(get(tr2, k("a"), /*snapshot=*/true).value, "mine");
}

// The next write adds no write conflict range, so the reader of its key commits; the write
// after it adds one (ReadYourWritesTransaction::set takes the flag,
// getAndResetWriteConflictDisabled, fdbclient/ReadYourWrites.cpp in apple/foundationdb).
TEST_F(Options, NextWriteNoWriteConflictRange) {
  auto reader_commits = [&](const std::string& key) {
    Tr reader = make_tr();
    EXPECT_EQ(get(reader, k(key)).error, 0);
    Tr writer = make_tr();
    EXPECT_EQ(set_option(writer, FDB_TR_OPTION_NEXT_WRITE_NO_WRITE_CONFLICT_RANGE), 0);
    set(writer, k("a"), "quiet");
    set(writer, k("b"), "loud");
    EXPECT_EQ(commit(writer), 0);
    set(reader, k("z"), "x");
    return commit(reader);
  };
  EXPECT_EQ(reader_commits("a"), 0);
  EXPECT_EQ(read(k("a")).value, "quiet");
  EXPECT_EQ(reader_commits("b"), 1020);
}

// Integer options are 8 bytes, within FoundationDB's bounds; otherwise invalid_option_value
// (2006), checked on the network thread, so that the error is deferred to the next read or
// commit, as FoundationDB's own C test "fdb_transaction_set_option size_limit too small"
// expects (bindings/c/test/unit/unit_tests.cpp in apple/foundationdb: the set succeeds, the
// commit fails with 2006). The multi-version client checks TIMEOUT itself only while no
// client transaction exists yet (MultiVersionTransaction::setOption).
TEST_F(Options, IntegerOptionsOutOfRangeAreInvalidOptionValue) {
  Tr tr = make_tr();
  EXPECT_EQ(set_option(tr, FDB_TR_OPTION_SIZE_LIMIT, 32), 0);
  EXPECT_EQ(set_option(tr, FDB_TR_OPTION_SIZE_LIMIT, 10000000), 0);
  EXPECT_EQ(get(tr, k("a")).error, 0);  // nothing deferred
  const std::pair<FDBTransactionOption, int64_t> deferred[] = {
      {FDB_TR_OPTION_TIMEOUT, -1},          {FDB_TR_OPTION_RETRY_LIMIT, -2},
      {FDB_TR_OPTION_MAX_RETRY_DELAY, -1},  {FDB_TR_OPTION_SIZE_LIMIT, 31},
      {FDB_TR_OPTION_SIZE_LIMIT, 10000001},
  };
  for (const auto& [option, value] : deferred) {
    Tr later = make_tr();
    EXPECT_EQ(set_option(later, option, value), 0) << option;
    set(later, k("a"), "bar");
    EXPECT_EQ(commit(later), 2006) << option;
    Tr read = make_tr();
    EXPECT_EQ(set_option(read, option, value), 0) << option;
    EXPECT_EQ(get(read, k("a")).error, 2006) << option;
    fdb_transaction_reset(read.get());  // a reset clears it
    EXPECT_EQ(get(read, k("a")).error, 0) << option;
  }
  const std::string four = le32(100);
  for (auto o : {FDB_TR_OPTION_TIMEOUT, FDB_TR_OPTION_SIZE_LIMIT}) {
    Tr bad_length = make_tr();
    EXPECT_EQ(fdb_transaction_set_option(bad_length.get(), o, u8(four), 4), 0) << o;
    EXPECT_EQ(commit(bad_length), 2006) << o;
    Tr no_value = make_tr();
    EXPECT_EQ(fdb_transaction_set_option(no_value.get(), o, nullptr, 0), 0) << o;
    EXPECT_EQ(get(no_value, k("a")).error, 2006) << o;
  }
  // Once an option failed, later ones are not applied (FoundationDB's doOnMainThreadVoid
  // returns at once when the deferred error is set): the retry limit of 0 set after a
  // failed SIZE_LIMIT does not stop on_error from retrying, and the retry clears the error.
  Tr ignored = make_tr();
  EXPECT_EQ(set_option(ignored, FDB_TR_OPTION_SIZE_LIMIT, 31), 0);
  EXPECT_EQ(set_option(ignored, FDB_TR_OPTION_RETRY_LIMIT, 0), 0);
  EXPECT_EQ(on_error(ignored, 1020), 0);
  EXPECT_EQ(get(ignored, k("a")).error, 0);
}

// FoundationDB checks the shape of each option's value before it acts on it
// (Transaction::setOption in fdbclient/NativeAPI.actor.cpp, ReadYourWritesTransaction::
// setOptionImpl in fdbclient/ReadYourWrites.actor.cpp: validateOptionValueNotPresent,
// validateOptionValuePresent, extractIntOption; TagSet::addTag in
// fdbclient/TagThrottle.actor.cpp), on its network thread: the call returns 0 and the next
// read fails with the error (ThreadSafeTransaction::setOption).
TEST_F(Options, OptionValuesOfTheWrongShapeAreDeferredErrors) {
  const std::string one = "x";
  const std::string empty;
  auto deferred = [&](int option, const uint8_t* value, int length) {
    Tr tr = make_tr();
    EXPECT_EQ(fdb_transaction_set_option(tr.get(), option, value, length), 0) << option;
    return get(tr, k("a")).error;
  };
  auto bytes = [](std::size_t n) { return std::string(n, 'i'); };
  // A value given to an option that takes none (an empty one counts as none): causal write
  // risky, next write no write conflict range, read your writes disable, access system keys,
  // snapshot RYW disable, lock aware, report conflicting keys, special key
  // space relaxed, enable replica consistency check.
  for (int o : {10, 30, 51, 301, 601, 700, 712, 713, 4000}) {
    EXPECT_EQ(deferred(o, u8(one), len(one)), 2006) << o;
    EXPECT_EQ(deferred(o, u8(empty), 0), 0) << o;
  }
  // No value for one that needs it: debug transaction identifier, tag, span parent,
  // idempotency id.
  for (int o : {403, 800, 900, 504}) EXPECT_EQ(deferred(o, nullptr, 0), 2006) << o;
  // Sizes: an identifier of 1-100 bytes, a span context of 33, an idempotency id of 16-255
  // (else invalid_option), a tag of at most 255 (else tag_too_long).
  const std::pair<int, std::size_t> sizes[] = {{403, 0},  {403, 101}, {900, 32},  {900, 34},
                                               {504, 15}, {504, 256}, {800, 256}, {801, 256}};
  const fdb_error_t expected[] = {2006, 2006, 2006, 2006, 2007, 2007, 2110, 2110};
  for (std::size_t i = 0; i < std::size(sizes); ++i) {
    const auto& [o, n] = sizes[i];
    const std::string v = bytes(n);
    EXPECT_EQ(deferred(o, u8(v), len(v)), expected[i]) << o << " with " << n << " bytes";
  }
  for (const auto& [o, n] : {std::pair<int, std::size_t>{403, 1},
                             {403, 100},
                             {504, 16},
                             {504, 255},
                             {800, 255},
                             {801, 0}}) {
    const std::string v = bytes(n);
    EXPECT_EQ(deferred(o, u8(v), len(v)), 0) << o << " with " << n << " bytes";
  }
  // Integers: transaction logging max field length -1 or positive; consistency check
  // required replicas from -2.
  const std::pair<int, int64_t> ints[] = {{405, 0}, {405, -2}, {4001, -3}};
  for (const auto& [o, v] : ints) {
    Tr tr = make_tr();
    EXPECT_EQ(set_option(tr, static_cast<FDBTransactionOption>(o), v), 0) << o;
    EXPECT_EQ(get(tr, k("a")).error, 2006) << o << " = " << v;
  }
  for (const auto& [o, v] : {std::pair<int, int64_t>{405, -1}, {405, 1}, {4001, -2}}) {
    Tr tr = make_tr();
    EXPECT_EQ(set_option(tr, static_cast<FDBTransactionOption>(o), v), 0) << o;
    EXPECT_EQ(get(tr, k("a")).error, 0) << o << " = " << v;
  }
  EXPECT_STREQ(fdb_get_error(2110), "Tag set on transaction is too long");
}

// An attempt carries at most five tags (the client knob MAX_TAGS_PER_TRANSACTION): TagSet::
// addTag (fdbclient/TagThrottle.actor.cpp) checks the count before it looks the tag up, so a
// sixth fails even when it repeats one, and a repeated one counts once. The tags are
// transaction options that are not persistent: a reset or a retry starts them over
// (TransactionState::cloneAndReset in fdbclient/NativeAPI.actor.cpp).
TEST_F(Options, AnAttemptCarriesAtMostFiveTags) {
  auto tag = [](const Tr& tr, int option, const std::string& t) {
    return fdb_transaction_set_option(tr.get(), option, u8(t), len(t));
  };
  Tr tr = make_tr();
  EXPECT_EQ(tag(tr, 800, "a"), 0);
  EXPECT_EQ(tag(tr, 800, "a"), 0);  // the same tag again: still one
  for (const char* t : {"b", "c", "d"}) EXPECT_EQ(tag(tr, 800, t), 0);
  EXPECT_EQ(tag(tr, 801, "e"), 0);  // AUTO_THROTTLE_TAG counts among them
  EXPECT_EQ(get(tr, k("a")).error, 0);
  EXPECT_EQ(tag(tr, 800, "a"), 0);  // a sixth, though one of the five
  EXPECT_EQ(get(tr, k("a")).error, 2109);
  EXPECT_EQ(on_error(tr, 1020), 0);  // a retry starts the count over
  for (const char* t : {"a", "b", "c", "d", "e"}) EXPECT_EQ(tag(tr, 801, t), 0);
  EXPECT_EQ(get(tr, k("a")).error, 0);
  EXPECT_EQ(tag(tr, 800, "f"), 0);
  set(tr, k("a"), "1");
  EXPECT_EQ(commit(tr), 2109);
  fdb_transaction_reset(tr.get());  // so does a reset
  EXPECT_EQ(tag(tr, 800, "f"), 0);
  set(tr, k("a"), "1");
  EXPECT_EQ(commit(tr), 0);
  EXPECT_STREQ(fdb_get_error(2109), "Too many tags set on transaction");
}

TEST_F(Options, OtherTransactionOptionsAreAccepted) {
  Tr tr = make_tr();
  // CAUSAL_WRITE_RISKY, CAUSAL_READ_RISKY, PRIORITY_SYSTEM_IMMEDIATE, PRIORITY_BATCH,
  // TRANSACTION_LOGGING_ENABLE (a string), LOG_TRANSACTION, LOCK_AWARE, USE_PROVISIONAL_PROXIES,
  // REPORT_CONFLICTING_KEYS, TAG (a string), AUTO_THROTTLE_TAG (a string).
  for (int o : {10, 20, 200, 201, 402, 404, 700, 711, 712, 800, 801}) {
    std::string value = (o == 402 || o == 800 || o == 801) ? "strata-test" : "";
    EXPECT_EQ(
        fdb_transaction_set_option(tr.get(), o, value.empty() ? nullptr : u8(value), len(value)), 0)
        << "option " << o;
  }
  set(tr, k("a"), "1");
  EXPECT_EQ(commit(tr), 0);
}

TEST_F(Options, OtherDatabaseOptionsAreAccepted) {
  Db d = open_db();
  // LOCATION_CACHE_SIZE, MAX_WATCHES (integers); MACHINE_ID, DATACENTER_ID (strings).
  EXPECT_EQ(set_db_option(d.get(), 10, 100000), 0);
  EXPECT_EQ(set_db_option(d.get(), 20, 10000), 0);
  std::string id = "strata";
  EXPECT_EQ(fdb_database_set_option(d.get(), 21, u8(id), len(id)), 0);
  EXPECT_EQ(fdb_database_set_option(d.get(), 22, u8(id), len(id)), 0);
  Tr tr = make_tr(d.get());
  set(tr, k("a"), "1");
  EXPECT_EQ(commit(tr), 0);
}

// FoundationDB's Transaction::setOption (fdbclient/NativeAPI.actor.cpp): an attempt keeps
// its DEBUG_TRANSACTION_IDENTIFIER once set, so a different one is client_invalid_operation
// (2000), and LOG_TRANSACTION needs one set before it (2000); TRANSACTION_LOGGING_ENABLE
// sets one, then logs. Like every option's error, deferred to the next read or commit.
// A reset or a retry starts without one (Transaction::resetImpl's new TransactionState).
TEST_F(Options, ADebugIdentifierStaysAndLoggingNeedsOne) {
  constexpr int kLoggingEnable = 402, kIdentifier = 403, kLog = 404;
  auto set_id = [](Tr& tr, int option, const std::string& id) {
    return fdb_transaction_set_option(tr.get(), static_cast<FDBTransactionOption>(option), u8(id),
                                      len(id));
  };
  auto commit_after = [&](const std::function<void(Tr&)>& options) {
    Tr tr = make_tr();
    options(tr);
    set(tr, k("a"), "v");
    return commit(tr);
  };
  EXPECT_EQ(commit_after([&](Tr& tr) {
              EXPECT_EQ(set_id(tr, kIdentifier, "one"), 0);
              EXPECT_EQ(set_id(tr, kIdentifier, "one"), 0);
              EXPECT_EQ(set_option(tr, static_cast<FDBTransactionOption>(kLog)), 0);
            }),
            0);
  EXPECT_EQ(commit_after([&](Tr& tr) {
              EXPECT_EQ(set_id(tr, kIdentifier, "one"), 0);
              EXPECT_EQ(set_id(tr, kIdentifier, "two"), 0);
            }),
            2000);
  EXPECT_EQ(commit_after([&](Tr& tr) {
              EXPECT_EQ(set_option(tr, static_cast<FDBTransactionOption>(kLog)), 0);
            }),
            2000);
  EXPECT_EQ(commit_after([&](Tr& tr) { EXPECT_EQ(set_id(tr, kLoggingEnable, "one"), 0); }), 0);
  EXPECT_EQ(commit_after([&](Tr& tr) {
              EXPECT_EQ(set_id(tr, kLoggingEnable, "one"), 0);
              EXPECT_EQ(set_id(tr, kIdentifier, "two"), 0);
            }),
            2000);
  // A reset and a retry each start without one.
  Tr tr = make_tr();
  ASSERT_EQ(set_id(tr, kIdentifier, "one"), 0);
  fdb_transaction_reset(tr.get());
  ASSERT_EQ(set_id(tr, kIdentifier, "two"), 0);
  ASSERT_EQ(on_error(tr, 1020), 0);
  ASSERT_EQ(set_option(tr, static_cast<FDBTransactionOption>(kLog)), 0);
  EXPECT_EQ(get(tr, k("a")).error, 2000);
  ASSERT_EQ(on_error(tr, 1020), 0);
  ASSERT_EQ(set_id(tr, kIdentifier, "three"), 0);
  ASSERT_EQ(set_option(tr, static_cast<FDBTransactionOption>(kLog)), 0);
  EXPECT_EQ(get(tr, k("a")).error, 0);
}

// The database options FoundationDB's client sets on its network thread
// (DatabaseContext::setOption in fdbclient/NativeAPI.actor.cpp, called through
// ThreadSafeDatabase::setOption's onMainThreadVoid with DatabaseContext::deferredError):
// a value it refuses (extractIntOption, validateOptionValueNotPresent) is not the call's
// error but the database's deferred one, which every read and commit of the handle's
// transactions then fails with, those made before included
// (ReadYourWritesTransaction::checkDeferredError asks the database first), as do the
// handle's reboot_worker, create_snapshot and force_recovery_with_data_loss.
// get_server_protocol is served from the client's own monitor database
// (MultiVersionDatabase::getServerProtocol) and does not see it.
TEST_F(Options, ARefusedDatabaseOptionValueFailsTheHandleLater) {
  const std::string nine(9, 'x');
  const std::string one_ryw("x");
  struct Case {
    const char* name;
    int option;
    std::string value;
  };
  const Case cases[] = {
      {"max watches below 0", FDB_DB_OPTION_MAX_WATCHES, le64(-1)},
      {"max watches above 1,000,000", FDB_DB_OPTION_MAX_WATCHES, le64(1'000'001)},
      {"location cache size below 0", 10, le64(-1)},
      {"location cache size of 9 bytes", 10, nine},
      {"test causal read risky above 100", 900, le64(101)},
      {"snapshot RYW enable with a value", FDB_DB_OPTION_SNAPSHOT_RYW_ENABLE, one_ryw},
      {"snapshot RYW disable with a value", FDB_DB_OPTION_SNAPSHOT_RYW_DISABLE, one_ryw},
      {"use config database with a value", 800, one_ryw},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    Db d = open_db();
    Tr before = make_tr(d.get());
    set(before, k("a"), "before");
    EXPECT_EQ(fdb_database_set_option(d.get(), static_cast<FDBDatabaseOption>(c.option),
                                      u8(c.value), len(c.value)),
              0);
    EXPECT_EQ(commit(before), 2006);
    Tr after = make_tr(d.get());
    EXPECT_EQ(get(after, k("a")).error, 2006);
    set(after, k("a"), "after");
    EXPECT_EQ(commit(after), 2006);
    // on_error asks no deferred error (RYWImpl::onError): a conflict is retried, and the
    // retry's reads fail again.
    EXPECT_EQ(on_error(after, 1020), 0);
    Future version(fdb_transaction_get_read_version(after.get()));
    EXPECT_EQ(wait(version), 2006);
    Future watched(fdb_transaction_watch(after.get(), u8(k("a")), len(k("a"))));
    EXPECT_EQ(wait(watched), 2006);
    const std::string address("127.0.0.1:4500");
    Future reboot(fdb_database_reboot_worker(d.get(), u8(address), len(address), 0, 0));
    EXPECT_EQ(wait(reboot), 2006);
    Future snapshot(fdb_database_create_snapshot(d.get(), u8(address), 1, u8(address), 1));
    EXPECT_EQ(wait(snapshot), 2006);
    // A connected handle's protocol comes from its own database
    // (MultiVersionDatabase::updateDatabase makes it the version monitor), which checks.
    Future protocol(fdb_database_get_server_protocol(d.get(), 0));
    EXPECT_EQ(wait(protocol), 2006);
    Future ranges(fdb_database_list_blobbified_ranges(d.get(), u8(k("")), len(k("")), u8(k("z")),
                                                      len(k("z")), 10));
    EXPECT_EQ(wait(ranges), 2006);
    // The first refusal stays, and later options are not applied, a default's refused
    // value included; an unknown code is still invalid_option.
    EXPECT_EQ(set_db_option(d.get(), FDB_DB_OPTION_MAX_WATCHES, 5), 0);
    EXPECT_EQ(set_db_option(d.get(), FDB_DB_OPTION_TRANSACTION_TIMEOUT, -1), 0);
    EXPECT_EQ(fdb_database_set_option(d.get(), static_cast<FDBDatabaseOption>(11), nullptr, 0),
              2007);
    Tr later = make_tr(d.get());
    EXPECT_EQ(get(later, k("a")).error, 2006);
  }
  // Another handle on the same database is not touched, and nothing was written.
  Tr other = make_tr();
  EXPECT_FALSE(get(other, k("a")).present);
  // An empty value is no value to an option that takes none.
  Db d = open_db();
  ASSERT_EQ(fdb_database_set_option(d.get(), FDB_DB_OPTION_SNAPSHOT_RYW_DISABLE, u8(""), 0), 0);
  Tr tr = make_tr(d.get());
  set(tr, k("a"), "mine");
  EXPECT_FALSE(get(tr, k("a"), /*snapshot=*/true).present) << "disabled, and no error";

  // A transaction default's refused value fails the call and leaves the handle as it was
  // (docs/decisions/0043).
  Db defaults = open_db();
  EXPECT_EQ(set_db_option(defaults.get(), FDB_DB_OPTION_TRANSACTION_TIMEOUT, -1), 2006);
  EXPECT_EQ(set_db_option(defaults.get(), FDB_DB_OPTION_TRANSACTION_SIZE_LIMIT, 31), 2006);
  // TRANSACTION_CAUSAL_READ_RISKY and _REPORT_CONFLICTING_KEYS take no value, as the
  // transaction options they stand for; TRANSACTION_LOGGING_MAX_FIELD_LENGTH is not 0.
  for (int option : {504, 505, 506, 700, 701, 702}) {
    EXPECT_EQ(fdb_database_set_option(defaults.get(), static_cast<FDBDatabaseOption>(option),
                                      u8(one_ryw), len(one_ryw)),
              2006)
        << option;
    EXPECT_EQ(
        fdb_database_set_option(defaults.get(), static_cast<FDBDatabaseOption>(option), nullptr, 0),
        0)
        << option;
  }
  EXPECT_EQ(set_db_option(defaults.get(), static_cast<FDBDatabaseOption>(405), 0), 2006);
  EXPECT_EQ(set_db_option(defaults.get(), static_cast<FDBDatabaseOption>(405), -1), 0);
  Tr usable = make_tr(defaults.get());
  set(usable, k("a"), "v");
  EXPECT_EQ(commit(usable), 0);
}

// A code FoundationDB 7.4 does not define fails with invalid_option (2007), as its client
// answers, and changes nothing; deprecated codes it still lists are accepted.
TEST_F(Options, UnknownOptionCodesAreInvalidOption) {
  Tr tr = make_tr();
  for (int o : {0, 1, 22, 499, 506, 599, 715, 3000, 99999, -1}) {
    EXPECT_EQ(fdb_transaction_set_option(tr.get(), o, nullptr, 0), 2007) << "option " << o;
  }
  EXPECT_EQ(fdb_transaction_set_option(tr.get(), 52, nullptr, 0), 0);   // READ_AHEAD_DISABLE
  EXPECT_EQ(fdb_transaction_set_option(tr.get(), 130, nullptr, 0), 0);  // DURABILITY_DEV_NULL...
  set(tr, k("a"), "1");
  EXPECT_EQ(commit(tr), 0);

  Db d = open_db();
  for (int o : {0, 11, 28, 499, 507, 703, 901, 99999}) {
    EXPECT_EQ(fdb_database_set_option(d.get(), o, nullptr, 0), 2007) << "option " << o;
  }
  EXPECT_EQ(fdb_database_set_option(d.get(), 505, nullptr, 0), 0);  // INCLUDE_PORT_IN_ADDRESS

  for (int o : {0, 11, 44, 56, 73, 999, 1003}) {
    EXPECT_EQ(fdb_network_set_option(o, nullptr, 0), 2007) << "option " << o;
  }
  EXPECT_EQ(fdb_network_set_option(70, nullptr, 0), 0);  // DISABLE_CLIENT_STATISTICS_LOGGING
}

}  // namespace
}  // namespace fdbc_test
