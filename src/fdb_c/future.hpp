// fdb_c/future.hpp: FDBFuture, the one-shot result of a C API call.
//
// A future is created pending or ready. It becomes ready once, with an error code and a
// result of one kind (int64, key, value, key-value rows, strings, keys). Whoever may
// still complete or call back holds a reference: the user (released by
// fdb_future_destroy), a pending operation (a watch, an on_error timer, a versionstamp
// awaiting commit), and the network's queue while the future's callbacks wait there. The
// last release deletes it.
//
// Callbacks: set on a ready future, the callback runs at once on the caller's thread.
// Set while it is pending, it runs once on the network thread after the future becomes
// ready (a destroy makes a pending future ready with operation_cancelled, as
// FoundationDB's), unless the network has stopped (see network.hpp's lifecycle); never
// twice. Making them due allocates nothing (the future
// itself is the link of the network's queue), so a future that becomes ready while memory
// is short still calls them. A future takes any number of callbacks, as FoundationDB's
// (Python's on_ready and Go's BlockUntilReady each set one); set while it is pending,
// they run in the order they were set. Adding the second and later ones to a pending
// future is the one step that allocates: out of memory, set_callback sets nothing and
// fdb_future_set_callback returns unknown_error (4000).
//
// Memory: every successful fdb_future_get_* counts a reader; fdb_future_release_memory
// ends one, and the last frees the result (its getters then fail with future_released),
// as FoundationDB counts them, so a reader on another thread keeps what it got.
//
// Futures are recycled: the last release puts a future back in a small pool of the
// releasing thread, keeping its buffers, and the next future that thread makes reuses it
// (a C client makes two or three per transaction; allocating each, and its buffers, costs
// more than the read it carries). A future that is ready when made is built in place
// (make, result, publish) and takes no lock.
//
// Thread safety: every method may be called from any thread.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <limits>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "strata/types.hpp"

#include "base/invariant.hpp"
#include "base/mutex.hpp"
#include "fdb_c/fdb_c.h"

namespace strata::fdb_c {
class Network;
}  // namespace strata::fdb_c

struct FDB_future {
 public:
  // key_ranges and granule_summaries: strata keeps no blob granules, so their lists are
  // always empty; no call makes mapped_key_values (get_mapped_range is unsupported) or
  // granule_descriptions (read_blob_granules_description is unsupported).
  enum class Kind : std::uint8_t {
    none,
    int64,
    real,  // a double (fdb_future_get_double)
    key,
    value,
    key_values,
    strings,
    keys,
    key_ranges,
    granule_summaries,
    mapped_key_values,
    granule_descriptions
  };

  // The pieces of a result; fill() sets the ones of its kind.
  struct Result {
    explicit Result(Kind k = Kind::none) : kind(k) {}
    Kind kind;
    std::int64_t int64 = 0;
    double real = 0;
    bool present = false;  // value
    std::string bytes;     // key or value
    // key_values: each row's key then value, back to back in row_bytes, and their sizes.
    std::string row_bytes;
    std::vector<std::pair<std::uint32_t, std::uint32_t>> row_sizes;
    bool more = false;                 // key_values
    std::vector<std::string> strings;  // strings or keys
  };

  // A ready future; out_of_memory() when none can be made (docs/decisions/0038).
  static FDB_future* ready(Result result) noexcept;
  static FDB_future* ready(Kind kind) noexcept;  // the kind's empty result (none: "done")
  static FDB_future* failed(fdb_error_t error) noexcept;
  static FDB_future* pending(Kind kind);  // throws std::bad_alloc
  // What a call returns when it cannot make its future: one future for the whole process,
  // ready and failed with unknown_error (4000), made without allocating. Destroying or
  // releasing its memory does nothing; the rest works as on any ready future (a callback
  // set on it runs at once), from any number of threads.
  static FDB_future* out_of_memory() noexcept;

  // A future to fill in before anyone else sees it: result() to build the outcome in
  // place, then publish() once, which makes it ready (error 0: with the result). make()
  // throws std::bad_alloc.
  static FDB_future* make();
  // make(), or nullptr when out of memory.
  static FDB_future* make_or_null() noexcept;
  Result& result() { return result_; }
  // An error 0 whose getters' views cannot be built publishes unknown_error instead.
  void publish(fdb_error_t error) noexcept;

  // Completes a pending future (no-op when it is already ready) and queues its callbacks
  // for the network thread, allocating nothing.
  void complete(Result result) noexcept;
  // complete() with a key result (Kind::key), copied straight into the future's buffer.
  void complete_key(std::string_view key) noexcept;
  void complete_error(fdb_error_t error) noexcept;

  // Called once if the future is cancelled or destroyed while pending, outside any lock
  // (e.g. disarms a watch); it must not throw. Set before handing the future to the user.
  void set_canceller(std::function<void()> canceller);

