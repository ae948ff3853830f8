// recipes/blocking_pop.hpp: how a pop waits for a push, shared by Queue::dequeue_wait and
// PriorityQueue::pop_min_wait / pop_max_wait.
//
// Two keys outside the items' range() (docs/recipes.md, "Blocking pops"): the signal key,
// the bare subspace key(), which a push bumps with an atomic add while a pop waits; and
// the waiter count, key() + "\xff", where a waiting pop registers and which a push reads
// serializably, so that a push racing a registration conflicts and its retry signals. With
// an empty prefix there is no count (waiters key empty) and every push signals.
//
// Thread safety: free functions over the caller's Database and Transaction.
#pragma once

#include <chrono>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

#include "strata/database.hpp"
#include "strata/subspace.hpp"
#include "strata/transaction.hpp"

namespace strata::recipes_detail {

// The waiter count's key for `items`: key() + "\xff", the first key after range(); empty
// for an empty prefix.
std::string waiters_key(const Subspace& items);

// In a push's transaction: wakes the waiting pops (adds 1 to the signal key). A push
// calls it while a pop waits, and always with an empty prefix (no waiter count): out of
// line, so that the push's usual path does not carry the atomic operation's code.
[[gnu::noinline]] void signal_waiters(Transaction& tr, std::string_view signal_key);

// `pop` (a whole-transaction pop) until it returns an item, or nullopt once `timeout` has
// passed (a negative one is 0: one look). Between attempts it registers in the waiter count
// and sleeps on a watch of the signal key; it never polls, but every 10 ms while the
// database has no watch to spare (too_many_watches).
std::optional<std::string> pop_wait(Database& db, std::string_view signal_key,
                                    const std::string& waiters_key,
                                    std::chrono::milliseconds timeout,
                                    const std::function<std::optional<std::string>()>& pop);

}  // namespace strata::recipes_detail
