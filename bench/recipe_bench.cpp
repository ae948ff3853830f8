// One client's push+pop pairs on the Queue and PriorityQueue recipes, in memory, with
// nothing else in the loop: each iteration is one push transaction and one pop transaction
// through Database::run, with a constant value and, for the priority queue, priorities
// from a fixed cycle. This is the recipes' cost per pair as a program sees it.
//
//   build/release/bench/strata_recipe_bench                     timed, Google Benchmark
//   build/release/bench/strata_recipe_bench --pairs=20000       exactly 20,000 pairs each
//
// With --pairs the count is fixed, so instruction counts are comparable between builds.
// Under callgrind with --toggle-collect='*pair_loop*' and --benchmark_filter=QueuePair$
// only the loop is counted, and the total divided by the pairs is the cost of one pair.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <benchmark/benchmark.h>

#include "strata/strata.hpp"

#include "cli.hpp"

namespace {

constexpr std::size_t kValueSize = 100;

// The loops are functions of their own (never inlined) so that callgrind's
// --toggle-collect can count them alone.
[[gnu::noinline]] void queue_pair_loop(benchmark::State& state, strata::Database& db,
                                       const strata::Queue& queue, const std::string& value) {
  std::string out;
  for (auto _ : state) {
    queue.enqueue(db, value);
    if (!queue.dequeue(db, out)) state.SkipWithError("the queue was empty after a push");
    benchmark::DoNotOptimize(out.data());
  }
}

[[gnu::noinline]] void priority_pair_loop(benchmark::State& state, strata::Database& db,
                                          const strata::PriorityQueue& pq,
                                          const std::string& value) {
  std::int64_t priority = 0;
  for (auto _ : state) {
    pq.push(db, value, strata::Element(priority));
    priority = (priority + 37) % 100;
    std::optional<std::string> out = pq.pop_min(db);
    if (!out) state.SkipWithError("the priority queue was empty after a push");
    benchmark::DoNotOptimize(out);
  }
}

// The same pairs, popped into the caller's string as the queue pair and strata-peers do
// (PriorityQueue::pop_min(Database&, std::string&)): no std::optional made per pop.
[[gnu::noinline]] void priority_into_pair_loop(benchmark::State& state, strata::Database& db,
                                               const strata::PriorityQueue& pq,
                                               const std::string& value) {
  std::int64_t priority = 0;
  std::string out;
  for (auto _ : state) {
    pq.push(db, value, strata::Element(priority));
    priority = (priority + 37) % 100;
    if (!pq.pop_min(db, out)) state.SkipWithError("the priority queue was empty after a push");
    benchmark::DoNotOptimize(out.data());
  }
}

void bm_queue_pair(benchmark::State& state) {
  strata::Database db = strata::Database::open(strata::Options{});
  const strata::Queue queue(strata::Subspace(strata::Tuple{"bench", "q"}), false);
  const std::string value(kValueSize, 'v');
  queue_pair_loop(state, db, queue, value);
  state.SetItemsProcessed(state.iterations());
}

void bm_priority_queue_pair(benchmark::State& state) {
  strata::Database db = strata::Database::open(strata::Options{});
  const strata::PriorityQueue pq(strata::Subspace(strata::Tuple{"bench", "pq"}), false);
  const std::string value(kValueSize, 'v');
  priority_pair_loop(state, db, pq, value);
  state.SetItemsProcessed(state.iterations());
}

void bm_priority_queue_pair_into(benchmark::State& state) {
  strata::Database db = strata::Database::open(strata::Options{});
  const strata::PriorityQueue pq(strata::Subspace(strata::Tuple{"bench", "pq"}), false);
  const std::string value(kValueSize, 'v');
  priority_into_pair_loop(state, db, pq, value);
  state.SetItemsProcessed(state.iterations());
}

}  // namespace

int main(int argc, char** argv) {
  return bench::run_main("strata_recipe_bench", [&] {
    CLI::App app(
        "One client's push+pop pairs on the recipes, in memory. Other options go to "
        "Google Benchmark (--benchmark_filter=..., --benchmark_min_time=...).",
        "strata_recipe_bench");
    bench::set_up(app);
    app.allow_extras();
    std::int64_t pairs = 0;
    app.add_option("--pairs", pairs,
                   "run each benchmark for exactly this many pairs, once (for instruction "
                   "counts); without it Google Benchmark times the runs")
        ->transform(bench::number_in<std::int64_t>(1, std::int64_t{1} << 40));
    bench::parse_or_exit(app, argc, argv);

    std::vector<std::string> rest = app.remaining();
    std::vector<char*> args{argv[0]};
    for (std::string& arg : rest) args.push_back(arg.data());
    int count = static_cast<int>(args.size());

    auto* queue = benchmark::RegisterBenchmark("BM_QueuePair", bm_queue_pair);
    auto* priority = benchmark::RegisterBenchmark("BM_PriorityQueuePair", bm_priority_queue_pair);
    auto* priority_into =
        benchmark::RegisterBenchmark("BM_PriorityQueuePairInto", bm_priority_queue_pair_into);
    if (pairs > 0) {
      for (auto* b : {queue, priority, priority_into}) b->Iterations(pairs)->Repetitions(1);
    }
    benchmark::Initialize(&count, args.data());
    if (benchmark::ReportUnrecognizedArguments(count, args.data())) return 2;
    benchmark::RunSpecifiedBenchmarks();
    benchmark::Shutdown();
    return 0;
  });
}
