// FDBFuture and the fdb_future_* entry points.
#include "fdb_c/future.hpp"

#include <utility>

#include "fdb_c/error_codes.hpp"
#include "fdb_c/network.hpp"

using strata::fdb_c::Network;
namespace fc = strata::fdb_c;

namespace {

// Futures kept per thread, and the largest buffers a kept future may hold on to (a range
// read of megabytes should not stay resident in a pool).
constexpr std::size_t kPoolFutures = 16;
constexpr std::size_t kKeptBytes = std::size_t{64} << 10;

// Whether this thread's pool is gone (thread exit): futures released after that are
// deleted. Trivially destructible, so it can be read at any point of the exit.
thread_local bool t_pool_closed = false;

}  // namespace

struct FDB_future::Pool {
  Pool() = default;
  Pool(const Pool&) = delete;
  Pool& operator=(const Pool&) = delete;
  ~Pool() {
    t_pool_closed = true;
    for (FDB_future* f : futures) delete f;
  }

  // This thread's pool, or nullptr once it is gone.
  static Pool* mine() {
    if (t_pool_closed) return nullptr;
    thread_local Pool pool;
    return &pool;
  }

  std::vector<FDB_future*> futures;
};

FDB_future* FDB_future::make() {
  Pool* pool = Pool::mine();
  if (pool == nullptr || pool->futures.empty()) return new FDB_future();
  FDB_future* f = pool->futures.back();
  pool->futures.pop_back();
  return f;
}

FDB_future::FDB_future(fdb_error_t shared_error) noexcept : shared_(true) { publish(shared_error); }

FDB_future* FDB_future::out_of_memory() noexcept {
  // Built in static storage on first use (no allocation) and never destroyed: a binding's
  // threads may still hold it while static destructors run at exit.
  alignas(FDB_future) static unsigned char storage[sizeof(FDB_future)];
  static FDB_future* const kShared = new (storage) FDB_future(fc::kUnknownError);
  return kShared;
}

FDB_future* FDB_future::make_or_null() noexcept {
  try {
    return make();
  } catch (...) {  // std::bad_alloc
    return nullptr;
  }
}

FDB_future* FDB_future::ready(Result result) noexcept {
  FDB_future* f = make_or_null();
  if (f == nullptr) return out_of_memory();
  f->result_ = std::move(result);
  f->publish(0);
  return f;
}

FDB_future* FDB_future::ready(Kind kind) noexcept {
  FDB_future* f = make_or_null();
  if (f == nullptr) return out_of_memory();
  f->result_.kind = kind;
  f->publish(0);
  return f;
}

FDB_future* FDB_future::failed(fdb_error_t error) noexcept {
  FDB_future* f = make_or_null();
  if (f == nullptr) return out_of_memory();
  f->publish(error);
  return f;
}

FDB_future* FDB_future::pending(Kind kind) {
  FDB_future* f = make();
  f->result_.kind = kind;
  return f;
}

// Nobody else holds the future yet: no lock, and nobody to notify.
void FDB_future::publish(fdb_error_t error) noexcept {
  error_ = error == 0 && has_views() && !build_views() ? fc::kUnknownError : error;
  ready_.store(true, std::memory_order_release);
}

namespace {
// The last commit future made on this thread, until this thread blocked on it. Compared
// by address only (it may be gone, and its memory reused: a wrong guess costs speed only).
thread_local const FDB_future* t_unwaited_commit = nullptr;
}  // namespace

void FDB_future::made_commit(const FDB_future* f) {
  if (!f->shared_) t_unwaited_commit = f;
}
bool FDB_future::last_commit_unwaited() { return t_unwaited_commit != nullptr; }

void FDB_future::set_canceller(std::function<void()> canceller) {
  strata::base::MutexLock lock(mu_);
  canceller_ = std::move(canceller);
}

// The last release recycles: every other holder is done with the future (acq_rel).
void FDB_future::release() {
  STRATA_INVARIANT(!shared_);
  if (refs_.fetch_sub(1, std::memory_order_acq_rel) != 1) return;
  Pool* pool = Pool::mine();
  if (pool == nullptr || pool->futures.size() >= kPoolFutures) {
    delete this;
    return;
  }
  reset();
  try {
    pool->futures.push_back(this);
  } catch (...) {  // out of memory growing the pool: freed instead of kept, and no throw
    delete this;
  }
}

