// engine/commit_pipeline.hpp: the single path every writing commit takes.
//
// Every commit is resolved against the history (the writes committed after its read
// version), given the next commit version, applied to the store and published, in version
// order, one batch at a time. Two modes:
//   alone    (in memory) each committer processes its own transaction as a batch of one,
//            under the pipeline's lock. With more threads than cores this is 1.2-2x as fast
//            as handing the commit to another thread: a hand-off costs the waiter a futex
//            sleep and wake-up nearly every time (docs/benchmarks-history.md, session 10).
//   grouped  (with a log) whoever finds the pipeline idle becomes the leader, takes every
//            request waiting at that moment as one batch, and for the batch
//            (a batch whose log record could pass kBatchLogBytes is split into several,
//            each with its own version, before any of it is applied),
//              1. resolves each request in order against the history (and earlier
//                 requests of the batch), 2. assigns the batch one commit version (each
//                 request its batch index), 3. applies the survivors (their keys' skiplist
//                 paths fetched together first, so the misses overlap), 4. logs the batch
//                 (one write and one sync), 5. publishes the version, 6. wakes the batch,
//              7. collects garbage (after the wake, so the batch does not wait for it),
//            then goes on with whatever queued meanwhile; after 64 batches it hands
//            leadership to the first waiting request.
//            An asynchronous commit (submit()) queues its request and returns; when it
//            finds the pipeline idle, the pipeline's own thread (started by the first
//            submit) leads, until the queue is empty. Its requests are settled by calling
//            their on_done, after the batch is published and its waiters woken.
//            When each batch waits for the disk (Durability::fsync), waiters sleep at
//            once rather than spin, all of a batch on one word, and the leader wakes the
//            batch with one system call outside the pipeline's lock, so arrivals queue
//            while it wakes (docs/benchmarks.md, "Durable commits").
// Steps 2-5 cannot throw: everything that can fail was checked before the request was
// submitted.
//
// Thread safety: commit() and submit() from any number of threads; set_persistence() and
// set_mode() before the first commit. The destructor stops the pipeline's thread: no
// request may be in flight then.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <memory_resource>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "strata/database.hpp"
#include "strata/error.hpp"

#include "base/adaptive_mutex.hpp"
#include "base/wait_word.hpp"
#include "durability/mutation_batch.hpp"
#include "engine/resolver.hpp"
#include "engine/watch_registry.hpp"
#include "engine/write_map.hpp"
#include "kv/mvcc_store.hpp"

namespace strata::engine {

struct CommitRequest {
  // Input, prepared by the transaction.
  Version read_version = -1;                 // -1: the transaction read nothing
  const ArenaRanges* read_ranges = nullptr;  // coalesced; null when none
  // Keys read with get(), each the range [k, k+00); null when none.
  const base::ArenaVector<std::string_view>* read_keys = nullptr;
  // Coalesced; the pipeline adds the write map's point keys and its stamped keys.
  std::vector<KeyRange> write_ranges;
  const WriteMap* writes = nullptr;
  // FoundationDB's REPORT_CONFLICTING_KEYS: when set, a conflict does not stop the check,
  // and the index of every read that conflicts is appended (read_ranges first, then
  // read_keys). Its capacity must already hold them all: the leader does not allocate.
  std::vector<std::uint32_t>* conflicting = nullptr;
  // Output.
  ErrorCode error = ErrorCode::success;
  Version version = -1;
  std::uint16_t batch_index = 0;
  // Grouped mode with a log: the most bytes the request can add to its batch's record
  // (log_bytes_bound), set by the committer before it queues.
  std::uint64_t log_bytes = 0;

