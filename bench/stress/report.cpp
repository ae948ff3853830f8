#include "report.hpp"

#include "../build_info.hpp"

namespace stress {

nlohmann::ordered_json settings_json(const StressOptions& o) {
  return {
      {"workloads", o.workloads},
      {"clients", o.clients},
      {"seconds", o.seconds},
      {"ops", o.ops},
      {"value_size", o.value_size},
      {"max_in_flight", o.max_in_flight},
      {"high_contention", o.contention == Contention::high     ? "on"
                          : o.contention == Contention::simple ? "off"
                                                               : "both"},
      {"path", o.path},
      {"seed", o.seed},
      {"json", o.json},
      {"csv", o.csv},
      {"api", o.api == ClientApi::c ? "c" : "cpp"},
      {"round_trip_us", o.round_trip_us},
  };
}

nlohmann::ordered_json run_json(const RunResult& r) {
  return {
      {"name", r.name},
      {"api", r.api},
      {"seconds", r.seconds},
      {"ops", r.ops},
      {"ops_per_sec", r.seconds > 0 ? static_cast<double>(r.ops) / r.seconds : 0.0},
      {"conflicts", r.conflicts},
      {"mean_us", r.mean_us},
      {"p50_us", r.p50_us},
      {"p90_us", r.p90_us},
      {"p95_us", r.p95_us},
      {"p99_us", r.p99_us},
      {"p999_us", r.p999_us},
      {"max_us", r.max_us},
      {"rss_kib", r.peak_rss_kib},
      {"violations", r.violation_count},
  };
}

nlohmann::ordered_json report_json(const StressOptions& o, const std::vector<RunResult>& results,
                                   const std::string& started_utc) {
  const bench::Machine m = bench::this_machine();
  nlohmann::ordered_json runs = nlohmann::ordered_json::array();
  for (const RunResult& r : results) runs.push_back(run_json(r));
  return {
      {"tool", "strata-stress"},
      {"version", bench::kStrataVersion},
      {"commit", bench::kCommit},
      {"started_utc", started_utc},
      {"machine", {{"hostname", m.hostname}, {"cpu_model", m.cpu_model}, {"cores", m.cores}}},
      {"settings", settings_json(o)},
      {"api", o.api == ClientApi::c ? "c" : "cpp"},
      {"runs", std::move(runs)},
  };
}

namespace {

// A CSV field: quoted, with its quotes doubled, when it holds a comma, quote or newline.
std::string csv_field(const nlohmann::ordered_json& value) {
  std::string text = value.is_string() ? value.get<std::string>() : value.dump();
  if (text.find_first_of(",\"\n\r") == std::string::npos) return text;
  std::string quoted = "\"";
  for (char c : text) {
    quoted += c;
    if (c == '"') quoted += '"';
  }
  return quoted + "\"";
}

}  // namespace

void write_csv(std::ostream& out, const std::vector<RunResult>& results) {
  const char* sep = "";
  for (const char* f : kRunFields) {
    out << sep << f;
    sep = ",";
  }
  out << "\n";
  for (const RunResult& r : results) {
    const nlohmann::ordered_json row = run_json(r);
    sep = "";
    for (const char* f : kRunFields) {
      out << sep << csv_field(row.at(f));
      sep = ",";
    }
    out << "\n";
  }
}

}  // namespace stress
