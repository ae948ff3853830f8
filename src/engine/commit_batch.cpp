#include "engine/commit_batch.hpp"

#include <algorithm>
#include <cstdio>
#include <iterator>
#include <new>
#include <optional>
#include <utility>

#include "base/coarse_clock.hpp"
#include "base/invariant.hpp"
#include "base/limits.hpp"
#include "engine/persistence.hpp"
#include "engine/versionstamp.hpp"

namespace strata::engine {
namespace {

// The smallest batch whose writes are fetched together before they are applied (see
// prepare_writes): a lone commit has no other misses to overlap with its own.
constexpr std::size_t kPrepareBatch = 4;
// A transaction of a smaller batch that writes this many keys is prepared alone. Its keys
// ascend: when no stored key lies between its first and last (a bulk load in key order),
// each new key links from the insert before without a seek (MvccStore::expect_key_order),
// as in a log replay; otherwise its writes are fetched together (prepare_writes).
constexpr std::size_t kPrepareWrites = 16;

// The bytes logging a key's atomic operations as operations takes at most.
std::uint64_t ops_log_bytes(std::string_view key, const PointWrite& entry) {
  std::uint64_t n = 0;
  for (const AtomicOp& op : entry.ops) {
    n += key.size() + op.param.size() + durability::kAtomicOverhead;
  }
  return n;
}

// The bytes logging a value of `size` for `key` takes at most.
std::uint64_t set_log_bytes(std::string_view key, std::size_t size) {
  return key.size() + size + durability::kSetOverhead;
}

}  // namespace

// No transaction within the size limit comes near a record's 1 GiB: the limit counts every
// key and value byte, and each write costs at most ~13 bytes more in the log (a key's
// operations count at most a value's 100,000 bytes, however many there are).
std::uint64_t log_bytes_bound(const WriteMap& writes) {
  std::uint64_t n = 0;
  for (const auto& [begin, end] : writes.cleared_ranges()) {
    n += begin.size() + end.size() + durability::kSetOverhead;
  }
  for (const auto& [key, entry] : writes.points()) {
    // A key's atomic operations are logged as the smaller of their result and themselves.
    const std::uint64_t any_value = set_log_bytes(key, base::kValueSizeLimit);
    switch (entry.kind) {
      case PointWrite::Kind::set:
      case PointWrite::Kind::clear:
        n += set_log_bytes(key, entry.size);
        break;
      case PointWrite::Kind::dependent:
        n += std::min(any_value, ops_log_bytes(key, entry));
        break;
      case PointWrite::Kind::stamped: {
        const std::uint64_t stamped = set_log_bytes(key, entry.size);
        n += entry.ops.empty() ? stamped : std::min(any_value, stamped + ops_log_bytes(key, entry));
        break;
      }
    }
  }
  for (const StampedKeyWrite& s : writes.stamped_keys()) n += set_log_bytes(s.key, s.value.size());
  return n;
}

void CommitBatch::set_logging(bool encode, Persistence* room) {
  logs_ = encode;
  room_ = room;
}

std::size_t CommitBatch::first_batch(std::span<CommitRequest* const> requests) const noexcept {
  const std::size_t last = std::min(requests.size(), batch_count_limit_);
  if (!logs_) return last;
  std::uint64_t bytes = requests[0]->log_bytes;
  std::size_t end = 1;
  while (end < last && bytes + requests[end]->log_bytes <= batch_log_limit_) {
    bytes += requests[end++]->log_bytes;
  }
  return end;
}

BatchOutcome CommitBatch::run(std::span<CommitRequest* const> batch) noexcept {
  if (batch.size() == 1 && lone_plain(*batch.front())) return run_lone(batch.front());
  return run_batch(batch);
}

BatchOutcome CommitBatch::run_batch(std::span<CommitRequest* const> batch) noexcept {
  if (logs_) log_.reset();
  // Versions given before may not be published yet (their sync is under way).
  const Version version = store_.newest_assigned() + 1;
  const bool prepared = batch.size() >= kPrepareBatch;
  BatchOutcome out;
  stamped_.clear();
  out.stamped = &stamped_;
  // Before the point of no return: resolution, and the memory the writes will take.
  try {
    std::uint16_t index = 0;
    for (CommitRequest* r : batch) {
      r->batch_index = index++;
      if (admit(*r, version)) ++out.committed;
    }
    if (prepared) prepare_writes(batch);
    reserve_apply(batch, version, stamped_);
  } catch (...) {  // std::bad_alloc: nothing else is thrown before the point of no return
    refuse(batch, out);
    return out;
  }
  // The point of no return: the store changes. What the writes need was reserved above
  // (engine/apply_reservation.hpp); should anything fail even so, the version is never
  // published and the database fails as after a failed log write.
  std::size_t writes = 0;
  if constexpr (base::kDebugInvariants) store_.expect_reserved(true);
  try {
    writes = apply_all(batch, version, prepared, stamped_);
  } catch (...) {  // std::bad_alloc
    fail_applying(batch, out);
    return out;
  }
  if constexpr (base::kDebugInvariants) store_.expect_reserved(false);
  reservation_.end(store_);
  if (out.committed != 0) {
    store_.note_assigned(version);
    out.version = version;
  }
  out.collect = earned_collection(writes);
  return out;
}

template <class Points>
void CommitBatch::record_points(const CommitRequest& r, const Points& points, Version version) {
  if (r.write_ranges != nullptr) {
    for (const KeyRange& range : *r.write_ranges) {
      resolver_.record_write(range.begin, range.end, version);
    }
  }
  if (r.write_ranges_only) [[unlikely]]
    return;
  for (const auto& point : points) resolver_.record_write_at(point.first, version);
}

bool CommitBatch::lone_plain(const CommitRequest& r) const {
  return !logs_ && r.writes->only_sets_and_clears() && r.write_bytes <= kPlainBytes &&
         !r.writes->points().in_tree() && r.writes->points().size() < kPrepareWrites;
}

// run() for a batch of one request that lone_plain() admits: the same steps, without
// the batch's loops, the paths prepared for larger batches or writes, and the general
// reservation (the request's own bytes bound it, ApplyReservation::reserve_plain), which
// in a commit this small cost more than its checks and writes.
BatchOutcome CommitBatch::run_lone(CommitRequest* const& one) noexcept {
  CommitRequest& r = *one;
  const std::span<CommitRequest* const> batch(&one, 1);
  const Version version = store_.newest_assigned() + 1;
  const std::span<const PointEntry> points = r.writes->points().array();
  BatchOutcome out;
  stamped_.clear();
  out.stamped = &stamped_;
  r.batch_index = 0;
  try {
    if (!passes(r)) {
      out.collect = earned_collection(0);
      return out;
    }
    record_points(r, points, version);
    r.version = version;
    if (hold_window_ != 0) [[unlikely]]
      hold_version(r);
    out.committed = 1;
    ApplyReservation::reserve_plain(store_, points.size(), r.write_bytes);
  } catch (...) {  // std::bad_alloc
    refuse(batch, out);
    return out;
  }
  if constexpr (base::kDebugInvariants) store_.expect_reserved(true);
  try {
    apply_points(points, version);
  } catch (...) {  // std::bad_alloc
    fail_applying(batch, out);
    return out;
  }
  if constexpr (base::kDebugInvariants) store_.expect_reserved(false);
  reservation_.end(store_);
  store_.note_assigned(version);
  out.version = version;
  out.collect = earned_collection(points.size());
  return out;
}

bool CommitBatch::admit(CommitRequest& r, Version version) {
  if (!passes(r)) return false;
  record_writes(r, version);
  r.version = version;
  if (hold_window_ != 0) [[unlikely]]
    hold_version(r);
  return true;
}

void CommitBatch::hold_version(CommitRequest& r) noexcept {
  if (r.slot == nullptr) {
    try {
      r.slot = store_.registry().acquire();
    } catch (const std::bad_alloc&) {
      return;
    }
  }
  const std::int64_t now = base::CoarseClock::now().time_since_epoch().count();
  r.hold_deadline = hold_window_ > kv::ReaderRegistry::kNever - now ? kv::ReaderRegistry::kNever
                                                                    : now + hold_window_;
  kv::ReaderRegistry::hold(r.slot, r.version, r.hold_deadline);
  r.held = true;
}

bool CommitBatch::passes(CommitRequest& r) {
  // Reads below the pruned history cannot be checked: the writes after them may be gone.
  // Every live reader holds the history above its version, but a version revoked past
  // its MVCC window does not, and a commit that passed its age check can reach here
  // after that (FoundationDB's resolvers fail such a commit the same way).
  if (r.read_version < resolver_.floor() && (r.read_ranges != nullptr || r.read_keys != nullptr)) {
    r.error = ErrorCode::transaction_too_old;
    return false;
  }
  // Nothing was committed after its read version (a lone client's commit): none of its
  // reads can conflict, and none is looked up.
  if (resolver_.recorded_after(r.read_version) && !resolve(r)) {
    r.error = ErrorCode::not_committed;
    return false;
  }
  return true;
}

void CommitBatch::refuse(std::span<CommitRequest* const> batch, BatchOutcome& out) noexcept {
  reservation_.end(store_);
  fail_survivors(batch, ErrorCode::commit_proxy_memory_limit_exceeded, out);
  out.status = BatchOutcome::Status::refused;
}

void CommitBatch::fail_applying(std::span<CommitRequest* const> batch, BatchOutcome& out) noexcept {
  if constexpr (base::kDebugInvariants) store_.expect_reserved(false);
  reservation_.end(store_);
  store_.expect_key_order(false);
  log_.reset();
  fail_survivors(batch, ErrorCode::database_failed, out);
  out.status = BatchOutcome::Status::broken;
}

std::size_t CommitBatch::apply_all(std::span<CommitRequest* const> batch, Version version,
                                   bool prepared, std::vector<std::string>& stamped) {
  std::size_t writes = 0;
  std::size_t point = 0;  // the request's first in write_paths_ and write_hashes_
  for (CommitRequest* r : batch) {
    if (r->error != ErrorCode::success) continue;
    const kv::MvccStore::List::Path* paths = prepared ? write_paths_.data() + point : nullptr;
    const std::uint64_t* hashes = prepared ? write_hashes_.data() + point : nullptr;
    bool in_order = false;
    if (!prepared && r->writes->points().size() >= kPrepareWrites) {
      const auto& points = r->writes->points();
      in_order = store_.none_between(points.begin()->first, std::prev(points.end())->first);
      if (!in_order) {
        prepare_writes(*r);
        paths = write_paths_.data();
        hashes = write_hashes_.data();
      }
    }
    if (in_order) store_.expect_key_order(true);
    if (r->writes->only_sets_and_clears()) {
      // A transaction's write map holds each key once: alone in its batch, it writes no
      // key twice.
      const Repeats repeats = batch.size() == 1 ? Repeats::none : Repeats::possible;
      if (hashes == nullptr) {
        apply_plain<false>(*r->writes, version, nullptr, nullptr, repeats);
      } else {
        apply_plain<true>(*r->writes, version, paths, hashes, repeats);
      }
    } else {
      apply(*r, version, stamped, paths, hashes);
    }
    if (in_order) store_.expect_key_order(false);
    point += r->writes->points().size();
    writes += r->writes->points().size() + r->writes->cleared_ranges().size() +
              r->writes->stamped_keys().size();
  }
  return writes;
}

void CommitBatch::reserve_apply(std::span<CommitRequest* const> batch, Version version,
                                std::vector<std::string>& stamped) {
  const std::size_t most_points = reservation_.reserve(store_, batch, stamped);
  // prepare_writes(request), in apply. Each vector on its own: the batch's prepare_writes
  // grows them differently (push_back, resize), so one's capacity says nothing of the other's.
  if (write_keys_.capacity() < most_points) [[unlikely]]
    write_keys_.reserve(most_points);
  if (write_paths_.capacity() < most_points) [[unlikely]] {
    // The hashes first: never less room than write_paths_ (prepare_writes), even when the
    // paths' reserve is the one that throws.
    write_hashes_.reserve(most_points);
    write_paths_.reserve(most_points);
  }
  if (logs_) {
    std::uint64_t log_bytes = 0;
    for (const CommitRequest* r : batch) {
      log_bytes += r->error == ErrorCode::success ? r->log_bytes : 0;
    }
    log_.reserve(log_bytes);
    if (room_ != nullptr) room_->reserve(version, log_.bytes().size() + log_bytes);
  }
}

void CommitBatch::fail_survivors(std::span<CommitRequest* const> batch, ErrorCode error,
                                 BatchOutcome& out) noexcept {
  for (CommitRequest* r : batch) {
    if (r->error != ErrorCode::success) continue;
    r->error = error;
    r->version = -1;
  }
  out.committed = 0;
  stamped_.clear();
}

void CommitBatch::prepare_writes(std::span<CommitRequest* const> batch) {
  write_keys_.clear();
  for (const CommitRequest* r : batch) {
    if (r->error != ErrorCode::success) continue;
    for (const auto& point : r->writes->points()) write_keys_.push_back(point.first);
  }
  write_paths_.resize(write_keys_.size());
  // Room for as many hashes as paths, so that reserve_apply need only look at the paths'.
  if (write_hashes_.capacity() < write_paths_.capacity())
    write_hashes_.reserve(write_paths_.capacity());
  write_hashes_.resize(write_keys_.size());
  store_.prepare_writes(write_keys_, write_paths_, write_hashes_);
}

void CommitBatch::prepare_writes(CommitRequest& r) {
  CommitRequest* const one = &r;
  prepare_writes(std::span(&one, 1));
}

void CommitBatch::collect(std::size_t budget) noexcept {
  if (budget == 0 || collection_stopped_) return;
  try {
    // Nothing to collect but a little retired memory: the horizon, the registry's scan and
    // the conflict history's pruning wait for a collection with work (a queue's push
    // commit leaves none: its pop's commit collects). Only while the conflict history is
    // short: commits that only add keys queue no work at all, and the history they record
    // must still be pruned.
    if (resolver_.recent_count() + resolver_.boundary_count() <= kIdleHistory) {
      if (store_.skip_idle_collection()) return;
      // A few overwrites queued: their collection waits for more, so that its fixed part
      // is paid once for several commits. A deletion is collected at once: a queue's next
      // pop would step over it.
      if (store_.may_defer_collection() && deferred_units_ + budget < kDeferredUnits) {
        deferred_units_ += budget;
        store_.defer_collection();
        return;
      }
    }
    collect_now(budget + std::exchange(deferred_units_, 0));
  } catch (...) {
    // Out of memory part-way through a step: what it unlinked or cut is left unreclaimed,
    // which readers never notice, but the step would not be safe to take again. Collection
    // stops; the store keeps old versions (and grows) until it is reopened.
    collection_stopped_ = true;
    std::fputs(
        "strata: out of memory collecting old versions; collection stops until the "
        "database is reopened\n",
        stderr);
  }
}

void CommitBatch::collect_now(std::size_t budget) {
  // The history a committing transaction is checked against stays, though its records
  // may go (ReaderRegistry::kCommitting).
  const Version resolving = store_.collect_garbage(budget);
  resolver_.prune(resolving);
}

void CommitBatch::log_dependent(std::string_view key, const PointWrite& entry,
                                std::string_view result) {
  if (set_log_bytes(key, result.size()) <= ops_log_bytes(key, entry)) {
    log_.set(key, result);
  } else {
    for (const AtomicOp& op : entry.ops) log_.atomic(key, op.type, op.param);
  }
}

bool CommitBatch::resolve(const CommitRequest& r) {
  const std::size_t queries = (r.read_ranges != nullptr ? r.read_ranges->size() : 0) +
                              (r.read_keys != nullptr ? r.read_keys->size() : 0);
  resolver_.prepare(r.read_version, queries);
  // One loop for both modes: a request that reports its conflicts goes on past the first.
  // (A second loop for reporting would call the resolver's checks from two places, and
  // the compiler then stops inlining them into this, every commit's, path.)
  bool clean = true;
  std::uint32_t index = 0;
  auto conflict = [&] {
    clean = false;
    if (r.conflicting == nullptr) return true;
    r.conflicting->push_back(index);
    return false;
  };
  if (r.read_ranges != nullptr) {
    for (const ArenaRange& range : *r.read_ranges) {
      if (resolver_.written_after(range.begin, range.end, r.read_version) && conflict()) {
        return false;
      }
      ++index;
    }
  }
  if (r.read_keys != nullptr) {
    for (std::string_view key : *r.read_keys) {
      if (resolver_.written_after_at(key, r.read_version) && conflict()) return false;
      ++index;
    }
  }
  return clean;
}

void CommitBatch::record_writes(CommitRequest& r, Version version) {
  record_points(r, r.writes->points(), version);
  if (!r.writes->stamped_keys().empty()) record_stamped_keys(r, version);
}

void CommitBatch::record_stamped_keys(const CommitRequest& r, Version version) {
  std::string stamp = make_versionstamp(version, r.batch_index);
  for (const StampedKeyWrite& w : r.writes->stamped_keys()) {
    std::string key = apply_stamp(w.key, w.offset, stamp);
    resolver_.record_write(key, base::key_after(key), version);
  }
}

// Most commits only set and clear keys: this loop is apply()'s for them, without the
// cleared ranges, atomic operations and versionstamps they cannot have
// (WriteMap::only_sets_and_clears), whose strings and branches cost every commit.
template <bool kPrepared>
void CommitBatch::apply_plain(const WriteMap& w, Version version,
                              const kv::MvccStore::List::Path* paths, const std::uint64_t* hashes,
                              Repeats repeats) {
  for (const auto& [key, entry] : w.points()) {
    const kv::MvccStore::List::Path* path = kPrepared ? paths++ : nullptr;
    const std::uint64_t hash = kPrepared ? *hashes++ : kv::MvccStore::hash(key);
    apply_point(key, entry, version, hash, path, logs_, repeats);
  }
}

void CommitBatch::apply_points(std::span<const PointEntry> points, Version version) {
  for (const auto& [key, entry] : points) {
    apply_point(key, entry, version, kv::MvccStore::hash(key), nullptr, /*logs=*/false,
                Repeats::none);
  }
}

void CommitBatch::apply_point(std::string_view key, const PointWrite& entry, Version version,
                              std::uint64_t hash, const kv::MvccStore::List::Path* path, bool logs,
                              Repeats repeats) {
  STRATA_INVARIANT(entry.kind == PointWrite::Kind::set || entry.kind == PointWrite::Kind::clear);
  if (entry.kind == PointWrite::Kind::set) {
    store_.set(key, entry.value(), version, hash, path, repeats);
    if (logs) log_.set(key, entry.value());
  } else {
    store_.clear(key, version, hash);
    if (logs) log_.clear(key);
  }
}

// The transaction's net effect: its cleared ranges, then its point writes.
void CommitBatch::apply(const CommitRequest& r, Version version, std::vector<std::string>& stamped,
                        const kv::MvccStore::List::Path* paths, const std::uint64_t* hashes) {
  const WriteMap& w = *r.writes;
  const bool logging = logs_;
  for (const auto& [begin, end] : w.cleared_ranges()) {
    store_.clear_range(begin, end, version);
    if (logging) log_.clear_range(begin, end);
  }
  auto set = [&](std::string_view key, std::string_view value, std::uint64_t hash,
                 const kv::MvccStore::List::Path* path = nullptr) {
    store_.set(key, value, version, hash, path);
    if (logging) log_.set(key, value);
  };
  auto clear = [&](std::string_view key, std::uint64_t hash) {
    store_.clear(key, version, hash);
    if (logging) log_.clear(key);
  };
  // A key's atomic operations: the store takes their result, the log the smaller of the
  // result and the operations. (After a stamped value the result is never the larger: no
  // operation makes a value longer than the two it is given together.)
  // Results and stamped values are computed in the room reserve_apply made.
  auto resolve = [&](std::string_view key, const PointWrite& entry,
                     std::optional<std::string_view> before, std::uint64_t hash,
                     const kv::MvccStore::List::Path* path) {
    std::string& v = reservation_.result();
    if (!resolve_dependent_into(entry, before, v)) {
      clear(key, hash);
    } else if (!logging || entry.kind == PointWrite::Kind::stamped) {
      set(key, v, hash, path);
    } else {
      store_.set(key, v, version, hash, path);
      log_dependent(key, entry, v);
    }
  };
  std::string stamp;
  if (!w.stamped_keys().empty() || w.has_stamped_values()) {
    stamp = make_versionstamp(version, r.batch_index);
  }
  for (const auto& [key, entry] : w.points()) {
    const kv::MvccStore::List::Path* path = paths != nullptr ? paths++ : nullptr;
    const std::uint64_t hash = hashes != nullptr ? *hashes++ : kv::MvccStore::hash(key);
    switch (entry.kind) {
      case PointWrite::Kind::set:
        set(key, entry.value(), hash, path);
        break;
      case PointWrite::Kind::clear:
        clear(key, hash);
        break;
      case PointWrite::Kind::dependent:
        resolve(key, entry, store_.latest(key), hash, path);
        break;
      case PointWrite::Kind::stamped: {
        std::string& value = reservation_.stamped_value();
        apply_stamp_into(value, entry.value(), entry.stamp_offset, stamp);
        if (entry.ops.empty()) {
          set(key, value, hash, path);
        } else {
          resolve(key, entry, value, hash, path);
        }
        break;
      }
    }
  }
  for (const StampedKeyWrite& s : w.stamped_keys()) {
    std::string& key = reservation_.next_stamped_key();
    apply_stamp_into(key, s.key, s.offset, stamp);
    // A later clear of this transaction removed it (StampedKeyWrite::placeholder says which).
    if (w.cleared_after(s, s.placeholder.empty() ? key : s.placeholder)) continue;
    stamped.push_back(std::move(key));
    set(stamped.back(), s.value, kv::MvccStore::hash(stamped.back()));
  }
}

}  // namespace strata::engine
