// engine/commit_batch.hpp: what a batch of commits does, on the thread that runs it.
//
// Given the requests of a batch, run()
//   1. resolves each in order against the history (the writes committed after its read
//      version, and those of the earlier requests of the batch), recording each
//      survivor's writes before the next is checked;
//   2. gives the batch the next commit version, and each request its batch index (the
//      last two bytes of its versionstamp);
//   3. reserves what applying the survivors will allocate, then applies them to the store
//      (their keys' skiplist paths fetched together first, so the misses overlap);
//   4. encodes the survivors' net effect as the batch's log record (log_record());
// and says what became of it: the version to log and then publish (none when every
// request failed), the versionstamped keys for watches, and the garbage collection the
// batch earned (collect()). The requests' output fields say whom to tell what.
// Nothing is published here: the store's readers see the batch only once the caller
// publishes its version, after logging the record. Who runs a batch, when, and who waits
// for it is engine/commit_pipeline.hpp's business.
//
// Everything that can fail in a commit but memory was checked before the request was
// queued. Everything applying and logging the batch allocates is reserved before the point
// of no return (step 3, engine/apply_reservation.hpp), so that running out fails the
// batch's survivors with a retryable error and changes nothing
// (docs/decisions/0032-a-commit-that-runs-out-of-memory.md). Status::broken remains for a
// failure past that point all the same.
//
// Thread safety: none. One thread at a time (the pipeline's leader) runs batches and
// collects, and no lock of the batch's own is needed for that. The layers it calls take
// their own short locks, shared with other threads: the log writer's reservation (with the
// syncer, in run), the store's horizon (with readers pinning a version, in collect), and
// with hold_versions on, the reader registry's when it takes a slot for a committer.
// A batch writes its committers' requests, and with hold_versions their slots, before
// the pipeline hands the requests back (CommitRequest).
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "strata/types.hpp"

#include "durability/mutation_batch.hpp"
#include "engine/apply_reservation.hpp"
#include "engine/commit_request.hpp"
#include "engine/resolver.hpp"
#include "engine/write_map.hpp"
#include "kv/mvcc_store.hpp"

namespace strata::engine {

class Persistence;

// The most bytes applying `writes` can add to a log record: its sets, clears and ranges as
// they are, and each key's atomic operations as the smaller of their result (at most a
// value's 100,000 bytes) and the operations themselves (CommitBatch::apply). Never more
// than ~13 bytes per write beyond what the transaction size limit counts.
std::uint64_t log_bytes_bound(const WriteMap& writes);

// What became of a batch (CommitBatch::run).
struct BatchOutcome {
  enum class Status : std::uint8_t {
    // Resolved, and its survivors (if any) applied at `version`.
    applied,
    // Out of memory before anything was applied: its survivors failed with
    // commit_proxy_memory_limit_exceeded (1042, retryable); the store is unchanged (the
    // resolver may keep their writes: later commits can only conflict more).
    refused,
    // Out of memory part-way through applying: its survivors failed with database_failed,
    // and the store holds writes at a version that must never be published, so no later
    // commit may be either (as after a failed log write).
    broken,
  };
  Status status = Status::applied;
  // The requests that survived (error success, version set).
  std::size_t committed = 0;
  // The version to log and then publish; -1 when nothing survived. A batch whose every
  // commit failed takes no version: it has nothing to log, and a version published without
  // a record could be handed out again after a crash (a read version going back).
  Version version = -1;
  // The final keys of the survivors' versionstamped keys, for watches: the batch's own,
  // valid until its next run() (CommitBatch::take_stamped() moves them out).
  const std::vector<std::string>* stamped = nullptr;
  // Units of garbage collection the batch earned (0 unless applied).
  std::size_t collect = 0;
};

class CommitBatch {
 public:
  explicit CommitBatch(kv::MvccStore& store) : store_(store) {}
  CommitBatch(const CommitBatch&) = delete;
  CommitBatch& operator=(const CommitBatch&) = delete;

  // Encodes each batch's log record (a database with a log). `room`, when not null, has
  // room made for the record before the point of no return (Persistence::reserve).
  void set_logging(bool encode, Persistence* room);
  bool logging() const { return logs_; }