void FDB_future::reset() {
  STRATA_INVARIANT(next_due_ == nullptr);  // the queue's reference kept it alive until popped
  refs_.store(1, std::memory_order_relaxed);
  ready_.store(false, std::memory_order_relaxed);
  readers_.store(0, std::memory_order_relaxed);
  error_ = 0;
  callback_ = nullptr;
  callback_parameter_ = nullptr;
  more_callbacks_.clear();
  callback_set_ = false;
  canceller_ = nullptr;
  const bool large =
      result_.row_bytes.capacity() > kKeptBytes || result_.bytes.capacity() > kKeptBytes ||
      row_view_.capacity() * sizeof(FDBKeyValue) > kKeptBytes || result_.strings.size() > 64;
  if (large) {
    result_ = Result();
    row_view_ = {};
    string_view_ = {};
    key_view_ = {};
    return;
  }
  result_.kind = Kind::none;
  result_.int64 = 0;
  result_.real = 0;
  result_.present = false;
  result_.bytes.clear();
  result_.row_bytes.clear();
  result_.row_sizes.clear();
  result_.more = false;
  result_.strings.clear();
  row_view_.clear();
  string_view_.clear();
  key_view_.clear();
}

bool FDB_future::build_views() noexcept try {
  if (result_.kind == Kind::key_values) {
    row_view_.reserve(result_.row_sizes.size());
    const auto* at = reinterpret_cast<const uint8_t*>(result_.row_bytes.data());
    for (const auto& [key_size, value_size] : result_.row_sizes) {
      row_view_.push_back(
          {at, static_cast<int>(key_size), at + key_size, static_cast<int>(value_size)});
      at += key_size + value_size;
    }
  } else if (result_.kind == Kind::strings) {
    for (const std::string& s : result_.strings) string_view_.push_back(s.c_str());
  } else if (result_.kind == Kind::keys) {
    for (const std::string& s : result_.strings) {
      key_view_.push_back({reinterpret_cast<const uint8_t*>(s.data()), static_cast<int>(s.size())});
    }
  }
  return true;
} catch (...) {  // std::bad_alloc
  row_view_.clear();
  string_view_.clear();
  key_view_.clear();
  return false;
}

void FDB_future::take_result(Result& from) noexcept {
  STRATA_INVARIANT(result_.bytes.empty() && result_.row_bytes.empty() &&
                   result_.row_sizes.empty() && result_.strings.empty());
  result_.kind = from.kind;
  result_.int64 = from.int64;
  result_.real = from.real;
  result_.present = from.present;
  result_.more = from.more;
  // A pending future's pieces are empty (reset or new) and keep the buffers of its last
  // use: bytes that fit are copied into them, larger ones swapped in, so that nothing is
  // allocated or freed here, under the lock, and the buffers stay for the next use.
  const auto take_bytes = [](std::string& to, std::string& bytes) noexcept {
    if (bytes.size() <= to.capacity()) {
      to.assign(bytes);  // within the capacity: no allocation
    } else {
      to.swap(bytes);
    }
  };
  take_bytes(result_.bytes, from.bytes);
  take_bytes(result_.row_bytes, from.row_bytes);
  if (!from.row_sizes.empty()) result_.row_sizes.swap(from.row_sizes);
  if (!from.strings.empty()) result_.strings.swap(from.strings);
}

// Stores the outcome of a pending future and builds the views. Returns whether callbacks
// set while the future was pending must now be queued (decided under the same lock
// set_callback takes, so that a callback is either called at once by set_callback or
// queued here, never both).
bool FDB_future::finish(Result* result, fdb_error_t error) noexcept {
  strata::base::MutexLock lock(mu_);
  if (ready_.load(std::memory_order_relaxed)) return false;
  error_ = error;
  if (error == 0 && result != nullptr) {
    take_result(*result);
    if (has_views() && !build_views()) error_ = fc::kUnknownError;
  }
  ready_.store(true, std::memory_order_release);
  canceller_ = nullptr;
  cv_.notify_all();
  return callback_set_;
}

