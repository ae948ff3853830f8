// FDBTransaction: state, commit, retry, options, and the point-access entry points.
// Range reads and key selectors are in range_read.cpp.
#include "fdb_c/transaction.hpp"

#include <algorithm>
#include <functional>
#include <memory>
#include <string_view>
#include <utility>

#include "engine/system_key_conflicts.hpp"
#include "fdb_c/api_version.hpp"
#include "fdb_c/bytes.hpp"
#include "fdb_c/network.hpp"
#include "fdb_c/special_keys.hpp"

namespace fc = strata::fdb_c;
using fc::bytes;
using fc::kDefaultSizeLimit;
using Kind = FDB_future::Kind;

FDB_transaction::FDB_transaction(std::shared_ptr<const fc::DatabaseState> state,
                                 fdb_error_t unavailable)
    : tr(strata::Database(state->database()).create_transaction()),
      db_(state->database()),
      state_(std::move(state)),
      unavailable_(unavailable),
      durable_(state_->database().durable()),
      defaults_changes_(state_->defaults_changes()),
      options_(state_->defaults()),
      defaults_(options_) {
  apply_options(true);
}

FDB_transaction::~FDB_transaction() {
  strata::base::UniqueLock lock(mu);
  finish_stamp_waiters(static_cast<fdb_error_t>(strata::ErrorCode::transaction_cancelled));
}

void FDB_transaction::set_read_version(std::int64_t version) {
  if (set_version_ >= 0) {
    throw strata::Error(strata::ErrorCode::read_version_already_set,
                        "the read version is already " + std::to_string(set_version_));
  }
  try {
    tr.set_read_version(version);
  } catch (const strata::Error& e) {
    // As FoundationDB's storage servers: too old or not yet committed is the reads' answer.
    if (e.error_code() == strata::ErrorCode::transaction_too_old) {
      set_version_ = version;
      version_error_ = e.code();
    } else if (e.error_code() == strata::ErrorCode::future_version) {
      set_version_ = version;
      version_error_ = 0;
    } else {
      throw;
    }
  }
}

std::int64_t FDB_transaction::read_version() {
  return set_version_ >= 0 ? set_version_ : tr.read_version();
}

fdb_error_t FDB_transaction::take_version_set_apart(
    strata::base::UniqueLock<strata::base::AdaptiveMutex>& lock) {
  while (set_version_ >= 0) {
    if (version_error_ != 0) return version_error_;
    const std::int64_t version = set_version_;
    try {
      tr.set_read_version(version);
      set_version_ = -1;
      return 0;
    } catch (const strata::Error& e) {
      if (e.error_code() == strata::ErrorCode::transaction_too_old) {
        version_error_ = e.code();
        return version_error_;
      }
      if (e.error_code() != strata::ErrorCode::future_version) return fc::to_fdb_error(e);
    }
    // Not committed yet: wait for it, as FoundationDB's storage server waits
    // FUTURE_VERSION_DELAY before it answers future_version.
    const Clock::time_point deadline =
        std::min(Clock::now() + kFutureVersionDelay, tr.timeout_deadline());
    const std::uint64_t epoch = wait_epoch_.load(std::memory_order_relaxed);
    // Made before the lock is let go: whatever throws, throws with mu held.
    const std::function<bool()> stop = [&] {
      return wait_epoch_.load(std::memory_order_relaxed) != epoch;
    };
    ++waiting_;
    lock.unlock();
    bool arrived = false;
    try {
      arrived = db_.wait_for_version(version, deadline, stop);
    } catch (...) {
      lock.lock();
      --waiting_;
      throw;
    }
    lock.lock();
    --waiting_;
    if (fdb_error_t e = check()) return e;
    if (wait_epoch_.load(std::memory_order_relaxed) != epoch) {
      // Reset (or retried) meanwhile: FoundationDB's reset cancels the reads under way.
      return static_cast<fdb_error_t>(strata::ErrorCode::transaction_cancelled);
    }
    if (!arrived) {
      // The commit and later reads fail with it at once, as FoundationDB's commit fails
      // with the error of a read it waited for.
      version_error_ = static_cast<fdb_error_t>(strata::ErrorCode::future_version);
      return version_error_;
    }
  }
  return 0;
}

