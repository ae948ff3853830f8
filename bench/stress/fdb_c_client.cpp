#include "fdb_c_client.hpp"

#include <atomic>
#include <cstdio>
#include <stdexcept>

namespace stress::fdbc {
namespace {

constexpr int kApiVersion = 720;
constexpr fdb_error_t kNotCommitted = 1020;

std::atomic<std::uint64_t> conflict_count{0};

const uint8_t* bytes(std::string_view s) { return reinterpret_cast<const uint8_t*>(s.data()); }
int length(std::string_view s) { return static_cast<int>(s.size()); }

}  // namespace

// ---- Network ----------------------------------------------------------------------------

Network::Network() {
  check(fdb_select_api_version_impl(kApiVersion, kApiVersion));
  check(fdb_setup_network());
  thread_ = std::thread([] {
    if (fdb_error_t e = fdb_run_network()) {
      std::fprintf(stderr, "strata-stress: fdb_run_network: %s\n", fdb_get_error(e));
    }
  });
}

Network::~Network() {
  if (fdb_error_t e = fdb_stop_network()) {
    std::fprintf(stderr, "strata-stress: fdb_stop_network: %s\n", fdb_get_error(e));
  }
  thread_.join();
}

// ---- Future -----------------------------------------------------------------------------

Future& Future::operator=(Future&& other) noexcept {
  if (this != &other) {
    if (f_ != nullptr) fdb_future_destroy(f_);
    f_ = std::exchange(other.f_, nullptr);
  }
  return *this;
}

void Future::wait() {
  check(fdb_future_block_until_ready(f_));
  check(fdb_future_get_error(f_));
}

// The getters return the future's error themselves: no fdb_future_get_error first.
std::int64_t Future::get_int64() {
  check(fdb_future_block_until_ready(f_));
  int64_t value = 0;
  check(fdb_future_get_int64(f_, &value));
  return value;
}

std::string Future::get_key() {
  check(fdb_future_block_until_ready(f_));
  const uint8_t* key = nullptr;
  int key_length = 0;
  check(fdb_future_get_key(f_, &key, &key_length));
  return std::string(reinterpret_cast<const char*>(key), static_cast<std::size_t>(key_length));
}

std::optional<std::string> Future::get_value() {
  check(fdb_future_block_until_ready(f_));
  fdb_bool_t present = 0;
  const uint8_t* value = nullptr;
  int value_length = 0;
  check(fdb_future_get_value(f_, &present, &value, &value_length));
  if (!present) return std::nullopt;
  return std::string(reinterpret_cast<const char*>(value), static_cast<std::size_t>(value_length));
}

void Future::get_rows(const FDBKeyValue** rows, int* count, bool* more) {
  check(fdb_future_block_until_ready(f_));
  fdb_bool_t more_flag = 0;
  check(fdb_future_get_keyvalue_array(f_, rows, count, &more_flag));
  *more = more_flag != 0;
}

// ---- RangeBatch ------------------------------------------------------------------------

RangeBatch::RangeBatch(Future future) : future_(std::move(future)) {
  future_.get_rows(&rows_, &count_, &more_);
}

// ---- Transaction ------------------------------------------------------------------------

Transaction::Transaction(Transaction&& other) noexcept
    : tr_(std::exchange(other.tr_, nullptr)), stamp_(std::move(other.stamp_)) {
  other.stamp_.reset();
}

Transaction& Transaction::operator=(Transaction&& other) noexcept {
  if (this != &other) {
    stamp_.reset();
    if (tr_ != nullptr) fdb_transaction_destroy(tr_);
    tr_ = std::exchange(other.tr_, nullptr);
    stamp_ = std::move(other.stamp_);
    other.stamp_.reset();
  }
  return *this;
}

Transaction::~Transaction() {
  stamp_.reset();
  if (tr_ != nullptr) fdb_transaction_destroy(tr_);
}

std::optional<std::string> Transaction::get(std::string_view key, bool snapshot) {
  return Future(fdb_transaction_get(tr_, bytes(key), length(key), snapshot)).get_value();
}

RangeBatch Transaction::get_range_batch(std::string_view begin, std::string_view end, int limit,
                                        bool reverse, bool snapshot) {
  return RangeBatch(Future(
      fdb_transaction_get_range(tr_, bytes(begin), length(begin), 0, 1, bytes(end), length(end), 0,
                                1, limit, 0, FDB_STREAMING_MODE_EXACT, 0, snapshot, reverse)));
}

void Transaction::add_read_conflict_range(std::string_view begin, std::string_view end) {
  check(fdb_transaction_add_conflict_range(tr_, bytes(begin), length(begin), bytes(end),
                                           length(end), FDB_CONFLICT_RANGE_TYPE_READ));
}

std::vector<strata::KeyValue> Transaction::get_range(std::string_view begin, std::string_view end,
                                                     int limit, bool reverse, bool snapshot) {
  std::vector<strata::KeyValue> rows;
  // The selectors: first_greater_or_equal(begin) and first_greater_or_equal(end) at first;
  // a later batch starts at first_greater_than(last row) going forward, or ends at
  // first_greater_or_equal(last row) going backward.
  std::string last;  // the last row's key, once a batch has more after it
  fdb_bool_t begin_or_equal = 0;
  for (int iteration = 1;; ++iteration) {
    int wanted = limit > 0 ? limit - static_cast<int>(rows.size()) : 0;
    RangeBatch batch(Future(fdb_transaction_get_range(
        tr_, bytes(begin), length(begin), begin_or_equal, 1, bytes(end), length(end), 0, 1, wanted,
        0, limit > 0 ? FDB_STREAMING_MODE_EXACT : FDB_STREAMING_MODE_WANT_ALL, iteration, snapshot,
        reverse)));
    for (int i = 0; i < batch.size(); ++i) {
      rows.push_back({std::string(batch.key(i)), std::string(batch.value(i))});
    }
    if (!batch.more() || batch.size() == 0 ||
        (limit > 0 && rows.size() >= static_cast<std::size_t>(limit))) {
      return rows;
    }
    last = rows.back().key;
    if (reverse) {
      end = last;
    } else {
      begin = last;
      begin_or_equal = 1;
    }
  }
}

void Transaction::set(std::string_view key, std::string_view value) {
  fdb_transaction_set(tr_, bytes(key), length(key), bytes(value), length(value));
}

void Transaction::clear(std::string_view key) {
  fdb_transaction_clear(tr_, bytes(key), length(key));
}

void Transaction::clear_range(std::string_view begin, std::string_view end) {
  fdb_transaction_clear_range(tr_, bytes(begin), length(begin), bytes(end), length(end));
}

void Transaction::atomic_op(std::string_view key, std::string_view param, FDBMutationType type) {
  fdb_transaction_atomic_op(tr_, bytes(key), length(key), bytes(param), length(param), type);
}

Future Transaction::watch(std::string_view key) {
  return Future(fdb_transaction_watch(tr_, bytes(key), length(key)));
}

std::int64_t Transaction::read_version() {
  return Future(fdb_transaction_get_read_version(tr_)).get_int64();
}

void Transaction::commit() { Future(fdb_transaction_commit(tr_)).wait(); }

std::int64_t Transaction::committed_version() {
  int64_t version = -1;
  check(fdb_transaction_get_committed_version(tr_, &version));
  return version;
}

void Transaction::request_versionstamp() { stamp_.emplace(fdb_transaction_get_versionstamp(tr_)); }

std::string Transaction::versionstamp() {
  if (!stamp_) throw std::logic_error("versionstamp() without request_versionstamp()");
  return stamp_->get_key();
}

void Transaction::on_error(const Error& e) {
  stamp_.reset();
  if (e.code() == kNotCommitted) conflict_count.fetch_add(1, std::memory_order_relaxed);
  Future(fdb_transaction_on_error(tr_, e.code())).wait();
}

void Transaction::reset() {
  stamp_.reset();
  fdb_transaction_reset(tr_);
}

std::uint64_t Transaction::conflicts() { return conflict_count.load(std::memory_order_relaxed); }

// ---- Database ---------------------------------------------------------------------------

Database::Database(const std::string& directory) {
  if (directory.empty()) {
    check(fdb_create_database(nullptr, &db_));
  } else {
    std::string connection = "strata:" + directory;
    check(fdb_create_database_from_connection_string(connection.c_str(), &db_));
  }
}

Database::~Database() { fdb_database_destroy(db_); }

Transaction Database::create_transaction() {
  FDBTransaction* tr = nullptr;
  check(fdb_database_create_transaction(db_, &tr));
  return Transaction(tr);
}

}  // namespace stress::fdbc
