// fdb_c/transaction.hpp: FDBTransaction, a strata::Transaction with FoundationDB's C
// rules on top (docs/fdb_c.md, "Transactions"): deferred write errors, options decoded
// from their (code, bytes) form, on_error's future, reads at a version set ahead, and
// versionstamp futures that wait for the commit. The transaction's life (timeout, cancel,
// retry count, backoff) is strata::Transaction's: on_error forwards to its retry_step. What
// strata's transaction does not hold stays here: the options only the C API has, the
// database handle's defaults, and their reset after a retry step (docs/decisions/0035).
//
// Thread safety: FoundationDB lets several threads use one transaction at once, so every
// entry point takes `mu` (an AdaptiveMutex: one atomic instruction to take and to give back
// when uncontended, as nearly every use is, where a std::mutex makes two library calls).
// Futures are completed without holding it where they may run user code (callbacks run on
// the network thread anyway).
#pragma once

#include <atomic>
#include <chrono>
#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include "strata/database.hpp"
#include "strata/transaction.hpp"

#include "base/adaptive_mutex.hpp"
#include "base/kept_block.hpp"
#include "base/limits.hpp"
#include "base/mutex.hpp"
#include "fdb_c/database.hpp"
#include "fdb_c/error_codes.hpp"
#include "fdb_c/fdb_c.h"
#include "fdb_c/future.hpp"
#include "fdb_c/options.hpp"
#include "fdb_c/special_keys.hpp"

struct FDB_transaction final {
  using Clock = std::chrono::steady_clock;
  using Result = FDB_future::Result;

  // `unavailable`: 0, or the error every read, watch and commit fails with (a tenant's
  // transaction: tenants_disabled).
  // `state`: the database handle's; the transaction starts from its defaults (the
  // TRANSACTION_* database options) and a reset takes them again as they are then.
  explicit FDB_transaction(std::shared_ptr<const strata::fdb_c::DatabaseState> state,
                           fdb_error_t unavailable = 0);
  ~FDB_transaction();
  FDB_transaction(const FDB_transaction&) = delete;
  FDB_transaction& operator=(const FDB_transaction&) = delete;

  // A thread keeps the memory of the last transaction it destroyed for the next one it
  // makes: a C client makes and destroys one per transaction, and allocating and freeing
  // it costs more than most of its calls.
  static void* operator new(std::size_t size) {
    return strata::base::KeptBlock<FDB_transaction>::take(size);
  }
  static void operator delete(void* p, std::size_t size) noexcept {
    strata::base::KeptBlock<FDB_transaction>::give_back(p, size);
  }

  // A read: under the lock, fails with the deferred error, the timeout, the cancellation
  // or the transaction's unavailability, else runs body(Result&) and returns a ready future
  // with its result or its error. The body runs with mu held; one that touches what mu
  // guards begins with mu.assert_held() (the compiler checks a lambda as a function of its
  // own, which holds no lock). `touches_data` false: a call that reads no data of the
  // database (the read version, the transaction's size), which a tenant's may make.
  // `at_read_version` (false for a size estimate, which FoundationDB answers from storage
  // metrics): the call reads at the read version, so a version set with
  // fdb_transaction_set_read_version must be readable first (take_set_version).
  // Throws nothing: an exception that is no FoundationDB error (std::bad_alloc) fails the
  // future with unknown_error, and a future that cannot be made is
  // FDB_future::out_of_memory().
  template <class Body>
  FDBFuture* read(Body body, bool touches_data = true, bool at_read_version = true) noexcept {
    // The result is built in the future itself (no copy, and a recycled future's buffers).
    FDB_future* f = FDB_future::make_or_null();
    if (f == nullptr) return FDB_future::out_of_memory();
    fdb_error_t error = 0;
    try {
      strata::base::UniqueLock lock(mu);
      error = check();
      if (error == 0 && touches_data) error = unavailable_;
      if (error == 0 && touches_data && at_read_version) error = take_set_version(lock);
      if (error == 0) body(f->result());
    } catch (...) {
      error = strata::fdb_c::current_error();
    }
    f->publish(error);
    return f;
  }
  // A write-like call: errors are held back for the next read, watch or commit (any other
  // exception as unknown_error). The body runs with mu held, as read's.
  template <class Body>
  void write(Body body) noexcept {
    strata::base::UniqueLock lock(mu);
    try {
      body();
    } catch (...) {
      defer(strata::fdb_c::current_error());
    }
  }