  // Grouped mode: 0 waiting, 1 leads the next batch, 2 done. Set by the leader, waited on
  // by the committer, which may destroy the request as soon as it sees 2.
  base::WaitWord state{0};
  // Grouped mode: the number of the batch the request joins (taken_ when it queued).
  std::uint32_t ticket = 0;
  // A request queued with submit() rather than commit(): called once the request is
  // settled (its output fields filled in), by the leader, outside the pipeline's lock.
  // The leader touches the request no more once it is called, so it may reuse the request
  // or submit another. Null for a committer that waits in commit().
  void (*on_done)(CommitRequest& request) noexcept = nullptr;
  void* context = nullptr;  // the submitter's, for on_done
};

enum class CommitMode : std::uint8_t { alone, grouped };

// The most bytes applying `writes` can add to a log record: its sets, clears and ranges as
// they are, and each key's atomic operations as the smaller of their result (at most a
// value's 100,000 bytes) and the operations themselves (CommitPipeline::apply). Never more
// than ~13 bytes per write beyond what the transaction size limit counts.
std::uint64_t log_bytes_bound(const WriteMap& writes);

class CommitPipeline {
 public:
  explicit CommitPipeline(kv::MvccStore& store) : store_(store) {}
  ~CommitPipeline();
  CommitPipeline(const CommitPipeline&) = delete;
  CommitPipeline& operator=(const CommitPipeline&) = delete;

  // Log batches here before publishing them (a durable database); selects grouped mode.
  void set_persistence(class Persistence* persistence);
  void set_mode(CommitMode mode) { mode_ = mode; }
  CommitMode mode() const { return mode_; }
  // The log bytes a batch may hold before it is split (a record holds at most 1 GiB; tests
  // set a small limit). REQUIRES: no commit under way.
  static constexpr std::uint64_t kBatchLogBytes = std::uint64_t{256} << 20;
  void set_batch_log_limit(std::uint64_t bytes) { batch_log_limit_ = bytes; }
  // The requests a batch may hold before it is split: a versionstamp numbers a commit
  // within its version in two bytes (tests set a small limit). REQUIRES: no commit under
  // way; at least 1, at most kBatchCommits.
  static constexpr std::size_t kBatchCommits = std::size_t{1} << 16;
  void set_batch_count_limit(std::size_t requests) { batch_count_limit_ = requests; }

  // Resolves and (if no conflict) applies `request`; fills its output fields. Throws
  // database_failed once a log write failed, and client_invalid_operation when called
  // from a request's on_done (it would wait for the thread it runs on).
  void commit(CommitRequest& request);
  // Grouped mode: queues `request`, whose on_done must be set, and returns; on_done is
  // called once it is settled, on the thread that leads its batch (never inside submit()
  // itself). Throws (queueing nothing) when out of memory or threads.
  void submit(CommitRequest& request);

  // Whether this thread is calling submitted requests' on_done (of any pipeline).
  static bool settling_here() noexcept;
  // Whether a log write failed, and the database_failed error every commit then gets.
  bool failed() const { return failed_.load(std::memory_order_acquire); }
  Error failure_error() const;

  // Batches the syncer published (for tests and diagnostics).
  std::uint64_t batches_synced_apart() const {
    return synced_apart_.load(std::memory_order_relaxed);
  }

  WatchRegistry& watches() { return watches_; }
  DatabaseStats stats() const {
    DatabaseStats s;
    s.commits = commits_.load(std::memory_order_relaxed);
    s.conflicts = conflicts_.load(std::memory_order_relaxed);
    s.batches = batches_.load(std::memory_order_relaxed);
    return s;
  }

