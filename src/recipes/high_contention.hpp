// recipes/high_contention.hpp: the pop machinery shared by Queue and PriorityQueue.
//
// pop_simple is the documented recipe's pop inside one transaction. pop_staged is
// FoundationDB's high-contention queue layer (docs/recipes.md, "High-contention mode"): a
// fast path when no pop is waiting, else a pop request served by fulfilment passes, in request
// order, with the items in item order. Each fulfilment writes the result and does serializable
// point reads of exactly the item key and request key it consumes, so two fulfillers that consume
// the same item or request conflict (1020) instead of losing or duplicating it. Requests left over
// when items run out are cleared without a result, which their owners read as "empty".
// Changes from the layer (docs/recipes.md, docs/decisions/0004 and 0017):
//   - the popper holding the oldest request runs the passes while the others wait on
//     watches, instead of every waiter racing the same batch;
//   - a pass keeps the item it pairs with its own popper's request;
//   - requests are keyed (versionstamp, id), so they sort in the order they committed;
//   - the fast path and the wait bound adapt to the contention seen (ContentionHints);
//   - requests older than the database's opening (Database::opened_version), whose poppers
//     are gone, are withdrawn unserved, and the items served to such poppers but never
//     collected (result slots keyed like the request) are delivered again first.
//
// The pops report to the installed PopProbe, if any (recipes/pop_probe.hpp).
//
// Thread safety: free functions; StagedLayout is an immutable value.
#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <utility>

#include "strata/database.hpp"
#include "strata/subspace.hpp"
#include "strata/transaction.hpp"

namespace strata::recipes_detail {

// Which end of the items a pop takes: the first key (Queue, pop_min) or the last (pop_max).
enum class End { first, last };

struct StagedLayout {
  KeyRange items;     // the items: every key in it is an item
  Subspace requests;  // (Versionstamp, Bytes id) -> ""
  Subspace results;   // (Versionstamp, Bytes id) of the request served -> the value
  End end = End::first;
};

// Bounds of the wait of a popper whose request is not the oldest. It waits on watches of the
// oldest request and its own, so a pass wakes it at once; the bound only matters when the
// oldest popper stalls, and then the waiter runs a pass itself. The first wait is twice the
// popper's registration time (about one round trip to the store), at least kFirstBackoff;
// each wait that runs out doubles it, up to kMaxBackoff. (The layer sleeps 10 ms doubling to
// 1 s between checks, sized for a networked cluster.)
inline constexpr std::chrono::microseconds kFirstBackoff{500};
inline constexpr std::chrono::microseconds kMaxBackoff{100000};
// Requests and items taken per fulfilment transaction.
inline constexpr int kFulfilBatch = 100;

// Builds the bookkeeping subspaces under key() + "\xff" (outside items.range()).
// Throws Error(invalid_argument) for an empty prefix.
Subspace bookkeeping(const Subspace& items, const Tuple& name);

// Reads the first (or last) item serializably; when `take`, clears it. Returns its value.
std::optional<std::string> pop_simple(Transaction& tr, const KeyRange& items, End end, bool take);
// The same, the value assigned into `out`; false, with `out` empty, when there is no item.
bool pop_simple(Transaction& tr, const KeyRange& items, End end, bool take, std::string& out);

// pop_simple in Database::run. The second form leaves `out` empty when there is no item or
// when it throws.
std::optional<std::string> pop_simple(Database& db, const KeyRange& items, End end);
bool pop_simple(Database& db, const KeyRange& items, End end, std::string& out);

// The staged high-contention pop.
std::optional<std::string> pop_staged(Database& db, const StagedLayout& layout);

// A pop returning an optional, made to fill `out`: false, with `out` empty, when it found
// no item; `out` is emptied first, so it is empty too if the pop throws.
template <class Pop>
bool pop_into(std::string& out, const Pop& pop) {
  out.clear();
  std::optional<std::string> value = pop();
  if (!value) return false;
  out = std::move(*value);
  return true;
}

}  // namespace strata::recipes_detail
