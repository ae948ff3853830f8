#include "options.hpp"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <sstream>
#include <string_view>

#include "../args.hpp"

namespace stress {
namespace {

constexpr const char* kUsage = R"(usage: strata-stress [options]

Runs concurrent clients against a Queue, a PriorityQueue and key-value transactions on one
strata database, verifies the results (exactly-once delivery, FIFO per producer, priority
order against the commit log, a Cycle ring), and prints throughput, retries, latency
percentiles and peak memory. Exits 1 on any violation, 2 on a bad option, 3 when the
database cannot be opened or a client meets an error it cannot retry.

  --workload LIST        comma-separated: queue, pqueue, kv, queue-pairs,
                         pqueue-pairs (default: queue, pqueue, kv). The pairs
                         workloads have every client alternate one enqueue and one
                         dequeue; their ops are pairs
  --clients N            concurrent clients per run (default 8; queues split them
                         between producers and consumers)
  --seconds S            length of each run (default 4); --duration S is the same
  --ops N                run a fixed amount instead: N items per queue run, N
                         transactions per kv run
  --value-size N         bytes per value, 20 to 100000 (default 100); a queue item
                         starts with its producer, sequence number and priority
  --max-in-flight N      queue and pqueue runs: producers wait while N items are
                         enqueued and not yet dequeued, as on a bounded buffer
                         (default 10000; 0: no bound, producers run free and the
                         consumers drain the backlog after them)
  --high-contention M    on, off or both (default both): the recipes' staged-pop mode
  --path DIR             use a durable database in DIR (default: in memory); the
                         keys of earlier runs there, under ("stress", ...), are cleared
  --seed N               seed for the clients' random choices (default 1)
  --json FILE            also write the results as JSON
  --api API              cpp (default): strata's C++ API and recipes; c: FoundationDB's
                         C API in libfdb_c.so (API version 720), with the recipes
                         rewritten over it (bench/stress/fdb_c_recipes.hpp; same keys).
                         The database then lives inside libfdb_c.so (in memory, or
                         "strata:DIR" with --path). The C recipes have the simple mode
                         only: --high-contention both runs just the simple mode (and
                         says so), --high-contention on is refused
  --round-trip-us N      simulate a networked client: every pop transaction of the C++
                         recipes (both modes) waits N microseconds between its reads and
                         its commit, so consumers' transactions overlap as they do against
                         a cluster (default 0)
  --help                 this text
)";

[[noreturn]] void fail(const std::string& message) {
  std::fprintf(stderr, "strata-stress: %s\n\n%s", message.c_str(), kUsage);
  std::exit(2);
}

std::uint64_t number(std::string_view flag, const char* text, std::uint64_t min,
                     std::uint64_t max) {
  const std::optional<std::uint64_t> v = bench::parse_number(text, min, max);
  if (!v) fail(bench::number_refused(flag, text, min, max));
  return *v;
}

}  // namespace

StressOptions parse_options(int argc, char** argv) {
  StressOptions o;
  for (int i = 1; i < argc; ++i) {
    std::string_view flag = argv[i];
    if (flag == "--help" || flag == "-h") {
      std::fputs(kUsage, stdout);
      std::exit(0);
    }
    static constexpr std::string_view kFlags[] = {
        "--workload",   "--clients",         "--seconds", "--duration", "--ops",  "--max-in-flight",
        "--value-size", "--high-contention", "--path",    "--seed",     "--json", "--round-trip-us",
        "--api"};
    if (std::find(std::begin(kFlags), std::end(kFlags), flag) == std::end(kFlags)) {
      fail("unknown option '" + std::string(flag) + "'");
    }
    if (i + 1 >= argc) fail("missing value for " + std::string(flag));
    const char* value = argv[++i];
    if (flag == "--workload") {
      o.workloads.clear();
      std::stringstream ss(value);
      for (std::string w; std::getline(ss, w, ',');) {
        if (w != "queue" && w != "pqueue" && w != "kv" && w != "queue-pairs" && w != "pqueue-pairs")
          fail("unknown workload '" + w + "'");
        o.workloads.push_back(w);
      }
      if (o.workloads.empty()) fail("--workload needs at least one workload");
    } else if (flag == "--clients") {
      o.clients = static_cast<int>(number(flag, value, 1, 1024));
    } else if (flag == "--seconds" || flag == "--duration") {
      const std::optional<double> seconds = bench::parse_number(value, 0.001, 86400.0);
      if (!seconds) fail(bench::number_refused(flag, value, 0.001, 86400.0));
      o.seconds = *seconds;
    } else if (flag == "--ops") {
      o.ops = number(flag, value, 1, 1'000'000'000);
    } else if (flag == "--max-in-flight") {
      o.max_in_flight = static_cast<std::int64_t>(number(flag, value, 0, 1'000'000'000));
    } else if (flag == "--value-size") {
      // make_item's 18-byte header and the priority queue's two digits after it.
      o.value_size = number(flag, value, 20, 100'000);
    } else if (flag == "--high-contention") {
      std::string_view m = value;
      if (m == "on")
        o.contention = Contention::high;
      else if (m == "off")
        o.contention = Contention::simple;
      else if (m == "both")
        o.contention = Contention::both;
      else
        fail("--high-contention takes on, off or both, got '" + std::string(m) + "'");
    } else if (flag == "--path") {
      o.path = value;
    } else if (flag == "--seed") {
      o.seed = number(flag, value, 0, ~0ull);
    } else if (flag == "--json") {
      o.json = value;
    } else if (flag == "--round-trip-us") {
      o.round_trip_us = static_cast<int>(number(flag, value, 0, 100'000));
    } else if (flag == "--api") {
      std::string_view api = value;
      if (api == "cpp")
        o.api = ClientApi::cpp;
      else if (api == "c")
        o.api = ClientApi::c;
      else
        fail("--api takes cpp or c, got '" + std::string(api) + "'");
    } else {
      fail("unknown option '" + std::string(flag) + "'");
    }
  }
  if (o.api == ClientApi::c && o.round_trip_us > 0) {
    fail("--round-trip-us applies to the C++ recipes only (--api cpp)");
  }
  if (o.api == ClientApi::c) {
#if !STRATA_STRESS_FDB_C
    fail("--api c needs libfdb_c, which this build leaves out (STRATA_BUILD_FDB_C=OFF)");
#endif
    if (o.contention == Contention::high) {
      fail("--api c runs the simple recipes only; --high-contention on needs --api cpp");
    }
  }
  return o;
}

}  // namespace stress
