// base/coarse_clock.hpp: a monotonic clock that is cheap to read and a few milliseconds
// coarse (CLOCK_MONOTONIC_COARSE: its resolution is the kernel's tick, and a read copies
// the time the last tick stored in the vDSO page, much cheaper than steady_clock, which
// reads the clock source, kvm-clock on a virtual machine). For deadlines measured in
// seconds that every transaction would otherwise pay for, such as the MVCC window, or as
// the start of a transaction's timeout (engine/transaction_impl.hpp says how it stays
// exact).
//
// Thread safety: now() from any thread.
#pragma once

#include <chrono>
#include <ctime>

namespace strata::base {

struct CoarseClock {
  using duration = std::chrono::nanoseconds;
  using rep = duration::rep;
  using period = duration::period;
  using time_point = std::chrono::time_point<CoarseClock>;
  static constexpr bool is_steady = true;  // NOLINT(readability-identifier-naming): Clock's

  static time_point now() noexcept {
    // Left unset: clock_gettime fills it, and cannot fail for a clock every Linux since
    // 2.6.32 has and a pointer to writable memory.
    timespec ts;
    clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
    return time_point(std::chrono::seconds(ts.tv_sec) + std::chrono::nanoseconds(ts.tv_nsec));
  }
  // The tick: now() may lag the true time by up to this much.
  static duration resolution() noexcept {
    static const duration kTick = [] {
      timespec ts{};
      clock_getres(CLOCK_MONOTONIC_COARSE, &ts);
      return duration(std::chrono::seconds(ts.tv_sec) + std::chrono::nanoseconds(ts.tv_nsec));
    }();
    return kTick;
  }
};

}  // namespace strata::base
