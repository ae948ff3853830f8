#include "engine/transaction_impl.hpp"

#include <algorithm>
#include <cstring>
#include <limits>
#include <memory>
#include <optional>
#include <thread>
#include <utility>

#include "base/deadline.hpp"
#include "base/futex.hpp"
#include "base/invariant.hpp"
#include "base/key_compare.hpp"
#include "base/limits.hpp"
#include "engine/database_impl.hpp"
#include "engine/versionstamp.hpp"

namespace strata::engine {

using base::key_after;

namespace {

// Passes a range read's rows to `sink` (get_range's vector, or visit_range's visitor) and
// counts them against the read's limits. full(): whether the rows so far reach the limit
// or the byte target; its last answer is whether a limit ended the read (FoundationDB's
// "more"). last_key() views the last row's key where the read found it (a store node
// pinned by the read version, or the write map), for the conflict span of a limited read.
template <class Sink>
class RowOutput {
 public:
  RowOutput(const RangeOptions& options, Sink& sink) : options_(options), sink_(sink) {}
  void emit(std::string_view key, std::string_view value) {
    sink_(key, value);
    ++rows_;
    bytes_ += key.size() + value.size();
    last_key_ = key;
  }
  bool full() {
    reached_ =
        (options_.limit > 0 && rows_ >= static_cast<std::size_t>(options_.limit)) ||
        (options_.target_bytes > 0 && bytes_ >= static_cast<std::size_t>(options_.target_bytes));
    return reached_;
  }
  bool reached() const { return reached_; }
  std::size_t rows() const { return rows_; }
  std::string_view last_key() const { return last_key_; }

