// The public Database, Transaction and ReadView methods, forwarding to the engine.
#include <utility>

#include "strata/database.hpp"
#include "strata/transaction.hpp"

#include "base/deadline.hpp"
#include "base/limits.hpp"
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

engine::DatabaseImpl& live(const std::shared_ptr<engine::DatabaseImpl>& impl) {
  if (impl == nullptr) [[unlikely]]
    throw_moved_from("database");
  return *impl;
}

engine::WatchState& live(const std::shared_ptr<engine::WatchState>& state) {
  if (state == nullptr) [[unlikely]]
    throw_moved_from("watch");
  return *state;
}

engine::TransactionImpl& live(engine::TransactionImpl* impl) {
  if (impl == nullptr) [[unlikely]]
    throw_moved_from("transaction");
  return *impl;
}

engine::TransactionImpl& live(const std::unique_ptr<engine::TransactionImpl>& impl) {
  return live(impl.get());
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
  return Database(engine::DatabaseImpl::open(std::move(options)));
}

Transaction Database::create_transaction() {
  live(impl_);  // a moved-from database throws
  return Transaction(engine::TransactionImpl::make(impl_));
}

Transaction Database::borrowing_transaction() {
  return Transaction(engine::TransactionImpl::make_borrowed(live(impl_)));
}

Version Database::committed_version() const { return live(impl_).store().committed(); }

Version Database::opened_version() const { return live(impl_).opened_version(); }

DatabaseStats Database::stats() const { return live(impl_).stats(); }

void Database::checkpoint() { live(impl_).checkpoint(); }

bool Database::durable() const { return !live(impl_).options().path.empty(); }

bool Database::wait_for_version(Version version, std::chrono::steady_clock::time_point deadline,
                                const std::function<bool()>& stop) const {
  kv::MvccStore& store = live(impl_).store();
  return store.version_wait().wait_for(store.committed_atomic(), version, deadline,
                                       [&] { return stop && stop(); });
}

void Database::wake_version_waiters() const { live(impl_).store().version_wait().wake_all(); }

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

}  // namespace

Watch::Watch(std::shared_ptr<engine::WatchState> state) {
  auto handle = std::make_shared<WatchHandle>(std::move(state));
  engine::WatchState* raw = handle->state.get();
  state_ = std::shared_ptr<engine::WatchState>(std::move(handle), raw);  // shares the handle
}

void Watch::wait() { live(state_).wait_until(std::nullopt); }

bool Watch::wait_for(std::chrono::milliseconds timeout) {
  engine::WatchState& state = live(state_);
  const auto deadline = base::deadline_after(std::chrono::steady_clock::now(), timeout);
  if (deadline == std::chrono::steady_clock::time_point::max())
    return state.wait_until(std::nullopt);
  return state.wait_until(deadline);
}

// The registry drops cancelled watches lazily (it may be gone by now: a Watch can
// outlive its database).
void Watch::cancel() { live(state_).finish(engine::WatchState::Status::cancelled); }

void Watch::on_ready(std::function<void()> callback) {
  engine::WatchState& state = live(state_);
  required(callback, "on_ready's callback");
  state.on_finish(std::move(callback));
}

// ---- ReadView ---------------------------------------------------------------------

std::optional<std::string> ReadView::get(std::string_view key) {
  return live(impl_).get(key, ReadMode::snapshot);
}

bool ReadView::get(std::string_view key, std::string& out) {
  return live(impl_).get(key, ReadMode::snapshot, out);
}

RangeResult ReadView::get_range(std::string_view begin, std::string_view end,
                                RangeOptions options) {
  return live(impl_).get_range(begin, end, options, ReadMode::snapshot);
}

RangeResult ReadView::get_range(const KeyRange& range, RangeOptions options) {
  return live(impl_).get_range(range.begin, range.end, options, ReadMode::snapshot);
}

std::size_t ReadView::visit_range(std::string_view begin, std::string_view end,
                                  RangeOptions options, RowVisitorRef visit) {
  engine::TransactionImpl& t = live(impl_);
  return t.visit_range(begin, end, options, ReadMode::snapshot, required(visit, "the visitor"));
}

std::size_t ReadView::visit_range(const KeyRange& range, RangeOptions options,
                                  RowVisitorRef visit) {
  engine::TransactionImpl& t = live(impl_);
  return t.visit_range(range.begin, range.end, options, ReadMode::snapshot,
                       required(visit, "the visitor"));
}

// ---- Transaction ------------------------------------------------------------------

Transaction::Transaction(std::unique_ptr<engine::TransactionImpl> impl) : impl_(std::move(impl)) {}
// A transaction moved (out of Database::run, say) may outlive the run that borrowed its
// database: from here on it holds a reference of its own.
Transaction::Transaction(Transaction&& other) noexcept : impl_(std::move(other.impl_)) {
  if (impl_ != nullptr) impl_->own();
}
Transaction& Transaction::operator=(Transaction&& other) noexcept {
  if (this != &other) {
    engine::TransactionImpl::recycle(std::exchange(impl_, std::move(other.impl_)));
    if (impl_ != nullptr) impl_->own();
  }
  return *this;
}
Transaction::~Transaction() { engine::TransactionImpl::recycle(std::move(impl_)); }