  // The entry points' methods throw nothing: an exception that is no FoundationDB error
  // (std::bad_alloc) becomes unknown_error (4000), in the future, the return value, or the
  // deferred error; a future that cannot be made is FDB_future::out_of_memory().
  FDBFuture* watch(std::string_view key) noexcept;
  // The commit is made on the calling thread and its future returned ready
  // (commit_here), but on a durable database by a thread that has another commit not yet
  // waited for: there it is queued, and completes once durable (commit_in_flight).
  FDBFuture* commit() noexcept;
  FDBFuture* versionstamp() noexcept;
  FDBFuture* on_error(fdb_error_t error) noexcept;
  fdb_error_t set_option(int code, const uint8_t* value, int length) noexcept;
  void reset() noexcept;
  void cancel() noexcept;
  // fdb_transaction_set_read_version with v > 0. As FoundationDB's client, it fails
  // nothing itself: a version strata no longer keeps fails the reads and the commit with
  // transaction_too_old (1007), and one not yet committed makes them wait for it
  // (take_set_version). Either way get_read_version answers `version`.
  void set_read_version(std::int64_t version) REQUIRES(mu);
  // The read version: the one set, else strata's (taken now if none).
  std::int64_t read_version() REQUIRES(mu);
  // Whether a version was set that strata's transaction does not read at (yet): then a
  // call that reads without it (a size estimate) uses a transaction of its own.
  bool version_set_apart() const REQUIRES(mu) { return set_version_ >= 0; }
  strata::Database& database() { return db_; }
  // Keys this transaction reads from rows the C API materializes (fdb_c/special_keys.hpp):
  // the special key space, and the system keyspace under ACCESS_SYSTEM_KEYS or
  // READ_SYSTEM_KEYS.
  bool materialized(std::string_view key) const REQUIRES(mu);
  bool reads_system_keys() const REQUIRES(mu) { return options_.read_system_keys; }
  bool writes_system_keys() const REQUIRES(mu) { return options_.write_system_keys; }
  bool get_special(std::string_view key, std::string& value) const REQUIRES(mu);
  // Whether a write to `key` creates or deletes a tenant (the special key space's tenant
  // map, writable under SPECIAL_KEY_SPACE_ENABLE_WRITES), which fails the commit with
  // tenants_disabled.
  bool writes_tenant_map(std::string_view key) const REQUIRES(mu) {
    return options_.special_key_space_writes && strata::fdb_c::is_tenant_map_key(key);
  }
  bool writes_tenant_map(std::string_view begin, std::string_view end) const REQUIRES(mu) {
    return options_.special_key_space_writes && strata::fdb_c::overlaps_tenant_map(begin, end);
  }
  // The rows for a read whose begin key is materialized.
  strata::fdb_c::SpecialRows special_rows(std::string_view begin_key,
                                          std::string_view end_key) const REQUIRES(mu);

  // FoundationDB's tag-throttling cost (fdb_transaction_get_total_cost, API 730), counted as
  // its client does: each read of the database's data as it completes (its key and value
  // bytes rounded up to 4 KiB pages, at least one page), each set and atomic operation at
  // four times its key (and value) bytes so rounded, each clear at one page. Writes count
  // once commit is called (the client applies them to the request then). Starts again at
  // 0 on reset and on_error.
  void add_read_cost(std::size_t bytes) REQUIRES(mu) { read_cost_ += page_cost(bytes); }
  void add_write_cost(std::size_t bytes) REQUIRES(mu) {
    write_cost_ += kWriteCostFactor * page_cost(bytes);
  }
  // A clear counts only when it clears something: FoundationDB's client drops a clear of a
  // key longer than any key, or of a range empty once its ends are cut, before it counts
  // (NativeAPI's Transaction::clear, ReadYourWritesTransaction::clear), as strata's
  // transaction drops it: base::clears_nothing, the rule both follow.
  void add_clear_cost(std::string_view key) REQUIRES(mu) {
    if (!strata::base::clears_nothing(key)) write_cost_ += kCostPage;
  }
  void add_clear_cost(std::string_view begin, std::string_view end) REQUIRES(mu) {
    if (!strata::base::clears_nothing(begin, end)) write_cost_ += kCostPage;
  }
  // A read was started since the last reset or on_error: a get, get_key, get_range, watch
  // or get_addresses_for_key that FoundationDB's client counts among the reads it starts
  // (ReadYourWritesTransaction's `reading`, whatever READ_YOUR_WRITES_DISABLE says), after
  // which it refuses READ_YOUR_WRITES_DISABLE with client_invalid_operation. It answers
  // without counting a get or get_range of the special key space, a get of a key longer
  // than any key, and a get_range whose selectors are inverted. Noted once the read
  // succeeds: one that fails after its checks, which FoundationDB counts, ends the attempt
  // anyway (on_error clears the note).
  void note_read_started() REQUIRES(mu) { read_started_ = true; }

