// PriorityQueue: pushers push items with random priorities 0..99 (waiting while the backlog
// is full; bench/backlog.hpp), poppers alternate pop_min and pop_max until the pushers are done
// and the queue is empty. Checks: every item delivered exactly once; in simple mode
// (versions known), no pop_min returned an item while a smaller one was present throughout
// its transaction (pushed at or before its read version, popped after its commit: at a
// later version, or later in the same commit batch), and likewise for pop_max.
#include <algorithm>
#include <limits>
#include <map>
#include <random>
#include <thread>

#include "workloads.hpp"

namespace stress {
namespace {

constexpr int kPriorities = 100;

struct Pop {
  strata::Version read_version;
  CommitOrder commit;  // version -1: unknown (high-contention mode)
  bool min;
  int priority, producer;
  std::uint64_t seq;
};

struct Push {
  strata::Version version = -1;
  int priority = 0;
};

// The checker's memory per item, as `strata-stress --help` states it: while the run goes
// on, and what its verification adds (popped_at, and in simple mode the buckets).
static_assert(sizeof(Pop) + sizeof(Push) == 64);
static_assert(sizeof(CommitOrder) == 16);
static_assert(sizeof(std::pair<strata::Version, CommitOrder>) == 24);

}  // namespace

template <class Api>
RunResult run_priority_queue(RunContext<Api>& ctx) {
  const StressOptions& o = ctx.options;
  typename Api::PriorityQueue pq(strata::Subspace(strata::Tuple{"stress", "pq", ctx.run_id}),
                                 ctx.high_contention);
  const int pushers = o.clients / 2, poppers = o.clients - pushers;
  const auto run_start = Clock::now();
  const auto deadline = run_start + std::chrono::duration_cast<Clock::duration>(
                                        std::chrono::duration<double>(o.seconds));
  const std::uint64_t quota = o.ops ? (o.ops + pushers - 1) / pushers : ~0ull;
  std::atomic<int> pushers_running{pushers};
  std::vector<std::vector<Push>> pushes(pushers);
  std::vector<std::vector<Pop>> pops(poppers);
  std::vector<Latencies> latency(o.clients);
  std::vector<std::thread> threads;
  threads.reserve(static_cast<std::size_t>(o.clients));  // pushers + poppers

  for (int p = 0; p < pushers; ++p) {
    threads.emplace_back(guarded([&, p] {
      std::mt19937_64 rng(o.seed * 1000 + static_cast<std::uint64_t>(p));
      auto tr = ctx.db.create_transaction();
      for (std::uint64_t seq = 0; seq < quota && (o.ops || Clock::now() < deadline); ++seq) {
        if (!ctx.backlog.enter([&] { return !o.ops && Clock::now() >= deadline; })) break;
        int priority = static_cast<int>(rng() % kPriorities);
        std::string item = make_item(p, seq, o.value_size);
        item[18] = static_cast<char>('0' + priority / 10);
        item[19] = static_cast<char>('0' + priority % 10);
        auto start = Clock::now();
        tr.reset();
        commit_with_retry<Api>(tr, [&](auto& t) {
          pq.push(t, item, priority);
          return 0;
        });
        latency[p].add(Clock::now() - start);
        pushes[p].push_back({tr.committed_version(), priority});
        ctx.live.in_flight.fetch_add(1, std::memory_order_relaxed);
      }
      pushers_running.fetch_sub(1);
    }));
  }
  for (int c = 0; c < poppers; ++c) {
    threads.emplace_back(guarded([&, c] {
      auto tr = ctx.db.create_transaction();
      bool min = c % 2 == 0;
      for (;;) {
        bool done = pushers_running.load() == 0;
        auto start = Clock::now();
        std::optional<std::string> item;
        Pop pop{-1, {}, min, 0, 0, 0};
        if (ctx.high_contention) {
          item = min ? pq.pop_min(ctx.db) : pq.pop_max(ctx.db);
        } else {
          tr.reset();
          item = commit_with_retry<Api>(tr, [&](auto& t) {
            request_versionstamp(t);
            auto got = min ? pq.pop_min(t) : pq.pop_max(t);
            pop.read_version = t.read_version();  // fixed by the pop's read
            return got;
          });
          if (item) pop.commit = commit_order(tr);
        }
        if (!item) {
          if (done) break;
          std::this_thread::yield();
          continue;
        }
        latency[pushers + c].add(Clock::now() - start);
        if (!parse_item(*item, pop.producer, pop.seq)) pop.producer = -1;
        pop.priority = (item->size() > 19) ? ((*item)[18] - '0') * 10 + ((*item)[19] - '0') : -1;
        pops[c].push_back(pop);
        ctx.live.ops.fetch_add(1, std::memory_order_relaxed);
        ctx.live.in_flight.fetch_sub(1, std::memory_order_relaxed);
        ctx.backlog.leave();
        min = !min;
      }
    }));
  }
  for (auto& t : threads) t.join();
  // The clients' time: the checks below are not the workload's.
  const double seconds = std::chrono::duration<double>(Clock::now() - run_start).count();

  RunResult r;
  r.seconds = seconds;
  auto left = ctx.db.run([&](auto& tr) { return tr.get_range(pq.subspace().range()).size(); });
  if (left != 0) {
    r.violations.push_back(std::to_string(left) + " items were left in the queue at the end");
  }
  // Exactly once; and each item's pop commit order, for the order check.
  std::vector<std::vector<CommitOrder>> popped_at(pushers);
  for (int p = 0; p < pushers; ++p) popped_at[p].assign(pushes[p].size(), CommitOrder{});
  // Every pop, popper by popper: the records are the checker's largest memory, so they are
  // read where they are rather than gathered into one copy.
  auto each_pop = [&](auto&& f) {
    for (const auto& v : pops) {
      for (const Pop& pop : v) f(pop);
    }
  };
  std::size_t popped = 0;
  each_pop([&](const Pop& pop) {
    ++popped;
    if (pop.producer < 0 || pop.producer >= pushers || pop.seq >= pushes[pop.producer].size()) {
      r.violations.emplace_back("a popper received an item nobody pushed");
      return;
    }
    CommitOrder& at = popped_at[pop.producer][pop.seq];
    if (at.version != -1) r.violations.emplace_back("an item was popped twice");
    at = pop.commit.version >= 0 ? pop.commit
                                 : CommitOrder{std::numeric_limits<strata::Version>::max() - 1, 0};
    if (pop.priority != pushes[pop.producer][pop.seq].priority) {
      r.violations.emplace_back("an item came back with another priority");
    }
  });
  for (int p = 0; p < pushers; ++p) {
    for (std::size_t s = 0; s < pushes[p].size(); ++s) {
      if (popped_at[p][s].version == -1) r.violations.emplace_back("an item was lost");
    }
  }
  if (!ctx.high_contention) {
    // Per priority: items sorted by push version, with the running max of pop commit orders.
    std::vector<std::vector<std::pair<strata::Version, CommitOrder>>> bucket(kPriorities);
    for (int p = 0; p < pushers; ++p) {
      for (std::size_t s = 0; s < pushes[p].size(); ++s) {
        bucket[pushes[p][s].priority].push_back({pushes[p][s].version, popped_at[p][s]});
      }
    }
    for (auto& b : bucket) {
      std::sort(b.begin(), b.end());
      for (std::size_t i = 1; i < b.size(); ++i)
        b[i].second = std::max(b[i].second, b[i - 1].second);
    }
    // Was some item of priority q present from rv through the commit `at`? (Commits of one
    // batch share a version: one popped later in the batch was still there at `at`.)
    auto present = [&](int q, strata::Version rv, CommitOrder at) {
      auto& b = bucket[q];
      auto it = std::upper_bound(
          b.begin(), b.end(),
          std::pair(rv, CommitOrder{std::numeric_limits<strata::Version>::max(), 0xffff}));
      return it != b.begin() && std::prev(it)->second > at;
    };
    each_pop([&](const Pop& pop) {
      if (pop.commit.version < 0) return;
      int lo = pop.min ? 0 : pop.priority + 1, hi = pop.min ? pop.priority : kPriorities;
      for (int q = lo; q < hi; ++q) {
        if (present(q, pop.read_version, pop.commit)) {
          r.violations.push_back(std::string(pop.min ? "pop_min" : "pop_max") +
                                 " returned priority " + std::to_string(pop.priority) +
                                 " while priority " + std::to_string(q) +
                                 " was present throughout");
          break;
        }
      }
    });
  }
  r.ops = popped;
  summarise(latency, r);
  return r;
}

template RunResult run_priority_queue(RunContext<CppApi>&);

}  // namespace stress
