// strata-stress: the project's main job. See --help, and docs/benchmarks.md.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <string>
#include <utility>

#include "options.hpp"
#include "report.hpp"
#include "round_trip_probe.hpp"
#include "runner.hpp"
#include "workloads.hpp"
#include <unistd.h>

namespace stress {
namespace {

// Now in UTC, as "2026-11-28T14:41:57Z".
std::string now_utc() {
  const std::time_t now = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&now, &tm);
  char text[32];
  std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return text;
}

// Opens `path` for writing, or exits 2: a file that cannot be written is refused before
// the runs.
void open_or_exit(std::ofstream& out, const std::string& path) {
  if (path.empty()) return;
  out.open(path);
  if (!out) {
    std::fprintf(stderr, "strata-stress: cannot write '%s'\n", path.c_str());
    std::exit(2);
  }
}

std::vector<RunResult> run_cpp(const StressOptions& o) {
  strata::Options db_options;
  db_options.path = o.path;
  strata::Database db = strata::Database::open(db_options);
  return run_workloads<CppApi>(db, o);
}

// The client library --api c loads by default: the build tree's libfdb_c.so.
std::string client_library(const StressOptions& o) {
  return o.client_library.empty() ? std::string(STRATA_STRESS_FDB_C_LIBRARY) : o.client_library;
}

// --api c without --cluster-file: a cluster file for the client library's own database,
// "strata:DIR" with --path, else one of FoundationDB's form (its in-memory database).
std::string own_cluster_file(const StressOptions& o) {
  const char* tmp = std::getenv("TMPDIR");
  std::string file = std::string(tmp != nullptr ? tmp : "/tmp") + "/strata-stress-" +
                     std::to_string(::getpid()) + ".cluster";
  std::ofstream(file) << (o.path.empty() ? std::string("strata_stress:stress@127.0.0.1:4500")
                                         : "strata:" + o.path)
                      << "\n";
  return file;
}

std::vector<RunResult> run_c(const StressOptions& o) {
  strata::Options db_options;
  db_options.cluster_file = o.cluster_file.empty() ? own_cluster_file(o) : o.cluster_file;
  db_options.client_library = client_library(o);
  strata::Database db = strata::Database::open(db_options);
  if (o.cluster_file.empty()) std::filesystem::remove(db_options.cluster_file);
  return run_workloads<CppApi>(db, o);
}

}  // namespace
}  // namespace stress

int main(int argc, char** argv) {
  using namespace stress;
  StressOptions o = parse_options(argc, argv);
  std::ofstream json, csv;
  open_or_exit(json, o.json);
  open_or_exit(csv, o.csv);
  const std::string started = now_utc();
  bool split = false;  // producer/consumer workloads need two clients
  for (const auto& w : o.workloads) split |= w == "queue" || w == "pqueue";
  if (split && o.clients < 2) {
    std::fprintf(stderr, "strata-stress: queue and pqueue need --clients 2 or more\n");
    return 2;
  }
  const bool c_api = o.api == ClientApi::c;
  char seconds[32];
  std::snprintf(seconds, sizeof seconds, "%g s", o.seconds);  // "4 s", not "4.000000 s"
  const std::string where = !o.cluster_file.empty() ? "cluster (" + o.cluster_file + ")"
                            : o.path.empty()        ? std::string("in-memory")
                                                    : "durable (" + o.path + ")";
  std::printf(
      "strata-stress: %d clients, %s per run, %zu-byte values, %s database, API %s\n", o.clients,
      o.ops ? (std::to_string(o.ops) + " ops").c_str() : seconds, o.value_size, where.c_str(),
      c_api ? ("c (strata's C++ API over FoundationDB's C API, " + client_library(o) + ")").c_str()
            : "cpp (strata C++ API)");
  if (split && o.max_in_flight > 0) {
    std::printf("strata-stress: queue producers wait while %lld items are in flight\n",
                static_cast<long long>(o.max_in_flight));
  } else if (split) {
    std::printf("strata-stress: queue producers run unbounded; consumers drain after them\n");
  }

  // Installed for the whole run and never removed: it outlives every pop.
  RoundTripProbe round_trip(std::chrono::microseconds(o.round_trip_us));
  if (o.round_trip_us > 0) {
    strata::recipes_detail::install_pop_probe(&round_trip);
    std::printf("strata-stress: pops wait a simulated %d us round trip before committing\n",
                o.round_trip_us);
  }

  std::vector<RunResult> results;
  try {
    results = c_api ? run_c(o) : run_cpp(o);
  } catch (const std::exception& e) {  // the database did not open, or a setup step failed
    std::fflush(stdout);
    std::fprintf(stderr, "strata-stress: %s\n", e.what());
    return 3;
  }

  std::printf("\n%-20s %4s %10s %12s %10s %9s %9s %9s %9s %9s %9s %9s %9s\n", "workload", "api",
              "ops", "ops/s", "retries/op", "mean us", "p50 us", "p90 us", "p95 us", "p99 us",
              "p999 us", "max us", "peak MiB");
  bool ok = true;
  for (const RunResult& r : results) {
    std::printf("%-20s %4s %10llu %12.0f %10.4f %9.1f %9.1f %9.1f %9.1f %9.1f %9.1f %9.1f %9.1f\n",
                r.name.c_str(), r.api.c_str(), static_cast<unsigned long long>(r.ops),
                static_cast<double>(r.ops) / r.seconds,
                r.ops ? static_cast<double>(r.conflicts) / static_cast<double>(r.ops) : 0.0,
                r.mean_us, r.p50_us, r.p90_us, r.p95_us, r.p99_us, r.p999_us, r.max_us,
                static_cast<double>(r.peak_rss_kib) / 1024.0);
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
  if (json.is_open()) json << report_json(o, results, started).dump(2) << "\n" << std::flush;
  if (csv.is_open()) {
    write_csv(csv, results);
    csv.flush();
  }
  for (const auto& [out, path] : {std::pair{&json, &o.json}, std::pair{&csv, &o.csv}}) {
    if (out->is_open() && !*out) {
      std::fprintf(stderr, "strata-stress: writing '%s' failed\n", path->c_str());
      return 2;
    }
  }
  return ok ? 0 : 1;
}
