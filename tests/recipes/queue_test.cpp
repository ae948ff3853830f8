// Queue recipe: exact key layout, single-client behaviour, the high-contention pop path,
// concurrency (exactly once, FIFO per producer, enqueues conflict only with waiters) and
// dequeue_wait.
#include "strata/queue.hpp"

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <future>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "strata/database.hpp"
#include "strata/error.hpp"

#include "pop_probe_util.hpp"
#include "recipes_test_util.hpp"
#include "support/test_database.hpp"

namespace strata {
namespace {

using namespace std::chrono_literals;
using recipestest::bookkeeping;
using recipestest::CountingProbe;
using recipestest::expect_items_once;
using recipestest::item_value;
using recipestest::le64;
using recipestest::parse_item;
using recipestest::PopEvent;
using recipestest::read_prefix;
using recipestest::register_pop_request;
using recipestest::RoundTripProbe;
using recipestest::scaled;
using recipestest::ScopedPopProbe;

TEST(QueueLayout, ItemKeysAreIndexAndTwentyRandomBytes) {
  Database db = testing::open_database();
  Queue q;
  for (const char* v : {"a", "b", "c"}) q.enqueue(db, v);

  Subspace space(Tuple{"Q"});
  EXPECT_EQ(space.key(), std::string("\x02Q\x00", 3));
  auto rows = recipestest::read_all(db, space.range());
  ASSERT_EQ(rows.size(), 3u);
  std::set<std::string> ids;
  for (std::size_t i = 0; i < rows.size(); ++i) {
    EXPECT_EQ(rows[i].key.substr(0, 3), std::string("\x02Q\x00", 3));
    Tuple t = space.unpack(rows[i].key);
    ASSERT_EQ(t.size(), 2u);
    EXPECT_EQ(t[0].get<std::int64_t>(), static_cast<std::int64_t>(i + 1));  // first index 1
    ASSERT_TRUE(t[1].is<Bytes>());
    EXPECT_EQ(t[1].get<Bytes>().data.size(), 20u);
    ids.insert(t[1].get<Bytes>().data);
    // Byte by byte: prefix, int code 0x15 + index, bytes code 0x01, escaped body, 0x00.
    EXPECT_EQ(rows[i].key.substr(3, 3), std::string("\x15") + char(i + 1) + "\x01");
    EXPECT_EQ(rows[i].key.back(), '\x00');
  }
  EXPECT_EQ(ids.size(), 3u);
  EXPECT_EQ(rows[0].value, "a");
  EXPECT_EQ(rows[2].value, "c");

  // With no dequeue_wait waiting, enqueues write nothing but their items: no signal, no
  // waiter count.
  Transaction tr = db.create_transaction();
  EXPECT_EQ(tr.get(space.key()), std::nullopt);
  EXPECT_TRUE(read_prefix(db, space.key() + "\xff").empty());
}

// The waiter count of the default queue, as docs/recipes.md lays it out: the first key
// after the items.
std::string waiters_key() { return Subspace(Tuple{"Q"}).key() + "\xff"; }

// Blocks until the waiter count exists, on a watch of it (no polling, no sleep).
void await_waiter(Database& db) {
  for (;;) {
    std::optional<Watch> watch;
    bool present = db.run([&](Transaction& tr) {
      if (tr.get(waiters_key())) return true;
      watch = tr.watch(waiters_key());
      return false;
    });
    if (present) return;
    watch->wait();
  }
}

TEST(QueueSignal, EnqueueBumpsTheSignalOnlyWhileAWaiterIsRegistered) {
  Database db = testing::open_database();
  Queue q;
  std::optional<std::string> got;
  std::thread waiter([&] { got = q.dequeue_wait(db, 30s); });
  await_waiter(db);
  Transaction tr = db.create_transaction();
  EXPECT_EQ(tr.get(waiters_key()), le64(1));
  q.enqueue(db, "x");
  waiter.join();
  EXPECT_EQ(got, "x");
  tr = db.create_transaction();
  EXPECT_EQ(tr.get(q.subspace().key()), le64(1));
  // The waiter took itself off the count, and a zero count is cleared.
  EXPECT_EQ(tr.get(waiters_key()), std::nullopt);
  q.enqueue(db, "y");
  tr = db.create_transaction();
  EXPECT_EQ(tr.get(q.subspace().key()), le64(1));
}

// milliseconds::max() is "forever" to many callers: the waiter registers and waits for the
// item, although now + max() overflows the clock's nanoseconds (unchecked, it would land in
// the past and dequeue_wait would look once and return nullopt). The main thread waits for
// the waiter to register or return, on a watch of the count.
TEST(QueueSignal, AnUnboundedTimeoutWaitsForTheItem) {
  Database db = testing::open_database();
  Queue q;
  std::mutex mu;
  std::condition_variable cv;
  bool registered = false;
  bool returned = false;
  std::optional<std::string> got;
  std::thread waiter([&] {
    auto v = q.dequeue_wait(db, std::chrono::milliseconds::max());
    const std::lock_guard lock(mu);
    got = std::move(v);
    returned = true;
    cv.notify_all();
  });
  std::optional<Watch> watch;
  const bool present = db.run([&](Transaction& tr) {
    if (tr.get(waiters_key())) return true;
    watch = tr.watch(waiters_key());
    return false;
  });
  auto on_registered = [&] {
    const std::lock_guard lock(mu);
    registered = true;
    cv.notify_all();
  };
  if (present) {
    on_registered();
  } else {
    watch->on_ready(on_registered);
  }
  {
    std::unique_lock lock(mu);
    cv.wait(lock, [&] { return registered || returned; });
    EXPECT_FALSE(returned) << "dequeue_wait returned without waiting";
  }
  q.enqueue(db, "x");
  waiter.join();
  EXPECT_EQ(got, "x");
}

// A negative timeout is one look, however large (now + milliseconds::min() overflows the
// clock's nanoseconds; unchecked, a release build would wrap -10^13 ms to a wait of some 267
// years).
TEST(QueueSignal, ANegativeTimeoutLooksOnce) {
  Database db = testing::open_database();
  Queue q;
  EXPECT_EQ(q.dequeue_wait(db, -1ms), std::nullopt);
  EXPECT_EQ(q.dequeue_wait(db, std::chrono::milliseconds::min()), std::nullopt);
  EXPECT_EQ(q.dequeue_wait(db, std::chrono::milliseconds(-10'000'000'000'000)), std::nullopt);
  q.enqueue(db, "x");
  EXPECT_EQ(q.dequeue_wait(db, std::chrono::milliseconds::min()), "x");
}

// With the database's 10,000 watches in use, dequeue_wait still waits (it looks again
// every few milliseconds) instead of throwing too_many_watches: it returns nullopt at its
// timeout, and an item enqueued while it waits.
TEST(QueueSignal, WithNoWatchToSpareDequeueWaitStillWaits) {
  Database db = testing::open_database();
  std::vector<Watch> kept;
  for (int i = 0; i < 10'000; ++i) {
    kept.push_back(db.run([&](Transaction& tr) { return tr.watch("w" + std::to_string(i % 7)); }));
  }
  Queue q;
  EXPECT_EQ(q.dequeue_wait(db, 30ms), std::nullopt);
  std::optional<std::string> got;
  std::thread waiter([&] { got = q.dequeue_wait(db, 60s); });
  q.enqueue(db, "x");
  waiter.join();
  EXPECT_EQ(got, "x");
}

// While a waiter count exists, the enqueue's reverse read finds the count before the last
// item: items are still numbered on from the last one, and every enqueue signals.
TEST(QueueSignal, EnqueuesNumberOnPastAWaiterCount) {
  Database db = testing::open_database();
  Queue q;
  q.enqueue(db, "a");
  db.run([&](Transaction& tr) { tr.atomic_op(MutationType::add, waiters_key(), le64(1)); });
  q.enqueue(db, "b");
  q.enqueue(db, "c");
  Subspace space(Tuple{"Q"});
  auto rows = recipestest::read_all(db, space.range());
  ASSERT_EQ(rows.size(), 3u);
  for (std::size_t i = 0; i < rows.size(); ++i) {
    EXPECT_EQ(space.unpack(rows[i].key)[0].get<std::int64_t>(), static_cast<std::int64_t>(i + 1));
  }
  Transaction tr = db.create_transaction();
  EXPECT_EQ(tr.get(space.key()), le64(2));    // "b" and "c" signalled, "a" did not
  EXPECT_EQ(tr.get(waiters_key()), le64(1));  // the count is only read
  EXPECT_EQ(q.dequeue(db), "a");
}

// The race that would lose a wake-up: an enqueue reads "no waiters", then a waiter
// registers, checks the queue (still empty) and sleeps. The enqueue must not commit
// without signalling: its read of the count conflicts, and the retry signals.
TEST(QueueSignal, EnqueueConflictsWithAWaiterRegisteringAfterItsRead) {
  Database db = testing::open_database();
  Queue q;
  Transaction tr = db.create_transaction();
  q.enqueue(tr, "x");
  db.run([&](Transaction& other) { other.atomic_op(MutationType::add, waiters_key(), le64(1)); });
  try {
    tr.commit();
    FAIL() << "the enqueue committed without seeing the new waiter";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), static_cast<int>(ErrorCode::not_committed));
    tr.on_error(e);
  }
  q.enqueue(tr, "x");
  tr.commit();
  tr = db.create_transaction();
  EXPECT_EQ(tr.get(q.subspace().key()), le64(1));
}

