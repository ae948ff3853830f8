// High-contention pop requests left behind by a process that died (or a database that was
// closed) while its poppers waited: after the reopen nobody will collect what such a
// request is served, so a pass withdraws it unserved and the items go to live poppers.
// Requests of the current opening are served as always (QueueHighContention tests).
#include <algorithm>
#include <optional>
#include <string>
#include <string_view>

#include <gtest/gtest.h>

#include "strata/database.hpp"
#include "strata/priority_queue.hpp"
#include "strata/queue.hpp"
#include "strata/subspace.hpp"

#include "durability/temp_dir.hpp"

namespace strata {
namespace {

using testing::TempDir;

Options on_disk(const TempDir& dir) {
  Options o;
  o.path = dir.path();
  o.durability = Durability::buffered;
  return o;
}

// Registers a pop request under `requests` as a popper does, for a popper that then
// vanishes. Returns the request's (versionstamp, id) tuple: its key under `requests`, and
// its result slot's under the results subspace.
Tuple register_request(Database& db, const Subspace& requests, char id) {
  Transaction tr = db.create_transaction();
  const Bytes bytes{std::string(20, id)};
  tr.atomic_op(MutationType::set_versionstamped_key,
               requests.pack_with_versionstamp(Tuple{Versionstamp::incomplete(), bytes}), "");
  tr.commit();
  Versionstamp stamp;
  const std::string committed = tr.versionstamp();
  std::copy(committed.begin(), committed.end(), stamp.tr.begin());
  return Tuple{stamp, bytes};
}

// A result slot a pass filled for a popper that died before collecting it.
void leave_result(Database& db, const Subspace& results, const Tuple& request,
                  std::string_view value) {
  db.run([&](Transaction& tr) { tr.set(results.pack(request), value); });
}

bool range_empty(Database& db, const KeyRange& range) {
  return db.run([&](Transaction& tr) { return tr.get_range(range, {.limit = 1}).empty(); });
}

TEST(OpenedVersion, IsWhatTheLastOpeningLeftCommitted) {
  TempDir dir;
  Version last = 0;
  {
    Database db = Database::open(on_disk(dir));
    EXPECT_EQ(db.opened_version(), 0);
    db.run([](Transaction& tr) { tr.set("k", "v"); });
    db.run([](Transaction& tr) { tr.set("k", "w"); });
    last = db.committed_version();
    EXPECT_EQ(db.opened_version(), 0);
  }
  Database again = Database::open(on_disk(dir));
  EXPECT_EQ(again.opened_version(), last);
  EXPECT_EQ(Database::open().opened_version(), 0);
}

TEST(AbandonedPopRequests, AQueuesDeadRequestsAreWithdrawnAndTheItemsGoToLivePoppers) {
  TempDir dir;
  Queue q(Subspace(Tuple{"Q"}), true);
  Subspace requests(Tuple{"pop"}, q.subspace().key() + "\xff");
  Subspace results(Tuple{"result"}, q.subspace().key() + "\xff");
  {
    Database db = Database::open(on_disk(dir));
    register_request(db, requests, '\x01');
    register_request(db, requests, '\x02');
  }
  Database db = Database::open(on_disk(dir));
  q.enqueue(db, "first");
  q.enqueue(db, "second");
  EXPECT_EQ(q.dequeue(db), "first");
  EXPECT_EQ(q.dequeue(db), "second");
  EXPECT_EQ(q.dequeue(db), std::nullopt);
  EXPECT_TRUE(range_empty(db, requests.range()));
  EXPECT_TRUE(range_empty(db, results.range()));

  // A request of this opening is still served, as it always was, and its result is left
  // for its popper (who is alive, as far as the pass can tell).
  const Tuple live = register_request(db, requests, '\x03');
  q.enqueue(db, "third");
  EXPECT_EQ(q.dequeue(db), std::nullopt);  // "third" went to the waiting request
  EXPECT_EQ(db.run([&](Transaction& tr) { return tr.get(results.pack(live)); }), "third");
  q.enqueue(db, "fourth");
  EXPECT_EQ(q.dequeue(db), "fourth");
}

TEST(AbandonedPopRequests, ResultsServedToDeadPoppersAreDeliveredAgainFirst) {
  TempDir dir;
  Queue q(Subspace(Tuple{"Q"}), true);
  Subspace requests(Tuple{"pop"}, q.subspace().key() + "\xff");
  Subspace results(Tuple{"result"}, q.subspace().key() + "\xff");
  {
    Database db = Database::open(on_disk(dir));
    q.enqueue(db, "queued");
    // Two poppers were served and died before collecting.
    leave_result(db, results, register_request(db, requests, '\x01'), "served to a");
    leave_result(db, results, register_request(db, requests, '\x02'), "served to b");
    db.run([&](Transaction& tr) { tr.clear_range(requests.range()); });  // as the pass did
  }
  Database db = Database::open(on_disk(dir));
  EXPECT_EQ(q.dequeue(db), "served to a");
  EXPECT_EQ(q.dequeue(db), "served to b");
  EXPECT_EQ(q.dequeue(db), "queued");
  EXPECT_EQ(q.dequeue(db), std::nullopt);
  EXPECT_TRUE(range_empty(db, results.range()));
}

TEST(AbandonedPopRequests, APriorityQueuesDeadRequestsAreWithdrawnToo) {
  TempDir dir;
  PriorityQueue pq(Subspace(Tuple{"P"}), true);
  Subspace min_requests(Tuple{"pop", "min"}, pq.subspace().key() + "\xff");
  {
    Database db = Database::open(on_disk(dir));
    register_request(db, min_requests, '\x01');
  }
  Database db = Database::open(on_disk(dir));
  pq.push(db, "low", 1);
  pq.push(db, "high", 9);
  EXPECT_EQ(pq.pop_min(db), "low");
  EXPECT_EQ(pq.pop_min(db), "high");
  EXPECT_TRUE(range_empty(db, min_requests.range()));
}

}  // namespace
}  // namespace strata