 private:
  const RangeOptions& options_;
  Sink& sink_;
  std::size_t rows_ = 0;
  std::size_t bytes_ = 0;
  std::string_view last_key_;
  bool reached_ = false;
};

// out = value, for a `value` that does not point into `out`. A caller that reads into the
// same string again and again has the room after its first read: the value is copied over
// what is there (the string's general assign, with its aliasing checks and growth policy,
// costs more than copying a value of a hundred bytes). Without the room, assign: a failed
// allocation then leaves `out` as it was.
void copy_value(std::string& out, std::string_view value) {
  if (value.size() > out.capacity()) [[unlikely]] {
    out.assign(value);
    return;
  }
  const std::size_t kept = std::min(out.size(), value.size());
  if (kept != 0) std::memcpy(out.data(), value.data(), kept);
  if (value.size() > kept) {
    out.append(value.substr(kept));
  } else if (value.size() < out.size()) {
    out.resize(value.size());
  }
}

}  // namespace

namespace {

// The calling thread's spare transaction, and whether the reaper below will delete it at
// the thread's exit. Both are trivially destructible, so recycle() may still look at them
// while other thread-local objects are destroyed at thread exit (a thread_local
// Transaction, say), after the reaper has run; and a look at them needs no guard.
enum class SpareState : std::uint8_t { unarmed, armed, closed };
thread_local TransactionImpl* t_spare = nullptr;
thread_local SpareState t_spare_state = SpareState::unarmed;

struct SpareReaper {
  bool armed = false;  // the write makes this thread register the reaper
  SpareReaper() = default;
  SpareReaper(const SpareReaper&) = delete;
  SpareReaper& operator=(const SpareReaper&) = delete;
  ~SpareReaper() {
    delete std::exchange(t_spare, nullptr);
    t_spare_state = SpareState::closed;
  }
};
thread_local SpareReaper t_reaper;

}  // namespace

std::unique_ptr<TransactionImpl> TransactionImpl::make(std::shared_ptr<DatabaseImpl> db) {
  DatabaseImpl& d = *db;
  std::unique_ptr<TransactionImpl> t = make_borrowed(d);
  t->owner_ = std::move(db);
  return t;
}

std::unique_ptr<TransactionImpl> TransactionImpl::make_borrowed(DatabaseImpl& db) {
  std::unique_ptr<TransactionImpl> t(std::exchange(t_spare, nullptr));
  if (t == nullptr) {
    t = std::make_unique<TransactionImpl>();
  } else {
    t->created_ = base::CoarseClock::now();
  }
  // A spare keeps its reader slot; it is of use only in the same registry. (Before db_ is
  // set: the slot's registry may be gone.)
  if (t->slot_ != nullptr && t->slot_registry_id_ != db.store().registry().id()) {
    t->give_back_slot();
  }
  t->db_ = &db;
  t->apply_database_defaults();
  return t;
}

inline void TransactionImpl::apply_database_defaults() {
  const Options& o = db_->options();
  if (o.transaction_timeout.count() > 0) [[unlikely]]
    set_deadline(o.transaction_timeout);
  retry_limit_ = o.transaction_retry_limit;
  max_backoff_ = o.transaction_max_retry_delay;
}

void TransactionImpl::own() noexcept {
  if (owner_ == nullptr && db_ != nullptr) owner_ = db_->weak_from_this().lock();
}

void TransactionImpl::recycle(std::unique_ptr<TransactionImpl> t) noexcept {
  if (t == nullptr) return;
  if (t_spare_state != SpareState::armed) [[unlikely]] {
    if (t_spare_state == SpareState::closed) return;  // the reaper has run: destroyed
    t_reaper.armed = true;
    t_spare_state = SpareState::armed;
  }
  t->wait_for_async();
  t->detach();
  // With a spare already, this one is destroyed as usual. (Tested after the detach, which
  // fails the transaction's pending watches: their listeners run here, and may end another
  // transaction, which is then the spare.)
  if (t_spare != nullptr) [[unlikely]]
    return;
  t_spare = t.release();
}

void TransactionImpl::detach() noexcept {
  // end() but for the slot, which the spare keeps: the reset fails the pending watches and
  // withdraws the slot.
  reset_to_defaults();  // make() starts the clock
  if (write_conflicts_.capacity() != 0) {
    std::vector<KeyRange>().swap(write_conflicts_);  // a spare keeps no large buffers
  }
  if (owner_ != nullptr) owner_.reset();  // a borrowed transaction has none
  db_ = nullptr;
}

TransactionImpl::~TransactionImpl() {
  wait_for_async();
  end();
}

void TransactionImpl::end() noexcept {
  finish_watches(false, ErrorCode::transaction_cancelled);
  give_back_slot();
}

void TransactionImpl::give_back_slot() noexcept {
  if (slot_ == nullptr) return;
  if (db_ != nullptr) {
    slot_registry_->release(slot_);  // in use: the database is alive
  } else {                           // a spare's, withdrawn by its reset; the database may be gone
    kv::ReaderRegistry::release_if_alive(slot_registry_id_, slot_registry_, slot_);
  }
  slot_ = nullptr;
}

// ---- State ------------------------------------------------------------------------

void TransactionImpl::check_usable_slow() {
  if (state_ == State::visiting) throw_visiting();
  if (const ErrorCode ended = ended_by(); ended != ErrorCode::success) {
    throw retry_error(ended, false);
  }
  if (state_ == State::committing || state_ == State::committed) {
    throw Error(ErrorCode::used_during_commit,
                "the transaction has committed (or is committing); reset it to reuse it");
  }
}

void TransactionImpl::throw_visiting() {
  throw Error(ErrorCode::client_invalid_operation,
              "a visit_range visitor may not use the transaction it is visiting");
}

Version TransactionImpl::ensure_read_version() {
  if (read_version_ < 0) {
    kv::MvccStore& store = db_->store();
    const base::CoarseClock::time_point now = base::CoarseClock::now();
    read_version_ = kv::ReaderRegistry::announce(reader_slot(store.registry()),
                                                 store.committed_atomic(), revoke_deadline(now));
    read_version_time_ = now;
  }
  return read_version_;
}

std::int64_t TransactionImpl::revoke_deadline(base::CoarseClock::time_point now) const {
  // Saturates: a window longer than the clock has left (no limit among them) never expires.
  const base::CoarseClock::duration window = db_->mvcc_window();
  if (window >= base::CoarseClock::duration::max() - now.time_since_epoch()) {
    return kv::ReaderRegistry::kNever;
  }
  return (now + window).time_since_epoch().count();
}

inline TransactionImpl::StoreRead::StoreRead(TransactionImpl& t)
    : slot_((t.read_version_for_read(), t.slot_)) {
  if (!kv::ReaderRegistry::begin_read(slot_)) [[unlikely]]
    t.throw_released();
}

void TransactionImpl::throw_released() const {
  throw Error(ErrorCode::transaction_too_old,
              "read version " + std::to_string(read_version_) +
                  " was released: the transaction sat idle past its mvcc_window of " +
                  std::to_string(db_->options().mvcc_window.count()) + " ms");
}

Version TransactionImpl::read_version_for_read() {
  if (read_version_ < 0) return ensure_read_version();  // taken now: no age to check
  check_not_too_old();
  return read_version_;
}

void TransactionImpl::check_not_too_old() const {
  auto age = base::CoarseClock::now() - read_version_time_;
  if (age > db_->mvcc_window()) [[unlikely]]
    throw_too_old(age);
}

void TransactionImpl::throw_too_old(base::CoarseClock::duration age) const {
  throw Error(
      ErrorCode::transaction_too_old,
      "read version " + std::to_string(read_version_) + " is " +
          std::to_string(std::chrono::duration_cast<std::chrono::milliseconds>(age).count()) +
          " ms old (mvcc_window " + std::to_string(db_->options().mvcc_window.count()) + " ms)");
}

void TransactionImpl::release_read_version() {
  if (slot_ != nullptr) kv::ReaderRegistry::withdraw(slot_);
  read_version_ = -1;
}

Version TransactionImpl::read_version() {
  check_usable();
  const Version v = ensure_read_version();
  // Handed out: a later set_read_version may name it (kv::MvccStore::retain). The slot
  // holds it meanwhile, so the retention cannot come too late.
  if (db_->options().keep_mvcc_window) [[unlikely]]
    db_->store().retain(v, revoke_deadline(read_version_time_));
  return v;
}

void TransactionImpl::set_read_version(Version version) {
  check_usable();
  if (read_version_ >= 0) {
    throw Error(ErrorCode::read_version_already_set,
                "the read version is already " + std::to_string(read_version_));
  }
  kv::MvccStore& store = db_->store();
  if (version > store.committed()) {
    throw Error(ErrorCode::future_version, "version " + std::to_string(version) +
                                               " is newer than the newest commit, " +
                                               std::to_string(store.committed()));
  }
  const base::CoarseClock::time_point now = base::CoarseClock::now();
  if (version < 0 || !store.pin_at(reader_slot(store.registry()), version, revoke_deadline(now))) {
    throw Error(ErrorCode::transaction_too_old,
                "version " + std::to_string(version) +
                    " is older than the oldest version strata still keeps");
  }
  read_version_ = version;
  read_version_time_ = now;
}

// As FoundationDB's READ_YOUR_WRITES_DISABLE, refused once the transaction has read, or
// once its write map holds something: a write or a write conflict range made with
// read-your-writes on (off, FoundationDB hands them to the database's transaction and its
// write map stays empty). A read version taken without a read counts as a read here.
void TransactionImpl::set_read_your_writes(bool enabled) {
  check_usable();
  const bool wrote = !writes_.empty() || !write_conflicts_.empty();
  if (read_version_ >= 0 || (wrote && (ryw_ || enabled))) {
    throw Error(ErrorCode::client_invalid_operation,
                "read-your-writes can be changed only before the first read or write");
  }
  if (ryw_ && !enabled && has_read_conflicts()) {
    // Read conflict ranges added with read-your-writes on stay in FoundationDB's layer
    // above the database's transaction, which a commit with the option set never sends
    // (ReadYourWritesTransaction's commit): they no longer conflict. Their bytes stay
    // counted in the size, as in FoundationDB's approximate size.
    read_conflicts_.erase(read_conflicts_.begin(), read_conflicts_.end());
    point_reads_.erase(point_reads_.begin(), point_reads_.end());
  }
  ryw_ = enabled;
}

void TransactionImpl::set_snapshot_read_your_writes(bool enabled) { snapshot_ryw_ = enabled; }

// An option, as set_snapshot_read_your_writes: it may be set in any state (the C API sets
// options after a failed commit too) and takes effect at the next commit.
void TransactionImpl::set_report_conflicting_keys(bool enabled) { report_conflicts_ = enabled; }

// ---- Reads ------------------------------------------------------------------------

void TransactionImpl::check_readable(std::string_view key) const {
  if (unreadable_.contains(key)) {
    throw Error(ErrorCode::accessed_unreadable,
                "read of " + base::describe_key(key) +
                    " touches a key a versionstamped write of this transaction may produce");
  }
}

void TransactionImpl::check_readable(std::string_view begin, std::string_view end) const {
  if (unreadable_.empty()) return;
  auto it = unreadable_.lower_bound_end(begin);
  if (it != unreadable_.end() && std::string_view(it->first) < end) {
    throw Error(ErrorCode::accessed_unreadable,
                "read of " + base::describe_key(begin) +
                    " touches a key a versionstamped write of this transaction may produce");
  }
}

void TransactionImpl::add_read_conflict(std::string_view begin, std::string_view end,
                                        bool end_after) {
  std::size_t before = read_conflicts_.size();
  writes_.append_unwritten(begin, end, end_after, read_conflicts_);
  for (std::size_t i = before; i < read_conflicts_.size(); ++i) {
    conflict_bytes_ += read_conflicts_[i].begin.size() + read_conflicts_[i].end.size();
  }
}

bool TransactionImpl::cut_read_span(std::string_view& begin, std::string_view& end,
                                    bool end_after) {
  begin = base::cut_range_end(begin);
  if (end_after) return true;  // the end is a key read, the span holds it
  end = base::cut_range_end(end);
  return base::key_less(begin, end);
}

[[gnu::always_inline]] inline void TransactionImpl::add_read_span(std::string_view begin,
                                                                  std::string_view end,
                                                                  bool end_after) {
  if ((begin.size() > base::kReadKeySizeLimit || end.size() > base::kReadKeySizeLimit) && ryw_)
      [[unlikely]] {
    add_cut_span(begin, end, end_after);
    return;
  }
  add_span(begin, end, end_after);
}

void TransactionImpl::add_cut_span(std::string_view begin, std::string_view end, bool end_after) {
  if (cut_read_span(begin, end, end_after)) add_span(begin, end, end_after);
}

std::optional<std::string> TransactionImpl::get(std::string_view key, ReadMode mode) {
  std::optional<std::string> value(std::in_place);  // empty: no allocation yet
  if (!get(key, mode, *value)) value.reset();
  return value;
}

bool TransactionImpl::get(std::string_view key, ReadMode mode, std::string& out) {
  check_usable();
  base::check_readable_key(key, /*metadata_version_ok=*/true);
  // Fills `out` from a value, or clears it: only once nothing more can throw.
  auto found = [&out](std::string_view value) {
    copy_value(out, value);
    return true;
  };
  auto absent = [&out] {
    out.clear();
    return false;
  };
  if (key.size() > base::kReadKeySizeLimit) return absent();  // no such key, no conflict
  // The stored value at the read version, with the point's read conflict when serializable.
  // (When this transaction's writes are seen, keys it set or cleared never get here, so there
  // is nothing to subtract from the conflict.) The record stays valid while the read
  // version is pinned and the StoreRead the caller holds lives.
  auto read_store = [&]() -> const kv::VersionRecord* {
    const kv::VersionRecord* r = db_->store().get(key, read_version_);
    if (mode == ReadMode::serializable) add_point_read(key);
    return r;
  };
  // The store alone when the read does not see this transaction's writes, or there are
  // none to see: no key written, no range cleared, nothing unreadable.
  if (!sees_own_writes(mode) || (writes_.nothing_to_merge() && unreadable_.empty())) {
    const StoreRead reading(*this);
    const kv::VersionRecord* r = read_store();
    return r != nullptr ? found(r->value()) : absent();
  }
  check_readable(key);  // before the write map: a set does not make the key readable
  const PointWrite* w = writes_.find(key);
  if (w != nullptr && w->kind != PointWrite::Kind::dependent) {
    return w->kind == PointWrite::Kind::set ? found(w->value()) : absent();
  }
  if (w == nullptr && writes_.cleared(key)) return absent();
  const StoreRead reading(*this);
  const kv::VersionRecord* r = read_store();
  if (w == nullptr) return r != nullptr ? found(r->value()) : absent();
  std::optional<std::string> resolved = resolve_dependent(
      *w, r != nullptr ? std::optional<std::string_view>(r->value()) : std::nullopt);
  if (!resolved) return absent();
  out = std::move(*resolved);
  return true;
}

RangeResult TransactionImpl::get_range(std::string_view begin, std::string_view end,
                                       RangeOptions options, ReadMode mode) {
  RangeResult rows;
  scan(
      begin, end, options, mode,
      [&rows](std::string_view key, std::string_view value) {
        rows.push_back({std::string(key), std::string(value)});
      },
      &rows.more);
  return rows;
}

std::size_t TransactionImpl::visit_range(std::string_view begin, std::string_view end,
                                         RangeOptions options, ReadMode mode, RowVisitorRef visit) {
  // A limit of one row (target_bytes cannot stop a read before its first row) with no
  // writes of its own to merge, and no pending versionstamped key the span could reach: a
  // queue's push and pop. It needs no merge and no row counting (visit_first).
  if (options.limit == 1 && options.target_bytes >= 0 &&
      (!sees_own_writes(mode) || (writes_.nothing_to_merge() && unreadable_.empty()))) {
    return visit_first(begin, end, options.reverse, mode, visit);
  }
  return visit_rows(begin, end, options, mode, visit);
}

std::size_t TransactionImpl::visit_rows(std::string_view begin, std::string_view end,
                                        RangeOptions options, ReadMode mode, RowVisitorRef visit) {
  bool visitor_threw = false;
  auto call = [&](std::string_view key, std::string_view value) {
    state_ = State::visiting;  // the visitor may not use this transaction
    try {
      visit(key, value);
    } catch (...) {
      state_ = State::active;
      visitor_threw = true;
      throw;
    }
    state_ = State::active;
  };
  try {
    if (sees_own_writes(mode) && !unreadable_.empty()) {
      // Whether a pending versionstamped key may land in the span is known only once the
      // read has ended: read as get_range does (throwing before any row is seen), then visit.
      std::vector<KeyValue> rows = get_range(begin, end, options, mode);
      for (const KeyValue& row : rows) call(row.key, row.value);
      return rows.size();
    }
    return scan(begin, end, options, mode, call);
  } catch (...) {
    // The visitor saw rows and may act on them: the read conflicts on all it could have seen.
    if (visitor_threw && mode == ReadMode::serializable) {
      add_range_read(begin, end, false, sees_own_writes(mode));
    }
    throw;
  }
}

std::size_t TransactionImpl::visit_first(std::string_view begin, std::string_view end, bool reverse,
                                         ReadMode mode, RowVisitorRef visit) {
  using Node = kv::MvccStore::Node;
  check_usable();
  base::check_range(begin, end, /*check_order=*/false);
  if (!base::key_less(begin, end)) return 0;
  const StoreRead reading(*this);  // the row's views and the span's key point into the store
  const kv::MvccStore& store = db_->store();
  const Version rv = read_version_;
  const bool serializable = mode == ReadMode::serializable;
  // read_store's first step, and its last: the limit is reached with the first row. There
  // is nothing to subtract from the span (no write to merge, or none seen): it goes in whole,
  // as add_range_read adds it then.
  Node* n = nullptr;
  const kv::VersionRecord* record = nullptr;
  if (reverse) {
    n = store.seek_visible_lt(end, begin, rv);
    if (n != nullptr) record = kv::MvccStore::visible(n, rv);
  } else {
    // The first key at or after `begin` is usually the row (a queue's head): its record is
    // looked at once, and first_visible walks on only when it is not visible.
    n = store.seek_ge(begin);
    if (n != nullptr) record = kv::MvccStore::visible(n, rv);
    if (record == nullptr) {
      n = store.first_visible(n, end, rv);
      if (n != nullptr) record = kv::MvccStore::visible(n, rv);
    } else if (!base::key_less(n->key(), end)) {
      n = nullptr;
    }
  }
  if (n == nullptr) {
    if (serializable) add_read_span(begin, end);
    return 0;
  }
  const std::string_view key = n->key();
  state_ = State::visiting;  // the visitor may not use this transaction
  try {
    visit(key, record->value());
  } catch (...) {
    // The visitor saw the row and may act on it: the read conflicts on all it could have seen.
    state_ = State::active;
    if (serializable) add_read_span(begin, end);
    throw;
  }
  state_ = State::active;
  // The limited span, as scan() builds it: from the row to the end (reverse), or from the
  // beginning to just after the row.
  if (serializable) {
    if (reverse) {
      add_read_span(key, end);
    } else {
      add_read_span(begin, key, /*end_after=*/true);
    }
  }
  return 1;
}

void TransactionImpl::add_range_read(std::string_view begin, std::string_view end, bool end_after,
                                     bool own) {
  if (own && !cut_read_span(begin, end, end_after)) return;
  // With no key written and no range cleared there is nothing to subtract, and the span
  // goes in whole (a queue's pop reads before it writes).
  if (own && !writes_.nothing_to_merge()) {
    add_read_conflict(begin, end, end_after);
  } else {
    add_span(begin, end, end_after);
  }
}

template <class Sink>
std::size_t TransactionImpl::scan(std::string_view begin, std::string_view end,
                                  const RangeOptions& options, ReadMode mode, Sink&& sink,
                                  bool* more) {
  check_usable();
  base::check_range(begin, end, /*check_order=*/false);
  if (options.limit < 0 || options.target_bytes < 0) {
    throw Error(ErrorCode::range_limits_invalid,
                "limit " + std::to_string(options.limit) + " or target_bytes " +
                    std::to_string(options.target_bytes) + " is negative");
  }
  if (!base::key_less(begin, end)) return 0;  // begin >= end, inline (no memcmp call)
  // The rows, and the last key the conflict span ends at, point into the store.
  const StoreRead reading(*this);
  const bool own = sees_own_writes(mode);
  RowOutput<std::remove_reference_t<Sink>> out(options, sink);
  if (!own || writes_.nothing_to_merge()) {
    read_store(begin, end, options.reverse, out);  // no writes of its own to merge
  } else if (options.reverse) {
    read_reverse(writes_, begin, end, out);
  } else {
    read_forward(writes_, begin, end, out);
  }
  // The span the result depends on (docs/transactions.md): all of [begin, end), unless a
  // limit stopped the read, in which case only up to (or from) the last row returned: a
  // forward span then ends at the last key + 00 (`end_after`), which the conflict range
  // builds in its own block.
  std::string_view span_begin = begin, span_end = end;
  bool end_after = false;
  if (out.reached()) {
    if (options.reverse) {
      span_begin = out.last_key();
    } else {
      span_end = out.last_key();
      end_after = true;
    }
  }
  if (own && !unreadable_.empty()) {
    const std::string after_last = end_after ? key_after(span_end) : std::string();
    check_readable(span_begin, end_after ? std::string_view(after_last) : span_end);
  }
  if (mode == ReadMode::serializable) add_range_read(span_begin, span_end, end_after, own);
  if (more != nullptr) *more = out.reached();
  return out.rows();
}

template <class Output>
void TransactionImpl::emit_own_write(std::string_view key, const PointWrite& w,
                                     std::optional<std::string_view> stored, Output& out) {
  switch (w.kind) {
    case PointWrite::Kind::set:
      out.emit(key, w.value());
      return;
    case PointWrite::Kind::clear:
      return;
    case PointWrite::Kind::dependent:
      if (auto v = resolve_dependent(w, stored)) out.emit(key, *v);
      return;
    case PointWrite::Kind::stamped:
      throw Error(ErrorCode::accessed_unreadable,
                  "range read reaches " + base::describe_key(key) +
                      ", whose versionstamped value is pending in this transaction");
  }
}

template <class Output>
void TransactionImpl::read_store(std::string_view begin, std::string_view end, bool reverse,
                                 Output& out) {
  using Node = kv::MvccStore::Node;
  const kv::MvccStore& store = db_->store();
  const Version rv = read_version_;
  auto emit = [&](const Node* n) {
    out.emit(n->key(), kv::MvccStore::visible(n, rv)->value());
    return out.full();  // checked as soon as a row is passed on, as read_forward does
  };
  if (reverse) {
    for (Node* n = store.seek_visible_lt(end, begin, rv); n != nullptr;
         n = store.seek_visible_lt(n->key(), begin, rv)) {
      if (emit(n)) return;
    }
  } else {
    for (Node* n = store.first_visible(store.seek_ge(begin), end, rv); n != nullptr;
         n = store.first_visible(kv::MvccStore::next(n), end, rv)) {
      if (emit(n)) return;
    }
  }
}

template <class Output>
void TransactionImpl::read_forward(const WriteMap& writes, std::string_view begin,
                                   std::string_view end, Output& out) {
  using Node = kv::MvccStore::Node;
  const kv::MvccStore& store = db_->store();
  const Version rv = read_version_;
  const auto& points = writes.points();
  const RangeSet& cleared = writes.cleared_ranges();

  // The next store node at or after `n` with a value visible at rv, below `end`.
  auto visible_from = [&](Node* n) { return store.first_visible(n, end, rv); };
  Node* node = visible_from(store.seek_ge(begin));
  auto point = points.lower_bound(begin);

  // Each row is checked against the limits as soon as it is passed on, before the walk
  // looks for the next one: a limited read (a queue's limit 1) stops without that step.
  // (No row yet, the limits cannot be reached: they are positive when set.)
  for (;;) {
    bool have_point = point != points.end() && std::string_view(point->first) < end;
    if (node == nullptr && !have_point) break;
    if (have_point && (node == nullptr || std::string_view(point->first) <= node->key())) {
      bool same = node != nullptr && node->key() == point->first;
      std::optional<std::string_view> stored;
      if (same) stored = kv::MvccStore::visible(node, rv)->value();
      emit_own_write(point->first, point->second, stored, out);
      if (out.full()) break;
      if (same) node = visible_from(kv::MvccStore::next(node));
      ++point;
      continue;
    }
    if (!cleared.empty()) {
      if (const auto* range = cleared.find(node->key())) {
        node = visible_from(store.seek_ge(range->second));
        continue;
      }
    }
    out.emit(node->key(), kv::MvccStore::visible(node, rv)->value());
    if (out.full()) break;
    node = visible_from(kv::MvccStore::next(node));
  }
}

template <class Output>
void TransactionImpl::read_reverse(const WriteMap& writes, std::string_view begin,
                                   std::string_view end, Output& out) {
  using Node = kv::MvccStore::Node;
  const kv::MvccStore& store = db_->store();
  const Version rv = read_version_;
  const auto& points = writes.points();
  const RangeSet& cleared = writes.cleared_ranges();

  // The last store node before `key` with a value visible at rv, at or after `begin`.
  auto visible_before = [&](std::string_view key) { return store.seek_visible_lt(key, begin, rv); };
  Node* node = visible_before(end);
  auto point = points.lower_bound(end);  // one past the last candidate

  for (;;) {  // checked against the limits as read_forward does
    bool have_point = point != points.begin() && std::string_view(std::prev(point)->first) >= begin;
    if (node == nullptr && !have_point) break;
    if (have_point &&
        (node == nullptr || std::string_view(std::prev(point)->first) >= node->key())) {
      --point;
      bool same = node != nullptr && node->key() == point->first;
      std::optional<std::string_view> stored;
      if (same) stored = kv::MvccStore::visible(node, rv)->value();
      emit_own_write(point->first, point->second, stored, out);
      if (out.full()) break;
      if (same) node = visible_before(point->first);
      continue;
    }
    if (!cleared.empty()) {
      if (const auto* range = cleared.find(node->key())) {
        node = visible_before(range->first);
        continue;
      }
    }
    out.emit(node->key(), kv::MvccStore::visible(node, rv)->value());
    if (out.full()) break;
    node = visible_before(node->key());
  }
}

// ---- Watches ----------------------------------------------------------------------

std::shared_ptr<WatchState> TransactionImpl::watch(std::string_view key) {
  if (!ryw_) {
    check_usable();
    throw Error(ErrorCode::watches_disabled, "watch() needs read-your-writes enabled");
  }
  // get()'s checks, then the size: a key too long to watch is refused before it is read.
  check_usable();
  base::check_readable_key(key, /*metadata_version_ok=*/true);
  if (key.size() > base::kKeySizeLimit) {
    throw Error(ErrorCode::key_too_large, "cannot watch " + base::describe_key(key));
  }
  // A watch reads the key serializably (and so conflicts on it), as FoundationDB's does.
  std::optional<std::string> seen = get(key, ReadMode::serializable);
  watches_.push_back(std::make_shared<WatchState>(std::string(key), std::move(seen)));
  return watches_.back();
}

std::optional<std::string> TransactionImpl::read_committed(std::string_view key) {
  kv::MvccStore& store = db_->store();
  // A slot holding the commit's version keeps it; the read takes a slot of its own then.
  struct Reading {
    kv::ReaderRegistry& registry;
    kv::ReaderRegistry::Slot* slot;
    bool own;
    ~Reading() {
      kv::ReaderRegistry::withdraw(slot);
      if (own) registry.release(slot);
    }
  };
  const bool own = holds_commit_version();
  Reading reading{store.registry(),
                  own ? store.registry().acquire() : reader_slot(store.registry()), own};
  Version v = kv::ReaderRegistry::announce(reading.slot, store.committed_atomic());
  std::optional<std::string> value;
  if (const kv::VersionRecord* r = store.get(key, v)) value.emplace(r->value());
  return value;
}

void TransactionImpl::finish_pending_watches(bool committed, ErrorCode error) {
  if (committed) {
    WatchRegistry& registry = db_->pipeline().watches();
    for (auto& w : watches_) {
      registry.arm(w, [this](std::string_view key) { return read_committed(key); });
    }
  } else {
    for (auto& w : watches_) w->finish(WatchState::Status::failed, error);
  }
  watches_.clear();
}

// ---- Writes -----------------------------------------------------------------------

// FoundationDB fires a transaction's own watches as soon as it changes their key (its
// read-your-writes layer does), not at commit. `value`: the new value, nullopt for a
// clear; `known` false when an atomic operation makes it unknowable here.
void TransactionImpl::fire_own_watches(std::string_view begin, std::string_view end,
                                       const std::optional<std::string_view>& value, bool known) {
  for (const auto& w : watches_) {
    std::string_view key = w->key();
    if (key < begin || key >= end) continue;
    bool same = known && value.has_value() == w->seen().has_value() &&
                (!value.has_value() || *value == *w->seen());
    if (!same) w->finish(WatchState::Status::fired);
  }
}

void TransactionImpl::set(std::string_view key, std::string_view value) {
  if (tracks_write_conflicts()) [[unlikely]]
    return set_tracked(key, value);
  set_as<false>(key, value);
}

void TransactionImpl::set_tracked(std::string_view key, std::string_view value) {
  set_as<true>(key, value);
}

template <bool kTracked>
void TransactionImpl::set_as(std::string_view key, std::string_view value) {
  bool unconflicted = false;
  if (kTracked && next_write_unconflicted_) {
    // FoundationDB's set refuses the metadata version key, and hands a special key to
    // its own space, before it takes the flag.
    unconflicted =
        key != base::kMetadataVersionKey && key < base::kSystemKeyEnd && take_next_write_flag();
  }
  check_usable();
  base::check_writable_key(key);
  base::check_value(value);
  const bool own_conflict = kTracked && adds_own_write_conflict(unconflicted);
  if (kTracked || !watches_.empty()) [[unlikely]] {
    writes_.set(key, value);
    if (own_conflict) add_own_write_conflict(key, key_after(key));
    if (!watches_.empty()) after_point_set(key, value);
    return;
  }
  writes_.set(key, value);  // last: the value's copy ends the call
}

bool TransactionImpl::explicit_mode_write(bool unconflicted) {
  if (!explicit_write_conflicts_) {
    // The writes so far each have their range: own_write_conflicts_ takes them over.
    for (const auto& point : writes_.points()) {
      own_write_conflicts_.push_back({std::string(point.first), key_after(point.first)});
    }
    for (const auto& [b, e] : writes_.cleared_ranges()) {
      own_write_conflicts_.push_back({std::string(b), std::string(e)});
    }
    explicit_write_conflicts_ = true;
    recount_above_ = 0;  // the running count no longer bounds the exact one
  }
  return !unconflicted;
}

void TransactionImpl::add_own_write_conflict(std::string_view begin, std::string_view end) {
  own_write_conflicts_.push_back({std::string(begin), std::string(end)});
  if (own_write_conflicts_.size() >= own_conflicts_coalesce_at_) {
    // Many writes to the same keys keep one range each.
    coalesce(own_write_conflicts_);
    own_conflicts_coalesce_at_ = std::max<std::size_t>(64, 2 * own_write_conflicts_.size());
  }
}

void TransactionImpl::after_point_set(std::string_view key, std::string_view value) {
  fire_own_watches(key, key_after(key), value, true);
}

void TransactionImpl::clear(std::string_view key) {
  if (tracks_write_conflicts()) [[unlikely]]
    return clear_tracked(key);
  clear_as<false>(key);
}

void TransactionImpl::clear_tracked(std::string_view key) { clear_as<true>(key); }

template <bool kTracked>
void TransactionImpl::clear_as(std::string_view key) {
  const bool unconflicted = kTracked && take_next_write_flag();
  check_usable();
  base::check_readable_key(key);
  if (key.size() > base::kKeySizeLimit) [[unlikely]] {
    clear_beyond_key_limit(key, unconflicted);
    return;
  }
  const bool own_conflict = kTracked && adds_own_write_conflict(unconflicted);
  writes_.clear(key);
  if (own_conflict) add_own_write_conflict(key, key_after(key));
  if (!unreadable_.empty() || !watches_.empty()) [[unlikely]]
    after_point_clear(key);
}

// No such key exists, but FoundationDB 7.4's clear of one up to its read limit (the same
// that get() reads at) is a write: ReadYourWritesTransaction::clear records the cleared
// range [key, key+00) in its write map, which answers later reads of the key, and counts
// it toward the size. The same range here, and no record in the store.
void TransactionImpl::clear_beyond_key_limit(std::string_view key, bool unconflicted) {
  if (!base::clears_nothing(key)) clear_range_checked(key, key_after(key), unconflicted);
}

void TransactionImpl::after_point_clear(std::string_view key) {
  const std::string end = key_after(key);
  if (!unreadable_.empty()) unreadable_.erase(key, end);  // a stamp here is cleared
  if (!watches_.empty()) fire_own_watches(key, end, std::nullopt, true);
}

void TransactionImpl::clear_range(std::string_view begin, std::string_view end) {
  const bool unconflicted = take_next_write_flag();
  check_usable();
  base::check_range(begin, end, /*check_order=*/true);
  clear_range_checked(begin, end, unconflicted);
}

void TransactionImpl::clear_range_checked(std::string_view begin, std::string_view end,
                                          bool unconflicted) {
  begin = base::cut_range_end(begin);  // as FoundationDB's clear (base::clears_nothing)
  end = base::cut_range_end(end);
  if (!base::key_less(begin, end)) return;
  const bool own_conflict = adds_own_write_conflict(unconflicted);
  writes_.clear_range(begin, end);
  if (own_conflict) add_own_write_conflict(begin, end);
  if (!unreadable_.empty()) unreadable_.erase(begin, end);  // a stamp here is cleared
  if (!watches_.empty()) fire_own_watches(begin, end, std::nullopt, true);
}

void TransactionImpl::atomic_op(MutationType type, std::string_view key, std::string_view param) {
  // A versionstamped key takes the flag and has no write conflict range in FoundationDB's
  // write map either way; this commit records the key it becomes (record_stamped_keys).
  const bool unconflicted = take_next_write_flag();
  check_usable();
  // FoundationDB's order of checks: where the key is, the type, the key's size (a stamped
  // key's offset bytes included), the operand's size, then a stamp's offset.
  if (key >= base::kSystemKeyStart) [[unlikely]] {
    // Only \xff/metadataVersion, and only stamped at offset 0; else 2000, or 2004.
    if (key != base::kMetadataVersionKey) base::check_readable_key(key);
    if (type != MutationType::set_versionstamped_value || param != base::kMetadataVersionOperand) {
      base::refuse_metadata_version_write();
    }
  }
  if (static_cast<int>(type) < 0 || type > MutationType::set_versionstamped_value) {
    throw Error(
        ErrorCode::invalid_mutation_type,
        "mutation type " + std::to_string(static_cast<int>(type)) + " is not an atomic operation");
  }
  base::check_key_size(key);
  base::check_value(param);
  if (type == MutationType::set_versionstamped_key) {
    auto [tmpl, offset] = split_stamp_operand(key, "key");
    // Unreadable from the lowest stamp this commit could get to the highest: above the
    // read version, or from the zero stamp when there is none yet, as FoundationDB's
    // (asking for a read version here would fix it at this write).
    std::string low = make_versionstamp(read_version_ >= 0 ? read_version_ + 1 : 0, 0);
    std::string high(kVersionstampSize, '\xff');
    std::string lowest = apply_stamp(tmpl, offset, low);
    unreadable_.insert(lowest, key_after(apply_stamp(tmpl, offset, high)));
    std::string placeholder;
    if (ryw_) placeholder = lowest + std::string(key.substr(tmpl.size()));
    writes_.add_stamped_key(
        {std::string(tmpl), offset, std::string(param), std::move(placeholder)});
    return;
  }
  if (type == MutationType::set_versionstamped_value) {
    auto [tmpl, offset] = split_stamp_operand(param, "value");
    const bool own_conflict = adds_own_write_conflict(unconflicted);
    writes_.set_stamped_value(key, tmpl, offset);
    if (own_conflict) add_own_write_conflict(key, key_after(key));
    if (unconflicted) unconflicted_stamped_values_.emplace_back(key);
    unreadable_.insert(key, key_after(key));  // until a clear, as FoundationDB's
    if (!watches_.empty()) fire_own_watches(key, key_after(key), std::nullopt, false);
    return;
  }
  const bool own_conflict = adds_own_write_conflict(unconflicted);
  writes_.atomic(key, type, param);
  if (own_conflict) add_own_write_conflict(key, key_after(key));
  if (!watches_.empty()) fire_own_watches(key, key_after(key), std::nullopt, false);
}

void TransactionImpl::add_read_conflict_range(std::string_view begin, std::string_view end,
                                              ConflictKeys keys) {
  // One key, as a binding adds it (Python's add_read_conflict_key): the point read, with
  // the same checks and the same subtraction, and no range built.
  if (base::is_single_key_range(begin, end)) {
    add_read_conflict_key(begin, keys);
    return;
  }
  check_usable();
  if (keys == ConflictKeys::system) {
    base::check_system_conflict_range(begin, end);
  } else if (!base::is_metadata_version_range(begin, end)) {
    base::check_range(begin, end, true);
  }
  begin = base::cut_range_end(begin);  // with or without read-your-writes, as FoundationDB's
  end = base::cut_range_end(end);
  if (!base::key_less(begin, end)) return;
  // Reads nothing, so takes no read version: commit() takes one if no read has.
  // Minus this transaction's writes only when its reads see them (FoundationDB's without
  // read-your-writes hands the range to the database's transaction whole).
  add_range_read(begin, end, false, ryw_);
}

// [key, key+00) as add_read_conflict_range would take it, kept with the keys read by get()
// (no key+00 built, no range subtraction).
void TransactionImpl::add_read_conflict_key(std::string_view key, ConflictKeys keys) {
  check_usable();
  if (keys == ConflictKeys::system) {
    if (key >= base::kSystemKeyEnd) [[unlikely]]  // key+00 is past it
      base::check_system_conflict_range(key, base::key_after(key));
  } else {
    base::check_readable_key(key, /*metadata_version_ok=*/true);
  }
  // [key, key+00) cut is empty (a key longer than kReadKeySizeLimit is one to ask about).
  if (key.size() > base::kReadKeySizeLimit && key.size() > base::max_key_size(key)) [[unlikely]]
    return;
  // Minus the keys this transaction wrote whatever their stored value (WriteMap::overwrites),
  // when its reads see its writes.
  if (ryw_ && writes_.overwrites(key)) return;
  add_point_read(key);
}

void TransactionImpl::add_write_conflict_range(std::string_view begin, std::string_view end,
                                               ConflictKeys keys) {
  check_usable();
  if (keys == ConflictKeys::system) {
    base::check_system_conflict_range(begin, end);
  } else {
    base::check_range(begin, end, /*check_order=*/true);
  }
  begin = base::cut_range_end(begin);  // as FoundationDB's, which drops it if empty
  end = base::cut_range_end(end);
  if (!base::key_less(begin, end)) return;
  write_conflicts_.push_back({std::string(begin), std::string(end)});
  conflict_bytes_ += begin.size() + end.size();
}

// ---- Commit -----------------------------------------------------------------------

namespace {

// The bytes of the writes, each with its write conflict range: size_bytes() without the
// explicit and read conflict ranges. Inline: every commit counts them.
[[gnu::always_inline]] inline std::size_t write_size(const WriteMap& writes) {
  std::size_t n = 0;
  if (writes.only_sets_and_clears()) {  // no operation, cleared range or stamped key to count
    for (const auto& [key, w] : writes.points()) {
      STRATA_INVARIANT(w.ops.empty());
      n += 2 * key.size() + w.size + 1;
    }
    STRATA_INVARIANT(writes.cleared_ranges().empty() && writes.stamped_keys().empty());
    return n;
  }
  for (const auto& [key, w] : writes.points()) {
    n += 2 * key.size() + w.size + 1;  // mutation and its write conflict range
    for (const AtomicOp& op : w.ops) n += key.size() + op.param.size();
  }
  for (const auto& [b, e] : writes.cleared_ranges()) n += 2 * (b.size() + e.size());
  for (const StampedKeyWrite& s : writes.stamped_keys()) n += 2 * s.key.size() + s.value.size() + 1;
  return n;
}

}  // namespace

// With a write that has no conflict range (explicit_write_conflicts_): the writes' own
// bytes, and the ranges the commit sends for those that have one, merged. FoundationDB's
// approximate size leaves out the range of a write made under
// NEXT_WRITE_NO_WRITE_CONFLICT_RANGE (fdbclient/ReadYourWrites.cpp, set: `addWriteConflict
// ? sizeof(KeyRangeRef) + ...`), and keeps those of writes a later clear without one
// covered (WriteMap::clearNoConflict). A range of one key counts as write_size counts a
// point's, its key once and the 00 byte.
std::size_t TransactionImpl::explicit_write_size() const {
  coalesce(own_write_conflicts_);
  std::size_t n = 0;
  for (const auto& [key, w] : writes_.points()) {
    n += key.size() + w.size;
    for (const AtomicOp& op : w.ops) n += key.size() + op.param.size();
  }
  for (const auto& [b, e] : writes_.cleared_ranges()) n += b.size() + e.size();
  for (const StampedKeyWrite& s : writes_.stamped_keys())
    n += 2 * s.key.size() + s.value.size() + 1;
  for (const KeyRange& r : own_write_conflicts_) {
    n += base::is_single_key_range(r.begin, r.end) ? r.end.size() : r.begin.size() + r.end.size();
  }
  return n;
}

// Where a commit checks the limit exactly (refuse_commit) and where it is reported.
std::size_t TransactionImpl::exact_write_size() const {
  return explicit_write_conflicts_ ? explicit_write_size() : write_size(writes_);
}

std::size_t TransactionImpl::size_bytes() const { return conflict_bytes_ + exact_write_size(); }

std::size_t TransactionImpl::merge_conflicts() {
  coalesce(read_conflicts_);
  std::sort(point_reads_.begin(), point_reads_.end());
  point_reads_.erase(std::unique(point_reads_.begin(), point_reads_.end()), point_reads_.end());
  std::size_t n = 0;
  for (const ArenaRange& r : read_conflicts_) n += r.begin.size() + r.end.size();
  for (std::string_view key : point_reads_) n += 2 * key.size() + 1;
  for (const KeyRange& r : write_conflicts_) n += r.begin.size() + r.end.size();
  conflict_bytes_ = n;
  return n;
}

// Inline in both commits: the common path makes no call.
[[gnu::always_inline]] inline bool TransactionImpl::needs_refusal_checks(std::size_t size) const {
  return (has_read_conflicts() &&
          (read_version_ < 0 ||
           base::CoarseClock::now() - read_version_time_ > db_->mvcc_window())) ||
         size > recount_above_;
}

// A commit refused before it reaches the pipeline ends the transaction as one refused
// there does (FoundationDB marks the commit started before these checks): its watches
// fail with the error, and it takes no more operations until on_error or reset. The
// quick checks stay inline in commit(); only a failure leaves it, here, so the common path
// carries neither an exception handler nor a call.
void TransactionImpl::refuse_commit() {
  try {
    // Conflict ranges added before any read are checked from a version taken now, as
    // FoundationDB's commit starts a transaction that has no read version yet (NativeAPI's
    // tryCommit).
    if (has_read_conflicts()) {
      if (read_version_ < 0) {
        ensure_read_version();
      } else {
        check_not_too_old();
      }
    }
    // The running count adds each read's conflict as the read is made, so a key read
    // twice counts twice; FoundationDB counts the merged ranges its commit sends. Near the
    // limit, count them so.
    // (Two statements: merge_conflicts() rewrites conflict_bytes_, and within one
    // expression its call and the read of conflict_bytes_ are not ordered.)
    const std::size_t writes = exact_write_size();
    const std::size_t size = writes + merge_conflicts();
    if (size > size_limit_) {
      throw Error(ErrorCode::transaction_too_large, "transaction of " + std::to_string(size) +
                                                        " bytes exceeds the limit of " +
                                                        std::to_string(size_limit_));
    }
  } catch (const Error& e) {
    state_ = State::committed;
    release_read_version();
    finish_watches(false, e.error_code());
    throw;
  }
}

void TransactionImpl::commit() {
  check_usable();
  if (writes_.empty() && write_conflicts_.empty()) {
    commit_read_only();
    return;
  }
  // Its writes' bytes, for the pipeline's reservation (ApplyReservation).
  const std::size_t write_bytes = write_size(writes_);
  // size_bytes(), but where a write was made without a range: needs_refusal_checks then
  // sends the commit to the exact count (recount_above_).
  const std::size_t size = write_bytes + conflict_bytes_;
  if (needs_refusal_checks(size)) [[unlikely]] {
    // Throws when the commit is refused, or returns when the size, counted as the commit
    // sends its conflicts, is within the limit after all, and the read version is taken.
    refuse_commit();
  }
  CommitRequest request;
  request.write_bytes = write_bytes;
  request.slot = slot_;
  prepare_commit(request);
  state_ = State::committing;
  mark_committing();
  try {
    db_->pipeline().commit(request);
  } catch (...) {  // refused before it was queued: the records read at the version may be gone
    release_read_version();
    throw;
  }
  if (!settle(request)) throw commit_error(request);
}

void TransactionImpl::mark_committing() noexcept {
  // Every read is over: from here the read version holds only the conflict history the
  // commit is checked against, and collection may free the records read at it (a committer
  // waiting for the commit lock or the log holds no garbage).
  if (read_version_ >= 0 && slot_ != nullptr) kv::ReaderRegistry::begin_commit(slot_);
}

void TransactionImpl::commit_read_only() {
  state_ = State::committed;
  commit_succeeded_ = true;
  committed_version_ = -1;
  release_read_version();
  finish_watches(true, ErrorCode::success);
}

void TransactionImpl::prepare_commit(CommitRequest& request) {
  request.read_version = read_version_;
  if (!read_conflicts_.empty()) {
    coalesce(read_conflicts_);
    request.read_ranges = &read_conflicts_;
  }
  if (!point_reads_.empty()) request.read_keys = &point_reads_;
  // Most commits have no write conflict range beyond their point writes': one combined
  // test skips prepare_write_ranges().
  const bool has_write_ranges =
      explicit_write_conflicts_ || !writes_.cleared_ranges().empty() || !write_conflicts_.empty();
  if (has_write_ranges) [[unlikely]]
    prepare_write_ranges(request);
  request.writes = &writes_;
  if (report_conflicts_) {
    conflicting_.clear();
    conflicting_.reserve(read_conflicts_.size() + point_reads_.size());
    request.conflicting = &conflicting_;
  }
}

void TransactionImpl::prepare_write_ranges(CommitRequest& request) {
  // The cleared ranges join the explicit write conflicts, merged, where they stay for
  // write_conflict_ranges(); soft_reset() empties them and their room serves the next
  // transaction.
  if (explicit_write_conflicts_) {
    write_conflicts_.insert(write_conflicts_.end(), own_write_conflicts_.begin(),
                            own_write_conflicts_.end());
  } else {
    for (const auto& [b, e] : writes_.cleared_ranges()) write_conflicts_.push_back({b, e});
  }
  if (!write_conflicts_.empty()) {
    coalesce(write_conflicts_);
    request.write_ranges = &write_conflicts_;
  }
  request.write_ranges_only = explicit_write_conflicts_;
}

bool TransactionImpl::settle(CommitRequest& request) {
  state_ = State::committed;
  if (request.held) [[unlikely]] {
    hold_committed(request);
  } else {
    release_read_version();
  }
  finish_watches(request.error == ErrorCode::success, request.error);
  if (request.error != ErrorCode::success) return false;
  commit_succeeded_ = true;
  committed_version_ = request.version;
  batch_index_ = request.batch_index;
  return true;
}

void TransactionImpl::hold_committed(const CommitRequest& request) {
  if (slot_ == nullptr) {  // the batch took one for it
    kv::ReaderRegistry& registry = db_->store().registry();
    slot_ = request.slot;
    slot_registry_ = &registry;
    slot_registry_id_ = registry.id();
  }
  STRATA_INVARIANT(slot_ == request.slot);
  if (request.error != ErrorCode::success) {  // admitted, then failed: let it go
    release_read_version();
    return;
  }
  // The batch announced the version in the slot before it was published (in place of the
  // read version); the slot keeps it until the transaction is reset, cancelled, reads
  // again or is destroyed.
  read_version_ = -1;
  held_version_ = request.version;
  hold_deadline_ = request.hold_deadline;
  // A versionstamped write put the version into the data, where a program can read it.
  if (writes_.has_stamped_values() || !writes_.stamped_keys().empty()) {
    db_->store().retain(held_version_, hold_deadline_);
  }
}

Error TransactionImpl::commit_error(const CommitRequest& request) const {
  switch (request.error) {
    case ErrorCode::not_committed:
      return conflict_error(request.read_version);
    case ErrorCode::transaction_too_old:
      return Error(request.error, "read version " + std::to_string(request.read_version) +
                                      " was released before the commit was resolved: it sat "
                                      "idle past its mvcc_window");
    case ErrorCode::commit_unknown_result:
      return Error(request.error,
                   "writing the commit to the log failed; it may or may not be durable");
    case ErrorCode::commit_proxy_memory_limit_exceeded:
      return Error(request.error,
                   "out of memory: the commit was refused before it changed anything; retry it");
    default:
      return Error(request.error,
                   "the database accepts no more commits (a write to the log failed, or a "
                   "commit ran out of memory part-way); reopen it to recover");
  }
}

namespace {

// The transaction whose commit_async callback this thread is running, until the callback
// destroys it.
thread_local TransactionImpl* t_settling_transaction = nullptr;

}  // namespace

void TransactionImpl::commit_async(CommitCallback done) {
  std::optional<Error> finished;  // the commit ended here, with this error (or success)
  if (db_->pipeline().mode() == CommitMode::alone) {
    // In memory a commit is made by its caller in microseconds: nothing to wait for.
    try {
      commit();
    } catch (const Error& e) {
      finished = e;
    }
    done(finished ? &*finished : nullptr);
    return;
  }
  bool read_only = false;
  std::size_t write_bytes = 0;
  try {
    check_usable();  // misuse: the transaction goes on as it was, as in commit()
    read_only = writes_.empty() && write_conflicts_.empty();
    if (read_only) {
      commit_read_only();
    } else {
      const std::size_t size = size_bytes();
      write_bytes = size - conflict_bytes_;  // at least the writes' own bytes, as commit()'s
      if (needs_refusal_checks(size)) refuse_commit();
    }
  } catch (const Error& e) {
    finished = e;
  }
  if (!finished && !read_only && db_->pipeline().failed()) {
    finished = db_->pipeline().failure_error();
    state_ = State::committed;
    release_read_version();
    finish_watches(false, finished->error_code());
  }
  if (finished || read_only) {
    done(finished ? &*finished : nullptr);
    return;
  }
  if (async_request_ == nullptr) {
    async_request_ = std::make_unique<CommitRequest>();
  } else {  // a fresh request where the last one was (a WaitWord cannot be assigned)
    std::destroy_at(async_request_.get());
    std::construct_at(async_request_.get());
  }
  CommitRequest& request = *async_request_;
  request.write_bytes = write_bytes;
  request.slot = slot_;
  prepare_commit(request);
  request.on_done = &TransactionImpl::on_async_done;
  request.context = this;
  done_ = std::move(done);
  state_ = State::committing;
  mark_committing();
  in_flight_.fetch_add(1, std::memory_order_relaxed);
  try {
    db_->pipeline().submit(request);
  } catch (...) {  // out of memory, or no thread for the pipeline: nothing was queued
    in_flight_.fetch_sub(1, std::memory_order_relaxed);
    done_ = nullptr;
    request.error = ErrorCode::transaction_cancelled;
    settle(request);
    throw;
  }
}

void TransactionImpl::on_async_done(CommitRequest& request) noexcept {
  auto* const t = static_cast<TransactionImpl*>(request.context);
  TransactionImpl* const outer = t_settling_transaction;
  t_settling_transaction = t;
  {
    std::optional<Error> error;
    if (!t->settle(request)) error.emplace(t->commit_error(request));
    // Moved out (and destroyed before the count drops): `done` may submit this
    // transaction again, which sets done_ anew.
    const CommitCallback done = std::move(t->done_);
    done(error ? &*error : nullptr);
  }
  const bool alive = t_settling_transaction == t;  // else `done` destroyed it
  t_settling_transaction = outer;
  if (alive && t->in_flight_.fetch_sub(1, std::memory_order_release) == 1) {
    base::futex_wake_all(t->in_flight_);
  }
}

void TransactionImpl::wait_for_async() noexcept {
  // Nothing in flight, nothing to wait for: a callback running holds a count too, so this
  // is not being destroyed by its own callback either. Every transaction's end asks.
  if (in_flight_.load(std::memory_order_acquire) == 0) return;
  if (t_settling_transaction == this) {
    // Destroyed by its own callback: the commit is over but for its count.
    t_settling_transaction = nullptr;
    in_flight_.fetch_sub(1, std::memory_order_relaxed);
  }
  for (std::int32_t n; (n = in_flight_.load(std::memory_order_acquire)) != 0;) {
    base::futex_wait(in_flight_, n);
  }
}

Error TransactionImpl::conflict_error(Version read_version) const {
  std::string message = "a transaction committed after read version " +
                        std::to_string(read_version) + " wrote a range this one read";
  if (!conflicting_.empty()) {
    const std::vector<KeyRange> ranges = conflicting_ranges();
    constexpr std::size_t kShown = 3;
    message += ": ";
    for (std::size_t i = 0; i < ranges.size() && i < kShown; ++i) {
      if (i > 0) message += ", ";
      message +=
          "[" + base::quote_key(ranges[i].begin) + ", " + base::quote_key(ranges[i].end) + ")";
    }
    if (ranges.size() > kShown) {
      message += " and " + std::to_string(ranges.size() - kShown) + " more";
    }
  }
  return Error(ErrorCode::not_committed, message);
}

KeyRange TransactionImpl::read_range(std::size_t i) const {
  if (i < read_conflicts_.size()) {
    const ArenaRange& r = read_conflicts_[i];
    return {std::string(r.begin), std::string(r.end)};
  }
  const std::string_view key = point_reads_[i - read_conflicts_.size()];
  return {std::string(key), base::key_after(key)};
}

std::vector<KeyRange> TransactionImpl::conflicting_ranges() const {
  std::vector<KeyRange> out;
  out.reserve(conflicting_.size());
  for (std::uint32_t i : conflicting_) out.push_back(read_range(i));
  coalesce(out);
  return out;
}

std::vector<KeyRange> TransactionImpl::read_conflict_ranges() const {
  const std::size_t reads = read_conflicts_.size() + point_reads_.size();
  std::vector<KeyRange> out;
  out.reserve(reads);
  for (std::size_t i = 0; i < reads; ++i) out.push_back(read_range(i));
  coalesce(out);
  return out;
}

std::vector<KeyRange> TransactionImpl::write_conflict_ranges() const {
  std::vector<KeyRange> out = write_conflicts_;
  if (explicit_write_conflicts_) {
    out.insert(out.end(), own_write_conflicts_.begin(), own_write_conflicts_.end());
  } else {
    for (const auto& [b, e] : writes_.cleared_ranges())
      out.push_back({std::string(b), std::string(e)});
    for (const auto& point : writes_.points()) {
      out.push_back({std::string(point.first), base::key_after(point.first)});
    }
  }
  if (commit_succeeded_) {
    // The stamp is known: each versionstamped key's own key.
    const std::string stamp = make_versionstamp(committed_version_, batch_index_);
    for (const StampedKeyWrite& w : writes_.stamped_keys()) {
      std::string key = apply_stamp(w.key, w.offset, stamp);
      std::string end = base::key_after(key);
      out.push_back({std::move(key), std::move(end)});
    }
  } else {
    // Every key a stamp may make (FoundationDB's approximate range until commit).
    // Less the keys given a versionstamped value with no range (unless another write gave
    // them one: it is in own_write_conflicts_).
    auto append = [&out](const RangeSet& ranges) {
      for (const auto& [b, e] : ranges) out.push_back({std::string(b), std::string(e)});
    };
    if (unconflicted_stamped_values_.empty()) {
      append(unreadable_);
    } else {
      RangeSet stamped = unreadable_;
      for (const std::string& key : unconflicted_stamped_values_) {
        stamped.erase(key, key_after(key));
      }
      append(stamped);
    }
  }
  coalesce(out);
  return out;
}

Version TransactionImpl::committed_version() const {
  if (!commit_succeeded_) {
    throw Error(ErrorCode::client_invalid_operation,
                "committed_version() is known only after a successful commit");
  }
  // Handed out: retained while the slot still holds it (see read_version()).
  if (holds_commit_version()) [[unlikely]]
    db_->store().retain(held_version_, hold_deadline_);
  return committed_version_;
}

std::string TransactionImpl::versionstamp() const {
  if (!commit_succeeded_) {
    throw Error(ErrorCode::client_invalid_operation,
                "versionstamp() is known only after a successful commit");
  }
  if (committed_version_ < 0) {
    throw Error(ErrorCode::no_commit_version,
                "a read-only transaction has no commit version and so no versionstamp");
  }
  return make_versionstamp(committed_version_, batch_index_);
}

// ---- Retry, reset, cancel, timeout --------------------------------------------------

void TransactionImpl::on_error(const Error& e) {
  const RetryStep step = retry_step(e.error_code(), GiveUp::cancel);
  if (step.delay.count() > 0) std::this_thread::sleep_for(step.delay);
  if (step.error == ErrorCode::success) return;
  if (step.error == e.error_code()) throw e;  // the error given back, not a new one
  throw retry_error(step.error, step.delay.count() > 0);
}

namespace {

// A backoff in nanoseconds, saturated: a maximum retry delay of milliseconds::max() allows
// backoffs past what nanoseconds count.
std::chrono::nanoseconds to_nanoseconds(base::RetryBackoff::Seconds delay) {
  constexpr auto kLongest = std::chrono::duration<double>(std::chrono::nanoseconds::max());
  if (delay >= kLongest) return std::chrono::nanoseconds::max();
  return std::chrono::duration_cast<std::chrono::nanoseconds>(delay);
}

}  // namespace

RetryStep TransactionImpl::retry_step(ErrorCode error, GiveUp give_up) {
  if (state_ == State::visiting) throw_visiting();
  if (const ErrorCode ended = ended_by(); ended != ErrorCode::success) return {.error = ended};
  if (error == ErrorCode::success) return {.error = ErrorCode::client_invalid_operation};
  // As FoundationDB's: past the limit, the error given is given back (not a new one). The
  // retry counts even then, so a lower limit set later is held against it.
  const bool limit_hit = retry_limit_ >= 0 && retries_ >= retry_limit_;
  if (retries_ < std::numeric_limits<int>::max()) ++retries_;
  if (limit_hit || !error_retryable(error)) {
    if (give_up == GiveUp::cancel) {
      cancel();  // a loop that went on anyway cannot commit what it wrote before
      return {.error = error, .cancelled = true};
    }
    reset_for_retry();
    return {.error = error, .reset = true};
  }
  const std::chrono::nanoseconds delay = to_nanoseconds(backoff_.next(error, max_backoff_));
  reset_for_retry();
  // A timeout already past, or falling inside the delay, ends the retrying at the deadline,
  // as FoundationDB's on_error future fails with transaction_timed_out.
  if (timeout_.count() > 0) {
    const Clock::time_point now = Clock::now();
    if (deadline_ <= now) return {.error = ErrorCode::transaction_timed_out, .reset = true};
    if (deadline_ - now <= delay) {
      return {.delay = std::chrono::duration_cast<std::chrono::nanoseconds>(deadline_ - now),
              .error = ErrorCode::transaction_timed_out,
              .reset = true};
    }
  }
  return {.delay = delay, .reset = true};
}

Error TransactionImpl::retry_error(ErrorCode error, bool waited) const {
  switch (error) {
    case ErrorCode::transaction_cancelled:
      return Error(error, "the transaction was cancelled; reset it");
    case ErrorCode::transaction_timed_out:
      return Error(error, "timeout of " + std::to_string(timeout_.count()) + " ms expired" +
                              (waited ? " while retrying" : ""));
    case ErrorCode::client_invalid_operation:
      return Error(error, "on_error was given success, not an error");
    default:
      return Error(error);
  }
}

// Inlined into its one caller, reset_for_retry(): the call's register saves cost more than
// its checks of what the transaction used.
void TransactionImpl::soft_reset() {
  finish_watches(false, ErrorCode::transaction_cancelled);
  release_read_version();
  writes_.reset();
  unreadable_.clear();
  // Drop the arrays' room too (it is in the arena) before the arena is reused.
  read_conflicts_.forget();
  point_reads_.forget();
  arena_.release();
  write_conflicts_.clear();
  next_write_unconflicted_ = false;
  if (explicit_write_conflicts_) [[unlikely]] {
    explicit_write_conflicts_ = false;
    recount_above_ = size_limit_;
    own_write_conflicts_.clear();
    own_conflicts_coalesce_at_ = 0;
    unconflicted_stamped_values_.clear();
  }
  conflicting_.clear();
  conflict_bytes_ = 0;
  state_ = State::active;
  committed_version_ = -1;
  batch_index_ = 0;
  commit_succeeded_ = false;
}

void TransactionImpl::reset() {
  if (state_ == State::visiting) throw_visiting();
  reset_to_defaults();
  created_ = base::CoarseClock::now();
  apply_database_defaults();
}

void TransactionImpl::reset_for_retry() {
  soft_reset();
  size_limit_ = base::kTransactionSizeLimit;
  recount_above_ = size_limit_;
  ryw_ = true;
  snapshot_ryw_ = true;
  report_conflicts_ = false;
}

void TransactionImpl::reset_to_defaults() {
  reset_for_retry();
  timeout_ = std::chrono::milliseconds{0};
  expired_ = false;
  backoff_.reset();
  retries_ = 0;
}

void TransactionImpl::cancel() {
  if (state_ == State::visiting) throw_visiting();
  finish_watches(false, ErrorCode::transaction_cancelled);
  if (timed_out()) expired_ = true;  // the timeout came first: it stays the answer
  state_ = State::cancelled;
  // committed_version() still answers after a cancel, as FoundationDB's: the version it
  // may hand out is retained before the slot lets it go.
  if (holds_commit_version()) [[unlikely]]
    db_->store().retain(held_version_, hold_deadline_);
  release_read_version();
}

// In any state, as FoundationDB's options. A timeout that has passed has ended the
// transaction: a new one changes nothing.
void TransactionImpl::set_timeout(std::chrono::milliseconds timeout) {
  if (timeout.count() < 0) {
    throw Error(ErrorCode::invalid_argument,
                "timeout of " + std::to_string(timeout.count()) + " ms is negative");
  }
  if (timed_out()) {
    expired_ = true;
    return;
  }
  set_deadline(timeout);
}

void TransactionImpl::set_deadline(std::chrono::milliseconds timeout) {
  timeout_ = timeout;
  deadline_ = base::deadline_after(Clock::now(), timeout);
  if (deadline_ == Clock::time_point::max()) return;  // past the clock's range: none
  // The coarse clock lags by up to a tick: count only what it shows beyond one tick.
  auto since_created = base::CoarseClock::now() - created_ - base::CoarseClock::resolution();
  deadline_ -= std::max(since_created, base::CoarseClock::duration{0});
}

// In any state, as FoundationDB's options: it only bounds a commit yet to come.
void TransactionImpl::set_size_limit(std::size_t bytes) {
  if (bytes < 32 || bytes > base::kTransactionSizeLimit) {
    throw Error(ErrorCode::invalid_argument,
                "size limit " + std::to_string(bytes) + " is outside 32 .. " +
                    std::to_string(base::kTransactionSizeLimit) + " bytes");
  }
  size_limit_ = bytes;
  if (!explicit_write_conflicts_) recount_above_ = bytes;
}

void TransactionImpl::set_retry_limit(int limit) {
  if (limit < -1) {
    throw Error(ErrorCode::invalid_argument,
                "retry limit " + std::to_string(limit) + " is below -1 (no limit)");
  }
  retry_limit_ = limit;
}

void TransactionImpl::set_max_retry_delay(std::chrono::milliseconds delay) {
  if (delay.count() < 0) {
    throw Error(ErrorCode::invalid_argument,
                "maximum retry delay of " + std::to_string(delay.count()) + " ms is negative");
  }
  max_backoff_ = delay;  // as FoundationDB's: the next wait may still use the old backoff
}

}  // namespace strata::engine
