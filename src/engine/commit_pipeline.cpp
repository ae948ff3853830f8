#include "engine/commit_pipeline.hpp"

#include <algorithm>
#include <cstdio>
#include <limits>

#include "base/futex.hpp"
#include "base/limits.hpp"
#include "engine/persistence.hpp"
#include "engine/versionstamp.hpp"
#include "kv/size_class_pool.hpp"
#include "kv/version_chain.hpp"

namespace strata::engine {
namespace {

constexpr int kWaiting = 0;
constexpr int kLeader = 1;
constexpr int kDone = 2;

// Batches one leader processes before passing the leadership on.
constexpr int kMaxRounds = 64;
// Pause loops a waiter spins (some 10 us here) before sleeping: a batch in memory takes a
// few microseconds, and a futex sleep and wake-up cost more than that. A batch that syncs
// takes ~100 us or more, and spinning through it only takes cores from committers.
constexpr int kSpins = 512;

// The smallest batch whose writes are fetched together before they are applied (see
// prepare_writes): a lone commit has no other misses to overlap with its own.
constexpr std::size_t kPrepareBatch = 4;
// A transaction of a smaller batch that writes this many keys is prepared alone. Its keys
// ascend: when no stored key lies between its first and last (a bulk load in key order),
// each new key links from the insert before without a seek (MvccStore::expect_key_order),
// as in a log replay; otherwise its writes are fetched together (prepare_writes).
constexpr std::size_t kPrepareWrites = 16;

// Set while this thread calls submitted requests' on_done: a commit() there would wait
// for this very thread to lead.
thread_local bool t_settling = false;

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

void CommitPipeline::set_persistence(Persistence* persistence) {
  persistence_ = persistence;
  mode_ = persistence != nullptr ? CommitMode::grouped : CommitMode::alone;
  syncs_ = persistence != nullptr && persistence->syncs();
  logs_ = persistence != nullptr && persistence->logging();
}

CommitPipeline::~CommitPipeline() {
  if (async_thread_.joinable()) {
    {
      std::lock_guard lock(queue_mu_);
      async_stop_ = true;
    }
    async_cv_.notify_one();
    async_thread_.join();
  }
  if (sync_thread_.joinable()) {
    {
      std::lock_guard lock(sync_mu_);
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

bool CommitPipeline::defer_sync(std::span<CommitRequest* const> batch) {
  // Once a part of the leader's batch went to the syncer, every later part must: the
  // leader wakes only the parts before it (process_bounded's synced_from_).
  if (deferring_) return true;
  if (!syncs_ || no_syncer_) return false;
  // A submitter with several commits in flight keeps sending more: its batches overlap.
  std::size_t submitted = queued_submitted_.load(std::memory_order_relaxed);
  for (const CommitRequest* r : batch) submitted += r->on_done != nullptr ? 1 : 0;
  std::lock_guard lock(sync_mu_);
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
    std::lock_guard lock(sync_mu_);
    sync_jobs_.push_back(
        SyncJob{version, {batch.begin(), batch.end()}, std::move(stamped), round_ticket_});
  } catch (...) {
    // Out of memory: this batch cannot wait for the syncer, and later ones must not pass
    // it. Fail the pipeline (as a failed log write does): nothing is published after this.
    fail("out of memory handing a batch to the log's syncer");
    std::unique_lock lock(sync_mu_);
    sync_idle_.wait(lock, [this] { return sync_jobs_.empty() && !syncer_busy_; });
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
  std::vector<CommitRequest*> submitted;
  std::unique_lock lock(sync_mu_);
  for (;;) {
    sync_cv_.wait(lock, [this] { return !sync_jobs_.empty() || sync_stop_; });
    if (sync_jobs_.empty()) break;  // stopping, with nothing in flight
    jobs.assign(std::make_move_iterator(sync_jobs_.begin()),
                std::make_move_iterator(sync_jobs_.end()));
    sync_jobs_.clear();
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
      auto value_of = [&](std::string_view key) -> std::optional<std::string> {
        const Version v = kv::ReaderRegistry::announce(slot, store_.committed_atomic());
        std::optional<std::string> value;
        if (const kv::VersionRecord* r = store_.get(key, v)) value.emplace(r->value());
        kv::ReaderRegistry::withdraw(slot);
        return value;
      };
      for (const SyncJob& job : jobs) {
        if (job.version < 0) continue;
        for (const CommitRequest* r : job.requests) {
          if (r->error == ErrorCode::success) watches_.on_commit(*r->writes, job.stamped, value_of);
        }
      }
    }
    for (const SyncJob& job : jobs) {
      for (CommitRequest* r : job.requests) {
        if (r->on_done != nullptr) {
          submitted.push_back(r);
        } else {
          r->state.set(kDone);
        }
      }
      wake_word(job.ticket);
    }
    jobs.clear();
    t_settling = true;
    for (CommitRequest* r : submitted) r->on_done(*r);
    t_settling = false;
    submitted.clear();
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
    std::lock_guard lock(alone_mu_);
    batch_.push_back(&request);
    const std::size_t gc_budget = process(batch_);
    batch_.clear();
    collect(gc_budget);
    return;
  }
  if (t_settling) [[unlikely]] {
    throw Error(ErrorCode::client_invalid_operation,
                "commit() inside a commit_async callback would wait for the thread it runs "
                "on; use commit_async");
  }
  if (logs_) request.log_bytes = log_bytes_bound(*request.writes);
  std::unique_lock lock(queue_mu_);
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
  lead(lock, &request, kMaxRounds);
}

void CommitPipeline::submit(CommitRequest& request) {
  // A request queued after a log write failed is refused by process().
  if (logs_) request.log_bytes = log_bytes_bound(*request.writes);
  std::lock_guard lock(queue_mu_);
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
  std::unique_lock lock(queue_mu_);
  for (;;) {
    async_cv_.wait(lock, [this] { return async_lead_ || async_stop_; });
    if (!async_lead_) return;  // stopping, with nothing in flight
    async_lead_ = false;
    lead(lock, nullptr, std::numeric_limits<int>::max());  // it has no caller to return to
  }
}

void CommitPipeline::lead(std::unique_lock<std::mutex>& lock, CommitRequest* own, int max_rounds) {
  // Lead: process what is queued, then keep processing whatever queued meanwhile, up to
  // kMaxRounds batches. The requests of a finished batch are woken but not handed the
  // leadership: on a busy machine a woken thread may wait a long time for a core, and the
  // pipeline would stall with it (every commit paid a hand-off before this; see
  // docs/architecture.md). Leadership passes to a waiter only after kMaxRounds, so no
  // leader is kept from its own caller for long (the pipeline's thread, which has no
  // caller, leads until the queue is empty). Collection runs after the batch is woken,
  // off its latency (a batch of the leader's own request alone has nobody to wake: no
  // extra lock round).
  // Where the wake happens depends on the mode. In memory and with a buffered log the
  // batch is woken under the lock: its waiters were spinning, and their re-arrivals racing
  // the wake for the lock cost 8 buffered committers ~30 % of their rate and 64 of them
  // ~40 %. With a synced log a batch is tens of sleeping requests, and waking them under
  // the lock kept every arrival blocked on it: 64 committers ran ~1.9x as fast with the
  // wake outside (docs/benchmarks.md, "Durable commits"). Submitted requests are settled
  // outside the lock in both: their on_done may submit again.
  bool own_synced_later = false;
  for (int round = 0;; ++round) {  // it ends at max_rounds at the latest
    batch_.swap(queue_);
    queued_submitted_.store(0, std::memory_order_relaxed);
    const std::uint32_t ticket = taken_++;
    lock.unlock();
    round_ticket_ = ticket;
    own_ = round == 0 ? own : nullptr;  // a leader's own request is the first it takes
    const std::size_t gc_budget = process_bounded(batch_);
    // The requests from synced_from_ on went to the syncer, which wakes them: they are not
    // touched again here (a woken committer may already have destroyed its request).
    const std::span<CommitRequest* const> woken(batch_.data(), synced_from_);
    if (round == 0 && own != nullptr && synced_from_ == 0) own_synced_later = true;
    const bool alone = batch_.size() == 1 && batch_.front() == own && synced_from_ == 1;
    if (alone) collect(gc_budget);
    if (syncs_ && !alone) wake(woken, own, ticket);
    lock.lock();
    if (!syncs_) wake(woken, own, ticket);
    batch_.clear();
    if (!alone) {
      lock.unlock();
      settle_submitted();
      collect(gc_budget);
      lock.lock();
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
    lock.unlock();
    wait_shared(*own);
    lock.lock();
  }
}

void CommitPipeline::wake(std::span<CommitRequest* const> batch, const CommitRequest* leader,
                          std::uint32_t ticket) {
  for (CommitRequest* r : batch) {
    if (r->on_done != nullptr) {
      submitted_.push_back(r);
    } else if (r != leader) {
      // Under a synced log no system call: the waiters sleep on the shared word instead.
      r->state.set(kDone);
    }
  }
  if (syncs_) wake_word(ticket);
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

std::size_t CommitPipeline::process_bounded(std::span<CommitRequest* const> batch) noexcept {
  synced_from_ = batch.size();
  deferring_ = false;
  if (!logs_ && batch.size() <= batch_count_limit_) return process(batch);
  std::size_t budget = 0;
  for (std::size_t first = 0; first < batch.size();) {
    const std::size_t last = first + std::min(batch.size() - first, batch_count_limit_);
    std::uint64_t bytes = batch[first]->log_bytes;  // 0 without a log
    std::size_t end = first + 1;
    while (end < last && bytes + batch[end]->log_bytes <= batch_log_limit_) {
      bytes += batch[end++]->log_bytes;
    }
    budget += process(batch.subspan(first, end - first));
    // Once a part goes to the syncer, so does every later one (defer_sync()).
    if (deferring_ && synced_from_ == batch.size()) synced_from_ = first;
    first = end;
  }
  return budget;
}

std::size_t CommitPipeline::process(std::span<CommitRequest* const> batch) noexcept {
  if (failed_.load(std::memory_order_relaxed)) {  // queued before an earlier batch's log failed
    for (CommitRequest* r : batch) r->error = ErrorCode::database_failed;
    if (defer_sync(batch)) send_to_syncer(batch, -1, {});
    return 0;
  }
  // Versions handed to the syncer are not published yet.
  const Version version = std::max(store_.committed(), assigned_) + 1;
  const bool prepared = batch.size() >= kPrepareBatch;
  std::vector<std::string> stamped;
  // Before the point of no return: resolution, and the memory the writes will take.
  try {
    std::uint16_t index = 0;
    for (CommitRequest* r : batch) {
      r->batch_index = index++;
      // Reads below the pruned history cannot be checked: the writes after them may be gone.
      // Every live reader holds the history above its version, but a version revoked past
      // its MVCC window does not, and a commit that passed its age check can reach here
      // after that (FoundationDB's resolvers fail such a commit the same way).
      if (r->read_version < resolver_.floor() &&
          (r->read_ranges != nullptr || r->read_keys != nullptr)) {
        r->error = ErrorCode::transaction_too_old;
        continue;
      }
      if (!resolve(*r)) {
        r->error = ErrorCode::not_committed;
        continue;
      }
      record_writes(*r, version);
      r->version = version;
    }
    if (prepared) prepare_writes(batch);
    reserve_apply(batch, stamped);
  } catch (...) {  // std::bad_alloc: nothing else is thrown before the point of no return
    return refuse_batch(batch);
  }
  // The point of no return: the store changes. What the writes need was reserved above;
  // what could not be (a clear_range's tombstones, values over 1 KiB, atomic results and
  // stamped keys longer than a short string) may still fail, and then the version is
  // never published and the pipeline fails as after a failed log write.
  std::size_t writes = 0;
  try {
    std::size_t point = 0;  // the first of the request's paths in write_paths_
    for (CommitRequest* r : batch) {
      if (r->error != ErrorCode::success) continue;
      const kv::MvccStore::List::Path* paths = prepared ? write_paths_.data() + point : nullptr;
      bool in_order = false;
      if (!prepared && r->writes->points().size() >= kPrepareWrites) {
        const auto& points = r->writes->points();
        in_order = store_.none_between(points.begin()->first, std::prev(points.end())->first);
        if (!in_order) paths = prepare_writes(*r);
      }
      if (in_order) store_.expect_key_order(true);
      apply(*r, version, stamped, paths);
      if (in_order) store_.expect_key_order(false);
      point += r->writes->points().size();
      writes += r->writes->points().size() + r->writes->cleared_ranges().size() +
                r->writes->stamped_keys().size();
    }
  } catch (...) {  // std::bad_alloc
    store_.expect_key_order(false);
    return fail_batch(batch);
  }
  std::uint64_t committed = 0;
  for (CommitRequest* r : batch) committed += r->error == ErrorCode::success ? 1 : 0;
  // A batch whose every commit failed takes no version: it has nothing to log, and a
  // version published without a record could be handed out again after a crash (a read
  // version going back).
  // With a submitter sending, its sync goes to the syncer (then so must every batch after
  // it, so that versions publish in order) while this thread goes on.
  const bool deferred = persistence_ != nullptr && defer_sync(batch);
  if (committed != 0) {
    if (persistence_ != nullptr && !log_batch(batch, version, /*sync=*/!deferred)) {
      if (deferred) send_to_syncer(batch, -1, {});
      return 0;  // never published
    }
    assigned_ = version;
    if (!deferred) store_.publish(version);
  }
  commits_.store(commits_.load(std::memory_order_relaxed) + committed, std::memory_order_relaxed);
  conflicts_.store(conflicts_.load(std::memory_order_relaxed) + (batch.size() - committed),
                   std::memory_order_relaxed);
  batches_.store(batches_.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
  if (persistence_ != nullptr) persistence_->maybe_checkpoint();
  if (deferred) {
    send_to_syncer(batch, committed != 0 ? version : -1, std::move(stamped));
  } else if (watches_.size() != 0) {
    auto value_of = [this](std::string_view key) -> std::optional<std::string> {
      auto v = store_.latest(key);
      return v ? std::optional<std::string>(*v) : std::nullopt;
    };
    for (CommitRequest* r : batch) {
      if (r->error == ErrorCode::success) watches_.on_commit(*r->writes, stamped, value_of);
    }
  }
  // Collection keeps pace with writing: each write earns a few units of work.
  return 2 * writes + 16;
}

void CommitPipeline::reserve_apply(std::span<CommitRequest* const> batch,
                                   std::vector<std::string>& stamped) {
  std::size_t keys = 0;
  std::size_t key_bytes = 0;
  std::size_t record_bytes = 0;
  std::size_t stamped_keys = 0;
  std::size_t most_points = 0;
  std::uint64_t log_bytes = 0;
  auto record = [&](std::size_t value_size) {
    const std::size_t bytes = kv::VersionRecord::max_bytes_for(value_size);
    if (bytes <= kv::SizeClassPool::kMaxPooled) record_bytes += bytes;  // else operator new
  };
  for (const CommitRequest* r : batch) {
    if (r->error != ErrorCode::success) continue;
    const WriteMap& w = *r->writes;
    for (const auto& [key, entry] : w.points()) {
      key_bytes += key.size();
      // An atomic operation's result is unknown until applied: a pooled block's worth.
      record(entry.kind == PointWrite::Kind::dependent || !entry.ops.empty()
                 ? kv::SizeClassPool::kMaxPooled
                 : entry.size);
    }
    for (const StampedKeyWrite& s : w.stamped_keys()) {
      key_bytes += s.key.size() + kVersionstampSize;
      record(s.value.size());
    }
    keys += w.points().size() + w.stamped_keys().size();
    stamped_keys += w.stamped_keys().size();
    most_points = std::max(most_points, w.points().size());
    log_bytes += r->log_bytes;
  }
  stamped.reserve(stamped_keys);
  write_keys_.reserve(most_points);  // prepare_writes of one request, in the apply loop
  write_paths_.reserve(most_points);
  store_.reserve_writes(keys, key_bytes, record_bytes);
  if (logs_) {
    log_.reserve(log_bytes);
    persistence_->reserve(log_.bytes().size() + log_bytes);
  }
}

std::size_t CommitPipeline::refuse_batch(std::span<CommitRequest* const> batch) noexcept {
  for (CommitRequest* r : batch) {
    if (r->error != ErrorCode::success) continue;
    r->error = ErrorCode::commit_proxy_memory_limit_exceeded;
    r->version = -1;
  }
  if (persistence_ != nullptr && defer_sync(batch)) send_to_syncer(batch, -1, {});
  return 0;
}

std::size_t CommitPipeline::fail_batch(std::span<CommitRequest* const> batch) noexcept {
  log_.reset();
  fail("out of memory part-way through applying a commit");
  for (CommitRequest* r : batch) {
    if (r->error != ErrorCode::success) continue;
    r->error = ErrorCode::database_failed;
    r->version = -1;
  }
  if (persistence_ != nullptr && defer_sync(batch)) send_to_syncer(batch, -1, {});
  return 0;
}

void CommitPipeline::prepare_writes(std::span<CommitRequest* const> batch) {
  write_keys_.clear();
  for (const CommitRequest* r : batch) {
    if (r->error != ErrorCode::success) continue;
    for (const auto& point : r->writes->points()) write_keys_.push_back(point.first);
  }
  write_paths_.resize(write_keys_.size());
  store_.prepare_writes(write_keys_, write_paths_);
}

const kv::MvccStore::List::Path* CommitPipeline::prepare_writes(CommitRequest& r) {
  CommitRequest* const one = &r;
  prepare_writes(std::span(&one, 1));
  return write_paths_.data();
}

void CommitPipeline::collect(std::size_t budget) noexcept {
  if (budget == 0 || collection_stopped_) return;
  try {
    Version oldest = store_.collect_garbage(budget);
    resolver_.prune(oldest);
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

void CommitPipeline::log_dependent(std::string_view key, const PointWrite& entry,
                                   std::string_view result) {
  if (set_log_bytes(key, result.size()) <= ops_log_bytes(key, entry)) {
    log_.set(key, result);
  } else {
    for (const AtomicOp& op : entry.ops) log_.atomic(key, op.type, op.param);
  }
}

bool CommitPipeline::log_batch(std::span<CommitRequest* const> batch, Version version,
                               bool sync) noexcept {
  // Called only for a batch with a commit. One with nothing to log (its commits wrote only
  // conflict ranges, or cleared the keys they stamped) still gives each commit its version
  // and versionstamp: an empty record makes that version durable, so that no opening
  // after a crash hands it out again.
  try {
    if (sync) {
      persistence_->log(version, log_.bytes());
    } else {
      persistence_->write(version, log_.bytes());
    }
    log_.reset();
    return true;
  } catch (const std::exception& e) {
    // The batch may or may not be in the log. Its writes stay unpublished, and nothing is
    // appended after an unknown tail: every later commit fails until the database is
    // reopened (and recovery decides).
    log_.reset();
    fail(e.what());
    for (CommitRequest* r : batch) {
      if (r->error == ErrorCode::success) r->error = ErrorCode::commit_unknown_result;
    }
    return false;
  }
}

bool CommitPipeline::resolve(const CommitRequest& r) {
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

void CommitPipeline::record_writes(CommitRequest& r, Version version) {
  for (const KeyRange& range : r.write_ranges) {
    resolver_.record_write(range.begin, range.end, version);
  }
  for (const auto& point : r.writes->points()) resolver_.record_write_at(point.first, version);
  if (!r.writes->stamped_keys().empty()) {
    std::string stamp = make_versionstamp(version, r.batch_index);
    for (const StampedKeyWrite& w : r.writes->stamped_keys()) {
      std::string key = apply_stamp(w.key, w.offset, stamp);
      resolver_.record_write(key, base::key_after(key), version);
    }
  }
}

// The transaction's net effect: its cleared ranges, then its point writes.
void CommitPipeline::apply(const CommitRequest& r, Version version,
                           std::vector<std::string>& stamped,
                           const kv::MvccStore::List::Path* paths) {
  const WriteMap& w = *r.writes;
  const bool logging = persistence_ != nullptr && persistence_->logging();
  for (const auto& [begin, end] : w.cleared_ranges()) {
    store_.clear_range(begin, end, version);
    if (logging) log_.clear_range(begin, end);
  }
  auto set = [&](std::string_view key, std::string_view value,
                 const kv::MvccStore::List::Path* path = nullptr) {
    store_.set(key, value, version, kv::MvccStore::hash(key), path);
    if (logging) log_.set(key, value);
  };
  auto clear = [&](std::string_view key) {
    store_.clear(key, version);
    if (logging) log_.clear(key);
  };
  // A key's atomic operations: the store takes their result, the log the smaller of the
  // result and the operations. (After a stamped value the result is never the larger: no
  // operation makes a value longer than the two it is given together.)
  auto resolve = [&](std::string_view key, const PointWrite& entry,
                     std::optional<std::string_view> before,
                     const kv::MvccStore::List::Path* path) {
    const std::optional<std::string> v = resolve_dependent(entry, before);
    if (!v) {
      clear(key);
    } else if (!logging || entry.kind == PointWrite::Kind::stamped) {
      set(key, *v, path);
    } else {
      store_.set(key, *v, version, kv::MvccStore::hash(key), path);
      log_dependent(key, entry, *v);
    }
  };
  std::string stamp;
  if (!w.stamped_keys().empty() || w.has_stamped_values()) {
    stamp = make_versionstamp(version, r.batch_index);
  }
  for (const auto& [key, entry] : w.points()) {
    const kv::MvccStore::List::Path* path = paths != nullptr ? paths++ : nullptr;
    switch (entry.kind) {
      case PointWrite::Kind::set:
        set(key, entry.value(), path);
        break;
      case PointWrite::Kind::clear:
        clear(key);
        break;
      case PointWrite::Kind::dependent:
        resolve(key, entry, store_.latest(key), path);
        break;
      case PointWrite::Kind::stamped: {
        const std::string value = apply_stamp(entry.value(), entry.stamp_offset, stamp);
        if (entry.ops.empty()) {
          set(key, value, path);
        } else {
          resolve(key, entry, value, path);
        }
        break;
      }
    }
  }
  for (const StampedKeyWrite& s : w.stamped_keys()) {
    std::string key = apply_stamp(s.key, s.offset, stamp);
    // A later clear of this transaction removed it (StampedKeyWrite::placeholder says which).
    if (w.cleared_after(s, s.placeholder.empty() ? key : s.placeholder)) continue;
    stamped.push_back(std::move(key));
    set(stamped.back(), s.value);
  }
}

}  // namespace strata::engine