TEST(QueueSignal, WithAnEmptyPrefixEveryEnqueueSignals) {
  Database db = testing::open_database();
  Queue q{Subspace()};
  q.enqueue(db, "a");
  q.enqueue(db, "b");
  Transaction tr = db.create_transaction();
  EXPECT_EQ(tr.get(""), le64(2));
  EXPECT_EQ(q.dequeue_wait(db, 0ms), "a");
}

TEST(QueueLayout, IndexContinuesFromTheLastItem) {
  Database db = testing::open_database();
  Queue q;
  q.enqueue(db, "a");
  q.enqueue(db, "b");
  EXPECT_EQ(q.dequeue(db), "a");
  q.enqueue(db, "c");  // last index is 2 -> 3
  Subspace space(Tuple{"Q"});
  auto rows = recipestest::read_all(db, space.range());
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(space.unpack(rows[0].key)[0].get<std::int64_t>(), 2);
  EXPECT_EQ(space.unpack(rows[1].key)[0].get<std::int64_t>(), 3);
  EXPECT_EQ(q.dequeue(db), "b");
  EXPECT_EQ(q.dequeue(db), "c");
  q.enqueue(db, "d");  // empty again -> 1
  rows = recipestest::read_all(db, space.range());
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(space.unpack(rows[0].key)[0].get<std::int64_t>(), 1);
}

