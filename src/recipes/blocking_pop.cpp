#include "recipes/blocking_pop.hpp"

#include <algorithm>
#include <thread>

namespace strata::recipes_detail {
namespace {

// Operands of the signal key's and the waiter count's atomic adds: 1 and -1 as 8
// little-endian bytes, and the zero count that compare_and_clear removes.
constexpr std::string_view kOne("\x01\0\0\0\0\0\0\0", 8);
constexpr std::string_view kMinusOne("\xff\xff\xff\xff\xff\xff\xff\xff", 8);
constexpr std::string_view kZero("\0\0\0\0\0\0\0\0", 8);
// How often a waiting pop looks again when the database has no watch to spare.
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

// A waiting pop's place in the waiter count (at `key`; none when it is empty), taken off
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
      // The count stays one too high: pushes keep signalling, which costs speed only.
    }
  }

 private:
  Database& db_;
  const std::string& key_;
};

}  // namespace

std::string waiters_key(const Subspace& items) {
  if (items.key().empty()) return {};
  return items.key() + "\xff";
}

void signal_waiters(Transaction& tr, std::string_view signal_key) {
  tr.atomic_op(MutationType::add, signal_key, kOne);
}

std::optional<std::string> pop_wait(Database& db, std::string_view signal_key,
                                    const std::string& waiters_key,
                                    std::chrono::milliseconds timeout,
                                    const std::function<std::optional<std::string>()>& pop) {
  using Clock = std::chrono::steady_clock;
  const Clock::time_point deadline = deadline_after(Clock::now(), timeout);
  for (;;) {
    if (auto value = pop()) return value;
    Clock::time_point now = Clock::now();
    if (now >= deadline) return std::nullopt;
    // Register as a waiter and arm a watch on the signal key in one commit, then look
    // again: a push that committed before that commit would not fire the watch, and every
    // later one sees the count (or conflicts on it) and signals.
    Watch watch = db.run([&](Transaction& tr) {
      if (!waiters_key.empty()) tr.atomic_op(MutationType::add, waiters_key, kOne);
      return tr.watch(signal_key);
    });
    WaiterRegistration registration(db, waiters_key);
    if (auto value = pop()) {
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
      // The database's watches are all in use (Options::max_watches): look again after a
      // short wait instead, as a pop without watches would (the item may come at any time).
      std::this_thread::sleep_for(std::min(remaining, kPollWithoutAWatch));
    }
    watch.cancel();
    if (!fired && Clock::now() >= deadline) return pop();
  }
}

}  // namespace strata::recipes_detail
