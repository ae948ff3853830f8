// FoundationDB-style correctness workloads through the public API:
//   - Cycle: a ring of N pointers stays one ring under concurrent 3-hop swaps (any lost
//     update or non-serializable interleaving breaks the ring), and every snapshot a
//     concurrent reader takes is a ring too;
//   - ConflictRange: a range read conflicts exactly when its result would have changed:
//     never too narrow, and not wider than FoundationDB's ReadYourWrites.cpp (RYWImpl::read)
//     allows;
//   - Bank: concurrent transfers preserve the total, and no reader sees money in flight.
#include <algorithm>
#include <atomic>
#include <cstdio>
#include <functional>
#include <optional>
#include <random>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "strata/database.hpp"
#include "strata/transaction.hpp"

#include "api/api_test_util.hpp"
#include "support/test_database.hpp"

namespace strata {
namespace {

using apitest::Store;

// ---- Cycle ------------------------------------------------------------------------------

constexpr int kCycleKeys = 100;

std::string cycle_key(int i) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "cycle/%03d", i);
  return buf;
}

// The index stored in a cycle value, or -1 when missing or malformed.
int cycle_target(const std::optional<std::string>& v) {
  if (!v || v->empty() || v->size() > 3) return -1;
  int n = 0;
  for (char c : *v) {
    if (c < '0' || c > '9') return -1;
    n = n * 10 + (c - '0');
  }
  return n < kCycleKeys ? n : -1;
}

// Empty when `rows` (all of cycle/) form one ring through every key; else what is wrong.
std::string check_ring(const std::vector<KeyValue>& rows) {
  if (rows.size() != static_cast<std::size_t>(kCycleKeys)) {
    return "ring has " + std::to_string(rows.size()) + " keys";
  }
  std::vector<int> next(kCycleKeys);
  for (int i = 0; i < kCycleKeys; ++i) {
    if (rows[i].key != cycle_key(i)) return "unexpected key " + rows[i].key;
    next[i] = cycle_target(rows[i].value);
    if (next[i] < 0) return "bad value at " + rows[i].key;
  }
  int at = 0;
  for (int step = 1; step <= kCycleKeys; ++step) {
    at = next[at];
    if (at == 0 && step != kCycleKeys) return "cycle got shorter: " + std::to_string(step);
  }
  if (at != 0) return "cycle got longer";
  return {};
}

TEST(Workload, CycleStaysOneRingUnderConcurrentSwaps) {
  Database db = testing::open_database();
  {
    Store ring;
    for (int i = 0; i < kCycleKeys; ++i) ring[cycle_key(i)] = std::to_string((i + 1) % kCycleKeys);
    apitest::put_all(db, ring);
  }
  const int threads = 8;
  const int per_thread = apitest::scaled(2000, 250);
  std::atomic<int> bad_reads{0};
  std::atomic<int> workers_left{threads};
  std::atomic<long> attempts{0};
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t) {
    pool.emplace_back([&, t] {
      std::mt19937 rng(1000 + t);
      for (int i = 0; i < per_thread; ++i) {
        db.run([&](Transaction& tr) {
          attempts.fetch_add(1, std::memory_order_relaxed);
          int r = static_cast<int>(rng() % kCycleKeys);
          int r2 = cycle_target(tr.get(cycle_key(r)));
          int r3 = r2 < 0 ? -1 : cycle_target(tr.get(cycle_key(r2)));
          int r4 = r3 < 0 ? -1 : cycle_target(tr.get(cycle_key(r3)));
          if (r4 < 0) {
            bad_reads.fetch_add(1);
            return;
          }
          // A no-op for the data, but it breaks the ring if mutations applied out of order.
          tr.clear_range(cycle_key(r), cycle_key(r) + " end");
          tr.set(cycle_key(r), std::to_string(r3));
          tr.set(cycle_key(r3), std::to_string(r2));
          tr.set(cycle_key(r2), std::to_string(r4));
        });
      }
      workers_left.fetch_sub(1);
    });
  }
  // A concurrent reader: every snapshot of the whole ring must itself be a ring.
  int snapshots = 0;
  std::string snapshot_error;
  while (workers_left.load() > 0 && snapshot_error.empty()) {
    db.run([&](Transaction& tr) { snapshot_error = check_ring(tr.get_range("cycle/", "cycle0")); });
    ++snapshots;
  }
  for (std::thread& th : pool) th.join();

  EXPECT_EQ(snapshot_error, "") << "after " << snapshots << " snapshots";
  EXPECT_EQ(bad_reads.load(), 0) << "a transaction read a missing or malformed pointer";
  Transaction check = db.create_transaction();
  EXPECT_EQ(check_ring(check.get_range("cycle/", "cycle0")), "");
  EXPECT_GE(attempts.load(), static_cast<long>(threads) * per_thread);
  RecordProperty("attempts", std::to_string(attempts.load()));
}