template <class Fill>
bool FDB_future::finish_with(Fill fill) noexcept {
  strata::base::MutexLock lock(mu_);
  if (ready_.load(std::memory_order_relaxed)) return false;
  try {
    fill(result_);
    error_ = 0;
  } catch (...) {  // std::bad_alloc
    error_ = fc::kUnknownError;
  }
  ready_.store(true, std::memory_order_release);
  canceller_ = nullptr;
  cv_.notify_all();
  return callback_set_;
}

void FDB_future::complete(Result result) noexcept {
  if (finish(&result, 0)) queue_callbacks();
}

void FDB_future::complete_key(std::string_view key) noexcept {
  const bool queue = finish_with([key](Result& r) {
    STRATA_INVARIANT(r.bytes.empty());  // a pending future's (reset or new)
    r.kind = Kind::key;
    r.bytes.append(key);  // a key has no views to build
  });
  if (queue) queue_callbacks();
}

void FDB_future::complete_error(fdb_error_t error) noexcept {
  if (finish(nullptr, error)) queue_callbacks();
}

// The callbacks of a future that became ready run on the network thread, which holds a
// reference meanwhile so that a callback may destroy the future. Queueing allocates
// nothing: the future is the link of the network's queue, and the reference is a count.
void FDB_future::queue_callbacks() noexcept {
  retain();
  Network::instance().queue_callbacks(this);
}

void FDB_future::run_queued_callbacks() noexcept {
  FDBCallback callback = nullptr;
  void* parameter = nullptr;
  std::vector<std::pair<FDBCallback, void*>> more;
  {
    strata::base::MutexLock lock(mu_);
    callback = callback_;
    parameter = callback_parameter_;
    // Taken (no allocation): the first callback may destroy the future, and the queue
    // runs a future's callbacks once.
    more = std::move(more_callbacks_);
  }
  if (callback != nullptr) callback(this, parameter);
  for (const auto& [c, p] : more) c(this, p);
}

void FDB_future::cancel() {
  std::function<void()> canceller;
  {
    strata::base::MutexLock lock(mu_);
    if (ready_.load(std::memory_order_relaxed)) return;
    canceller = std::move(canceller_);
  }
  complete_error(fc::kOperationCancelled);
  if (canceller) canceller();
}

// As FoundationDB's fdb_future_destroy, a cancel and then the user's reference: a pending
// future becomes ready with operation_cancelled and its callbacks still run, on the network
// thread, which holds its own reference for them; a ready future keeps its outcome, and
// callbacks already due run all the same.
void FDB_future::destroy() {
  if (shared_) return;  // out_of_memory()'s, never freed
  if (!ready_.load(std::memory_order_acquire)) cancel();
  release();
}

void FDB_future::release_memory() {
  if (shared_) return;  // an error: no result to free
  strata::base::MutexLock lock(mu_);
  // As FoundationDB: one reader fewer, and the result goes with the last (a call with
  // no reader left makes the count negative, so the next get does not free it either).
  // The last reader's decrement and the release are one step: a get on another thread
  // either counts itself first (and the result stays) or finds it released.
  const bool may_free = ready_.load(std::memory_order_relaxed) && error_ == 0;
  int readers = readers_.load(std::memory_order_relaxed);
  int next = 0;
  do {
    if (readers == kReleasedReaders) return;
    next = readers == 1 && may_free ? kReleasedReaders : readers - 1;
  } while (!readers_.compare_exchange_weak(readers, next, std::memory_order_acq_rel,
                                           std::memory_order_relaxed));
  if (next != kReleasedReaders) return;
  row_view_ = {};
  string_view_ = {};
  key_view_ = {};
  // The payload goes; the kind stays, for a get that is still checking it.
  result_.bytes = {};
  result_.row_bytes = {};
  result_.row_sizes = {};
  result_.strings = {};
}

fdb_error_t FDB_future::block_until_ready() {
  if (t_unwaited_commit == this) t_unwaited_commit = nullptr;
  if (ready_.load(std::memory_order_acquire)) return 0;
  // Waiting on the network thread for something only it can deliver would never end.
  if (Network::instance().on_network_thread()) return fc::kBlockedFromNetworkThread;
  strata::base::MutexLock lock(mu_);
  while (!ready_.load(std::memory_order_relaxed)) cv_.wait(lock);
  return 0;
}

