#include "recipes/high_contention.hpp"

#include <algorithm>
#include <condition_variable>
#include <cstddef>
#include <cstring>
#include <memory>
#include <mutex>
#include <thread>
#include <utility>
#include <vector>

#include "strata/error.hpp"
#include "strata/tuple.hpp"

#include "recipes/contention.hpp"
#include "recipes/pop_probe.hpp"
#include "recipes/random_id.hpp"

namespace strata::recipes_detail {
namespace {

// Whether a pop request is waiting, from a snapshot read.
bool requests_waiting(Transaction& tr, const Subspace& requests) {
  return tr.snapshot().visit_range(requests.range(), {.limit = 1},
                                   [](std::string_view, std::string_view) {}) != 0;
}

// A pop request: (versionstamp, Bytes id) -> "". The layer keys requests by (index, id),
// with the index read from a snapshot, so two registrations that overlap take the same
// index and order by their random ids: a request committed later can sort ahead of one
// whose popper already runs a pass as the oldest, and the two passes then race for the same
// items. The commit's versionstamp orders requests exactly as their registrations commit
// (docs/decisions/0004-pop-requests-in-commit-order.md).
class Request {
 public:
  // Writes the request in `tr`; its key is known once `tr` commits (key()).
  Request(Transaction& tr, const StagedLayout& layout)
      : layout_(&layout), id_(random_id()), tr_(&tr) {
    tr.atomic_op(MutationType::set_versionstamped_key,
                 layout.requests.pack_with_versionstamp(Tuple{Versionstamp::incomplete(), id_}),
                 "");
  }
  // REQUIRES: the registering transaction committed.
  std::string key() const { return layout_->requests.pack(Tuple{stamp(), id_}); }
  // Where a pass that serves the request leaves the item: (versionstamp, id) as in key().
  std::string result_key() const { return layout_->results.pack(Tuple{stamp(), id_}); }

 private:
  Versionstamp stamp() const {
    Versionstamp stamp;
    std::string committed = tr_->versionstamp();
    std::copy(committed.begin(), committed.end(), stamp.tr.begin());
    return stamp;
  }