 private:
  // Leads from the queue (the caller holds `lock`, and leader_active_ is set): processes
  // batches until the queue is empty, or hands the leadership on after `max_rounds`;
  // `own` is the leader's own request, if any. Returns with `lock` held.
  void lead(std::unique_lock<std::mutex>& lock, CommitRequest* own, int max_rounds);
  // The pipeline's own thread: leads whenever a submit() finds the pipeline idle.
  void run_async_leader();
  // Asks the pipeline's thread to lead (under queue_mu_; submit() started it).
  void hand_to_async_leader();
  // Calls on_done for the submitted requests of the last batch (outside queue_mu_).
  void settle_submitted() noexcept;
  // The log's syncer (a durable database under Durability::fsync). A leader whose batch
  // and queue hold two submitted requests or more (a submitter with several in flight), or
  // that has batches ahead of it not yet synced, writes the batch without syncing and
  // sends it here: the syncer syncs everything
  // written so far, publishes the batches in order and settles their requests, while the
  // leader goes on with the next batch (one sync overlaps the next batch's work).
  // Committers that wait in commit() do not start it: each needs a core to wake on, and
  // with tens of them on two cores the overlap cost more than it saved (64 committers ran
  // 89-111 k/s with it, 128-153 k/s without; docs/benchmarks.md, "Durable commits"). A lone
  // committer syncs on its own thread, as before. defer_sync() decides (starting the
  // thread the first time; false if it cannot), send_to_syncer() hands over a batch
  // (version -1: nothing to publish), run_syncer() is the thread.
  bool defer_sync(std::span<CommitRequest* const> batch);
  void send_to_syncer(std::span<CommitRequest* const> batch, Version version,
                      std::vector<std::string> stamped) noexcept;
  void run_syncer();
  // Fails the pipeline for good with `what` as the cause (the first cause is kept).
  void fail(const char* what) noexcept;
  // Processes the batch as one or more (each with its own version), so that no batch's log
  // record passes batch_log_limit_ and none holds more than batch_count_limit_ requests;
  // returns the units of collection they earned.
  std::size_t process_bounded(std::span<CommitRequest* const> batch) noexcept;
  // Resolves, applies and publishes the batch; returns the units of collection it earned
  // (0 when it published nothing).
  std::size_t process(std::span<CommitRequest* const> batch) noexcept;
  // Marks the batch's waiting requests but the leader's own done, waking those that
  // sleep, and sets its submitted ones aside for settle_submitted(); batch number `ticket`.
  void wake(std::span<CommitRequest* const> batch, const CommitRequest* leader,
            std::uint32_t ticket);
  // Synced log: bumps the shared word of batch `ticket` and wakes every request on it.
  void wake_word(std::uint32_t ticket);
  // Synced log: sleeps until the request is done or leads; returns its state then.
  int wait_shared(CommitRequest& request);
  // Collects garbage and prunes the resolver's history (leader only).
  void collect(std::size_t budget) noexcept;
  // Fetches into the cache what applying the batch's point writes will read, all
  // together, so that their cache misses overlap (a batch of 50 random new keys spent
  // most of its apply waiting on the skiplist's nodes one after another), and finds the
  // new keys' paths into write_paths_, one per point write of each request to apply.
  void prepare_writes(std::span<CommitRequest* const> batch);
  // The same for one request of a smaller batch: returns its paths, one per point write.
  const kv::MvccStore::List::Path* prepare_writes(CommitRequest& request);
  bool resolve(const CommitRequest& request);
  // Reserves what applying the batch's surviving requests will allocate (the store's nodes,
  // records, index and queues, the log record, the stamped keys): after it, only what
  // MvccStore::reserve_writes leaves out may still fail. Throws std::bad_alloc.
  void reserve_apply(std::span<CommitRequest* const> batch, std::vector<std::string>& stamped);
  // The batch ran out of memory before its point of no return: its surviving requests fail
  // with commit_proxy_memory_limit_exceeded (1042, retryable) and nothing is published
  // (the resolver may keep their writes: later commits can only conflict more). Returns 0.
  std::size_t refuse_batch(std::span<CommitRequest* const> batch) noexcept;
  // The batch failed part-way through applying (out of memory past the reservation): its
  // version is never published, its requests fail with database_failed, and so does every
  // later commit, as after a failed log write. Returns 0.
  std::size_t fail_batch(std::span<CommitRequest* const> batch) noexcept;
  void record_writes(CommitRequest& request, Version version);
  // Applies the request; appends the final keys of its versionstamped keys to `stamped`.
  // `paths`, when given, holds one path per point write (from prepare_writes).
  void apply(const CommitRequest& request, Version version, std::vector<std::string>& stamped,
             const kv::MvccStore::List::Path* paths);
  // Logs a dependent entry's atomic operations by their `result`, or as the operations
  // when those take fewer bytes.
  void log_dependent(std::string_view key, const PointWrite& entry, std::string_view result);
  // Logs the batch, synced or (for the syncer) only written; false when the log failed
  // (the pipeline is then failed for good).
  bool log_batch(std::span<CommitRequest* const> batch, Version version, bool sync) noexcept;

