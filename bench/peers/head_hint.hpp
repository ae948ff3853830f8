// bench/peers/head_hint.hpp: where an engine that keeps deleted keys as tombstones (RocksDB,
// WiredTiger) starts looking for a queue's first live key, as their users do it.
//
// A pop that always seeks to the start of the table walks every tombstone left by earlier
// pops, so each pop gets slower as the run goes on. Users of these engines remember how far
// the head has moved and start the next seek there. The hint must never pass a live key, or
// an item would be stranded behind it; these classes keep that true under concurrency:
//
// QueueHead: enqueue indexes come from an in-process counter (as MongoDB allocates the
// record ids of its capped collections), so a later index never lands before the head. An
// enqueue publishes a lower bound of its index before taking it and clears it after its
// commit; a dequeue reads the floor (the counter and those bounds) before its transaction
// begins, and afterwards its hint is the smaller of the index it popped and that floor:
// every key its snapshot could not see was still pending then, so it is at or above it.
//
// PqHead: priorities arrive in any order, so a push lowers the shared hint to its own key
// before inserting it, and a pop may raise the hint to the key it popped only if no push was
// in flight when it read the hint and none started since. It also counts the items pushed
// and not yet popped: when a pop under that condition leaves none, the hint moves past the
// end, and the next push brings it down to its own key.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <limits>
#include <mutex>
#include <string>
#include <vector>

#include "peer.hpp"

namespace peers {

class QueueHead {
 public:
  static constexpr std::uint64_t kNone = std::numeric_limits<std::uint64_t>::max();

  void prepare(int threads) {
    pending_ = std::vector<Slot>(static_cast<std::size_t>(threads));
    hint_ = std::vector<Slot>(static_cast<std::size_t>(threads));
    for (auto& h : hint_) h.v.store(0);
  }
  // The index for thread t's next enqueue; call finished(t) once it committed.
  std::uint64_t allocate(int t) {
    std::atomic<std::uint64_t>& slot = pending_[idx(t)].v;
    slot.store(next_.load());
    const std::uint64_t index = next_.fetch_add(1);
    slot.store(index);
    return index;
  }
  void finished(int t) { pending_[idx(t)].v.store(kNone); }

  // Read before the dequeue's transaction begins.
  std::uint64_t floor() const {
    std::uint64_t f = next_.load();
    for (const Slot& s : pending_) f = std::min(f, s.v.load());
    return f;
  }
  // The index thread t's dequeue starts at.
  std::uint64_t start(int t) const { return hint_[idx(t)].v.load(std::memory_order_relaxed); }
  // After a dequeue of thread t popped `index` (its floor read before it began).
  void popped(int t, std::uint64_t index, std::uint64_t floor_before) {
    hint_[idx(t)].v.store(std::min(index, floor_before), std::memory_order_relaxed);
  }

 private:
  struct alignas(64) Slot {
    std::atomic<std::uint64_t> v{kNone};
  };
  static std::size_t idx(int t) { return static_cast<std::size_t>(t); }
  std::atomic<std::uint64_t> next_{1};
  std::vector<Slot> pending_, hint_;
};

class PqHead {
 public:
  struct Seen {
    std::string low;
    std::uint64_t version;
    bool quiet;  // no push in flight
  };
  // The next counter of `priority` (a per-priority sequence, so a push need not read).
  std::uint64_t next_count(int priority) {
    return counts_[static_cast<std::size_t>(priority) & 0xff].fetch_add(1);
  }
  void push_begins() {
    std::lock_guard lock(mu_);
    ++pending_;
    ++version_;
  }
  void push_inserts(const std::string& key) {
    std::lock_guard lock(mu_);
    if (key < low_) low_ = key;
    ++version_;
  }
  void push_ends(bool committed) {
    std::lock_guard lock(mu_);
    --pending_;
    if (committed) ++live_;
    ++version_;
  }
  // push_inserts(key), then write(), then push_ends with whether write returned.
  template <class Write>
  void insert(const std::string& key, Write&& write) {
    push_inserts(key);
    try {
      write();
    } catch (...) {
      push_ends(false);
      throw;
    }
    push_ends(true);
  }
  // Read before the pop's transaction begins.
  Seen seen() {
    std::lock_guard lock(mu_);
    return Seen{low_, version_, pending_ == 0};
  }
  void popped(const Seen& before, const std::string& key) {
    std::lock_guard lock(mu_);
    --live_;
    if (before.quiet && version_ == before.version) {
      if (live_ == 0) {
        low_ = kEnd;
      } else if (key > low_) {
        low_ = key;
      }
      ++version_;
    }
  }
  // Sorts after every priority-queue key.
  static constexpr const char* kEnd = "\xff\xff";

 private:
  std::mutex mu_;
  std::string low_;  // "" sorts first: the start of the table
  std::uint64_t version_ = 0;
  int pending_ = 0;
  std::int64_t live_ = 0;
  std::atomic<std::uint64_t> counts_[256] = {};
};

}  // namespace peers
