// strata-stress: the project's main job. See --help, and docs/benchmarks.md.
#include <algorithm>
#include <cstdio>
#include <fstream>

#include "options.hpp"
#include "recipes/high_contention.hpp"
#include "runner.hpp"
#include "workloads.hpp"

namespace stress {
namespace {

void write_json(std::ofstream& out, const char* api, const std::vector<RunResult>& results) {
  out << "{\"api\": \"" << api << "\", \"runs\": [\n";
  for (std::size_t i = 0; i < results.size(); ++i) {
    const RunResult& r = results[i];
    out << "  {\"name\": \"" << r.name << "\", \"api\": \"" << r.api
        << "\", \"seconds\": " << r.seconds << ", \"ops\": " << r.ops
        << ", \"ops_per_sec\": " << (r.seconds > 0 ? static_cast<double>(r.ops) / r.seconds : 0)
        << ", \"conflicts\": " << r.conflicts << ", \"p50_us\": " << r.p50_us
        << ", \"p99_us\": " << r.p99_us << ", \"p999_us\": " << r.p999_us
        << ", \"rss_kib\": " << r.peak_rss_kib << ", \"violations\": " << r.violation_count << "}"
        << (i + 1 < results.size() ? ",\n" : "\n");
  }
  out << "]}\n";
  out.flush();
}

std::vector<RunResult> run_cpp(const StressOptions& o) {
  strata::Options db_options;
  db_options.path = o.path;
  strata::Database db = strata::Database::open(db_options);
  return run_workloads<CppApi>(db, o);
}

#if STRATA_STRESS_FDB_C
std::vector<RunResult> run_c(const StressOptions& o) {
  fdbc::Network network;  // before the database, stopped and joined after it
  fdbc::Database db(o.path);
  return run_workloads<CApi>(db, o);
}
#endif

}  // namespace
}  // namespace stress

int main(int argc, char** argv) {
  using namespace stress;
  StressOptions o = parse_options(argc, argv);
  std::ofstream json;  // opened now: a file that cannot be written is refused before the runs
  if (!o.json.empty()) {
    json.open(o.json);
    if (!json) {
      std::fprintf(stderr, "strata-stress: cannot write '%s'\n", o.json.c_str());
      return 2;
    }
  }
  bool split = false;  // producer/consumer workloads need two clients
  bool queues = false;
  for (const auto& w : o.workloads) {
    split |= w == "queue" || w == "pqueue";
    queues |= w != "kv";
  }
  if (split && o.clients < 2) {
    std::fprintf(stderr, "strata-stress: queue and pqueue need --clients 2 or more\n");
    return 2;
  }
  const bool c_api = o.api == ClientApi::c;
  const char* api = c_api ? "c" : "cpp";
  char seconds[32];
  std::snprintf(seconds, sizeof seconds, "%g s", o.seconds);  // "4 s", not "4.000000 s"
  std::printf(
      "strata-stress: %d clients, %s per run, %zu-byte values, %s database, API %s\n", o.clients,
      o.ops ? (std::to_string(o.ops) + " ops").c_str() : seconds, o.value_size,
      o.path.empty() ? "in-memory" : ("durable (" + o.path + ")").c_str(),
      c_api ? "c (FoundationDB C API, libfdb_c.so, API version 720)" : "cpp (strata C++ API)");
  if (split && o.max_in_flight > 0) {
    std::printf("strata-stress: queue producers wait while %lld items are in flight\n",
                static_cast<long long>(o.max_in_flight));
  } else if (split) {
    std::printf("strata-stress: queue producers run unbounded; consumers drain after them\n");
  }
  if (c_api && queues && o.contention == Contention::both) {
    std::printf(
        "strata-stress: --api c runs the queues' simple mode only (the C recipes have no "
        "high-contention mode)\n");
  }

  strata::recipes_detail::set_client_latency(std::chrono::microseconds(o.round_trip_us));
  if (o.round_trip_us > 0) {
    std::printf("strata-stress: pops wait a simulated %d us round trip before committing\n",
                o.round_trip_us);
  }

  std::vector<RunResult> results;
  try {
#if STRATA_STRESS_FDB_C
    results = c_api ? run_c(o) : run_cpp(o);
#else
    results = run_cpp(o);
#endif
  } catch (const std::exception& e) {  // the database did not open, or a setup step failed
    std::fflush(stdout);
    std::fprintf(stderr, "strata-stress: %s\n", e.what());
    return 3;
  }

  std::printf("\n%-20s %4s %10s %12s %12s %10s %10s %10s %10s\n", "workload", "api", "ops", "ops/s",
              "retries/op", "p50 us", "p99 us", "p999 us", "peak MiB");
  bool ok = true;
  for (const RunResult& r : results) {
    std::printf("%-20s %4s %10llu %12.0f %12.4f %10.1f %10.1f %10.1f %10.1f\n", r.name.c_str(),
                r.api.c_str(), static_cast<unsigned long long>(r.ops),
                static_cast<double>(r.ops) / r.seconds,
                r.ops ? static_cast<double>(r.conflicts) / static_cast<double>(r.ops) : 0.0,
                r.p50_us, r.p99_us, r.p999_us, static_cast<double>(r.peak_rss_kib) / 1024.0);
    for (const std::string& v : r.violations) {
      std::printf("  VIOLATION (%s): %s\n", r.name.c_str(), v.c_str());
      ok = false;
    }
    if (r.violation_count > r.violations.size()) {
      std::printf("  ... and %zu more violations (%s)\n", r.violation_count - r.violations.size(),
                  r.name.c_str());
    }
  }
  long peak = rss_kib("VmHWM:");  // since the last run's start, when the resets work
  for (const RunResult& r : results) peak = std::max(peak, r.peak_rss_kib);
  std::printf("peak RSS %.1f MiB; %s\n", static_cast<double>(peak) / 1024.0,
              ok ? "all checks passed" : "CHECKS FAILED");
  if (json.is_open()) {
    write_json(json, api, results);
    if (!json) {
      std::fprintf(stderr, "strata-stress: writing '%s' failed\n", o.json.c_str());
      return 2;
    }
  }
  return ok ? 0 : 1;
}
