// strata-stress's results as JSON (--json) and CSV (--csv).
//
// JSON: {"tool", "version", "commit", "started_utc", "machine": {"hostname", "cpu_model",
// "cores"}, "settings": {every option}, "api", "runs": [one object per run, the fields of
// kRunFields]}. CSV: a header of kRunFields, then one row per run.
#pragma once

#include <ostream>
#include <string>
#include <vector>

#include "metrics.hpp"
#include "options.hpp"
#include <nlohmann/json.hpp>

namespace stress {

// The per-run fields, in the order both formats carry them.
inline constexpr const char* kRunFields[] = {
    "name",   "api",    "seconds", "ops",     "ops_per_sec", "conflicts", "mean_us",   "p50_us",
    "p90_us", "p95_us", "p99_us",  "p999_us", "max_us",      "rss_kib",   "violations"};

nlohmann::ordered_json settings_json(const StressOptions& o);
nlohmann::ordered_json run_json(const RunResult& r);
// The whole report; `started_utc` as "2026-11-28T14:41:57Z".
nlohmann::ordered_json report_json(const StressOptions& o, const std::vector<RunResult>& results,
                                   const std::string& started_utc);
void write_csv(std::ostream& out, const std::vector<RunResult>& results);

}  // namespace stress
