#include "recipes/high_contention.hpp"

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <thread>
#include <tuple>
#include <utility>
#include <vector>

#include "strata/error.hpp"

#include "recipes/random_id.hpp"

namespace strata::recipes_detail {
namespace {

std::atomic<std::int64_t> g_client_latency_us{0};

void client_round_trip() {
  std::int64_t us = g_client_latency_us.load(std::memory_order_relaxed);
  if (us > 0) std::this_thread::sleep_for(std::chrono::microseconds(us));
}

// The next request index: last request's index + 1, or 0, from a snapshot read.
std::int64_t next_request_index(Transaction& tr, const Subspace& requests) {
  auto last = tr.snapshot().get_range(requests.range(), {.limit = 1, .reverse = true});
  if (last.empty()) return 0;
  return requests.unpack(last[0].key)[0].get<std::int64_t>() + 1;
}

// Writes a new pop request in `tr` and returns its key and result key.
std::pair<std::string, std::string> add_request(Transaction& tr, const StagedLayout& layout,
                                                std::int64_t index) {
  Bytes id = random_id();
  std::string request_key = layout.requests.pack(Tuple{index, id});
  std::string result_key = layout.results.pack(Tuple{std::move(id)});
  tr.get(request_key);  // as the layer: a serializable read of the brand-new key
  tr.set(request_key, "");
  return {std::move(request_key), std::move(result_key)};
}

// One fulfilment transaction: pairs up to kFulfilBatch requests with items in order and
// commits. True when it saw fewer than kFulfilBatch requests (nothing more to do).
bool fulfil_once(Transaction& tr, const StagedLayout& layout) {
  ReadView snap = tr.snapshot();
  auto requests = snap.get_range(layout.requests.range(), {.limit = kFulfilBatch});
  if (requests.empty()) return true;
  auto items =
      snap.get_range(layout.items, {.limit = kFulfilBatch, .reverse = layout.end == End::last});
  std::size_t i = 0;
  for (; i < requests.size() && i < items.size(); ++i) {
    Tuple request = layout.requests.unpack(requests[i].key);
    tr.set(layout.results.pack(Tuple{request[1]}), items[i].value);
    // Serializable point reads of exactly the keys consumed, before clearing them.
    // (They see what the snapshot saw, at the same read version; a mismatch would mean the
    // store changed under us, so give the pass up as a conflict.)
    if (!tr.get(items[i].key) || !tr.get(requests[i].key)) {
      throw Error(ErrorCode::not_committed, "fulfilment saw a consumed key vanish");
    }
    tr.clear(items[i].key);
    tr.clear(requests[i].key);
  }
  for (; i < requests.size(); ++i) {  // no items left: "empty" for these requests
    tr.get(requests[i].key);
    tr.clear(requests[i].key);
  }
  client_round_trip();
  tr.commit();
  return requests.size() < static_cast<std::size_t>(kFulfilBatch);
}

// Fulfils until a pass sees a short batch or loses a race (1020: someone else served
// those requests; go check).
void fulfil_all(Transaction& tr, const StagedLayout& layout, PopCounters& counters) {
  for (;;) {
    tr.reset();
    try {
      if (fulfil_once(tr, layout)) return;
    } catch (const Error& e) {
      ++counters.retries;
      if (e.error_code() == ErrorCode::not_committed) return;
      tr.on_error(e);  // backs off, or rethrows a non-retryable error
    }
  }
}

}  // namespace

void set_client_latency(std::chrono::microseconds latency) {
  g_client_latency_us.store(latency.count(), std::memory_order_relaxed);
}

PopCounters& pop_counters() {
  thread_local PopCounters counters;
  return counters;
}

Subspace bookkeeping(const Subspace& items, const Tuple& name) {
  if (items.key().empty()) {
    throw Error(ErrorCode::invalid_argument,
                "high-contention mode needs a non-empty subspace prefix");
  }
  return Subspace(name, items.key() + "\xff");
}

std::optional<std::string> pop_simple(Transaction& tr, const KeyRange& items, End end, bool take) {
  auto first = tr.get_range(items, {.limit = 1, .reverse = end == End::last});
  if (first.empty()) return std::nullopt;
  if (take) tr.clear(first[0].key);
  return std::move(first[0].value);
}

std::optional<std::string> pop_simple(Database& db, const KeyRange& items, End end) {
  PopCounters& counters = pop_counters();
  bool first_attempt = true;
  auto result = db.run([&](Transaction& tr) {
    if (!first_attempt) ++counters.retries;
    first_attempt = false;
    auto value = pop_simple(tr, items, end, true);
    client_round_trip();
    return value;
  });
  ++counters.pops;
  return result;
}

std::optional<std::string> pop_staged(Database& db, const StagedLayout& layout) {
  PopCounters& counters = pop_counters();
  Transaction tr = db.create_transaction();
  std::string request_key, result_key;

  // Step 1, the fast path: nobody waiting -> the simple pop; else queue up behind them.
  try {
    std::int64_t index = next_request_index(tr, layout.requests);
    if (index == 0) {
      auto value = pop_simple(tr, layout.items, layout.end, true);
      client_round_trip();
      tr.commit();
      ++counters.pops;
      return value;
    }
    std::tie(request_key, result_key) = add_request(tr, layout, index);
    client_round_trip();
    tr.commit();
  } catch (const Error& e) {
    if (!e.retryable()) throw;
    ++counters.retries;
    request_key.clear();
  }

  // Step 2: after losing the race, always register (index may be 0).
  while (request_key.empty()) {
    tr.reset();
    try {
      auto keys = add_request(tr, layout, next_request_index(tr, layout.requests));
      client_round_trip();
      tr.commit();
      std::tie(request_key, result_key) = std::move(keys);
    } catch (const Error& e) {
      ++counters.retries;
      tr.on_error(e);
    }
  }

  // Step 3: help fulfil, then check our own request; back off while it is unserved.
  std::chrono::microseconds backoff = kFirstBackoff;
  for (;;) {
    fulfil_all(tr, layout, counters);
    tr.reset();
    try {
      if (tr.get(request_key)) {
        ++counters.sleeps;
        std::this_thread::sleep_for(backoff);
        backoff = std::min(backoff * 2, kMaxBackoff);
        continue;
      }
      auto value = tr.get(result_key);
      if (value) {
        tr.clear(result_key);
        client_round_trip();
        tr.commit();
      }
      ++counters.pops;
      return value;
    } catch (const Error& e) {
      ++counters.retries;
      tr.on_error(e);
    }
  }
}

}  // namespace strata::recipes_detail
