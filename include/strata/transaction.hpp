// strata/transaction.hpp: transactions, the snapshot read view, and their value types.
//
// A Transaction follows FoundationDB's read-your-writes client: reads see the store
// at the transaction's read version merged with the transaction's own writes; commit
// checks every read conflict range against the writes committed after the read
// version and fails with not_committed (1020) on overlap. Snapshot reads (snapshot())
// add no read conflicts. docs/transactions.md gives the exact rules.
//
// Thread safety: one Transaction is used by one thread at a time (it may move between
// threads). Different transactions may be used concurrently from any threads.
// Errors: every operation throws strata::Error; retryable ones (1007, 1020, 1021) are
// handled by on_error() or Database::run.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "strata/error.hpp"
#include "strata/function_ref.hpp"
#include "strata/types.hpp"

namespace strata {

namespace engine {
class TransactionImpl;
class WatchState;
struct SystemKeyConflicts;
}  // namespace engine
namespace cluster {
class ClusterTransaction;
class ClusterWatch;
}  // namespace cluster

struct RangeOptions {
  int limit = 0;         // the most rows to return; 0: no limit; negative: range_limits_invalid
  bool reverse = false;  // true: from the end of the range backwards
  // Stop after the row that brings the key and value bytes returned to this many (at least
  // one row). 0: no byte limit; negative: range_limits_invalid. A read stopped by either
  // limit conflicts only up to its last row.
  int target_bytes = 0;
};

// What get_range returns: the rows, in a std::vector (code written for a vector keeps
// working), and FoundationDB's "more". `more` is true when a limit (RangeOptions::limit or
// target_bytes) ended the read: rows may remain past the last one returned, or none may
// (FoundationDB's contract is "true if, but not only if, rows remain"). False: the read
// reached the end of the range and returned every row in it. To read on, start the next
// read after the last key (begin = back().key + '\0'; reverse: end = back().key).
struct RangeResult : std::vector<KeyValue> {
  bool more = false;
};

// What visit_range calls for each row, in order. The views point into strata's memory and
// are valid only until the call returns (copy what you keep). visit_range takes it by
// reference (RowVisitorRef: any callable of this shape, a lambda or a RowVisitor), so a
// visitor costs no allocation; RowVisitor is the type to keep one in.
using RowVisitor = std::function<void(std::string_view key, std::string_view value)>;
using RowVisitorRef = FunctionRef<void(std::string_view key, std::string_view value)>;

// FoundationDB's counters are 8-byte little-endian integers: the operand of an atomic add
// (or min, max) and what a key so updated holds. int64_operand(-3) is that operand;
// int64_value reads a counter back: 0 to 8 bytes, little-endian, zero-extended as the
// atomic add extends a shorter value (an empty value is 0); longer throws
// invalid_argument (9003).
[[nodiscard]] std::string int64_operand(std::int64_t value);
[[nodiscard]] std::int64_t int64_value(std::string_view bytes);

class Transaction;

// Fires once the watched key's value differs from the value seen by the transaction that
// made the watch. Armed when that transaction commits; a change that transaction itself
// makes to the key fires it at once, as FoundationDB's does. Only "some change happened"
// is promised: a change and change back may be missed.
// Thread safety: a Watch is a handle; copies share one watch; any thread may wait or
// cancel. It outlives its transaction. Destroying its last copy cancels it (as destroying
// a FoundationDB watch future does): keep one while you wait for it or its callback. A
// moved-from Watch throws client_invalid_operation (2000) from every method.
class Watch {
 public:
  // Blocks until the watch fires or is cancelled. Throws transaction_cancelled (1025) if
  // its transaction was reset, cancelled or destroyed before committing, the commit's error if the
  // commit failed, or too_many_watches (1032) past Options::max_watches armed watches
  // (10,000 by default).
  void wait();
  // As wait(), up to `timeout` (a negative one is 0). True: fired; false: timed out or
  // cancelled.
  bool wait_for(std::chrono::milliseconds timeout);
  // Wakes waiters, which return without a change, and disarms the watch.
  void cancel();
  // Calls `callback` once when the watch fires, is cancelled or fails: on the thread that
  // finishes it (a committing thread, or the caller of cancel()), or at once on this
  // thread if it already has. `callback` must be short and must not block; wait_for(0)
  // inside it tells which outcome happened. REQUIRES: `callback` does not throw (run by a
  // commit, by the last copy's destructor or by the database's close, an exception from it
  // calls std::terminate; from cancel(), it skips the callbacks after it). An empty
  // `callback` throws invalid_argument (9003) and is not registered.
  // On a cluster, callbacks run on FoundationDB's network thread, or in cancel(), and a
  // waiter on another thread returns once those registered before the watch finished have
  // run (wait_for may return the outcome before, when its timeout passes first).
  void on_ready(std::function<void()> callback);

