// Key-value transactions: FoundationDB's Cycle workload. A ring of N keys, each holding the
// index of the next; every transaction reads three hops with serializable gets and swaps
// the two middle nodes. Any lost update or non-serializable interleaving breaks the ring.
#include <random>
#include <thread>

#include "workloads.hpp"

namespace stress {

template <class Api>
RunResult run_kv_cycle(RunContext<Api>& ctx) {
  const StressOptions& o = ctx.options;
  constexpr int kNodes = 1000;
  strata::Subspace ring(strata::Tuple{"stress", "cycle", ctx.run_id});
  auto key = [&](int i) { return ring.pack(strata::Tuple{i}); };
  std::string padding(o.value_size > 8 ? o.value_size - 8 : 0, '.');
  auto value = [&](int next) {
    char buf[9];
    std::snprintf(buf, sizeof buf, "%08d", next);
    return std::string(buf, 8) + padding;
  };
  auto next_of = [](const std::optional<std::string>& v) {
    return v && v->size() >= 8 ? std::atoi(v->substr(0, 8).c_str()) : -1;
  };
  for (int i = 0; i < kNodes; i += 100) {
    ctx.db.run([&](auto& tr) {
      for (int j = i; j < i + 100; ++j) tr.set(key(j), value((j + 1) % kNodes));
    });
  }
  const auto run_start = Clock::now();
  const auto deadline = run_start + std::chrono::duration_cast<Clock::duration>(
                                        std::chrono::duration<double>(o.seconds));
  const std::uint64_t quota = o.ops ? (o.ops + o.clients - 1) / o.clients : ~0ull;
  std::vector<Latencies> latency(o.clients);
  std::atomic<bool> broken{false};
  std::vector<std::thread> threads;
  threads.reserve(static_cast<std::size_t>(o.clients));
  for (int c = 0; c < o.clients; ++c) {
    threads.emplace_back(guarded([&, c] {
      std::mt19937 rng(static_cast<unsigned>(o.seed * 7919 + c));
      auto tr = ctx.db.create_transaction();
      for (std::uint64_t n = 0; n < quota && (o.ops || Clock::now() < deadline); ++n) {
        int r = static_cast<int>(rng() % kNodes);
        auto start = Clock::now();
        tr.reset();
        commit_with_retry<Api>(tr, [&](auto& t) {
          int r2 = next_of(t.get(key(r)));
          int r3 = next_of(t.get(key(r2)));
          int r4 = next_of(t.get(key(r3)));
          if (r2 < 0 || r3 < 0 || r4 < 0) {
            broken = true;
            return 0;
          }
          t.clear_range(key(r), key(r) + " end");  // no effect; tests mutation order
          t.set(key(r), value(r3));
          t.set(key(r3), value(r2));
          t.set(key(r2), value(r4));
          return 0;
        });
        latency[c].add(Clock::now() - start);
        ctx.live.ops.fetch_add(1, std::memory_order_relaxed);
      }
    }));
  }
  for (auto& t : threads) t.join();
  // The clients' time: the checks below are not the workload's.
  const double seconds = std::chrono::duration<double>(Clock::now() - run_start).count();

  RunResult r;
  r.seconds = seconds;
  if (broken) r.violations.emplace_back("Cycle: a transaction read a missing or bad pointer");
  auto rows = ctx.db.run([&](auto& tr) { return tr.get_range(ring.range()); });
  if (rows.size() != kNodes) {
    r.violations.push_back("Cycle: " + std::to_string(rows.size()) + " keys instead of " +
                           std::to_string(kNodes));
  } else {
    std::vector<int> next(kNodes);
    for (const strata::KeyValue& kv : rows) {
      int i = static_cast<int>(ring.unpack(kv.key)[0].get<std::int64_t>());
      next[i] = next_of(kv.value);
    }
    int at = 0, steps = 0;
    do {
      at = next[at];
      ++steps;
    } while (at >= 0 && at < kNodes && at != 0 && steps <= kNodes);
    if (at != 0 || steps != kNodes) {
      r.violations.push_back("Cycle: the ring is no longer one cycle of " + std::to_string(kNodes));
    }
  }
  summarise(latency, r);
  return r;
}

template RunResult run_kv_cycle(RunContext<CppApi>&);

}  // namespace stress