// ---- ConflictRange ----------------------------------------------------------------------

constexpr int kSlots = 100;

std::string slot_key(int i) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "cr/%02d", i);
  return buf;
}

class ConflictRangeWorkload {
 public:
  explicit ConflictRangeWorkload(std::uint32_t seed) : rng_(seed), db_(testing::open_database()) {}

  int below(int n) { return static_cast<int>(rng_() % static_cast<unsigned>(n)); }

  // A range endpoint: a slot key, a key between two slots, or one of the outer bounds.
  std::string endpoint() {
    int r = below(20);
    if (r == 0) return "cr/";
    if (r == 1) return "cr0";
    std::string k = slot_key(below(kSlots));
    if (below(3) == 0) k += "m";
    return k;
  }

  void randomize_data() {
    Transaction tr = db_.create_transaction();
    tr.clear_range("cr/", "cr0");
    data_.clear();
    for (int i = 0; i < kSlots; ++i) {
      if (below(2) == 0) continue;
      std::string v = "v" + std::to_string(rng_());
      tr.set(slot_key(i), v);
      data_[slot_key(i)] = v;
    }
    tr.commit();
  }

  struct Read {
    std::string begin, end;
    RangeOptions options;
  };

  // tr3's read-your-writes prelude (possibly nothing), replayable in another transaction.
  struct Prelude {
    enum class Kind { none, clear_range, set, clear } kind = Kind::none;
    std::string a, b;
    void apply(Transaction& tr) const {
      switch (kind) {
        case Kind::none:
          break;
        case Kind::clear_range:
          tr.clear_range(a, b);
          break;
        case Kind::set:
          tr.set(a, b);
          break;
        case Kind::clear:
          tr.clear(a);
          break;
      }
    }
  };

  Prelude random_prelude() {
    Prelude p;
    switch (below(6)) {
      case 0: {
        p.kind = Prelude::Kind::clear_range;
        p.a = endpoint();
        p.b = endpoint();
        if (p.a > p.b) std::swap(p.a, p.b);
        break;
      }
      case 1:
        p.kind = Prelude::Kind::set;
        p.a = slot_key(below(kSlots));
        p.b = "tr3";
        break;
      case 2:
        p.kind = Prelude::Kind::clear;
        p.a = slot_key(below(kSlots));
        break;
      default:
        break;
    }
    return p;
  }