bool FDB_future::is_ready() { return ready_.load(std::memory_order_acquire); }

fdb_error_t FDB_future::set_callback(FDBCallback callback, void* parameter) {
  if (callback == nullptr) return fc::kClientInvalidOperation;
  {
    strata::base::MutexLock lock(mu_);
    if (!ready_.load(std::memory_order_relaxed)) {
      if (callback_set_) {
        more_callbacks_.emplace_back(callback, parameter);
      } else {
        callback_ = callback;
        callback_parameter_ = parameter;
      }
      callback_set_ = true;
      return 0;
    }
    callback_set_ = true;
  }
  callback(this, parameter);  // already ready: at once, on this thread
  return 0;
}

// Once ready, a future's outcome never changes: the getters read it without the lock.
fdb_error_t FDB_future::error() {
  if (!ready_.load(std::memory_order_acquire)) return fc::kFutureNotSet;
  // A released result is an error from then on, as FoundationDB's.
  return error_ == 0 && readers_.load(std::memory_order_acquire) == kReleasedReaders
             ? fc::kFutureReleased
             : error_;
}

fdb_error_t FDB_future::readable(Kind kind) {
  if (!ready_.load(std::memory_order_acquire)) return fc::kFutureNotSet;
  if (error_ != 0) return error_;
  if (result_.kind != kind) return fc::kClientInvalidOperation;
  // One more reader for release_memory to end, unless the result is gone.
  int readers = readers_.load(std::memory_order_relaxed);
  do {
    if (readers == kReleasedReaders) return fc::kFutureReleased;
  } while (!readers_.compare_exchange_weak(readers, readers + 1, std::memory_order_acq_rel,
                                           std::memory_order_relaxed));
  return 0;
}

fdb_error_t FDB_future::get_int64(std::int64_t* out) {
  if (fdb_error_t e = readable(Kind::int64)) return e;
  *out = result_.int64;
  return 0;
}

fdb_error_t FDB_future::get_real(double* out) {
  if (fdb_error_t e = readable(Kind::real)) return e;
  *out = result_.real;
  return 0;
}

fdb_error_t FDB_future::get_key(const uint8_t** out, int* out_length) {
  if (fdb_error_t e = readable(Kind::key)) return e;
  *out = reinterpret_cast<const uint8_t*>(result_.bytes.data());
  *out_length = static_cast<int>(result_.bytes.size());
  return 0;
}

fdb_error_t FDB_future::get_value(fdb_bool_t* present, const uint8_t** out, int* out_length) {
  if (fdb_error_t e = readable(Kind::value)) return e;
  *present = result_.present ? 1 : 0;
  if (result_.present) {
    *out = reinterpret_cast<const uint8_t*>(result_.bytes.data());
    *out_length = static_cast<int>(result_.bytes.size());
  }
  return 0;
}

fdb_error_t FDB_future::get_key_values(const FDBKeyValue** out, int* count, fdb_bool_t* more) {
  if (fdb_error_t e = readable(Kind::key_values)) return e;
  *out = row_view_.data();
  *count = static_cast<int>(row_view_.size());
  *more = result_.more ? 1 : 0;
  return 0;
}

fdb_error_t FDB_future::get_strings(const char*** out, int* count) {
  if (fdb_error_t e = readable(Kind::strings)) return e;
  *out = string_view_.data();
  *count = static_cast<int>(string_view_.size());
  return 0;
}

fdb_error_t FDB_future::get_keys(const FDBKey** out, int* count) {
  if (fdb_error_t e = readable(Kind::keys)) return e;
  *out = key_view_.data();
  *count = static_cast<int>(key_view_.size());
  return 0;
}

fdb_error_t FDB_future::get_empty(Kind kind, int* count) {
  if (fdb_error_t e = readable(kind)) return e;
  *count = 0;
  return 0;
}

