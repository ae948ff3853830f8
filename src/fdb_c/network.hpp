// fdb_c/network.hpp: the one network thread of the process.
//
// FoundationDB's client runs every callback on the thread inside fdb_run_network; bindings
// depend on it (callbacks from many threads can deadlock them). strata does its work on
// the calling threads, so the network thread has two jobs only: run future callbacks in
// the order they were queued, and fire timers (on_error backoff).
//
// Lifecycle: setup once, run once (blocking until stop), stop once. Tasks queued before
// run wait for it. Stopping runs what is queued first, and fires the pending timers at
// once, so that every callback of a future that became ready before run returns is called
// (a callback's parameter is often the only owner of what it frees): run returns once
// the queue is empty, including tasks those tasks queued, or after kStopDrain of them
// (callbacks that keep queueing more are then dropped, unrun). Tasks queued after run
// returned never run.
//
// Thread safety: every method may be called from any thread. The instance is never
// destroyed (a binding's network thread may outlive static destructors at exit).
#pragma once

#include <chrono>
#include <deque>
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

  static Network& instance();

  fdb_error_t setup();
  fdb_error_t run();
  fdb_error_t stop();
  fdb_error_t add_completion_hook(void (*hook)(void*), void* parameter);

  // Runs `task` on the network thread.
  void post(std::function<void()> task);
  // Runs `task` on the network thread at `when` (or later).
  void post_at(Clock::time_point when, std::function<void()> task);

  bool on_network_thread() const;
  // Whether fdb_setup_network has been called (the network may have run and stopped since).
  bool is_set_up() const;

 private:
  enum class State { idle, set_up, running, stopped };
  // How long a stopping network runs what is still queued (see run()).
  static constexpr std::chrono::seconds kStopDrain{1};
  Network() = default;

  mutable base::Mutex mu_;
  base::CondVar cv_;
  State state_ GUARDED_BY(mu_) = State::idle;
  bool stop_requested_ GUARDED_BY(mu_) = false;
  std::deque<std::function<void()>> tasks_ GUARDED_BY(mu_);
  std::multimap<Clock::time_point, std::function<void()>> timers_ GUARDED_BY(mu_);
  std::vector<std::pair<void (*)(void*), void*>> hooks_ GUARDED_BY(mu_);
  std::thread::id thread_ GUARDED_BY(mu_);
};

}  // namespace strata::fdb_c