  // The log bytes a batch may hold before it is split (a record holds at most 1 GiB; tests
  // set a small limit).
  static constexpr std::uint64_t kBatchLogBytes = std::uint64_t{256} << 20;
  void set_batch_log_limit(std::uint64_t bytes) { batch_log_limit_ = bytes; }
  // The requests a batch may hold before it is split: a versionstamp numbers a commit
  // within its version in two bytes (tests set a small limit). At least 1, at most
  // kBatchCommits.
  static constexpr std::size_t kBatchCommits = std::size_t{1} << 16;
  void set_batch_count_limit(std::size_t requests) { batch_count_limit_ = requests; }
  // Options::keep_mvcc_window: each admitted commit's version is held in its committer's
  // slot (CommitRequest::slot) for `window` (base::CoarseClock's nanoseconds; saturating).
  void hold_versions(std::int64_t window) { hold_window_ = window; }

  // How many of `requests` (at least one) make the first batch: at most the count limit,
  // and with a log, no more than fit the log limit by their log_bytes (the first always).
  std::size_t first_batch(std::span<CommitRequest* const> requests) const noexcept;

  // Runs `batch` (within first_batch's limits): resolves, versions, applies and encodes
  // it, and fills in each request's output fields. The version it gives is one above both
  // the store's published version and the last version it gave a batch (which may not be
  // published yet).
  BatchOutcome run(std::span<CommitRequest* const> batch) noexcept;

  // The record run() encoded for its last applied batch: valid until the next run().
  const std::string& log_record() const { return log_.bytes(); }
  // Moves out the stamped keys of the last batch (BatchOutcome::stamped), to keep them
  // past the next run().
  std::vector<std::string> take_stamped() noexcept { return std::move(stamped_); }

  // Collects up to `budget` units of garbage and prunes the resolver's history to what
  // the store keeps. Out of memory stops collection for good (reported on stderr).
  void collect(std::size_t budget) noexcept;
  // A collection with nothing queued is skipped (kv::MvccStore::skip_idle_collection) only
  // while the conflict history holds at most this many writes and boundaries: it is pruned
  // only by the collections that run.
  static constexpr std::size_t kIdleHistory = 64;
  // A collection with only overwrites queued (kv::MvccStore::defer_collection) waits for
  // later commits' until this many units are earned, under the same bound on the history.
  static constexpr std::size_t kDeferredUnits = 128;
  // The units a batch of `writes` writes earns: collection keeps pace with writing.
  static constexpr std::size_t earned_collection(std::size_t writes) { return 2 * writes + 16; }

  // The conflict history (for tests and diagnostics).
  const Resolver& resolver() const { return resolver_; }

