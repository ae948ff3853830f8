// engine/transaction_impl.hpp: the state behind strata::Transaction.
//
// Owns the read version (announced in a ReaderRegistry slot from the first read until
// commit or reset), the write map, the read and explicit write conflict ranges, and the
// state machine: active -> committed (or failed) / cancelled, back to active on reset.
//
// Thread safety: one thread at a time, as the public Transaction.
#pragma once

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <cstddef>
#include <memory>
#include <memory_resource>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "strata/transaction.hpp"

#include "base/arena.hpp"
#include "base/coarse_clock.hpp"
#include "base/limits.hpp"
#include "base/retry_backoff.hpp"
#include "engine/range_set.hpp"
#include "engine/watch_registry.hpp"
#include "engine/write_map.hpp"
#include "kv/reader_registry.hpp"

namespace strata::engine {

class DatabaseImpl;
struct CommitRequest;

enum class ReadMode : std::uint8_t { serializable, snapshot };
// How far an explicit conflict range may reach: to "\xff" (the public API's rule), or to
// "\xff\xff", through the system keyspace (FoundationDB's client under its system-keys
// options; the C API's, engine/system_key_conflicts.hpp).
enum class ConflictKeys : std::uint8_t { user, system };

class TransactionImpl {
 public:
  using Clock = std::chrono::steady_clock;

  TransactionImpl() = default;
  ~TransactionImpl();

  // A transaction on `db` that keeps it alive: the calling thread's spare one when it has
  // one, else new.
  static std::unique_ptr<TransactionImpl> make(std::shared_ptr<DatabaseImpl> db);
  // The same, borrowing `db`: it takes no reference, so the caller keeps `db` alive until
  // the transaction ends or own() is called. Database::run's transactions are borrowed:
  // a reference count changed by every transaction is a cache line that every core
  // writes, which slows threads that run() at once.
  static std::unique_ptr<TransactionImpl> make_borrowed(DatabaseImpl& db);
  // Takes a reference to the database if borrowing one (a borrowed transaction that is
  // moved out of Database::run must keep its database alive from then on).
  void own() noexcept;
  // Ends `t` as destroying it would (pending watches fail, its reader slot goes back) and
  // keeps it as the calling thread's spare, so that the thread's next make() allocates
  // nothing. A spare holds no database: it keeps none alive.
  static void recycle(std::unique_ptr<TransactionImpl> t) noexcept;
  TransactionImpl(const TransactionImpl&) = delete;
  TransactionImpl& operator=(const TransactionImpl&) = delete;

  std::optional<std::string> get(std::string_view key, ReadMode mode);
  // The same into `out` (cleared when the key is absent); whether the key is present.
  bool get(std::string_view key, ReadMode mode, std::string& out);
  RangeResult get_range(std::string_view begin, std::string_view end, RangeOptions options,
                        ReadMode mode);
  std::size_t visit_range(std::string_view begin, std::string_view end, RangeOptions options,
                          ReadMode mode, RowVisitorRef visit);

  void set(std::string_view key, std::string_view value);
  void clear(std::string_view key);
  void clear_range(std::string_view begin, std::string_view end);
  void atomic_op(MutationType type, std::string_view key, std::string_view param);
  void add_read_conflict_range(std::string_view begin, std::string_view end,
                               ConflictKeys keys = ConflictKeys::user);
  void add_read_conflict_key(std::string_view key, ConflictKeys keys = ConflictKeys::user);
  void add_write_conflict_range(std::string_view begin, std::string_view end,
                                ConflictKeys keys = ConflictKeys::user);

  std::shared_ptr<WatchState> watch(std::string_view key);

