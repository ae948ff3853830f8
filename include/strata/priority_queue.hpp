// strata/priority_queue.hpp: the PriorityQueue recipe (FoundationDB's priority-queues.rst),
// with the high-contention extension for pop_min and pop_max.
//
// Layout (docs/recipes.md): an item is stored at subspace.pack((priority, count, Bytes{20
// random bytes})) -> value; keys sort by priority (tuple order, any Element), then push
// order, then at random. push takes the next count for its priority with a snapshot reverse
// limit-1 read of subspace[priority].range() (0 for a new priority).
// pop_min / peek_min read the first item, pop_max / peek_max the last, serializably.
// Outside range(), as Queue's: the bare subspace.key() is a signal key that a push bumps
// with an atomic add while a pop_min_wait or pop_max_wait waits, and key() + "\xff" holds
// the count of those waiters, which push reads serializably; so pushes conflict only with
// a waiter registering or leaving. The high-contention bookkeeping lives under
// key() + "\xff" + ..., with separate request lines for pop_min and pop_max.
//
// Thread safety: a PriorityQueue is immutable configuration; one object may be shared by
// any number of threads. Transaction& overloads follow the Transaction's rules.
// Errors: strata::Error as thrown by the transaction; Database& overloads retry retryable
// errors.
#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <string_view>

#include "strata/database.hpp"
#include "strata/subspace.hpp"
#include "strata/transaction.hpp"
#include "strata/tuple.hpp"

namespace strata {

class PriorityQueue {
 public:
  // high_contention = true requires a non-empty subspace prefix (else invalid_argument).
  explicit PriorityQueue(Subspace subspace = Subspace(Tuple{"P"}), bool high_contention = false);

  // Priorities order as tuple elements do: by type first, then by value. Every string
  // comes before every integer, and every integer before every double, so pop_min takes
  // priority 100 before priority 2.5. Give all of one queue's priorities one type.

  // Composable forms (the simple recipe).
  void push(Transaction& tr, std::string_view value, const Element& priority) const;
  [[nodiscard]] std::optional<std::string> pop_min(Transaction& tr) const;
  [[nodiscard]] std::optional<std::string> pop_max(Transaction& tr) const;
  [[nodiscard]] std::optional<std::string> peek_min(Transaction& tr) const;
  [[nodiscard]] std::optional<std::string> peek_max(Transaction& tr) const;

  // Whole transactions with the retry loop; pops take the staged path when high_contention.
  void push(Database& db, std::string_view value, const Element& priority) const;
  [[nodiscard]] std::optional<std::string> pop_min(Database& db) const;
  [[nodiscard]] std::optional<std::string> pop_max(Database& db) const;
  // The same pops, the value assigned into `out` (kept capacity, no allocation per item).
  // False, with `out` empty, when there is no item; on a throw `out` is left empty too
  // (docs/decisions/0019).
  bool pop_min(Database& db, std::string& out) const;
  bool pop_max(Database& db, std::string& out) const;
  [[nodiscard]] std::optional<std::string> peek_min(Database& db) const;
  [[nodiscard]] std::optional<std::string> peek_max(Database& db) const;
  // The lowest (highest) item as soon as there is one, or nullopt once `timeout` has passed
  // (a negative one is 0: one look; milliseconds::max() is no deadline). Sleeps on a watch
  // of the signal key between attempts, as Queue::dequeue_wait; never polls.
  [[nodiscard]] std::optional<std::string> pop_min_wait(Database& db,
                                                        std::chrono::milliseconds timeout) const;
  [[nodiscard]] std::optional<std::string> pop_max_wait(Database& db,
                                                        std::chrono::milliseconds timeout) const;

  const Subspace& subspace() const { return subspace_; }
  bool high_contention() const { return high_contention_; }

 private:
  Subspace subspace_;
  KeyRange items_;  // subspace_.range(), built once
  bool high_contention_;
  std::string waiters_key_;  // key() + "\xff"; empty for an empty prefix
  std::string count_end_;    // waiters_key_ + "\x00": the items and the count
  Subspace min_requests_;    // pop_min requests: (Versionstamp, Bytes id) -> ""
  Subspace max_requests_;    // pop_max requests
  Subspace min_results_;     // items served to pop_min requests: (Versionstamp, Bytes id) -> item
  Subspace max_results_;     // and to pop_max requests
};

}  // namespace strata
