// fdb_c/network.hpp: the one network thread of the process.
//
// FoundationDB's client runs every callback on the thread inside fdb_run_network; bindings
// depend on it (callbacks from many threads can deadlock them). strata does its work on
// the calling threads, so the network thread has two jobs only: run the callbacks of
// futures that became ready, and fire timers (on_error backoff).
//
// Queueing a future's callbacks allocates nothing (an intrusive list through the futures,
// queue_callbacks), so a future that becomes ready while memory is short still calls its
// callbacks: bindings that wait through a callback (Go's BlockUntilReady, Java, Rust,
// Node.js, Python's on_ready) would otherwise wait forever. FoundationDB's client likewise
// allocates a callback when it is set, not when it fires.
//
// Order: the callbacks of futures run in the order the futures were queued, which is the
// order they became ready. Timers fire between them: at each turn the network fires every
// timer that is due, then runs the callbacks of the first future queued. A timer's task
// completes its future, which is queued behind those already queued; so no future's
// callbacks run ahead of a future queued before it, and a due timer waits for one future's
// callbacks at most.
//
// Lifecycle: setup once, run once (blocking until stop), stop once. Futures queued before
// run wait for it. Stopping runs what is queued first, and fires the pending timers at
// once, so that every callback of a future that became ready before run returns is called
// (a callback's parameter is often the only owner of what it frees): run returns once
// the queue is empty, including futures those callbacks queued, or after kStopDrain of
// them (callbacks that keep queueing more are then dropped, unrun). Futures queued after
// run returned never run their callbacks.
//
// Thread safety: every method may be called from any thread. The instance is never
// destroyed (a binding's network thread may outlive static destructors at exit).
#pragma once

#include <chrono>
#include <functional>
#include <map>
#include <thread>
#include <utility>
#include <vector>

#include "base/mutex.hpp"
#include "fdb_c/fdb_c.h"

namespace strata::fdb_c {

class Network {
 public:
  using Clock = std::chrono::steady_clock;

  // Made in static storage on first use: allocates nothing.
  static Network& instance() noexcept;

  fdb_error_t setup();
  fdb_error_t run();
  fdb_error_t stop();
  fdb_error_t add_completion_hook(void (*hook)(void*), void* parameter);

  // Runs the callbacks of `f`, which has just become ready, on the network thread, taking
  // over one reference the caller retained for it: the network releases it once the
  // callbacks ran, or at once (no callback called) if the network has stopped. Allocates
  // nothing and throws nothing. A future is queued at most once at a time (it becomes
  // ready once).
  void queue_callbacks(FDB_future* f) noexcept;
  // Runs `task` on the network thread at `when` (or later). Throws std::bad_alloc.
  void post_at(Clock::time_point when, std::function<void()> task);

  bool on_network_thread() const;
  // Whether fdb_setup_network has been called (the network may have run and stopped since).
  bool is_set_up() const;

 private:
  enum class State { idle, set_up, running, stopped };
  // How long a stopping network runs what is still queued (see run()).
  static constexpr std::chrono::seconds kStopDrain{1};
  Network() = default;

  // The first queued future, or nullptr; pops it.
  FDB_future* pop_due() REQUIRES(mu_);

  mutable base::Mutex mu_;
  base::CondVar cv_;
  State state_ GUARDED_BY(mu_) = State::idle;
  bool stop_requested_ GUARDED_BY(mu_) = false;
  // The futures whose callbacks are due, first to last, linked through their next_due_
  // (written under mu_ only).
  FDB_future* first_due_ GUARDED_BY(mu_) = nullptr;
  FDB_future* last_due_ GUARDED_BY(mu_) = nullptr;
  std::multimap<Clock::time_point, std::function<void()>> timers_ GUARDED_BY(mu_);
  std::vector<std::pair<void (*)(void*), void*>> hooks_ GUARDED_BY(mu_);
  std::thread::id thread_ GUARDED_BY(mu_);
};

}  // namespace strata::fdb_c
