// Test probes for the recipes' pops (recipes/pop_probe.hpp): one that waits a simulated
// client round trip before each pop transaction commits, one that also counts every event,
// and an installer that installs a probe for its own lifetime.
#pragma once

#include <array>
#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <thread>

#include "recipes/pop_probe.hpp"

namespace strata::recipestest {

using recipes_detail::PopEvent;

// Waits `latency` between each pop transaction's reads and its commit, as a client of a
// networked cluster does.
class RoundTripProbe : public recipes_detail::PopProbe {
 public:
  explicit RoundTripProbe(std::chrono::microseconds latency) : latency_(latency) {}
  void before_commit() override {
    if (latency_.count() > 0) std::this_thread::sleep_for(latency_);
  }

 private:
  std::chrono::microseconds latency_;
};

// Counts every event and every commit the pops report, from any number of threads; with a
// latency, waits it before each commit too.
class CountingProbe : public RoundTripProbe {
 public:
  explicit CountingProbe(std::chrono::microseconds latency = std::chrono::microseconds(0))
      : RoundTripProbe(latency) {}
  void before_commit() override {
    commits_.fetch_add(1, std::memory_order_relaxed);
    RoundTripProbe::before_commit();
  }
  void count(PopEvent event) override {
    events_[static_cast<std::size_t>(event)].fetch_add(1, std::memory_order_relaxed);
  }
  std::uint64_t operator[](PopEvent event) const {
    return events_[static_cast<std::size_t>(event)].load(std::memory_order_relaxed);
  }
  std::uint64_t commits() const { return commits_.load(std::memory_order_relaxed); }

 private:
  std::array<std::atomic<std::uint64_t>, static_cast<std::size_t>(PopEvent::fast_path_skip) + 1>
      events_{};
  std::atomic<std::uint64_t> commits_{0};
};

// Installs `probe` for the installer's lifetime (none after it). The probe must outlive any
// pop still running when the installer goes.
class ScopedPopProbe {
 public:
  explicit ScopedPopProbe(recipes_detail::PopProbe& probe) {
    recipes_detail::install_pop_probe(&probe);
  }
  ~ScopedPopProbe() { recipes_detail::install_pop_probe(nullptr); }
  ScopedPopProbe(const ScopedPopProbe&) = delete;
  ScopedPopProbe& operator=(const ScopedPopProbe&) = delete;
};

}  // namespace strata::recipestest
