// strata-churn: memory per live key (loaded, then after random overwrites), and a long
// insert-at-tail / delete-at-head churn with a constant live set, sampling throughput and
// RSS so that "flat" can be checked.
//
//   strata-churn [--keys N] [--ops N] [--live N] [--held-reader 0|1]
// Exits 1 when the overwrites grow the loaded store's RSS by more than 10 %, or when the
// last tenth of the churn is more than 10 % off the first tenth in rate or in RSS. A third phase
// (skipped with --held-reader 0) churns a small queue while one transaction holds an old read
// version open, as a long scan would: the rate must not collapse, because deleted keys no live
// reader can see still leave the list (exit 1 if the best of the last three windows runs at less
// than a quarter of the rate without the reader; without early collection the rate falls
// without bound as deleted keys pile up). Their memory waits for the reader to finish. The best
// of three windows is judged, not one alone, so that a single stall of the virtual machine cannot
// fail the check.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>
#include <string_view>
#include <vector>

#include "strata/strata.hpp"

#include "cli.hpp"

namespace {

long rss_kib() {
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line)) {
    if (line.rfind("VmRSS:", 0) == 0) return std::strtol(line.c_str() + 6, nullptr, 10);
  }
  return 0;
}

std::string key_of(std::uint64_t i) {
  char buf[17];
  std::snprintf(buf, sizeof buf, "k%015llu", static_cast<unsigned long long>(i));
  return std::string(buf, 16);
}

// One churn step, two transactions: insert key `tail` at the tail; read the first key (it
// must be `head`) and delete it.
void churn_pair(strata::Database& db, std::uint64_t& head, std::uint64_t& tail,
                const std::string& value) {
  db.run([&](strata::Transaction& tr) { tr.set(key_of(tail), value); });
  db.run([&](strata::Transaction& tr) {
    auto first = tr.get_range(key_of(0), "l", {.limit = 1});
    if (first.empty() || first[0].key != key_of(head)) std::abort();
    tr.clear(first[0].key);
  });
  ++tail;
  ++head;
}

struct Args {
  long keys = 1'000'000;
  long ops = 10'000'000;
  long live = 100'000;
  long held_reader = 1;
};

