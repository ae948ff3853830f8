// High-contention pop requests left behind by a process that died (or a database that was
// closed) while its poppers waited: after the reopen nobody will collect what such a
// request is served, so a pass withdraws it unserved and the items go to live poppers.
// Requests of the current opening are served as always (QueueHighContention tests).
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <future>
#include <optional>
#include <random>
#include <set>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "strata/database.hpp"
#include "strata/error.hpp"
#include "strata/priority_queue.hpp"
#include "strata/queue.hpp"
#include "strata/subspace.hpp"

#include "durability/temp_dir.hpp"
#include "pop_probe_util.hpp"
#include "recipes_test_util.hpp"
#include "support/test_database.hpp"
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

namespace strata {
namespace {

using recipestest::bookkeeping;
using testing::TempDir;

Options on_disk(const TempDir& dir) {
  Options o;
  o.path = dir.path();
  o.durability = Durability::buffered;
  return o;
}

// A pop request of a popper that vanishes.
Tuple register_request(Database& db, const Subspace& requests, char id) {
  return recipestest::register_pop_request(db, requests, Bytes{std::string(20, id)});
}

// A popper that a pass served and that died before collecting: its request cleared, as
// the pass did, and its result slot holding `value`.
void leave_served(Database& db, const Subspace& requests, const Subspace& results, char id,
                  std::string_view value) {
  const Tuple request = register_request(db, requests, id);
  db.run([&](Transaction& tr) {
    tr.clear(requests.pack(request));
    tr.set(results.pack(request), value);
  });
}

bool range_empty(Database& db, const KeyRange& range) {
  return db.run([&](Transaction& tr) { return tr.get_range(range, {.limit = 1}).empty(); });
}

TEST(OpenedVersion, IsWhatTheLastOpeningLeftCommitted) {
  STRATA_SKIP_ON_CLUSTER("it reopens a durable directory; a cluster has no opening to outlive");
  TempDir dir;
  Version last = 0;
  {
    Database db = testing::open_database(on_disk(dir));
    EXPECT_EQ(db.opened_version(), 0);
    db.run([](Transaction& tr) { tr.set("k", "v"); });
    db.run([](Transaction& tr) { tr.set("k", "w"); });
    last = db.committed_version();
    EXPECT_EQ(db.opened_version(), 0);
  }
  Database again = testing::open_database(on_disk(dir));
  EXPECT_EQ(again.opened_version(), last);
  EXPECT_EQ(testing::open_database().opened_version(), 0);
}

TEST(AbandonedPopRequests, AQueuesDeadRequestsAreWithdrawnAndTheItemsGoToLivePoppers) {
  STRATA_SKIP_ON_CLUSTER("it reopens a durable directory; a cluster has no opening to outlive");
  TempDir dir;
  Queue q(Subspace(Tuple{"Q"}), true);
  Subspace requests = bookkeeping(q.subspace(), Tuple{"pop"});
  Subspace results = bookkeeping(q.subspace(), Tuple{"result"});
  {
    Database db = testing::open_database(on_disk(dir));
    register_request(db, requests, '\x01');
    register_request(db, requests, '\x02');
  }
  Database db = testing::open_database(on_disk(dir));
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

// Before requests carried their versionstamp (commit 9ecd8a4), strata keyed them (index,
// id). One left in a durable database by that version sorts at the head of the requests;
// reading it as a versionstamp threw, and every high-contention pop of the queue with it.
// It is withdrawn as any request of an earlier opening is.
TEST(AbandonedPopRequests, ARequestInTheOldFormatIsWithdrawn) {
  STRATA_SKIP_ON_CLUSTER("it reopens a durable directory; a cluster has no opening to outlive");
  TempDir dir;
  Queue q(Subspace(Tuple{"Q"}), true);
  Subspace requests = bookkeeping(q.subspace(), Tuple{"pop"});
  {
    Database db = testing::open_database(on_disk(dir));
    db.run([&](Transaction& tr) {
      tr.set(requests.pack(Tuple{std::int64_t{7}, Bytes{std::string(20, '\x01')}}), "");
    });
  }
  Database db = testing::open_database(on_disk(dir));
  q.enqueue(db, "item");
  EXPECT_EQ(q.dequeue(db), "item");
  EXPECT_EQ(q.dequeue(db), std::nullopt);
  EXPECT_TRUE(range_empty(db, requests.range()));
}

TEST(AbandonedPopRequests, ResultsServedToDeadPoppersAreDeliveredAgainFirst) {
  STRATA_SKIP_ON_CLUSTER("it reopens a durable directory; a cluster has no opening to outlive");
  TempDir dir;
  Queue q(Subspace(Tuple{"Q"}), true);
  Subspace requests = bookkeeping(q.subspace(), Tuple{"pop"});
  Subspace results = bookkeeping(q.subspace(), Tuple{"result"});
  {
    Database db = testing::open_database(on_disk(dir));
    q.enqueue(db, "queued");
    // Two poppers were served and died before collecting.
    leave_served(db, requests, results, '\x01', "served to a");
    leave_served(db, requests, results, '\x02', "served to b");
  }
  Database db = testing::open_database(on_disk(dir));
  EXPECT_EQ(q.dequeue(db), "served to a");
  EXPECT_EQ(q.dequeue(db), "served to b");
  EXPECT_EQ(q.dequeue(db), "queued");
  EXPECT_EQ(q.dequeue(db), std::nullopt);
  EXPECT_TRUE(range_empty(db, results.range()));
}

TEST(AbandonedPopRequests, APriorityQueuesDeadRequestsAreWithdrawnToo) {
  STRATA_SKIP_ON_CLUSTER("it reopens a durable directory; a cluster has no opening to outlive");
  TempDir dir;
  PriorityQueue pq(Subspace(Tuple{"P"}), true);
  Subspace min_requests = bookkeeping(pq.subspace(), Tuple{"pop", "min"});
  {
    Database db = testing::open_database(on_disk(dir));
    register_request(db, min_requests, '\x01');
  }
  Database db = testing::open_database(on_disk(dir));
  pq.push(db, "low", 1);
  pq.push(db, "high", 9);
  EXPECT_EQ(pq.pop_min(db), "low");
  EXPECT_EQ(pq.pop_min(db), "high");
  EXPECT_TRUE(range_empty(db, min_requests.range()));
}

// An item served to a dead pop_max goes again to a pop_max, not to a pop_min: each kind
// has its own result slots.
TEST(AbandonedPopRequests, APriorityQueueDeliversAgainToAPopOfTheSameKind) {
  STRATA_SKIP_ON_CLUSTER("it reopens a durable directory; a cluster has no opening to outlive");
  TempDir dir;
  PriorityQueue pq(Subspace(Tuple{"P"}), true);
  Subspace max_requests = bookkeeping(pq.subspace(), Tuple{"pop", "max"});
  Subspace max_results = bookkeeping(pq.subspace(), Tuple{"result", "max"});
  {
    Database db = testing::open_database(on_disk(dir));
    leave_served(db, max_requests, max_results, '\x01', "served to max");
    pq.push(db, "low", 1);
    pq.push(db, "high", 9);
  }
  Database db = testing::open_database(on_disk(dir));
  EXPECT_EQ(pq.pop_min(db), "low");
  EXPECT_EQ(pq.pop_max(db), "served to max");
  EXPECT_EQ(pq.pop_max(db), "high");
  EXPECT_EQ(pq.pop_max(db), std::nullopt);
  EXPECT_TRUE(range_empty(db, max_results.range()));
}

// A probe that makes every pop transaction of the recipes take 40 ms more: longer than a
// 20 ms MVCC window, so each of a popper's passes fails with transaction_too_old (1007).
struct SlowClient : recipestest::RoundTripProbe {
  SlowClient() : RoundTripProbe(std::chrono::milliseconds(40)) {}
};

// Runs `body` and commits, retrying without limit or timeout whatever the database's
// options: the setup and checks around a pop made to fail are not under test, and a loaded
// machine may hold one of them past a 20 ms window.
template <typename Body>
auto patiently(Database& db, Body body) {
  Transaction tr = db.create_transaction();
  tr.set_retry_limit(-1);
  tr.set_timeout(std::chrono::milliseconds(0));
  for (;;) {
    try {
      auto result = body(tr);
      tr.commit();
      return result;
    } catch (const Error& e) {
      tr.on_error(e);
    }
  }
}

// A popper that gives up after registering (here its pass, behind a slow client, is too
// old for a 20 ms MVCC window, and the retry limit is 0) settles its request before it
// throws: left behind, the request took the next item into a result slot nobody collects.
// (A stalled request ahead makes the popper register rather than take the fast path.)
TEST(AbandonedPopRequests, APopperThatGivesUpWithdrawsItsRequestFirst) {
  STRATA_SKIP_ON_CLUSTER("the MVCC window is the cluster's (5 s), not Options::mvcc_window");
  Options o;
  o.mvcc_window = std::chrono::milliseconds(20);
  o.transaction_retry_limit = 0;
  Database db = testing::open_database(o);
  Queue q(Subspace(Tuple{"Q"}), true);
  Subspace requests = bookkeeping(q.subspace(), Tuple{"pop"});
  const Tuple stalled = register_request(db, requests, '\x07');
  SlowClient slow;
  {
    const recipestest::ScopedPopProbe installed(slow);
    try {
      (void)q.dequeue(db);
      ADD_FAILURE() << "the pop did not give up";
    } catch (const Error& e) {
      EXPECT_EQ(e.error_code(), ErrorCode::transaction_too_old);
    }
  }
  patiently(db, [&](Transaction& tr) {
    tr.clear(requests.pack(stalled));
    return true;
  });
  EXPECT_TRUE(
      patiently(db, [&](Transaction& tr) { return tr.get_range(requests.range()).empty(); }));
  patiently(db, [&](Transaction& tr) {
    q.enqueue(tr, "item");
    return true;
  });
  EXPECT_EQ(patiently(db, [&](Transaction& tr) { return q.dequeue(tr); }), "item");
}

// A high-contention pop keeps to its transaction's retry limit and timeout, as the simple
// pop does through Database::run: its loops retry through on_error, which keeps the retry
// count and the timeout. A loop that reset the transaction before each attempt would zero
// the count and restart the timeout, and retry a failing pass forever whatever the limits.
// Returns the pop's error, or nullopt when it is still retrying after 10 s.
std::optional<ErrorCode> high_contention_pop_error(Options o) {
  o.mvcc_window = std::chrono::milliseconds(20);
  Database db = testing::open_database(o);
  Queue q(Subspace(Tuple{"Q"}), true);
  Subspace requests = bookkeeping(q.subspace(), Tuple{"pop"});
  const Tuple stalled = register_request(db, requests, '\x07');
  SlowClient slow;  // outlives the pop, which may still be in it when uninstalled
  std::optional<recipestest::ScopedPopProbe> installed(std::in_place, slow);
  auto popping = std::async(std::launch::async, [&]() -> ErrorCode {
    try {
      (void)q.dequeue(db);
      return ErrorCode::success;
    } catch (const Error& e) {
      return e.error_code();
    }
  });
  // A bound for the failure only: the pop gives up within a few attempts (~50 ms each).
  const bool gave_up = popping.wait_for(std::chrono::seconds(10)) == std::future_status::ready;
  installed.reset();  // lets a pop that is still retrying finish
  const ErrorCode error = popping.get();
  if (!gave_up) return std::nullopt;
  // It settled its request before it threw: only the stalled one is left.
  patiently(db, [&](Transaction& tr) {
    tr.clear(requests.pack(stalled));
    return true;
  });
  EXPECT_TRUE(
      patiently(db, [&](Transaction& tr) { return tr.get_range(requests.range()).empty(); }));
  return error;
}

TEST(AbandonedPopRequests, AHighContentionPopGivesUpAtItsRetryLimit) {
  STRATA_SKIP_ON_CLUSTER("the MVCC window is the cluster's (5 s), not Options::mvcc_window");
  Options o;
  o.transaction_retry_limit = 2;
  EXPECT_EQ(high_contention_pop_error(o), ErrorCode::transaction_too_old);
}

TEST(AbandonedPopRequests, AHighContentionPopGivesUpAtItsTimeout) {
  STRATA_SKIP_ON_CLUSTER("the MVCC window is the cluster's (5 s), not Options::mvcc_window");
  Options o;
  o.transaction_timeout = std::chrono::milliseconds(300);
  EXPECT_EQ(high_contention_pop_error(o), ErrorCode::transaction_timed_out);
}

#if !defined(__SANITIZE_THREAD__)
// The real thing: a child process runs a producer and four high-contention consumers on a
// durable queue and is killed (SIGKILL) mid-flight, twelve times. Each time the parent
// reopens the database and drains the queue. No item may be delivered twice, and of the
// items whose enqueue returned, the only ones allowed missing are those a consumer had
// dequeued but not yet reported down the pipe when it died (at most one per consumer).
// A request left by a killed consumer would otherwise take an item into a result slot
// nobody collects: the drain checks that no slot and no request is left behind.
constexpr int kConsumers = 4;

// A report down the pipe: 'p' item enqueued, 'c' item dequeued. One write each (8 bytes,
// below PIPE_BUF), so the threads' reports never interleave.
struct Report {
  char kind;
  char pad[3];
  std::uint32_t item;
};

[[noreturn]] void crash_child(const std::filesystem::path& dir, std::uint32_t first, int fd) {
  Options o;
  o.path = dir;
  o.durability = Durability::buffered;
  Database db = testing::open_database(o);
  Queue q(Subspace(Tuple{"Q"}), true);
  auto report = [fd](char kind, std::uint32_t item) {
    const Report r{kind, {}, item};
    if (write(fd, &r, sizeof r) != sizeof r) _exit(1);
  };
  std::vector<std::thread> consumers;
  for (int c = 0; c < kConsumers; ++c) {
    consumers.emplace_back([&] {
      for (;;) {
        if (auto v = q.dequeue(db)) report('c', static_cast<std::uint32_t>(std::stoul(*v)));
      }
    });
  }
  for (std::uint32_t i = first;; ++i) {
    q.enqueue(db, std::to_string(i));
    report('p', i);
  }
}

TEST(AbandonedPopRequests, KilledConsumersLoseNoItemThatWasNotInTheirHands) {
  STRATA_SKIP_ON_CLUSTER("it reopens a durable directory; a cluster has no opening to outlive");
  TempDir dir;
  Queue q(Subspace(Tuple{"Q"}), true);
  Subspace requests = bookkeeping(q.subspace(), Tuple{"pop"});
  Subspace results = bookkeeping(q.subspace(), Tuple{"result"});
  std::mt19937 rng(2026);
  for (std::uint32_t round = 0; round < 12; ++round) {
    int fds[2];
    ASSERT_EQ(pipe(fds), 0);
    const std::uint32_t first = (round + 1) * 1'000'000;
    const pid_t pid = fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      close(fds[0]);
      crash_child(dir.path(), first, fds[1]);
    }
    close(fds[1]);
    std::set<std::uint32_t> produced;
    std::multiset<std::uint32_t> consumed;
    auto take = [&](const Report& r) {
      if (r.kind == 'p') produced.insert(r.item);
      if (r.kind == 'c') consumed.insert(r.item);
    };
    const std::size_t reports = 100 + rng() % 1500;
    Report r{};
    for (std::size_t n = 0; n < reports && read(fds[0], &r, sizeof r) == sizeof r; ++n) take(r);
    kill(pid, SIGKILL);
    while (read(fds[0], &r, sizeof r) == sizeof r) take(r);
    close(fds[0]);
    int status = 0;
    waitpid(pid, &status, 0);
    ASSERT_TRUE(WIFSIGNALED(status));

    Database db = testing::open_database(on_disk(dir));
    std::multiset<std::uint32_t> drained;
    while (auto v = q.dequeue(db)) drained.insert(static_cast<std::uint32_t>(std::stoul(*v)));
    EXPECT_TRUE(range_empty(db, results.range()))
        << "an item was left in a result slot, round " << round;
    EXPECT_TRUE(range_empty(db, requests.range())) << "round " << round;
    std::size_t missing = 0;
    for (std::uint32_t item : produced) {
      const std::size_t seen = consumed.count(item) + drained.count(item);
      ASSERT_LE(seen, 1u) << "item " << item << " delivered twice, round " << round;
      missing += seen == 0 ? 1 : 0;
    }
    for (std::uint32_t item : drained) {
      ASSERT_EQ(consumed.count(item), 0u) << "item " << item << " delivered twice";
    }
    EXPECT_LE(missing, static_cast<std::size_t>(kConsumers))
        << "items lost beyond those in the consumers' hands, round " << round;
  }
}
#endif

}  // namespace
}  // namespace strata
