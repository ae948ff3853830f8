#include "strata/queue.hpp"

#include <chrono>
#include <cstdint>
#include <utility>

#include "recipes/blocking_pop.hpp"
#include "recipes/high_contention.hpp"
#include "recipes/random_id.hpp"

namespace strata {
namespace {

using recipes_detail::End;

}  // namespace

Queue::Queue(Subspace subspace, bool high_contention)
    : subspace_(std::move(subspace)), items_(subspace_.range()), high_contention_(high_contention) {
  waiters_key_ = recipes_detail::waiters_key(subspace_);
  if (!waiters_key_.empty()) items_and_count_end_ = waiters_key_ + '\x00';
  if (high_contention_) {
    requests_ = recipes_detail::bookkeeping(subspace_, Tuple{"pop"});
    results_ = recipes_detail::bookkeeping(subspace_, Tuple{"result"});
  }
}

void Queue::enqueue(Transaction& tr, std::string_view value) const {
  // The recipe's "for key, _ in tr.snapshot.get_range(...)", visited: only the key is used.
  std::int64_t index = 1;
  auto last_item = [&](std::string_view key, std::string_view) {
    index = recipes_detail::item_position(subspace_, key) + 1;
  };
  // Without a waiter count (an empty prefix) every enqueue signals. Else the count is the
  // first key after the items, so the same reverse read finds it when it exists and the
  // last item when it does not (nearly always). The count is read serializably: a waiter
  // that registers or leaves after this read and before this commit makes the commit
  // conflict, and the retry sees the count as it is (docs/decisions/0006).
  bool signal = waiters_key_.empty();
  if (!signal) {
    tr.snapshot().visit_range(items_.begin, items_and_count_end_, {.limit = 1, .reverse = true},
                              [&](std::string_view key, std::string_view row_value) {
                                if (key == waiters_key_) {
                                  signal = true;
                                } else {
                                  last_item(key, row_value);
                                }
                              });
    tr.add_read_conflict_key(waiters_key_);
  }
  if (signal) tr.snapshot().visit_range(items_, {.limit = 1, .reverse = true}, last_item);
  tr.set(recipes_detail::numbered_item_key(subspace_, index), value);
  if (signal) recipes_detail::signal_waiters(tr, subspace_.key());  // wakes dequeue_wait
}

std::optional<std::string> Queue::dequeue(Transaction& tr) const {
  return recipes_detail::pop_simple(tr, items_, End::first, true);
}

std::optional<std::string> Queue::peek(Transaction& tr) const {
  return recipes_detail::pop_simple(tr, items_, End::first, false);
}

bool Queue::empty(Transaction& tr) const { return !peek(tr).has_value(); }

void Queue::enqueue(Database& db, std::string_view value) const {
  db.run([&](Transaction& tr) { enqueue(tr, value); });
}

std::optional<std::string> Queue::dequeue(Database& db) const {
  if (!high_contention_) return recipes_detail::pop_simple(db, items_, End::first);
  return recipes_detail::pop_staged(
      db, recipes_detail::StagedLayout{items_, requests_, results_, End::first});
}

bool Queue::dequeue(Database& db, std::string& out) const {
  if (!high_contention_) return recipes_detail::pop_simple(db, items_, End::first, out);
  return recipes_detail::pop_into(out, [&] { return dequeue(db); });
}

std::optional<std::string> Queue::peek(Database& db) const {
  return db.run([&](Transaction& tr) { return peek(tr); });
}

bool Queue::empty(Database& db) const {
  return db.run([&](Transaction& tr) { return empty(tr); });
}

std::optional<std::string> Queue::dequeue_wait(Database& db,
                                               std::chrono::milliseconds timeout) const {
  return recipes_detail::pop_wait(db, subspace_.key(), waiters_key_, timeout,
                                  [&] { return dequeue(db); });
}

}  // namespace strata
