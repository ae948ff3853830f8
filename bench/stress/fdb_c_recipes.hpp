// The Queue and PriorityQueue recipes (simple mode) written against the C API client
// (fdb_c_client.hpp), for strata-stress --api c. Keys, values and conflicts are those of
// strata::Queue and strata::PriorityQueue byte for byte (include/strata/queue.hpp,
// priority_queue.hpp); strata's tuple layer builds and parses the key bytes only.
//
//   Queue:         subspace.pack((index, Bytes{20 random bytes})) -> value. enqueue: a
//                  snapshot reverse limit-1 read up to the waiter count at key() + "\xff"
//                  (the first key after range()) finds the count or the last index,
//                  then index + 1 (1 when empty); the count is read serializably (a read
//                  conflict on it), and while it exists the enqueue adds 1 (8 bytes, little
//                  endian) to the signal key subspace.key(). dequeue: a serializable limit-1 read
//                  of the first item, then clear it. dequeue_wait registers in the waiter count
//                  while it sleeps (docs/recipes.md).
//   PriorityQueue: subspace.pack((priority, count, Bytes{20 random bytes})) -> value. push:
//                  a snapshot reverse limit-1 read of subspace[priority].range() for the
//                  last count, then count + 1 (0 when new). pop_min / pop_max: a
//                  serializable limit-1 read of the first / last item, then clear it.
//
// The high-contention mode (staged pops) is not implemented here: constructing either
// recipe with high_contention = true throws std::invalid_argument.
// Thread safety: both are immutable configuration, shareable by any number of threads.
#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <string_view>

#include "strata/subspace.hpp"
#include "strata/tuple.hpp"

#include "fdb_c_client.hpp"

namespace stress::fdbc {

class Queue {
 public:
  explicit Queue(strata::Subspace subspace, bool high_contention = false);

  void enqueue(Transaction& tr, std::string_view value) const;
  std::optional<std::string> dequeue(Transaction& tr) const;
  // Whole transactions, through Database::run.
  void enqueue(Database& db, std::string_view value) const;
  std::optional<std::string> dequeue(Database& db) const;
  // An item as soon as one is there, or nullopt once `timeout` has passed: between
  // attempts it sleeps on a watch of the signal key (a callback on the watch future,
  // cancelled at the deadline), as strata::Queue::dequeue_wait does.
  std::optional<std::string> dequeue_wait(Database& db, std::chrono::milliseconds timeout) const;

  const strata::Subspace& subspace() const { return subspace_; }

 private:
  strata::Subspace subspace_;
  strata::KeyRange items_;           // subspace_.range(), built once (as strata::Queue does)
  std::string waiters_key_;          // empty for an empty prefix: every enqueue signals
  std::string items_and_count_end_;  // waiters_key_ + 00
};

class PriorityQueue {
 public:
  explicit PriorityQueue(strata::Subspace subspace, bool high_contention = false);

  void push(Transaction& tr, std::string_view value, const strata::Element& priority) const;
  std::optional<std::string> pop_min(Transaction& tr) const;
  std::optional<std::string> pop_max(Transaction& tr) const;
  // Whole transactions, through Database::run.
  void push(Database& db, std::string_view value, const strata::Element& priority) const;
  std::optional<std::string> pop_min(Database& db) const;
  std::optional<std::string> pop_max(Database& db) const;

  const strata::Subspace& subspace() const { return subspace_; }

 private:
  strata::Subspace subspace_;
  strata::KeyRange items_;  // subspace_.range(), built once
};

}  // namespace stress::fdbc