void FDB_transaction::end_waits() {
  // Written under mu only; read without it by the waits.
  wait_epoch_.store(wait_epoch_.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
  // A wait counts itself in waiting_ under mu, in the same hold as it reads the epoch: one
  // that started before this hold is counted, and one after it sees the new epoch.
  if (waiting_ > 0) db_.wake_version_waiters();
}

void FDB_transaction::apply_options(bool persistent, bool all_persistent) {
  // strata's transaction starts with read-your-writes on, for snapshot reads too.
  if (!options_.read_your_writes) tr.set_read_your_writes(false);
  if (!options_.snapshot_read_your_writes()) tr.set_snapshot_read_your_writes(false);
  if (options_.report_conflicting_keys) tr.set_report_conflicting_keys(true);
  if (options_.size_limit != kDefaultSizeLimit) {
    tr.set_size_limit(static_cast<std::size_t>(options_.size_limit));
  }
  if (!persistent) return;
  // A new strata transaction of the C API's databases has strata's defaults, which are
  // FoundationDB's: no timeout, no retry limit, 1 s of maximum retry delay.
  const fc::TransactionOptions fresh;
  if (all_persistent || options_.timeout_ms != fresh.timeout_ms) {
    tr.set_timeout(std::chrono::milliseconds(options_.timeout_ms));
  }
  if (all_persistent || options_.retry_limit != fresh.retry_limit) {
    tr.set_retry_limit(static_cast<int>(options_.retry_limit));
  }
  if (all_persistent || options_.max_retry_delay_ms != fresh.max_retry_delay_ms) {
    tr.set_max_retry_delay(std::chrono::milliseconds(options_.max_retry_delay_ms));
  }
}

// Completes the versionstamp futures asked for before the commit: with the stamp after a
// successful commit (error 0), or with `error`.
void FDB_transaction::complete_stamp_waiters(fdb_error_t error) noexcept {
  // Ten bytes: held inline, nothing allocated.
  const std::string stamp = [&]() noexcept -> std::string {
    mu.assert_held();
    if (error != 0) return {};
    try {
      return tr.versionstamp();
    } catch (...) {
      error = fc::current_error();
      return {};
    }
  }();
  // Each waiter is taken out, completed and released once.
  auto finish = [&](FDBFuture* f) noexcept {
    if (error != 0) {
      f->complete_error(error);
    } else {
      f->complete_key(stamp);
    }
    f->release();
  };
  finish(std::exchange(stamp_waiter_, nullptr));
  for (FDBFuture* f : more_stamp_waiters_) finish(f);
  more_stamp_waiters_.clear();
}

FDBFuture* FDB_transaction::watch(std::string_view key) noexcept {
  FDB_future* f = nullptr;
  try {
    f = FDB_future::pending(Kind::none);
  } catch (...) {
    return FDB_future::out_of_memory();
  }
  // f is this call's alone until the watch takes its listener: a failure publishes on it.
  bool counted = false;  // a watch taken from the handle's MAX_WATCHES
  try {
    std::shared_ptr<strata::Watch> watch;
    {
      strata::base::UniqueLock lock(mu);
      fdb_error_t error = check();
      if (error == 0) error = unavailable_;
      if (error == 0) error = take_set_version(lock);
      // As FoundationDB's client: the handle's MAX_WATCHES counts a watch from here until
      // its future is ready.
      if (error == 0 && !state_->take_watch()) {
        error = static_cast<fdb_error_t>(strata::ErrorCode::too_many_watches);
      }
      if (error != 0) {
        f->publish(error);
        return f;
      }
      counted = true;
      watch = std::make_shared<strata::Watch>(tr.watch(key));
      note_read_started();
    }
    f->set_canceller([watch] { watch->cancel(); });  // cancel throws nothing here
    std::function<void()> listener = [f, watch, state = state_] {
      state->give_back_watch();
      fdb_error_t error = 0;
      try {
        if (!watch->wait_for(std::chrono::milliseconds(0))) error = fc::kOperationCancelled;
      } catch (...) {
        error = fc::current_error();
      }
      if (error == 0) {
        f->complete(Result{Kind::none});
      } else {
        f->complete_error(error);
      }
      f->release();
    };
    f->retain();  // for the listener
    try {
      watch->on_ready(std::move(listener));
    } catch (...) {  // not taken: the listener never runs
      f->release();
      throw;
    }
    return f;
  } catch (...) {
    // The watch, if made, is cancelled as its last copy goes (with the canceller).
    f->set_canceller(nullptr);
    if (counted) state_->give_back_watch();
    f->publish(fc::current_error());
    return f;
  }
}

FDBFuture* FDB_transaction::commit() noexcept {
  if (durable_) {
    // A thread that blocks on each commit commits on its own thread, with no hand-off to
    // strata's pipeline thread and back (which would slow a lone committer); one that
    // made a commit and has not waited for it keeps commits in flight, and they share
    // log syncs. The first commit of a burst is made here and the rest in flight.
    FDBFuture* f = FDB_future::last_commit_unwaited() ? commit_in_flight() : commit_here();
    FDB_future::made_commit(f);
    return f;
  }
  return commit_here();
}

FDBFuture* FDB_transaction::commit_here() noexcept {
  // The future first: a commit that was made is never reported as failed for want of it.
  FDB_future* f = FDB_future::make_or_null();  // null: out_of_memory() below
  strata::base::UniqueLock lock(mu);
  fdb_error_t error = f == nullptr ? fc::kUnknownError : check();
  if (error == 0) error = unavailable_;
  const std::uint64_t attempt = wait_epoch_.load(std::memory_order_relaxed);
  if (error == 0) error = take_set_version_noexcept(lock);  // as FoundationDB's, waits for reads
  if (wait_epoch_.load(std::memory_order_relaxed) != attempt) {
    // Reset, cancelled or retried during the wait, which failed: the attempt this commit
    // belonged to is over, and the next one is not this commit's to mark or fail.
    if (f == nullptr) return FDB_future::out_of_memory();
    f->publish(error);
    return f;
  }
  commit_started_ = true;
  if (error == 0) {
    try {
      tr.commit();  // SIZE_LIMIT is the transaction's (apply_options, set_option)
    } catch (...) {
      error = fc::current_error();
    }
    // As FoundationDB's commitAndWatch: whatever failed the commit, its versionstamp is
    // transaction_invalid_version (not retryable), not the commit's own error.
    finish_stamp_waiters(error == 0 ? 0 : fc::kTransactionInvalidVersion);
  } else {
    finish_stamp_waiters(error);  // refused before the commit began
  }
  if (f == nullptr) return FDB_future::out_of_memory();
  f->publish(error);  // Kind::none: "done"
  return f;
}

// A durable database's commit in flight: queued (Transaction::commit_async) and settled
// once its batch is durable, on strata's pipeline thread, so that one thread's commits
// share log writes and syncs. The transaction's lock is held until then, on whichever thread
// settles it: every other call on this transaction waits for the commit meanwhile, as a
// strata::Transaction must not be used while its commit is in flight.
FDBFuture* FDB_transaction::commit_in_flight() noexcept {
  strata::base::UniqueLock lock(mu);
  fdb_error_t error = check();
  if (error == 0) error = unavailable_;
  const std::uint64_t attempt = wait_epoch_.load(std::memory_order_relaxed);
  if (error == 0) error = take_set_version_noexcept(lock);  // as commit_here
  if (wait_epoch_.load(std::memory_order_relaxed) != attempt) return FDB_future::failed(error);
  commit_started_ = true;
  FDB_future* f = nullptr;
  if (error == 0) {
    try {
      f = FDB_future::pending(Kind::none);
    } catch (...) {
      error = fc::kUnknownError;
    }
  }
  if (error != 0) {
    finish_stamp_waiters(error);  // refused before the commit began
    return FDB_future::failed(error);
  }
  f->retain();  // for the commit's callback
  error = queue_commit(f);
  if (error != 0) {  // out of memory or threads: nothing was queued
    finish_stamp_waiters(error);
    lock.unlock();
    f->complete_error(error);
    f->release();
    return f;
  }
  // Held until the commit settles: its callback unlocks mu, on whichever thread settles it
  // (perhaps already), and this transaction is not touched here after that.
  lock.release();
  return f;
}

fdb_error_t FDB_transaction::queue_commit(FDB_future* f) {
  try {
    // The callback throws nothing (it may run inside commit_async, whose exceptions the
    // catch below takes as "nothing queued"): it unlocks and releases exactly once.
    tr.commit_async([this, f](const strata::Error* e) noexcept {
      mu.assert_held();  // left held by commit_in_flight for this callback
      const fdb_error_t result = e == nullptr ? 0 : fc::to_fdb_error(*e);
      finish_stamp_waiters(result == 0 ? 0 : fc::kTransactionInvalidVersion);  // as above
      mu.unlock();  // this transaction is not touched after this: it may be destroyed
      if (result == 0) {
        f->complete(Result{Kind::none});
      } else {
        f->complete_error(result);
      }
      f->release();
    });
    return 0;
  } catch (...) {  // the callback was not called
    return fc::current_error();
  }
}

fdb_error_t FDB_transaction::take_version_set_apart_noexcept(
    strata::base::UniqueLock<strata::base::AdaptiveMutex>& lock) noexcept {
  try {
    return take_version_set_apart(lock);
  } catch (...) {  // thrown with mu held (see take_set_version)
    return fc::current_error();
  }
}

FDBFuture* FDB_transaction::versionstamp() noexcept {
  strata::base::UniqueLock lock(mu);
  // As FoundationDB: a cancelled transaction (cancel, or an on_error that gave up) will
  // not commit, so its stamp fails now (check()) rather than wait for a reset.
  if (fdb_error_t e = check()) return FDB_future::failed(e);
  if (commit_started_) {
    // As FoundationDB: the stamp is asked for before commit; afterwards it is misuse.
    return FDB_future::failed(static_cast<fdb_error_t>(strata::ErrorCode::used_during_commit));
  }
  // Room first (growing geometrically), so that nothing throws once the future exists.
  FDBFuture* f = nullptr;
  try {
    if (stamp_waiter_ != nullptr && more_stamp_waiters_.size() == more_stamp_waiters_.capacity()) {
      more_stamp_waiters_.reserve(std::max<std::size_t>(4, 2 * more_stamp_waiters_.capacity()));
    }
    f = FDB_future::pending(Kind::key);
  } catch (...) {
    return FDB_future::failed(fc::current_error());
  }
  f->retain();  // for the commit that completes it
  if (stamp_waiter_ == nullptr) {
    stamp_waiter_ = f;
  } else {
    more_stamp_waiters_.push_back(f);  // into the room reserved above: no throw
  }
  return f;
}

// strata's retry step decides (FoundationDB's rules); this completes its future once the
// delay has passed, on the network thread, and brings the C API's own state along.
FDBFuture* FDB_transaction::on_error(fdb_error_t error) noexcept {
  strata::RetryStep step;
  try {
    strata::base::UniqueLock lock(mu);
    step =
        tr.retry_step(static_cast<strata::ErrorCode>(error),
                      fc::api_version() >= 610 ? strata::GiveUp::cancel : strata::GiveUp::restart);
    if (step.reset) {
      try {
        restart();
      } catch (...) {  // options left half restored: the next read, watch or commit says so
        clear_attempt();
        defer(fc::current_error());
      }
    } else if (step.cancelled) {
      finish_stamp_waiters(static_cast<fdb_error_t>(strata::ErrorCode::transaction_cancelled));
      end_waits();
    }
  } catch (...) {
    return FDB_future::failed(fc::current_error());
  }
  const auto result = static_cast<fdb_error_t>(step.error);
  if (result != 0 && step.delay.count() == 0) return FDB_future::failed(result);
  FDB_future* f = nullptr;
  try {
    f = FDB_future::pending(Kind::none);
  } catch (...) {
    return FDB_future::out_of_memory();
  }
  try {
    // The timer holds a reference, released when it runs or is dropped by a stopped network.
    fc::Network::instance().post_at(Clock::now() + step.delay, [held = f->hold(), result] {
      if (result != 0) {
        held->complete_error(result);
      } else {
        held->complete(Result{Kind::none});
      }
    });
  } catch (...) {  // no timer (its reference is back): the step is taken, its wait fails
    f->publish(fc::current_error());
  }
  return f;
}

void FDB_transaction::restart() {
  finish_stamp_waiters(static_cast<fdb_error_t>(strata::ErrorCode::transaction_cancelled));
  fc::TransactionOptions kept = defaults_;
  // From API 610 TIMEOUT, RETRY_LIMIT and MAX_RETRY_DELAY are persistent (fdb.options), and
  // strata's retry step has kept them; below 610 they return to the defaults too.
  const bool persistent = fc::api_version() >= 610;
  if (persistent) {
    kept.timeout_ms = options_.timeout_ms;
    kept.retry_limit = options_.retry_limit;
    kept.max_retry_delay_ms = options_.max_retry_delay_ms;
  }
  options_ = kept;
  apply_options(!persistent, true);
  clear_attempt();
}

void FDB_transaction::clear_attempt() {
  deferred_ = 0;
  tags_.clear();
  debug_identifier_.clear();
  commit_started_ = false;
  read_started_ = false;
  read_cost_ = write_cost_ = 0;
  set_version_ = -1;
  version_error_ = 0;
  end_waits();
}

// FoundationDB's client answers an unknown code with invalid_option (2007) at once. Every
// other option is applied on its network thread, and what fails there becomes the
// transaction's deferred error: the call returns 0, and the next read or commit fails with
// that error until a reset; once a deferred error is set, later options are not applied
// (ThreadSafeTransaction::setOption, onMainThreadVoid with deferredError, in fdbclient;
// doOnMainThreadVoid in flow/ThreadHelper.actor.h, apple/foundationdb).
fdb_error_t FDB_transaction::set_option(int code, const uint8_t* value, int length) noexcept {
  if (!fc::transaction_option_known(code)) return fc::kInvalidOption;
  strata::base::UniqueLock lock(mu);
  if (deferred_ != 0) return 0;
  fc::TransactionOptions updated = options_;
  fdb_error_t e = fc::apply_transaction_option(updated, code, value, length);
  // FoundationDB refuses READ_YOUR_WRITES_DISABLE after any read, even when it is set
  // already; after writes only when they went to its write map, that is, made before the
  // option was set (strata's set_read_your_writes makes that check).
  if (e == 0 && code == FDB_TR_OPTION_READ_YOUR_WRITES_DISABLE && read_started_) {
    e = fc::kClientInvalidOperation;
  }
  if (e == 0 && (code == fc::kTagOption || code == fc::kAutoThrottleTagOption)) {
    e = add_tag(value, length);
  }
  if (e == 0) e = note_debug_identifier(code, value, length);
  if (e == 0) e = apply_to_transaction(updated);
  if (e != 0) {
    defer(e);
    return 0;
  }
  options_ = updated;
  // One write's option, not kept with the others: the write takes it.
  if (code == FDB_TR_OPTION_NEXT_WRITE_NO_WRITE_CONFLICT_RANGE) {
    tr.set_next_write_no_write_conflict_range();
  }
  return 0;
}

// As FoundationDB's TagSet::addTag (fdbclient/TagThrottle.actor.cpp): the count is checked
// before the tag is looked up, so with the attempt's five tags set, a sixth fails even when
// it repeats one of them; a repeated tag is kept once.
fdb_error_t FDB_transaction::add_tag(const uint8_t* value, int length) noexcept {
  if (tags_.size() >= fc::kMaxTagsPerTransaction) return fc::kTooManyTags;
  try {
    std::string tag(reinterpret_cast<const char*>(value), static_cast<std::size_t>(length));
    if (std::find(tags_.begin(), tags_.end(), tag) == tags_.end()) tags_.push_back(std::move(tag));
  } catch (...) {
    return fc::current_error();
  }
  return 0;
}

fdb_error_t FDB_transaction::note_debug_identifier(int code, const uint8_t* value,
                                                   int length) noexcept {
  const bool logs = code == fc::kTransactionLoggingEnableOption;
  if (logs || code == fc::kDebugTransactionIdentifierOption) {
    const std::string_view id(reinterpret_cast<const char*>(value),
                              static_cast<std::size_t>(length));
    if (!debug_identifier_.empty())
      return debug_identifier_ == id ? 0 : fc::kClientInvalidOperation;
    try {
      debug_identifier_.assign(id);
    } catch (...) {
      return fc::current_error();
    }
  }
  if ((logs || code == fc::kLogTransactionOption) && debug_identifier_.empty()) {
    return fc::kClientInvalidOperation;
  }
  return 0;
}

fdb_error_t FDB_transaction::apply_to_transaction(const fc::TransactionOptions& updated) noexcept {
  try {
    if (updated.read_your_writes != options_.read_your_writes) {
      tr.set_read_your_writes(updated.read_your_writes);
    }
    if (updated.snapshot_read_your_writes() != options_.snapshot_read_your_writes()) {
      tr.set_snapshot_read_your_writes(updated.snapshot_read_your_writes());
    }
    if (updated.report_conflicting_keys != options_.report_conflicting_keys) {
      tr.set_report_conflicting_keys(updated.report_conflicting_keys);
    }
    if (updated.size_limit != options_.size_limit) {
      tr.set_size_limit(static_cast<std::size_t>(updated.size_limit));
    }
    // An expired timeout is not undone by a new one (strata's set_timeout keeps it).
    if (updated.timeout_ms != options_.timeout_ms) {
      tr.set_timeout(std::chrono::milliseconds(updated.timeout_ms));
    }
    if (updated.retry_limit != options_.retry_limit) {
      tr.set_retry_limit(static_cast<int>(updated.retry_limit));
    }
    if (updated.max_retry_delay_ms != options_.max_retry_delay_ms) {
      tr.set_max_retry_delay(std::chrono::milliseconds(updated.max_retry_delay_ms));
    }
  } catch (...) {
    return fc::current_error();
  }
  return 0;
}

void FDB_transaction::reset() noexcept {
  strata::base::UniqueLock lock(mu);
  finish_stamp_waiters(static_cast<fdb_error_t>(strata::ErrorCode::transaction_cancelled));
  try {
    tr.reset();
    // As FoundationDB: the database's defaults as they are now.
    const std::uint64_t changes = state_->defaults_changes();
    if (changes != defaults_changes_) {
      defaults_changes_ = changes;
      defaults_ = state_->defaults();
    }
    options_ = defaults_;
    apply_options(true);
    clear_attempt();
  } catch (...) {  // a reset left half done: the next read, watch or commit says so
    clear_attempt();
    defer(fc::current_error());
  }
}

bool FDB_transaction::get_special(std::string_view key, std::string& value) const {
  const fc::SpecialRows rows = special_rows(key, fc::key_after(key));
  const auto row = rows.lower_bound(key);
  if (row == rows.rows.end() || row->first != key) return false;
  value = row->second;
  return true;
}

bool FDB_transaction::materialized(std::string_view key) const {
  // The metadata version key is a stored one, read from the database with or without the
  // system-keys options.
  return fc::is_special_key(key) ||
         (options_.read_system_keys && fc::is_system_key(key) && key != fc::kMetadataVersionKey);
}

fc::SpecialRows FDB_transaction::special_rows(std::string_view begin_key,
                                              std::string_view end_key) const {
  if (fc::is_system_key(begin_key)) return fc::system_rows();
  return fc::special_rows(tr, begin_key, end_key, options_.special_key_space_relaxed);
}

void FDB_transaction::cancel() noexcept {
  strata::base::UniqueLock lock(mu);
  finish_stamp_waiters(static_cast<fdb_error_t>(strata::ErrorCode::transaction_cancelled));
  try {
    tr.cancel();
  } catch (...) {  // not cancelled: the next read, watch or commit fails instead
    defer(fc::current_error());
  }
  end_waits();
}

// ---- Entry points ---------------------------------------------------------------------

namespace {

// FoundationDB's mutation codes to strata's.
// FoundationDB's codes for the semantics its client gives BIT_AND and MIN from API 510 on
// (a missing value takes the operand), which are strata's; its client takes them as they
// are too (its read-your-writes layer checks only that a code is an atomic operation).
constexpr int kMutationMinV2 = 18;
constexpr int kMutationAndV2 = 19;

// What a code that names no atomic operation is given to the engine as.
constexpr auto kNoAtomicOperation = static_cast<strata::MutationType>(-1);

std::optional<strata::MutationType> mutation_type(FDBMutationType code) {
  using strata::MutationType;
  switch (code) {
    case FDB_MUTATION_TYPE_ADD:
      return MutationType::add;
    case FDB_MUTATION_TYPE_BIT_AND:
    case kMutationAndV2:
      return MutationType::bit_and;
    case FDB_MUTATION_TYPE_BIT_OR:
      return MutationType::bit_or;
    case FDB_MUTATION_TYPE_BIT_XOR:
      return MutationType::bit_xor;
    case FDB_MUTATION_TYPE_APPEND_IF_FITS:
      return MutationType::append_if_fits;
    case FDB_MUTATION_TYPE_MAX:
      return MutationType::max;
    case FDB_MUTATION_TYPE_MIN:
    case kMutationMinV2:
      return MutationType::min;
    case FDB_MUTATION_TYPE_SET_VERSIONSTAMPED_KEY:
      return MutationType::set_versionstamped_key;
    case FDB_MUTATION_TYPE_SET_VERSIONSTAMPED_VALUE:
      return MutationType::set_versionstamped_value;
    case FDB_MUTATION_TYPE_BYTE_MIN:
      return MutationType::byte_min;
    case FDB_MUTATION_TYPE_BYTE_MAX:
      return MutationType::byte_max;
    case FDB_MUTATION_TYPE_COMPARE_AND_CLEAR:
      return MutationType::compare_and_clear;
    default:
      return std::nullopt;
  }
}

// Before API version 520 a versionstamped key ended with a 2-byte offset, and a
// versionstamped value had none (its stamp went at offset 0); strata reads a 4-byte
// offset. FoundationDB's client appends zero bytes the same way: two to the key, four to
// the value.
std::string widen_stamp_offset(std::string_view operand, bool value) {
  std::string widened(operand);
  if (fc::api_version() < 520) widened.append(value ? 4 : 2, '\0');
  return widened;
}

}  // namespace

// Every FDB_transaction method an entry point calls, read() and write() included, throws
// nothing (docs/decisions/0038); nor does the destructor, whose finish_stamp_waiters is
// noexcept.
extern "C" {

void fdb_transaction_destroy(FDBTransaction* tr) { delete tr; }

void fdb_transaction_cancel(FDBTransaction* tr) { tr->cancel(); }

fdb_error_t fdb_transaction_set_option(FDBTransaction* tr, FDBTransactionOption option,
                                       const uint8_t* value, int value_length) {
  return tr->set_option(option, value, value_length);
}

void fdb_transaction_set_read_version(FDBTransaction* tr, int64_t version) {
  tr->write([&] {
    tr->mu.assert_held();
    if (version <= 0) {  // FoundationDB: version_invalid
      tr->defer(fc::kVersionInvalid);
      return;
    }
    tr->set_read_version(version);
  });
}

FDBFuture* fdb_transaction_get_read_version(FDBTransaction* tr) {
  return tr->read(
      [&](FDB_future::Result& r) {
        tr->mu.assert_held();
        r.kind = Kind::int64;
        r.int64 = tr->read_version();
      },
      false);
}

FDBFuture* fdb_transaction_get(FDBTransaction* tr, const uint8_t* key_name, int key_name_length,
                               fdb_bool_t snapshot) {
  std::string_view key = bytes(key_name, key_name_length);
  return tr->read([&](FDB_future::Result& r) {
    tr->mu.assert_held();
    r.kind = Kind::value;
    if (tr->materialized(key)) {
      r.present = tr->get_special(key, r.bytes);
      if (!fc::is_special_key(key)) tr->note_read_started();  // a system key: a read
      return;
    }
    r.present = snapshot ? tr->tr.snapshot().get(key, r.bytes) : tr->tr.get(key, r.bytes);
    // A key longer than any key is answered without a read, and FoundationDB's client
    // counts nothing for it (ReadYourWritesTransaction::get returns before reading).
    if (key.size() <= strata::base::kReadKeySizeLimit) {
      tr->add_read_cost(key.size() + (r.present ? r.bytes.size() : 0));
      tr->note_read_started();
    }
  });
}

FDBFuture* fdb_transaction_get_addresses_for_key(FDBTransaction* tr, const uint8_t* /*key_name*/,
                                                 int /*key_name_length*/) {
  return tr->read([&](FDB_future::Result& r) {
    tr->mu.assert_held();
    r.kind = Kind::strings;
    r.strings = {"127.0.0.1:4500"};  // one in-process "server"
    tr->note_read_started();         // FoundationDB's client counts it with the reads
  });
}

void fdb_transaction_set(FDBTransaction* tr, const uint8_t* key_name, int key_name_length,
                         const uint8_t* value, int value_length) {
  tr->write([&] {
    tr->mu.assert_held();
    const std::string_view key = bytes(key_name, key_name_length);
    if (tr->writes_tenant_map(key)) return tr->defer(fc::kTenantsDisabled);
    tr->tr.set(key, bytes(value, value_length));
    tr->add_write_cost(key.size() + static_cast<std::size_t>(std::max(value_length, 0)));
  });
}

void fdb_transaction_atomic_op(FDBTransaction* tr, const uint8_t* key_name, int key_name_length,
                               const uint8_t* param, int param_length,
                               FDBMutationType operation_type) {
  tr->write([&] {
    tr->mu.assert_held();
    // A code that names no atomic operation goes on as a type the engine refuses with
    // invalid_mutation_type after the checks FoundationDB's atomicOp makes first (the
    // key's place: key_outside_legal_range before invalid_mutation_type).
    const auto type = mutation_type(operation_type).value_or(kNoAtomicOperation);
    std::string_view key = bytes(key_name, key_name_length);
    std::string_view operand = bytes(param, param_length);
    if (type == strata::MutationType::set_versionstamped_key) {
      tr->tr.atomic_op(type, widen_stamp_offset(key, false), operand);
    } else if (type == strata::MutationType::set_versionstamped_value) {
      tr->tr.atomic_op(type, key, widen_stamp_offset(operand, true));
    } else {
      tr->tr.atomic_op(type, key, operand);
    }
    tr->add_write_cost(key.size());
  });
}

void fdb_transaction_clear(FDBTransaction* tr, const uint8_t* key_name, int key_name_length) {
  tr->write([&] {
    tr->mu.assert_held();
    const std::string_view key = bytes(key_name, key_name_length);
    if (tr->writes_tenant_map(key)) return tr->defer(fc::kTenantsDisabled);
    tr->tr.clear(key);
    tr->add_clear_cost(key);
  });
}

void fdb_transaction_clear_range(FDBTransaction* tr, const uint8_t* begin_key_name,
                                 int begin_key_name_length, const uint8_t* end_key_name,
                                 int end_key_name_length) {
  tr->write([&] {
    tr->mu.assert_held();
    const std::string_view begin = bytes(begin_key_name, begin_key_name_length);
    const std::string_view end = bytes(end_key_name, end_key_name_length);
    if (tr->writes_tenant_map(begin, end)) return tr->defer(fc::kTenantsDisabled);
    tr->tr.clear_range(begin, end);
    tr->add_clear_cost(begin, end);
  });
}

FDBFuture* fdb_transaction_watch(FDBTransaction* tr, const uint8_t* key_name, int key_name_length) {
  return tr->watch(bytes(key_name, key_name_length));
}

FDBFuture* fdb_transaction_commit(FDBTransaction* tr) { return tr->commit(); }

// As FoundationDB's: -1 (its invalidVersion) until a commit succeeds, never an error.
fdb_error_t fdb_transaction_get_committed_version(FDBTransaction* tr, int64_t* out_version) {
  strata::base::UniqueLock lock(tr->mu);
  try {
    *out_version = tr->tr.committed_version();
  } catch (...) {  // not committed (yet)
    *out_version = -1;
  }
  return 0;
}

FDBFuture* fdb_transaction_get_approximate_size(FDBTransaction* tr) {
  return tr->read(
      [&](FDB_future::Result& r) {
        tr->mu.assert_held();
        r.kind = Kind::int64;
        r.int64 = static_cast<std::int64_t>(tr->tr.approximate_size());
      },
      false);
}

FDBFuture* fdb_transaction_get_total_cost(FDBTransaction* tr) {
  return tr->read(
      [&](FDB_future::Result& r) {
        tr->mu.assert_held();
        r.kind = Kind::int64;
        r.int64 = tr->total_cost();
      },
      false);
}

// Tag throttling delays a cluster's transactions at its proxies; one process has none.
FDBFuture* fdb_transaction_get_tag_throttled_duration(FDBTransaction* tr) {
  return tr->read([](FDB_future::Result& r) { r.kind = Kind::real; }, false);
}

FDBFuture* fdb_transaction_get_versionstamp(FDBTransaction* tr) { return tr->versionstamp(); }

FDBFuture* fdb_transaction_on_error(FDBTransaction* tr, fdb_error_t error) {
  return tr->on_error(error);
}

void fdb_transaction_reset(FDBTransaction* tr) { tr->reset(); }

fdb_error_t fdb_transaction_add_conflict_range(FDBTransaction* tr, const uint8_t* begin_key_name,
                                               int begin_key_name_length,
                                               const uint8_t* end_key_name, int end_key_name_length,
                                               FDBConflictRangeType type) {
  std::string_view begin = bytes(begin_key_name, begin_key_name_length);
  std::string_view end = bytes(end_key_name, end_key_name_length);
  if (begin > end) return static_cast<fdb_error_t>(strata::ErrorCode::inverted_range);
  if (type != FDB_CONFLICT_RANGE_TYPE_READ && type != FDB_CONFLICT_RANGE_TYPE_WRITE) {
    return fc::kClientInvalidOperation;
  }
  tr->write([&] {
    tr->mu.assert_held();
    using strata::engine::SystemKeyConflicts;
    // Under the system-keys options the ends may reach \xff\xff, as FoundationDB's
    // getMaxReadKey and getMaxWriteKey (fdbclient/ReadYourWrites.actor.cpp).
    if (type == FDB_CONFLICT_RANGE_TYPE_READ) {
      if (tr->reads_system_keys()) {
        SystemKeyConflicts::add_read_conflict_range(tr->tr, begin, end);
      } else {
        tr->tr.add_read_conflict_range(begin, end);
      }
    } else if (tr->writes_system_keys()) {
      SystemKeyConflicts::add_write_conflict_range(tr->tr, begin, end);
    } else {
      tr->tr.add_write_conflict_range(begin, end);
    }
  });
  return 0;
}

}  // extern "C"
