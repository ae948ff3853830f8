// bench/core_latency.hpp: the cache-line round trip between CPU 0 and CPU 1.
//
// On a virtual machine the host may move the two virtual CPUs between cores that share a
// cache and cores that do not, from one second to the next; the round trip then takes one
// of two values, and the producers/consumers figures move with it, though not with it
// alone (docs/benchmarks.md, "Peers"). strata-peers prints it each round;
// strata-core-latency prints it alone. On a busy machine the figure measures the scheduler
// instead (a pinned thread waits for its CPU): microseconds.
#pragma once

#include <atomic>
#include <chrono>
#include <thread>

#include <pthread.h>
#include <sched.h>

namespace bench {

// Mean nanoseconds for one line to go from CPU 0 to CPU 1 and back, over `trips` round
// trips; the calling thread's CPU affinity is restored afterwards. Negative when the two
// threads cannot be pinned (fewer than two CPUs, or affinity refused).
inline double cache_line_round_trip_ns(long trips) {
  auto pin_to = [](int cpu) {
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(cpu, &set);
    return pthread_setaffinity_np(pthread_self(), sizeof set, &set) == 0;
  };
  cpu_set_t saved;
  if (std::thread::hardware_concurrency() < 2 ||
      pthread_getaffinity_np(pthread_self(), sizeof saved, &saved) != 0) {
    return -1;
  }
  struct alignas(64) Line {
    std::atomic<int> turn{0};  // 1: CPU 1's move, 0: CPU 0's
  };
  Line line;
  std::atomic<bool> pinned{true};
  std::thread partner([&] {
    if (!pin_to(1)) pinned.store(false);
    for (long i = 0; i < trips; ++i) {
      while (line.turn.load(std::memory_order_acquire) != 1) {
      }
      line.turn.store(0, std::memory_order_release);
    }
  });
  if (!pin_to(0)) pinned.store(false);
  const auto start = std::chrono::steady_clock::now();
  for (long i = 0; i < trips; ++i) {
    line.turn.store(1, std::memory_order_release);
    while (line.turn.load(std::memory_order_acquire) != 0) {
    }
  }
  const std::chrono::duration<double, std::nano> took = std::chrono::steady_clock::now() - start;
  partner.join();
  pthread_setaffinity_np(pthread_self(), sizeof saved, &saved);
  return pinned.load() ? took.count() / static_cast<double>(trips) : -1;
}

}  // namespace bench
