// strata-core-latency: how long one cache line takes to go from CPU 0 to CPU 1 and back
// (see core_latency.hpp for why it matters here). Run it before and after a benchmark to
// know which of the host's two vCPU placements it ran on.
//
//   build/release/bench/strata-core-latency [round-trips]   (default 2,000,000)
#include "core_latency.hpp"

#include <cstdio>
#include <cstdlib>

int main(int argc, char** argv) {
  const long trips = argc > 1 ? std::strtol(argv[1], nullptr, 10) : 2'000'000;
  if (trips <= 0) {
    std::fprintf(stderr, "usage: strata-core-latency [round-trips > 0]\n");
    return 2;
  }
  const double ns = bench::cache_line_round_trip_ns(trips);
  if (ns < 0) {
    std::fprintf(stderr, "strata-core-latency: needs two CPUs it may pin threads to\n");
    return 2;
  }
  std::printf("cache-line round trip between CPU 0 and CPU 1: %.1f ns\n", ns);
  return 0;
}
