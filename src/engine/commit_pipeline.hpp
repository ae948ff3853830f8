// engine/commit_pipeline.hpp: who runs each batch of commits, and who waits for it.
//
// Every writing commit goes through here. What a batch does (resolve, version, apply,
// encode its log record) is engine/commit_batch.hpp's, run by one thread at a time, the
// leader; this is the queue around it: who leads, who waits and how they are woken, the
// log write and sync, and publishing in version order. Two modes:
//   alone    (in memory) each committer runs its own transaction as a batch of one,
//            under the pipeline's lock, and publishes it. With more threads than cores
//            this beats handing the commit to another thread: a hand-off costs the waiter
//            a futex sleep and wake-up nearly every time (docs/decisions/0007).
//   grouped  (with a log) whoever finds the pipeline idle becomes the leader, takes every
//            request waiting at that moment, and for them
//              1. runs them as one batch, or as several when one record could pass the
//                 log limit or the batch index would overflow (CommitBatch::first_batch),
//                 each with its own version, 2. logs each batch (one write, and one sync
//                 unless the syncer takes it), 3. publishes its version and fires its
//                 watches, 4. wakes the requests, 5. collects garbage (after the wake, so
//                 the batch does not wait for it),
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
// A batch's version is published only after its record is in the log (and synced, under
// Durability::fsync), and versions are published in order. A failed log write fails the
// pipeline for good: nothing is published after it.
//
// Thread safety: commit() and submit() from any number of threads; set_persistence() and
// set_mode() before the first commit. The destructor stops the pipeline's threads: no
// request may be in flight then.
#pragma once

#include <atomic>
#include <cstdint>
#include <limits>
#include <span>
#include <string>
#include <thread>
#include <vector>

#include "strata/database.hpp"
#include "strata/error.hpp"

#include "base/adaptive_mutex.hpp"
#include "base/lock_streak.hpp"
#include "base/mutex.hpp"
#include "base/thread_annotations.hpp"
#include "engine/commit_batch.hpp"
#include "engine/commit_request.hpp"
#include "engine/watch_registry.hpp"
#include "kv/mvcc_store.hpp"

namespace strata::engine {

enum class CommitMode : std::uint8_t { alone, grouped };

class CommitPipeline {
 public:
  explicit CommitPipeline(kv::MvccStore& store) : store_(store), batch_step_(store) {}
  ~CommitPipeline();
  CommitPipeline(const CommitPipeline&) = delete;
  CommitPipeline& operator=(const CommitPipeline&) = delete;

  // Log batches here before publishing them (a durable database); selects grouped mode.
  void set_persistence(class Persistence* persistence);
  void set_mode(CommitMode mode) { mode_ = mode; }
  CommitMode mode() const { return mode_; }
  // The batch limits (CommitBatch's). REQUIRES: no commit under way.
  static constexpr std::uint64_t kBatchLogBytes = CommitBatch::kBatchLogBytes;
  void set_batch_log_limit(std::uint64_t bytes) { batch_step_.set_batch_log_limit(bytes); }
  static constexpr std::size_t kBatchCommits = CommitBatch::kBatchCommits;
  void set_batch_count_limit(std::size_t requests) { batch_step_.set_batch_count_limit(requests); }
  // Options::keep_mvcc_window: see CommitBatch::hold_versions.
  void hold_versions(std::int64_t window) { batch_step_.hold_versions(window); }

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

  // Alone mode: whether the commit lock's waiters defer for the long streak (the tuner's
  // choice; for tests and diagnostics).
  bool long_streaks() const { return alone_mu_.long_streaks(); }

  WatchRegistry& watches() { return watches_; }
  DatabaseStats stats() const {
    DatabaseStats s;
    s.commits = commits_.load(std::memory_order_relaxed);
    s.conflicts = conflicts_.load(std::memory_order_relaxed);
    s.batches = batches_.load(std::memory_order_relaxed);
    return s;
  }