class QueueModes : public ::testing::TestWithParam<bool> {};
INSTANTIATE_TEST_SUITE_P(Modes, QueueModes, ::testing::Values(false, true),
                         [](const auto& param_info) {
                           return param_info.param ? "HighContention" : "Simple";
                         });

TEST_P(QueueModes, SingleClientFifoPeekEmpty) {
  Database db = testing::open_database();
  Queue q(Subspace(Tuple{"jobs"}), GetParam());
  EXPECT_EQ(q.dequeue(db), std::nullopt);
  EXPECT_EQ(q.peek(db), std::nullopt);
  EXPECT_TRUE(q.empty(db));
  for (int i = 0; i < 50; ++i) q.enqueue(db, "v" + std::to_string(i));
  EXPECT_FALSE(q.empty(db));
  EXPECT_EQ(q.peek(db), "v0");
  EXPECT_EQ(q.peek(db), "v0");  // peek does not remove
  for (int i = 0; i < 50; ++i) EXPECT_EQ(q.dequeue(db), "v" + std::to_string(i));
  EXPECT_EQ(q.dequeue(db), std::nullopt);
  Transaction tr = db.create_transaction();
  EXPECT_TRUE(q.empty(tr));
  // Nothing is left behind: no items, and no requests or results past key() + "\xff".
  EXPECT_TRUE(read_prefix(db, q.subspace().key() + "\xff").empty());
  EXPECT_TRUE(recipestest::read_all(db, q.subspace().range()).empty());
}

