// What a commit batch allocates once past its point of no return: nothing. Each batch below
// runs on this thread alone (engine::CommitBatch) with each of its allocations failed in
// turn (support/failing_allocator.hpp); a failure before the point of no return refuses the
// batch's commits, and one after it would break the database.
//
// A pool's slabs come from malloc, which the failing allocator does not fail: where a batch
// reserves too little pool room, only the sanitizer builds see it, where taking a slab
// inside a reserved apply fails an invariant (kv::SizeClassPool::expect_reserved).
#include <deque>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "engine/blind_write.hpp"
#include "engine/commit_batch.hpp"
#include "kv/mvcc_store.hpp"
#include "support/failing_allocator.hpp"

namespace strata::engine {
namespace {

namespace fa = testing::failing_allocator;

std::string key(int i) { return "k" + std::to_string(1000 + i); }

// Runs `requests` as one batch with the n-th allocation failed (0: none); whether it fired.
bool run_failing(CommitBatch& batch, kv::MvccStore& store, std::vector<CommitRequest*> requests,
                 long n) {
  fa::fail_nth(n);
  const BatchOutcome out = batch.run(requests);
  const bool fired = fa::fired();
  fa::fail_nth(0);
  EXPECT_NE(out.status, BatchOutcome::Status::broken);
  if (out.version >= 0) store.publish(out.version);
  return fired;
}

// A batch of four or more requests fetches its writes' paths together: the batch step grows
// its key list by push_back and its path list by resize, so their capacities differ. A later
// lone request of many keys that are not in key order with the store's fetches its own
// paths (and hashes) in apply, and must find room for every list reserved.
struct AfterAPreparedBatch {
  kv::MvccStore store;
  CommitBatch batch{store};
  std::deque<BlindWrite> first;
  // 20 new keys among the stored ones: more than the paths' capacity.
  BlindWrite lone{key(1), "w"};

  AfterAPreparedBatch() {
    // 17 keys in four requests: the key list's capacity doubles to 32, the paths' is 17.
    for (int r = 0; r < 4; ++r) first.emplace_back(key(40 * r), "v");
    for (int i = 1; i <= 13; ++i) first[i % 4].writes.set(key(3 * i), "v");
    std::vector<CommitRequest*> requests;
    for (BlindWrite& w : first) requests.push_back(&w.request);
    const BatchOutcome out = batch.run(requests);
    EXPECT_EQ(out.committed, 4U);
    store.publish(out.version);
    for (int i = 1; i < 20; ++i) lone.writes.set(key(3 * i + 1), "w");
  }
  // Runs the lone request with the n-th allocation failed; whether it fired.
  bool run_lone(long n) {
    lone.request.error = ErrorCode::success;
    const bool fired = run_failing(batch, store, {&lone.request}, n);
    if (lone.request.error == ErrorCode::success) {
      EXPECT_EQ(store.latest(key(58)), "w");
    } else {
      EXPECT_EQ(lone.request.error, ErrorCode::commit_proxy_memory_limit_exceeded);
    }
    return fired;
  }
};

TEST(CommitBatchAllocation, ALoneRequestOfUnorderedKeysAfterAPreparedBatchFailsAlone) {
  for (long n = 1;; ++n) {
    SCOPED_TRACE("allocation " + std::to_string(n));
    AfterAPreparedBatch scene;
    const bool fired = scene.run_lone(n);
    if (::testing::Test::HasFailure() || !fired) break;
  }
}

// A request refused part-way through its reservations leaves some lists grown and others
// not. Sent again from there, with each allocation failed in turn, it still fails only
// before the point of no return.
TEST(CommitBatchAllocation, ARequestRefusedPartWayThroughItsReservationsFailsAloneAgain) {
  for (long n = 1;; ++n) {
    bool refused_at_n = false;
    bool fired_at_n = false;
    for (long m = 1;; ++m) {
      SCOPED_TRACE("allocation " + std::to_string(n) + ", then " + std::to_string(m));
      AfterAPreparedBatch scene;
      fired_at_n = scene.run_lone(n);
      refused_at_n = scene.lone.request.error != ErrorCode::success;
      if (!refused_at_n) break;
      const bool fired_at_m = scene.run_lone(m);
      if (::testing::Test::HasFailure() || !fired_at_m) break;
    }
    if (::testing::Test::HasFailure() || !fired_at_n) break;
  }
}

// A value of about 1,005 to 1,012 bytes: a key's record linked to an older one is above the
// pool's largest block, and a new key's first record (8 bytes shorter) is not. Many such new
// keys in one batch need pool room of their own, far past what is reserved ahead (and past
// what the slabs' sizes round that up to). Only the builds that check invariants can see a
// batch that reserves too little here: the slabs come from malloc.
TEST(CommitBatchAllocation, NewKeysWithValuesJustUnderTheLargestPooledRecord) {
  kv::MvccStore store;
  CommitBatch batch{store};
  const std::string value(1008, 'v');
  BlindWrite writes(key(0), value);
  for (int i = 1; i < 2000; ++i) writes.writes.set(key(i), value);
  EXPECT_FALSE(run_failing(batch, store, {&writes.request}, 0));
  EXPECT_EQ(writes.request.error, ErrorCode::success);
  EXPECT_EQ(store.latest(key(1999)), value);
}

}  // namespace
}  // namespace strata::engine
