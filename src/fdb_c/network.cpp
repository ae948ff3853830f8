// The network thread and the fdb_*_network entry points.
#include "fdb_c/network.hpp"

#include <optional>

#include "fdb_c/api_version.hpp"
#include "fdb_c/error_codes.hpp"
#include "fdb_c/options.hpp"

namespace strata::fdb_c {

Network& Network::instance() {
  static Network* network = new Network();  // never destroyed: see the header
  return *network;
}

fdb_error_t Network::setup() {
  base::MutexLock lock(mu_);
  if (state_ != State::idle) return kNetworkAlreadySetup;
  state_ = State::set_up;
  return 0;
}

fdb_error_t Network::run() {
  base::MutexLock lock(mu_);
  if (state_ == State::idle) return kNetworkNotSetup;
  if (state_ != State::set_up) return kNetworkCannotBeRestarted;
  state_ = State::running;
  thread_ = std::this_thread::get_id();
  std::optional<Clock::time_point> drain_until;  // set once a stop is asked for
  for (;;) {
    // Once stopping, every timer is due: its future completes now, and the callbacks that
    // brings are queued behind the others. The queue runs until it is empty, for
    // kStopDrain at most: callbacks that keep queueing more are dropped after that, so
    // that a stop always ends.
    auto now = Clock::now();
    if (stop_requested_ && !drain_until) drain_until = now + kStopDrain;
    if (drain_until && now >= *drain_until) break;
    while (!timers_.empty() && (stop_requested_ || timers_.begin()->first <= now)) {
      std::function<void()> due = std::move(timers_.begin()->second);
      timers_.erase(timers_.begin());
      try {
        tasks_.push_back(std::move(due));
      } catch (...) {  // out of memory (`due` is untouched): it runs now, ahead of the queue
        lock.unlock();
        due();
        due = nullptr;
        lock.lock();
      }
    }
    if (!tasks_.empty()) {
      std::function<void()> task = std::move(tasks_.front());
      tasks_.pop_front();
      lock.unlock();
      task();
      task = nullptr;  // what it holds goes outside the lock (a release may post)
      lock.lock();
      continue;
    }
    if (stop_requested_) break;  // nothing queued is left behind
    if (timers_.empty()) {
      cv_.wait(lock);
    } else {
      cv_.wait_until(lock, timers_.begin()->first);
    }
  }
  state_ = State::stopped;
  // What was left queued never runs: dropped outside the lock (a task may own resources).
  auto tasks = std::move(tasks_);
  auto timers = std::move(timers_);
  auto hooks = std::move(hooks_);  // run once: the network cannot run again
  lock.unlock();
  for (auto& [hook, parameter] : hooks) hook(parameter);
  return 0;
}

fdb_error_t Network::stop() {
  {
    base::MutexLock lock(mu_);
    if (state_ == State::idle) return kNetworkNotSetup;
    stop_requested_ = true;
  }
  cv_.notify_all();
  return 0;
}

fdb_error_t Network::add_completion_hook(void (*hook)(void*), void* parameter) {
  base::MutexLock lock(mu_);
  if (state_ == State::idle) return kNetworkNotSetup;
  hooks_.emplace_back(hook, parameter);
  return 0;
}

void Network::post(std::function<void()> task) {
  {
    base::MutexLock lock(mu_);
    if (state_ == State::stopped) return;
    tasks_.push_back(std::move(task));
  }
  cv_.notify_all();
}

void Network::post_at(Clock::time_point when, std::function<void()> task) {
  {
    base::MutexLock lock(mu_);
    if (state_ == State::stopped) return;
    timers_.emplace(when, std::move(task));
  }
  cv_.notify_all();
}

bool Network::is_set_up() const {
  base::MutexLock lock(mu_);
  return state_ != State::idle;
}

bool Network::on_network_thread() const {
  base::MutexLock lock(mu_);
  return state_ == State::running && thread_ == std::this_thread::get_id();
}

}  // namespace strata::fdb_c

using strata::fdb_c::Network;

// No exception leaves these (docs/decisions/0038): the network's first use and a hook's
// registration allocate; out of memory they return unknown_error (4000).
extern "C" {

fdb_error_t fdb_network_set_option(FDBNetworkOption option, const uint8_t* /*value*/,
                                   int /*value_length*/) {
  // Every network option (tracing, TLS, client threads, ...) concerns a cluster
  // connection strata does not have: accepted, without effect.
  if (strata::fdb_c::api_version() == 0) return strata::fdb_c::kApiVersionUnset;
  return strata::fdb_c::check_network_option(option);
}

fdb_error_t fdb_setup_network(void) {
  if (strata::fdb_c::api_version() == 0) return strata::fdb_c::kApiVersionUnset;
  try {
    return Network::instance().setup();
  } catch (...) {
    return strata::fdb_c::current_error();
  }
}

fdb_error_t fdb_run_network(void) {
  try {
    return Network::instance().run();
  } catch (...) {
    return strata::fdb_c::current_error();
  }
}

fdb_error_t fdb_stop_network(void) {
  try {
    return Network::instance().stop();
  } catch (...) {
    return strata::fdb_c::current_error();
  }
}

fdb_error_t fdb_add_network_thread_completion_hook(void (*hook)(void*), void* hook_parameter) {
  if (hook == nullptr) return strata::fdb_c::kClientInvalidOperation;
  try {
    return Network::instance().add_completion_hook(hook, hook_parameter);
  } catch (...) {
    return strata::fdb_c::current_error();
  }
}

}  // extern "C"
