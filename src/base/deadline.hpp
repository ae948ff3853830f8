// base/deadline.hpp: now + a caller's timeout on the steady clock, without overflow.
//
// milliseconds::max() means "forever" to many callers and milliseconds::min() turns up as
// "already over"; either sum overflows the clock's nanoseconds. Every public call that
// takes a timeout turns it into a deadline here.
#pragma once

#include <chrono>

namespace strata::base {

// now + timeout; the clock's last instant (time_point::max(): no deadline) for a timeout
// that reaches past it, and now for a negative one.
inline std::chrono::steady_clock::time_point deadline_after(
    std::chrono::steady_clock::time_point now, std::chrono::milliseconds timeout) {
  using Clock = std::chrono::steady_clock;
  if (timeout.count() <= 0) return now;
  const auto room = std::chrono::floor<std::chrono::milliseconds>(Clock::time_point::max() - now);
  return timeout >= room ? Clock::time_point::max() : now + timeout;
}

}  // namespace strata::base