  Version read_version();
  void set_read_version(Version version);
  void set_read_your_writes(bool enabled);
  void set_snapshot_read_your_writes(bool enabled);
  void set_report_conflicting_keys(bool enabled);
  // FoundationDB's NEXT_WRITE_NO_WRITE_CONFLICT_RANGE: the next set, clear, range clear or
  // atomic operation adds no write conflict range. Keys that another write gives a range,
  // before or after, keep it.
  void set_next_write_no_write_conflict_range() { next_write_unconflicted_ = true; }
  std::vector<KeyRange> conflicting_ranges() const;
  std::vector<KeyRange> read_conflict_ranges() const;
  std::vector<KeyRange> write_conflict_ranges() const;
  void commit();
  void commit_async(CommitCallback done);
  Version committed_version() const;
  std::string versionstamp() const;

  void on_error(const Error& e);
  RetryStep retry_step(ErrorCode error, GiveUp give_up);
  // Transaction::ended_by(): the first of a passed timeout and a cancel.
  ErrorCode ended_by() const {
    if (state_ == State::cancelled && !expired_) return ErrorCode::transaction_cancelled;
    return timed_out() ? ErrorCode::transaction_timed_out : ErrorCode::success;
  }
  Clock::time_point timeout_deadline() const {
    return timeout_.count() > 0 ? deadline_ : Clock::time_point::max();
  }
  void reset();
  void cancel();
  void set_timeout(std::chrono::milliseconds timeout);
  void set_retry_limit(int limit);
  void set_size_limit(std::size_t bytes);
  void set_max_retry_delay(std::chrono::milliseconds delay);

  DatabaseImpl& database() { return *db_; }
  std::size_t size_bytes() const;

 private:
  // visiting: a visit_range visitor is running, and may not use the transaction.
  enum class State : std::uint8_t { active, visiting, committing, committed, cancelled };