  std::int64_t total_cost() const REQUIRES(mu) {
    return read_cost_ + (commit_started_ ? write_cost_ : 0);
  }

  // The database's deferred error, else the transaction's, else what ended the
  // transaction (strata::Transaction::ended_by: a timeout or a cancel, whichever came
  // first), in FoundationDB's order (ReadYourWritesTransaction::checkDeferredError asks
  // the database's first, then its own; then the reset promise that a timeout or cancel
  // sets).
  fdb_error_t check() const REQUIRES(mu) {
    if (const fdb_error_t e = state_->deferred_error(); e != 0) [[unlikely]]
      return e;
    if (deferred_ != 0) return deferred_;
    return static_cast<fdb_error_t>(tr.ended_by());
  }
  void defer(fdb_error_t error) REQUIRES(mu) {
    if (deferred_ == 0) deferred_ = error;
  }

  strata::base::AdaptiveMutex mu;
  strata::Transaction tr GUARDED_BY(mu);

 private:
  // FoundationDB's client knobs TAG_THROTTLING_PAGE_SIZE and
  // GLOBAL_TAG_THROTTLING_RW_FUNGIBILITY_RATIO.
  static constexpr std::int64_t kCostPage = 4096;
  static constexpr std::int64_t kWriteCostFactor = 4;
  static std::int64_t page_cost(std::size_t bytes) {
    const auto pages = bytes == 0 ? 1 : (static_cast<std::int64_t>(bytes) - 1) / kCostPage + 1;
    return pages * kCostPage;
  }

  // FoundationDB's FUTURE_VERSION_DELAY: how long a read waits for a version newer than
  // the committed one before it fails with future_version (1009).
  static constexpr std::chrono::seconds kFutureVersionDelay{1};
  // Makes the version set apart strata's read version: fails with transaction_too_old for
  // one strata no longer keeps; for one not yet committed, waits (with `lock` released)
  // until a commit publishes it, kFutureVersionDelay passes (future_version), or the
  // timeout or a cancel cuts the wait short (1031, 1025). 0 when none is set apart.
  // Throws with mu held only. Inline for the common case, no version set apart.
  fdb_error_t take_set_version(strata::base::UniqueLock<strata::base::AdaptiveMutex>& lock)
      REQUIRES(mu) {
    return set_version_ < 0 ? 0 : take_version_set_apart(lock);
  }
  // As take_set_version, an exception as its code.
  fdb_error_t take_set_version_noexcept(
      strata::base::UniqueLock<strata::base::AdaptiveMutex>& lock) noexcept REQUIRES(mu) {
    return set_version_ < 0 ? 0 : take_version_set_apart_noexcept(lock);
  }
  fdb_error_t take_version_set_apart(strata::base::UniqueLock<strata::base::AdaptiveMutex>& lock)
      REQUIRES(mu);
  fdb_error_t take_version_set_apart_noexcept(
      strata::base::UniqueLock<strata::base::AdaptiveMutex>& lock) noexcept REQUIRES(mu);
  // Wakes the waits of take_set_version to give up.
  void end_waits() REQUIRES(mu);
  FDBFuture* commit_here() noexcept;
  FDBFuture* commit_in_flight() noexcept;
  // Queues tr's commit with a callback that completes `f` and unlocks mu once the commit
  // settles. Returns 0, or the error when nothing could be queued (then mu is still held).
  fdb_error_t queue_commit(FDB_future* f) REQUIRES(mu);
  // Gives strata's transaction the options in options_ that a new one lacks (after
  // creation and reset; after a retry, which returns those that are not persistent to a
  // new transaction's). `persistent`: TIMEOUT, RETRY_LIMIT and MAX_RETRY_DELAY too, all
  // three when `all_persistent` (a retry before API 610, which keeps them in strata).
  void apply_options(bool persistent, bool all_persistent = false) REQUIRES(mu);
  // Applies the one option `updated` changes to the strata transaction; the error it
  // meets (set_option defers it).
  fdb_error_t apply_to_transaction(const strata::fdb_c::TransactionOptions& updated) noexcept
      REQUIRES(mu);
  // 0: after a commit. Inline for the common case of none.
  void finish_stamp_waiters(fdb_error_t error) noexcept REQUIRES(mu) {
    if (stamp_waiter_ != nullptr) complete_stamp_waiters(error);
  }
  void complete_stamp_waiters(fdb_error_t error) noexcept REQUIRES(mu);
  // The C API's own state after a retry step that reset strata's transaction: the
  // options return to the defaults taken at creation or reset (the persistent ones kept
  // from API 610 on), and the deferred error, costs, stamps and set version go.
  void restart() REQUIRES(mu);
  // The state every reset and retry clears.
  void clear_attempt() REQUIRES(mu);
  // Counts a TAG or AUTO_THROTTLE_TAG value (checked: present, at most 255 bytes) among the
  // attempt's tags; too_many_tags (2109) past kMaxTagsPerTransaction.
  fdb_error_t add_tag(const uint8_t* value, int length) noexcept REQUIRES(mu);
  // DEBUG_TRANSACTION_IDENTIFIER, LOG_TRANSACTION and TRANSACTION_LOGGING_ENABLE (which is
  // both), whose values are checked already: FoundationDB's Transaction::setOption keeps an
  // attempt's identifier once set (a different one is client_invalid_operation) and logs
  // only a transaction that has one (client_invalid_operation).
  fdb_error_t note_debug_identifier(int code, const uint8_t* value, int length) noexcept
      REQUIRES(mu);

