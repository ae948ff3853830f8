#include "engine/watch_registry.hpp"

#include <algorithm>

#include "base/limits.hpp"

namespace strata::engine {

void WatchState::finish(Status status, ErrorCode error) {
  std::vector<std::function<void()>> listeners;
  {
    base::MutexLock lock(mu_);
    if (status_ != Status::pending && status_ != Status::armed) return;
    status_ = status;
    error_ = error;
    listeners.swap(listeners_);
  }
  cv_.notify_all();
  for (auto& listener : listeners) listener();
}

void WatchState::on_finish(std::function<void()> listener) {
  {
    base::MutexLock lock(mu_);
    if (status_ == Status::pending || status_ == Status::armed) {
      listeners_.push_back(std::move(listener));
      return;
    }
  }
  listener();
}

bool WatchState::mark_armed() {
  base::MutexLock lock(mu_);
  if (status_ != Status::pending) return false;
  status_ = Status::armed;
  return true;
}

WatchState::Status WatchState::status() const {
  base::MutexLock lock(mu_);
  return status_;
}

bool WatchState::wait_until(std::optional<std::chrono::steady_clock::time_point> deadline) {
  base::MutexLock lock(mu_);
  while (status_ == Status::pending || status_ == Status::armed) {
    if (!deadline) {
      cv_.wait(lock);
    } else if (!cv_.wait_until(lock, *deadline)) {
      // Timed out: final after all if it finished just then (as wait_until's predicate).
      if (status_ == Status::pending || status_ == Status::armed) return false;
    }
  }
  if (status_ == Status::failed)
    throw Error(error_, "watch of " + base::describe_key(key_) + " failed");
  return status_ == Status::fired;
}

void WatchRegistry::remove(const std::shared_ptr<WatchState>& watch) {
  base::MutexLock lock(mu_);
  auto [first, last] = watches_.equal_range(watch->key());
  for (auto it = first; it != last; ++it) {
    if (it->second == watch) {
      watches_.erase(it);
      count_.fetch_sub(1, std::memory_order_relaxed);
      return;
    }
  }
}

WatchRegistry::~WatchRegistry() {
  for (auto& [key, w] : watches_) w->finish(WatchState::Status::cancelled);
}

void WatchRegistry::purge_finished() {
  for (auto it = watches_.begin(); it != watches_.end();) {
    if (it->second->status() != WatchState::Status::armed) {
      it = watches_.erase(it);
      count_.fetch_sub(1, std::memory_order_relaxed);
    } else {
      ++it;
    }
  }
  purge_at_ = std::max(kMinPurge, 2 * count_.load(std::memory_order_relaxed));
}

void WatchRegistry::fire(const std::shared_ptr<WatchState>& watch) {
  remove(watch);
  watch->finish(WatchState::Status::fired);
}

}  // namespace strata::engine
