#include "strata/priority_queue.hpp"

#include <algorithm>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>

#include "recipes/blocking_pop.hpp"
#include "recipes/high_contention.hpp"
#include "recipes/random_id.hpp"

namespace strata {
namespace {

using recipes_detail::End;

// prefix + pack(priority) + 00: where the level's items begin, written into `buffer`; the
// view is valid until the buffer next changes.
std::string_view level_begin(std::string& buffer, const std::string& prefix,
                             const Element& priority) {
  if (!priority.is<std::int64_t>()) {  // any other element, through the tuple layer
    buffer.assign(prefix);
    append_packed(buffer, priority);
    buffer.push_back('\x00');
    return buffer;
  }
  // An integer, the usual priority, written in place: the buffer keeps the room of the
  // longest level it has held, so there is no allocation and no append per byte.
  const std::size_t most = prefix.size() + kMaxPackedIntSize + 1;
  if (buffer.size() < most) buffer.resize(most);
  char* out = std::copy(prefix.begin(), prefix.end(), buffer.data());
  out = pack_int_at(out, priority.get<std::int64_t>());
  *out++ = '\x00';
  return {buffer.data(), static_cast<std::size_t>(out - buffer.data())};
}

// Whether `key`, at or after level + 00, is below level + FF: an item of this level.
bool key_in_level(std::string_view key, std::string_view level) {
  // For a key at or after level + 00, key < level + FF exactly when the key extends the
  // level with a byte other than FF: a key that does not start with the level differs
  // from it at a byte where it is the greater, and so is above level + FF too.
  return key.starts_with(level) && key.size() > level.size() && key[level.size()] != '\xff';
}

}  // namespace

PriorityQueue::PriorityQueue(Subspace subspace, bool high_contention)
    : subspace_(std::move(subspace)),
      items_(subspace_.range()),
      high_contention_(high_contention),
      waiters_key_(recipes_detail::waiters_key(subspace_)) {
  if (!waiters_key_.empty()) count_end_ = waiters_key_ + '\x00';
  if (high_contention_) {
    min_requests_ = recipes_detail::bookkeeping(subspace_, Tuple{"pop", "min"});
    max_requests_ = recipes_detail::bookkeeping(subspace_, Tuple{"pop", "max"});
    // Each kind has its own result slots: an item served to a popper that died goes again
    // to a pop of the same kind (docs/decisions/0017).
    min_results_ = recipes_detail::bookkeeping(subspace_, Tuple{"result", "min"});
    max_results_ = recipes_detail::bookkeeping(subspace_, Tuple{"result", "max"});
  }
}

void PriorityQueue::push(Transaction& tr, std::string_view value, const Element& priority) const {
  // subspace_[priority] (the level) and where its range begins, level + 00, in the calling
  // thread's buffer: no Subspace and no KeyRange per push. The range's end, level + FF, is
  // built only for the second read below; the first read's visitor tests against it
  // without it (key_in_level). The item's key is built after the level in the same buffer.
  thread_local std::string buffer;
  const std::string_view begin = level_begin(buffer, subspace_.key(), priority);
  const std::string_view level = begin.substr(0, begin.size() - 1);
  std::int64_t count = 0;
  auto last_item = [&](std::string_view key, std::string_view) {
    count = recipes_detail::item_position(level, key) + 1;
  };
  // Signal only while a pop_min_wait or pop_max_wait waits (always without a count: an
  // empty prefix). The count is the first key after the items (docs/decisions/0006), so one
  // snapshot reverse read from this level up to it finds the count when it exists, else the
  // last item at or above this level: this level's last item, or none, in the common case,
  // and else a second read of the level finds it. The count is read serializably (an
  // explicit read conflict): a waiter that registers or leaves after this read and before
  // this commit makes the commit conflict, and the retry sees it. (Read before the item is
  // written: the count is outside the items, so the order changes no answer.)
  bool signal = waiters_key_.empty();
  bool above = false;
  if (!signal) {
    tr.snapshot().visit_range(begin, count_end_, {.limit = 1, .reverse = true},
                              [&](std::string_view key, std::string_view row_value) {
                                if (key == waiters_key_) {
                                  signal = true;
                                } else if (key_in_level(key, level)) {
                                  last_item(key, row_value);
                                } else {
                                  above = true;  // a higher level's item
                                }
                              });
    tr.add_read_conflict_key(waiters_key_);
  }
  if (signal || above) {
    std::string end(level);
    end.push_back('\xff');
    tr.snapshot().visit_range(begin, end, {.limit = 1, .reverse = true}, last_item);
  }
  tr.set(recipes_detail::numbered_item_key_after(buffer, level.size(), count), value);
  if (signal) recipes_detail::signal_waiters(tr, subspace_.key());
}

std::optional<std::string> PriorityQueue::pop_min(Transaction& tr) const {
  return recipes_detail::pop_simple(tr, items_, End::first, true);
}

std::optional<std::string> PriorityQueue::pop_max(Transaction& tr) const {
  return recipes_detail::pop_simple(tr, items_, End::last, true);
}

std::optional<std::string> PriorityQueue::peek_min(Transaction& tr) const {
  return recipes_detail::pop_simple(tr, items_, End::first, false);
}

std::optional<std::string> PriorityQueue::peek_max(Transaction& tr) const {
  return recipes_detail::pop_simple(tr, items_, End::last, false);
}

void PriorityQueue::push(Database& db, std::string_view value, const Element& priority) const {
  db.run([&](Transaction& tr) { push(tr, value, priority); });
}

std::optional<std::string> PriorityQueue::pop_min(Database& db) const {
  if (!high_contention_) return recipes_detail::pop_simple(db, items_, End::first);
  return recipes_detail::pop_staged(
      db, recipes_detail::StagedLayout{items_, min_requests_, min_results_, End::first});
}

std::optional<std::string> PriorityQueue::pop_max(Database& db) const {
  if (!high_contention_) return recipes_detail::pop_simple(db, items_, End::last);
  return recipes_detail::pop_staged(
      db, recipes_detail::StagedLayout{items_, max_requests_, max_results_, End::last});
}

bool PriorityQueue::pop_min(Database& db, std::string& out) const {
  if (!high_contention_) return recipes_detail::pop_simple(db, items_, End::first, out);
  return recipes_detail::pop_into(out, [&] { return pop_min(db); });
}

bool PriorityQueue::pop_max(Database& db, std::string& out) const {
  if (!high_contention_) return recipes_detail::pop_simple(db, items_, End::last, out);
  return recipes_detail::pop_into(out, [&] { return pop_max(db); });
}

std::optional<std::string> PriorityQueue::peek_min(Database& db) const {
  return db.run([&](Transaction& tr) { return peek_min(tr); });
}

std::optional<std::string> PriorityQueue::peek_max(Database& db) const {
  return db.run([&](Transaction& tr) { return peek_max(tr); });
}

std::optional<std::string> PriorityQueue::pop_min_wait(Database& db,
                                                       std::chrono::milliseconds timeout) const {
  return recipes_detail::pop_wait(db, subspace_.key(), waiters_key_, timeout,
                                  [&] { return pop_min(db); });
}

std::optional<std::string> PriorityQueue::pop_max_wait(Database& db,
                                                       std::chrono::milliseconds timeout) const {
  return recipes_detail::pop_wait(db, subspace_.key(), waiters_key_, timeout,
                                  [&] { return pop_max(db); });
}

}  // namespace strata
