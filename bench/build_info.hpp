// bench/build_info.hpp: what a benchmark's results were measured with: strata's version,
// the source commit and the machine, for --version and the programs' reports.
//
// STRATA_BENCH_VERSION and STRATA_BENCH_COMMIT come from CMake (bench/CMakeLists.txt): the
// project's version and `git rev-parse --short HEAD` when the build was configured.
//
// Thread safety: pure functions, reading /proc and the host name.
#pragma once

#include <fstream>
#include <string>
#include <string_view>
#include <thread>

#include <unistd.h>

#ifndef STRATA_BENCH_VERSION
#define STRATA_BENCH_VERSION "unknown"
#endif
#ifndef STRATA_BENCH_COMMIT
#define STRATA_BENCH_COMMIT "unknown"
#endif

namespace bench {

inline constexpr std::string_view kStrataVersion = STRATA_BENCH_VERSION;
inline constexpr std::string_view kCommit = STRATA_BENCH_COMMIT;

// "strata-stress (strata 0.1.0, commit 2a22077)".
inline std::string version_line(std::string_view program) {
  return std::string(program) + " (strata " + std::string(kStrataVersion) + ", commit " +
         std::string(kCommit) + ")";
}

struct Machine {
  std::string hostname;
  std::string cpu_model;  // /proc/cpuinfo's first "model name", "unknown" without one
  unsigned cores = 0;     // hardware threads the process may see
};

inline Machine this_machine() {
  Machine m;
  char host[256] = {};
  m.hostname = gethostname(host, sizeof host - 1) == 0 ? host : "unknown";
  m.cpu_model = "unknown";
  std::ifstream cpuinfo("/proc/cpuinfo");
  for (std::string line; std::getline(cpuinfo, line);) {
    if (line.rfind("model name", 0) == 0) {
      const std::size_t colon = line.find(':');
      if (colon != std::string::npos) {
        const std::size_t start = line.find_first_not_of(" \t", colon + 1);
        m.cpu_model = start == std::string::npos ? "" : line.substr(start);
      }
      break;
    }
  }
  m.cores = std::thread::hardware_concurrency();
  return m;
}

}  // namespace bench