  kv::MvccStore& store_;
  WatchRegistry watches_;
  class Persistence* persistence_ = nullptr;
  std::atomic<bool> failed_{false};   // a log write failed: no further commits
  std::atomic<bool> failing_{false};  // fail() was called: failure_ is its writer's
  std::string failure_;               // why; written once, before failed_ is set (release)
  // Written by the leader only.
  std::atomic<std::uint64_t> commits_{0}, conflicts_{0}, batches_{0};
  CommitMode mode_ = CommitMode::alone;
  bool syncs_ = false;  // every batch waits for an fdatasync
  bool logs_ = false;   // every batch is logged
  std::uint64_t batch_log_limit_ = kBatchLogBytes;
  std::size_t batch_count_limit_ = kBatchCommits;
  base::AdaptiveMutex alone_mu_;  // alone mode: held for the whole commit
  std::mutex queue_mu_;
  std::vector<CommitRequest*> queue_;  // guarded by queue_mu_
  bool leader_active_ = false;         // guarded by queue_mu_
  std::uint32_t taken_ = 0;            // batches taken from queue_; guarded by queue_mu_
  // With a synced log, waiters sleep on the word of their batch's parity rather than on
  // their own: the leader wakes a whole batch with one system call. Bumped after the
  // batch's requests are marked done (or one is handed the leadership).
  std::atomic<std::int32_t> finished_[2] = {0, 0};
  // The pipeline's own thread (started by the first submit()), and what it is asked.
  std::thread async_thread_;
  std::condition_variable async_cv_;
  bool async_lead_ = false;  // guarded by queue_mu_: lead now
  bool async_stop_ = false;  // guarded by queue_mu_: exit
  // Submitted requests in queue_ (written under queue_mu_), for defer_sync().
  std::atomic<std::size_t> queued_submitted_{0};
  // The syncer's thread and its queue of batches written but not synced.
  struct SyncJob {
    Version version;  // -1: nothing to publish
    std::vector<CommitRequest*> requests;
    std::vector<std::string> stamped;  // the batch's versionstamped keys, for watches
    std::uint32_t ticket;              // the batch's number (its waiters' word)
  };
  std::thread sync_thread_;
  std::mutex sync_mu_;
  std::condition_variable sync_cv_;             // a job was queued, or stop
  std::condition_variable sync_idle_;           // the syncer settled what it took
  std::vector<SyncJob> sync_jobs_;              // guarded by sync_mu_
  bool syncer_busy_ = false;                    // guarded by sync_mu_: jobs taken, not yet settled
  bool sync_stop_ = false;                      // guarded by sync_mu_
  bool no_syncer_ = false;                      // leader: the thread could not be started
  bool collection_stopped_ = false;             // leader: a collection ran out of memory (collect)
  std::atomic<std::uint64_t> synced_apart_{0};  // written by the syncer only
  // Owned by the current leader (alone mode: the holder of alone_mu_) only.
  Resolver resolver_;
  std::vector<CommitRequest*> batch_;
  std::vector<CommitRequest*> submitted_;     // the last batch's submitted requests
  Version assigned_ = 0;                      // the newest version given a batch
  std::uint32_t round_ticket_ = 0;            // the batch being processed
  CommitRequest* own_ = nullptr;              // the leader's own, in its first batch
  bool deferring_ = false;                    // a part of the leader's batch went to the syncer
  std::size_t synced_from_ = 0;               // process_bounded(): first sent on
  std::vector<std::string_view> write_keys_;  // prepare_writes' scratch
  std::vector<kv::MvccStore::List::Path> write_paths_;  // and what it found
  durability::MutationBatchEncoder log_;                // the batch's net effect, for the log
};

}  // namespace strata::engine
