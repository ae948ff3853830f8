// strata::Transaction's calls over FoundationDB's C API.
#include "cluster/cluster_transaction.hpp"

#include <algorithm>
#include <cstdint>
#include <optional>
#include <utility>

#include "base/deadline.hpp"
#include "base/limits.hpp"
#include "cluster/cluster_database.hpp"
#include "cluster/cluster_watch.hpp"
#include "cluster/options.hpp"
#include "engine/versionstamp.hpp"

namespace strata::cluster {
namespace {

const std::uint8_t* bytes(std::string_view s) {
  return reinterpret_cast<const std::uint8_t*>(s.data());
}
int length(std::string_view s) { return static_cast<int>(s.size()); }
std::string_view view(const std::uint8_t* p, int n) {
  return {reinterpret_cast<const char*>(p), static_cast<std::size_t>(n)};
}

// FoundationDB's mutation codes (fdbclient/vexillographer/fdb.options) for strata's types.
// From API 510 on, BIT_AND and MIN are FoundationDB's AndV2 and MinV2, a missing key taking
// the operand, as strata's.
int mutation_code(MutationType type) {
  switch (type) {
    case MutationType::add:
      return FDB_MUTATION_TYPE_ADD;
    case MutationType::bit_and:
      return FDB_MUTATION_TYPE_BIT_AND;
    case MutationType::bit_or:
      return FDB_MUTATION_TYPE_BIT_OR;
    case MutationType::bit_xor:
      return FDB_MUTATION_TYPE_BIT_XOR;
    case MutationType::max:
      return FDB_MUTATION_TYPE_MAX;
    case MutationType::min:
      return FDB_MUTATION_TYPE_MIN;
    case MutationType::byte_min:
      return FDB_MUTATION_TYPE_BYTE_MIN;
    case MutationType::byte_max:
      return FDB_MUTATION_TYPE_BYTE_MAX;
    case MutationType::append_if_fits:
      return FDB_MUTATION_TYPE_APPEND_IF_FITS;
    case MutationType::compare_and_clear:
      return FDB_MUTATION_TYPE_COMPARE_AND_CLEAR;
    case MutationType::set_versionstamped_key:
      return FDB_MUTATION_TYPE_SET_VERSIONSTAMPED_KEY;
    case MutationType::set_versionstamped_value:
      return FDB_MUTATION_TYPE_SET_VERSIONSTAMPED_VALUE;
  }
  throw Error(
      ErrorCode::invalid_mutation_type,
      "mutation type " + std::to_string(static_cast<int>(type)) + " is not an atomic operation");
}

// The ranges a transaction-module special-key namespace encodes: each range [b, e) is the
// rows <prefix>b = "1" and <prefix>e = "0".
std::vector<KeyRange> decode_ranges(const std::vector<KeyValue>& rows, std::string_view prefix) {
  std::vector<KeyRange> out;
  for (const KeyValue& row : rows) {
    std::string key = row.key.substr(prefix.size());
    if (row.value == "1") {
      out.push_back({std::move(key), {}});
    } else if (!out.empty() && out.back().end.empty()) {
      out.back().end = std::move(key);
    }
  }
  return out;
}

constexpr std::string_view kConflictingKeys = "\xff\xff/transaction/conflicting_keys/";
constexpr std::string_view kReadConflicts = "\xff\xff/transaction/read_conflict_range/";
constexpr std::string_view kWriteConflicts = "\xff\xff/transaction/write_conflict_range/";

}  // namespace

struct ClusterTransaction::Pending {
  ClusterTransaction* tr;
  CommitCallback done;
  std::shared_ptr<Async> async;
};

ClusterTransaction::ClusterTransaction(std::shared_ptr<ClusterDatabase> db)
    : db_(std::move(db)),
      api_(db_->api()),
      timeout_(db_->default_timeout()),
      deadline_(base::deadline_after(started_, timeout_)),
      versionstamp_future_(api_, nullptr) {
  if (const fdb_error_t e = api_.database_create_transaction(db_->handle(), &tr_)) {
    throw_fdb(api_, e, "creating a transaction");
  }
}

ClusterTransaction::~ClusterTransaction() {
  if (async_ != nullptr) {
    // A commit in flight when the network stopped never calls back: not waited for then.
    Async& a = *async_;
    base::MutexLock lock(a.mu);
    while (a.in_flight != 0 && a.running_on != std::this_thread::get_id() && !network_stopped()) {
      a.cv.wait(lock);
    }
  }
  versionstamp_future_.reset();
  fail_watches(static_cast<int>(ErrorCode::transaction_cancelled));
  if (!network_stopped()) api_.transaction_destroy(tr_);
}

// ---- Helpers ----------------------------------------------------------------------

void ClusterTransaction::check_usable() const {
  if (visiting_) [[unlikely]] {
    throw Error(ErrorCode::client_invalid_operation,
                "a visit_range visitor may not use the transaction it is visiting");
  }
  if (ended_ == ErrorCode::transaction_cancelled) [[unlikely]] {
    throw Error(ErrorCode::transaction_cancelled, "the transaction was cancelled; reset it");
  }
  if (ended_ == ErrorCode::transaction_timed_out) [[unlikely]] {
    throw Error(ended_, timeout_message());
  }
  if (ended_ != ErrorCode::success) [[unlikely]] {
    throw Error(ended_, "the transaction has committed (or is committing); reset it to reuse it");
  }
  // FoundationDB fails reads and the commit of a timed-out transaction itself, and a write
  // only at the commit: strata's writes fail at once.
  if (timeout_.count() > 0 && Clock::now() >= deadline_) [[unlikely]] {
    throw Error(ErrorCode::transaction_timed_out, timeout_message());
  }
}

std::string ClusterTransaction::timeout_message() const {
  return "timeout of " + std::to_string(timeout_.count()) + " ms expired";
}

void ClusterTransaction::touch_read() { read_version_fixed_ = true; }

void ClusterTransaction::fail_if(fdb_error_t code, const char* what) const {
  if (code == 0) [[likely]]
    return;
  if (code == static_cast<int>(ErrorCode::transaction_timed_out)) {
    throw Error(ErrorCode::transaction_timed_out, std::string(what) + ": " + timeout_message());
  }
  throw_fdb(api_, code, what);
}

void ClusterTransaction::set_option(int option, std::optional<std::int64_t> value) const {
  fdb_error_t e = 0;
  if (value) {
    const std::string v = int_option(*value);
    e = api_.transaction_set_option(tr_, option, bytes(v), length(v));
  } else {
    e = api_.transaction_set_option(tr_, option, nullptr, 0);
  }
  fail_if(e, "setting a transaction option");
}

// ---- Reads ------------------------------------------------------------------------

std::optional<std::string> ClusterTransaction::get(std::string_view key, bool snapshot) {
  std::string value;
  if (!get(key, snapshot, value)) return std::nullopt;
  return value;
}

bool ClusterTransaction::get(std::string_view key, bool snapshot, std::string& out) {
  check_usable();
  base::check_readable_key(key, /*metadata_version_ok=*/true);
  check_may_block("get");
  touch_read();
  Future f(api_, api_.transaction_get(tr_, bytes(key), length(key), snapshot ? 1 : 0));
  fail_if(f.wait_code(), "get");
  fdb_bool_t present = 0;
  const std::uint8_t* value = nullptr;
  int n = 0;
  fail_if(api_.future_get_value(f.get(), &present, &value, &n), "get");
  if (present == 0) {
    out.clear();
    return false;
  }
  out.assign(view(value, n));
  return true;
}

template <class Row>
bool ClusterTransaction::read_range(std::string_view begin, std::string_view end,
                                    RangeOptions options, bool snapshot, Row&& row) {
  check_usable();
  base::check_range(begin, end, /*check_order=*/false);
  if (options.limit < 0 || options.target_bytes < 0) {
    throw Error(ErrorCode::range_limits_invalid,
                "limit " + std::to_string(options.limit) + " or target_bytes " +
                    std::to_string(options.target_bytes) + " is negative");
  }
  if (begin >= end) return false;
  check_may_block("get_range");
  touch_read();
  // Batch after batch, each from just past the last row of the one before, asking for
  // what is left of the limits. FoundationDB counts a row's bytes with some overhead, so
  // it stops at or before the row strata's target_bytes stops after; the next batch goes
  // on from there.
  int rows_left = options.limit;
  std::int64_t bytes_left = options.target_bytes;
  const int mode = options.limit > 0 ? FDB_STREAMING_MODE_EXACT : FDB_STREAMING_MODE_WANT_ALL;
  std::string last;
  bool first = true;
  for (int iteration = 1;; ++iteration) {
    std::string_view b = begin, e = end;
    fdb_bool_t b_or_equal = 0;
    if (!first && !options.reverse) {
      b = last;
      b_or_equal = 1;  // first_greater_than(last)
    } else if (!first) {
      e = last;  // first_greater_or_equal(last): rows before it
    }
    Future f(api_, api_.transaction_get_range(tr_, bytes(b), length(b), b_or_equal, 1, bytes(e),
                                              length(e), 0, 1, rows_left,
                                              static_cast<int>(bytes_left), mode, iteration,
                                              snapshot ? 1 : 0, options.reverse ? 1 : 0));
    fail_if(f.wait_code(), "get_range");
    const FDBKeyValue* kv = nullptr;
    int count = 0;
    fdb_bool_t more = 0;
    fail_if(api_.future_get_keyvalue_array(f.get(), &kv, &count, &more), "get_range");
    for (int i = 0; i < count; ++i) {
      const std::string_view key = view(kv[i].key, kv[i].key_length);
      const std::string_view value = view(kv[i].value, kv[i].value_length);
      row(key, value);
      // A limit ends the read: "more" is FoundationDB's for the batch's last row, and true
      // before it (the batch holds rows past this one).
      const bool last_of_batch = i == count - 1;
      if (rows_left > 0 && --rows_left == 0) return !last_of_batch || more != 0;
      if (options.target_bytes > 0) {
        bytes_left -= static_cast<std::int64_t>(key.size() + value.size());
        if (bytes_left <= 0) return !last_of_batch || more != 0;
      }
    }
    if (more == 0 || count == 0) return false;
    last.assign(view(kv[count - 1].key, kv[count - 1].key_length));
    first = false;
  }
}

RangeResult ClusterTransaction::get_range(std::string_view begin, std::string_view end,
                                          RangeOptions options, bool snapshot) {
  RangeResult rows;
  rows.more = read_range(begin, end, options, snapshot,
                         [&rows](std::string_view key, std::string_view value) {
                           rows.push_back({std::string(key), std::string(value)});
                         });
  return rows;
}

std::size_t ClusterTransaction::visit_range(std::string_view begin, std::string_view end,
                                            RangeOptions options, bool snapshot,
                                            RowVisitorRef visit) {
  std::size_t n = 0;
  bool visitor_threw = false;
  try {
    (void)read_range(begin, end, options, snapshot,
                     [&](std::string_view key, std::string_view value) {
                       visiting_ = true;
                       try {
                         visit(key, value);
                       } catch (...) {
                         visiting_ = false;
                         visitor_threw = true;
                         throw;
                       }
                       visiting_ = false;
                       ++n;
                     });
  } catch (...) {
    // The visitor saw rows the read's conflict range may not reach: a serializable read
    // then conflicts on the whole range, as strata's does.
    if (visitor_threw && !snapshot && ended_ == ErrorCode::success) {
      (void)api_.transaction_add_conflict_range(tr_, bytes(begin), length(begin), bytes(end),
                                                length(end), FDB_CONFLICT_RANGE_TYPE_READ);
    }
    throw;
  }
  return n;
}

// ---- Writes -----------------------------------------------------------------------

void ClusterTransaction::set(std::string_view key, std::string_view value) {
  // FoundationDB's set refuses the metadata version key, and hands a special key to its
  // own space, before it takes the flag.
  const bool unconflicted =
      key != base::kMetadataVersionKey && key < base::kSystemKeyEnd && take_next_write_flag();
  check_usable();
  base::check_writable_key(key);
  base::check_value(value);
  written_ = true;
  pass_next_write_flag(unconflicted);
  api_.transaction_set(tr_, bytes(key), length(key), bytes(value), length(value));
}

void ClusterTransaction::clear(std::string_view key) {
  const bool unconflicted = take_next_write_flag();
  check_usable();
  base::check_readable_key(key);
  // FoundationDB 7.4 clears, and conflicts on, keys up to its read limit.
  if (key.size() > base::kReadKeySizeLimit) return;
  written_ = true;
  pass_next_write_flag(unconflicted);
  api_.transaction_clear(tr_, bytes(key), length(key));
}

void ClusterTransaction::clear_range(std::string_view begin, std::string_view end) {
  const bool unconflicted = take_next_write_flag();
  check_usable();
  base::check_range(begin, end, /*check_order=*/true);
  // FoundationDB records nothing for a range empty once its ends are cut.
  if (!base::clears_nothing(begin, end)) written_ = true;
  pass_next_write_flag(unconflicted);
  api_.transaction_clear_range(tr_, bytes(begin), length(begin), bytes(end), length(end));
}

void ClusterTransaction::atomic_op(MutationType type, std::string_view key,
                                   std::string_view param) {
  const bool unconflicted = take_next_write_flag();
  check_usable();
  // strata's checks, in FoundationDB's order (engine/transaction_impl.cpp).
  if (key >= base::kSystemKeyStart) [[unlikely]] {
    if (key != base::kMetadataVersionKey) base::check_readable_key(key);
    if (type != MutationType::set_versionstamped_value || param != base::kMetadataVersionOperand) {
      base::refuse_metadata_version_write();
    }
  }
  const int code = mutation_code(type);
  base::check_key_size(key);
  base::check_value(param);
  if (type == MutationType::set_versionstamped_key) (void)engine::split_stamp_operand(key, "key");
  if (type == MutationType::set_versionstamped_value) {
    (void)engine::split_stamp_operand(param, "value");
  }
  written_ = true;
  pass_next_write_flag(unconflicted);
  api_.transaction_atomic_op(tr_, bytes(key), length(key), bytes(param), length(param), code);
}

std::shared_ptr<ClusterWatch> ClusterTransaction::watch(std::string_view key) {
  check_usable();
  base::check_readable_key(key, /*metadata_version_ok=*/true);
  if (!ryw_) {
    throw Error(ErrorCode::watches_disabled,
                "watches need read-your-writes, which this transaction turned off");
  }
  base::check_key_size(key);  // refused before the read conflict, as the engine's watch
  // strata's watch reads the key serializably: the same read conflict, and a read.
  touch_read();
  add_read_conflict_key(key);
  std::shared_ptr<ClusterWatch> w =
      ClusterWatch::make(api_, api_.transaction_watch(tr_, bytes(key), length(key)));
  watches_.push_back(w);
  return w;
}

void ClusterTransaction::add_read_conflict_range(std::string_view begin, std::string_view end) {
  check_usable();
  if (!base::is_metadata_version_range(begin, end)) base::check_range(begin, end, true);
  if (begin == end) return;
  // Reads nothing: FoundationDB takes no read version for it (engine::TransactionImpl).
  fail_if(api_.transaction_add_conflict_range(tr_, bytes(begin), length(begin), bytes(end),
                                              length(end), FDB_CONFLICT_RANGE_TYPE_READ),
          "add_read_conflict_range");
}

void ClusterTransaction::add_read_conflict_key(std::string_view key) {
  check_usable();
  base::check_readable_key(key, /*metadata_version_ok=*/true);
  // [key, key + '\0'), built on the stack for keys of common sizes.
  constexpr std::size_t kOnStack = 128;
  char buffer[kOnStack];
  std::string on_heap;
  std::string_view end;
  if (key.size() < kOnStack) {
    std::copy(key.begin(), key.end(), buffer);
    buffer[key.size()] = '\0';
    end = {buffer, key.size() + 1};
  } else {
    on_heap = base::key_after(key);
    end = on_heap;
  }
  fail_if(api_.transaction_add_conflict_range(tr_, bytes(key), length(key), bytes(end), length(end),
                                              FDB_CONFLICT_RANGE_TYPE_READ),
          "add_read_conflict_key");
}

void ClusterTransaction::add_write_conflict_range(std::string_view begin, std::string_view end) {
  check_usable();
  base::check_range(begin, end, /*check_order=*/true);
  if (base::clears_nothing(begin, end)) return;  // FoundationDB drops it once cut
  written_ = true;
  fail_if(api_.transaction_add_conflict_range(tr_, bytes(begin), length(begin), bytes(end),
                                              length(end), FDB_CONFLICT_RANGE_TYPE_WRITE),
          "add_write_conflict_range");
}

// ---- Versions and options -----------------------------------------------------------

Version ClusterTransaction::read_version() {
  check_usable();
  check_may_block("read_version");
  touch_read();
  Future f(api_, api_.transaction_get_read_version(tr_));
  fail_if(f.wait_code(), "read_version");
  std::int64_t v = 0;
  fail_if(api_.future_get_int64(f.get(), &v), "read_version");
  return v;
}

void ClusterTransaction::set_read_version(Version version) {
  check_usable();
  if (read_version_fixed_) {
    throw Error(ErrorCode::read_version_already_set, "the read version is already fixed");
  }
  read_version_fixed_ = true;
  api_.transaction_set_read_version(tr_, version);
}

void ClusterTransaction::set_read_your_writes(bool enabled) {
  check_usable();
  // Writes made with it off bypass FoundationDB's write map (engine::TransactionImpl).
  if (read_version_fixed_ || (written_ && ryw_)) {
    throw Error(ErrorCode::client_invalid_operation,
                "read-your-writes can be changed only before the first read or write");
  }
  if (enabled == ryw_) return;
  if (enabled) {
    // FoundationDB has no option that turns it back on: reset() does.
    throw Error(ErrorCode::client_invalid_operation,
                "on a cluster, read-your-writes is turned back on by reset() only");
  }
  set_option(FDB_TR_OPTION_READ_YOUR_WRITES_DISABLE, std::nullopt);
  ryw_ = false;
}

void ClusterTransaction::set_snapshot_read_your_writes(bool enabled) {
  set_option(enabled ? FDB_TR_OPTION_SNAPSHOT_RYW_ENABLE : FDB_TR_OPTION_SNAPSHOT_RYW_DISABLE,
             std::nullopt);
  snapshot_ryw_ = enabled;
}

void ClusterTransaction::set_next_write_no_write_conflict_range() {
  next_write_unconflicted_ = true;
}

bool ClusterTransaction::take_next_write_flag() {
  return std::exchange(next_write_unconflicted_, false);
}

void ClusterTransaction::pass_next_write_flag(bool taken) const {
  if (taken) set_option(FDB_TR_OPTION_NEXT_WRITE_NO_WRITE_CONFLICT_RANGE, std::nullopt);
}

void ClusterTransaction::set_report_conflicting_keys(bool enabled) {
  // FoundationDB's option only turns reporting on; off, conflicting_ranges() reads nothing.
  if (enabled && !report_conflicts_)
    set_option(FDB_TR_OPTION_REPORT_CONFLICTING_KEYS, std::nullopt);
  report_conflicts_ = enabled;
}

std::vector<KeyRange> ClusterTransaction::special_ranges(std::string_view prefix) const {
  check_may_block("reading the conflict ranges");
  const std::string end = std::string(prefix) + "\xff";
  std::vector<KeyValue> rows;
  int iteration = 1;
  std::string begin(prefix);
  fdb_bool_t begin_or_equal = 0;
  for (;;) {
    Future f(api_, api_.transaction_get_range(tr_, bytes(begin), length(begin), begin_or_equal, 1,
                                              bytes(end), length(end), 0, 1, 0, 0,
                                              FDB_STREAMING_MODE_WANT_ALL, iteration++, 1, 0));
    fail_if(f.wait_code(), "reading the conflict ranges");
    const FDBKeyValue* kv = nullptr;
    int count = 0;
    fdb_bool_t more = 0;
    fail_if(api_.future_get_keyvalue_array(f.get(), &kv, &count, &more),
            "reading the conflict ranges");
    for (int i = 0; i < count; ++i) {
      rows.push_back({std::string(view(kv[i].key, kv[i].key_length)),
                      std::string(view(kv[i].value, kv[i].value_length))});
    }
    if (more == 0 || count == 0) break;
    begin = rows.back().key;
    begin_or_equal = 1;
  }
  return decode_ranges(rows, prefix);
}

std::vector<KeyRange> ClusterTransaction::conflicting_ranges() const {
  if (!report_conflicts_ || !conflicted_) return {};
  return special_ranges(kConflictingKeys);
}

std::vector<KeyRange> ClusterTransaction::read_conflict_ranges() const {
  return special_ranges(kReadConflicts);
}

std::vector<KeyRange> ClusterTransaction::write_conflict_ranges() const {
  return special_ranges(kWriteConflicts);
}

std::size_t ClusterTransaction::approximate_size() const {
  check_may_block("approximate_size");
  Future f(api_, api_.transaction_get_approximate_size(tr_));
  fail_if(f.wait_code(), "approximate_size");
  std::int64_t n = 0;
  fail_if(api_.future_get_int64(f.get(), &n), "approximate_size");
  return static_cast<std::size_t>(n);
}

// ---- Commit -----------------------------------------------------------------------

void ClusterTransaction::fail_watches(fdb_error_t code) {
  std::vector<std::weak_ptr<ClusterWatch>> watches;
  watches.swap(watches_);
  fail(watches, code);
}

void ClusterTransaction::fail(const std::vector<std::weak_ptr<ClusterWatch>>& watches,
                              fdb_error_t code) {
  for (const auto& weak : watches) {
    if (const std::shared_ptr<ClusterWatch> w = weak.lock()) w->fail(code);
  }
}

std::vector<std::weak_ptr<ClusterWatch>> ClusterTransaction::record_commit(fdb_error_t code) {
  ended_ = ErrorCode::used_during_commit;
  std::vector<std::weak_ptr<ClusterWatch>> failed;
  failed.swap(watches_);  // armed by the commit, or failed with it
  if (code == 0) {
    // Asked for only when committed_version() is: strata's libfdb_c.so keeps a version it
    // hands out readable for the MVCC window, and with it what the version can see.
    committed_ = true;
    committed_version_ = kVersionNotAsked;
    if (written_) db_->count_commit();  // FoundationDB gives a version to these only
    return {};
  }
  if (code == static_cast<int>(ErrorCode::not_committed)) {
    conflicted_ = true;
    db_->count_conflict();
  }
  return failed;
}

Error ClusterTransaction::commit_error(fdb_error_t code) const {
  if (code == static_cast<int>(ErrorCode::transaction_too_large)) {
    return Error(ErrorCode::transaction_too_large,
                 "the transaction exceeds its size limit of " +
                     std::to_string(size_limit_.value_or(base::kTransactionSizeLimit)) + " bytes");
  }
  if (code != static_cast<int>(ErrorCode::not_committed) || !report_conflicts_ ||
      on_network_thread()) {
    return fdb_error(api_, code, "commit");
  }
  // As strata's: the conflicting ranges, the first three, in the message.
  std::string message =
      "a transaction committed after this one's read version wrote a range it read";
  try {
    const std::vector<KeyRange> ranges = conflicting_ranges();
    constexpr std::size_t kShown = 3;
    if (!ranges.empty()) message += ": ";
    for (std::size_t i = 0; i < ranges.size() && i < kShown; ++i) {
      if (i > 0) message += ", ";
      message +=
          "[" + base::quote_key(ranges[i].begin) + ", " + base::quote_key(ranges[i].end) + ")";
    }
    if (ranges.size() > kShown)
      message += " and " + std::to_string(ranges.size() - kShown) + " more";
  } catch (const Error&) {
    // The report could not be read: the error without it.
  }
  return Error(ErrorCode::not_committed, message);
}

void ClusterTransaction::commit() {
  check_usable();
  check_may_block("commit");
  // The versionstamp is asked for before the commit, as the C API requires.
  versionstamp_future_ = Future(api_, api_.transaction_get_versionstamp(tr_));
  Future f(api_, api_.transaction_commit(tr_));
  const fdb_error_t code = f.wait_code();
  const std::vector<std::weak_ptr<ClusterWatch>> failed = record_commit(code);
  if (code == 0) return;
  const Error error = commit_error(code);
  fail(failed, code);
  throw error;
}

void ClusterTransaction::commit_async(CommitCallback done) {
  try {
    check_usable();
    check_network_running("commit_async");  // its callback could never run
  } catch (const Error& e) {
    done(&e);
    return;
  }
  if (async_ == nullptr) async_ = std::make_shared<Async>();
  versionstamp_future_ = Future(api_, api_.transaction_get_versionstamp(tr_));
  auto pending = std::make_unique<Pending>(Pending{this, std::move(done), async_});
  {
    Async& a = *async_;
    base::MutexLock lock(a.mu);
    ++a.in_flight;
  }
  ended_ = ErrorCode::used_during_commit;
  FDBFuture* f = api_.transaction_commit(tr_);
  Pending* raw = pending.release();
  if (const fdb_error_t e = api_.future_set_callback(f, &on_commit_ready, raw)) {
    // Not expected from a valid future: finish here, as the callback would.
    const InFlightDone settle{async_};
    api_.future_destroy(f);
    std::unique_ptr<Pending> own(raw);
    const std::vector<std::weak_ptr<ClusterWatch>> failed = record_commit(e);
    const Error error = fdb_error(api_, e, "commit");
    fail(failed, e);
    own->done(&error);
  }
}

ClusterTransaction::InFlightDone::~InFlightDone() {
  Async& a = *async;
  base::MutexLock lock(a.mu);
  --a.in_flight;
  a.cv.notify_all();
}

void ClusterTransaction::on_commit_ready(FDBFuture* f, void* parameter) noexcept {
  std::unique_ptr<Pending> pending(static_cast<Pending*>(parameter));
  const std::shared_ptr<Async> async = std::move(pending->async);  // outlives the transaction
  const InFlightDone settle{async};  // on every path, or the destructor would wait forever
  ClusterTransaction& t = *pending->tr;
  const FdbApi& api = t.api_;
  const fdb_error_t code = api.future_get_error(f);
  api.future_destroy(f);
  // Recording the outcome and building its error may throw (out of memory): that reaches
  // `done` as the commit's error rather than unwinding into FoundationDB's C code.
  const CommitCallback done = std::move(pending->done);
  std::vector<std::weak_ptr<ClusterWatch>> failed;
  std::optional<Error> error;
  try {
    failed = t.record_commit(code);
    if (code != 0) error.emplace(t.commit_error(code));
  } catch (const Error& e) {
    error.emplace(e);
  } catch (...) {
    error.emplace(code != 0 ? static_cast<ErrorCode>(code) : ErrorCode::internal_error,
                  std::string());
  }
  // From here the watches' listeners and `done` may destroy the transaction, on this thread,
  // without its destructor waiting for this commit: nothing of `t` is used after this.
  std::thread::id before;
  {
    Async& a = *async;
    base::MutexLock lock(a.mu);
    before = std::exchange(a.running_on, std::this_thread::get_id());
  }
  struct RestoreRunningOn {
    RestoreRunningOn(Async& async, std::thread::id id) : a(async), before(id) {}
    RestoreRunningOn(const RestoreRunningOn&) = delete;
    RestoreRunningOn& operator=(const RestoreRunningOn&) = delete;
    ~RestoreRunningOn() {
      base::MutexLock lock(a.mu);
      a.running_on = before;
    }
    Async& a;
    std::thread::id before;
  } restore(*async, before);
  fail(failed, code);
  done(error ? &*error : nullptr);
}

Version ClusterTransaction::committed_version() const {
  if (!committed_) {
    throw Error(ErrorCode::client_invalid_operation,
                "committed_version() is known only after a successful commit");
  }
  if (committed_version_ == kVersionNotAsked) {
    std::int64_t v = -1;
    if (api_.transaction_get_committed_version(tr_, &v) != 0) v = -1;
    committed_version_ = v;
  }
  return committed_version_;
}

std::string ClusterTransaction::versionstamp() const {
  if (!committed_) {
    throw Error(ErrorCode::client_invalid_operation,
                "versionstamp() is known only after a successful commit");
  }
  if (!written_) {
    throw Error(ErrorCode::no_commit_version,
                "a read-only transaction has no commit version and so no versionstamp");
  }
  if (!versionstamp_) {
    check_may_block("versionstamp");
    fail_if(versionstamp_future_.wait_code(), "versionstamp");
    const std::uint8_t* key = nullptr;
    int n = 0;
    fail_if(api_.future_get_key(versionstamp_future_.get(), &key, &n), "versionstamp");
    versionstamp_.emplace(view(key, n));
  }
  return *versionstamp_;
}

// ---- Retry, reset, cancel, timeout --------------------------------------------------

Error ClusterTransaction::retry_error(ErrorCode code) const {
  switch (code) {
    case ErrorCode::transaction_cancelled:
      return Error(code, "the transaction was cancelled; reset it");
    case ErrorCode::transaction_timed_out:
      return Error(code, timeout_message());
    case ErrorCode::client_invalid_operation:
      return Error(code, "on_error was given success, not an error");
    default:
      return fdb_error(api_, static_cast<fdb_error_t>(code), "on_error");
  }
}

RetryStep ClusterTransaction::retry_step(ErrorCode error, GiveUp give_up) {
  if (visiting_) check_usable();
  if (const ErrorCode ended = ended_by(); ended != ErrorCode::success) return {.error = ended};
  if (error == ErrorCode::success) return {.error = ErrorCode::client_invalid_operation};
  if (give_up == GiveUp::restart) {
    throw Error(ErrorCode::client_invalid_operation,
                "GiveUp::restart is FoundationDB's on_error before API version 610; a cluster's "
                "client (API version " +
                    std::to_string(api_.api_version) + ") cancels the transaction");
  }
  check_may_block("on_error");
  fail_watches(static_cast<int>(ErrorCode::transaction_cancelled));
  // FoundationDB's on_error decides, counts the retry and sleeps the backoff before its
  // future is ready: the wait happens here, and the step's delay is 0.
  Future f(api_, api_.transaction_on_error(tr_, static_cast<fdb_error_t>(error)));
  const fdb_error_t code = f.wait_code();
  committed_ = false;
  conflicted_ = false;
  committed_version_ = -1;
  versionstamp_future_.reset();
  versionstamp_.reset();
  read_version_fixed_ = false;
  written_ = false;
  if (code != 0) {
    // The error given back (not retryable, past the retry limit) or the timeout reached
    // in the backoff: from API version 610 on, FoundationDB's client leaves the transaction
    // cancelled, or timed out, until reset().
    const bool timed_out = code == static_cast<int>(ErrorCode::transaction_timed_out) &&
                           error != ErrorCode::transaction_timed_out;
    ended_ = timed_out ? ErrorCode::transaction_timed_out : ErrorCode::transaction_cancelled;
    return {.error = static_cast<ErrorCode>(code), .cancelled = !timed_out};
  }
  // Reset for the next attempt: the options that are not persistent return to a new
  // transaction's, in FoundationDB's client as here.
  ended_ = ErrorCode::success;
  ryw_ = true;
  snapshot_ryw_ = true;
  report_conflicts_ = false;
  next_write_unconflicted_ = false;
  size_limit_.reset();
  return {.reset = true};
}

void ClusterTransaction::on_error(const Error& e) {
  const RetryStep step = retry_step(e.error_code(), GiveUp::cancel);
  if (step.error == ErrorCode::success) return;
  if (step.error == e.error_code()) throw e;  // the error given back, not a new one
  throw retry_error(step.error);
}

ErrorCode ClusterTransaction::ended_by() const {
  if (ended_ == ErrorCode::transaction_cancelled || ended_ == ErrorCode::transaction_timed_out) {
    return ended_;
  }
  if (timeout_.count() > 0 && Clock::now() >= deadline_) return ErrorCode::transaction_timed_out;
  return ErrorCode::success;
}

std::chrono::steady_clock::time_point ClusterTransaction::timeout_deadline() const {
  return timeout_.count() > 0 ? deadline_ : Clock::time_point::max();
}

void ClusterTransaction::reset() {
  if (visiting_) check_usable();
  fail_watches(static_cast<int>(ErrorCode::transaction_cancelled));
  api_.transaction_reset(tr_);
  ended_ = ErrorCode::success;
  committed_ = false;
  conflicted_ = false;
  committed_version_ = -1;
  versionstamp_future_.reset();
  versionstamp_.reset();
  read_version_fixed_ = false;
  written_ = false;
  ryw_ = true;
  snapshot_ryw_ = true;
  report_conflicts_ = false;
  next_write_unconflicted_ = false;
  size_limit_.reset();
  timeout_ = db_->default_timeout();
  started_ = Clock::now();
  deadline_ = base::deadline_after(started_, timeout_);
}

void ClusterTransaction::cancel() {
  if (visiting_) check_usable();
  fail_watches(static_cast<int>(ErrorCode::transaction_cancelled));
  // A timeout already past stays what ended the transaction (ended_by()).
  if (ended_by() == ErrorCode::success) ended_ = ErrorCode::transaction_cancelled;
  api_.transaction_cancel(tr_);
}

void ClusterTransaction::set_timeout(std::chrono::milliseconds timeout) {
  if (visiting_) check_usable();
  if (timeout.count() < 0) {
    throw Error(ErrorCode::invalid_argument,
                "timeout of " + std::to_string(timeout.count()) + " ms is negative");
  }
  // Once the timeout has passed it has ended the transaction: only reset() undoes that.
  if (ended_by() == ErrorCode::transaction_timed_out) return;
  set_option(FDB_TR_OPTION_TIMEOUT, clamp_ms(timeout));
  timeout_ = timeout;
  deadline_ = base::deadline_after(started_, timeout_);
}

void ClusterTransaction::set_retry_limit(int limit) {
  if (limit < -1) {
    throw Error(ErrorCode::invalid_argument,
                "retry limit " + std::to_string(limit) + " is below -1 (no limit)");
  }
  set_option(FDB_TR_OPTION_RETRY_LIMIT, limit);
}

void ClusterTransaction::set_size_limit(std::size_t bytes) {
  if (bytes < 32 || bytes > base::kTransactionSizeLimit) {
    throw Error(ErrorCode::invalid_argument,
                "size limit " + std::to_string(bytes) + " is outside 32 .. 10,000,000 bytes");
  }
  set_option(FDB_TR_OPTION_SIZE_LIMIT, static_cast<std::int64_t>(bytes));
  size_limit_ = bytes;
}

void ClusterTransaction::set_max_retry_delay(std::chrono::milliseconds delay) {
  if (delay.count() < 0) {
    throw Error(ErrorCode::invalid_argument,
                "maximum retry delay of " + std::to_string(delay.count()) + " ms is negative");
  }
  set_option(FDB_TR_OPTION_MAX_RETRY_DELAY, clamp_ms(delay));
}

}  // namespace strata::cluster
