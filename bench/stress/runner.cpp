#include "runner.hpp"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>

#include "progress.hpp"
#include "workloads.hpp"

namespace stress {

long rss_kib(const char* field) {
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line)) {
    if (line.rfind(field, 0) == 0)
      return std::strtol(line.c_str() + std::strlen(field), nullptr, 10);
  }
  return 0;
}

// Starts VmHWM over from the current RSS (Linux's clear_refs "5"). False when the kernel
// refuses: VmHWM then stays the process's peak so far.
bool reset_peak_rss() {
  std::ofstream refs("/proc/self/clear_refs");
  refs << "5";
  refs.flush();
  return static_cast<bool>(refs);
}

template <class Api>
std::vector<RunResult> run_workloads(typename Api::Database& db, const StressOptions& o) {
  std::vector<bool> modes;
  if (o.contention != Contention::high) modes.push_back(false);
  if (o.contention != Contention::simple) modes.push_back(true);
  std::vector<RunResult> results;
  // A durable database may hold an earlier process's runs (one interrupted, or with the
  // same seed and so the same run ids): every run starts from an empty subspace, or its
  // checks count those items (as delivered twice, or hiding a lost one).
  const strata::KeyRange ours = strata::Subspace(strata::Tuple{"stress"}).range();
  db.run([&](auto& tr) { tr.clear_range(ours.begin, ours.end); });
  std::uint64_t run_id = o.seed * 1000;
  for (const std::string& w : o.workloads) {
    for (bool high : (w == "kv" ? std::vector<bool>{false} : modes)) {
      LiveCounters live;
      bench::Backlog backlog(o.max_in_flight);
      RunContext<Api> ctx{db, o, high, ++run_id, live, backlog};
      std::string name = w == "kv" ? "kv/cycle" : w + (high ? "/high" : "/simple");
      std::uint64_t conflicts_before = conflicts(db);
      reset_peak_rss();
      RunResult r;
      {
        Progress progress(name, live, [&db] { return conflicts(db); });
        if (w == "queue")
          r = run_queue(ctx);
        else if (w == "pqueue")
          r = run_priority_queue(ctx);
        else if (w == "kv")
          r = run_kv_cycle(ctx);
        else
          r = run_pairs(ctx, w == "pqueue-pairs");
      }
      r.name = name;
      r.api = o.api == ClientApi::c ? "c" : Api::kName;
      r.conflicts = conflicts(db) - conflicts_before;
      r.peak_rss_kib = rss_kib("VmHWM:");  // the run's peak, its verification included
      std::printf("%-20s done: %llu ops, %s\n", name.c_str(),
                  static_cast<unsigned long long>(r.ops),
                  r.violations.empty() ? "verified" : "VIOLATIONS");
      results.push_back(std::move(r));
    }
  }
  return results;
}

template std::vector<RunResult> run_workloads<CppApi>(strata::Database&, const StressOptions&);

}  // namespace stress