 private:
  // Leads from the queue (leader_active_ is set): processes batches until the queue is
  // empty, or hands the leadership on after `max_rounds`; `own` is the leader's own
  // request, if any. Lets queue_mu_ go while it processes; returns with it held.
  void lead(CommitRequest* own, int max_rounds) REQUIRES(queue_mu_);
  // commit() in grouped mode: queues the request and waits, or leads. Out of line, so
  // that the alone commit, which a transaction's commit inlines, carries none of it.
  [[gnu::noinline]] void commit_grouped(CommitRequest& request) EXCLUDES(queue_mu_);
  // The pipeline's own thread: leads whenever a submit() finds the pipeline idle.
  void run_async_leader() EXCLUDES(queue_mu_);
  // Asks the pipeline's thread to lead (under queue_mu_; submit() started it).
  void hand_to_async_leader() REQUIRES(queue_mu_);
  // Calls on_done for the submitted requests of the last batch (outside queue_mu_).
  void settle_submitted() noexcept;
  // The log's syncer (a durable database under Durability::fsync). A leader whose batch
  // and queue hold two submitted requests or more (a submitter with several in flight), or
  // that has batches ahead of it not yet synced, writes the batch without syncing and
  // sends it here: the syncer syncs everything written so far, publishes the batches in
  // order and settles their requests, while the leader goes on with the next batch (one
  // sync overlaps the next batch's work). Committers that wait in commit() do not start
  // it: each needs a core to wake on, and with tens of them on two cores the overlap costs
  // more than it saves (docs/benchmarks.md, "Durable commits"). A lone committer syncs on
  // its own thread. defer_sync() decides (starting the thread the first time; false if it
  // cannot), send_to_syncer() hands over a batch (version -1: nothing to publish),
  // run_syncer() is the thread.
  bool defer_sync(std::span<CommitRequest* const> batch) EXCLUDES(sync_mu_);
  void send_to_syncer(std::span<CommitRequest* const> batch, Version version,
                      std::vector<std::string> stamped) noexcept EXCLUDES(sync_mu_);
  void run_syncer() EXCLUDES(sync_mu_);
  // Fails the pipeline for good with `what` as the cause (the first cause is kept).
  void fail(const char* what) noexcept;
  // Processes the requests as one batch or more (CommitBatch::first_batch), each with its
  // own version; returns the units of collection they earned.
  std::size_t process_bounded(std::span<CommitRequest* const> requests) noexcept;
  // Runs the batch, logs it and publishes it (or sends it to the syncer); returns the
  // units of collection it earned (0 when it published nothing).
  std::size_t process(std::span<CommitRequest* const> batch) noexcept;
  // process()'s steps after an applied batch, on a durable database (persistence_ set).
  [[gnu::noinline]] std::size_t process_logged(std::span<CommitRequest* const> batch,
                                               const BatchOutcome& out) noexcept;
  // Adds an applied batch to the statistics.
  [[gnu::always_inline]] inline void count(std::span<CommitRequest* const> batch,
                                           const BatchOutcome& out);
  // Fires the watches of an applied, published batch, each key's new value read from the
  // store.
  [[gnu::noinline]] void fire_watches(std::span<CommitRequest* const> batch,
                                      const BatchOutcome& out);
  // After a batch that published nothing: hands it to the syncer if it must keep its
  // place there (its requests are settled in order). Returns 0.
  std::size_t publish_nothing(std::span<CommitRequest* const> batch) noexcept;
  // Fires the watches of the batch's committed requests, comparing each watched key's new
  // value with what the watch saw by `changed(key, seen)`. Allocates nothing.
  template <class Changed>
  void fire_watches(std::span<CommitRequest* const> requests,
                    const std::vector<std::string>& stamped, Changed&& changed);
  // Marks the batch's waiting requests but the leader's own done, waking those that
  // sleep; batch number `ticket`. Moves its submitted requests, in order, to the front of
  // `batch` (for settle_submitted(), allocating nothing) and returns how many there are.
  std::size_t wake(std::span<CommitRequest*> batch, const CommitRequest* leader,
                   std::uint32_t ticket);
  // Synced log: bumps the shared word of batch `ticket` and wakes every request on it.
  void wake_word(std::uint32_t ticket);
  // Synced log: sleeps until the request is done or leads; returns its state then.
  int wait_shared(CommitRequest& request);
  // Logs the batch's record, synced or (for the syncer) only written; false when the log
  // failed (the pipeline is then failed for good, the batch's commits of unknown result).
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
  // Alone mode: held for the whole commit. Streaks keep it, and the store's hot lines,
  // with one CPU's threads for a while (base/adaptive_mutex.hpp); how long a while is
  // chosen by measuring the commit rate under each length (base::StreakTuner), ticked
  // whenever a commit ends with commits_ (the commits that succeeded) at a multiple of
  // kTuneEvery.
  base::AdaptiveMutex alone_mu_{base::AdaptiveMutex::Policy::streaks};
  static constexpr std::uint64_t kTuneEvery = 64;
  base::StreakTuner alone_tuner_ GUARDED_BY(alone_mu_);
  base::Mutex queue_mu_;
  std::vector<CommitRequest*> queue_ GUARDED_BY(queue_mu_);
  bool leader_active_ GUARDED_BY(queue_mu_) = false;
  std::uint32_t taken_ GUARDED_BY(queue_mu_) = 0;  // batches taken from queue_
  // With a synced log, waiters sleep on the word of their batch's parity rather than on
  // their own: the leader wakes a whole batch with one system call. Bumped after the
  // batch's requests are marked done (or one is handed the leadership).
  std::atomic<std::int32_t> finished_[2] = {0, 0};
  // The pipeline's own thread (started by the first submit()), and what it is asked.
  std::thread async_thread_;
  base::CondVar async_cv_;
  bool async_lead_ GUARDED_BY(queue_mu_) = false;  // lead now
  bool async_stop_ GUARDED_BY(queue_mu_) = false;  // exit
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
  base::Mutex sync_mu_;
  base::CondVar sync_cv_;    // a job was queued, or stop
  base::CondVar sync_idle_;  // the syncer settled what it took
  std::vector<SyncJob> sync_jobs_ GUARDED_BY(sync_mu_);
  bool syncer_busy_ GUARDED_BY(sync_mu_) = false;  // jobs taken, not yet settled
  bool sync_stop_ GUARDED_BY(sync_mu_) = false;
  bool no_syncer_ = false;                      // leader: the thread could not be started
  std::atomic<std::uint64_t> synced_apart_{0};  // written by the syncer only
  // Owned by the current leader (alone mode: the holder of alone_mu_) only.
  CommitBatch batch_step_;
  std::vector<CommitRequest*> batch_;
  std::vector<CommitRequest*> submitted_;  // the last batch's submitted requests
  std::uint32_t round_ticket_ = 0;         // the batch being processed
  CommitRequest* own_ = nullptr;           // the leader's own, in its first batch
  bool deferring_ = false;                 // a part of the leader's batch went to the syncer
  std::size_t synced_from_ = 0;            // process_bounded(): first sent on
};

}  // namespace strata::engine
