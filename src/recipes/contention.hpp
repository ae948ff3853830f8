// recipes/contention.hpp: what the poppers of one high-contention queue in this process
// have learned about its contention, to schedule their work. Only scheduling: what a pop
// returns and which keys it reads and writes are the layer's (docs/recipes.md) either way.
//
// Two hints, both adjusted by the outcomes pops see:
//   - The fast-path gate. The layer tries the fast path (the simple pop) whenever no pop
//     request is waiting, and under contention those attempts are what lose: two poppers
//     that both see no request read the same head, and one aborts. A loss closes the gate
//     for the next `penalty` pops, which register a request directly (registration never
//     conflicts, and the oldest popper serves all requests in one pass). A loss soon after
//     the gate reopens doubles the penalty, up to kMaxPenalty; a fast-path win lowers it
//     by one, so the gate settles where losses are rare (about one per `penalty` pops).
//   - The help bound: how long a waiting popper lets the oldest popper work before it runs
//     a pass itself. Too short, and it races a pass that was about to land, so one of the
//     two loses; a lost pass doubles the bound (up to kMaxHelpBound), and each pass that
//     lands shrinks it by 1/32. It only adds to each pop's own floor (twice its
//     registration time), so a dead or stalled popper still delays the others at most
//     this long per doubling.
//
// Thread safety: all members are atomics with relaxed ordering (hints, not
// synchronisation). contention_hints() hands out one object per queue; queues whose keys
// hash alike share one, which only pools their hints.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <string_view>

namespace strata::recipes_detail {

class ContentionHints {
 public:
  static constexpr int kFirstPenalty = 8;
  static constexpr int kMaxPenalty = 1024;
  static constexpr std::chrono::microseconds kMaxHelpBound{100000};

  // True if this pop may try the fast path; false uses up one pop of a closed gate.
  bool fast_path_open();
  void fast_path_lost();
  void fast_path_won();

  // The longer of `floor` and the learned bound.
  std::chrono::microseconds help_bound(std::chrono::microseconds floor) const;
  // A fulfilment pass lost a race (to another pass, or to a fast-path pop): the learned
  // bound `used` was too short, and the fast path is contended.
  void pass_lost(std::chrono::microseconds used);
  void pass_landed();

  // Back to the hints a process starts with: the gate open, the first penalty, no learned
  // bound. For tests that need a known schedule from a queue whose name an earlier test of
  // the same process used.
  void reset();

 private:
  std::atomic<int> closed_for_{0};
  std::atomic<int> penalty_{kFirstPenalty};
  std::atomic<std::int64_t> help_bound_us_{0};
};

// The hints of the queue whose pop requests live under `requests_prefix`.
ContentionHints& contention_hints(std::string_view requests_prefix);

}  // namespace strata::recipes_detail