  // One round; returns "" or a description of a violation.
  std::string round(int iteration) {
    Read read{endpoint(),
              endpoint(),
              {.limit = below(3) == 0 ? 0 : 1 + below(8), .reverse = below(2) == 0}};
    if (below(4) != 0 && read.begin > read.end) std::swap(read.begin, read.end);
    Prelude prelude = random_prelude();

    Transaction tr1 = db_.create_transaction();
    std::vector<KeyValue> original = tr1.get_range(read.begin, read.end, read.options);

    Transaction tr2 = db_.create_transaction();
    Transaction tr3 = db_.create_transaction();
    (void)tr2.snapshot().get("zz/probe");
    (void)tr3.snapshot().get("zz/probe");
    if (tr2.read_version() != tr3.read_version()) return "tr2 and tr3 read versions differ";

    // tr2 flips the presence of 1-3 distinct slots: inserts into empty ones, clears
    // existing ones. Every write therefore changes the data.
    Store after_tr2 = data_;
    int flips = 1 + below(3);
    std::vector<int> chosen;
    while (static_cast<int>(chosen.size()) < flips) {
      int s = below(kSlots);
      if (std::find(chosen.begin(), chosen.end(), s) == chosen.end()) chosen.push_back(s);
    }
    for (int s : chosen) {
      std::string k = slot_key(s);
      if (after_tr2.count(k) != 0) {
        tr2.clear(k);
        after_tr2.erase(k);
      } else {
        std::string v = "w" + std::to_string(rng_());
        tr2.set(k, v);
        after_tr2[k] = v;
      }
    }
    tr2.commit();
    data_ = after_tr2;

    prelude.apply(tr3);
    std::vector<KeyValue> seen = tr3.get_range(read.begin, read.end, read.options);
    if (prelude.kind == Prelude::Kind::none && seen != original) {
      return "tr3 at tr1's version read a different result";
    }
    tr3.set("zz/dummy", std::to_string(iteration));
    bool conflicted = apitest::commit_conflicts(tr3);
    if (!conflicted && prelude.kind != Prelude::Kind::none) {
      data_ = apitest::dump(db_);  // tr3's own writes are now part of the data
      data_.erase("zz/dummy");
    }
    (conflicted ? conflicts_ : commits_)++;

    // The same read after both commits, through tr3's own writes.
    Transaction rerun = db_.create_transaction();
    prelude.apply(rerun);
    std::vector<KeyValue> now = rerun.get_range(read.begin, read.end, read.options);
    bool changed = now != seen;
    if (changed == conflicted) return {};
    std::ostringstream out;
    out << (conflicted ? "conflict range too wide: tr3 failed but its read is unchanged"
                       : "conflict range too narrow: tr3 committed but its read changed")
        << " (iteration " << iteration << ", range [" << read.begin << ", " << read.end
        << ") limit " << read.options.limit << (read.options.reverse ? " reverse" : "")
        << ", prelude " << static_cast<int>(prelude.kind) << " " << prelude.a << " " << prelude.b
        << ", tr2 flipped";
    for (int s : chosen) out << " " << slot_key(s);
    out << ")";
    return out.str();
  }

  int commits() const { return commits_; }
  int conflicts() const { return conflicts_; }

 private:
  std::mt19937 rng_;
  Database db_;
  Store data_;
  int commits_ = 0;
  int conflicts_ = 0;
};

TEST(Workload, ConflictRangeConflictsExactlyWhenTheReadWouldChange) {
  ConflictRangeWorkload w(4242);
  const int iterations = apitest::scaled(4000, 800);
  for (int i = 0; i < iterations; ++i) {
    if (i % 100 == 0) w.randomize_data();
    std::string error = w.round(i);
    ASSERT_EQ(error, "");
  }
  // Both outcomes must be common, or the test proves little.
  EXPECT_GT(w.commits(), iterations / 10);
  EXPECT_GT(w.conflicts(), iterations / 10);
}

// ---- Bank -------------------------------------------------------------------------------

constexpr int kAccounts = 10;
constexpr int kInitialBalance = 100;

std::string account_key(int i) { return "bank/" + std::to_string(i); }

