#include "progress.hpp"

#include <cstdio>

#include <unistd.h>

namespace stress {

Progress::Progress(std::string name, LiveCounters& live, std::function<std::uint64_t()> conflicts)
    : name_(std::move(name)),
      live_(live),
      conflicts_(std::move(conflicts)),
      tty_(isatty(STDOUT_FILENO) != 0),
      thread_([this] { loop(); }) {}

Progress::~Progress() {
  {
    std::lock_guard lock(mu_);
    stop_ = true;
  }
  cv_.notify_one();
  thread_.join();
  if (tty_) std::printf("\r\033[K");
  std::fflush(stdout);
}

void Progress::loop() {
  auto start = Clock::now();
  std::uint64_t last_ops = 0, last_conflicts = conflicts_();
  auto last = start;
  std::unique_lock lock(mu_);
  while (!cv_.wait_for(lock, tty_ ? std::chrono::milliseconds(250) : std::chrono::seconds(2),
                       [&] { return stop_; })) {
    auto now = Clock::now();
    double dt = std::chrono::duration<double>(now - last).count();
    std::uint64_t ops = live_.ops.load(), conflicts = conflicts_();
    std::printf("%s%-20s %6.1f s %12.0f ops/s %10.0f retries/s %10lld in flight%s",
                tty_ ? "\r\033[K" : "", name_.c_str(),
                std::chrono::duration<double>(now - start).count(),
                static_cast<double>(ops - last_ops) / dt,
                static_cast<double>(conflicts - last_conflicts) / dt,
                static_cast<long long>(live_.in_flight.load()), tty_ ? "" : "\n");
    std::fflush(stdout);
    last_ops = ops;
    last_conflicts = conflicts;
    last = now;
  }
}

}  // namespace stress