  // Throws 1025, 1031 (ended_by()) or 2017. Inline: every call of the API starts with it.
  void check_usable() {
    if (state_ != State::active || timeout_.count() > 0) check_usable_slow();
  }
  void check_usable_slow();
  void set_deadline(std::chrono::milliseconds timeout);  // timeout_ and deadline_
  // The database's transaction_* options, as a new or reset transaction starts with.
  // Inlined into reset() and make(): its call would cost as much as its body when, as
  // usual, the database sets no timeout.
  [[gnu::always_inline]] inline void apply_database_defaults();
  bool timed_out() const { return expired_ || (timeout_.count() > 0 && Clock::now() >= deadline_); }
  Version ensure_read_version();
  void check_not_too_old() const;
  // transaction_too_old for a read version `age` old, or revoked. Out of line and cold: the
  // reads that check for them stay small.
  [[noreturn, gnu::cold, gnu::noinline]] void throw_too_old(base::CoarseClock::duration age) const;
  [[noreturn, gnu::cold, gnu::noinline]] void throw_released() const;
  // The version a read reads at: taken now, or the one taken, checked to be in the window.
  Version read_version_for_read();
  bool has_read_conflicts() const { return !read_conflicts_.empty() || !point_reads_.empty(); }
  // accessed_unreadable (1036) when `key`, or a key in [begin, end), is in unreadable_. The point
  // form allocates nothing: it sits on every get().
  void check_readable(std::string_view key) const;
  void check_readable(std::string_view begin, std::string_view end) const;
  // [begin, end) minus this transaction's writes; with `end_after`, [begin, end + 00).
  void add_read_conflict(std::string_view begin, std::string_view end, bool end_after = false);
  // A range read's conflict (a non-empty span): add_read_conflict when the read sees this
  // transaction's writes (`own`) and there are any, else the span as it is.
  void add_range_read(std::string_view begin, std::string_view end, bool end_after, bool own);
  // FoundationDB's cut of a range read's span with read-your-writes on (base::
  // cut_range_end; without, it keeps the ends as read): cuts the ends, false when the span
  // is left empty.
  static bool cut_read_span(std::string_view& begin, std::string_view& end, bool end_after);
  // A range read's span with nothing to subtract: add_span, cut as above when this
  // transaction reads its own writes.
  void add_read_span(std::string_view begin, std::string_view end, bool end_after = false);
  // add_read_span's cut, out of line: no range read on a hot path has such ends.
  [[gnu::cold, gnu::noinline]] void add_cut_span(std::string_view begin, std::string_view end,
                                                 bool end_after);
  // The span as it is, with nothing subtracted.
  void add_span(std::string_view begin, std::string_view end, bool end_after = false) {
    conflict_bytes_ += begin.size() + end.size() + (end_after ? 1 : 0);
    append_range(read_conflicts_, begin, end, end_after);
  }
  void add_point_read(std::string_view key) {
    point_reads_.push_back(arena_.copy(key));
    conflict_bytes_ += 2 * key.size() + 1;
  }
  bool sees_own_writes(ReadMode mode) const {
    return mode == ReadMode::serializable ? ryw_ : ryw_ && snapshot_ryw_;
  }
  void release_read_version();
  // The request's conflicts and writes, for commit() and commit_async() (which set its
  // write_bytes and slot).
  void prepare_commit(CommitRequest& request);
  // prepare_commit()'s write conflict ranges, for a commit with any beyond its point
  // writes' (cleared ranges, added ranges, or writes without a range of their own).
  [[gnu::noinline]] void prepare_write_ranges(CommitRequest& request);
  // The reads are over and the commit starts: the reader slot keeps only the conflict
  // history above the read version (kv::ReaderRegistry::begin_commit).
  void mark_committing() noexcept;
  // A read-only commit: nothing to check, nothing to publish.
  void commit_read_only();
  // Records the pipeline's outcome (the transaction ends committed either way); returns
  // whether it committed, and commit_error() then says why not.
  bool settle(CommitRequest& request);
  [[gnu::cold]] Error commit_error(const CommitRequest& request) const;
  // A submitted commit's on_done: settles it, then calls done_ (on the pipeline's thread).
  static void on_async_done(CommitRequest& request) noexcept;
  // Waits until no commit_async of this transaction is in flight (destruction does: the
  // pipeline holds its request), unless called from this transaction's own callback.
  void wait_for_async() noexcept;
  // The not_committed error of a failed commit, naming the conflicting ranges when they
  // were reported.
  Error conflict_error(Version read_version) const;
  // settle() of a commit whose version the batch held in its slot (CommitRequest::held),
  // out of the commit's line: the slot keeps the version, or is let go as usual when the
  // commit failed after it was admitted.
  [[gnu::noinline, gnu::cold]] void hold_committed(const CommitRequest& request);
  // Whether slot_ holds this transaction's commit version: it was held, and neither a reset
  // nor a new read version has let it go since (either leaves committed_version_ apart).
  bool holds_commit_version() const {
    return held_version_ >= 0 && held_version_ == committed_version_ && read_version_ < 0;
  }
  // Read `i` as a range, numbered as CommitRequest::conflicting numbers reads: the ranges of
  // read_conflicts_, then the keys of point_reads_.
  KeyRange read_range(std::size_t i) const;
  // Inline, as they run at every transaction's end (defined in transaction_impl.cpp, the
  // one file that calls them).
  [[gnu::always_inline]] inline void soft_reset();
  // A retry's reset: soft_reset(), and the options that are not persistent return to a new
  // transaction's.
  [[gnu::always_inline]] inline void reset_for_retry();
  // reset() without restarting the clock or applying the database's defaults: the retry
  // limit and the longest backoff are left for apply_database_defaults(), which every
  // caller runs next.
  [[gnu::always_inline]] inline void reset_to_defaults();
  [[gnu::cold]] Error retry_error(ErrorCode error, bool waited) const;
  void end() noexcept;  // what destruction does: pending watches fail, the slot goes back
  // The reader slot in `registry`, acquired on first use.
  kv::ReaderRegistry::Slot* reader_slot(kv::ReaderRegistry& registry) {
    if (slot_ == nullptr) {
      slot_ = registry.acquire();
      slot_registry_ = &registry;
      slot_registry_id_ = registry.id();
    }
    return slot_;
  }
  void give_back_slot() noexcept;
  // The deadline to announce a read version taken at `now` with: past the MVCC window,
  // collection may revoke it (kv::ReaderRegistry).
  std::int64_t revoke_deadline(base::CoarseClock::time_point now) const;
  // Takes or checks the read version (read_version_for_read) and keeps it from being
  // revoked while a read walks the store; throws transaction_too_old when it is past its
  // window or already revoked (the transaction sat idle). Inlined into each read: its call
  // would cost as much as its body, and the one-row read's frame stays small.
  class StoreRead {
   public:
    [[gnu::always_inline]] explicit StoreRead(TransactionImpl& t);
    ~StoreRead() { kv::ReaderRegistry::end_read(slot_); }
    StoreRead(const StoreRead&) = delete;
    StoreRead& operator=(const StoreRead&) = delete;

