#include "options.hpp"

#include <sstream>

#include "../cli.hpp"

namespace stress {
namespace {

constexpr const char* kDescription =
    R"(Runs concurrent clients against a Queue, a PriorityQueue and key-value transactions on one
strata database, verifies the results (exactly-once delivery, FIFO per producer, priority
order against the commit log, a Cycle ring), and prints throughput, retries, latency
(mean, p50, p90, p95, p99, p999, max, by nearest rank within 0.4 %) and each run's peak
memory. Exits 1 on any violation, 2 on a bad option, 3 when the database cannot be opened
or a client meets an error it cannot retry.

"peak MiB" is the process's peak resident memory during the run, its verification
included (Linux's VmHWM, started over at each run): the database's memory, plus the
checker's records of every item, kept until the run is verified, and the latency
histograms (58 KiB per client, whatever the run's length). An item's records take 24
bytes in the queue runs and 48 while simple mode's are verified, 64 in the priority-queue
runs and 80 (high-contention mode) or 104 (simple mode) while verified, and 20 in the
pairs runs; vectors grow by doubling, so up to twice that. A run that moves more items
peaks higher.)";

constexpr const char* kApiHelp =
    "cpp (default): strata's C++ API and recipes on an in-process database; c: the same C++ "
    "API and recipes on a cluster database, through FoundationDB's C API loaded at run time "
    "(docs/cluster.md): the build tree's libfdb_c.so unless --client-library says otherwise, "
    "whose own database (in memory, or \"strata:DIR\" with --path) stands in for the "
    "cluster unless --cluster-file names one";

std::vector<std::string> split_workloads(const std::string& list) {
  std::vector<std::string> out;
  std::stringstream ss(list);
  for (std::string w; std::getline(ss, w, ',');) {
    if (w != "queue" && w != "pqueue" && w != "kv" && w != "queue-pairs" && w != "pqueue-pairs")
      throw CLI::ValidationError("unknown workload '" + w + "'");
    out.push_back(w);
  }
  if (out.empty()) throw CLI::ValidationError("--workload needs at least one workload");
  return out;
}

}  // namespace

StressOptions parse_options(int argc, char** argv) {
  StressOptions o;
  CLI::App app(kDescription, "strata-stress");
  bench::set_up(app);
  std::string workloads = "queue,pqueue,kv";
  std::string contention = "both";
  std::string api = "cpp";
  app.add_option("--workload", workloads,
                 "comma-separated: queue, pqueue, kv, queue-pairs, pqueue-pairs (default: "
                 "queue,pqueue,kv). The pairs workloads have every client alternate one "
                 "enqueue and one dequeue; their ops are pairs")
      ->type_name("LIST");
  app.add_option("--clients", o.clients,
                 "concurrent clients per run (default 8; queues split them between "
                 "producers and consumers)")
      ->type_name("N")
      ->transform(bench::number_in(1, 1024));
  app.add_option("--seconds,--duration", o.seconds, "length of each run (default 4)")
      ->type_name("S")
      ->transform(bench::number_in(0.001, 86400.0));
  app.add_option("--ops", o.ops,
                 "run a fixed amount instead: N items per queue run, N transactions per kv run")
      ->type_name("N")
      ->transform(bench::number_in<std::uint64_t>(1, 1'000'000'000));
  // make_item's 18-byte header and the priority queue's two digits after it.
  app.add_option("--value-size", o.value_size,
                 "bytes per value (default 100); a queue item starts with its producer, "
                 "sequence number and priority")
      ->type_name("N")
      ->transform(bench::number_in<std::size_t>(20, 100'000));
  app.add_option("--max-in-flight", o.max_in_flight,
                 "queue and pqueue runs: producers wait while N items are enqueued and not "
                 "yet dequeued, as on a bounded buffer (default 10000; 0: no bound, producers "
                 "run free and the consumers drain the backlog after them)")
      ->type_name("N")
      ->transform(bench::number_in<std::int64_t>(0, 1'000'000'000));
  app.add_option("--high-contention", contention,
                 "on, off or both (default both): the recipes' staged-pop mode")
      ->type_name("M")
      ->check(bench::one_of({"on", "off", "both"}));
  app.add_option("--path", o.path,
                 "use a durable database in DIR (default: in memory); the keys of earlier "
                 "runs there, under (\"stress\", ...), are cleared")
      ->type_name("DIR");
  app.add_option("--seed", o.seed, "seed for the clients' random choices (default 1)")
      ->type_name("N")
      ->transform(bench::number_in<std::uint64_t>(0, ~std::uint64_t{0}));
  app.add_option("--json", o.json,
                 "also write the results as JSON, with the settings, strata's version, the "
                 "commit and the machine")
      ->type_name("FILE");
  app.add_option("--csv", o.csv, "also write the results as CSV, one row per run")
      ->type_name("FILE");
  app.add_option("--api", api, kApiHelp)->type_name("API")->check(bench::one_of({"cpp", "c"}));
  app.add_option("--cluster-file", o.cluster_file,
                 "run on the FoundationDB cluster this cluster file names (implies --api c; "
                 "not with --path); the keys of earlier runs there, under (\"stress\", ...), "
                 "are cleared")
      ->type_name("FILE");
  app.add_option("--client-library", o.client_library,
                 "--api c: the libfdb_c.so to load (default: the build tree's, or libfdb_c.so "
                 "from the loader's search path in a build without it)")
      ->type_name("FILE");
  app.add_option("--round-trip-us", o.round_trip_us,
                 "simulate a networked client: every pop transaction of the C++ recipes (both "
                 "modes) waits N microseconds between its reads and its commit, so consumers' "
                 "transactions overlap as they do against a cluster (default 0)")
      ->type_name("N")
      ->transform(bench::number_in(0, 100'000));

  bench::parse_or_exit(app, argc, argv, [&] {
    o.workloads = split_workloads(workloads);
    o.contention = contention == "on"    ? Contention::high
                   : contention == "off" ? Contention::simple
                                         : Contention::both;
    o.api = api == "c" || !o.cluster_file.empty() ? ClientApi::c : ClientApi::cpp;
    if (!o.cluster_file.empty() && !o.path.empty()) {
      throw CLI::ValidationError("--cluster-file and --path name two databases; give one");
    }
    if (!o.client_library.empty() && o.api != ClientApi::c) {
      throw CLI::ValidationError("--client-library applies to --api c only");
    }
  });
  return o;
}

}  // namespace stress