 private:
  friend class Transaction;  // makes watches
  explicit Watch(std::shared_ptr<engine::WatchState> state);
  explicit Watch(std::shared_ptr<cluster::ClusterWatch> cluster);
  // One of the two is set: state_ in process, cluster_ on a cluster (neither: moved from).
  std::shared_ptr<engine::WatchState> state_;
  std::shared_ptr<cluster::ClusterWatch> cluster_;
};

// Reads through a transaction that add no read conflict ranges. They still see the
// transaction's own writes. A ReadView borrows its transaction: it must not outlive it.
class ReadView {
 public:
  [[nodiscard]] std::optional<std::string> get(std::string_view key);
  bool get(std::string_view key, std::string& out);
  RangeResult get_range(std::string_view begin, std::string_view end, RangeOptions options = {});
  [[nodiscard]] RangeResult get_range(const KeyRange& range, RangeOptions options = {});
  std::size_t visit_range(std::string_view begin, std::string_view end, RangeOptions options,
                          RowVisitorRef visit);
  std::size_t visit_range(const KeyRange& range, RangeOptions options, RowVisitorRef visit);

 private:
  friend class Transaction;
  ReadView(engine::TransactionImpl* impl, cluster::ClusterTransaction* cluster)
      : impl_(impl), cluster_(cluster) {}
  engine::TransactionImpl* impl_;
  cluster::ClusterTransaction* cluster_;
};

// What on_error does about an error, decided without waiting (Transaction::retry_step).
struct RetryStep {
  // How long to wait before `error` holds: the backoff before a retry, or the time left to
  // the timeout's deadline when the backoff would reach it; 0 otherwise. The longest
  // backoffs saturate at nanoseconds::max().
  std::chrono::nanoseconds delay{0};
  // success: retry once `delay` has passed. Otherwise the error to surface after `delay`.
  ErrorCode error = ErrorCode::success;
  // The step reset the transaction for another attempt (reads, writes, read version and the
  // options that are not persistent are gone): for a retry, for a timeout that falls inside
  // the backoff, and for an error given back under GiveUp::restart.
  bool reset = false;
  // The step gave the error back under GiveUp::cancel, and cancelled the transaction.
  bool cancelled = false;
};

// What retry_step does to the transaction when it gives an error back (not retryable, or
// past the retry limit). FoundationDB's client cancels it from API version 610 on, and
// resets it before (fdbclient/ReadYourWrites.actor.cpp, RYWImpl::onError).
enum class GiveUp : std::uint8_t {
  cancel,   // every later operation fails with transaction_cancelled (1025) until reset()
  restart,  // reset as for a retry (retry count and timeout kept): usable again at once
};

// commit_async's callback: null for success, else the commit's error.
using CommitCallback = std::function<void(const Error* error)>;

class Transaction {
 public:
  // Made by Database::create_transaction(). Move-only. A moved-from Transaction, and a
  // ReadView of it, throw client_invalid_operation (2000) from every method (assigning to
  // it or destroying it is fine).
  Transaction(Transaction&&) noexcept;
  Transaction& operator=(Transaction&&) noexcept;
  ~Transaction();