 private:
  using Repeats = kv::MvccStore::Repeats;
  // Whether a batch of `request` alone takes run_lone(): nothing to log, and a few sets
  // and clears of keys (within kPlainBytes, fewer than kPrepareWrites) in an array
  // (PointMap::array).
  bool lone_plain(const CommitRequest& request) const;
  // collect() past the idle skip, out of line: the skip then saves no registers for it.
  [[gnu::noinline]] void collect_now(std::size_t budget);
  BatchOutcome run_lone(CommitRequest* const& request) noexcept;
  // run() for any other batch. Out of line: a lone commit's caller then keeps a frame
  // the size of run_lone's.
  [[gnu::noinline]] BatchOutcome run_batch(std::span<CommitRequest* const> batch) noexcept;
  // Checks the request (transaction_too_old, then its conflicts) and, when it survives,
  // records its writes at `version` and gives it the version; else sets its error.
  // Throws std::bad_alloc. Inlined, as apply_plain is: in a batch of small commits their
  // calls' frames cost about as much as their work.
  [[gnu::always_inline]] inline bool admit(CommitRequest& request, Version version);
  // CommitRequest::slot: announces the admitted request's version in the committer's slot,
  // before the batch is published. Out of memory taking a slot, nothing is held.
  [[gnu::noinline, gnu::cold]] void hold_version(CommitRequest& r) noexcept;
  // admit()'s checks, which a lone commit runs itself (it records its writes with
  // record_points): whether the request may commit (else its error is set).
  [[gnu::always_inline]] inline bool passes(CommitRequest& request);
  // Out of memory before the point of no return: the batch's survivors fail with
  // commit_proxy_memory_limit_exceeded, and the store is unchanged.
  void refuse(std::span<CommitRequest* const> batch, BatchOutcome& out) noexcept;
  // Out of memory past it: the survivors fail with database_failed (Status::broken).
  void fail_applying(std::span<CommitRequest* const> batch, BatchOutcome& out) noexcept;
  // Whether none of the request's reads conflicts. passes() does not ask when nothing was
  // recorded after its read version (Resolver::recorded_after): then none can.
  bool resolve(const CommitRequest& request);
  void record_writes(CommitRequest& request, Version version);
  // record_writes but for stamped keys: the write conflict ranges and `points`, the
  // request's point writes (walked as an array in a lone commit, which has no stamped
  // keys).
  template <class Points>
  void record_points(const CommitRequest& request, const Points& points, Version version);
  // record_writes' part for versionstamped keys (few commits have any: out of line, it
  // keeps their strings out of every commit's path).
  [[gnu::noinline]] void record_stamped_keys(const CommitRequest& request, Version version);
  // Reserves what applying the batch's surviving requests at `version` will allocate
  // (reservation_: the store's nodes, records, index and queues, stamped keys, atomic
  // results; here: prepare_writes' scratch and the log record, in the encoder and in the
  // log writer, a new segment's file included). After it, apply_all() allocates nothing.
  // Throws std::bad_alloc.
  void reserve_apply(std::span<CommitRequest* const> batch, Version version,
                     std::vector<std::string>& stamped);
  // The survivors' writes, at `version`; `prepared` when their paths are in write_paths_.
  // Throws std::bad_alloc.
  std::size_t apply_all(std::span<CommitRequest* const> batch, Version version, bool prepared,
                        std::vector<std::string>& stamped);
  // Fetches into the cache what applying the batch's point writes will read, all
  // together, so that their cache misses overlap (a batch of random new keys spends
  // most of its apply waiting on the skiplist's nodes one after another), and finds the
  // new keys' paths into write_paths_ and every key's hash into write_hashes_, one per
  // point write of each request to apply.
  void prepare_writes(std::span<CommitRequest* const> batch);
  // The same for one request of a smaller batch: its paths and hashes are then at the
  // front of write_paths_ and write_hashes_.
  void prepare_writes(CommitRequest& request);
  // Fails the batch's survivors with `error`, and empties `out` and stamped_ of them.
  void fail_survivors(std::span<CommitRequest* const> batch, ErrorCode error,
                      BatchOutcome& out) noexcept;
  // Applies the request; appends the final keys of its versionstamped keys to `stamped`.
  // `paths` and `hashes`, when given, hold one path and one key hash per point write
  // (from prepare_writes).
  [[gnu::noinline]] void apply(const CommitRequest& request, Version version,
                               std::vector<std::string>& stamped,
                               const kv::MvccStore::List::Path* paths, const std::uint64_t* hashes);
  // apply() for writes that are only sets and clears of keys (WriteMap::only_sets_and_clears).
  // kPrepared: with `paths` and `hashes` from prepare_writes (else both null); a loop of
  // its own for each, so that an unprepared commit does not step through them.
  // `repeats`: whether another request of the batch may write the same keys.
  template <bool kPrepared>
  [[gnu::always_inline]] inline void apply_plain(const WriteMap& writes, Version version,
                                                 const kv::MvccStore::List::Path* paths,
                                                 const std::uint64_t* hashes, Repeats repeats);
  // apply_plain<false> for `points` (run_lone's).
  [[gnu::always_inline]] inline void apply_points(std::span<const PointEntry> points,
                                                  Version version);
  // One set or clear of apply_plain's; `logs`: encoded for the log too (logs_, which
  // run_lone's batch never has).
  [[gnu::always_inline]] inline void apply_point(std::string_view key, const PointWrite& entry,
                                                 Version version, std::uint64_t hash,
                                                 const kv::MvccStore::List::Path* path, bool logs,
                                                 Repeats repeats);
  // Logs a dependent entry's atomic operations by their `result`, or as the operations
  // when those take fewer bytes.
  void log_dependent(std::string_view key, const PointWrite& entry, std::string_view result);

  kv::MvccStore& store_;
  std::int64_t hold_window_ = 0;  // hold_versions; 0: none
  Persistence* room_ = nullptr;
  bool logs_ = false;
  std::uint64_t batch_log_limit_ = kBatchLogBytes;
  std::size_t batch_count_limit_ = kBatchCommits;
  Resolver resolver_;
  bool collection_stopped_ = false;                     // a collection ran out of memory (collect)
  std::size_t deferred_units_ = 0;                      // earned by deferred collections (collect)
  std::vector<std::string_view> write_keys_;            // prepare_writes' scratch
  std::vector<kv::MvccStore::List::Path> write_paths_;  // and what it found: new keys' paths,
  std::vector<std::uint64_t> write_hashes_;             // and every key's hash
  durability::MutationBatchEncoder log_;                // the batch's net effect, for the log
  // The batch's stamped keys (BatchOutcome::stamped): one vector kept from batch to batch,
  // not one made and freed by each.
  std::vector<std::string> stamped_;
  ApplyReservation reservation_;  // what apply() takes (reserve_apply)
};

}  // namespace strata::engine
