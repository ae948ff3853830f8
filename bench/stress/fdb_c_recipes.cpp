#include "fdb_c_recipes.hpp"

#include <array>
#include <condition_variable>
#include <cstdint>
#include <cstring>
#include <mutex>
#include <random>
#include <stdexcept>
#include <utility>

namespace stress::fdbc {
namespace {

using Clock = std::chrono::steady_clock;

// Operands of the signal key's and the waiter count's atomic adds: 1 and -1 as 8
// little-endian bytes, and the zero count that compare_and_clear removes.
constexpr std::string_view kOne("\x01\0\0\0\0\0\0\0", 8);
constexpr std::string_view kMinusOne("\xff\xff\xff\xff\xff\xff\xff\xff", 8);
constexpr std::string_view kZero("\0\0\0\0\0\0\0\0", 8);

void require_simple(bool high_contention) {
  if (high_contention) {
    throw std::invalid_argument("the C API recipes implement the simple mode only");
  }
}

// 20 random bytes that make an item's key unique (a per-thread generator, seeded once).
strata::Bytes random_id() {
  thread_local std::mt19937_64 generator = [] {
    std::random_device device;
    std::seed_seq seed{device(), device(), device(), device()};
    return std::mt19937_64(seed);
  }();
  std::array<std::uint64_t, 3> words{generator(), generator(), generator()};
  strata::Bytes id;
  id.data.resize(20);
  std::memcpy(id.data.data(), words.data(), id.data.size());
  return id;
}

// Reads the first (or, with `last`, the last) item of `items` serializably, clears it and
// returns its value.
std::optional<std::string> take(Transaction& tr, const strata::KeyRange& items, bool last) {
  RangeBatch first = tr.get_range_batch(items.begin, items.end, 1, last, /*snapshot=*/false);
  if (first.size() == 0) return std::nullopt;
  tr.clear(first.key(0));
  return std::string(first.value(0));
}

// The next number of a sequence stored as the first tuple element after `level`'s prefix:
// one past the last key's, from a snapshot reverse limit-1 read (so it adds no conflict),
// or `first` when the range is empty.
std::int64_t next_number(Transaction& tr, const strata::Subspace& level, std::int64_t first) {
  strata::KeyRange range = level.range();
  RangeBatch last = tr.get_range_batch(range.begin, range.end, 1, /*reverse=*/true,
                                       /*snapshot=*/true);
  if (last.size() == 0) return first;
  return level.unpack(last.key(0))[0].get<std::int64_t>() + 1;
}

// Waits for `watch` to become ready, at most until `deadline`; true if it fired. At the
// deadline the future is cancelled, and the wait goes on until its callback has run, so
// the callback never outlives `waiter`.
bool wait_for_watch(Future& watch, Clock::time_point deadline) {
  struct Waiter {
    std::mutex mu;
    std::condition_variable cv;
    bool called = false;
  } waiter;
  check(fdb_future_set_callback(
      watch.handle(),
      [](FDBFuture*, void* parameter) {
        auto* w = static_cast<Waiter*>(parameter);
        std::lock_guard lock(w->mu);  // notify under the lock: the waiter may leave at once
        w->called = true;
        w->cv.notify_one();
      },
      &waiter));
  std::unique_lock lock(waiter.mu);
  if (!waiter.cv.wait_until(lock, deadline, [&] { return waiter.called; })) {
    lock.unlock();
    fdb_future_cancel(watch.handle());
    lock.lock();
    waiter.cv.wait(lock, [&] { return waiter.called; });
  }
  return fdb_future_get_error(watch.handle()) == 0;
}

}  // namespace

// ---- Queue ------------------------------------------------------------------------------

Queue::Queue(strata::Subspace subspace, bool high_contention)
    : subspace_(std::move(subspace)), items_(subspace_.range()) {
  require_simple(high_contention);
  if (!subspace_.key().empty()) {
    waiters_key_ = subspace_.key() + "\xff";  // the first key after range()
    items_and_count_end_ = waiters_key_ + '\x00';
  }
}

void Queue::enqueue(Transaction& tr, std::string_view value) const {
  // Signal only while a dequeue_wait waits (always without a count: an empty prefix). The
  // waiter count is the first key after the items: one snapshot reverse read finds it, or
  // else the last item; its read conflict makes an enqueue that raced a registering waiter
  // retry (and then signal).
  bool signal = waiters_key_.empty();
  std::int64_t index = 1;
  if (!signal) {
    RangeBatch last = tr.get_range_batch(items_.begin, items_and_count_end_, 1,
                                         /*reverse=*/true, /*snapshot=*/true);
    signal = last.size() != 0 && last.key(0) == waiters_key_;
    if (!signal && last.size() != 0) {
      index = subspace_.unpack(last.key(0))[0].get<std::int64_t>() + 1;
    }
    tr.add_read_conflict_range(waiters_key_, items_and_count_end_);
  }
  if (signal) index = next_number(tr, subspace_, 1);
  tr.set(subspace_.pack(strata::Tuple{index, random_id()}), value);
  if (signal) tr.atomic_op(subspace_.key(), kOne, FDB_MUTATION_TYPE_ADD);
}

std::optional<std::string> Queue::dequeue(Transaction& tr) const {
  return take(tr, items_, /*last=*/false);
}

void Queue::enqueue(Database& db, std::string_view value) const {
  db.run([&](Transaction& tr) { enqueue(tr, value); });
}

std::optional<std::string> Queue::dequeue(Database& db) const {
  return db.run([&](Transaction& tr) { return dequeue(tr); });
}

std::optional<std::string> Queue::dequeue_wait(Database& db,
                                               std::chrono::milliseconds timeout) const {
  const Clock::time_point deadline = Clock::now() + timeout;
  for (;;) {
    if (auto value = dequeue(db)) return value;
    if (Clock::now() >= deadline) return std::nullopt;
    // Register as a waiter and arm the watch in one commit, then look again: an enqueue
    // that committed before that commit would not fire the watch, and every later one
    // signals. Destroying the watch cancels it.
    Future watch = db.run([&](Transaction& tr) {
      if (!waiters_key_.empty()) tr.atomic_op(waiters_key_, kOne, FDB_MUTATION_TYPE_ADD);
      return tr.watch(subspace_.key());
    });
    std::optional<std::string> value = dequeue(db);
    if (!value) {
      bool fired = wait_for_watch(watch, deadline);
      if (!fired && Clock::now() >= deadline) value = dequeue(db);
    }
    if (!waiters_key_.empty()) {
      db.run([&](Transaction& tr) {
        tr.atomic_op(waiters_key_, kMinusOne, FDB_MUTATION_TYPE_ADD);
        tr.atomic_op(waiters_key_, kZero, FDB_MUTATION_TYPE_COMPARE_AND_CLEAR);
      });
    }
    if (value || Clock::now() >= deadline) return value;
  }
}

// ---- PriorityQueue ----------------------------------------------------------------------

PriorityQueue::PriorityQueue(strata::Subspace subspace, bool high_contention)
    : subspace_(std::move(subspace)), items_(subspace_.range()) {
  require_simple(high_contention);
}

void PriorityQueue::push(Transaction& tr, std::string_view value,
                         const strata::Element& priority) const {
  strata::Subspace level = subspace_[priority];
  std::int64_t count = next_number(tr, level, 0);
  tr.set(level.pack(strata::Tuple{count, random_id()}), value);
}

std::optional<std::string> PriorityQueue::pop_min(Transaction& tr) const {
  return take(tr, items_, /*last=*/false);
}

std::optional<std::string> PriorityQueue::pop_max(Transaction& tr) const {
  return take(tr, items_, /*last=*/true);
}

void PriorityQueue::push(Database& db, std::string_view value,
                         const strata::Element& priority) const {
  db.run([&](Transaction& tr) { push(tr, value, priority); });
}

std::optional<std::string> PriorityQueue::pop_min(Database& db) const {
  return db.run([&](Transaction& tr) { return pop_min(tr); });
}

std::optional<std::string> PriorityQueue::pop_max(Database& db) const {
  return db.run([&](Transaction& tr) { return pop_max(tr); });
}

}  // namespace stress::fdbc
