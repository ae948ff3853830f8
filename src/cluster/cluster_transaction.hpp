// cluster/cluster_transaction.hpp: a strata::Transaction on a FoundationDB cluster.
//
// Each call is the C API's: a read creates its FDBFuture and blocks on it
// (fdb_future_block_until_ready); commit_async sets a callback on the commit's future.
// Errors are FoundationDB's codes, thrown as strata::Error. Where the C API defers an
// error that strata's C++ API throws at once (a write's key or value size, a key in the
// system range, an inverted range, a stamp's offset, use after commit or cancel, a read
// version already fixed), it is checked here first, with strata's checks, so a program
// sees the same errors in the same places on both backends.
//
// retry_step is FoundationDB's fdb_transaction_on_error: the client decides, counts the
// retry and sleeps its backoff before the future is ready, so retry_step blocks for the
// backoff and returns a delay of 0; it refuses GiveUp::restart (FoundationDB's behaviour
// before API version 610) with client_invalid_operation (2000).
//
// Thread safety: as strata::Transaction. commit_async's callback runs on FoundationDB's
// network thread (or at once on the caller's, when the commit's future is already ready).
#pragma once

#include <chrono>
#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "strata/transaction.hpp"

#include "base/kept_block.hpp"
#include "base/mutex.hpp"
#include "base/thread_annotations.hpp"
#include "cluster/client.hpp"
#include "cluster/future.hpp"

namespace strata::cluster {

class ClusterDatabase;
class ClusterWatch;

class ClusterTransaction final {
 public:
  explicit ClusterTransaction(std::shared_ptr<ClusterDatabase> db);
  // Waits for a commit_async callback in flight (unless called from it), then destroys the
  // FDBTransaction (FoundationDB fails its uncommitted watches with 1025).
  ~ClusterTransaction();
  ClusterTransaction(const ClusterTransaction&) = delete;
  ClusterTransaction& operator=(const ClusterTransaction&) = delete;
  // A thread keeps the memory of the last one it destroyed for the next it makes.
  static void* operator new(std::size_t size) {
    return base::KeptBlock<ClusterTransaction>::take(size);
  }
  static void operator delete(void* p, std::size_t size) noexcept {
    base::KeptBlock<ClusterTransaction>::give_back(p, size);
  }

  std::optional<std::string> get(std::string_view key, bool snapshot);
  bool get(std::string_view key, bool snapshot, std::string& out);
  RangeResult get_range(std::string_view begin, std::string_view end, RangeOptions options,
                        bool snapshot);
  std::size_t visit_range(std::string_view begin, std::string_view end, RangeOptions options,
                          bool snapshot, RowVisitorRef visit);

  void set(std::string_view key, std::string_view value);
  void clear(std::string_view key);
  void clear_range(std::string_view begin, std::string_view end);
  void atomic_op(MutationType type, std::string_view key, std::string_view param);
  std::shared_ptr<ClusterWatch> watch(std::string_view key);

  void add_read_conflict_range(std::string_view begin, std::string_view end);
  void add_read_conflict_key(std::string_view key);
  void add_write_conflict_range(std::string_view begin, std::string_view end);

  Version read_version();
  void set_read_version(Version version);
  void set_read_your_writes(bool enabled);
  void set_snapshot_read_your_writes(bool enabled);
  void set_report_conflicting_keys(bool enabled);
  void set_next_write_no_write_conflict_range();
  std::vector<KeyRange> conflicting_ranges() const;
  std::vector<KeyRange> read_conflict_ranges() const;
  std::vector<KeyRange> write_conflict_ranges() const;
  std::size_t approximate_size() const;

  void commit();
  void commit_async(CommitCallback done);
  Version committed_version() const;
  std::string versionstamp() const;

  void on_error(const Error& e);
  RetryStep retry_step(ErrorCode error, GiveUp give_up);
  ErrorCode ended_by() const;
  std::chrono::steady_clock::time_point timeout_deadline() const;
  void set_retry_limit(int limit);
  void set_size_limit(std::size_t bytes);
  void set_max_retry_delay(std::chrono::milliseconds delay);
  void reset();
  void cancel();
  void set_timeout(std::chrono::milliseconds timeout);