  strata::Database db_;
  const std::shared_ptr<const strata::fdb_c::DatabaseState> state_;
  const fdb_error_t unavailable_;
  const bool durable_;  // the database is in a directory: commits may settle on its thread
  // DatabaseState::defaults_changes() when this transaction took defaults_ (before it did).
  std::uint64_t defaults_changes_ GUARDED_BY(mu);
  // The options as set, decoded: strata's transaction acts on those it knows (the timeout,
  // retry limit, maximum retry delay, size limit, read-your-writes, conflict reporting),
  // this layer on the special-key and system-key ones.
  strata::fdb_c::TransactionOptions options_ GUARDED_BY(mu);
  // The database's defaults as this transaction took them (creation or reset): what a
  // retry returns to, but for the persistent options (restart()).
  strata::fdb_c::TransactionOptions defaults_ GUARDED_BY(mu);
  fdb_error_t deferred_ GUARDED_BY(mu) = 0;
  bool commit_started_ GUARDED_BY(mu) = false;  // commit() was called
  bool read_started_ GUARDED_BY(mu) = false;    // note_read_started
  // A version set with fdb_transaction_set_read_version that strata's transaction has not
  // taken: one it no longer keeps (version_error_ 1007), one not yet committed
  // (version_error_ 0), or one a read waited for in vain (1009). -1: none.
  std::int64_t set_version_ GUARDED_BY(mu) = -1;
  fdb_error_t version_error_ GUARDED_BY(mu) = 0;
  // Moves on at each cancel, reset and retry, which end the waits of take_set_version
  // (read without mu by the waiting thread).
  std::atomic<std::uint64_t> wait_epoch_{0};
  int waiting_ GUARDED_BY(mu) = 0;  // threads in take_set_version's wait
  // The distinct tags set in this attempt (TAG, AUTO_THROTTLE_TAG): FoundationDB's
  // transaction options hold them, and a reset or retry starts them over.
  std::vector<std::string> tags_ GUARDED_BY(mu);
  // The attempt's debug transaction identifier, empty until set: a reset or retry starts
  // without one, as FoundationDB's reset makes a new transaction state.
  std::string debug_identifier_ GUARDED_BY(mu);
  std::int64_t read_cost_ GUARDED_BY(mu) = 0;
  std::int64_t write_cost_ GUARDED_BY(mu) = 0;
  // The futures waiting for the commit's versionstamp, each holding a reference: the first
  // inline, as a commit nearly always has at most one (a cluster client asks for it before
  // every commit), so that a transaction makes no allocation for it; any more after it.
  FDBFuture* stamp_waiter_ GUARDED_BY(mu) = nullptr;
  std::vector<FDBFuture*> more_stamp_waiters_ GUARDED_BY(mu);
};