   private:
    kv::ReaderRegistry::Slot* slot_;
  };
  void detach() noexcept;  // recycle()'s part: end() but for the slot, reset, no db_
  // commit()'s and commit_async()'s quick checks of a commit of `size` bytes: whether it
  // must go through refuse_commit (read conflicts with no read version or one past the
  // MVCC window, or a size over the limit counted as the conflicts were added).
  inline bool needs_refusal_checks(std::size_t size) const;  // defined and used in the .cpp
  // commit()'s checks before the pipeline (age, size) once the quick ones failed: throws,
  // ending the transaction, unless the size counted merged is within the limit after all.
  // Also where a transaction whose read conflicts came before any read takes its version.
  [[gnu::noinline, gnu::cold]] void refuse_commit();
  // Merges the read conflicts (ranges coalesced, point reads once each) and returns the
  // conflict bytes the commit sends, which conflict_bytes_ becomes.
  std::size_t merge_conflicts();
  // Arms this transaction's watches (committed) or fails them with `error`.
  void finish_watches(bool committed, ErrorCode error) {
    if (!watches_.empty()) finish_pending_watches(committed, error);
  }
  void finish_pending_watches(bool committed, ErrorCode error);
  void fire_own_watches(std::string_view begin, std::string_view end,
                        const std::optional<std::string_view>& value, bool known);
  // What a set or clear of `key` does besides the write map when the transaction has
  // watches or unreadable ranges. Out of line: inlined, its key_after string would give
  // every set and clear a larger frame, and a plain write has neither.
  [[gnu::noinline]] void after_point_set(std::string_view key, std::string_view value);
  [[gnu::noinline]] void after_point_clear(std::string_view key);
  // clear() of a key longer than any key (cold: kept out of clear's hot path).
  [[gnu::cold, gnu::noinline]] void clear_beyond_key_limit(std::string_view key, bool unconflicted);
  std::optional<std::string> read_committed(std::string_view key);

