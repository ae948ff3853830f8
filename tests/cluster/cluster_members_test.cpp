// What the public API's members that only the in-process engine can give a full meaning
// answer on a cluster (docs/cluster.md, "Members with another meaning on a cluster"), on
// the build tree's libfdb_c.so standing in for the cluster.
//
// retry_step is FoundationDB's fdb_transaction_on_error, whose future is ready only after
// the client's backoff (bindings/c/foundationdb/fdb_c.h, fdb_transaction_on_error: "the
// returned future will be set after a delay"); from API version 610 on, an error it gives
// back leaves the transaction cancelled until reset (fdbclient/ReadYourWrites.actor.cpp,
// RYWImpl::onError, in apple/foundationdb).
#include <chrono>
#include <optional>
#include <string>

#include <gtest/gtest.h>

#include "strata/strata.hpp"

#include "support/error_matchers.hpp"
#include "support/test_database.hpp"

namespace strata {
namespace {

using testing::ThrowsCode;
using testing::ThrowsCodeWith;

Database open_cluster() {
  Options o;
  o.cluster_file = testing::test_cluster_file();
  o.client_library = STRATA_TEST_FDB_C;
  return Database::open(o);
}

TEST(ClusterMembers, RetryStepWaitsInsideAndResetsForTheRetry) {
  Database db = open_cluster();
  Transaction tr = db.create_transaction();
  tr.set("cluster-members/k", "written before the retry");
  const RetryStep step = tr.retry_step(ErrorCode::not_committed);
  EXPECT_EQ(step.error, ErrorCode::success);
  EXPECT_EQ(step.delay, std::chrono::nanoseconds(0));  // the client slept the backoff
  EXPECT_TRUE(step.reset);
  EXPECT_EQ(tr.ended_by(), ErrorCode::success);
  EXPECT_EQ(tr.get("cluster-members/k"), std::nullopt);
}

TEST(ClusterMembers, RetryStepGivesBackAndCancels) {
  Database db = open_cluster();
  Transaction tr = db.create_transaction();
  const RetryStep step = tr.retry_step(ErrorCode::key_too_large);
  EXPECT_EQ(step.error, ErrorCode::key_too_large);
  EXPECT_FALSE(step.reset);
  EXPECT_EQ(tr.ended_by(), ErrorCode::transaction_cancelled);
  EXPECT_THAT([&] { tr.set("cluster-members/k", "v"); },
              ThrowsCode(ErrorCode::transaction_cancelled));
  tr.reset();
  EXPECT_EQ(tr.ended_by(), ErrorCode::success);
}

TEST(ClusterMembers, GiveUpRestartIsRefused) {
  Database db = open_cluster();
  Transaction tr = db.create_transaction();
  EXPECT_THAT([&] { (void)tr.retry_step(ErrorCode::not_committed, GiveUp::restart); },
              ThrowsCodeWith(ErrorCode::client_invalid_operation, "API version 610"));
  EXPECT_EQ(tr.ended_by(), ErrorCode::success);  // refused before anything happened
}

TEST(ClusterMembers, TheTimeoutDeadlineIsCountedFromTheStart) {
  Database db = open_cluster();
  Transaction tr = db.create_transaction();
  EXPECT_EQ(tr.timeout_deadline(), std::chrono::steady_clock::time_point::max());
  const auto before = std::chrono::steady_clock::now();
  tr.set_timeout(std::chrono::hours(1));
  EXPECT_LE(tr.timeout_deadline(), before + std::chrono::hours(1));
  EXPECT_GT(tr.timeout_deadline(), before + std::chrono::minutes(59));
}

TEST(ClusterMembers, AClusterIsDurable) { EXPECT_TRUE(open_cluster().durable()); }

TEST(ClusterMembers, VersionWaitsAreRefused) {
  Database db = open_cluster();
  EXPECT_THAT([&] { (void)db.wait_for_version(1, std::chrono::steady_clock::now(), {}); },
              ThrowsCodeWith(ErrorCode::client_invalid_operation, "no meaning on a"));
  EXPECT_THAT([&] { db.wake_version_waiters(); }, ThrowsCode(ErrorCode::client_invalid_operation));
}

// RangeResult::more is the C API's out_more for the batch a limit ended on.
TEST(ClusterMembers, RangeMoreFollowsTheLimit) {
  Database db = open_cluster();
  db.run([](Transaction& tr) {
    tr.clear_range("cluster-members/", "cluster-members0");
    for (const char* k : {"cluster-members/a", "cluster-members/b", "cluster-members/c"}) {
      tr.set(k, "v");
    }
  });
  Transaction tr = db.create_transaction();
  const RangeResult two = tr.get_range("cluster-members/", "cluster-members0", {.limit = 2});
  EXPECT_EQ(two.size(), 2U);
  EXPECT_TRUE(two.more);
  const RangeResult all = tr.get_range("cluster-members/", "cluster-members0");
  EXPECT_EQ(all.size(), 3U);
  EXPECT_FALSE(all.more);
}

}  // namespace
}  // namespace strata
