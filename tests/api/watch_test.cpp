// Watches through the public API.
#include <atomic>
#include <chrono>
#include <thread>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "strata/strata.hpp"

#include "support/error_matchers.hpp"
#include "support/test_database.hpp"

namespace strata {
namespace {

using namespace std::chrono_literals;
using testing::ThrowsCode;

Watch watch_committed(Database& db, std::string_view key) {
  Transaction tr = db.create_transaction();
  Watch w = tr.watch(key);
  tr.commit();
  return w;
}

TEST(Watch, FiresWhenAnotherThreadChangesTheKey) {
  Database db = testing::open_database();
  db.run([](Transaction& tr) { tr.set("k", "1"); });
  Watch w = watch_committed(db, "k");
  std::thread writer([&] { db.run([](Transaction& tr) { tr.set("k", "2"); }); });
  w.wait();  // returns only once fired
  writer.join();
  EXPECT_TRUE(w.wait_for(0ms));
}

// A watch reads its key (FoundationDB's watch makes a serializable read of it), so the
// read version is fixed afterwards: set_read_version throws read_version_already_set.
TEST(Watch, ReadsItsKeySoTheReadVersionIsFixed) {
  Database db = testing::open_database();
  Transaction holder = db.create_transaction();
  const Version v = holder.read_version();
  Transaction tr = db.create_transaction();
  Watch w = tr.watch("k");
  EXPECT_THAT([&] { tr.set_read_version(v); }, ThrowsCode(ErrorCode::read_version_already_set));
  w.cancel();
}

TEST(Watch, FiresOnClearAndOnClearRangeAndOnAtomicOp) {
  Database db = testing::open_database();
  db.run([](Transaction& tr) {
    tr.set("a", "1");
    tr.set("b", "1");
    tr.set("c", std::string(1, '\1'));
  });
  Watch wa = watch_committed(db, "a");
  Watch wb = watch_committed(db, "b");
  Watch wc = watch_committed(db, "c");
  db.run([](Transaction& tr) { tr.clear("a"); });
  db.run([](Transaction& tr) { tr.clear_range("b", "bz"); });
  db.run([](Transaction& tr) { tr.atomic_op(MutationType::add, "c", std::string(1, '\1')); });
  EXPECT_TRUE(wa.wait_for(10s));
  EXPECT_TRUE(wb.wait_for(10s));
  EXPECT_TRUE(wc.wait_for(10s));
}

TEST(Watch, FiresWhenTheKeyAppears) {
  Database db = testing::open_database();
  Watch w = watch_committed(db, "new");
  db.run([](Transaction& tr) { tr.set("new", ""); });
  EXPECT_TRUE(w.wait_for(10s));
}

TEST(Watch, DoesNotFireWhenTheValueIsRewrittenUnchanged) {
  Database db = testing::open_database();
  db.run([](Transaction& tr) { tr.set("k", "same"); });
  Watch w = watch_committed(db, "k");
  db.run([](Transaction& tr) { tr.set("k", "same"); });
  db.run([](Transaction& tr) { tr.set("other", "x"); });
  EXPECT_FALSE(w.wait_for(50ms));
  db.run([](Transaction& tr) { tr.set("k", "different"); });
  EXPECT_TRUE(w.wait_for(10s));
}

TEST(Watch, FiresAtOnceWhenTheKeyChangedBeforeArming) {
  Database db = testing::open_database();
  Transaction tr = db.create_transaction();
  Watch w = tr.watch("k");  // sees absent
  db.run([](Transaction& other) { other.set("k", "v"); });
  tr.commit();  // read-only apart from the watch: arms, sees the change
  EXPECT_TRUE(w.wait_for(10s));
}

TEST(Watch, WaitForTimesOutWithoutAChange) {
  Database db = testing::open_database();
  Watch w = watch_committed(db, "k");
  auto start = std::chrono::steady_clock::now();
  EXPECT_FALSE(w.wait_for(20ms));
  EXPECT_GE(std::chrono::steady_clock::now() - start, 20ms);
}

TEST(Watch, CancelWakesWaitersWithoutAChange) {
  Database db = testing::open_database();
  Watch w = watch_committed(db, "k");
  std::atomic<bool> returned{false};
  std::thread waiter([&] {
    w.wait();
    returned = true;
  });
  w.cancel();
  waiter.join();
  EXPECT_TRUE(returned.load());
  EXPECT_FALSE(w.wait_for(0ms));
}

TEST(Watch, ManyWatchesOnOneKeyAllFire) {
  Database db = testing::open_database();
  std::vector<Watch> watches;
  for (int i = 0; i < 200; ++i) watches.push_back(watch_committed(db, "hot"));
  db.run([](Transaction& tr) { tr.set("hot", "x"); });
  for (Watch& w : watches) EXPECT_TRUE(w.wait_for(10s));
}

TEST(Watch, ResetBeforeCommitCancelsTheWatch) {
  Database db = testing::open_database();
  Transaction tr = db.create_transaction();
  Watch w = tr.watch("k");
  tr.reset();
  EXPECT_THAT([&] { w.wait(); }, ThrowsCode(ErrorCode::transaction_cancelled));
}

TEST(Watch, DestroyingTheTransactionBeforeCommitCancelsTheWatch) {
  Database db = testing::open_database();
  std::optional<Watch> w;
  {
    Transaction tr = db.create_transaction();
    w = tr.watch("k");
  }
  EXPECT_THAT([&] { w->wait(); }, ThrowsCode(ErrorCode::transaction_cancelled));
}

TEST(Watch, FailedCommitFailsTheWatchWithItsError) {
  Database db = testing::open_database();
  Transaction tr = db.create_transaction();
  Watch w = tr.watch("k");
  tr.set("other", "x");
  db.run([](Transaction& o) { o.set("k", "changed"); });
  EXPECT_THAT([&] { tr.commit(); }, ThrowsCode(ErrorCode::not_committed));
  EXPECT_THAT([&] { w.wait(); }, ThrowsCode(ErrorCode::not_committed));
}

TEST(Watch, AddsAReadConflictOnItsKey) {
  Database db = testing::open_database();
  Transaction tr = db.create_transaction();
  (void)tr.watch("k");
  tr.set("x", "1");
  db.run([](Transaction& o) { o.set("k", "v"); });
  EXPECT_THAT([&] { tr.commit(); }, ThrowsCode(ErrorCode::not_committed));
}

// Past 10,000 armed watches a database refuses more (1032), as FoundationDB does.
TEST(Watch, MoreThanTenThousandArmedWatchesAreRefused) {
  Database db = testing::open_database();
  std::vector<Watch> kept;
  for (int i = 0; i < 10'000; ++i) kept.push_back(watch_committed(db, "k" + std::to_string(i % 7)));
  Watch over = watch_committed(db, "k");
  EXPECT_THAT([&] { over.wait(); }, ThrowsCode(ErrorCode::too_many_watches));
}

// Options::max_watches is FoundationDB's MAX_WATCHES: a lower limit refuses sooner, and
// one past FoundationDB's ceiling of 1,000,000 is refused at open.
TEST(Watch, MaxWatchesSetsTheLimit) {
  Options small;
  small.max_watches = 2;
  Database db = testing::open_database(small);
  Watch a = watch_committed(db, "a");
  Watch b = watch_committed(db, "b");
  Watch over = watch_committed(db, "c");
  EXPECT_THAT([&] { over.wait(); }, ThrowsCode(ErrorCode::too_many_watches));
  EXPECT_FALSE(a.wait_for(0ms));
  Options large;
  large.max_watches = 1'000'001;
  EXPECT_THAT([&] { (void)testing::open_database(large); },
              ThrowsCode(ErrorCode::invalid_argument));
}

// A watch refused at the limit runs its callbacks as a fired one does: outside the
// registry's lock, so a callback may arm another watch without deadlocking.
TEST(Watch, ARefusedWatchsCallbackMayArmAnother) {
  Database db = testing::open_database();
  std::vector<Watch> kept;
  for (int i = 0; i < 10'000; ++i) kept.push_back(watch_committed(db, "k" + std::to_string(i % 7)));
  Transaction tr = db.create_transaction();
  Watch over = tr.watch("k");
  bool armed_another = false;
  over.on_ready([&] {
    Watch another = watch_committed(db, "other");
    armed_another = true;
  });
  tr.commit();
  EXPECT_TRUE(armed_another);
  EXPECT_THAT([&] { over.wait(); }, ThrowsCode(ErrorCode::too_many_watches));
}

// A watch whose every handle is gone is cancelled (as destroying a FoundationDB watch
// future is), so it neither stays armed nor counts against the 10,000.
TEST(Watch, DroppingTheLastHandleCancelsIt) {
  Database db = testing::open_database();
  for (int i = 0; i < 12'000; ++i) watch_committed(db, "k" + std::to_string(i % 7));
  Watch w = watch_committed(db, "k1");
  bool ran = false;
  {
    Watch copy = w;  // a copy going does not cancel the watch
    Watch dropped = watch_committed(db, "k2");
    dropped.on_ready([&] { ran = true; });
    EXPECT_FALSE(ran);
  }
  EXPECT_TRUE(ran);  // cancelled, on this thread, when its handle went
  db.run([](Transaction& tr) { tr.set("k1", "changed"); });
  EXPECT_TRUE(w.wait_for(10s));
}

TEST(Watch, OutlivesItsDatabaseAndEndsCancelled) {
  STRATA_SKIP_ON_CLUSTER(
      "a watch is FoundationDB's client's, and closing this handle does not cancel it: it "
      "ends when its last copy is destroyed");
  std::optional<Watch> w;
  {
    Database db = testing::open_database();
    w = watch_committed(db, "k");
  }
  EXPECT_FALSE(w->wait_for(10s));
}

TEST(Watch, OwnChangeFiresAtOnceBeforeCommit) {
  Database db = testing::open_database();
  Transaction setup = db.create_transaction();
  setup.set("k", "1");
  setup.commit();
  Transaction tr = db.create_transaction();
  // In process the write fires the watch on this thread; on a cluster FoundationDB's
  // network thread does, after the write returns.
  auto fired = [](Watch& w) {
    if (testing::on_cluster()) w.wait();
    return w.wait_for(0ms);
  };
  Watch unchanged = tr.watch("k");
  Watch changed = tr.watch("k");
  tr.set("k", "1");  // same value: nothing to report
  EXPECT_FALSE(unchanged.wait_for(0ms));
  tr.set("k", "2");
  EXPECT_TRUE(fired(changed));
  Watch cleared = tr.watch("k");
  tr.clear_range("a", "z");
  EXPECT_TRUE(fired(cleared));
  Watch added = tr.watch("k");
  tr.atomic_op(MutationType::add, "k", std::string("\x01", 1));
  EXPECT_TRUE(fired(added));
  Watch other = tr.watch("other");
  tr.set("k", "3");
  EXPECT_FALSE(other.wait_for(0ms));
  other.cancel();
}

// A point clear fires the transaction's own watches on that key (present before) and no
// other, as a set does: FoundationDB's ReadYourWritesTransaction::clear(key) calls
// RYWImpl::triggerWatches for the key (fdbclient/ReadYourWrites.actor.cpp).
TEST(Watch, OwnPointClearFiresAtOnceOnlyOnItsKey) {
  Database db = testing::open_database();
  db.run([](Transaction& t) {
    t.set("k", "1");
    t.set("other", "1");
  });
  Transaction tr = db.create_transaction();
  Watch cleared = tr.watch("k");
  Watch other = tr.watch("other");
  Watch absent = tr.watch("never");
  tr.clear("never");  // absent before and after: nothing to report
  tr.clear("k");
  if (testing::on_cluster()) cleared.wait();
  EXPECT_TRUE(cleared.wait_for(0ms));
  EXPECT_FALSE(other.wait_for(0ms));
  EXPECT_FALSE(absent.wait_for(0ms));
  other.cancel();
  absent.cancel();
}

}  // namespace
}  // namespace strata
