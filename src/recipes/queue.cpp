#include "strata/queue.hpp"

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <thread>
#include <utility>

#include "recipes/high_contention.hpp"
#include "recipes/random_id.hpp"

namespace strata {
namespace {

using recipes_detail::End;

// Operands of the signal key's and the waiter count's atomic adds: 1 and -1 as 8
// little-endian bytes, and the zero count that compare_and_clear removes.
constexpr std::string_view kOne("\x01\0\0\0\0\0\0\0", 8);
constexpr std::string_view kMinusOne("\xff\xff\xff\xff\xff\xff\xff\xff", 8);
constexpr std::string_view kZero("\0\0\0\0\0\0\0\0", 8);
// How often dequeue_wait looks again when the database has no watch to spare.
constexpr std::chrono::milliseconds kPollWithoutAWatch(10);

// now + timeout without overflow: the clock's last instant for a timeout that reaches past
// it (milliseconds::max() is "forever"), now for a negative one.
std::chrono::steady_clock::time_point deadline_after(std::chrono::steady_clock::time_point now,
                                                     std::chrono::milliseconds timeout) {
  using Clock = std::chrono::steady_clock;
  if (timeout.count() <= 0) return now;
  const auto room = std::chrono::floor<std::chrono::milliseconds>(Clock::time_point::max() - now);
  return timeout >= room ? Clock::time_point::max() : now + timeout;
}

// A dequeue_wait's place in the waiter count (at `key`; none when it is empty), taken off
// again when it leaves scope.
class WaiterRegistration {
 public:
  WaiterRegistration(Database& db, const std::string& key) : db_(db), key_(key) {}
  WaiterRegistration(const WaiterRegistration&) = delete;
  WaiterRegistration& operator=(const WaiterRegistration&) = delete;
  ~WaiterRegistration() {
    if (key_.empty()) return;
    try {
      db_.run([&](Transaction& tr) {
        tr.atomic_op(MutationType::add, key_, kMinusOne);
        tr.atomic_op(MutationType::compare_and_clear, key_, kZero);
      });
    } catch (const std::exception&) {
      // The count stays one too high: enqueues keep signalling, which costs speed only.
    }
  }

 private:
  Database& db_;
  const std::string& key_;
};

}  // namespace

Queue::Queue(Subspace subspace, bool high_contention)
    : subspace_(std::move(subspace)), items_(subspace_.range()), high_contention_(high_contention) {
  if (!subspace_.key().empty()) {
    waiters_key_ = subspace_.key() + "\xff";  // the first key after range()
    items_and_count_end_ = waiters_key_ + '\x00';
  }
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
  if (signal) tr.atomic_op(MutationType::add, subspace_.key(), kOne);  // wakes dequeue_wait
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
  using Clock = std::chrono::steady_clock;
  const Clock::time_point deadline = deadline_after(Clock::now(), timeout);
  for (;;) {
    if (auto value = dequeue(db)) return value;
    Clock::time_point now = Clock::now();
    if (now >= deadline) return std::nullopt;
    // Register as a waiter and arm a watch on the signal key in one commit, then look
    // again: an enqueue that committed before that commit would not fire the watch, and
    // every later one sees the count (or conflicts on it) and signals.
    Watch watch = db.run([&](Transaction& tr) {
      if (!waiters_key_.empty()) tr.atomic_op(MutationType::add, waiters_key_, kOne);
      return tr.watch(subspace_.key());
    });
    WaiterRegistration registration(db, waiters_key_);
    if (auto value = dequeue(db)) {
      watch.cancel();
      return value;
    }
    const auto remaining =
        std::max(std::chrono::ceil<std::chrono::milliseconds>(deadline - Clock::now()),
                 std::chrono::milliseconds(0));
    bool fired = false;
    try {
      fired = watch.wait_for(remaining);
    } catch (const Error& e) {
      if (e.error_code() != ErrorCode::too_many_watches) throw;
      // The database's watches are all in use (Options::max_watches): look again after a short wait
      // instead, as a popper without watches would (the item may come at any time).
      std::this_thread::sleep_for(std::min(remaining, kPollWithoutAWatch));
    }
    watch.cancel();
    if (!fired && Clock::now() >= deadline) return dequeue(db);
  }
}

}  // namespace strata
