// kv/version_wait.hpp: threads waiting for a version to be published.
//
// A read at a version newer than the committed one waits for a commit to publish it, as
// FoundationDB's storage server waits for a version it has not yet seen (for
// FUTURE_VERSION_DELAY, then future_version). The waiter sleeps on a condition variable;
// the publisher wakes every waiter after a publish, but only when some thread waits: one
// load on the publishing path otherwise. A waiter is also woken by wake_all() (a cancel)
// and by its deadline, never by polling.
//
// Ordering: a waiter counts itself (seq_cst) before it loads the committed version under
// the mutex; the publisher stores the version (seq_cst) before it loads the count. So
// either the publisher sees the waiter and notifies under the mutex, or the waiter sees
// the new version.
//
// Thread safety: any thread may wait, publish or wake.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>

#include "strata/types.hpp"

#include "base/mutex.hpp"

namespace strata::kv {

class VersionWait {
 public:
  // After a publish of `committed` (which the publisher stored with seq_cst).
  void published() {
    if (waiters_.load(std::memory_order_seq_cst) != 0) wake_all();
  }
  // Wakes every waiter, to look at its stop condition again.
  void wake_all() {
    base::MutexLock lock(mu_);
    cv_.notify_all();
  }
  // Blocks until `committed` reaches `version` (true), or `stop()` is true or `deadline`
  // passes (false, unless the version arrived meanwhile). `stop` is called under the
  // mutex; whoever makes it true calls wake_all() afterwards.
  template <class Stop>
  bool wait_for(const std::atomic<Version>& committed, Version version,
                std::chrono::steady_clock::time_point deadline, Stop stop) {
    waiters_.fetch_add(1, std::memory_order_seq_cst);
    bool arrived = false;
    {
      base::MutexLock lock(mu_);
      while (!(arrived = committed.load(std::memory_order_seq_cst) >= version) && !stop()) {
        if (!cv_.wait_until(lock, deadline)) {
          arrived = committed.load(std::memory_order_seq_cst) >= version;
          break;
        }
      }
    }
    waiters_.fetch_sub(1, std::memory_order_relaxed);
    return arrived;
  }

 private:
  std::atomic<std::uint32_t> waiters_{0};
  base::Mutex mu_;  // guards no data: orders a waiter's check against a publisher's wake
  base::CondVar cv_;
};

}  // namespace strata::kv