TEST_P(QueueModes, DequeueIntoABufferReusesItAndEmptiesItWhenNothingIsTaken) {
  Database db = testing::open_database();
  Queue q(Subspace(Tuple{"jobs"}), GetParam());
  std::string out = "stale";
  EXPECT_FALSE(q.dequeue(db, out));
  EXPECT_EQ(out, "");  // not the caller's old contents
  const std::string big(200, 'x');
  q.enqueue(db, big + "1");
  q.enqueue(db, "2");
  q.enqueue(db, big + "3");
  out.reserve(1000);
  const char* buffer = out.data();
  ASSERT_TRUE(q.dequeue(db, out));
  EXPECT_EQ(out, big + "1");
  ASSERT_TRUE(q.dequeue(db, out));
  EXPECT_EQ(out, "2");
  ASSERT_TRUE(q.dequeue(db, out));
  EXPECT_EQ(out, big + "3");
  if (!GetParam()) {
    EXPECT_EQ(out.data(), buffer);  // assigned into, not replaced
  }
  EXPECT_FALSE(q.dequeue(db, out));
  EXPECT_EQ(out, "");
  EXPECT_TRUE(recipestest::read_all(db, q.subspace().range()).empty());
}

// The pop's failure is made by the injected latency, not by the machine's speed: the
// database's 1 ms timeout is lifted for the setup and the check, which are not under test
// (a loaded machine may take over 1 ms for them), and every pop transaction waits 20 ms
// between its reads and its commit, past any 1 ms deadline.
TEST_P(QueueModes, DequeueIntoABufferThatThrowsLeavesItEmptyAndTheItemQueued) {
  Options options;
  options.transaction_timeout = 1ms;
  Database db = testing::open_database(options);
  Queue q(Subspace(Tuple{"jobs"}), GetParam());
  const auto untimed = [&db](auto body) {
    Transaction tr = db.create_transaction();
    tr.set_timeout(0ms);
    return body(tr);
  };
  untimed([&](Transaction& tr) {
    q.enqueue(tr, "item");
    tr.commit();
  });
  std::string out = "stale";
  RoundTripProbe slow(20ms);
  {
    const ScopedPopProbe installed(slow);
    try {
      (void)q.dequeue(db, out);
      ADD_FAILURE() << "a pop that outlived its timeout returned";
    } catch (const Error& e) {
      EXPECT_EQ(e.error_code(), ErrorCode::transaction_timed_out);
    }
  }
  EXPECT_EQ(out, "");
  EXPECT_EQ(untimed([&](Transaction& tr) { return q.peek(tr); }), "item");
}

TEST(Queue, TransactionOverloadsCompose) {
  Database db = testing::open_database();
  Queue q;
  Transaction tr = db.create_transaction();
  q.enqueue(tr, "x");
  q.enqueue(tr, "y");
  EXPECT_FALSE(q.empty(tr));
  EXPECT_EQ(q.dequeue(tr), "x");  // reads its own writes
  tr.commit();
  EXPECT_EQ(q.peek(db), "y");
  Transaction other = db.create_transaction();
  q.enqueue(other, "z");
  other.cancel();  // an abandoned transaction leaves nothing
  EXPECT_EQ(q.dequeue(db), "y");
  EXPECT_EQ(q.dequeue(db), std::nullopt);
}

TEST(Queue, HighContentionNeedsAPrefix) {
  EXPECT_THROW(Queue(Subspace(), true), Error);
  EXPECT_NO_THROW(Queue(Subspace(), false));
}

// Waiting requests are served first, in the order their registrations committed (requests
// are keyed by versionstamp, docs/decisions/0004), not by their random ids; the popper's own
// request then finds the queue empty and returns nullopt, exactly as the layer's fulfilment
// does. The waiting requests' owners never run a pass (they do not exist), so this also
// checks that a popper behind a stalled oldest request stops waiting and runs the pass.
TEST(QueueHighContention, ServesWaitingRequestsInCommitOrder) {
  Database db = testing::open_database();
  Queue q(Subspace(Tuple{"Q"}), true);
  Subspace requests = bookkeeping(q.subspace(), Tuple{"pop"});
  Subspace results = bookkeeping(q.subspace(), Tuple{"result"});
  Bytes earlier{std::string(20, '\x09')};
  Bytes later{std::string(20, '\x01')};  // a smaller id, registered second
  std::vector<std::string> result_keys;  // (versionstamp, id), as the request's key
  for (const Bytes& id : {earlier, later}) {
    result_keys.push_back(results.pack(register_pop_request(db, requests, id)));
  }
  q.enqueue(db, "first");
  q.enqueue(db, "second");

  EXPECT_EQ(q.dequeue(db), std::nullopt);
  Transaction tr = db.create_transaction();
  EXPECT_EQ(tr.get(result_keys[0]), "first");
  EXPECT_EQ(tr.get(result_keys[1]), "second");
  EXPECT_TRUE(tr.get_range(requests.range()).empty());
  EXPECT_TRUE(tr.get_range(q.subspace().range()).empty());
}

