// recipes/pop_probe.hpp: the one way tests and benchmarks look into the recipes' pops.
//
// A PopProbe, when installed, is told of each pop's events (PopEvent) and is called before
// each pop transaction commits (before_commit), where a probe may wait to simulate a client
// round trip to a networked cluster: in one process a transaction takes microseconds, too
// short for consumers to collide the way the high-contention mode is designed for.
// None is installed in real use, and then each site costs one load and one branch.
//
// Thread safety: the installed probe is called from every popping thread at once, so its
// methods must be safe to call concurrently. Installing (or uninstalling, with nullptr) is
// allowed while pops run: each site reads the pointer once, so it calls the old probe or
// the new one. A probe must stay alive until every pop that may have read it has returned.
#pragma once

#include <atomic>

namespace strata::recipes_detail {

// What a pop reports, one event at a time: a pop finished (either outcome, or settled after
// giving up); a failed transaction attempt (a conflict or another retried error); among
// those, a fulfilment pass losing to another pass and a fast-path pop losing the head; a
// wait on the oldest popper's pass; a pass run by a popper whose wait ran out; a pop that
// skipped the fast path because of a recent loss (ContentionHints).
enum class PopEvent { pop, retry, fulfil_race, fast_path_loss, sleep, help, fast_path_skip };

class PopProbe {
 public:
  PopProbe() = default;
  PopProbe(const PopProbe&) = delete;
  PopProbe& operator=(const PopProbe&) = delete;
  virtual ~PopProbe() = default;

  // Between a pop transaction's reads and its commit, in either mode.
  virtual void before_commit() {}
  virtual void count(PopEvent /*event*/) {}
};

// Installs `probe` for every pop of the process, replacing any other; nullptr: none.
void install_pop_probe(PopProbe* probe);

namespace pop_probe_internal {
extern std::atomic<PopProbe*> installed;
}  // namespace pop_probe_internal

// What the pop paths call the probe through: each does nothing when none is installed.
inline void probe_before_commit() {
  if (PopProbe* probe = pop_probe_internal::installed.load(std::memory_order_acquire)) {
    probe->before_commit();
  }
}
inline void probe_count(PopEvent event) {
  if (PopProbe* probe = pop_probe_internal::installed.load(std::memory_order_acquire)) {
    probe->count(event);
  }
}

}  // namespace strata::recipes_detail