  // Reads. The first read fixes the read version. Keys at or above "\xff" throw
  // key_outside_legal_range (2004), but for FoundationDB's "\xff/metadataVersion" (see
  // atomic_op); a key longer than 10,000 bytes reads as absent.
  // A read more than Options::mvcc_window after the read version was taken throws
  // transaction_too_old (1007); the age is measured with a clock a few ms coarse.
  [[nodiscard]] std::optional<std::string> get(std::string_view key);
  // The same read into `out`, reusing its capacity: a loop of reads into one string
  // allocates nothing once the string is large enough. Returns whether the key is present;
  // `out` is then its value, else empty. If the read throws, `out` is left as it was.
  bool get(std::string_view key, std::string& out);
  // Rows of [begin, end) in key order (or reverse). begin >= end returns nothing.
  // A read that stops at its limit conflicts only up to the last row returned, and says
  // so in RangeResult::more (on a cluster: the C API's out_more for the last batch read).
  RangeResult get_range(std::string_view begin, std::string_view end, RangeOptions options = {});
  [[nodiscard]] RangeResult get_range(const KeyRange& range, RangeOptions options = {});
  // The rows get_range would return, with the same conflict range, passed to `visit` one
  // by one instead of copied into a vector: a read that keeps only part of what it reads
  // (a key, a count) allocates nothing. Returns the number of rows visited. `visit` must
  // not use or destroy this transaction (a use throws client_invalid_operation, 2000); it
  // may use others. An exception from `visit` ends the read and propagates; a serializable
  // read then conflicts on the whole of [begin, end). An empty `visit` throws
  // invalid_argument (9003) before anything is read.
  std::size_t visit_range(std::string_view begin, std::string_view end, RangeOptions options,
                          RowVisitorRef visit);
  std::size_t visit_range(const KeyRange& range, RangeOptions options, RowVisitorRef visit);
  [[nodiscard]] ReadView snapshot() { return ReadView(impl_.get(), cluster_.get()); }

  // Writes, buffered until commit. set() of a key over 10,000 bytes throws key_too_large
  // (2102), a value over 100,000 bytes value_too_large (2103); keys at or above "\xff"
  // throw 2004, begin > end inverted_range (2005). No stored key is longer than 10,000
  // bytes, so clear() of one throws nothing: as in FoundationDB, a key of up to 10,008
  // bytes is then cleared in this transaction (it counts toward the size, and with
  // read-your-writes on a later get of it adds no read conflict), and a longer one is
  // ignored.
  void set(std::string_view key, std::string_view value);
  void clear(std::string_view key);
  void clear_range(std::string_view begin, std::string_view end);
  void clear_range(const KeyRange& range);

  // Applies `type` to `key` with operand `param` at commit. Adds a write conflict range
  // only, so transactions made of atomic operations never conflict. Reading the key in
  // the same transaction reads the stored value, applies the pending operations and adds
  // a read conflict. Versionstamp operations: the 10 bytes at the offset become the
  // commit's versionstamp; an offset that leaves no room throws client_invalid_operation
  // (2000); reading a key they may write throws accessed_unreadable (1036).
  // "\xff/metadataVersion" is the one system key a transaction reads, watches and adds as
  // a read conflict (add_read_conflict_range only as exactly that key), as FoundationDB's:
  // absent until written, and written only by set_versionstamped_value with 14 zero bytes
  // (the stamp at offset 0), which makes it the commit's 10-byte versionstamp; any other
  // write to it throws client_invalid_operation (2000), a clear 2004.
  void atomic_op(MutationType type, std::string_view key, std::string_view param);
  // atomic_op(MutationType::add, key, int64_operand(delta)): adds to a counter.
  void atomic_add(std::string_view key, std::int64_t delta);