  const StagedLayout* layout_;
  Bytes id_;
  Transaction* tr_;
};

// Whether the pop request at `key` was registered at or below `opened`, the version the
// database was opened at (Database::opened_version): its popper went with the process (or
// the opening) that made it. Serving it would hand an item to a result slot nobody
// collects: the item would be lost.
bool registered_before(const Subspace& requests, std::string_view key, Version opened) {
  if (opened <= 0) return false;  // in memory, or a new database: nothing is that old
  const Tuple request = requests.unpack(key);
  // A request keyed (index, id), as strata keyed them before requests carried their
  // versionstamp, was left by an older strata: as abandoned (and it sorts first).
  if (request.size() == 0 || !request[0].is<Versionstamp>()) return true;
  const auto& stamp = request[0].get<Versionstamp>();
  Version version = 0;
  for (std::size_t i = 0; i < 8; ++i) version = (version << 8) | stamp.tr[i];
  return version <= opened;
}

// The result slot of the request at `request_key`: the same (versionstamp, id) tuple under
// the results subspace.
std::string result_key_of(const StagedLayout& layout, std::string_view request_key) {
  return layout.results.key() + std::string(request_key.substr(layout.requests.key().size()));
}

// Up to `limit` result slots of requests registered at or below `opened`: items a pass
// served to a popper that went with an earlier opening before it collected them. They are
// out of the queue and in nobody's hands, so passes deliver them again, before any item.
// (Result slots keyed by the id alone, from before slots carried the versionstamp, sort
// first and are as abandoned.)
std::vector<KeyValue> abandoned_results(ReadView snap, const StagedLayout& layout, Version opened,
                                        int limit) {
  if (opened <= 0 || limit <= 0) return {};
  Versionstamp newer;  // the first stamp of the opening: (opened + 1, 0)
  newer.tr.fill(0);
  for (std::size_t i = 0; i < 8; ++i) {
    newer.tr[7 - i] = static_cast<std::uint8_t>(static_cast<std::uint64_t>(opened + 1) >> (8 * i));
  }
  return snap.get_range(layout.results.range().begin, layout.results.pack(Tuple{newer}),
                        {.limit = limit});
}

// What one fulfilment pass did for the popper that ran it.
struct Pass {
  bool any = false;         // there were requests to serve
  bool more = false;        // it took a full batch of requests: another pass may have work
  bool served_own = false;  // it resolved the popper's own request: `own` is the outcome
  std::optional<std::string> own;
};

// One fulfilment pass, up to its commit: pairs up to kFulfilBatch requests with items in
// order. The popper's own request, when paired, keeps its item instead of writing it to the
// result slot, which saves the transaction that would collect it. Requests registered
// before the database's opening (registered_before) are withdrawn unserved, taking no item.
Pass plan_pass(Transaction& tr, const StagedLayout& layout, std::string_view own_request,
               Version opened) {
  ReadView snap = tr.snapshot();
  auto requests = snap.get_range(layout.requests.range(), {.limit = kFulfilBatch});
  Pass pass;
  if (requests.empty()) return pass;
  pass.any = true;
  pass.more = requests.size() == static_cast<std::size_t>(kFulfilBatch);
  std::erase_if(requests, [&](const KeyValue& request) {
    if (!registered_before(layout.requests, request.key, opened)) return false;
    (void)tr.get(request.key);  // a conflict with any other pass that consumes it
    tr.clear(request.key);
    return true;
  });
  if (requests.empty()) return pass;
  // What the pass hands out, in order: abandoned results, then items from the queue's end.
  auto items = abandoned_results(snap, layout, opened, static_cast<int>(requests.size()));
  if (items.size() < requests.size()) {
    auto queued =
        snap.get_range(layout.items, {.limit = static_cast<int>(requests.size() - items.size()),
                                      .reverse = layout.end == End::last});
    items.insert(items.end(), std::make_move_iterator(queued.begin()),
                 std::make_move_iterator(queued.end()));
  }
  std::size_t i = 0;
  for (; i < requests.size() && i < items.size(); ++i) {
    // Serializable point reads of exactly the keys consumed, before clearing them.
    // (They see what the snapshot saw, at the same read version; a mismatch would mean the
    // store changed under us, so give the pass up as a conflict.)
    if (!tr.get(items[i].key) || !tr.get(requests[i].key)) {
      throw Error(ErrorCode::not_committed, "fulfilment saw a consumed key vanish");
    }
    if (requests[i].key == own_request) {
      pass.served_own = true;
      pass.own = std::move(items[i].value);
    } else {
      tr.set(result_key_of(layout, requests[i].key), items[i].value);
    }
    tr.clear(items[i].key);
    tr.clear(requests[i].key);
  }
  for (; i < requests.size(); ++i) {  // no items left: "empty" for these requests
    (void)tr.get(requests[i].key);
    tr.clear(requests[i].key);
    if (requests[i].key == own_request) pass.served_own = true;  // own stays nullopt
  }
  return pass;
}

// Readies `tr` for the next attempt of a loop: a reset, unless on_error has just readied it
// for a retry (`retrying`). A reset zeroes the retry count and restarts the timeout, so a
// loop that reset after every failure would retry forever, whatever the limits say.
void next_attempt(Transaction& tr, bool& retrying) {
  if (!retrying) tr.reset();
  retrying = false;
}

// Thrown by fulfil_all when its transaction's on_error gave up (the error, not retryable or
// past the retry limit): the transaction is cancelled then, so the popper settles its
// request rather than ask on_error again (which would answer transaction_cancelled).
struct GaveUp {
  Error error;
};

// Fulfils until a pass serves the popper's own request, sees a short batch, or loses a race
// (1020: someone else served those requests; go check). Returns the own outcome if served.
std::optional<std::optional<std::string>> fulfil_all(Transaction& tr, const StagedLayout& layout,
                                                     std::string_view own_request, Version opened,
                                                     ContentionHints& hints,
                                                     std::chrono::microseconds bound) {
  bool retrying = false;
  for (;;) {
    next_attempt(tr, retrying);
    Pass pass;
    try {
      pass = plan_pass(tr, layout, own_request, opened);
      if (!pass.any) return std::nullopt;
      probe_before_commit();
      tr.commit();
      hints.pass_landed();
      if (pass.served_own) return std::move(pass.own);
      if (!pass.more) return std::nullopt;
    } catch (const Error& e) {
      // The own item was taken out of the queue in memory only: if the commit's fate is
      // unknown, so is the pop's, and retrying could lose the item. Say so.
      if (pass.served_own && e.error_code() == ErrorCode::commit_unknown_result) throw;
      probe_count(PopEvent::retry);
      if (e.error_code() == ErrorCode::not_committed) {
        probe_count(PopEvent::fulfil_race);
        hints.pass_lost(bound);
        return std::nullopt;
      }
      try {
        tr.on_error(e);  // backs off, or gives up (the transaction is cancelled then)
        retrying = true;
      } catch (const Error& given_up) {
        throw GaveUp{given_up};
      }
    }
  }
}

// Waits until the popper's own request or the oldest request changes (a pass served or
// cleared it), up to `timeout`: watches on both keys, armed by committing `tr`. True if one
// fired.
bool wait_for_progress(Transaction& tr, const std::string& own_request,
                       const std::string& head_request, std::chrono::microseconds timeout) {
  struct Signal {
    std::mutex mu;
    std::condition_variable cv;
    bool fired = false;
  };
  auto signal = std::make_shared<Signal>();
  Watch own = tr.watch(own_request);
  Watch head = tr.watch(head_request);
  tr.commit();
  for (Watch* w : {&own, &head}) {
    w->on_ready([signal] {
      std::lock_guard lock(signal->mu);
      signal->fired = true;
      signal->cv.notify_all();
    });
  }
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  bool fired;
  {
    std::unique_lock lock(signal->mu);
    fired = signal->cv.wait_until(lock, deadline, [&] { return signal->fired; });
  }
  // A watch that failed (too_many_watches: the database's 10,000 are in use) is ready at
  // once without any change. That is no progress: wait out the bound as a popper without
  // watches would, or the popper would spin behind a stalled oldest request forever.
  auto changed = [](Watch& w) {
    try {
      return w.wait_for(std::chrono::milliseconds(0));
    } catch (const Error&) {
      return false;
    }
  };
  if (fired && !changed(own) && !changed(head)) {
    std::this_thread::sleep_until(deadline);
    fired = false;
  }
  own.cancel();
  head.cancel();
  return fired;
}

// The popper gives up with `error` (not retryable, or past its retry limit) after its
// request was registered. Left behind, the request would be served later and its item
// lost, so it is settled first: if a pass served it, the pop's outcome is returned (the
// item, or nullopt for "empty") instead of the error; otherwise the request is withdrawn
// and `error` rethrown. If settling fails too (the database failed), `error` is rethrown
// and the request stays, for the reopen to withdraw (registered_before).
std::optional<std::string> settle(Database& db, const std::string& request_key,
                                  const std::string& result_key, const Error& error) {
  Transaction tr = db.create_transaction();
  // The caller's limits are what gave up: settling has none.
  tr.set_timeout(std::chrono::milliseconds(0));
  tr.set_retry_limit(-1);
  for (;;) {
    bool withdrawn = false;
    std::optional<std::string> value;
    try {
      if (tr.get(request_key)) {
        tr.clear(request_key);
        withdrawn = true;
      } else if ((value = tr.get(result_key))) {
        tr.clear(result_key);
      }
      tr.commit();
    } catch (const Error& e) {
      try {
        tr.on_error(e);
      } catch (const Error&) {
        throw error;
      }
      continue;
    }
    if (withdrawn) throw error;
    return value;
  }
}

}  // namespace

Subspace bookkeeping(const Subspace& items, const Tuple& name) {
  if (items.key().empty()) {
    throw Error(ErrorCode::invalid_argument,
                "high-contention mode needs a non-empty subspace prefix");
  }
  return Subspace(name, items.key() + "\xff");
}

namespace {

// copy_into's other case: `to` of another size. One too small (a caller's new, empty
// string) is replaced by a copy made at from's size, rather than grown and then
// overwritten.
[[gnu::noinline]] void copy_resized(std::string& to, std::string_view from) {
  if (to.capacity() < from.size()) {
    to = std::string(from);
  } else {
    to.assign(from);
  }
}

// to = from, for a `to` that usually has from's size already (a queue's values and item
// keys): one copy in place, without assign's general path (aliasing, growth), which
// copy_resized takes out of line, so the visitors that call this stay small.
// REQUIRES: `from` does not point into `to`.
void copy_into(std::string& to, std::string_view from) {
  if (to.size() != from.size()) [[unlikely]] {
    copy_resized(to, from);
    return;
  }
  if (!from.empty()) std::memcpy(to.data(), from.data(), from.size());
}

// Where a pop puts the value it read, and how it says there was none: the caller's string,
// reused (copy_into), or an optional's string constructed from the value.
void take_value(std::string& to, std::string_view from) { copy_into(to, from); }
void take_value(std::optional<std::string>& to, std::string_view from) { to.emplace(from); }
void drop_value(std::string& to) { to.clear(); }
void drop_value(std::optional<std::string>& to) { to.reset(); }

// Copies `key` to the front of `buffer`, which keeps the room of the longest key it has
// held (item keys vary in length: their priority, their position and the escapes in their
// ids), so that a key of another length is one copy too, not a resize and a copy.
std::string_view hold_key(std::string& buffer, std::string_view key) {
  if (buffer.size() < key.size()) buffer.resize(key.size());
  if (!key.empty()) std::memcpy(buffer.data(), key.data(), key.size());
  return {buffer.data(), key.size()};
}

template <class Value>
bool pop_first(Transaction& tr, const KeyRange& items, End end, bool take, Value& out) {
  // Visited, not copied into a vector of rows: the value is the one copy made, and the key
  // goes to the calling thread's buffer for the clear (a row vector would be three
  // allocations).
  thread_local std::string buffer;
  std::string_view key;
  bool found = false;
  tr.visit_range(items, {.limit = 1, .reverse = end == End::last},
                 [&](std::string_view k, std::string_view v) {
                   take_value(out, v);  // both views point into strata's memory
                   found = true;
                   if (take) key = hold_key(buffer, k);
                 });
  if (!found) {
    drop_value(out);
    return false;
  }
  if (take) tr.clear(key);
  return true;
}

template <class Value>
bool pop_first(Database& db, const KeyRange& items, End end, Value& out) {
  bool first_attempt = true;
  bool found = false;
  try {
    found = db.run([&](Transaction& tr) {
      if (!first_attempt) probe_count(PopEvent::retry);
      first_attempt = false;
      const bool popped = pop_first(tr, items, end, true, out);
      probe_before_commit();
      return popped;
    });
  } catch (...) {
    drop_value(out);  // a value a failed attempt read was not taken
    throw;
  }
  probe_count(PopEvent::pop);
  return found;
}

}  // namespace

bool pop_simple(Transaction& tr, const KeyRange& items, End end, bool take, std::string& out) {
  return pop_first(tr, items, end, take, out);
}

std::optional<std::string> pop_simple(Transaction& tr, const KeyRange& items, End end, bool take) {
  std::optional<std::string> value;
  pop_first(tr, items, end, take, value);
  return value;
}

bool pop_simple(Database& db, const KeyRange& items, End end, std::string& out) {
  return pop_first(db, items, end, out);
}

std::optional<std::string> pop_simple(Database& db, const KeyRange& items, End end) {
  std::optional<std::string> value;
  pop_first(db, items, end, value);
  return value;
}

std::optional<std::string> pop_staged(Database& db, const StagedLayout& layout) {
  Transaction tr = db.create_transaction();
  const Version opened = db.opened_version();
  std::string request_key, result_key;
  const auto started = std::chrono::steady_clock::now();

  // Step 1, the fast path: nobody waiting -> the simple pop; else queue up behind them.
  // While the gate is closed (a fast-path pop lost recently), go straight to step 2.
  ContentionHints& hints = contention_hints(layout.requests.key());
  if (hints.fast_path_open()) {
    bool fast = false;
    try {
      if (!requests_waiting(tr, layout.requests) &&
          abandoned_results(tr.snapshot(), layout, opened, 1).empty()) {
        fast = true;
        auto value = pop_simple(tr, layout.items, layout.end, true);
        probe_before_commit();
        tr.commit();
        hints.fast_path_won();
        probe_count(PopEvent::pop);
        return value;
      }
      Request request(tr, layout);
      probe_before_commit();
      tr.commit();
      request_key = request.key();
      result_key = request.result_key();
    } catch (const Error& e) {
      if (!e.retryable()) throw;
      probe_count(PopEvent::retry);
      if (fast && e.error_code() == ErrorCode::not_committed) {
        probe_count(PopEvent::fast_path_loss);
        hints.fast_path_lost();
      }
      request_key.clear();
    }
  } else {
    probe_count(PopEvent::fast_path_skip);
  }

  // Step 2: after losing the race, or with the gate closed, register.
  bool retrying = false;
  while (request_key.empty()) {
    next_attempt(tr, retrying);
    try {
      Request request(tr, layout);
      probe_before_commit();
      tr.commit();
      request_key = request.key();
      result_key = request.result_key();
    } catch (const Error& e) {
      probe_count(PopEvent::retry);
      tr.on_error(e);
      retrying = true;
    }
  }

  // Step 3: serve. The popper holding the oldest request runs fulfilment passes; the others
  // wait for its pass (see wait_for_progress) up to a backoff that doubles to a cap, and run
  // a pass themselves only when that runs out, so passes seldom race each other. The first
  // wait is twice what registering took, which is about a transaction's round trip here:
  // long enough for the oldest popper's pass to land, whatever the latency to the store.
  auto registering = std::chrono::duration_cast<std::chrono::microseconds>(
      std::chrono::steady_clock::now() - started);
  std::chrono::microseconds backoff =
      hints.help_bound(std::clamp(2 * registering, kFirstBackoff, kMaxBackoff));
  bool help = false;
  // The popper gives up (an error not retryable, or past its retry limit): its request is
  // settled first (see settle).
  auto give_up = [&](const Error& error) {
    auto value = settle(db, request_key, result_key, error);
    probe_count(PopEvent::pop);
    return value;
  };
  for (;;) {
    next_attempt(tr, retrying);
    try {
      if (!tr.get(request_key)) {  // served by someone else's pass: collect the result
        auto value = tr.get(result_key);
        if (value) {
          tr.clear(result_key);
          probe_before_commit();
          tr.commit();
        }
        probe_count(PopEvent::pop);
        return value;
      }
      auto head = tr.snapshot().get_range(layout.requests.range(), {.limit = 1});
      // The oldest popper runs the passes; a request left by an earlier opening has no
      // popper to run one, so whoever finds it at the head does.
      if (help || head.empty() || head[0].key == request_key ||
          registered_before(layout.requests, head[0].key, opened)) {
        if (help) probe_count(PopEvent::help);
        help = false;
        if (auto own = fulfil_all(tr, layout, request_key, opened, hints, backoff)) {
          probe_count(PopEvent::pop);
          return std::move(*own);
        }
        continue;
      }
      probe_count(PopEvent::sleep);
      if (!wait_for_progress(tr, request_key, head[0].key, backoff)) {
        help = true;
        backoff = std::min(backoff * 2, kMaxBackoff);
      }
    } catch (const GaveUp& g) {  // a pass's on_error gave up: settle, asking no more
      return give_up(g.error);
    } catch (const Error& e) {
      // An unknown outcome (the log failed) may hide a pop already done: a retry or a
      // settle would read the request as served empty and lose the item. Say so instead.
      if (e.error_code() == ErrorCode::commit_unknown_result) throw;
      probe_count(PopEvent::retry);
      try {
        tr.on_error(e);
        retrying = true;
      } catch (const Error& given_up) {
        return give_up(given_up);
      }
    }
  }
}

}  // namespace strata::recipes_detail
