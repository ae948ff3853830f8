// A small C++ client over FoundationDB's C API (libfdb_c.so, API version 720), used by
// strata-stress --api c. It drives the C API the way a FoundationDB C client does: every
// call that returns an FDBFuture is waited on with fdb_future_block_until_ready, errors are
// fdb_error_t codes, and the retry loop hands each error to fdb_transaction_on_error and
// waits on its future. The wrappers only own handles (RAII) and turn codes into exceptions.
//
// Thread safety: as the C API. A Database may be shared by threads; a Transaction, a Future
// and a Network object belong to one thread at a time.
// Errors: Error(code) for every failed call.
#pragma once

#include <cstdint>
#include <exception>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <type_traits>
#include <utility>
#include <vector>

#include "strata/types.hpp"

#include "fdb_c/fdb_c.h"

namespace stress::fdbc {

// A failed C API call.
class Error : public std::exception {
 public:
  explicit Error(fdb_error_t code) : code_(code) {}
  fdb_error_t code() const noexcept { return code_; }
  const char* what() const noexcept override { return fdb_get_error(code_); }

 private:
  fdb_error_t code_;
};

// Throws Error(code) unless code is 0.
inline void check(fdb_error_t code) {
  if (code != 0) throw Error(code);
}

// The client's network: fdb_select_api_version_impl(720, 720), fdb_setup_network, and
// fdb_run_network on a thread of its own; the destructor stops the network and joins the
// thread. One per process, created before any Database and destroyed after the last.
class Network {
 public:
  Network();
  ~Network();
  Network(const Network&) = delete;
  Network& operator=(const Network&) = delete;

 private:
  std::thread thread_;
};

// An FDBFuture*, destroyed with its owner.
class Future {
 public:
  explicit Future(FDBFuture* f) : f_(f) {}
  Future(Future&& other) noexcept : f_(std::exchange(other.f_, nullptr)) {}
  Future& operator=(Future&& other) noexcept;
  ~Future() {
    if (f_ != nullptr) fdb_future_destroy(f_);
  }

  // Blocks until ready; throws the future's error.
  void wait();
  // Block until ready, then the result of its kind (or throw the future's error).
  std::int64_t get_int64();
  std::string get_key();
  std::optional<std::string> get_value();
  // The rows stay valid while this Future lives.
  void get_rows(const FDBKeyValue** rows, int* count, bool* more);

  FDBFuture* handle() const { return f_; }

 private:
  FDBFuture* f_;
};

// The rows of one get_range request, readable in place while this object lives (it owns
// the future), as a C client reads them.
class RangeBatch {
 public:
  explicit RangeBatch(Future future);  // blocks until the rows are there
  int size() const { return count_; }
  bool more() const { return more_; }
  std::string_view key(int i) const {
    return {reinterpret_cast<const char*>(rows_[i].key),
            static_cast<std::size_t>(rows_[i].key_length)};
  }
  std::string_view value(int i) const {
    return {reinterpret_cast<const char*>(rows_[i].value),
            static_cast<std::size_t>(rows_[i].value_length)};
  }

 private:
  Future future_;
  const FDBKeyValue* rows_ = nullptr;
  int count_ = 0;
  bool more_ = false;
};

// An FDBTransaction*. Reads block on their futures; get() and get_range() return copies.
class Transaction {
 public:
  explicit Transaction(FDBTransaction* tr) : tr_(tr) {}
  Transaction(Transaction&& other) noexcept;
  Transaction& operator=(Transaction&& other) noexcept;
  ~Transaction();

  std::optional<std::string> get(std::string_view key, bool snapshot = false);
  // One request for at most `limit` (> 0) rows of [begin, end), both ends
  // first_greater_or_equal, in EXACT mode.
  RangeBatch get_range_batch(std::string_view begin, std::string_view end, int limit,
                             bool reverse = false, bool snapshot = false);
  // The rows of [begin, end) (both ends first_greater_or_equal). limit > 0: at most that
  // many, in one EXACT request; limit 0: all of them, in WANT_ALL batches, each continuing
  // after the last row while the C API reports more.
  std::vector<strata::KeyValue> get_range(std::string_view begin, std::string_view end,
                                          int limit = 0, bool reverse = false,
                                          bool snapshot = false);
  std::vector<strata::KeyValue> get_range(const strata::KeyRange& range, int limit = 0,
                                          bool reverse = false, bool snapshot = false) {
    return get_range(range.begin, range.end, limit, reverse, snapshot);
  }
  void set(std::string_view key, std::string_view value);
  void clear(std::string_view key);
  void clear_range(std::string_view begin, std::string_view end);
  void atomic_op(std::string_view key, std::string_view param, FDBMutationType type);
  // A read conflict on [begin, end); on [key, key + 00) it is what a serializable read of
  // the key adds.
  void add_read_conflict_range(std::string_view begin, std::string_view end);
  // A watch of `key`; it is armed when this transaction commits.
  Future watch(std::string_view key);

  std::int64_t read_version();
  // Commits and waits for the commit future.
  void commit();
  std::int64_t committed_version();
  // Asks for the coming commit's versionstamp (FoundationDB wants the request before
  // commit); versionstamp() waits for it after commit. Dropped by reset() and on_error().
  void request_versionstamp();
  std::string versionstamp();

  // fdb_transaction_on_error(e.code()) and a wait on its future: returns when the
  // transaction has been reset and backed off for a retry; throws when e is not retryable.
  void on_error(const Error& e);
  void reset();

  // Commits refused with not_committed (1020) and retried through on_error, process-wide.
  static std::uint64_t conflicts();

 private:
  FDBTransaction* tr_;
  std::optional<Future> stamp_;
};

// An FDBDatabase*.
class Database {
 public:
  // fdb_create_database(nullptr): the process's in-memory strata database (docs/fdb_c.md).
  // With a non-empty `directory`: the durable database there, named by the connection
  // string "strata:<directory>".
  explicit Database(const std::string& directory = {});
  Database(const Database&) = delete;
  Database& operator=(const Database&) = delete;
  ~Database();

  Transaction create_transaction();

  // Runs f(Transaction&) and commits; on any C API error calls on_error and, once its
  // future is ready, runs f again. Returns f's result; non-retryable errors propagate.
  template <class F>
  auto run(F&& f) {
    Transaction tr = create_transaction();
    for (;;) {
      try {
        if constexpr (std::is_void_v<std::invoke_result_t<F&, Transaction&>>) {
          f(tr);
          tr.commit();
          return;
        } else {
          auto result = f(tr);
          tr.commit();
          return result;
        }
      } catch (const Error& e) {
        tr.on_error(e);
      }
    }
  }

 private:
  FDBDatabase* db_ = nullptr;
};

}  // namespace stress::fdbc