TEST(Workload, BankTransfersPreserveTheTotal) {
  Database db = testing::open_database();
  {
    Store accounts;
    for (int i = 0; i < kAccounts; ++i) accounts[account_key(i)] = std::to_string(kInitialBalance);
    apitest::put_all(db, accounts);
  }
  const int threads = 4;
  const int per_thread = apitest::scaled(1000, 200);
  std::atomic<int> workers_left{threads};
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t) {
    pool.emplace_back([&, t] {
      std::mt19937 rng(77 + t);
      for (int i = 0; i < per_thread; ++i) {
        int from = static_cast<int>(rng() % kAccounts);
        int to = static_cast<int>(rng() % (kAccounts - 1));
        if (to >= from) ++to;
        int amount = 1 + static_cast<int>(rng() % 30);
        db.run([&](Transaction& tr) {
          int a = std::stoi(tr.get(account_key(from)).value_or("0"));
          int b = std::stoi(tr.get(account_key(to)).value_or("0"));
          if (a < amount) return;  // insufficient funds: no transfer
          tr.set(account_key(from), std::to_string(a - amount));
          tr.set(account_key(to), std::to_string(b + amount));
        });
      }
      workers_left.fetch_sub(1);
    });
  }
  auto audit = [&](Transaction& tr) {
    std::vector<KeyValue> rows = tr.get_range("bank/", "bank0");
    long total = 0;
    bool negative = false;
    for (const KeyValue& kv : rows) {
      long v = std::stol(kv.value);
      total += v;
      negative |= v < 0;
    }
    return std::make_pair(total, negative || rows.size() != kAccounts);
  };
  int audits = 0;
  bool audit_ok = true;
  while (workers_left.load() > 0 && audit_ok) {
    auto [total, bad] = db.run(audit);
    audit_ok = total == kAccounts * kInitialBalance && !bad;
    ++audits;
  }
  for (std::thread& th : pool) th.join();
  EXPECT_TRUE(audit_ok) << "a concurrent audit saw a wrong total after " << audits << " audits";
  auto [total, bad] = db.run(audit);
  EXPECT_EQ(total, kAccounts * kInitialBalance);
  EXPECT_FALSE(bad);
}

// Read-modify-write increments from several threads on a few counters: none is lost
// (LostUpdate under real concurrency, including conflicts inside one commit batch).
TEST(Workload, ConcurrentIncrementsLoseNoUpdate) {
  Database db = testing::open_database();
  const int threads = 4;
  const int per_thread = apitest::scaled(500, 100);
  const int counters = 4;
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t) {
    pool.emplace_back([&, t] {
      for (int i = 0; i < per_thread; ++i) {
        std::string key = "counter/" + std::to_string((t + i) % counters);
        db.run([&](Transaction& tr) {
          int v = std::stoi(tr.get(key).value_or("0"));
          tr.set(key, std::to_string(v + 1));
        });
      }
    });
  }
  for (std::thread& th : pool) th.join();
  int total = 0;
  for (const KeyValue& kv : db.create_transaction().get_range("counter/", "counter0")) {
    total += std::stoi(kv.value);
  }
  EXPECT_EQ(total, threads * per_thread);
}

// ---- Causality (FoundationDB's Sideband) -------------------------------------------------

// A transaction that starts after another committed (as told through an out-of-band
// channel, here an atomic) must see that commit.
TEST(Workload, NewTransactionSeesEveryCommitThatFinishedBeforeIt) {
  Database db = testing::open_database();
  const int messages = apitest::scaled(3000, 500);
  std::atomic<int> published{-1};
  std::thread writer([&] {
    for (int i = 0; i < messages; ++i) {
      apitest::put(db, "side/" + std::to_string(i), "x");
      published.store(i, std::memory_order_release);
    }
  });
  int missed = 0, checks = 0;
  for (int seen = -1; seen < messages - 1;) {
    int now = published.load(std::memory_order_acquire);
    if (now == seen) continue;
    seen = now;
    Transaction tr = db.create_transaction();
    if (!tr.get("side/" + std::to_string(seen))) ++missed;
    ++checks;
  }
  writer.join();
  EXPECT_EQ(missed, 0) << "of " << checks << " checks";
}

// ---- Queue churn under long-lived snapshots ----------------------------------------------

// Writers push at the tail and pop at the head of a queue (keys inserted and deleted, so
// the store unlinks nodes and reclaims memory), recording [head, tail) in a meta key.
// Readers check that every snapshot's items are exactly [head, tail) of the same
// snapshot, including snapshots held across many later commits.
std::string queue_key(long i) {
  char buf[24];
  std::snprintf(buf, sizeof buf, "q/%010ld", i);
  return buf;
}

std::pair<long, long> parse_meta(const std::optional<std::string>& v) {
  if (!v) return {0, 0};
  auto comma = v->find(',');
  return {std::stol(v->substr(0, comma)), std::stol(v->substr(comma + 1))};
}

