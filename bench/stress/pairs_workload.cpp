// Pairs: every client alternates one enqueue (push) and one dequeue (pop), each its own
// transaction, as the "push+pop pairs" targets measure (docs/benchmarks.md, "Recipes pairs").
// Checks: every item enqueued was dequeued exactly once and the queue is empty at the end.
#include <random>
#include <thread>

#include "workloads.hpp"

namespace stress {

template <class Api>
RunResult run_pairs(RunContext<Api>& ctx, bool priority) {
  const StressOptions& o = ctx.options;
  strata::Subspace space(strata::Tuple{"stress", priority ? "pq-pairs" : "q-pairs", ctx.run_id});
  typename Api::Queue queue(space, ctx.high_contention);
  typename Api::PriorityQueue pq(space, ctx.high_contention);
  const auto run_start = Clock::now();
  const auto deadline = run_start + std::chrono::duration_cast<Clock::duration>(
                                        std::chrono::duration<double>(o.seconds));
  const std::uint64_t quota = o.ops ? (o.ops + o.clients - 1) / o.clients : ~0ull;
  std::vector<std::uint64_t> produced(o.clients, 0);
  std::vector<std::vector<std::pair<int, std::uint64_t>>> got(o.clients);
  // With `seen` below, the checker's memory per item, as `strata-stress --help` states it.
  static_assert(sizeof(std::pair<int, std::uint64_t>) + sizeof(int) == 20);
  std::vector<Latencies> latency(o.clients);
  std::vector<std::thread> threads;
  threads.reserve(static_cast<std::size_t>(o.clients));
  for (int c = 0; c < o.clients; ++c) {
    threads.emplace_back(guarded([&, c] {
      std::mt19937 rng(static_cast<unsigned>(o.seed * 31 + c));
      std::uint64_t seq = 0;
      for (; seq < quota && (o.ops || Clock::now() < deadline); ++seq) {
        std::string item = make_item(c, seq, o.value_size);
        auto start = Clock::now();
        if (priority) {
          pq.push(ctx.db, item, static_cast<std::int64_t>(rng() % 100));
        } else {
          queue.enqueue(ctx.db, item);
        }
        std::optional<std::string> out = priority ? pq.pop_min(ctx.db) : queue.dequeue(ctx.db);
        latency[c].add(Clock::now() - start);
        if (out) {
          int p = -1;
          std::uint64_t s = 0;
          parse_item(*out, p, s);
          got[c].emplace_back(p, s);
        }
        ctx.live.ops.fetch_add(1, std::memory_order_relaxed);
      }
      produced[c] = seq;
    }));
  }
  for (auto& t : threads) t.join();
  // The clients' time: the drain and the checks below are not the workload's.
  const double seconds = std::chrono::duration<double>(Clock::now() - run_start).count();
  // Drain what is left (a pop may find the queue empty while another client's item is
  // in flight), then check exactly-once.
  for (;;) {
    auto out = priority ? pq.pop_min(ctx.db) : queue.dequeue(ctx.db);
    if (!out) break;
    int p = -1;
    std::uint64_t s = 0;
    parse_item(*out, p, s);
    got[0].emplace_back(p, s);
  }
  RunResult r;
  r.seconds = seconds;
  std::vector<std::vector<int>> seen(o.clients);
  for (int c = 0; c < o.clients; ++c) seen[c].assign(produced[c], 0);
  std::uint64_t delivered = 0;
  for (auto& v : got) {
    for (auto [p, s] : v) {
      ++delivered;
      if (p < 0 || p >= o.clients || s >= produced[p]) {
        r.violations.emplace_back("a client received an item nobody enqueued");
      } else if (++seen[p][s] == 2) {
        r.violations.emplace_back("an item was delivered twice");
      }
    }
  }
  for (int c = 0; c < o.clients; ++c) {
    for (std::uint64_t s = 0; s < produced[c]; ++s) {
      if (seen[c][s] == 0) r.violations.emplace_back("an item was lost");
    }
  }
  summarise(latency, r);
  return r;
}

template RunResult run_pairs(RunContext<CppApi>&, bool);

}  // namespace stress
