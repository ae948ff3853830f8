// strata/queue.hpp: the Queue recipe (FoundationDB's queues.rst), with the high-contention
// extension and a blocking dequeue.
//
// Layout (docs/recipes.md): an item is stored at subspace.pack((index, Bytes{20 random
// bytes})) -> value. enqueue takes the last index with a snapshot reverse limit-1 read of
// subspace.range() and writes index + 1 (1 for an empty queue); it conflicts only with a
// dequeue_wait registering or leaving (below). dequeue reads the first item serializably
// (limit 1), clears it and returns its value.
// Outside range(): the bare subspace.key() is a signal key that an enqueue bumps with an
// atomic add while a dequeue_wait is waiting; key() + "\xff", the first key after range(),
// holds the count of those waiters (which enqueue reads serializably), and key() + "\xff"
// + ... the high-contention pop requests and results. With an empty prefix there is no
// count and every enqueue bumps the signal.
//
// High-contention mode (Database& dequeue only): a dequeue that finds other pops waiting, or
// loses a race, registers a pop request and helps fulfil all outstanding requests in order
// (FoundationDB's high-contention queue layer; docs/recipes.md), then collects its own
// result.
//
// Thread safety: a Queue is immutable configuration; one object may be shared by any
// number of threads. Transaction& overloads follow the Transaction's rules.
// Errors: strata::Error as thrown by the transaction; Database& overloads retry retryable
// errors. Unpacking foreign keys inside range() throws invalid_tuple / invalid_argument.
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

class Queue {
 public:
  // high_contention = true requires a non-empty subspace prefix (else invalid_argument),
  // since the bookkeeping lives under key() + "\xff".
  explicit Queue(Subspace subspace = Subspace(Tuple{"Q"}), bool high_contention = false);

  // Composable forms: they read and write through `tr` only (the simple recipe).
  void enqueue(Transaction& tr, std::string_view value) const;
  [[nodiscard]] std::optional<std::string> dequeue(Transaction& tr) const;
  [[nodiscard]] std::optional<std::string> peek(Transaction& tr) const;
  [[nodiscard]] bool empty(Transaction& tr) const;

  // Whole transactions with the retry loop; dequeue takes the staged pop-request path when
  // high_contention is set.
  void enqueue(Database& db, std::string_view value) const;
  [[nodiscard]] std::optional<std::string> dequeue(Database& db) const;
  // The same dequeue, its value assigned into `out` (which keeps its capacity: no allocation
  // per item for a caller that reuses one buffer). Returns false, with `out` empty, when the
  // queue is empty; on a throw `out` is left empty too (docs/decisions/0019).
  bool dequeue(Database& db, std::string& out) const;
  [[nodiscard]] std::optional<std::string> peek(Database& db) const;
  [[nodiscard]] bool empty(Database& db) const;
  // An item as soon as one is there, or nullopt once `timeout` has passed (a negative one
  // is 0: one look). Sleeps on a watch of the signal key between attempts; never polls.
  [[nodiscard]] std::optional<std::string> dequeue_wait(Database& db,
                                                        std::chrono::milliseconds timeout) const;

  const Subspace& subspace() const { return subspace_; }
  bool high_contention() const { return high_contention_; }

 private:
  Subspace subspace_;
  KeyRange items_;  // subspace_.range(), built once
  bool high_contention_;
  std::string waiters_key_;          // key() + "\xff"; empty for an empty prefix
  std::string items_and_count_end_;  // waiters_key_ + "\x00": range() and the count
  Subspace requests_;                // pop requests: (Versionstamp, Bytes id) -> ""
  Subspace results_;                 // items served to requests: (Versionstamp, Bytes id) -> item
};

}  // namespace strata
