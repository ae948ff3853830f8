// Command-line options of strata-stress.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace stress {

enum class Contention { simple, high, both };
// Where the workloads' database is: in process (cpp), or on a cluster through FoundationDB's
// C API (c).
enum class ClientApi { cpp, c };

struct StressOptions {
  std::vector<std::string> workloads{"queue", "pqueue", "kv"};
  int clients = 8;
  double seconds = 4.0;   // per workload and mode
  std::uint64_t ops = 0;  // if set: items per queue run / txns per kv run, not time
  std::size_t value_size = 100;
  Contention contention = Contention::both;
  std::string path;  // empty: in memory
  std::uint64_t seed = 1;
  std::string json;  // write the results here too, as JSON
  std::string csv;   // and here as CSV
  ClientApi api = ClientApi::cpp;
  std::string cluster_file;    // --api c: the cluster; empty: the client library's own database
  std::string client_library;  // --api c: the libfdb_c.so; empty: the build tree's
  int round_trip_us = 0;       // simulated client round trip inside each C++ recipe pop
  std::int64_t max_in_flight = 10'000;  // queue runs: producers wait beyond; 0: no bound
};

// Parses argv. On --help or --version prints to stdout and exits 0; on a bad flag prints
// the problem to stderr and exits 2.
StressOptions parse_options(int argc, char** argv);

}  // namespace stress