  // Range reads merge the store at the read version with the write map. Both range reads
  // run scan(), which passes each row to `out` (get_range's vector or visit_range's visitor,
  // through RowOutput), then adds the read's conflict span; it returns the rows passed,
  // and in `more` (when given) whether a limit ended the read.
  template <class Out>
  std::size_t scan(std::string_view begin, std::string_view end, const RangeOptions& options,
                   ReadMode mode, Out&& out, bool* more = nullptr);
  // A row of this transaction's own write at `key` to `out`: the written value (set),
  // nothing (clear), the stored value with the pending atomic operations applied
  // (dependent), or accessed_unreadable (a versionstamped value).
  template <class Output>
  static void emit_own_write(std::string_view key, const PointWrite& w,
                             std::optional<std::string_view> stored, Output& out);
  // visit_range's general read (scan()), out of line: the one-row read does not set up its
  // frame.
  [[gnu::noinline]] std::size_t visit_rows(std::string_view begin, std::string_view end,
                                           RangeOptions options, ReadMode mode,
                                           RowVisitorRef visit);
  // visit_range with a limit of one row and nothing to merge (the store alone: read_store's
  // walk stopped at its first row), nor a pending versionstamped key to check the span for.
  std::size_t visit_first(std::string_view begin, std::string_view end, bool reverse, ReadMode mode,
                          RowVisitorRef visit);
  // The store alone at the read version, when there are no writes to merge (the read does
  // not see its own writes, or there are none): read_forward and read_reverse's walks with
  // no write map to step beside.
  template <class Output>
  void read_store(std::string_view begin, std::string_view end, bool reverse, Output& out);
  // The store merged with `writes` (writes_).
  template <class Output>
  void read_forward(const WriteMap& writes, std::string_view begin, std::string_view end,
                    Output& out);
  template <class Output>
  void read_reverse(const WriteMap& writes, std::string_view begin, std::string_view end,
                    Output& out);
  [[noreturn]] static void throw_visiting();
  // Takes the NEXT_WRITE_NO_WRITE_CONFLICT_RANGE flag: whether this write is made without
  // a write conflict range. A write calls it first, as FoundationDB's writes take the flag
  // before their checks (ReadYourWritesTransaction::set/clear/atomicOp,
  // getAndResetWriteConflictDisabled), and changes nothing else.
  bool take_next_write_flag() { return std::exchange(next_write_unconflicted_, false); }
  // Whether a write may take the flag or record its own range (adds_own_write_conflict):
  // set and clear then take a path of their own, out of line, so that a plain write
  // carries none of it.
  bool tracks_write_conflicts() const {
    return next_write_unconflicted_ || explicit_write_conflicts_;
  }
  [[gnu::noinline]] void set_tracked(std::string_view key, std::string_view value);
  [[gnu::noinline]] void clear_tracked(std::string_view key);
  // set and clear, with (kTracked) or without the flag and own ranges.
  template <bool kTracked>
  void set_as(std::string_view key, std::string_view value);
  template <bool kTracked>
  void clear_as(std::string_view key);
  // After a write's checks, before it changes the write map: whether the write must add
  // its own range to own_write_conflicts_. The first unconflicted write moves the ranges
  // of the writes before it there (explicit_write_conflicts_).
  bool adds_own_write_conflict(bool unconflicted) {
    if (!unconflicted && !explicit_write_conflicts_) [[likely]]
      return false;
    return explicit_mode_write(unconflicted);
  }
  [[gnu::noinline]] bool explicit_mode_write(bool unconflicted);
  // The writes' part of size_bytes(): what write_size counts, less the ranges of writes
  // made with none (explicit_write_size).
  std::size_t exact_write_size() const;
  std::size_t explicit_write_size() const;
  // A write's conflict range, when adds_own_write_conflict() said so.
  void add_own_write_conflict(std::string_view begin, std::string_view end);
  void clear_range_checked(std::string_view begin, std::string_view end, bool unconflicted);

  DatabaseImpl* db_ = nullptr;           // while in use (not as a spare)
  std::shared_ptr<DatabaseImpl> owner_;  // db_'s reference; empty while borrowed
  // The reader slot, kept from one transaction to the next while the thread's spare
  // serves the same database (no acquire and release per transaction); its registry is
  // named by id, since a spare does not keep the database alive.
  kv::ReaderRegistry::Slot* slot_ = nullptr;
  kv::ReaderRegistry* slot_registry_ = nullptr;
  std::uint64_t slot_registry_id_ = 0;
  Version read_version_ = -1;
  // The MVCC window is seconds long: a coarse clock (a few ms) keeps reads cheap.
  base::CoarseClock::time_point read_version_time_{};

  // The write map's entries, the read conflict ranges and the keys read with get() live
  // in this arena, released by soft_reset(): a queue operation's bookkeeping fits in the
  // inline buffer, so it costs no heap allocation. Larger transactions spill to the heap
  // (the arena grows, and like FoundationDB's transaction arena it frees nothing until
  // the reset).
  static constexpr std::size_t kInlineArenaBytes = 512;
  std::array<std::byte, kInlineArenaBytes> arena_buffer_;
  base::Arena arena_{arena_buffer_.data(), arena_buffer_.size()};

