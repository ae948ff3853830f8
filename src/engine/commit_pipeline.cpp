#include "engine/commit_pipeline.hpp"

#include <limits>
#include <optional>
#include <utility>

#include "base/futex.hpp"
#include "engine/persistence.hpp"

namespace strata::engine {
namespace {

constexpr int kWaiting = 0;
constexpr int kLeader = 1;
constexpr int kDone = 2;

// Batches one leader processes before passing the leadership on.
constexpr int kMaxRounds = 64;
// Pause loops a waiter spins before sleeping (about as long as a batch in memory takes: a
// futex sleep and wake-up cost more than that). A batch that syncs takes far longer, and
// spinning through it only takes cores from committers.
constexpr int kSpins = 512;

// Set while this thread calls submitted requests' on_done: a commit() there would wait
// for this very thread to lead.
thread_local bool t_settling = false;

// Whether a key's value `now` (nullopt: absent) differs from what a watch saw.
bool value_differs(std::optional<std::string_view> now, const std::optional<std::string>& seen) {
  return now.has_value() != seen.has_value() || (now && *now != *seen);
}

}  // namespace

void CommitPipeline::set_persistence(Persistence* persistence) {
  persistence_ = persistence;
  mode_ = persistence != nullptr ? CommitMode::grouped : CommitMode::alone;
  syncs_ = persistence != nullptr && persistence->syncs();
  logs_ = persistence != nullptr && persistence->logging();
  batch_step_.set_logging(logs_, persistence);
}

CommitPipeline::~CommitPipeline() {
  if (async_thread_.joinable()) {
    {
      base::MutexLock lock(queue_mu_);
      async_stop_ = true;
    }
    async_cv_.notify_one();
    async_thread_.join();
  }
  if (sync_thread_.joinable()) {
    {
      base::MutexLock lock(sync_mu_);
      sync_stop_ = true;
    }
    sync_cv_.notify_one();
    sync_thread_.join();
  }
}

void CommitPipeline::fail(const char* what) noexcept {
  bool first = false;
  if (!failing_.compare_exchange_strong(first, true)) return;  // the first cause is kept
  try {
    failure_ = what;
  } catch (...) {  // out of memory: the code alone says it
  }
  failed_.store(true, std::memory_order_release);
}

template <class Changed>
void CommitPipeline::fire_watches(std::span<CommitRequest* const> requests,
                                  const std::vector<std::string>& stamped, Changed&& changed) {
  for (const CommitRequest* r : requests) {
    if (r->error == ErrorCode::success) watches_.on_commit(*r->writes, stamped, changed);
  }
}

bool CommitPipeline::defer_sync(std::span<CommitRequest* const> batch) {
  // Once a part of the leader's batch went to the syncer, every later part must: the
  // leader wakes only the parts before it (process_bounded's synced_from_).
  if (deferring_) return true;
  if (!syncs_ || no_syncer_) return false;
  // A submitter with several commits in flight keeps sending more: its batches overlap.
  std::size_t submitted = queued_submitted_.load(std::memory_order_relaxed);
  for (const CommitRequest* r : batch) submitted += r->on_done != nullptr ? 1 : 0;
  base::MutexLock lock(sync_mu_);
  if (sync_jobs_.empty() && !syncer_busy_ && submitted < 2) {
    return false;  // nothing ahead is unsynced, and no submitter is sending
  }
  if (!sync_thread_.joinable()) {  // nothing was ever sent: no order to keep yet
    try {
      sync_thread_ = std::thread([this] { run_syncer(); });
    } catch (...) {
      no_syncer_ = true;  // every batch syncs on its leader's thread, as with one committer
      return false;
    }
  }
  return true;
}

void CommitPipeline::send_to_syncer(std::span<CommitRequest* const> batch, Version version,
                                    std::vector<std::string> stamped) noexcept {
  // The leader's own request is settled by the syncer too: it waits on its batch's word.
  if (own_ != nullptr && batch.front() == own_) {
    own_->ticket = round_ticket_;
    own_->state.set(kWaiting);
  }
  deferring_ = true;
  try {
    base::MutexLock lock(sync_mu_);
    sync_jobs_.push_back(
        SyncJob{version, {batch.begin(), batch.end()}, std::move(stamped), round_ticket_});
  } catch (...) {
    // Out of memory: this batch cannot wait for the syncer, and later ones must not pass
    // it. Fail the pipeline (as a failed log write does): nothing is published after this.
    fail("out of memory handing a batch to the log's syncer");
    base::MutexLock lock(sync_mu_);
    while (!sync_jobs_.empty() || syncer_busy_) sync_idle_.wait(lock);
    lock.unlock();
    t_settling = true;
    for (CommitRequest* r : batch) {
      if (r->error == ErrorCode::success) r->error = ErrorCode::commit_unknown_result;
      if (r->on_done != nullptr) {
        r->on_done(*r);
      } else {
        r->state.set(kDone);
      }
    }
    t_settling = false;
    wake_word(round_ticket_);
    return;
  }
  sync_cv_.notify_one();
}

void CommitPipeline::run_syncer() {
  kv::ReaderRegistry::Slot* slot = store_.registry().acquire();  // watches read with it
  std::vector<SyncJob> jobs;
  base::MutexLock lock(sync_mu_);
  for (;;) {
    while (sync_jobs_.empty() && !sync_stop_) sync_cv_.wait(lock);
    if (sync_jobs_.empty()) break;  // stopping, with nothing in flight
    // Taken without allocating: this thread cannot refuse a batch it was sent.
    jobs.swap(sync_jobs_);
    syncer_busy_ = true;
    lock.unlock();
    // One sync covers every batch taken: each was written before it was sent.
    bool durable = true;
    try {
      persistence_->sync();
    } catch (const std::exception& e) {
      durable = false;
      fail(e.what());
    }
    for (SyncJob& job : jobs) {
      if (job.version < 0) continue;  // nothing to publish (every commit failed)
      if (durable) {
        store_.publish(job.version);
        synced_apart_.store(synced_apart_.load(std::memory_order_relaxed) + 1,
                            std::memory_order_relaxed);
      } else {
        for (CommitRequest* r : job.requests) {
          if (r->error == ErrorCode::success) r->error = ErrorCode::commit_unknown_result;
        }
      }
    }
    if (durable && watches_.size() != 0) {
      // After the publish (WatchRegistry::arm's order), with the value now published: the
      // leader is applying later batches, so the store's newest value is not it.
      auto changed = [&](std::string_view key, const std::optional<std::string>& seen) {
        const Version v = kv::ReaderRegistry::announce(slot, store_.committed_atomic());
        std::optional<std::string_view> value;
        if (const kv::VersionRecord* r = store_.get(key, v)) value = r->value();
        const bool differs = value_differs(value, seen);
        kv::ReaderRegistry::withdraw(slot);
        return differs;
      };
      for (const SyncJob& job : jobs) {
        if (job.version >= 0) fire_watches(job.requests, job.stamped, changed);
      }
    }
    // Waited-on requests are forgotten as they are settled (a woken committer may destroy
    // its request at once); the submitted ones that remain are settled after.
    for (SyncJob& job : jobs) {
      for (CommitRequest*& r : job.requests) {
        if (r->on_done == nullptr) std::exchange(r, nullptr)->state.set(kDone);
      }
      wake_word(job.ticket);
    }
    t_settling = true;
    for (const SyncJob& job : jobs) {
      for (CommitRequest* r : job.requests) {
        if (r != nullptr) r->on_done(*r);
      }
    }
    t_settling = false;
    jobs.clear();
    lock.lock();
    syncer_busy_ = false;
    sync_idle_.notify_all();
  }
  lock.unlock();
  store_.registry().release(slot);
}

bool CommitPipeline::settling_here() noexcept { return t_settling; }

Error CommitPipeline::failure_error() const {
  // failure_ was written before failed_ was set (release), and is read after it was seen.
  return Error(ErrorCode::database_failed,
               "the database accepts no more commits (" + failure_ + "); reopen it to recover");
}

void CommitPipeline::commit(CommitRequest& request) {
  if (failed()) throw failure_error();
  if (mode_ == CommitMode::alone) {
    base::UniqueLock lock(alone_mu_);
    CommitRequest* const one = &request;  // a batch of one, with no vector to fill
    batch_step_.collect(process(std::span(&one, 1)));
    // (A failed commit with the count at a multiple ticks again: the tuner only measures
    // again.)
    const std::uint64_t committed = commits_.load(std::memory_order_relaxed);
    if (committed % kTuneEvery == 0) [[unlikely]]
      alone_mu_.use_long_streaks(alone_tuner_.tick(base::StreakTuner::Clock::now(), committed));
    return;
  }
  commit_grouped(request);
}

void CommitPipeline::commit_grouped(CommitRequest& request) {
  if (t_settling) [[unlikely]] {
    throw Error(ErrorCode::client_invalid_operation,
                "commit() inside a commit_async callback would wait for the thread it runs "
                "on; use commit_async");
  }
  if (logs_) request.log_bytes = log_bytes_bound(*request.writes);
  base::MutexLock lock(queue_mu_);
  queue_.push_back(&request);
  request.ticket = taken_;
  if (leader_active_) {
    lock.unlock();
    // Spin a little (not before a sync: sleep at once, on the batch's shared word), then
    // sleep until done or handed the leadership. Done needs no lock: the leader filled in
    // the output fields before it set the state (release), and touches the request no more
    // after that (base/wait_word.hpp).
    const int state = syncs_ ? wait_shared(request) : request.state.wait_while(kWaiting, kSpins);
    if (state == kDone) return;
    lock.lock();
  }
  leader_active_ = true;
  lead(&request, kMaxRounds);
}

void CommitPipeline::submit(CommitRequest& request) {
  // A request queued after a log write failed is refused by process().
  if (logs_) request.log_bytes = log_bytes_bound(*request.writes);
  base::MutexLock lock(queue_mu_);
  if (!async_thread_.joinable()) async_thread_ = std::thread([this] { run_async_leader(); });
  queue_.push_back(&request);
  queued_submitted_.store(queued_submitted_.load(std::memory_order_relaxed) + 1,
                          std::memory_order_relaxed);
  request.ticket = taken_;
  if (leader_active_) return;  // the leader takes it (perhaps this thread, settling)
  leader_active_ = true;
  hand_to_async_leader();
}

void CommitPipeline::hand_to_async_leader() {
  async_lead_ = true;
  async_cv_.notify_one();
}

void CommitPipeline::run_async_leader() {
  base::MutexLock lock(queue_mu_);
  for (;;) {
    while (!async_lead_ && !async_stop_) async_cv_.wait(lock);
    if (!async_lead_) return;  // stopping, with nothing in flight
    async_lead_ = false;
    lead(nullptr, std::numeric_limits<int>::max());  // it has no caller to return to
  }
}

void CommitPipeline::lead(CommitRequest* own, int max_rounds) {
  // Lead: process what is queued, then keep processing whatever queued meanwhile, up to
  // kMaxRounds batches. The requests of a finished batch are woken but not handed the
  // leadership: on a busy machine a woken thread may wait a long time for a core, and the
  // pipeline would stall with it (docs/architecture.md). Leadership passes to a waiter
  // only after kMaxRounds, so no leader is kept from its own caller for long (the
  // pipeline's thread, which has no caller, leads until the queue is empty). Collection
  // runs after the batch is woken, off its latency (a batch of the leader's own request
  // alone has nobody to wake: no extra lock round).
  // Where the wake happens depends on the mode. In memory and with a buffered log the
  // batch is woken under the lock: its waiters were spinning, and their re-arrivals racing
  // the wake for the lock cost more than the wake holds the lock. With a synced log a
  // batch is tens of sleeping requests, and waking them under the lock would keep every
  // arrival blocked on it (docs/benchmarks.md, "Durable commits"). Submitted requests are
  // settled outside the lock in both: their on_done may submit again.
  bool own_synced_later = false;
  for (int round = 0;; ++round) {  // it ends at max_rounds at the latest
    batch_.swap(queue_);
    queued_submitted_.store(0, std::memory_order_relaxed);
    const std::uint32_t ticket = taken_++;
    queue_mu_.unlock();
    round_ticket_ = ticket;
    own_ = round == 0 ? own : nullptr;  // a leader's own request is the first it takes
    const std::size_t gc_budget = process_bounded(batch_);
    // The requests from synced_from_ on went to the syncer, which wakes them: they are not
    // touched again here (a woken committer may already have destroyed its request).
    const std::span<CommitRequest*> woken(batch_.data(), synced_from_);
    if (round == 0 && own != nullptr && synced_from_ == 0) own_synced_later = true;
    const bool alone = batch_.size() == 1 && batch_.front() == own && synced_from_ == 1;
    if (alone) batch_step_.collect(gc_budget);
    std::size_t submitted = 0;
    if (syncs_ && !alone) submitted = wake(woken, own, ticket);
    queue_mu_.lock();
    if (!syncs_) submitted = wake(woken, own, ticket);
    // wake() put the submitted requests first: they move to submitted_ without allocating.
    batch_.resize(submitted);
    submitted_.swap(batch_);
    batch_.clear();
    if (!alone) {
      queue_mu_.unlock();
      settle_submitted();
      batch_step_.collect(gc_budget);
      queue_mu_.lock();
    }
    if (queue_.empty()) {
      leader_active_ = false;
      break;
    }
    if (round + 1 == max_rounds) {
      CommitRequest* next = queue_.front();
      if (next->on_done != nullptr) {
        hand_to_async_leader();  // nobody waits on a submitted request
        break;
      }
      next->state.set(kLeader);
      // Under a synced log it sleeps on its batch's word: its batch-mates wake too, find
      // themselves still waiting and sleep again.
      if (syncs_) wake_word(next->ticket);
      break;
    }
  }
  if (own_synced_later) {
    // The syncer settles the leader's own request with the rest of its batch.
    queue_mu_.unlock();
    wait_shared(*own);
    queue_mu_.lock();
  }
}

std::size_t CommitPipeline::wake(std::span<CommitRequest*> batch, const CommitRequest* leader,
                                 std::uint32_t ticket) {
  std::size_t submitted = 0;
  for (CommitRequest* r : batch) {
    if (r->on_done != nullptr) {
      batch[submitted++] = r;
    } else if (r != leader) {
      // Under a synced log no system call: the waiters sleep on the shared word instead.
      r->state.set(kDone);
    }
  }
  if (syncs_) wake_word(ticket);
  return submitted;
}

void CommitPipeline::settle_submitted() noexcept {
  t_settling = true;
  for (CommitRequest* r : submitted_) r->on_done(*r);
  t_settling = false;
  submitted_.clear();
}

// Every request of batch `ticket` sleeps on this word; so will those of batch ticket + 2,
// which cannot queue before the batch between is taken, after this wake.
void CommitPipeline::wake_word(std::uint32_t ticket) {
  std::atomic<std::int32_t>& word = finished_[ticket & 1];
  word.fetch_add(1, std::memory_order_release);
  base::futex_wake_all(word);
}

int CommitPipeline::wait_shared(CommitRequest& request) {
  std::atomic<std::int32_t>& word = finished_[request.ticket & 1];
  for (;;) {
    // The word first: a bump after this load makes the futex wait return at once, and one
    // before it comes after the state was set (release), so the state load sees it.
    const std::int32_t seen = word.load(std::memory_order_acquire);
    const std::int32_t state = request.state.load();
    if (state != kWaiting) return state;
    base::futex_wait(word, seen);
  }
}

std::size_t CommitPipeline::process_bounded(std::span<CommitRequest* const> requests) noexcept {
  synced_from_ = requests.size();
  deferring_ = false;
  std::size_t budget = 0;
  for (std::size_t first = 0; first < requests.size();) {
    const std::size_t count = batch_step_.first_batch(requests.subspan(first));
    budget += process(requests.subspan(first, count));
    // Once a part goes to the syncer, so does every later one (defer_sync()).
    if (deferring_ && synced_from_ == requests.size()) synced_from_ = first;
    first += count;
  }
  return budget;
}

std::size_t CommitPipeline::process(std::span<CommitRequest* const> batch) noexcept {
  if (failed_.load(std::memory_order_relaxed)) {  // queued before an earlier batch's log failed
    for (CommitRequest* r : batch) r->error = ErrorCode::database_failed;
    return publish_nothing(batch);
  }
  BatchOutcome out = batch_step_.run(batch);
  if (out.status != BatchOutcome::Status::applied) {
    if (out.status == BatchOutcome::Status::broken) {
      fail("out of memory part-way through applying a commit");
    }
    return publish_nothing(batch);
  }
  if (persistence_ != nullptr) return process_logged(batch, out);
  if (out.version >= 0) store_.publish(out.version);
  count(batch, out);
  if (watches_.size() != 0) fire_watches(batch, out);
  return out.collect;
}

std::size_t CommitPipeline::process_logged(std::span<CommitRequest* const> batch,
                                           const BatchOutcome& out) noexcept {
  // With a submitter sending, its sync goes to the syncer (then so must every batch after
  // it, so that versions publish in order) while this thread goes on.
  const bool deferred = defer_sync(batch);
  if (out.version >= 0) {
    if (!log_batch(batch, out.version, /*sync=*/!deferred)) {
      if (deferred) send_to_syncer(batch, -1, {});
      return 0;  // never published
    }
    if (!deferred) store_.publish(out.version);
  }
  count(batch, out);
  persistence_->maybe_checkpoint();
  if (deferred) {
    send_to_syncer(batch, out.version, batch_step_.take_stamped());
  } else if (watches_.size() != 0) {
    fire_watches(batch, out);
  }
  return out.collect;
}

void CommitPipeline::count(std::span<CommitRequest* const> batch, const BatchOutcome& out) {
  commits_.store(commits_.load(std::memory_order_relaxed) + out.committed,
                 std::memory_order_relaxed);
  if (out.committed != batch.size()) {  // most batches have no conflict to count
    conflicts_.store(conflicts_.load(std::memory_order_relaxed) + (batch.size() - out.committed),
                     std::memory_order_relaxed);
  }
  batches_.store(batches_.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
}

void CommitPipeline::fire_watches(std::span<CommitRequest* const> batch, const BatchOutcome& out) {
  fire_watches(batch, *out.stamped,
               [this](std::string_view key, const std::optional<std::string>& seen) {
                 return value_differs(store_.latest(key), seen);
               });
}

std::size_t CommitPipeline::publish_nothing(std::span<CommitRequest* const> batch) noexcept {
  if (persistence_ != nullptr && defer_sync(batch)) send_to_syncer(batch, -1, {});
  return 0;
}

bool CommitPipeline::log_batch(std::span<CommitRequest* const> batch, Version version,
                               bool sync) noexcept {
  // Called only for a batch with a commit. One with nothing to log (its commits wrote only
  // conflict ranges, or cleared the keys they stamped) still gives each commit its version
  // and versionstamp: an empty record makes that version durable, so that no opening
  // after a crash hands it out again.
  try {
    if (sync) {
      persistence_->log(version, batch_step_.log_record());
    } else {
      persistence_->write(version, batch_step_.log_record());
    }
    return true;
  } catch (const std::exception& e) {
    // The batch may or may not be in the log. Its writes stay unpublished, and nothing is
    // appended after an unknown tail: every later commit fails until the database is
    // reopened (and recovery decides).
    fail(e.what());
    for (CommitRequest* r : batch) {
      if (r->error == ErrorCode::success) r->error = ErrorCode::commit_unknown_result;
    }
    return false;
  }
}

}  // namespace strata::engine