  // A watch on `key` (see Watch), armed when this transaction commits. Reads the key
  // serializably, so it adds a read conflict on it.
  [[nodiscard]] Watch watch(std::string_view key);

  // Explicit conflict ranges. A read conflict range behaves as if the range were read
  // (minus keys this transaction wrote, unless read-your-writes is off); a write conflict
  // range as if it were cleared, without changing data. As FoundationDB 7.4 does, an end of
  // these ranges, of a cleared range, or of a range read (reading its own writes) longer
  // than 10,008 bytes is cut to 10,009, where no key can be, and a range left empty is
  // dropped. As in FoundationDB, a read conflict range reads nothing and takes no read
  // version: one added before any read is checked from the version the first read takes,
  // or else from one taken at commit. With read-your-writes on, a write conflict range
  // counts as a write for set_read_your_writes.
  void add_read_conflict_range(std::string_view begin, std::string_view end);
  void add_read_conflict_key(std::string_view key);
  void add_write_conflict_range(std::string_view begin, std::string_view end);
  void add_write_conflict_key(std::string_view key);

  // The read version, taken now if no read has taken it yet.
  [[nodiscard]] Version read_version();
  // Reads at `version` instead of the newest. Throws read_version_already_set (2010) once
  // a version is fixed, transaction_too_old (1007) when strata no longer keeps what that
  // version saw (older than every version a live reader holds, or a version no live
  // reader holds at which a since-collected short-lived key existed: see
  // docs/decisions/0005), future_version (1009) when it is newer than the newest commit.
  void set_read_version(Version version);
  // Read-your-writes off: reads see only the database at the read version, conflict on
  // everything they read, and watch() throws watches_disabled (1034). Only before the
  // first read (or read version) and the first write or write conflict range, except that
  // setting it off again after writes made with it off is allowed (else
  // client_invalid_operation, 2000). Turning it off drops the read conflict ranges added
  // so far, as FoundationDB's commit with it off never sends those added with it on.
  // Cleared by reset() and by on_error()'s reset for a retry.
  void set_read_your_writes(bool enabled);
  // Whether snapshot() reads see this transaction's writes (default true). Cleared by
  // reset() and by on_error()'s reset for a retry.
  void set_snapshot_read_your_writes(bool enabled);
  // FoundationDB's REPORT_CONFLICTING_KEYS. When on, a commit that fails with
  // not_committed checks every read rather than stopping at the first conflict, names the
  // conflicting ranges in its error message, and conflicting_ranges() returns them. Off by
  // default. Cleared by reset() and by on_error()'s reset for a retry, as FoundationDB's
  // (the option is not persistent).
  void set_report_conflicting_keys(bool enabled);
  // FoundationDB's NEXT_WRITE_NO_WRITE_CONFLICT_RANGE: the next write (set, clear, range
  // clear or atomic operation) adds no write conflict range, so a transaction that read
  // its keys does not conflict with this one over it. A range another write or
  // add_write_conflict_range gave the same keys stays. The write takes the option whether
  // it succeeds or throws; reset() and on_error()'s reset for a retry clear it.
  void set_next_write_no_write_conflict_range();
  // After a commit that failed with not_committed while reporting was on: the read
  // conflict ranges a newer commit wrote into, each whole as it was read (not narrowed to
  // the write), merged and sorted, as FoundationDB's "\xff\xff/transaction/conflicting_keys/".
  // Empty otherwise. Readable after the failed commit, until on_error() or reset().
  [[nodiscard]] std::vector<KeyRange> conflicting_ranges() const;
  // The conflict sets so far, merged and sorted: the ranges commit checks (reads; snapshot
  // reads add none) and the ranges it publishes (writes, clears, atomic operations and
  // explicit ones), as FoundationDB's "\xff\xff/transaction/read_conflict_range/" and
  // "write_conflict_range/". Until commit, a versionstamped key counts as every key its
  // stamp may make. Readable in any state, until on_error() or reset().
  [[nodiscard]] std::vector<KeyRange> read_conflict_ranges() const;
  [[nodiscard]] std::vector<KeyRange> write_conflict_ranges() const;
  // The bytes this transaction counts against the 10,000,000-byte limit so far.
  [[nodiscard]] std::size_t approximate_size() const;
  // Commits. Throws not_committed (1020) on conflict, transaction_too_old (1007) when
  // it read and its read version left the MVCC window, transaction_too_large (2101)
  // over 10,000,000 bytes. A transaction with no writes commits at once (version -1).
  // After commit, further operations throw used_during_commit (2017) until reset().
  void commit();
  // Starts the commit and returns; `done` is called exactly once with its outcome: null
  // for success, else the Error commit() would have thrown (the pointer lives for the
  // call). The transaction ends as after commit(). A durable database commits the
  // transaction with the others in flight (one log write and sync for the batch), and
  // calls `done` on the thread that leads the batch: the pipeline's own thread, or a
  // thread inside commit(). An in-memory database, a read-only or refused commit, and
  // misuse (2017, 1025, 1031) call it before commit_async returns.
  // Until `done` is called the transaction belongs to the commit: do not use it.
  // Destroying or assigning to it waits for `done` to return. `done` runs where other
  // commits wait on it: it must not throw or block; it may call commit_async (of this
  // transaction too, after reset()) and use other transactions, but commit() throws
  // client_invalid_operation (2000) there. It may destroy this transaction (unless it
  // submitted it again), but not another whose commit is in flight: that waits for a
  // callback only this thread would run. An empty `done` throws invalid_argument (9003)
  // and leaves the transaction as it was, uncommitted.
  void commit_async(CommitCallback done);
  // After a successful commit: its commit version; -1 for a read-only transaction.
  // Before commit: client_invalid_operation (2000).
  [[nodiscard]] Version committed_version() const;
  // After a successful commit: 10 bytes, the commit version (8 bytes big-endian) and the
  // transaction's order within its commit batch (2 bytes big-endian). Before commit:
  // client_invalid_operation (2000); for a read-only transaction: no_commit_version (2021).
  [[nodiscard]] std::string versionstamp() const;

