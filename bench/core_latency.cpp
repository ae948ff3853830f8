// strata-core-latency: how long one cache line takes to go from CPU 0 to CPU 1 and back
// (see core_latency.hpp for why it matters here). Run it before and after a benchmark to
// know which of the host's two vCPU placements it ran on.
//
//   build/release/bench/strata-core-latency [round-trips]   (default 2,000,000)
#include "core_latency.hpp"

#include <cstdio>

#include "cli.hpp"

static int program_main(int argc, char** argv) {
  long trips = 2'000'000;
  CLI::App app("The cache-line round trip between CPU 0 and CPU 1.", "strata-core-latency");
  bench::set_up(app);
  app.add_option("round-trips", trips, "how many round trips to time (default 2000000)")
      ->transform(bench::number_in(1L, 1'000'000'000'000L));
  bench::parse_or_exit(app, argc, argv);
  const double ns = bench::cache_line_round_trip_ns(trips);
  if (ns < 0) {
    std::fprintf(stderr, "strata-core-latency: needs two CPUs it may pin threads to\n");
    return 2;
  }
  std::printf("cache-line round trip between CPU 0 and CPU 1: %.1f ns\n", ns);
  return 0;
}

int main(int argc, char** argv) {
  return bench::run_main("strata-core-latency", [&] { return program_main(argc, argv); });
}