  // How the calling thread waits for its commits, for FDB_transaction::commit: the last
  // commit future made on this thread is remembered until this thread blocks on it
  // (fdb_future_block_until_ready). A thread whose last commit is unwaited when it makes
  // another keeps commits in flight; one that blocks on each does not. out_of_memory() is
  // not recorded: every thread may get it, and it carries no commit of this thread's.
  static void made_commit(const FDB_future* f);
  static bool last_commit_unwaited();

  // Never on out_of_memory(), which nothing owns (a check in the sanitizer builds).
  void retain() {
    STRATA_INVARIANT(!shared_);
    refs_.fetch_add(1, std::memory_order_relaxed);
  }
  void release();
  // A reference that releases itself: for tasks the network may drop without running.
  std::shared_ptr<FDB_future> hold() {
    retain();
    return {this, [](FDB_future* f) { f->release(); }};
  }

  // The C API entry points.
  void cancel();
  void destroy();  // the user's release
  void release_memory();
  fdb_error_t block_until_ready();
  bool is_ready();
  fdb_error_t set_callback(FDBCallback callback, void* parameter);
  fdb_error_t error();

  fdb_error_t get_int64(std::int64_t* out);
  fdb_error_t get_real(double* out);
  fdb_error_t get_key(const uint8_t** out, int* out_length);
  fdb_error_t get_value(fdb_bool_t* present, const uint8_t** out, int* out_length);
  fdb_error_t get_key_values(const FDBKeyValue** out, int* count, fdb_bool_t* more);
  fdb_error_t get_strings(const char*** out, int* count);
  fdb_error_t get_keys(const FDBKey** out, int* count);
  // The kinds whose results are always empty (see Kind): what readable() says, and on
  // success an empty array.
  fdb_error_t get_empty(Kind kind, int* count);

 private:
  struct Pool;  // the releasing thread's recycled futures (future.cpp)
  friend struct Pool;
  friend class strata::fdb_c::Network;  // queues futures through next_due_

  FDB_future() = default;
  explicit FDB_future(fdb_error_t shared_error) noexcept;  // out_of_memory()'s
  ~FDB_future() = default;
  // Back to the state make() hands out, keeping the buffers (unless they grew large).
  // Called on the last reference, which no other thread can reach: it takes no lock.
  void reset() NO_THREAD_SAFETY_ANALYSIS;
  // Builds the getters' views of a successful result; false (views left empty) when out of
  // memory.
  bool build_views() noexcept;
  // Whether the result's kind has views to build.
  bool has_views() const {
    return result_.kind == Kind::key_values || result_.kind == Kind::strings ||
           result_.kind == Kind::keys;
  }

  // Shared checks of the getters: 0 to go on, or the error to return.
  // Counts a reader when it returns 0.
  fdb_error_t readable(Kind kind);
  bool finish(Result* result, fdb_error_t error) noexcept;  // true: run the callbacks
  // finish() of a successful result that fill(result_) writes in place, with mu_ held.
  template <class Fill>
  bool finish_with(Fill fill) noexcept;
  // Moves `from` into result_, which is empty (the future is pending).
  void take_result(Result& from) noexcept;
  // Queues the callbacks for the network thread, with a reference for the queue.
  void queue_callbacks() noexcept;
  // On the network thread, once queued: calls the callbacks, whether or not the user has
  // destroyed the future since. The network releases the queue's reference after it.
  void run_queued_callbacks() noexcept;

  const bool shared_ = false;  // out_of_memory()'s: never freed
  std::atomic<int> refs_{1};
  mutable strata::base::Mutex mu_;
  strata::base::CondVar cv_;
  std::atomic<bool> ready_{false};  // set under mu_; the outcome is immutable once true
  // Successful gets less release_memory calls, or kReleasedReaders once the result is freed.
  static constexpr int kReleasedReaders = std::numeric_limits<int>::min();
  std::atomic<int> readers_{0};
  // The outcome: written before ready_ is set (under mu_ once others may see the future),
  // read without the lock after ready_ is seen true.
  fdb_error_t error_ = 0;
  Result result_;
  FDBCallback callback_ GUARDED_BY(mu_) = nullptr;  // the first callback set while pending
  void* callback_parameter_ GUARDED_BY(mu_) = nullptr;
  std::vector<std::pair<FDBCallback, void*>> more_callbacks_ GUARDED_BY(mu_);  // later ones
  bool callback_set_ GUARDED_BY(mu_) = false;
  std::function<void()> canceller_ GUARDED_BY(mu_);
  // The next future in the network's queue of due callbacks (network.hpp), read and
  // written under the network's lock only; nullptr whenever this one is not queued.
  FDB_future* next_due_ = nullptr;
  // Views handed to the user, built once at completion.
  std::vector<FDBKeyValue> row_view_;
  std::vector<const char*> string_view_;
  std::vector<FDBKey> key_view_;
};
