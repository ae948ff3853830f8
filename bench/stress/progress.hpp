// The live progress of a strata-stress run: one updating line on a terminal, plain lines
// every 2 s otherwise, from the run's LiveCounters and the API's conflict count.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <utility>

#include "metrics.hpp"

namespace stress {

class Progress {
 public:
  // `conflicts` returns the running count of refused commits (read from the progress thread).
  Progress(std::string name, LiveCounters& live, std::function<std::uint64_t()> conflicts);
  ~Progress();  // stops the line and clears it on a terminal
  Progress(const Progress&) = delete;
  Progress& operator=(const Progress&) = delete;

 private:
  void loop();

  std::string name_;
  LiveCounters& live_;
  std::function<std::uint64_t()> conflicts_;
  bool tty_;
  std::mutex mu_;
  std::condition_variable cv_;
  bool stop_ = false;
  std::thread thread_;
};

}  // namespace stress
