// Per-run measurements of strata-stress: latencies, counts, verification outcome.
#pragma once

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "histogram.hpp"

namespace stress {

using Clock = std::chrono::steady_clock;

// Latencies of one client in nanoseconds, merged into the run's at the end (no shared
// writes per op). Bounded: a fixed-size histogram, however long the run.
class Latencies {
 public:
  void add(Clock::duration d) {
    const auto ns = std::chrono::duration_cast<std::chrono::nanoseconds>(d).count();
    ns_.add(static_cast<std::uint64_t>(std::max<std::int64_t>(ns, 0)));
  }
  void merge(const Latencies& other) { ns_.merge(other.ns_); }
  // The q-quantile in microseconds by nearest rank (bench::Histogram, within 1/256 of the
  // exact sample). 0 when empty.
  double quantile_us(double q) const { return static_cast<double>(ns_.quantile(q)) / 1000.0; }
  double mean_us() const { return ns_.mean() / 1000.0; }
  double max_us() const { return static_cast<double>(ns_.max()) / 1000.0; }
  std::uint64_t size() const { return ns_.count(); }

 private:
  bench::Histogram ns_;
};

// Live counters the progress line reads.
struct LiveCounters {
  std::atomic<std::uint64_t> ops{0};
  std::atomic<std::int64_t> in_flight{0};  // queue items enqueued but not yet dequeued
};

struct RunResult;
// Merges the clients' latencies into r's ops count and percentiles.
void summarise(const std::vector<Latencies>& per_client, RunResult& r);

struct RunResult {
  std::string name;                // e.g. "queue/simple"
  std::string api;                 // the client API: "cpp" or "c"
  double seconds = 0;              // the clients' time, from their start until the last ends
  std::uint64_t ops = 0;           // completed operations (items delivered, or transactions)
  std::uint64_t conflicts = 0;     // commits refused with 1020 during the run
  double mean_us = 0, max_us = 0;  // latency of an operation (see workloads.hpp)
  double p50_us = 0, p90_us = 0, p95_us = 0, p99_us = 0, p999_us = 0;
  long peak_rss_kib = 0;
  std::vector<std::string> violations;  // the first 10 found, after summarise()
  std::size_t violation_count = 0;      // all of them
};

inline void summarise(const std::vector<Latencies>& per_client, RunResult& r) {
  Latencies merged;
  for (const auto& l : per_client) merged.merge(l);
  r.mean_us = merged.mean_us();
  r.max_us = merged.max_us();
  r.p50_us = merged.quantile_us(0.50);
  r.p90_us = merged.quantile_us(0.90);
  r.p95_us = merged.quantile_us(0.95);
  r.p99_us = merged.quantile_us(0.99);
  r.p999_us = merged.quantile_us(0.999);
  if (r.ops == 0) r.ops = merged.size();
  r.violation_count = r.violations.size();
  if (r.violations.size() > 10) r.violations.resize(10);
}

}  // namespace stress
