// Shared helpers for the C API tests (tests/fdb_c): RAII handles for futures and
// transactions, typed wrappers over the fdb_future_get_* calls, bounded waits, a callback
// probe and a fixture that gives each test its own key prefix.
//
// The process-wide state (API version, network thread, shared database) is set up once by
// main.cpp's environment; tests reach it through env().
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <cstring>
#include <future>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "fdb_c/fdb_c.h"

namespace fdbc_test {

using namespace std::chrono_literals;

// How long a test waits for something that should happen before it declares failure. Not a
// synchronisation delay: waits end as soon as the event happens.
inline constexpr std::chrono::milliseconds kWait = 30s;

// ---- Process-wide state set up by main.cpp ------------------------------------------

struct ProcessState {
  // Results of the fdb_select_api_version_impl calls made before and after the successful
  // one, and of the network calls around it, for api_version_test.cpp to assert.
  fdb_error_t runtime_newer_than_header = -1;  // (740, 730)
  fdb_error_t header_too_new = -1;             // (750, 750)
  fdb_error_t runtime_too_old = -1;            // (500, 740)
  fdb_error_t header_too_old = -1;             // (610, 610)
  fdb_error_t select = -1;                     // (740, 740)
  fdb_error_t second_select = -1;              // (740, 740) again
  fdb_error_t network_option = -1;             // a network option set before setup
  fdb_error_t stop_before_setup = -1;          // fdb_stop_network before fdb_setup_network
  fdb_error_t setup = -1;
  fdb_error_t second_setup = -1;
  fdb_error_t create_database = -1;

  std::thread::id network_thread;
  FDBDatabase* db = nullptr;
};

inline ProcessState& env() {
  static ProcessState e;
  return e;
}

inline FDBDatabase* db() { return env().db; }
inline std::thread::id network_thread() { return env().network_thread; }

// ---- Bytes ---------------------------------------------------------------------------

inline const uint8_t* u8(std::string_view s) { return reinterpret_cast<const uint8_t*>(s.data()); }
inline int len(std::string_view s) { return static_cast<int>(s.size()); }
inline std::string str(const uint8_t* p, int n) {
  return n > 0 ? std::string(reinterpret_cast<const char*>(p), static_cast<std::size_t>(n))
               : std::string();
}

inline std::string le64(int64_t v) {
  std::string s(8, '\0');
  for (int i = 0; i < 8; ++i)
    s[i] = static_cast<char>((static_cast<uint64_t>(v) >> (8 * i)) & 0xff);
  return s;
}
inline std::string le32(uint32_t v) {
  std::string s(4, '\0');
  for (int i = 0; i < 4; ++i) s[i] = static_cast<char>((v >> (8 * i)) & 0xff);
  return s;
}
inline int64_t from_le(std::string_view s) {
  uint64_t v = 0;
  for (std::size_t i = 0; i < s.size() && i < 8; ++i)
    v |= static_cast<uint64_t>(static_cast<unsigned char>(s[i])) << (8 * i);
  return static_cast<int64_t>(v);
}
inline int64_t from_be(std::string_view s) {
  uint64_t v = 0;
  for (char c : s) v = (v << 8) | static_cast<unsigned char>(c);
  return static_cast<int64_t>(v);
}
// "\x01\x02" -> "01 02": readable failure messages for binary values.
inline std::string hex(std::string_view s) {
  static const char* digits = "0123456789abcdef";
  std::string out;
  for (char c : s) {
    if (!out.empty()) out += ' ';
    out += digits[(static_cast<unsigned char>(c) >> 4) & 0xf];
    out += digits[static_cast<unsigned char>(c) & 0xf];
  }
  return out;
}

// ---- RAII handles ----------------------------------------------------------------------

struct FutureDeleter {
  void operator()(FDBFuture* f) const { fdb_future_destroy(f); }
};
using Future = std::unique_ptr<FDBFuture, FutureDeleter>;

struct TransactionDeleter {
  void operator()(FDBTransaction* t) const { fdb_transaction_destroy(t); }
};
using Tr = std::unique_ptr<FDBTransaction, TransactionDeleter>;

struct DatabaseDeleter {
  void operator()(FDBDatabase* d) const { fdb_database_destroy(d); }
};
using Db = std::unique_ptr<FDBDatabase, DatabaseDeleter>;

inline Tr make_tr(FDBDatabase* d = db()) {
  FDBTransaction* t = nullptr;
  fdb_error_t e = fdb_database_create_transaction(d, &t);
  EXPECT_EQ(e, 0) << fdb_get_error(e);
  return Tr(t);
}

// A new handle on the process's in-memory database, for tests that set database options.
inline Db open_db() {
  FDBDatabase* d = nullptr;
  fdb_error_t e = fdb_create_database(nullptr, &d);
  EXPECT_EQ(e, 0) << fdb_get_error(e);
  return Db(d);
}

// ---- Waiting -----------------------------------------------------------------------------

// Blocks until `f` is ready and returns its error.
inline fdb_error_t wait(FDBFuture* f) {
  fdb_error_t e = fdb_future_block_until_ready(f);
  if (e != 0) return e;
  return fdb_future_get_error(f);
}
inline fdb_error_t wait(const Future& f) { return wait(f.get()); }

// Waits at most `limit` for `f` to become ready. On timeout it cancels `f` (which makes it
// ready with operation_cancelled, releasing the helper thread) and returns false.
inline bool wait_ready_for(FDBFuture* f, std::chrono::milliseconds limit = kWait) {
  auto waiter = std::async(std::launch::async, [f] { return fdb_future_block_until_ready(f); });
  if (waiter.wait_for(limit) == std::future_status::timeout) {
    fdb_future_cancel(f);
    waiter.wait();
    return false;
  }
  return true;
}
inline bool wait_ready_for(const Future& f, std::chrono::milliseconds limit = kWait) {
  return wait_ready_for(f.get(), limit);
}

// Records the calls made to a future callback: how many, on which thread, with which error.
struct CallbackProbe {
  std::mutex mutex;
  std::condition_variable cv;
  int calls = 0;
  std::thread::id thread;
  fdb_error_t error = -1;
  FDBFuture* future = nullptr;