  // Retry protocol: retry_step(e.error_code()), then a sleep of its delay; returns for a
  // retry and otherwise throws (e itself when the step gives e back). So: for a retryable
  // error, sleeps a randomized, growing backoff and resets the transaction for another
  // attempt; otherwise rethrows e (an e of success throws client_invalid_operation, 2000)
  // and leaves the transaction cancelled until reset() (as FoundationDB's from API 610). On
  // a cancelled transaction it throws transaction_cancelled (1025), on a timed-out one
  // transaction_timed_out (1031).
  void on_error(const Error& e);
  // on_error's decision without its wait, for a caller that waits its own way (the C API
  // completes a future on its network thread). In order, as FoundationDB's client
  // (fdbclient/ReadYourWrites.actor.cpp RYWImpl::onError, fdbclient/NativeAPI.actor.cpp
  // Transaction::onError):
  //  - a transaction already ended (ended_by()): that error, and nothing changes;
  //  - `error` success: client_invalid_operation (2000), and nothing changes;
  //  - the retry counts, even when it is refused (a lower limit set later is held against
  //    it); past the retry limit, or for an error error_retryable() rejects, `error` is
  //    given back and the transaction cancelled or reset (`give_up`);
  //  - otherwise the backoff, and the transaction is reset for the next attempt. The
  //    backoff is FoundationDB's: 10 ms after transaction_too_old or future_version (at
  //    most the maximum retry delay); otherwise a random part of a delay that starts at
  //    10 ms and doubles up to the maximum retry delay (from the second retry on; the first
  //    is a random part of 10 ms whatever the maximum). A timeout that falls inside the
  //    backoff makes the error transaction_timed_out (1031), after a delay that ends at the
  //    deadline.
  // A reset for another attempt keeps the persistent options, as FoundationDB's
  // (fdb.options marks TIMEOUT, RETRY_LIMIT and MAX_RETRY_DELAY persistent): the timeout
  // (still counted from the transaction's start), the retry limit, the maximum retry delay,
  // the retry count and the backoff. The size limit, read-your-writes, snapshot
  // read-your-writes and conflict reporting return to a new transaction's.
  // Throws client_invalid_operation (2000) only when called from a visit_range visitor.
  // On a cluster it is FoundationDB's fdb_transaction_on_error, which sleeps the backoff
  // before it answers: the call blocks for it and `delay` is 0; GiveUp::restart (the rule
  // before API version 610) throws client_invalid_operation there (docs/cluster.md).
  [[nodiscard]] RetryStep retry_step(ErrorCode error, GiveUp give_up = GiveUp::cancel);
  // What has ended this transaction early: transaction_timed_out (1031) once its timeout
  // has passed, transaction_cancelled (1025) after cancel() or an on_error that gave up,
  // whichever came first; success while neither has happened. Every operation but reset(),
  // cancel() and the option setters then fails with it until reset().
  [[nodiscard]] ErrorCode ended_by() const;
  // The instant the timeout ends this transaction; time_point::max() without a timeout.
  [[nodiscard]] std::chrono::steady_clock::time_point timeout_deadline() const;
  // FoundationDB's RETRY_LIMIT: once `limit` retries have happened, on_error rethrows the
  // error it is given. -1 is no limit (the default, unless Options::transaction_retry_limit
  // says otherwise); below -1 throws invalid_argument (9003). Kept across on_error(), so
  // Database::run's body may set it on every attempt. In any state, as FoundationDB's
  // options.
  void set_retry_limit(int limit);
  // FoundationDB's SIZE_LIMIT: commit throws transaction_too_large (2101), ending the
  // transaction, over `bytes` (counted as approximate_size()). 32 .. 10,000,000 (the
  // default), else invalid_argument (9003). In any state. on_error()'s reset for a retry
  // and reset() restore the default, as FoundationDB's (the option is not persistent).
  void set_size_limit(std::size_t bytes);
  // FoundationDB's MAX_RETRY_DELAY: the longest backoff on_error sleeps from the second
  // retry on (the first is a random part of 10 ms, as FoundationDB's). Default
  // Options::transaction_max_retry_delay (1 s); negative throws invalid_argument (9003).
  // Kept across on_error(). In any state.
  void set_max_retry_delay(std::chrono::milliseconds delay);
  // Forgets all reads, writes and options (the retry count too), as a new transaction:
  // the timeout, retry limit and maximum retry delay return to the database's Options.
  void reset();
  // Every later operation throws transaction_cancelled (1025) until reset(), or
  // transaction_timed_out (1031) if the timeout had passed first (ended_by()); watches it
  // made and has not committed fail with transaction_cancelled.
  void cancel();
  // Operations after `timeout` from the transaction's start (creation or reset()) throw
  // transaction_timed_out (1031). 0 disables. Kept across on_error(). A transaction
  // starts with Options::transaction_timeout (0 unless set). In any state; once the
  // timeout has passed, a new one (0 included) changes nothing, as in FoundationDB, where
  // the expiry ends the transaction: only reset() makes it usable again.
  void set_timeout(std::chrono::milliseconds timeout);

 private:
  friend class ReadView;
  friend class Database;  // makes transactions
  // The C API's conflict ranges under FoundationDB's system-keys options.
  friend struct engine::SystemKeyConflicts;
  explicit Transaction(std::unique_ptr<engine::TransactionImpl> impl);
  explicit Transaction(std::unique_ptr<cluster::ClusterTransaction> cluster);
  // One of the two is set: impl_ in process, cluster_ on a cluster (neither: moved from).
  std::unique_ptr<engine::TransactionImpl> impl_;
  std::unique_ptr<cluster::ClusterTransaction> cluster_;
};

}  // namespace strata
