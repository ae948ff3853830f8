// The network thread and the fdb_*_network entry points.
#include "fdb_c/network.hpp"

#include <new>
#include <optional>
#include <utility>

#include "fdb_c/api_version.hpp"
#include "fdb_c/error_codes.hpp"
#include "fdb_c/future.hpp"
#include "fdb_c/options.hpp"

namespace strata::fdb_c {

Network& Network::instance() noexcept {
  // Built in static storage (Network's members allocate nothing when made), so that a
  // future's callbacks can be queued whatever memory is left; never destroyed: see the
  // header.
  alignas(Network) static unsigned char storage[sizeof(Network)];
  static Network* const kNetwork = new (storage) Network();
  return *kNetwork;
}

fdb_error_t Network::setup() {
  base::MutexLock lock(mu_);
  if (state_ != State::idle) return kNetworkAlreadySetup;
  state_ = State::set_up;
  return 0;
}

FDB_future* Network::pop_due() {
  FDB_future* f = first_due_;
  if (f == nullptr) return nullptr;
  first_due_ = std::exchange(f->next_due_, nullptr);
  if (first_due_ == nullptr) last_due_ = nullptr;
  return f;
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
    // The due timers first (see the header's Order): each completes its future, which
    // queues that future's callbacks behind those already queued.
    while (!timers_.empty() && (stop_requested_ || timers_.begin()->first <= now)) {
      std::function<void()> due = std::move(timers_.begin()->second);
      timers_.erase(timers_.begin());
      lock.unlock();
      due();
      due = nullptr;  // what it holds goes outside the lock (a release may queue)
      lock.lock();
    }
    if (FDB_future* f = pop_due()) {
      lock.unlock();
      f->run_queued_callbacks();
      f->release();  // the queue's reference
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
  // What was left queued never runs: its references and the timers are let go outside
  // the lock (a timer's task may own resources).
  FDB_future* dropped = std::exchange(first_due_, nullptr);
  last_due_ = nullptr;
  auto timers = std::move(timers_);
  auto hooks = std::move(hooks_);  // run once: the network cannot run again
  lock.unlock();
  while (dropped != nullptr) {
    FDB_future* f = dropped;
    dropped = std::exchange(f->next_due_, nullptr);
    f->release();
  }
  timers.clear();
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

void Network::queue_callbacks(FDB_future* f) noexcept {
  base::MutexLock lock(mu_);
  if (state_ == State::stopped) {
    lock.unlock();
    f->release();  // never run: the network has stopped
    return;
  }
  if (last_due_ == nullptr) {
    first_due_ = f;
  } else {
    last_due_->next_due_ = f;
  }
  last_due_ = f;
  lock.unlock();
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

// No exception leaves these (docs/decisions/0038): a hook's registration allocates, and
// out of memory returns unknown_error (4000); the others catch the std::system_error a
// mutex or condition variable may throw.
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
