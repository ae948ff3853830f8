// strata-core-latency: how long one cache line takes to go from core 0 to core 1 and back.
//
// On a virtual machine the host may move the two virtual CPUs between cores that share a
// cache and cores that do not, from one second to the next. On the 2-vCPU machines these
// benchmarks run on the round trip was either ~55 ns or ~330 ns, and strata's
// producers/consumers cell followed it (docs/benchmarks.md, session 16). Run this before
// and after a benchmark to know which of the two it ran on.
//
//   build/release/bench/strata-core-latency [round-trips]   (default 2,000,000)
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <thread>

#include <pthread.h>
#include <sched.h>

namespace {

alignas(64) std::atomic<int> g_turn{0};  // 1: core 1's move, 0: core 0's

bool pin_to(int cpu) {
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(cpu, &set);
  return pthread_setaffinity_np(pthread_self(), sizeof set, &set) == 0;
}

}  // namespace

int main(int argc, char** argv) {
  const long trips = argc > 1 ? std::strtol(argv[1], nullptr, 10) : 2'000'000;
  if (trips <= 0) {
    std::fprintf(stderr, "usage: strata-core-latency [round-trips > 0]\n");
    return 2;
  }
  if (std::thread::hardware_concurrency() < 2) {
    std::fprintf(stderr, "strata-core-latency: needs two CPUs\n");
    return 2;
  }
  std::thread partner([trips] {
    pin_to(1);
    for (long i = 0; i < trips; ++i) {
      while (g_turn.load(std::memory_order_acquire) != 1) {
      }
      g_turn.store(0, std::memory_order_release);
    }
  });
  if (!pin_to(0)) std::fprintf(stderr, "strata-core-latency: could not pin to CPU 0\n");
  const auto start = std::chrono::steady_clock::now();
  for (long i = 0; i < trips; ++i) {
    g_turn.store(1, std::memory_order_release);
    while (g_turn.load(std::memory_order_acquire) != 0) {
    }
  }
  const std::chrono::duration<double, std::nano> took = std::chrono::steady_clock::now() - start;
  partner.join();
  std::printf("cache-line round trip between CPU 0 and CPU 1: %.1f ns\n",
              took.count() / static_cast<double>(trips));
  return 0;
}