  static void callback(FDBFuture* f, void* self) {
    auto* p = static_cast<CallbackProbe*>(self);
    fdb_error_t e = fdb_future_get_error(f);
    std::lock_guard<std::mutex> lock(p->mutex);
    ++p->calls;
    p->thread = std::this_thread::get_id();
    p->error = e;
    p->future = f;
    p->cv.notify_all();
  }

  // Waits until at least `n` calls arrived (at most `limit`).
  bool wait_calls(int n = 1, std::chrono::milliseconds limit = kWait) {
    std::unique_lock<std::mutex> lock(mutex);
    return cv.wait_for(lock, limit, [&] { return calls >= n; });
  }
  int count() {
    std::lock_guard<std::mutex> lock(mutex);
    return calls;
  }
  std::thread::id called_on() {
    std::lock_guard<std::mutex> lock(mutex);
    return thread;
  }
  fdb_error_t called_with() {
    std::lock_guard<std::mutex> lock(mutex);
    return error;
  }
};

// ---- Typed reads -------------------------------------------------------------------------

struct Value {
  fdb_error_t error = -1;
  bool present = false;
  std::string value;
};

inline Value value_of(FDBFuture* f) {
  Value v;
  v.error = wait(f);
  if (v.error != 0) return v;
  fdb_bool_t present = 0;
  const uint8_t* data = nullptr;
  int n = 0;
  v.error = fdb_future_get_value(f, &present, &data, &n);
  if (v.error == 0) {
    v.present = present != 0;
    if (v.present) v.value = str(data, n);
  }
  return v;
}

inline Value get(FDBTransaction* tr, std::string_view key, bool snapshot = false) {
  Future f(fdb_transaction_get(tr, u8(key), len(key), snapshot ? 1 : 0));
  return value_of(f.get());
}
inline Value get(const Tr& tr, std::string_view key, bool snapshot = false) {
  return get(tr.get(), key, snapshot);
}

struct Key {
  fdb_error_t error = -1;
  std::string key;
};

inline Key key_of(FDBFuture* f) {
  Key k;
  k.error = wait(f);
  if (k.error != 0) return k;
  const uint8_t* data = nullptr;
  int n = 0;
  k.error = fdb_future_get_key(f, &data, &n);
  if (k.error == 0) k.key = str(data, n);
  return k;
}

// A key selector: FoundationDB developer-guide.rst, "Key selectors".
struct Selector {
  std::string key;
  bool or_equal;
  int offset;
};
inline Selector last_less_than(std::string k) { return {std::move(k), false, 0}; }
inline Selector last_less_or_equal(std::string k) { return {std::move(k), true, 0}; }
inline Selector first_greater_than(std::string k) { return {std::move(k), true, 1}; }
inline Selector first_greater_or_equal(std::string k) { return {std::move(k), false, 1}; }
inline Selector operator+(Selector s, int delta) {
  s.offset += delta;
  return s;
}

inline Key get_key(const Tr& tr, const Selector& s, bool snapshot = false) {
  Future f(fdb_transaction_get_key(tr.get(), u8(s.key), len(s.key), s.or_equal ? 1 : 0, s.offset,
                                   snapshot ? 1 : 0));
  return key_of(f.get());
}

using Rows = std::vector<std::pair<std::string, std::string>>;

struct Range {
  fdb_error_t error = -1;
  Rows rows;
  bool more = false;
};

struct RangeArgs {
  int limit = 0;
  int target_bytes = 0;
  FDBStreamingMode mode = FDB_STREAMING_MODE_WANT_ALL;
  int iteration = 1;
  bool snapshot = false;
  bool reverse = false;
};

inline Range range_of(FDBFuture* f) {
  Range r;
  r.error = wait(f);
  if (r.error != 0) return r;
  const FDBKeyValue* kv = nullptr;
  int count = 0;
  fdb_bool_t more = 0;
  r.error = fdb_future_get_keyvalue_array(f, &kv, &count, &more);
  if (r.error != 0) return r;
  for (int i = 0; i < count; ++i)
    r.rows.emplace_back(str(kv[i].key, kv[i].key_length), str(kv[i].value, kv[i].value_length));
  r.more = more != 0;
  return r;
}

inline FDBFuture* start_range(FDBTransaction* tr, const Selector& b, const Selector& e,
                              const RangeArgs& a) {
  return fdb_transaction_get_range(tr, u8(b.key), len(b.key), b.or_equal ? 1 : 0, b.offset,
                                   u8(e.key), len(e.key), e.or_equal ? 1 : 0, e.offset, a.limit,
                                   a.target_bytes, a.mode, a.iteration, a.snapshot ? 1 : 0,
                                   a.reverse ? 1 : 0);
}

inline Range get_range(const Tr& tr, const Selector& b, const Selector& e,
                       const RangeArgs& a = {}) {
  Future f(start_range(tr.get(), b, e, a));
  return range_of(f.get());
}
inline Range get_range(const Tr& tr, std::string_view b, std::string_view e,
                       const RangeArgs& a = {}) {
  return get_range(tr, first_greater_or_equal(std::string(b)),
                   first_greater_or_equal(std::string(e)), a);
}

// ---- Writes, commits, retry loops --------------------------------------------------------

inline void set(const Tr& tr, std::string_view k, std::string_view v) {
  fdb_transaction_set(tr.get(), u8(k), len(k), u8(v), len(v));
}
inline void clear(const Tr& tr, std::string_view k) {
  fdb_transaction_clear(tr.get(), u8(k), len(k));
}
inline void clear_range(const Tr& tr, std::string_view b, std::string_view e) {
  fdb_transaction_clear_range(tr.get(), u8(b), len(b), u8(e), len(e));
}
inline void atomic(const Tr& tr, std::string_view k, std::string_view param, FDBMutationType op) {
  fdb_transaction_atomic_op(tr.get(), u8(k), len(k), u8(param), len(param), op);
}

inline fdb_error_t commit(FDBTransaction* tr) {
  Future f(fdb_transaction_commit(tr));
  return wait(f);
}
inline fdb_error_t commit(const Tr& tr) { return commit(tr.get()); }

inline fdb_error_t on_error(const Tr& tr, fdb_error_t e) {
  Future f(fdb_transaction_on_error(tr.get(), e));
  return wait(f);
}

// FoundationDB's retry loop: body, commit, on_error. Returns 0 or the error on_error gave
// back. The body returns an error to retry with (0: go on to commit).
template <class Body>
fdb_error_t run(FDBDatabase* d, Body&& body) {
  Tr tr = make_tr(d);
  for (;;) {
    fdb_error_t e = body(tr);
    if (e == 0) e = commit(tr);
    if (e == 0) return 0;
    e = on_error(tr, e);
    if (e != 0) return e;
  }
}
template <class Body>
fdb_error_t run(Body&& body) {
  return run(db(), std::forward<Body>(body));
}

inline fdb_error_t write(std::string_view k, std::string_view v) {
  return run([&](const Tr& tr) {
    set(tr, k, v);
    return 0;
  });
}

// The committed value of `k` as a fresh transaction sees it.
inline Value read(std::string_view k) {
  Tr tr = make_tr();
  return get(tr, k);
}

// An integer option: 8 bytes little-endian.
inline fdb_error_t set_option(const Tr& tr, FDBTransactionOption o, int64_t v) {
  std::string bytes = le64(v);
  return fdb_transaction_set_option(tr.get(), o, u8(bytes), 8);
}
inline fdb_error_t set_option(const Tr& tr, FDBTransactionOption o) {
  return fdb_transaction_set_option(tr.get(), o, nullptr, 0);
}
inline fdb_error_t set_db_option(FDBDatabase* d, FDBDatabaseOption o, int64_t v) {
  std::string bytes = le64(v);
  return fdb_database_set_option(d, o, u8(bytes), 8);
}

inline int64_t read_version(const Tr& tr) {
  Future f(fdb_transaction_get_read_version(tr.get()));
  EXPECT_EQ(wait(f), 0);
  int64_t v = -1;
  EXPECT_EQ(fdb_future_get_int64(f.get(), &v), 0);
  return v;
}

inline int64_t committed_version(const Tr& tr) {
  int64_t v = -2;
  EXPECT_EQ(fdb_transaction_get_committed_version(tr.get(), &v), 0);
  return v;
}

// ---- Fixture -------------------------------------------------------------------------------

// Every test gets keys under its own prefix ("fdbc/<Suite>.<Test>/"), cleared before and
// after it, because all tests in a process share one database.
class FdbTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    prefix_ = std::string("fdbc/") + info->test_suite_name() + "." + info->name() + "/";
    clear_prefix();
  }
  void TearDown() override { clear_prefix(); }

  // A key under this test's prefix.
  std::string k(std::string_view suffix) const { return prefix_ + std::string(suffix); }
  const std::string& prefix() const { return prefix_; }
  std::string prefix_end() const { return prefix_ + "\xff"; }

 private:
  void clear_prefix() {
    ASSERT_EQ(run([&](const Tr& tr) {
                clear_range(tr, prefix_, prefix_end());
                return 0;
              }),
              0);
  }
  std::string prefix_;
};

// Waits until the network thread has handled everything queued before this call: a watch
// made now and fired by a commit runs its callback on the network thread after earlier
// work. Used before asserting that a callback was *not* called.
inline void network_barrier(const std::string& key) {
  Tr tr = make_tr();
  Future w(fdb_transaction_watch(tr.get(), u8(key), len(key)));
  ASSERT_EQ(commit(tr), 0);
  CallbackProbe probe;
  ASSERT_EQ(fdb_future_set_callback(w.get(), &CallbackProbe::callback, &probe), 0);
  ASSERT_EQ(run([&](const Tr& t) {
              Value v = get(t, key);
              if (v.error != 0) return v.error;
              set(t, key, v.value + "x");
              return 0;
            }),
            0);
  ASSERT_TRUE(probe.wait_calls(1));
}

}  // namespace fdbc_test
