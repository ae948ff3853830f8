// The public Database, Transaction and ReadView methods, forwarding to the engine, or to
// the cluster backend (src/cluster, docs/decisions/0033) when the handle has no engine
// object: that test is the moved-from test the in-process path makes anyway, so the
// in-process path pays no instruction for the cluster's.
#include <utility>

#include "strata/database.hpp"
#include "strata/transaction.hpp"

#include "base/deadline.hpp"
#include "base/limits.hpp"
#include "cluster/cluster_database.hpp"
#include "cluster/cluster_transaction.hpp"
#include "cluster/cluster_watch.hpp"
#include "engine/database_impl.hpp"
#include "engine/transaction_impl.hpp"

namespace strata {

using engine::ReadMode;

namespace {

// A moved-from handle (Database, Transaction and a ReadView of it, Watch) has no state:
// every operation throws client_invalid_operation rather than dereference it.
[[noreturn, gnu::cold]] void throw_moved_from(const char* handle) {
  throw Error(ErrorCode::client_invalid_operation,
              std::string("the ") + handle + " was moved from; use the one it was moved to");
}

// The cluster side of a handle whose engine pointer is null: the cluster object, or a
// moved-from handle.
template <class T>
T& remote(T* cluster, const char* handle) {
  if (cluster == nullptr) [[unlikely]]
    throw_moved_from(handle);
  return *cluster;
}
cluster::ClusterTransaction& remote(const std::unique_ptr<cluster::ClusterTransaction>& c) {
  return remote(c.get(), "transaction");
}
cluster::ClusterDatabase& remote(const std::shared_ptr<cluster::ClusterDatabase>& c) {
  return remote(c.get(), "database");
}
cluster::ClusterWatch& remote(const std::shared_ptr<cluster::ClusterWatch>& c) {
  return remote(c.get(), "watch");
}

// Database::wait_for_version and wake_version_waiters on a cluster (docs/cluster.md): a
// reader there sets its read version and reads, and FoundationDB's storage servers wait for
// the version themselves, failing the read with future_version (1009) when it is too far.
[[noreturn, gnu::cold]] void refuse_version_waits(const cluster::ClusterDatabase& /*cluster*/,
                                                  const char* what) {
  throw Error(ErrorCode::client_invalid_operation,
              std::string(what) +
                  " has no meaning on a FoundationDB cluster: set the read version and read, "
                  "and the cluster waits for the version");
}

// A cluster call made out of line and cold, where the in-process path is hot: the public
// method then stays small enough for the link-time optimiser to inline it into its callers.
template <class F>
[[gnu::noinline, gnu::cold]] void cold_call(const F& f) {
  f();
}

// An empty std::function where a callback is required is refused before anything happens:
// called later (on the pipeline's thread, by a commit that fires a watch) it would throw
// std::bad_function_call where nobody can catch it.
[[noreturn, gnu::cold]] void throw_empty(const char* what) {
  throw Error(ErrorCode::invalid_argument, std::string(what) + " is an empty function");
}

template <class F>
const F& required(const F& callback, const char* what) {
  if (!callback) [[unlikely]]
    throw_empty(what);
  return callback;
}

}  // namespace

// ---- Database ---------------------------------------------------------------------

Database Database::open(Options options) {
  if (!options.cluster_file.empty()) [[unlikely]]
    return Database(cluster::ClusterDatabase::open(options));
  return Database(engine::DatabaseImpl::open(std::move(options)));
}

Database::Database(std::shared_ptr<cluster::ClusterDatabase> cluster)
    : cluster_(std::move(cluster)) {}

Transaction Database::create_transaction() {
  if (impl_ == nullptr) [[unlikely]] {
    (void)remote(cluster_);  // a moved-from database throws
    return Transaction(std::make_unique<cluster::ClusterTransaction>(cluster_));
  }
  return Transaction(engine::TransactionImpl::make(impl_));
}

Transaction Database::borrowing_transaction() {
  if (impl_ == nullptr) [[unlikely]]
    return create_transaction();
  return Transaction(engine::TransactionImpl::make_borrowed(*impl_));
}

Version Database::committed_version() const {
  if (impl_ == nullptr) [[unlikely]]
    return remote(cluster_).read_version();
  return impl_->store().committed();
}

Version Database::opened_version() const {
  if (impl_ == nullptr) [[unlikely]] {
    (void)remote(cluster_);
    return 0;
  }
  return impl_->opened_version();
}

DatabaseStats Database::stats() const {
  if (impl_ == nullptr) [[unlikely]]
    return remote(cluster_).stats();
  return impl_->stats();
}

void Database::checkpoint() {
  if (impl_ == nullptr) [[unlikely]] {
    (void)remote(cluster_);  // the cluster makes each commit durable itself
    return;
  }
  impl_->checkpoint();
}

bool Database::durable() const {
  if (impl_ == nullptr) [[unlikely]] {
    (void)remote(cluster_);
    return true;  // FoundationDB makes every commit durable before acknowledging it
  }
  return !impl_->options().path.empty();
}

bool Database::wait_for_version(Version version, std::chrono::steady_clock::time_point deadline,
                                const std::function<bool()>& stop) const {
  if (impl_ == nullptr) [[unlikely]]
    refuse_version_waits(remote(cluster_), "wait_for_version");
  kv::MvccStore& store = impl_->store();
  return store.version_wait().wait_for(store.committed_atomic(), version, deadline,
                                       [&] { return stop && stop(); });
}

void Database::wake_version_waiters() const {
  if (impl_ == nullptr) [[unlikely]]
    refuse_version_waits(remote(cluster_), "wake_version_waiters");
  impl_->store().version_wait().wake_all();
}

// ---- Watch ------------------------------------------------------------------------

namespace {

// What the copies of one Watch share. When the last copy goes, the watch is cancelled, as
// destroying a FoundationDB watch future cancels it: a watch nobody can wait for would
// otherwise stay armed, and 10,000 of them would refuse every later watch (1032).
struct WatchHandle {
  explicit WatchHandle(std::shared_ptr<engine::WatchState> s) : state(std::move(s)) {}
  ~WatchHandle() { state->finish(engine::WatchState::Status::cancelled); }
  WatchHandle(const WatchHandle&) = delete;
  WatchHandle& operator=(const WatchHandle&) = delete;
  std::shared_ptr<engine::WatchState> state;
};

std::optional<std::chrono::steady_clock::time_point> deadline_in(
    std::chrono::milliseconds timeout) {
  const auto deadline = base::deadline_after(std::chrono::steady_clock::now(), timeout);
  if (deadline == std::chrono::steady_clock::time_point::max()) return std::nullopt;
  return deadline;
}

}  // namespace

Watch::Watch(std::shared_ptr<engine::WatchState> state) {
  auto handle = std::make_shared<WatchHandle>(std::move(state));
  engine::WatchState* raw = handle->state.get();
  state_ = std::shared_ptr<engine::WatchState>(std::move(handle), raw);  // shares the handle
}

// (The cluster's watch cancels itself when its last copy goes: cluster/cluster_watch.hpp.)
Watch::Watch(std::shared_ptr<cluster::ClusterWatch> cluster) : cluster_(std::move(cluster)) {}

void Watch::wait() {
  if (state_ == nullptr) [[unlikely]] {
    (void)remote(cluster_).wait_until(std::nullopt);
    return;
  }
  state_->wait_until(std::nullopt);
}

bool Watch::wait_for(std::chrono::milliseconds timeout) {
  if (state_ == nullptr) [[unlikely]]
    return remote(cluster_).wait_until(deadline_in(timeout));
  return state_->wait_until(deadline_in(timeout));
}

// The registry drops cancelled watches lazily (it may be gone by now: a Watch can
// outlive its database).
void Watch::cancel() {
  if (state_ == nullptr) [[unlikely]] {
    remote(cluster_).cancel();
    return;
  }
  state_->finish(engine::WatchState::Status::cancelled);
}

void Watch::on_ready(std::function<void()> callback) {
  if (state_ == nullptr) [[unlikely]] {
    cluster::ClusterWatch& watch = remote(cluster_);
    required(callback, "on_ready's callback");
    watch.on_ready(std::move(callback));
    return;
  }
  required(callback, "on_ready's callback");
  state_->on_finish(std::move(callback));
}

// ---- ReadView ---------------------------------------------------------------------

std::optional<std::string> ReadView::get(std::string_view key) {
  if (impl_ == nullptr) [[unlikely]]
    return remote(cluster_, "transaction").get(key, true);
  return impl_->get(key, ReadMode::snapshot);
}

bool ReadView::get(std::string_view key, std::string& out) {
  if (impl_ == nullptr) [[unlikely]]
    return remote(cluster_, "transaction").get(key, true, out);
  return impl_->get(key, ReadMode::snapshot, out);
}

RangeResult ReadView::get_range(std::string_view begin, std::string_view end,
                                RangeOptions options) {
  if (impl_ == nullptr) [[unlikely]]
    return remote(cluster_, "transaction").get_range(begin, end, options, true);
  return impl_->get_range(begin, end, options, ReadMode::snapshot);
}

RangeResult ReadView::get_range(const KeyRange& range, RangeOptions options) {
  if (impl_ == nullptr) [[unlikely]]
    return remote(cluster_, "transaction").get_range(range.begin, range.end, options, true);
  return impl_->get_range(range.begin, range.end, options, ReadMode::snapshot);
}

std::size_t ReadView::visit_range(std::string_view begin, std::string_view end,
                                  RangeOptions options, RowVisitorRef visit) {
  if (impl_ == nullptr) [[unlikely]] {
    cluster::ClusterTransaction& t = remote(cluster_, "transaction");
    return t.visit_range(begin, end, options, true, required(visit, "the visitor"));
  }
  return impl_->visit_range(begin, end, options, ReadMode::snapshot,
                            required(visit, "the visitor"));
}

std::size_t ReadView::visit_range(const KeyRange& range, RangeOptions options,
                                  RowVisitorRef visit) {
  if (impl_ == nullptr) [[unlikely]] {
    cluster::ClusterTransaction& t = remote(cluster_, "transaction");
    return t.visit_range(range.begin, range.end, options, true, required(visit, "the visitor"));
  }
  return impl_->visit_range(range.begin, range.end, options, ReadMode::snapshot,
                            required(visit, "the visitor"));
}

// ---- Transaction ------------------------------------------------------------------

Transaction::Transaction(std::unique_ptr<engine::TransactionImpl> impl) : impl_(std::move(impl)) {}
Transaction::Transaction(std::unique_ptr<cluster::ClusterTransaction> cluster)
    : cluster_(std::move(cluster)) {}
// A transaction moved (out of Database::run, say) may outlive the run that borrowed its
// database: from here on it holds a reference of its own.
Transaction::Transaction(Transaction&& other) noexcept
    : impl_(std::move(other.impl_)), cluster_(std::move(other.cluster_)) {
  if (impl_ != nullptr) impl_->own();
}
Transaction& Transaction::operator=(Transaction&& other) noexcept {
  if (this != &other) {
    engine::TransactionImpl::recycle(std::exchange(impl_, std::move(other.impl_)));
    cluster_ = std::move(other.cluster_);
    if (impl_ != nullptr) impl_->own();
  }
  return *this;
}
Transaction::~Transaction() { engine::TransactionImpl::recycle(std::move(impl_)); }

std::optional<std::string> Transaction::get(std::string_view key) {
  if (impl_ == nullptr) [[unlikely]]
    return remote(cluster_).get(key, false);
  return impl_->get(key, ReadMode::serializable);
}

bool Transaction::get(std::string_view key, std::string& out) {
  if (impl_ == nullptr) [[unlikely]]
    return remote(cluster_).get(key, false, out);
  return impl_->get(key, ReadMode::serializable, out);
}

RangeResult Transaction::get_range(std::string_view begin, std::string_view end,
                                   RangeOptions options) {
  if (impl_ == nullptr) [[unlikely]]
    return remote(cluster_).get_range(begin, end, options, false);
  return impl_->get_range(begin, end, options, ReadMode::serializable);
}

RangeResult Transaction::get_range(const KeyRange& range, RangeOptions options) {
  if (impl_ == nullptr) [[unlikely]]
    return remote(cluster_).get_range(range.begin, range.end, options, false);
  return impl_->get_range(range.begin, range.end, options, ReadMode::serializable);
}

std::size_t Transaction::visit_range(std::string_view begin, std::string_view end,
                                     RangeOptions options, RowVisitorRef visit) {
  if (impl_ == nullptr) [[unlikely]] {
    cluster::ClusterTransaction& t = remote(cluster_);
    return t.visit_range(begin, end, options, false, required(visit, "the visitor"));
  }
  return impl_->visit_range(begin, end, options, ReadMode::serializable,
                            required(visit, "the visitor"));
}

std::size_t Transaction::visit_range(const KeyRange& range, RangeOptions options,
                                     RowVisitorRef visit) {
  if (impl_ == nullptr) [[unlikely]] {
    cluster::ClusterTransaction& t = remote(cluster_);
    return t.visit_range(range.begin, range.end, options, false, required(visit, "the visitor"));
  }
  return impl_->visit_range(range.begin, range.end, options, ReadMode::serializable,
                            required(visit, "the visitor"));
}

void Transaction::set(std::string_view key, std::string_view value) {
  if (impl_ == nullptr) [[unlikely]]
    return remote(cluster_).set(key, value);
  impl_->set(key, value);
}
void Transaction::clear(std::string_view key) {
  if (impl_ == nullptr) [[unlikely]]
    return remote(cluster_).clear(key);
  impl_->clear(key);
}
void Transaction::clear_range(std::string_view begin, std::string_view end) {
  if (impl_ == nullptr) [[unlikely]]
    return remote(cluster_).clear_range(begin, end);
  impl_->clear_range(begin, end);
}
void Transaction::clear_range(const KeyRange& range) {
  if (impl_ == nullptr) [[unlikely]]
    return remote(cluster_).clear_range(range.begin, range.end);
  impl_->clear_range(range.begin, range.end);
}
void Transaction::atomic_op(MutationType type, std::string_view key, std::string_view param) {
  if (impl_ == nullptr) [[unlikely]]
    return remote(cluster_).atomic_op(type, key, param);
  impl_->atomic_op(type, key, param);
}

void Transaction::atomic_add(std::string_view key, std::int64_t delta) {
  atomic_op(MutationType::add, key, int64_operand(delta));
}

Watch Transaction::watch(std::string_view key) {
  if (impl_ == nullptr) [[unlikely]]
    return Watch(remote(cluster_).watch(key));
  return Watch(impl_->watch(key));
}

void Transaction::add_read_conflict_range(std::string_view begin, std::string_view end) {
  if (impl_ == nullptr) [[unlikely]]
    return remote(cluster_).add_read_conflict_range(begin, end);
  impl_->add_read_conflict_range(begin, end);
}
void Transaction::add_read_conflict_key(std::string_view key) {
  if (impl_ == nullptr) [[unlikely]]
    return remote(cluster_).add_read_conflict_key(key);
  impl_->add_read_conflict_key(key);
}
void Transaction::add_write_conflict_range(std::string_view begin, std::string_view end) {
  if (impl_ == nullptr) [[unlikely]]
    return remote(cluster_).add_write_conflict_range(begin, end);
  impl_->add_write_conflict_range(begin, end);
}
void Transaction::add_write_conflict_key(std::string_view key) {
  if (impl_ == nullptr) [[unlikely]]
    return remote(cluster_).add_write_conflict_range(key, base::key_after(key));
  impl_->add_write_conflict_range(key, base::key_after(key));
}

Version Transaction::read_version() {
  if (impl_ == nullptr) [[unlikely]]
    return remote(cluster_).read_version();
  return impl_->read_version();
}
void Transaction::set_read_version(Version version) {
  if (impl_ == nullptr) [[unlikely]]
    return remote(cluster_).set_read_version(version);
  impl_->set_read_version(version);
}
void Transaction::set_read_your_writes(bool enabled) {
  if (impl_ == nullptr) [[unlikely]]
    return remote(cluster_).set_read_your_writes(enabled);
  impl_->set_read_your_writes(enabled);
}
void Transaction::set_snapshot_read_your_writes(bool enabled) {
  if (impl_ == nullptr) [[unlikely]]
    return remote(cluster_).set_snapshot_read_your_writes(enabled);
  impl_->set_snapshot_read_your_writes(enabled);
}
void Transaction::set_next_write_no_write_conflict_range() {
  if (impl_ == nullptr) [[unlikely]]
    return remote(cluster_).set_next_write_no_write_conflict_range();
  impl_->set_next_write_no_write_conflict_range();
}
void Transaction::set_report_conflicting_keys(bool enabled) {
  if (impl_ == nullptr) [[unlikely]]
    return remote(cluster_).set_report_conflicting_keys(enabled);
  impl_->set_report_conflicting_keys(enabled);
}
std::vector<KeyRange> Transaction::conflicting_ranges() const {
  if (impl_ == nullptr) [[unlikely]]
    return remote(cluster_).conflicting_ranges();
  return impl_->conflicting_ranges();
}
std::vector<KeyRange> Transaction::read_conflict_ranges() const {
  if (impl_ == nullptr) [[unlikely]]
    return remote(cluster_).read_conflict_ranges();
  return impl_->read_conflict_ranges();
}
std::vector<KeyRange> Transaction::write_conflict_ranges() const {
  if (impl_ == nullptr) [[unlikely]]
    return remote(cluster_).write_conflict_ranges();
  return impl_->write_conflict_ranges();
}
std::size_t Transaction::approximate_size() const {
  if (impl_ == nullptr) [[unlikely]]
    return remote(cluster_).approximate_size();
  return impl_->size_bytes();
}
void Transaction::commit() {
  if (impl_ == nullptr) [[unlikely]]
    return cold_call([this] { remote(cluster_).commit(); });
  impl_->commit();
}
void Transaction::commit_async(CommitCallback done) {
  if (impl_ == nullptr) [[unlikely]] {
    cluster::ClusterTransaction& t = remote(cluster_);
    required(done, "commit_async's callback");
    return t.commit_async(std::move(done));
  }
  required(done, "commit_async's callback");
  impl_->commit_async(std::move(done));
}
Version Transaction::committed_version() const {
  if (impl_ == nullptr) [[unlikely]]
    return remote(cluster_).committed_version();
  return impl_->committed_version();
}
std::string Transaction::versionstamp() const {
  if (impl_ == nullptr) [[unlikely]]
    return remote(cluster_).versionstamp();
  return impl_->versionstamp();
}
void Transaction::on_error(const Error& e) {
  if (impl_ == nullptr) [[unlikely]]
    return remote(cluster_).on_error(e);
  impl_->on_error(e);
}
void Transaction::reset() {
  if (impl_ == nullptr) [[unlikely]]
    return remote(cluster_).reset();
  impl_->reset();
}
void Transaction::cancel() {
  if (impl_ == nullptr) [[unlikely]]
    return remote(cluster_).cancel();
  impl_->cancel();
}
RetryStep Transaction::retry_step(ErrorCode error, GiveUp give_up) {
  if (impl_ == nullptr) [[unlikely]]
    return remote(cluster_).retry_step(error, give_up);
  return impl_->retry_step(error, give_up);
}
ErrorCode Transaction::ended_by() const {
  if (impl_ == nullptr) [[unlikely]]
    return remote(cluster_).ended_by();
  return impl_->ended_by();
}
std::chrono::steady_clock::time_point Transaction::timeout_deadline() const {
  if (impl_ == nullptr) [[unlikely]]
    return remote(cluster_).timeout_deadline();
  return impl_->timeout_deadline();
}
void Transaction::set_timeout(std::chrono::milliseconds timeout) {
  if (impl_ == nullptr) [[unlikely]]
    return remote(cluster_).set_timeout(timeout);
  impl_->set_timeout(timeout);
}

void Transaction::set_retry_limit(int limit) {
  if (impl_ == nullptr) [[unlikely]]
    return remote(cluster_).set_retry_limit(limit);
  impl_->set_retry_limit(limit);
}
void Transaction::set_size_limit(std::size_t bytes) {
  if (impl_ == nullptr) [[unlikely]]
    return remote(cluster_).set_size_limit(bytes);
  impl_->set_size_limit(bytes);
}

void Transaction::set_max_retry_delay(std::chrono::milliseconds delay) {
  if (impl_ == nullptr) [[unlikely]]
    return remote(cluster_).set_max_retry_delay(delay);
  impl_->set_max_retry_delay(delay);
}

}  // namespace strata
