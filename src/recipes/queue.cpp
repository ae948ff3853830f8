#include "strata/queue.hpp"

#include <algorithm>
#include <cstdint>
#include <utility>

#include "recipes/high_contention.hpp"
#include "recipes/random_id.hpp"

namespace strata {
namespace {

using recipes_detail::End;

// The operand of the signal key's atomic add: 1 as 8 little-endian bytes.
constexpr std::string_view kSignalIncrement("\x01\0\0\0\0\0\0\0", 8);

}  // namespace

Queue::Queue(Subspace subspace, bool high_contention)
    : subspace_(std::move(subspace)), high_contention_(high_contention) {
  if (high_contention_) {
    requests_ = recipes_detail::bookkeeping(subspace_, Tuple{"pop"});
    results_ = recipes_detail::bookkeeping(subspace_, Tuple{"result"});
  }
}

void Queue::enqueue(Transaction& tr, std::string_view value) const {
  auto last = tr.snapshot().get_range(subspace_.range(), {.limit = 1, .reverse = true});
  std::int64_t index = 1;
  if (!last.empty()) index = subspace_.unpack(last[0].key)[0].get<std::int64_t>() + 1;
  tr.set(subspace_.pack(Tuple{index, recipes_detail::random_id()}), value);
  // Wakes dequeue_wait; an atomic op adds no read conflict, so enqueues never conflict.
  tr.atomic_op(MutationType::add, subspace_.key(), kSignalIncrement);
}

std::optional<std::string> Queue::dequeue(Transaction& tr) const {
  return recipes_detail::pop_simple(tr, subspace_.range(), End::first, true);
}

std::optional<std::string> Queue::peek(Transaction& tr) const {
  return recipes_detail::pop_simple(tr, subspace_.range(), End::first, false);
}

bool Queue::empty(Transaction& tr) const { return !peek(tr).has_value(); }

void Queue::enqueue(Database& db, std::string_view value) const {
  db.run([&](Transaction& tr) { enqueue(tr, value); });
}

std::optional<std::string> Queue::dequeue(Database& db) const {
  if (!high_contention_) return recipes_detail::pop_simple(db, subspace_.range(), End::first);
  return recipes_detail::pop_staged(
      db, recipes_detail::StagedLayout{subspace_.range(), requests_, results_, End::first});
}

std::optional<std::string> Queue::peek(Database& db) const {
  return db.run([&](Transaction& tr) { return peek(tr); });
}

std::optional<std::string> Queue::dequeue_wait(Database& db,
                                               std::chrono::milliseconds timeout) const {
  using Clock = std::chrono::steady_clock;
  const Clock::time_point deadline = Clock::now() + timeout;
  for (;;) {
    if (auto value = dequeue(db)) return value;
    Clock::time_point now = Clock::now();
    if (now >= deadline) return std::nullopt;
    // Arm a watch on the signal key, then look again: an enqueue that committed between the
    // empty dequeue and the watch's read version would not fire it.
    Watch watch = db.run([&](Transaction& tr) { return tr.watch(subspace_.key()); });
    if (auto value = dequeue(db)) {
      watch.cancel();
      return value;
    }
    auto remaining = std::chrono::ceil<std::chrono::milliseconds>(deadline - Clock::now());
    bool fired = watch.wait_for(std::max(remaining, std::chrono::milliseconds(0)));
    watch.cancel();
    if (!fired && Clock::now() >= deadline) return dequeue(db);
  }
}

}  // namespace strata