extern "C" {

// cancel and destroy throw nothing (a canceller does not throw, and completing a future
// and queueing its callbacks allocate nothing); a callback set on a pending future may grow
// its list, and a wait catches the std::system_error a condition variable may throw.

void fdb_future_cancel(FDBFuture* f) { f->cancel(); }
void fdb_future_release_memory(FDBFuture* f) { f->release_memory(); }
void fdb_future_destroy(FDBFuture* f) {
  if (f != nullptr) f->destroy();
}
fdb_error_t fdb_future_block_until_ready(FDBFuture* f) {
  try {
    return f->block_until_ready();
  } catch (...) {
    return fc::current_error();
  }
}
fdb_bool_t fdb_future_is_ready(FDBFuture* f) { return f->is_ready() ? 1 : 0; }
fdb_error_t fdb_future_set_callback(FDBFuture* f, FDBCallback callback, void* parameter) {
  try {
    return f->set_callback(callback, parameter);
  } catch (...) {  // out of memory adding it: not set
    return fc::current_error();
  }
}
fdb_error_t fdb_future_get_error(FDBFuture* f) { return f->error(); }

fdb_error_t fdb_future_get_bool(FDBFuture* f, fdb_bool_t* out) {
  std::int64_t v = 0;
  fdb_error_t e = f->get_int64(&v);
  if (e == 0) *out = v != 0 ? 1 : 0;
  return e;
}
fdb_error_t fdb_future_get_int64(FDBFuture* f, int64_t* out) { return f->get_int64(out); }
fdb_error_t fdb_future_get_uint64(FDBFuture* f, uint64_t* out) {
  std::int64_t v = 0;
  fdb_error_t e = f->get_int64(&v);
  if (e == 0) *out = static_cast<uint64_t>(v);
  return e;
}
fdb_error_t fdb_future_get_double(FDBFuture* f, double* out) { return f->get_real(out); }
fdb_error_t fdb_future_get_key(FDBFuture* f, const uint8_t** out_key, int* out_key_length) {
  return f->get_key(out_key, out_key_length);
}
fdb_error_t fdb_future_get_value(FDBFuture* f, fdb_bool_t* out_present, const uint8_t** out_value,
                                 int* out_value_length) {
  return f->get_value(out_present, out_value, out_value_length);
}
fdb_error_t fdb_future_get_keyvalue_array(FDBFuture* f, const FDBKeyValue** out_kv, int* out_count,
                                          fdb_bool_t* out_more) {
  return f->get_key_values(out_kv, out_count, out_more);
}
fdb_error_t fdb_future_get_key_array(FDBFuture* f, const FDBKey** out_key_array, int* out_count) {
  return f->get_keys(out_key_array, out_count);
}
fdb_error_t fdb_future_get_string_array(FDBFuture* f, const char*** out_strings, int* out_count) {
  return f->get_strings(out_strings, out_count);
}
fdb_error_t fdb_future_get_keyrange_array(FDBFuture* f, const FDBKeyRange** out_ranges,
                                          int* out_count) {
  fdb_error_t e = f->get_empty(FDB_future::Kind::key_ranges, out_count);
  if (e == 0) *out_ranges = nullptr;
  return e;
}
fdb_error_t fdb_future_get_granule_summary_array(FDBFuture* f,
                                                 const FDBGranuleSummary** out_summaries,
                                                 int* out_count) {
  fdb_error_t e = f->get_empty(FDB_future::Kind::granule_summaries, out_count);
  if (e == 0) *out_summaries = nullptr;
  return e;
}
fdb_error_t fdb_future_readbg_get_descriptions(FDBFuture* f, FDBBGFileDescription** out,
                                               int* desc_count) {
  fdb_error_t e = f->get_empty(FDB_future::Kind::granule_descriptions, desc_count);
  if (e == 0) *out = nullptr;
  return e;
}
fdb_error_t fdb_future_get_mappedkeyvalue_array(FDBFuture* f, const FDBMappedKeyValue** out_kv,
                                                int* out_count, fdb_bool_t* out_more) {
  fdb_error_t e = f->get_empty(FDB_future::Kind::mapped_key_values, out_count);
  if (e == 0) {
    *out_kv = nullptr;
    *out_more = 0;
  }
  return e;
}

}  // extern "C"
