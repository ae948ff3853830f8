// engine/watch_registry.hpp: watches armed by committed transactions, fired by later
// commits that change the watched key.
//
// A watch remembers the value its transaction saw. It is armed when that transaction
// commits; from then on, any commit that writes the key (set, clear, clear_range, atomic
// op) and leaves a different value fires it. Commits pay nothing when no watch is armed:
// the pipeline checks one counter before looking anything up.
//
// Thread safety: all methods from any thread. WatchState is shared by the public Watch
// handle, the transaction that made it and the registry.
#pragma once

#include <atomic>
#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "strata/error.hpp"

#include "base/mutex.hpp"
#include "base/thread_annotations.hpp"
#include "engine/write_map.hpp"

namespace strata::engine {

class WatchState {
 public:
  enum class Status { pending, armed, fired, cancelled, failed };

  WatchState(std::string key, std::optional<std::string> seen)
      : key_(std::move(key)), seen_(std::move(seen)) {}

  const std::string& key() const { return key_; }
  const std::optional<std::string>& seen() const { return seen_; }

  // Moves a pending or armed watch to a final status, wakes waiters and runs the
  // listeners (outside the lock, on this thread); no-op otherwise.
  void finish(Status status, ErrorCode error = ErrorCode::success);
  // Runs `listener` when the watch reaches a final status, or now if it has.
  void on_finish(std::function<void()> listener);
  bool mark_armed();  // false when it already finished (e.g. cancelled)
  Status status() const;

  // Blocks until final. Returns true when fired; throws the failure's error.
  bool wait_until(std::optional<std::chrono::steady_clock::time_point> deadline);

 private:
  const std::string key_;
  const std::optional<std::string> seen_;
  mutable base::Mutex mu_;
  base::CondVar cv_;
  Status status_ GUARDED_BY(mu_) = Status::pending;
  ErrorCode error_ GUARDED_BY(mu_) = ErrorCode::success;
  std::vector<std::function<void()>> listeners_ GUARDED_BY(mu_);
  // The next watch a WatchRegistry::on_commit fires after this one (that call's own list,
  // built under the registry's lock once the watch left the registry).
  std::shared_ptr<WatchState> fire_next_;
  friend class WatchRegistry;
};

class WatchRegistry {
 public:
  static constexpr std::size_t kMaxWatches = 10'000;  // FoundationDB's default
  static constexpr std::size_t kMaxWatchesCeiling = 1'000'000;

  // Sets how many watches may be armed at once. REQUIRES: before any watch is armed.
  void set_limit(std::size_t limit) { limit_ = limit; }

  // Arms `watch`; `current` reads the key's committed value now. Fires at once if that
  // differs from what the transaction saw. Fails the watch with too_many_watches (1032)
  // past the limit.
  template <class ReadCurrent>
  void arm(const std::shared_ptr<WatchState>& watch, ReadCurrent current) {
    bool refused = false;
    {
      base::MutexLock lock(mu_);
      const std::size_t count = count_.load(std::memory_order_relaxed);
      if (count >= limit_ || count >= purge_at_) purge_finished();
      if (count_.load(std::memory_order_relaxed) >= limit_) {
        refused = true;
      } else {
        if (!watch->mark_armed()) return;
        watches_.emplace(watch->key(), watch);
        // seq_cst, with size()'s load: the arming side stores the count and then reads the
        // committed version (read_committed), the committer stores the version (publish)
        // and then reads the count. Only a single total order of the four rules out both
        // missing each other (a lost wake-up); on x86 it costs nothing more.
        count_.fetch_add(1, std::memory_order_seq_cst);
      }
    }
    if (refused) {
      // Outside the lock, as a firing is: finish() runs the watch's callbacks.
      watch->finish(WatchState::Status::failed, ErrorCode::too_many_watches);
      return;
    }
    // Commits published before the insert above were not checked against this watch:
    // compare with the value now, which includes them.
    if (current(watch->key()) != watch->seen()) fire(watch);
  }

  // Called by the commit pipeline after publishing a batch. `changed(key, seen)` tells
  // whether a key's current value differs from `seen` (writer side). Allocates nothing,
  // so a commit whose apply could not fail cannot fail here either: the watches to fire
  // are chained through the watches themselves, and `changed` compares in place.
  template <class Changed>
  void on_commit(const WriteMap& writes, const std::vector<std::string>& stamped_keys,
                 Changed changed) {
    if (count_.load(std::memory_order_acquire) == 0) return;
    std::shared_ptr<WatchState> to_fire;  // chained through WatchState::fire_next_
    {
      base::MutexLock lock(mu_);
      for (const auto& [key, w] : writes.points()) {
        auto [first, last] = watches_.equal_range(std::string_view(key));
        check(first, last, changed, to_fire);
      }
      for (const auto& [begin, end] : writes.cleared_ranges()) {
        check(watches_.lower_bound(begin), watches_.lower_bound(end), changed, to_fire);
      }
      for (const std::string& key : stamped_keys) {
        auto [first, last] = watches_.equal_range(key);
        check(first, last, changed, to_fire);
      }
    }
    while (to_fire != nullptr) {
      std::shared_ptr<WatchState> next = std::move(to_fire->fire_next_);
      to_fire->finish(WatchState::Status::fired);
      to_fire = std::move(next);
    }
  }

  WatchRegistry() = default;
  // Armed watches end as cancelled: their waiters return.
  ~WatchRegistry();
  WatchRegistry(const WatchRegistry&) = delete;
  WatchRegistry& operator=(const WatchRegistry&) = delete;

  void remove(const std::shared_ptr<WatchState>& watch);
  std::size_t size() const { return count_.load(std::memory_order_seq_cst); }

 private:
  using Map = std::multimap<std::string, std::shared_ptr<WatchState>, std::less<>>;
  void fire(const std::shared_ptr<WatchState>& watch);
  // Drops the watches that finished while armed (cancelled, their handles dropped); sets
  // purge_at_.
  void purge_finished() REQUIRES(mu_);
  // Moves the watches in [first, last) whose value changed (by `changed`), or that
  // finished while armed, from watches_ to the front of the chain `to_fire`.
  template <class Changed>
  void check(Map::iterator first, Map::iterator last, Changed& changed,
             std::shared_ptr<WatchState>& to_fire) REQUIRES(mu_) {
    for (auto it = first; it != last;) {
      bool done = it->second->status() != WatchState::Status::armed;  // cancelled
      if (done || changed(std::string_view(it->first), it->second->seen())) {
        it->second->fire_next_ = std::move(to_fire);
        to_fire = std::move(it->second);
        it = watches_.erase(it);
        count_.fetch_sub(1, std::memory_order_relaxed);
      } else {
        ++it;
      }
    }
  }

  base::Mutex mu_;
  Map watches_ GUARDED_BY(mu_);
  std::atomic<std::size_t> count_{0};
  std::size_t limit_ = kMaxWatches;
  // A cancelled watch stays in watches_ until a write to its key or a purge: arm() purges
  // once the count has doubled since the last purge, so cancelled watches cost amortized
  // O(1) each and never outnumber the armed ones by much (purging only at the limit would
  // let a database with no armed watch hold max_watches cancelled ones, and their values).
  static constexpr std::size_t kMinPurge = 64;
  std::size_t purge_at_ GUARDED_BY(mu_) = kMinPurge;
};

}  // namespace strata::engine
