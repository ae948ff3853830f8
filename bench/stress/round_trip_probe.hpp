// The simulated client round trip of --round-trip-us: a pop probe (recipes/pop_probe.hpp)
// that waits between each C++ recipe pop transaction's reads and its commit, as a client of
// a networked cluster does. In one process a transaction takes microseconds, too short for
// consumers to collide the way the high-contention mode is designed for.
#pragma once

#include <chrono>
#include <thread>

#include "recipes/pop_probe.hpp"

namespace stress {

class RoundTripProbe final : public strata::recipes_detail::PopProbe {
 public:
  explicit RoundTripProbe(std::chrono::microseconds latency) : latency_(latency) {}
  void before_commit() override { std::this_thread::sleep_for(latency_); }

 private:
  std::chrono::microseconds latency_;
};

}  // namespace stress
