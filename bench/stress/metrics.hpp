// Per-run measurements of strata-stress: latencies, counts, verification outcome.
#pragma once

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

namespace stress {

using Clock = std::chrono::steady_clock;

// Latencies of one client, merged into the run's at the end (no shared writes per op).
class Latencies {
 public:
  void add(Clock::duration d) {
    ns_.push_back(std::chrono::duration_cast<std::chrono::nanoseconds>(d).count());
  }
  // Takes other's samples and frees its memory.
  void merge(Latencies&& other) {
    ns_.insert(ns_.end(), other.ns_.begin(), other.ns_.end());
    std::vector<std::int64_t>().swap(other.ns_);
  }
  // The q-quantile in microseconds by nearest rank: the smallest sample at or above a q
  // share of them (the largest of 100 is p999). 0 when empty.
  double quantile_us(double q) {
    if (ns_.empty()) return 0;
    const double rank = std::ceil(q * static_cast<double>(ns_.size()));
    const auto k = std::min(ns_.size() - 1, static_cast<std::size_t>(std::max(rank, 1.0)) - 1);
    std::nth_element(ns_.begin(), ns_.begin() + static_cast<std::ptrdiff_t>(k), ns_.end());
    return static_cast<double>(ns_[k]) / 1000.0;
  }
  std::size_t size() const { return ns_.size(); }

 private:
  std::vector<std::int64_t> ns_;
};

// Live counters the progress line reads.
struct LiveCounters {
  std::atomic<std::uint64_t> ops{0};
  std::atomic<std::int64_t> in_flight{0};  // queue items enqueued but not yet dequeued
};

struct RunResult;
// Merges the clients' latencies into r's ops count and percentiles.
void summarise(std::vector<Latencies>& per_client, RunResult& r);

struct RunResult {
  std::string name;             // e.g. "queue/simple"
  std::string api;              // the client API: "cpp" or "c"
  double seconds = 0;           // the clients' time, from their start until the last ends
  std::uint64_t ops = 0;        // completed operations (items delivered, or transactions)
  std::uint64_t conflicts = 0;  // commits refused with 1020 during the run
  double p50_us = 0, p99_us = 0, p999_us = 0;
  long peak_rss_kib = 0;
  std::vector<std::string> violations;  // the first 10 found, after summarise()
  std::size_t violation_count = 0;      // all of them
};

inline void summarise(std::vector<Latencies>& per_client, RunResult& r) {
  Latencies merged;
  for (auto& l : per_client) merged.merge(std::move(l));
  r.p50_us = merged.quantile_us(0.50);
  r.p99_us = merged.quantile_us(0.99);
  r.p999_us = merged.quantile_us(0.999);
  if (r.ops == 0) r.ops = merged.size();
  r.violation_count = r.violations.size();
  if (r.violations.size() > 10) r.violations.resize(10);
}

}  // namespace stress