  WriteMap writes_{&arena_};
  // Keys a versionstamped key may become, and keys given a versionstamped value: reads of
  // them throw accessed_unreadable until a clear of this transaction covers them.
  RangeSet unreadable_;
  ArenaRanges read_conflicts_{&arena_};
  // Keys read with get(), each a [k, k+00) conflict range; kept as keys (their bytes in
  // the arena) and turned into ranges only by a commit that needs them.
  base::ArenaVector<std::string_view> point_reads_{&arena_};
  std::vector<KeyRange> write_conflicts_;  // explicit ones (all of them once committing)
  // With explicit_write_conflicts_: the ranges of the writes that have one (coalesced when
  // they reach own_conflicts_coalesce_at_), and the keys given a versionstamped value with
  // none. Their bytes are counted with the writes (exact_write_size), not in
  // conflict_bytes_. Mutable: coalesced where they are counted.
  mutable std::vector<KeyRange> own_write_conflicts_;
  std::size_t own_conflicts_coalesce_at_ = 0;
  std::vector<std::string> unconflicted_stamped_values_;
  // set_report_conflicting_keys: after a conflict, the reads that conflicted, as indices
  // into read_conflicts_ and then point_reads_ (CommitRequest::conflicting).
  std::vector<std::uint32_t> conflicting_;
  std::size_t conflict_bytes_ = 0;
  std::vector<std::shared_ptr<WatchState>> watches_;  // armed at commit

  bool ryw_ = true;           // reads see this transaction's writes
  bool snapshot_ryw_ = true;  // snapshot reads too (when ryw_)
  bool report_conflicts_ = false;
  // set_next_write_no_write_conflict_range() was called, and no write has taken it since.
  bool next_write_unconflicted_ = false;
  // A write was made without a conflict range: from then on own_write_conflicts_ holds
  // the ranges of the writes that have one, rather than the commit taking every written
  // key and cleared range (CommitRequest::write_ranges_only).
  bool explicit_write_conflicts_ = false;
  State state_ = State::active;
  Version committed_version_ = -1;
  // Options::keep_mvcc_window: the last commit's version that the batch held in slot_
  // (CommitRequest::slot), and that hold's deadline; -1 when none. The slot holds it
  // while holds_commit_version(), but after a cancel, which retained it instead.
  Version held_version_ = -1;
  std::int64_t hold_deadline_ = 0;
  std::uint16_t batch_index_ = 0;
  bool commit_succeeded_ = false;
  // commit_async: its request, which the pipeline holds until it calls on_async_done (made
  // by the first, kept for the next), the callback, and the commits in flight (the count
  // drops after the callback returns; destruction waits for 0).
  std::unique_ptr<CommitRequest> async_request_;
  CommitCallback done_;
  std::atomic<std::int32_t> in_flight_{0};

  // A timeout counts from creation (or reset), but most transactions have none, and
  // steady_clock is too dear to read for each of them. So creation reads the coarse clock, and
  // set_timeout turns it into a precise deadline, counting only the time since creation
  // the coarse clock can vouch for: the deadline is never early, and at most one tick late.
  base::CoarseClock::time_point created_{base::CoarseClock::now()};
  Clock::time_point deadline_{};  // meaningful while timeout_ > 0
  std::chrono::milliseconds timeout_{0};
  // The timeout passed before a cancel or a new timeout: it stays the transaction's end
  // until reset().
  bool expired_ = false;
  base::RetryBackoff backoff_;
  std::chrono::milliseconds max_backoff_{1000};           // set_max_retry_delay, as given
  int retry_limit_ = -1;                                  // -1: none
  std::size_t size_limit_ = base::kTransactionSizeLimit;  // set_size_limit
  // A commit whose running count of bytes is above this takes refuse_commit's exact count:
  // size_limit_, or 0 once a write was made without a conflict range, as the ranges the
  // other writes keep can then add up to more than the running count.
  std::size_t recount_above_ = base::kTransactionSizeLimit;
  int retries_ = 0;  // on_error calls since reset()
};

}  // namespace strata::engine