std::string check_queue_snapshot(Transaction& tr) {
  auto [head, tail] = parse_meta(tr.snapshot().get("meta"));
  std::vector<KeyValue> items = tr.snapshot().get_range("q/", "q0");
  if (static_cast<long>(items.size()) != tail - head) {
    return "snapshot has " + std::to_string(items.size()) + " items, meta says " +
           std::to_string(tail - head);
  }
  for (long i = head; i < tail; ++i) {
    if (items[i - head].key != queue_key(i) || items[i - head].value != std::to_string(i)) {
      return "unexpected item " + items[i - head].key;
    }
  }
  std::vector<KeyValue> reversed = tr.snapshot().get_range("q/", "q0", {.reverse = true});
  if (!std::equal(items.rbegin(), items.rend(), reversed.begin(), reversed.end())) {
    return "reverse scan differs from forward scan";
  }
  return {};
}

TEST(Workload, QueueChurnKeepsEverySnapshotConsistent) {
  Database db = testing::open_database();
  const int writers = 2;
  const int per_writer = apitest::scaled(4000, 600);
  std::atomic<int> writers_left{writers};
  std::atomic<long> commits{0};
  std::vector<std::thread> pool;
  for (int w = 0; w < writers; ++w) {
    pool.emplace_back([&, w] {
      std::mt19937 rng(500 + w);
      for (int i = 0; i < per_writer; ++i) {
        bool push = rng() % 100 < 55;
        db.run([&](Transaction& tr) {
          auto [head, tail] = parse_meta(tr.get("meta"));
          if (push || head == tail) {
            tr.set(queue_key(tail), std::to_string(tail));
            ++tail;
          } else {
            tr.clear(queue_key(head));
            ++head;
          }
          tr.set("meta", std::to_string(head) + "," + std::to_string(tail));
        });
        commits.fetch_add(1, std::memory_order_relaxed);
      }
      writers_left.fetch_sub(1);
    });
  }
  std::string error;
  std::atomic<int> snapshots{0};
  auto reader = [&](std::string& out) {
    while (writers_left.load() > 0 && out.empty()) {
      // One snapshot checked twice: at once, and again after ~200 later commits.
      Transaction held = db.create_transaction();
      out = check_queue_snapshot(held);
      long until = commits.load() + 200;
      while (out.empty() && writers_left.load() > 0 && commits.load() < until) {
        Transaction quick = db.create_transaction();
        out = check_queue_snapshot(quick);
        ++snapshots;
      }
      if (out.empty()) out = check_queue_snapshot(held);
    }
  };
  std::string second_error;
  std::thread second_reader(reader, std::ref(second_error));
  reader(error);
  second_reader.join();
  for (std::thread& th : pool) th.join();
  EXPECT_EQ(error, "");
  EXPECT_EQ(second_error, "");
  Transaction last = db.create_transaction();
  EXPECT_EQ(check_queue_snapshot(last), "");
  RecordProperty("snapshots", snapshots.load());
}

// ---- Versionstamps from concurrent commits ----------------------------------------------

TEST(Workload, ConcurrentCommitsGetDistinctVersionstampsMatchingTheirVersions) {
  Database db = testing::open_database();
  const int threads = 4;
  const int per_thread = apitest::scaled(1000, 200);
  std::vector<std::vector<std::pair<std::string, Version>>> stamps(threads);
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t) {
    pool.emplace_back([&, t] {
      for (int i = 0; i < per_thread; ++i) {
        Transaction tr = db.create_transaction();
        tr.set("vs/" + std::to_string(t), std::to_string(i));  // blind: never conflicts
        tr.commit();
        stamps[t].emplace_back(tr.versionstamp(), tr.committed_version());
      }
    });
  }
  for (std::thread& th : pool) th.join();
  std::set<std::string> all;
  for (const auto& per : stamps) {
    Version last = 0;
    for (const auto& [stamp, version] : per) {
      ASSERT_EQ(stamp.size(), 10u);
      std::uint64_t v = 0;
      for (int b = 0; b < 8; ++b) v = (v << 8) | static_cast<unsigned char>(stamp[b]);
      EXPECT_EQ(static_cast<Version>(v), version);
      EXPECT_GT(version, last) << "one thread's commits are ordered";
      last = version;
      all.insert(stamp);
    }
  }
  EXPECT_EQ(all.size(), static_cast<std::size_t>(threads * per_thread)) << "duplicate stamps";
}

}  // namespace
}  // namespace strata
