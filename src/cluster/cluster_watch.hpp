// cluster/cluster_watch.hpp: a strata::Watch over a FoundationDB watch future.
//
// The future's one callback (set when the watch is made) finishes the watch's state:
// fired when the future is ready, cancelled for operation_cancelled (1101), failed with
// any other error (1025 for a transaction reset or destroyed uncommitted, 1032 past
// MAX_WATCHES, the commit's error). Waiters wait on the state, not on the future, so any
// number of threads may wait, with or without a deadline, and on_ready listeners run
// where the state finishes: on FoundationDB's network thread, or in cancel(). A waiter
// returns once the listeners registered before the watch finished have run (on their own
// thread, a listener sees the outcome at once).
//
// Lifetime: the state owns the future and is shared by the handle and by the pending
// callback, so the future is destroyed only once the callback has run (FoundationDB calls
// it exactly once, when the future becomes ready or is cancelled). The handle, shared by
// the copies of one strata::Watch, cancels the watch when the last copy goes.
//
// Thread safety: every method from any thread.
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <vector>

#include "strata/error.hpp"

#include "cluster/client.hpp"

namespace strata::cluster {

class ClusterWatch {
 public:
  // Takes `future`, a watch future just made (destroying it if this throws).
  static std::shared_ptr<ClusterWatch> make(const FdbApi& api, FDBFuture* future);
  ~ClusterWatch();  // cancels
  ClusterWatch(const ClusterWatch&) = delete;
  ClusterWatch& operator=(const ClusterWatch&) = delete;

  // Watch::wait / wait_for (nullopt: no deadline): true when fired, false when cancelled
  // or timed out; throws the failure's error.
  bool wait_until(std::optional<std::chrono::steady_clock::time_point> deadline);
  void cancel();
  void on_ready(std::function<void()> callback);
  // Fails the watch with `code` now, as its transaction does to the watches it made when
  // it is cancelled, reset or destroyed before committing (FoundationDB does the same,
  // later, on its network thread).
  void fail(fdb_error_t code);

  struct State;

 private:
  explicit ClusterWatch(std::shared_ptr<State> state) : state_(std::move(state)) {}
  std::shared_ptr<State> state_;
};

}  // namespace strata::cluster