 private:
  // What a commit_async in flight shares with its callback; outlives the transaction when
  // the callback destroys it.
  struct Async {
    base::Mutex mu;
    base::CondVar cv;
    int in_flight GUARDED_BY(mu) = 0;
    std::thread::id running_on GUARDED_BY(mu);  // the thread inside `done`
  };
  // Ends one commit_async in flight (and wakes the destructor) when it goes.
  struct InFlightDone {
    std::shared_ptr<Async> async;
    ~InFlightDone();
  };
  struct Pending;  // one commit_async: the transaction, the callback, the future
  // The commit future's callback, called by FoundationDB's C code: noexcept, as no
  // exception may unwind through it; what fails in it reaches `done` as the commit's error.
  static void on_commit_ready(FDBFuture* f, void* parameter) noexcept;

  using Clock = std::chrono::steady_clock;
  void check_usable() const;
  std::string timeout_message() const;
  void touch_read();  // a read (or what fixes the read version) is about to happen
  void set_option(int option, std::optional<std::int64_t> value) const;
  bool take_next_write_flag();
  void pass_next_write_flag(bool taken) const;
  void fail_if(fdb_error_t code, const char* what) const;
  // The commit's outcome, recorded: counts, committed version, conflicts. Returns the
  // watches the commit fails (its error, when it failed) for the caller to fail with
  // fail(): last, since their listeners may destroy this transaction.
  [[nodiscard]] std::vector<std::weak_ptr<ClusterWatch>> record_commit(fdb_error_t code);
  // The commit's error: with the conflicting ranges named, when they are reported.
  Error commit_error(fdb_error_t code) const;
  // on_error's error for a step's code that is not the one it was given.
  Error retry_error(ErrorCode code) const;
  // The watches made since the last commit fail with `code` (1025, or the commit's error).
  void fail_watches(fdb_error_t code);
  static void fail(const std::vector<std::weak_ptr<ClusterWatch>>& watches, fdb_error_t code);
  std::vector<KeyRange> special_ranges(std::string_view prefix) const;
  // Reads [begin, end) in batches, passing each row to `row`. Returns RangeResult::more:
  // whether a limit ended the read with rows possibly left (the C API's out_more).
  template <class Row>
  bool read_range(std::string_view begin, std::string_view end, RangeOptions options, bool snapshot,
                  Row&& row);

  std::shared_ptr<ClusterDatabase> db_;
  const FdbApi& api_;
  FDBTransaction* tr_ = nullptr;
  std::shared_ptr<Async> async_;  // made by the first commit_async

  // strata's rules the C API does not check at once.
  ErrorCode ended_ = ErrorCode::success;  // cancelled (1025), committed (2017): what ops throw
  bool visiting_ = false;
  bool read_version_fixed_ = false;
  bool written_ = false;
  // Options that are not persistent: a reset for a retry clears them.
  bool ryw_ = true;
  bool snapshot_ryw_ = true;
  bool report_conflicts_ = false;
  // NEXT_WRITE_NO_WRITE_CONFLICT_RANGE, kept here: FoundationDB's writes take it before
  // their checks, and strata's checks come before the call, so a write takes it at its
  // start and sets it on the cluster's transaction just before the call
  // (take_next_write_flag, pass_next_write_flag).
  bool next_write_unconflicted_ = false;
  std::optional<std::size_t> size_limit_;
  // The timeout, as FoundationDB counts it: from the transaction's creation or reset.
  Clock::time_point started_ = Clock::now();
  std::chrono::milliseconds timeout_;
  Clock::time_point deadline_;  // started_ + timeout_, saturated
  // The last commit.
  bool committed_ = false;
  bool conflicted_ = false;
  // After a commit: kVersionNotAsked until committed_version() asks the C API.
  static constexpr Version kVersionNotAsked = -2;
  mutable Version committed_version_ = -1;
  Future versionstamp_future_;
  std::vector<std::weak_ptr<ClusterWatch>> watches_;  // made since the last commit
  mutable std::optional<std::string> versionstamp_;
};

}  // namespace strata::cluster
