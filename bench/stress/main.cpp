// strata-stress: the project's main job. See --help, and docs/benchmarks.md.
#include <condition_variable>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <mutex>
#include <thread>

#include "options.hpp"
#include "workloads.hpp"
#include <unistd.h>

namespace stress {
namespace {

long rss_kib(const char* field) {
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line)) {
    if (line.rfind(field, 0) == 0)
      return std::strtol(line.c_str() + std::strlen(field), nullptr, 10);
  }
  return 0;
}

// Prints live progress: one updating line on a terminal, plain lines every 2 s otherwise.
class Progress {
 public:
  Progress(std::string name, LiveCounters& live, strata::Database& db)
      : name_(std::move(name)),
        live_(live),
        db_(db),
        tty_(isatty(STDOUT_FILENO) != 0),
        thread_([this] { loop(); }) {}
  ~Progress() {
    {
      std::lock_guard lock(mu_);
      stop_ = true;
    }
    cv_.notify_one();
    thread_.join();
    if (tty_) std::printf("\r\033[K");
    std::fflush(stdout);
  }

 private:
  void loop() {
    auto start = Clock::now();
    std::uint64_t last_ops = 0, last_conflicts = db_.stats().conflicts;
    auto last = start;
    std::unique_lock lock(mu_);
    while (!cv_.wait_for(lock, tty_ ? std::chrono::milliseconds(250) : std::chrono::seconds(2),
                         [&] { return stop_; })) {
      auto now = Clock::now();
      double dt = std::chrono::duration<double>(now - last).count();
      std::uint64_t ops = live_.ops.load(), conflicts = db_.stats().conflicts;
      std::printf("%s%-20s %6.1f s %12.0f ops/s %10.0f retries/s %10lld in flight%s",
                  tty_ ? "\r\033[K" : "", name_.c_str(),
                  std::chrono::duration<double>(now - start).count(), (ops - last_ops) / dt,
                  (conflicts - last_conflicts) / dt, static_cast<long long>(live_.in_flight.load()),
                  tty_ ? "" : "\n");
      std::fflush(stdout);
      last_ops = ops;
      last_conflicts = conflicts;
      last = now;
    }
  }

  std::string name_;
  LiveCounters& live_;
  strata::Database& db_;
  bool tty_;
  std::mutex mu_;
  std::condition_variable cv_;
  bool stop_ = false;
  std::thread thread_;
};

void write_json(const std::string& file, const std::vector<RunResult>& results) {
  std::ofstream out(file);
  out << "{\"runs\": [\n";
  for (std::size_t i = 0; i < results.size(); ++i) {
    const RunResult& r = results[i];
    out << "  {\"name\": \"" << r.name << "\", \"seconds\": " << r.seconds << ", \"ops\": " << r.ops
        << ", \"ops_per_sec\": " << (r.seconds > 0 ? r.ops / r.seconds : 0)
        << ", \"conflicts\": " << r.conflicts << ", \"p50_us\": " << r.p50_us
        << ", \"p99_us\": " << r.p99_us << ", \"p999_us\": " << r.p999_us
        << ", \"rss_kib\": " << r.peak_rss_kib << ", \"violations\": " << r.violations.size() << "}"
        << (i + 1 < results.size() ? ",\n" : "\n");
  }
  out << "]}\n";
}

}  // namespace
}  // namespace stress

int main(int argc, char** argv) {
  using namespace stress;
  StressOptions o = parse_options(argc, argv);
  bool split = false;  // producer/consumer workloads need two clients
  for (const auto& w : o.workloads) split |= w == "queue" || w == "pqueue";
  if (split && o.clients < 2) {
    std::fprintf(stderr, "strata-stress: queue and pqueue need --clients 2 or more\n");
    return 2;
  }
  strata::Options db_options;
  db_options.path = o.path;
  strata::Database db = strata::Database::open(db_options);
  std::printf(
      "strata-stress: %d clients, %s per run, %zu-byte values, %s database\n", o.clients,
      o.ops ? (std::to_string(o.ops) + " ops").c_str() : (std::to_string(o.seconds) + " s").c_str(),
      o.value_size, o.path.empty() ? "in-memory" : ("durable (" + o.path + ")").c_str());

  std::vector<bool> modes;
  if (o.contention != Contention::high) modes.push_back(false);
  if (o.contention != Contention::simple) modes.push_back(true);
  std::vector<RunResult> results;
  std::uint64_t run_id = o.seed * 1000;
  for (const std::string& w : o.workloads) {
    for (bool high : (w == "kv" ? std::vector<bool>{false} : modes)) {
      LiveCounters live;
      RunContext ctx{db, o, high, ++run_id, live};
      std::string name = w == "kv" ? "kv/cycle" : w + (high ? "/high" : "/simple");
      std::uint64_t conflicts_before = db.stats().conflicts;
      auto start = Clock::now();
      RunResult r;
      {
        Progress progress(name, live, db);
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
      r.seconds = std::chrono::duration<double>(Clock::now() - start).count();
      r.conflicts = db.stats().conflicts - conflicts_before;
      r.peak_rss_kib = rss_kib("VmRSS:");
      std::printf("%-20s done: %llu ops, %s\n", name.c_str(),
                  static_cast<unsigned long long>(r.ops),
                  r.violations.empty() ? "verified" : "VIOLATIONS");
      results.push_back(std::move(r));
    }
  }

  std::printf("\n%-20s %10s %12s %12s %10s %10s %10s %10s\n", "workload", "ops", "ops/s",
              "retries/op", "p50 us", "p99 us", "p999 us", "RSS MiB");
  bool ok = true;
  for (const RunResult& r : results) {
    std::printf("%-20s %10llu %12.0f %12.4f %10.1f %10.1f %10.1f %10.1f\n", r.name.c_str(),
                static_cast<unsigned long long>(r.ops), r.ops / r.seconds,
                r.ops ? static_cast<double>(r.conflicts) / r.ops : 0.0, r.p50_us, r.p99_us,
                r.p999_us, r.peak_rss_kib / 1024.0);
    for (const std::string& v : r.violations) {
      std::printf("  VIOLATION (%s): %s\n", r.name.c_str(), v.c_str());
      ok = false;
    }
  }
  std::printf("peak RSS %.1f MiB; %s\n", rss_kib("VmHWM:") / 1024.0,
              ok ? "all checks passed" : "CHECKS FAILED");
  if (!o.json.empty()) write_json(o.json, results);
  return ok ? 0 : 1;
}