// Parses the flags; exits 0 after --help or --version, 2 on a bad flag.
Args parse_args(int argc, char** argv) {
  Args args;
  CLI::App app(
      "Memory per live key (loaded, then after random overwrites), and a long queue churn "
      "with a constant live set, sampling throughput and RSS. Exits 1 when the memory or "
      "the rate is not flat.",
      "strata-churn");
  bench::set_up(app);
  app.add_option("--keys", args.keys,
                 "keys loaded to measure memory per live key (default 1000000)")
      ->type_name("N")
      ->transform(bench::number_in(1L, 1'000'000'000L));
  app.add_option("--ops", args.ops,
                 "churn operations, half inserts and half deletes (default 10000000)")
      ->type_name("N")
      ->transform(bench::number_in(10L, 10'000'000'000L));
  app.add_option("--live", args.live, "the churn's constant live set (default 100000)")
      ->type_name("N")
      ->transform(bench::number_in(1L, 1'000'000'000L));
  app.add_option("--held-reader", args.held_reader,
                 "run the phase with an old reader held open (default 1)")
      ->type_name("0|1")
      ->transform(bench::number_in(0L, 1L));
  bench::parse_or_exit(app, argc, argv);
  return args;
}

}  // namespace

static int program_main(int argc, char** argv) {
  const Args args = parse_args(argc, argv);
  const long keys = args.keys;
  const long ops = args.ops;
  const long live = args.live;
  const bool held = args.held_reader != 0;
  const std::string value(100, 'v');
  bool overwrites_grew = false;

  // 1. Memory per live key, then under overwrites.
  {
    strata::Database db = strata::Database::open();
    long before = rss_kib();
    std::vector<double> commit_ms;  // each 1000-key commit: the index's growth shows here
    for (long i = 0; i < keys; i += 1000) {
      auto start = std::chrono::steady_clock::now();
      db.run([&](strata::Transaction& tr) {
        for (long j = i; j < std::min(keys, i + 1000); ++j) tr.set(key_of(j), value);
      });
      commit_ms.push_back(
          std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
              .count());
    }
    long after = rss_kib();
    double per_key = static_cast<double>(after - before) * 1024.0 / static_cast<double>(keys);
    std::printf(
        "memory: %ld keys of 16 B + 100 B values: %.1f B per key, %.1f B beyond key+value\n", keys,
        per_key, per_key - 116);
    std::sort(commit_ms.begin(), commit_ms.end());
    std::printf("loading them, 1000 keys per transaction: median %.2f ms, slowest %.1f ms\n",
                commit_ms[commit_ms.size() / 2], commit_ms.back());

    // Overwrites must not grow the store: 3 random overwrites per key, one per transaction,
    // reach 95 % of the keys.
    std::uint64_t rng = 0x9e3779b97f4a7c15ULL;
    auto start = std::chrono::steady_clock::now();
    for (long i = 0; i < 3 * keys; ++i) {
      rng ^= rng << 13;
      rng ^= rng >> 7;
      rng ^= rng << 17;
      db.run([&](strata::Transaction& tr) {
        tr.set(key_of(rng % static_cast<std::uint64_t>(keys)), value);
      });
    }
    const double secs =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    const long overwritten = rss_kib();
    overwrites_grew = overwritten > after + (after - before) / 10;
    std::printf(
        "after %ld random overwrites (%.0f k/s): %.1f B per key beyond key+value, RSS %+.1f %% "
        "of the load's: %s\n",
        3 * keys, 3.0 * static_cast<double>(keys) / secs / 1e3,
        static_cast<double>(overwritten - before) * 1024.0 / static_cast<double>(keys) - 116,
        100.0 * static_cast<double>(overwritten - after) / static_cast<double>(after - before),
        overwrites_grew ? "GREW" : "flat");
  }

  // 2. Churn: each op is one transaction that inserts at the tail and one that deletes at
  // the head.
  strata::Database db = strata::Database::open();
  for (long i = 0; i < live; i += 1000) {
    db.run([&](strata::Transaction& tr) {
      for (long j = i; j < std::min(live, i + 1000); ++j) tr.set(key_of(j), value);
    });
  }
  const long samples = 10;
  std::vector<double> rate(samples);
  std::vector<long> rss(samples);
  std::uint64_t head = 0, tail = static_cast<std::uint64_t>(live);
  std::printf("churn: %ld ops (insert at tail + delete at head), live set %ld\n", ops, live);
  std::printf("%8s %14s %10s\n", "sample", "ops/s", "RSS MiB");
  const long ops_per_sample = ops / samples;  // whole ops: the remainder is not run
  for (long s = 0; s < samples; ++s) {
    auto start = std::chrono::steady_clock::now();
    for (long i = 0; i < ops_per_sample; ++i) churn_pair(db, head, tail, value);
    double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    rate[s] = static_cast<double>(ops_per_sample) / secs;
    rss[s] = rss_kib();
    std::printf("%8ld %14.0f %10.1f\n", s + 1, rate[s], static_cast<double>(rss[s]) / 1024.0);
    std::fflush(stdout);
  }
  double rate_drift = rate[samples - 1] / rate[0] - 1;
  double rss_drift = static_cast<double>(rss[samples - 1]) / static_cast<double>(rss[0]) - 1;
  bool flat = std::abs(rate_drift) <= 0.10 && std::abs(rss_drift) <= 0.10;
  std::printf("last vs first tenth: ops/s %+.1f %%, RSS %+.1f %%: %s\n", rate_drift * 100,
              rss_drift * 100, flat ? "flat" : "NOT FLAT");
  flat = flat && !overwrites_grew;
  if (!held) return flat ? 0 : 1;

  // 3. A small queue (100 items), churned for 1 s, then for 2.5 s while one transaction
  // holds the version it read at the start of that, as a long scan would.
  strata::Database small = strata::Database::open();
  std::uint64_t first = 0, last = 0;
  for (; last < 100; ++last)
    small.run([&](strata::Transaction& tr) { tr.set(key_of(last), value); });
  auto pairs_per_second = [&](std::chrono::milliseconds d) {
    auto start = std::chrono::steady_clock::now();
    long n = 0;
    while (std::chrono::steady_clock::now() - start < d) {
      churn_pair(small, first, last, value);
      ++n;
    }
    return static_cast<double>(n) / std::chrono::duration<double>(d).count();
  };
  const double alone = pairs_per_second(std::chrono::milliseconds(1000));
  strata::Transaction holder = small.create_transaction();
  const std::string seen_key = key_of(first);
  const auto seen = holder.get(seen_key);
  std::printf("churn of a 100-item queue: %.0f pairs/s alone; with an old reader held open:\n",
              alone);
  std::printf("%8s %14s %10s\n", "sample", "pairs/s", "RSS MiB");
  constexpr int kWindows = 10;
  constexpr int kJudged = 3;  // a collapse slows every window after it; a stall only one
  double held_best = 0;
  for (int s = 0; s < kWindows; ++s) {
    const double window = pairs_per_second(std::chrono::milliseconds(250));
    if (s >= kWindows - kJudged) held_best = std::max(held_best, window);
    std::printf("%8d %14.0f %10.1f\n", s + 1, window, static_cast<double>(rss_kib()) / 1024.0);
  }
  // The holder's view is fixed: what it saw is still there, what came later is not.
  if (!seen || holder.get(seen_key) != seen || holder.get(key_of(last - 1)).has_value()) {
    std::printf("the held reader's view changed\n");
    return 1;
  }
  const bool held_ok = held_best >= 0.25 * alone;
  std::printf("held reader: best of the last %d windows at %.0f %% of the rate alone: %s\n",
              kJudged, 100 * held_best / alone, held_ok ? "no collapse" : "COLLAPSED");
  return flat && held_ok ? 0 : 1;
}

int main(int argc, char** argv) {
  return bench::run_main("strata-churn", [&] { return program_main(argc, argv); });
}
