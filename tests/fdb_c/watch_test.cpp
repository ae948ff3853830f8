// fdb_transaction_watch: fires on the network thread when a commit changes the key; the
// rules before commit, after a failed commit, on reset/destroy, cancel, and conflicts.
#include <string>

#include <gtest/gtest.h>

#include "fdb_c/fdb_c.h"
#include "fdb_c_test_util.hpp"

namespace fdbc_test {
namespace {

using Watches = FdbTest;

Future watch(const Tr& tr, const std::string& key) {
  return Future(fdb_transaction_watch(tr.get(), u8(key), len(key)));
}

TEST_F(Watches, FiresOnTheNetworkThreadWhenAnotherCommitChangesTheKey) {
  ASSERT_EQ(write(k("w"), "1"), 0);
  Tr tr = make_tr();
  Future w = watch(tr, k("w"));
  ASSERT_EQ(commit(tr), 0);
  CallbackProbe probe;
  ASSERT_EQ(fdb_future_set_callback(w.get(), &CallbackProbe::callback, &probe), 0);
  EXPECT_FALSE(fdb_future_is_ready(w.get()));
  ASSERT_EQ(write(k("w"), "2"), 0);
  ASSERT_TRUE(probe.wait_calls(1));
  EXPECT_EQ(probe.called_with(), 0);
  EXPECT_EQ(probe.called_on(), network_thread());
}

TEST_F(Watches, FiresOnClearAndOnAtomicOpAndWhenTheKeyAppears) {
  ASSERT_EQ(write(k("a"), "1"), 0);
  ASSERT_EQ(write(k("b"), le64(1)), 0);
  Tr tr = make_tr();
  Future wa = watch(tr, k("a"));
  Future wb = watch(tr, k("b"));
  Future wc = watch(tr, k("c"));  // absent
  ASSERT_EQ(commit(tr), 0);
  ASSERT_EQ(run([&](const Tr& t) {
              clear(t, k("a"));
              atomic(t, k("b"), le64(1), FDB_MUTATION_TYPE_ADD);
              set(t, k("c"), "");
              return 0;
            }),
            0);
  EXPECT_TRUE(wait_ready_for(wa));
  EXPECT_TRUE(wait_ready_for(wb));
  EXPECT_TRUE(wait_ready_for(wc));
  EXPECT_EQ(fdb_future_get_error(wa.get()), 0);
  EXPECT_EQ(fdb_future_get_error(wb.get()), 0);
  EXPECT_EQ(fdb_future_get_error(wc.get()), 0);
}

TEST_F(Watches, FiresOnClearRange) {
  ASSERT_EQ(write(k("m"), "1"), 0);
  Tr tr = make_tr();
  Future w = watch(tr, k("m"));
  ASSERT_EQ(commit(tr), 0);
  ASSERT_EQ(run([&](const Tr& t) {
              clear_range(t, k("a"), k("z"));
              return 0;
            }),
            0);
  EXPECT_TRUE(wait_ready_for(w));
  EXPECT_EQ(fdb_future_get_error(w.get()), 0);
}

TEST_F(Watches, WritingTheSameValueDoesNotFire) {
  ASSERT_EQ(write(k("w"), "same"), 0);
  Tr tr = make_tr();
  Future w = watch(tr, k("w"));
  ASSERT_EQ(commit(tr), 0);
  CallbackProbe probe;
  ASSERT_EQ(fdb_future_set_callback(w.get(), &CallbackProbe::callback, &probe), 0);
  ASSERT_EQ(write(k("w"), "same"), 0);
  ASSERT_EQ(write(k("other"), "x"), 0);
  network_barrier(k("barrier"));
  EXPECT_EQ(probe.count(), 0);
  ASSERT_EQ(write(k("w"), "different"), 0);
  EXPECT_TRUE(probe.wait_calls(1));
}

TEST_F(Watches, ChangesBeforeTheWatchingCommitFireAtThatCommit) {
  ASSERT_EQ(write(k("w"), "1"), 0);
  Tr tr = make_tr();
  Future w = watch(tr, k("w"));
  ASSERT_EQ(write(k("w"), "2"), 0);  // another transaction, before tr commits
  EXPECT_FALSE(fdb_future_is_ready(w.get()));
  ASSERT_EQ(commit(tr), 0);  // read-only apart from the watch: commits
  EXPECT_TRUE(wait_ready_for(w));
  EXPECT_EQ(fdb_future_get_error(w.get()), 0);
}

TEST_F(Watches, OwnWriteThatChangesTheValueFires) {
  ASSERT_EQ(write(k("w"), "1"), 0);
  Tr tr = make_tr();
  Future w = watch(tr, k("w"));
  set(tr, k("w"), "2");  // FoundationDB fires the watch here, before any commit
  EXPECT_TRUE(wait_ready_for(w, 10s));
  EXPECT_EQ(fdb_future_get_error(w.get()), 0);
}

TEST_F(Watches, WatchSeesOwnEarlierWrite) {
  ASSERT_EQ(write(k("w"), "1"), 0);
  Tr tr = make_tr();
  set(tr, k("w"), "2");
  Future w = watch(tr, k("w"));
  ASSERT_EQ(commit(tr), 0);
  CallbackProbe probe;
  ASSERT_EQ(fdb_future_set_callback(w.get(), &CallbackProbe::callback, &probe), 0);
  // The watched value is "2", what the transaction wrote: writing "2" again is no change.
  ASSERT_EQ(write(k("w"), "2"), 0);
  network_barrier(k("barrier"));
  EXPECT_EQ(probe.count(), 0);
  ASSERT_EQ(write(k("w"), "3"), 0);
  EXPECT_TRUE(probe.wait_calls(1));
  EXPECT_EQ(probe.called_with(), 0);
}

TEST_F(Watches, FailedCommitFailsTheWatchWithItsError) {
  ASSERT_EQ(write(k("w"), "1"), 0);
  Tr tr = make_tr();
  Future w = watch(tr, k("w"));  // a serializable read of w
  set(tr, k("other"), "x");
  ASSERT_EQ(write(k("w"), "2"), 0);
  ASSERT_EQ(commit(tr), 1020);
  ASSERT_TRUE(wait_ready_for(w));
  EXPECT_EQ(fdb_future_get_error(w.get()), 1020);
}

TEST_F(Watches, ResetBeforeCommitCancelsTheWatch) {
  Tr tr = make_tr();
  Future w = watch(tr, k("w"));
  fdb_transaction_reset(tr.get());
  ASSERT_TRUE(wait_ready_for(w));
  EXPECT_EQ(fdb_future_get_error(w.get()), 1025);
}

TEST_F(Watches, DestroyBeforeCommitCancelsTheWatch) {
  Tr tr = make_tr();
  Future w = watch(tr, k("w"));
  CallbackProbe probe;
  ASSERT_EQ(fdb_future_set_callback(w.get(), &CallbackProbe::callback, &probe), 0);
  tr.reset();
  ASSERT_TRUE(probe.wait_calls(1));
  EXPECT_EQ(probe.called_with(), 1025);
  EXPECT_EQ(probe.called_on(), network_thread());
}

TEST_F(Watches, TransactionCancelCancelsTheWatch) {
  Tr tr = make_tr();
  Future w = watch(tr, k("w"));
  fdb_transaction_cancel(tr.get());
  ASSERT_TRUE(wait_ready_for(w));
  EXPECT_EQ(fdb_future_get_error(w.get()), 1025);
}

TEST_F(Watches, CommittedWatchOutlivesItsTransaction) {
  Future w;
  {
    Tr tr = make_tr();
    w = watch(tr, k("w"));
    ASSERT_EQ(commit(tr), 0);
  }
  ASSERT_EQ(write(k("w"), "changed"), 0);
  EXPECT_TRUE(wait_ready_for(w));
  EXPECT_EQ(fdb_future_get_error(w.get()), 0);
}

TEST_F(Watches, CancelledWatchIsOperationCancelledAndStaysSo) {
  Tr tr = make_tr();
  Future w = watch(tr, k("w"));
  ASSERT_EQ(commit(tr), 0);
  fdb_future_cancel(w.get());
  ASSERT_TRUE(wait_ready_for(w));
  EXPECT_EQ(fdb_future_get_error(w.get()), 1101);
  ASSERT_EQ(write(k("w"), "changed"), 0);
  EXPECT_EQ(fdb_future_get_error(w.get()), 1101);
}

TEST_F(Watches, WatchAddsAReadConflict) {
  Tr tr = make_tr();
  Future w = watch(tr, k("w"));
  set(tr, k("other"), "x");
  ASSERT_EQ(write(k("w"), "x"), 0);
  EXPECT_EQ(commit(tr), 1020);
}

TEST_F(Watches, WatchOfSystemKeyFails) {
  Tr tr = make_tr();
  Future w = watch(tr, "\xff/w");
  ASSERT_TRUE(wait_ready_for(w));
  EXPECT_EQ(fdb_future_get_error(w.get()), 2004);
}

TEST_F(Watches, ManyWatchesOnOneKeyAllFireOnce) {
  constexpr int kCount = 20;
  std::vector<Future> watches;
  std::vector<std::unique_ptr<CallbackProbe>> probes;
  for (int i = 0; i < kCount; ++i) {
    Tr tr = make_tr();
    watches.push_back(watch(tr, k("w")));
    ASSERT_EQ(commit(tr), 0);
    probes.push_back(std::make_unique<CallbackProbe>());
    ASSERT_EQ(fdb_future_set_callback(watches.back().get(), &CallbackProbe::callback,
                                      probes.back().get()),
              0);
  }
  ASSERT_EQ(write(k("w"), "changed"), 0);
  for (auto& p : probes) {
    ASSERT_TRUE(p->wait_calls(1));
    EXPECT_EQ(p->called_on(), network_thread());
  }
  ASSERT_EQ(write(k("w"), "again"), 0);
  network_barrier(k("barrier"));
  for (auto& p : probes) EXPECT_EQ(p->count(), 1);
}

// MAX_WATCHES, as FoundationDB's client counts it: per database handle, a watch from its
// creation until its future is ready; past the limit a watch fails with 1032.
TEST_F(Watches, MaxWatchesLimitsAHandlesOutstandingWatches) {
  Db d = open_db();
  ASSERT_EQ(set_db_option(d.get(), FDB_DB_OPTION_MAX_WATCHES, 1), 0);
  const std::string key = k("max");
  Tr tr = make_tr(d.get());
  Future first = watch(tr, key);
  Future second = watch(tr, key);
  ASSERT_TRUE(wait_ready_for(second));
  EXPECT_EQ(fdb_future_get_error(second.get()), 1032);
  EXPECT_FALSE(fdb_future_is_ready(first.get()));

  // Another handle counts its own.
  Tr elsewhere = make_tr();
  Future other = watch(elsewhere, key);
  EXPECT_FALSE(fdb_future_is_ready(other.get()));

  // A watch that ends gives its place back.
  fdb_future_cancel(first.get());
  ASSERT_TRUE(wait_ready_for(first));
  Future third = watch(tr, key);
  EXPECT_FALSE(fdb_future_is_ready(third.get()));
  ASSERT_EQ(commit(tr), 0);
  ASSERT_EQ(write(key, "changed"), 0);
  ASSERT_TRUE(wait_ready_for(third));
  EXPECT_EQ(fdb_future_get_error(third.get()), 0);
}

}  // namespace
}  // namespace fdbc_test
