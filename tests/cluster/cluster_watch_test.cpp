// A watch on a cluster (src/cluster/cluster_watch.cpp): its on_ready callbacks run once its
// outcome is final, as in process (src/engine/watch_registry.cpp), so a callback sees the
// outcome with wait_for(0) and may wait() itself.
//
// FoundationDB calls a future's callback exactly once, when the future is ready or
// cancelled, on its network thread or, when the future is already ready, on the thread
// that sets it; cancelling a watch future makes it ready with operation_cancelled (1101)
// (fdb_future_set_callback and fdb_future_cancel, https://apple.github.io/foundationdb/api-c.html).
#include <atomic>
#include <chrono>
#include <future>
#include <optional>
#include <string>
#include <thread>

#include <gtest/gtest.h>

#include "strata/strata.hpp"

#include "support/error_matchers.hpp"
#include "support/test_database.hpp"

namespace strata {
namespace {

using namespace std::chrono_literals;

Database open_cluster() {
  Options o;
  o.cluster_file = testing::test_cluster_file();
  o.client_library = STRATA_TEST_FDB_C;
  return Database::open(o);
}

Watch watch_committed(Database& db, const std::string& key) {
  Transaction tr = db.create_transaction();
  Watch w = tr.watch(key);
  tr.commit();
  return w;
}

TEST(ClusterWatch, AFiredWatchsCallbackSeesItFired) {
  Database db = open_cluster();
  db.run([](Transaction& tr) { tr.set("cluster-watch/fired", "0"); });
  Watch w = watch_committed(db, "cluster-watch/fired");
  std::promise<bool> seen;
  w.on_ready([&] { seen.set_value(w.wait_for(0ms)); });
  db.run([](Transaction& tr) { tr.set("cluster-watch/fired", "1"); });
  EXPECT_TRUE(seen.get_future().get());  // fired, and already final inside the callback
}

TEST(ClusterWatch, ACallbackOnTheNetworkThreadMayWaitForItsOwnWatch) {
  Database db = open_cluster();
  db.run([](Transaction& tr) { tr.set("cluster-watch/own-wait", "0"); });
  Watch w = watch_committed(db, "cluster-watch/own-wait");
  std::promise<bool> seen;
  w.on_ready([&] {
    w.wait();  // final on this thread, which is running its callbacks: no deadlock
    seen.set_value(w.wait_for(0ms));
  });
  db.run([](Transaction& tr) { tr.set("cluster-watch/own-wait", "1"); });
  EXPECT_TRUE(seen.get_future().get());
}

// As in process, where the callbacks run inside the commit or cancel() that finishes the
// watch: a waiter returns once those registered before it finished have run.
TEST(ClusterWatch, AWaiterReturnsOnlyOnceTheCallbacksHaveRun) {
  Database db = open_cluster();
  db.run([](Transaction& tr) { tr.set("cluster-watch/settled", "0"); });
  Watch w = watch_committed(db, "cluster-watch/settled");
  std::promise<void> entered;
  std::promise<void> release;
  std::atomic<bool> done{false};
  w.on_ready([&] {
    entered.set_value();
    release.get_future().wait();
    done = true;
  });
  db.run([](Transaction& tr) { tr.set("cluster-watch/settled", "1"); });
  entered.get_future().wait();  // fired, its callback held on the network thread
  std::thread releaser([&] { release.set_value(); });
  w.wait();
  EXPECT_TRUE(done.load());
  releaser.join();
}

TEST(ClusterWatch, ACallbackMayWaitInsideCancel) {
  Database db = open_cluster();
  Watch w = watch_committed(db, "cluster-watch/cancelled");
  std::atomic<int> calls{0};
  std::optional<bool> inside;
  w.on_ready([&] {
    w.wait();  // returns: the watch is cancelled before its callbacks run
    inside = w.wait_for(0ms);
    ++calls;
  });
  w.cancel();
  EXPECT_EQ(calls.load(), 1);
  EXPECT_EQ(inside, std::optional<bool>(false));  // cancelled, not fired
  // A callback added once the watch is final runs at once, here.
  bool late = false;
  w.on_ready([&] { late = true; });
  EXPECT_TRUE(late);
}

TEST(ClusterWatch, AFailedWatchsCallbackSeesTheError) {
  Database db = open_cluster();
  Watch w = [&] {
    Transaction tr = db.create_transaction();
    return tr.watch("cluster-watch/failed");
  }();  // destroyed uncommitted: its watches fail with transaction_cancelled (1025)
  std::optional<ErrorCode> inside;
  w.on_ready([&] {
    try {
      (void)w.wait_for(0ms);
    } catch (const Error& e) {
      inside = e.error_code();
    }
  });
  EXPECT_EQ(inside, std::optional<ErrorCode>(ErrorCode::transaction_cancelled));
}

TEST(ClusterWatch, ACallbackOnAFailedWatchRegisteredEarlySeesTheError) {
  Database db = open_cluster();
  std::optional<ErrorCode> inside;
  std::optional<Watch> w;
  {
    Transaction tr = db.create_transaction();
    w.emplace(tr.watch("cluster-watch/failed-early"));
    w->on_ready([&] {
      try {
        (void)w->wait_for(0ms);
      } catch (const Error& e) {
        inside = e.error_code();
      }
    });
  }  // the transaction's destructor fails the watch, running the callback here
  EXPECT_EQ(inside, std::optional<ErrorCode>(ErrorCode::transaction_cancelled));
}

}  // namespace
}  // namespace strata