std::optional<std::string> Transaction::get(std::string_view key) {
  return live(impl_).get(key, ReadMode::serializable);
}

bool Transaction::get(std::string_view key, std::string& out) {
  return live(impl_).get(key, ReadMode::serializable, out);
}

RangeResult Transaction::get_range(std::string_view begin, std::string_view end,
                                   RangeOptions options) {
  return live(impl_).get_range(begin, end, options, ReadMode::serializable);
}

RangeResult Transaction::get_range(const KeyRange& range, RangeOptions options) {
  return live(impl_).get_range(range.begin, range.end, options, ReadMode::serializable);
}

std::size_t Transaction::visit_range(std::string_view begin, std::string_view end,
                                     RangeOptions options, RowVisitorRef visit) {
  engine::TransactionImpl& t = live(impl_);
  return t.visit_range(begin, end, options, ReadMode::serializable, required(visit, "the visitor"));
}

std::size_t Transaction::visit_range(const KeyRange& range, RangeOptions options,
                                     RowVisitorRef visit) {
  engine::TransactionImpl& t = live(impl_);
  return t.visit_range(range.begin, range.end, options, ReadMode::serializable,
                       required(visit, "the visitor"));
}

void Transaction::set(std::string_view key, std::string_view value) { live(impl_).set(key, value); }
void Transaction::clear(std::string_view key) { live(impl_).clear(key); }
void Transaction::clear_range(std::string_view begin, std::string_view end) {
  live(impl_).clear_range(begin, end);
}
void Transaction::clear_range(const KeyRange& range) {
  live(impl_).clear_range(range.begin, range.end);
}
void Transaction::atomic_op(MutationType type, std::string_view key, std::string_view param) {
  live(impl_).atomic_op(type, key, param);
}

void Transaction::atomic_add(std::string_view key, std::int64_t delta) {
  atomic_op(MutationType::add, key, int64_operand(delta));
}

Watch Transaction::watch(std::string_view key) { return Watch(live(impl_).watch(key)); }

void Transaction::add_read_conflict_range(std::string_view begin, std::string_view end) {
  live(impl_).add_read_conflict_range(begin, end);
}
void Transaction::add_read_conflict_key(std::string_view key) {
  live(impl_).add_read_conflict_key(key);
}
void Transaction::add_write_conflict_range(std::string_view begin, std::string_view end) {
  live(impl_).add_write_conflict_range(begin, end);
}
void Transaction::add_write_conflict_key(std::string_view key) {
  live(impl_).add_write_conflict_range(key, base::key_after(key));
}

Version Transaction::read_version() { return live(impl_).read_version(); }
void Transaction::set_read_version(Version version) { live(impl_).set_read_version(version); }
void Transaction::set_read_your_writes(bool enabled) { live(impl_).set_read_your_writes(enabled); }
void Transaction::set_snapshot_read_your_writes(bool enabled) {
  live(impl_).set_snapshot_read_your_writes(enabled);
}
void Transaction::set_report_conflicting_keys(bool enabled) {
  live(impl_).set_report_conflicting_keys(enabled);
}
std::vector<KeyRange> Transaction::conflicting_ranges() const {
  return live(impl_).conflicting_ranges();
}
std::vector<KeyRange> Transaction::read_conflict_ranges() const {
  return live(impl_).read_conflict_ranges();
}
std::vector<KeyRange> Transaction::write_conflict_ranges() const {
  return live(impl_).write_conflict_ranges();
}
std::size_t Transaction::approximate_size() const { return live(impl_).size_bytes(); }
void Transaction::commit() { live(impl_).commit(); }
void Transaction::commit_async(CommitCallback done) {
  engine::TransactionImpl& t = live(impl_);
  required(done, "commit_async's callback");
  t.commit_async(std::move(done));
}
Version Transaction::committed_version() const { return live(impl_).committed_version(); }
std::string Transaction::versionstamp() const { return live(impl_).versionstamp(); }
void Transaction::on_error(const Error& e) { live(impl_).on_error(e); }
RetryStep Transaction::retry_step(ErrorCode error, GiveUp give_up) {
  return live(impl_).retry_step(error, give_up);
}
ErrorCode Transaction::ended_by() const { return live(impl_).ended_by(); }
std::chrono::steady_clock::time_point Transaction::timeout_deadline() const {
  return live(impl_).timeout_deadline();
}
void Transaction::reset() { live(impl_).reset(); }
void Transaction::cancel() { live(impl_).cancel(); }
void Transaction::set_timeout(std::chrono::milliseconds timeout) {
  live(impl_).set_timeout(timeout);
}

void Transaction::set_retry_limit(int limit) { live(impl_).set_retry_limit(limit); }
void Transaction::set_size_limit(std::size_t bytes) { live(impl_).set_size_limit(bytes); }

void Transaction::set_max_retry_delay(std::chrono::milliseconds delay) {
  live(impl_).set_max_retry_delay(delay);
}

}  // namespace strata
