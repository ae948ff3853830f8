// Versions: get/set read version, committed version and versionstamps.
#include <initializer_list>
#include <string>

#include <gtest/gtest.h>

#include "fdb_c/fdb_c.h"
#include "fdb_c_test_util.hpp"

namespace fdbc_test {
namespace {

using Versions = FdbTest;

TEST_F(Versions, ReadVersionIsPositiveAndStable) {
  Tr tr = make_tr();
  int64_t v1 = read_version(tr);
  EXPECT_GT(v1, 0);
  ASSERT_EQ(write(k("a"), "1"), 0);
  EXPECT_EQ(read_version(tr), v1);  // fixed once taken
}

TEST_F(Versions, ReadVersionSeesEveryEarlierCommit) {
  Tr w = make_tr();
  set(w, k("a"), "1");
  ASSERT_EQ(commit(w), 0);
  int64_t cv = committed_version(w);
  ASSERT_GT(cv, 0);
  Tr r = make_tr();
  EXPECT_GE(read_version(r), cv);
  EXPECT_EQ(get(r, k("a")).value, "1");
}

TEST_F(Versions, CommittedVersionsIncrease) {
  int64_t last = 0;
  for (int i = 0; i < 5; ++i) {
    Tr tr = make_tr();
    set(tr, k("a"), std::to_string(i));
    ASSERT_EQ(commit(tr), 0);
    int64_t cv = committed_version(tr);
    EXPECT_GT(cv, last);
    last = cv;
  }
}

// As FoundationDB's client (NativeAPI's committedVersion starts as invalidVersion, -1, and
// a reset makes it so again): success and -1 until a commit succeeds.
TEST_F(Versions, CommittedVersionBeforeCommitIsMinusOne) {
  Tr tr = make_tr();
  int64_t v = 0;
  EXPECT_EQ(fdb_transaction_get_committed_version(tr.get(), &v), 0);
  EXPECT_EQ(v, -1);
  set(tr, k("a"), "1");
  v = 0;
  EXPECT_EQ(fdb_transaction_get_committed_version(tr.get(), &v), 0);
  EXPECT_EQ(v, -1);
  ASSERT_EQ(commit(tr), 0);
  EXPECT_GT(committed_version(tr), 0);
  fdb_transaction_reset(tr.get());
  v = 0;
  EXPECT_EQ(fdb_transaction_get_committed_version(tr.get(), &v), 0);
  EXPECT_EQ(v, -1);
}

TEST_F(Versions, CommittedVersionOfReadOnlyCommitIsMinusOne) {
  Tr tr = make_tr();
  ASSERT_EQ(get(tr, k("a")).error, 0);
  ASSERT_EQ(commit(tr), 0);
  EXPECT_EQ(committed_version(tr), -1);
}

TEST_F(Versions, SetReadVersionReadsTheOlderSnapshot) {
  ASSERT_EQ(write(k("a"), "old"), 0);
  Tr holder = make_tr();  // keeps the old version alive (the MVCC window)
  int64_t old_version = read_version(holder);
  ASSERT_EQ(get(holder, k("a")).value, "old");
  ASSERT_EQ(write(k("a"), "new"), 0);

  Tr tr = make_tr();
  fdb_transaction_set_read_version(tr.get(), old_version);
  EXPECT_EQ(read_version(tr), old_version);
  Value v = get(tr, k("a"));
  EXPECT_EQ(v.error, 0);
  EXPECT_EQ(v.value, "old");
  EXPECT_EQ(read(k("a")).value, "new");
}

TEST_F(Versions, SetReadVersionThenConflictingCommitIsNotCommitted) {
  ASSERT_EQ(write(k("a"), "old"), 0);
  Tr holder = make_tr();
  int64_t old_version = read_version(holder);
  ASSERT_EQ(get(holder, k("a")).error, 0);
  ASSERT_EQ(write(k("a"), "new"), 0);

  Tr tr = make_tr();
  fdb_transaction_set_read_version(tr.get(), old_version);
  ASSERT_EQ(get(tr, k("a")).value, "old");
  set(tr, k("b"), "x");
  EXPECT_EQ(commit(tr), 1020);
}

TEST_F(Versions, SetReadVersionTwiceIsReadVersionAlreadySet) {
  Tr probe = make_tr();
  int64_t v = read_version(probe);
  Tr tr = make_tr();
  fdb_transaction_set_read_version(tr.get(), v);
  fdb_transaction_set_read_version(tr.get(), v);
  EXPECT_EQ(get(tr, k("a")).error, 2010);
}

TEST_F(Versions, SetReadVersionAfterAReadIsReadVersionAlreadySet) {
  Tr tr = make_tr();
  int64_t v = read_version(tr);
  fdb_transaction_set_read_version(tr.get(), v);
  set(tr, k("a"), "x");
  EXPECT_EQ(commit(tr), 2010);
}

TEST_F(Versions, SetReadVersionInTheFutureIsFutureVersion) {
  Tr probe = make_tr();
  int64_t v = read_version(probe);
  Tr tr = make_tr();
  fdb_transaction_set_read_version(tr.get(), v + 1000000000);
  EXPECT_EQ(get(tr, k("a")).error, 1009);
}

TEST_F(Versions, ResetAllowsANewReadVersion) {
  Tr probe = make_tr();
  int64_t v = read_version(probe);
  Tr tr = make_tr();
  ASSERT_GT(read_version(tr), 0);
  fdb_transaction_reset(tr.get());
  fdb_transaction_set_read_version(tr.get(), v);
  EXPECT_EQ(get(tr, k("a")).error, 0);
  EXPECT_EQ(read_version(tr), v);
}

// ---- Versionstamps --------------------------------------------------------------------------

TEST_F(Versions, VersionstampCompletesWithTheCommitAndMatchesTheCommitVersion) {
  Tr tr = make_tr();
  set(tr, k("a"), "1");
  Future vs(fdb_transaction_get_versionstamp(tr.get()));
  EXPECT_FALSE(fdb_future_is_ready(vs.get()));
  ASSERT_EQ(commit(tr), 0);
  ASSERT_TRUE(wait_ready_for(vs));
  Key stamp = key_of(vs.get());
  ASSERT_EQ(stamp.error, 0);
  ASSERT_EQ(stamp.key.size(), 10u);
  EXPECT_EQ(from_be(stamp.key.substr(0, 8)), committed_version(tr));
}

// Every one of `stamps` completes with the versionstamp of tr's commit: ten bytes, the
// committed version first.
void expect_commit_stamps(std::initializer_list<Future*> stamps, const Tr& tr) {
  for (Future* vs : stamps) {
    ASSERT_TRUE(wait_ready_for(*vs));
    Key got = key_of(vs->get());
    ASSERT_EQ(got.error, 0);
    ASSERT_EQ(got.key.size(), 10u);
    EXPECT_EQ(from_be(got.key.substr(0, 8)), committed_version(tr));
  }
}

// Every one of `stamps` fails with `error`.
void expect_stamps_fail(std::initializer_list<Future*> stamps, fdb_error_t error) {
  for (Future* vs : stamps) {
    ASSERT_TRUE(wait_ready_for(*vs));
    EXPECT_EQ(fdb_future_get_error(vs->get()), error);
  }
}

// FoundationDB's Transaction::getVersionstamp (NativeAPI) hands out a future of the
// transaction's one versionstamp promise at each call: every one completes with the stamp.
TEST_F(Versions, EveryVersionstampFutureOfACommitCompletesWithTheStamp) {
  Tr tr = make_tr();
  set(tr, k("a"), "1");
  Future first(fdb_transaction_get_versionstamp(tr.get()));
  Future second(fdb_transaction_get_versionstamp(tr.get()));
  Future third(fdb_transaction_get_versionstamp(tr.get()));
  ASSERT_EQ(commit(tr), 0);
  expect_commit_stamps({&first, &second, &third}, tr);
  for (Future* vs : {&second, &third}) {  // the batch index too: the same ten bytes
    EXPECT_EQ(key_of(vs->get()).key, key_of(first.get()).key);
  }
}

TEST_F(Versions, EveryVersionstampFutureOfAReadOnlyCommitFails) {
  Tr tr = make_tr();
  ASSERT_EQ(get(tr, k("a")).error, 0);
  Future first(fdb_transaction_get_versionstamp(tr.get()));
  Future second(fdb_transaction_get_versionstamp(tr.get()));
  ASSERT_EQ(commit(tr), 0);
  expect_stamps_fail({&first, &second}, 2021);  // no_commit_version
}

TEST_F(Versions, VersionstampAskedAfterCommitIsUsedDuringCommit) {
  Tr tr = make_tr();
  set(tr, k("a"), "1");
  ASSERT_EQ(commit(tr), 0);
  Future vs(fdb_transaction_get_versionstamp(tr.get()));
  ASSERT_TRUE(fdb_future_is_ready(vs.get()));
  EXPECT_EQ(fdb_future_get_error(vs.get()), 2017);  // as FoundationDB's client
}

TEST_F(Versions, VersionstampCallbackRunsOnTheNetworkThreadOrAtOnce) {
  Tr tr = make_tr();
  set(tr, k("a"), "1");
  Future vs(fdb_transaction_get_versionstamp(tr.get()));
  CallbackProbe probe;
  ASSERT_EQ(fdb_future_set_callback(vs.get(), &CallbackProbe::callback, &probe), 0);
  EXPECT_EQ(probe.count(), 0);  // pending until commit
  ASSERT_EQ(commit(tr), 0);
  ASSERT_TRUE(probe.wait_calls(1));
  EXPECT_EQ(probe.called_on(), network_thread());
  EXPECT_EQ(probe.called_with(), 0);
}

TEST_F(Versions, VersionstampsOfSuccessiveCommitsIncrease) {
  std::string last;
  for (int i = 0; i < 5; ++i) {
    Tr tr = make_tr();
    set(tr, k("a"), std::to_string(i));
    Future vs(fdb_transaction_get_versionstamp(tr.get()));
    ASSERT_EQ(commit(tr), 0);
    ASSERT_TRUE(wait_ready_for(vs));
    Key stamp = key_of(vs.get());
    ASSERT_EQ(stamp.error, 0);
    EXPECT_GT(stamp.key, last) << hex(stamp.key) << " after " << hex(last);
    last = stamp.key;
  }
}

TEST_F(Versions, VersionstampOfReadOnlyCommitIsNoCommitVersion) {
  Tr tr = make_tr();
  ASSERT_EQ(get(tr, k("a")).error, 0);
  Future vs(fdb_transaction_get_versionstamp(tr.get()));
  ASSERT_EQ(commit(tr), 0);
  ASSERT_TRUE(wait_ready_for(vs));
  EXPECT_EQ(fdb_future_get_error(vs.get()), 2021);
}

// As FoundationDB's commitAndWatch: a failed commit fails its versionstamp with
// transaction_invalid_version (2020), whatever the commit's own error (1020, 2101, ...).
TEST_F(Versions, VersionstampOfFailedCommitIsTransactionInvalidVersion) {
  Tr tr = make_tr();
  ASSERT_EQ(get(tr, k("a")).error, 0);
  set(tr, k("b"), "x");
  Future vs(fdb_transaction_get_versionstamp(tr.get()));
  ASSERT_EQ(write(k("a"), "conflict"), 0);
  ASSERT_EQ(commit(tr), 1020);
  ASSERT_TRUE(wait_ready_for(vs));
  EXPECT_EQ(fdb_future_get_error(vs.get()), 2020);

  Tr large = make_tr();
  ASSERT_EQ(set_option(large, FDB_TR_OPTION_SIZE_LIMIT, 100), 0);
  set(large, k("big"), std::string(200, 'x'));
  Future large_vs(fdb_transaction_get_versionstamp(large.get()));
  ASSERT_EQ(commit(large), 2101);
  ASSERT_TRUE(wait_ready_for(large_vs));
  EXPECT_EQ(fdb_future_get_error(large_vs.get()), 2020);
}

TEST_F(Versions, VersionstampOfResetTransactionIsCancelled) {
  Tr tr = make_tr();
  set(tr, k("a"), "1");
  Future vs(fdb_transaction_get_versionstamp(tr.get()));
  fdb_transaction_reset(tr.get());
  ASSERT_TRUE(wait_ready_for(vs));
  EXPECT_EQ(fdb_future_get_error(vs.get()), 1025);
}

// Several waiters at a reset, and a second round of them on the reset transaction.
TEST_F(Versions, EveryVersionstampFutureOfAResetTransactionIsCancelled) {
  Tr tr = make_tr();
  set(tr, k("a"), "1");
  Future first(fdb_transaction_get_versionstamp(tr.get()));
  Future second(fdb_transaction_get_versionstamp(tr.get()));
  Future third(fdb_transaction_get_versionstamp(tr.get()));
  fdb_transaction_reset(tr.get());
  expect_stamps_fail({&first, &second, &third}, 1025);  // transaction_cancelled
  set(tr, k("a"), "2");
  Future again(fdb_transaction_get_versionstamp(tr.get()));
  Future again_too(fdb_transaction_get_versionstamp(tr.get()));
  ASSERT_EQ(commit(tr), 0);
  expect_commit_stamps({&again, &again_too}, tr);
}

TEST_F(Versions, VersionstampOfDestroyedTransactionIsCancelled) {
  Tr tr = make_tr();
  set(tr, k("a"), "1");
  Future vs(fdb_transaction_get_versionstamp(tr.get()));
  tr.reset();
  ASSERT_TRUE(wait_ready_for(vs));
  EXPECT_EQ(fdb_future_get_error(vs.get()), 1025);
}

TEST_F(Versions, VersionstampAfterADeferredErrorFails) {
  Tr tr = make_tr();
  std::string sys = "\xff/sys";
  set(tr, sys, "v");
  Future vs(fdb_transaction_get_versionstamp(tr.get()));
  ASSERT_TRUE(wait_ready_for(vs));
  EXPECT_EQ(fdb_future_get_error(vs.get()), 2004);
}

// As FoundationDB (getVersionstamp waits on the transaction's reset): a cancelled
// transaction will not commit, so its versionstamp fails with transaction_cancelled at
// once, rather than staying pending until a reset that a program waiting on it may never make.
TEST_F(Versions, TheVersionstampOfACancelledTransactionFailsAtOnce) {
  Tr tr = make_tr();
  fdb_transaction_cancel(tr.get());
  Future vs(fdb_transaction_get_versionstamp(tr.get()));
  ASSERT_TRUE(fdb_future_is_ready(vs.get()));
  EXPECT_EQ(fdb_future_get_error(vs.get()), 1025);
}

TEST_F(Versions, TheVersionstampAfterAnOnErrorThatGaveUpFailsAtOnce) {
  Tr tr = make_tr();
  ASSERT_EQ(on_error(tr, 2004), 2004);  // not retryable: the transaction is cancelled
  Future vs(fdb_transaction_get_versionstamp(tr.get()));
  ASSERT_TRUE(fdb_future_is_ready(vs.get()));
  EXPECT_EQ(fdb_future_get_error(vs.get()), 1025);
}

}  // namespace
}  // namespace fdbc_test