// With the database's 10,000 watches all in use, a waiting popper's two watches fail the
// moment they are armed. That is no sign of progress: the popper must still wait out its
// bound and then run the pass for a stalled oldest request itself. (It took a failed watch
// for a fired one and spun behind the stalled request for good.)
TEST(QueueHighContention, WithNoWatchesLeftAWaiterStillServesAStalledOldestRequest) {
  Database db = testing::open_database();
  Queue q(Subspace(Tuple{"Q"}), true);
  Subspace requests = bookkeeping(q.subspace(), Tuple{"pop"});
  Subspace results = bookkeeping(q.subspace(), Tuple{"result"});
  std::vector<Watch> held;
  held.reserve(10'000);
  for (int t = 0; t < 100; ++t) {
    Transaction tr = db.create_transaction();
    for (int w = 0; w < 100; ++w) held.push_back(tr.watch("w" + std::to_string(t * 100 + w)));
    tr.commit();
  }
  // The oldest request, whose popper stalls: registered and never served by it.
  const Tuple stalled = register_pop_request(db, requests, Bytes{std::string(20, '\x05')});
  q.enqueue(db, "item");

  auto popping = std::async(std::launch::async, [&] { return q.dequeue(db); });
  const bool finished = popping.wait_for(20s) == std::future_status::ready;
  if (!finished) db.run([&](Transaction& tr) { tr.clear_range(requests.range()); });  // free it
  ASSERT_TRUE(finished) << "the popper never served the stalled request";
  EXPECT_EQ(popping.get(), std::nullopt);  // the item went to the older request
  EXPECT_EQ(db.run([&](Transaction& tr) { return tr.get(results.pack(stalled)); }), "item");
}

// Eight consumers dequeue until the queue is empty, their pops counted by `counters` (a
// probe installed meanwhile); returns the sequence numbers each saw.
std::vector<std::vector<int>> drain(Database& db, const Queue& q, CountingProbe& counters) {
  const ScopedPopProbe installed(counters);
  std::vector<std::vector<int>> seen(8);
  std::vector<std::thread> threads;
  for (int c = 0; c < 8; ++c) {
    threads.emplace_back([&, c] {
      while (auto v = q.dequeue(db)) seen[c].push_back(parse_item(*v).second);
    });
  }
  for (auto& t : threads) t.join();
  return seen;
}

struct MoveStats {
  long enqueue_conflicts = 0;
  std::uint64_t pops = 0, retries = 0;
};

// producers x consumers move `items` items; checks exactly once and FIFO per producer as
// each consumer saw it. Consumers use dequeue_wait when `blocking`, else dequeue (and
// yield when the queue is momentarily empty).
MoveStats move_items(bool high_contention, int producers, int consumers, int items, bool blocking) {
  Database db = testing::open_database();
  Queue q(Subspace(Tuple{"Q"}), high_contention);
  const int per_producer = items / producers;
  const int total = per_producer * producers;
  std::atomic<long> enqueue_conflicts{0};
  std::atomic<int> received{0};
  // Counts the consumers' pops: the producers make none.
  CountingProbe counters;
  const ScopedPopProbe installed(counters);
  std::vector<std::vector<std::pair<int, int>>> seen(consumers);
  std::vector<std::thread> threads;
  for (int p = 0; p < producers; ++p) {
    threads.emplace_back([&, p] {
      Transaction tr = db.create_transaction();
      for (int s = 0; s < per_producer; ++s) {
        for (;;) {
          try {
            q.enqueue(tr, item_value(p, s));
            tr.commit();
            tr.reset();
            break;
          } catch (const Error& e) {
            if (e.error_code() == ErrorCode::not_committed) ++enqueue_conflicts;
            tr.on_error(e);
          }
        }
      }
    });
  }
  for (int c = 0; c < consumers; ++c) {
    threads.emplace_back([&, c] {
      while (received.load() < total) {
        // dequeue_wait sleeps on the signal key when the queue is momentarily empty.
        auto v = blocking ? q.dequeue_wait(db, 5ms) : q.dequeue(db);
        if (v) {
          seen[c].push_back(parse_item(*v));
          ++received;
        } else if (!blocking) {
          std::this_thread::yield();
        }
      }
    });
  }
  for (auto& t : threads) t.join();

  std::vector<std::vector<int>> count(producers, std::vector<int>(per_producer, 0));
  for (int c = 0; c < consumers; ++c) {
    std::vector<int> last(producers, -1);
    for (auto [p, s] : seen[c]) {
      ++count[p][s];
      EXPECT_LT(last[p], s) << "consumer " << c << " saw producer " << p << " out of order";
      last[p] = s;
    }
  }
  int wrong = 0;
  for (auto& per : count)
    for (int n : per) wrong += n != 1;
  EXPECT_EQ(wrong, 0) << "items not delivered exactly once";
  EXPECT_EQ(received.load(), total);
  EXPECT_EQ(q.peek(db), std::nullopt);
  return {enqueue_conflicts.load(), counters[PopEvent::pop], counters[PopEvent::retry]};
}

// Enqueues conflict with nothing here: no dequeue_wait registers as a waiter.
TEST_P(QueueModes, FourProducersFourConsumersExactlyOnceFifoPerProducer) {
  MoveStats stats = move_items(GetParam(), 4, 4, scaled(100000, 20000), false);
  EXPECT_EQ(stats.enqueue_conflicts, 0) << "an enqueue failed with 1020";
  std::printf("[ stats    ] %s: %llu pops, %llu retries (%.3f per pop)\n",
              GetParam() ? "high-contention" : "simple",
              static_cast<unsigned long long>(stats.pops),
              static_cast<unsigned long long>(stats.retries),
              stats.pops ? double(stats.retries) / double(stats.pops) : 0.0);
}

// The same with blocking consumers: their registrations may make enqueues retry (counted,
// not asserted), and every item still arrives exactly once, in order per producer.
TEST_P(QueueModes, FourProducersFourBlockingConsumersExactlyOnceFifoPerProducer) {
  MoveStats stats = move_items(GetParam(), 4, 4, scaled(50000, 10000), true);
  std::printf("[ stats    ] %s: %ld enqueue conflicts with waiters registering\n",
              GetParam() ? "high-contention" : "simple", stats.enqueue_conflicts);
}

// Eight consumers drain a full queue: simple dequeues conflict on the head, while the
// staged path hands items out in batches. Both deliver every item exactly once.
TEST(QueueContention, EightConsumersRetriesPerPop) {
  const int items = scaled(20000, 4000);
  double per_pop[2] = {0, 0};
  for (bool hc : {false, true}) {
    Database db = testing::open_database();
    // A queue of each mode's own: on a cluster both loops open one database, and the
    // first loop's deleted rows stay (as MVCC versions) under the prefix it used.
    Queue q(Subspace(Tuple{"Q", hc}), hc);
    db.run([&](Transaction& tr) {
      for (int i = 0; i < items; ++i) q.enqueue(tr, item_value(0, i));
    });
    CountingProbe counters;
    std::vector<std::vector<int>> seen = drain(db, q, counters);
    const std::uint64_t pops = counters[PopEvent::pop], retries = counters[PopEvent::retry];
    std::vector<int> count(items, 0);
    for (auto& s : seen) {
      EXPECT_TRUE(std::is_sorted(s.begin(), s.end()));
      for (int i : s) ++count[i];
    }
    EXPECT_EQ(std::count(count.begin(), count.end(), 1), items)
        << "missing " << std::count(count.begin(), count.end(), 0) << ", duplicated "
        << std::count_if(count.begin(), count.end(), [](int n) { return n > 1; })
        << "; left in the item range " << recipestest::read_all(db, q.subspace().range()).size()
        << ", bookkeeping rows left " << read_prefix(db, q.subspace().key() + "\xff").size();
    per_pop[hc] = double(retries) / double(pops);
    std::printf("[ stats    ] %s, 8 consumers: %llu pops, %llu retries (%.3f per pop)\n",
                hc ? "high-contention" : "simple", static_cast<unsigned long long>(pops),
                static_cast<unsigned long long>(retries), per_pop[hc]);
  }
  // The staged path bounds retries: a lost fulfilment race costs one retry and serves the
  // loser's request anyway.
  EXPECT_LT(per_pop[1], 2.0);
}

// Transactions that last a client's network round trip (simulated: 200 us between reads
// and commit) overlap for real, so consumers collide on the head, fulfilment passes race,
// and every retry path runs. Each item must still be delivered exactly once, in order.
TEST_P(QueueModes, EightConsumersWithClientRoundTripsDeliverExactlyOnce) {
  const int items = scaled(800, 200);
  Database db = testing::open_database();
  Queue q(Subspace(Tuple{"Q"}), GetParam());
  db.run([&](Transaction& tr) {
    for (int i = 0; i < items; ++i) q.enqueue(tr, item_value(0, i));
  });
  CountingProbe counters(200us);
  std::vector<std::vector<int>> seen = drain(db, q, counters);
  const double pops = double(counters[PopEvent::pop]);
  std::printf(
      "[ stats    ] %s, 200 us round trips: %.3f retries per pop (%.3f lost passes, %.3f lost "
      "fast paths), %.3f fast paths skipped, %.3f helping passes\n",
      GetParam() ? "high-contention" : "simple", double(counters[PopEvent::retry]) / pops,
      double(counters[PopEvent::fulfil_race]) / pops,
      double(counters[PopEvent::fast_path_loss]) / pops,
      double(counters[PopEvent::fast_path_skip]) / pops, double(counters[PopEvent::help]) / pops);
  std::vector<int> count(items, 0);
  for (auto& s : seen) {
    EXPECT_TRUE(std::is_sorted(s.begin(), s.end()));
    for (int i : s) ++count[i];
  }
  EXPECT_EQ(std::count(count.begin(), count.end(), 1), items);
  EXPECT_EQ(q.peek(db), std::nullopt);
}

TEST_P(QueueModes, DequeueWaitGetsAnItemEnqueuedLater) {
  Database db = testing::open_database();
  Queue q(Subspace(Tuple{"Q"}), GetParam());
  auto start = std::chrono::steady_clock::now();
  std::thread producer([&] {
    std::this_thread::sleep_for(100ms);  // the scenario: the item arrives 100 ms later
    q.enqueue(db, "late");
  });
  auto v = q.dequeue_wait(db, 10s);
  auto elapsed = std::chrono::steady_clock::now() - start;
  producer.join();
  EXPECT_EQ(v, "late");
  EXPECT_GE(elapsed, 90ms);
  EXPECT_LT(elapsed, 5s);
}

TEST_P(QueueModes, DequeueWaitTimesOutOnAnEmptyQueue) {
  Database db = testing::open_database();
  Queue q(Subspace(Tuple{"Q"}), GetParam());
  auto start = std::chrono::steady_clock::now();
  EXPECT_EQ(q.dequeue_wait(db, 50ms), std::nullopt);
  EXPECT_GE(std::chrono::steady_clock::now() - start, 50ms);
  q.enqueue(db, "now");
  EXPECT_EQ(q.dequeue_wait(db, 0ms), "now");  // an item already there: no wait at all
}

TEST_P(QueueModes, ManyWaitersEachItemToExactlyOne) {
  Database db = testing::open_database();
  Queue q(Subspace(Tuple{"Q"}), GetParam());
  constexpr int kWaiters = 8;
  std::vector<std::optional<std::string>> got(kWaiters);
  std::vector<std::thread> waiters;
  for (int w = 0; w < kWaiters; ++w) {
    waiters.emplace_back([&, w] { got[w] = q.dequeue_wait(db, 30s); });
  }
  for (int i = 0; i < kWaiters; ++i) q.enqueue(db, "item" + std::to_string(i));
  for (auto& t : waiters) t.join();
  expect_items_once(got);
  EXPECT_EQ(q.peek(db), std::nullopt);
}

}  // namespace
}  // namespace strata
