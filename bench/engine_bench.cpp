// Point-set and point-get transactions on strata, with LMDB (no sync, on tmpfs) measured
// in the same run when liblmdb is available. 16-byte keys, 100-byte values.
//
//   build/release/bench/strata_engine_bench --benchmark_min_time=3
//
// The benchmark functions are lower_case like every function (.clang-tidy); ->Name keeps
// the BM_ names that results and docs/benchmarks.md quote.
#include <atomic>
#include <condition_variable>
#include <cstdio>
#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include <benchmark/benchmark.h>

#include "strata/strata.hpp"

#include "kv/mvcc_store.hpp"

#ifdef STRATA_HAVE_LMDB
#include <lmdb.h>
#endif

namespace {

constexpr int kValueSize = 100;

std::string key_of(std::uint64_t i) {
  char buf[17];
  std::snprintf(buf, sizeof buf, "k%015llu", static_cast<unsigned long long>(i));
  return std::string(buf, 16);
}

// A database of `keys` keys, loaded 1,000 to a transaction in key order.
strata::Database loaded_strata(std::int64_t keys) {
  strata::Database db = strata::Database::open();
  std::string value(kValueSize, 'v');
  for (std::int64_t i = 0; i < keys; i += 1000) {
    db.run([&](strata::Transaction& tr) {
      for (std::int64_t j = i; j < std::min(keys, i + 1000); ++j) tr.set(key_of(j), value);
    });
  }
  return db;
}

// The database of `keys` keys in `dbs`, loaded on first use.
strata::Database& loaded_once(std::map<std::int64_t, strata::Database>& dbs, std::int64_t keys) {
  auto it = dbs.find(keys);
  if (it == dbs.end()) it = dbs.emplace(keys, loaded_strata(keys)).first;
  return it->second;
}

// One database per key count, filled once and shared by every benchmark that reads it.
strata::Database& filled_strata(std::int64_t keys) {
  static std::map<std::int64_t, strata::Database> dbs;
  return loaded_once(dbs, keys);
}

// The point-set benchmarks' shapes (strata's and LMDB's): 100 k and 1 M keys.
void point_set_shapes(benchmark::internal::Benchmark* b) {
  b->Arg(100'000)->Arg(1'000'000)->ArgName("keys");
}

// Sets random keys out of state.range(0), one per transaction, on one reused Transaction.
void set_random_keys(benchmark::State& state, strata::Database& db) {
  const auto keys = static_cast<std::uint64_t>(state.range(0));
  std::mt19937_64 rng(1);
  std::string value(kValueSize, 'v');
  strata::Transaction tr = db.create_transaction();
  for (auto _ : state) {
    tr.set(key_of(rng() % keys), value);
    tr.commit();
    tr.reset();
  }
  state.SetItemsProcessed(state.iterations());
}

void bm_strata_point_set(benchmark::State& state) {
  strata::Database db = strata::Database::open();
  set_random_keys(state, db);
}
BENCHMARK(bm_strata_point_set)->Name("BM_StrataPointSet")->Apply(point_set_shapes);

// The same over a loaded store: every set replaces a key's record. A database of its own
// per key count, so that the ones the get benchmarks read keep their first records.
void bm_strata_point_overwrite(benchmark::State& state) {
  static std::map<std::int64_t, strata::Database> dbs;
  set_random_keys(state, loaded_once(dbs, state.range(0)));
}
BENCHMARK(bm_strata_point_overwrite)->Name("BM_StrataPointOverwrite")->Apply(point_set_shapes);

// A bulk load: each iteration commits one transaction of 1,000 new keys into a store that
// grows to 1 M, in key order (order:1, appending) or scattered over the key space
// (order:0). Items are keys.
void bm_strata_bulk_load(benchmark::State& state) {
  const bool in_order = state.range(0) != 0;
  strata::Database db = strata::Database::open();
  const std::string value(kValueSize, 'v');
  std::uint64_t next = 0;
  for (auto _ : state) {
    db.run([&](strata::Transaction& tr) {
      for (std::uint64_t j = next; j < next + 1000; ++j) {
        tr.set(key_of(in_order ? j : (j * 2654435761ULL) % 1000000007ULL), value);
      }
    });
    next += 1000;
  }
  state.SetItemsProcessed(state.iterations() * 1000);
}
BENCHMARK(bm_strata_bulk_load)
    ->Name("BM_StrataBulkLoad")
    ->ArgName("order")
    ->Arg(1)
    ->Arg(0)
    ->Iterations(1000)
    ->Unit(benchmark::kMillisecond);

// The fixed cost of a transaction: create, one point read of a key that is absent (a
// read version, a conflict key), a read-only commit, destroy. What every queue operation
// pays before its own work.
void bm_strata_transaction_lifecycle(benchmark::State& state) {
  strata::Database db = strata::Database::open();
  for (auto _ : state) {
    strata::Transaction tr = db.create_transaction();
    benchmark::DoNotOptimize(tr.get("absent"));
    tr.commit();
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(bm_strata_transaction_lifecycle)->Name("BM_StrataTransactionLifecycle");

// The point-get benchmarks' shapes: 100 k and 1 M keys, on one thread and on two.
void point_get_shapes(benchmark::internal::Benchmark* b) {
  b->Arg(100'000)->Arg(1'000'000)->ArgName("keys")->Threads(1)->Threads(2)->UseRealTime();
}

// Read-only point-get transactions on one reused transaction. kInto: the value read with
// Transaction::get(key, out) into one reused string, as the peers read; otherwise get(key),
// a new string per value.
template <bool kInto>
void bm_strata_point_get(benchmark::State& state) {
  const auto keys = static_cast<std::uint64_t>(state.range(0));
  strata::Database& db = filled_strata(state.range(0));
  std::mt19937_64 rng(state.thread_index() + 1);
  strata::Transaction tr = db.create_transaction();
  std::string value;
  for (auto _ : state) {
    if constexpr (kInto) {
      benchmark::DoNotOptimize(tr.get(key_of(rng() % keys), value));
    } else {
      benchmark::DoNotOptimize(tr.get(key_of(rng() % keys)));
    }
    tr.commit();  // read-only: no check, no version
    tr.reset();
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK_TEMPLATE(bm_strata_point_get, false)->Name("BM_StrataPointGet")->Apply(point_get_shapes);
BENCHMARK_TEMPLATE(bm_strata_point_get, true)
    ->Name("BM_StrataPointGetInto")
    ->Apply(point_get_shapes);

// The same through Database::run, a transaction per get: what an idiomatic loop pays for
// creating and destroying its transactions, on one thread and on two.
void bm_strata_point_get_run(benchmark::State& state) {
  const auto keys = static_cast<std::uint64_t>(state.range(0));
  strata::Database& db = filled_strata(state.range(0));
  std::mt19937_64 rng(state.thread_index() + 1);
  for (auto _ : state) {
    const std::string key = key_of(rng() % keys);
    benchmark::DoNotOptimize(db.run([&](strata::Transaction& tr) { return tr.get(key); }));
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(bm_strata_point_get_run)->Name("BM_StrataPointGetRun")->Apply(point_get_shapes);

// Atomic adds on one hot key: blind, so they never conflict and scale with group commit.
void bm_strata_atomic_add_hot_key(benchmark::State& state) {
  static strata::Database db = strata::Database::open();
  const std::string one("\x01\0\0\0\0\0\0\0", 8);
  strata::Transaction tr = db.create_transaction();
  for (auto _ : state) {
    tr.atomic_op(strata::MutationType::add, "hot", one);
    tr.commit();
    tr.reset();
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(bm_strata_atomic_add_hot_key)
    ->Name("BM_StrataAtomicAddHotKey")
    ->Threads(1)
    ->Threads(8)
    ->UseRealTime();

// What a commit pays when watches are armed on other keys: 0 or 1,000 armed watches.
void bm_strata_commit_with_armed_watches(benchmark::State& state) {
  strata::Database db = strata::Database::open();
  std::vector<strata::Watch> watches;
  for (int i = 0; i < state.range(0); ++i) {
    strata::Transaction tr = db.create_transaction();
    watches.push_back(tr.watch(key_of(1'000'000 + static_cast<std::uint64_t>(i))));
    tr.commit();
  }
  std::mt19937_64 rng(3);
  std::string value(kValueSize, 'v');
  strata::Transaction tr = db.create_transaction();
  for (auto _ : state) {
    tr.set(key_of(rng() % 100'000), value);
    tr.commit();
    tr.reset();
  }
  state.SetItemsProcessed(state.iterations());
  for (auto& w : watches) w.cancel();
}
BENCHMARK(bm_strata_commit_with_armed_watches)
    ->Name("BM_StrataCommitWithArmedWatches")
    ->Arg(0)
    ->Arg(1000)
    ->ArgName("watches");

// Durable commits under Durability::fsync on the build machine's disk: group commit
// should multiply the single-committer rate as committers are added.
void bm_strata_durable_commit(benchmark::State& state) {
  static std::filesystem::path dir;
  static std::unique_ptr<strata::Database> db;
  if (state.thread_index() == 0) {
    dir = std::filesystem::temp_directory_path() /
          ("strata-bench-durable-" + std::to_string(state.threads()));
    std::filesystem::remove_all(dir);
    strata::Options o;
    o.path = dir;
    o.durability = static_cast<strata::Durability>(state.range(0));
    db = std::make_unique<strata::Database>(strata::Database::open(o));
  }
  // Google Benchmark starts the timed loop of all threads together, after this setup.
  std::mt19937_64 rng(state.thread_index() + 1);
  std::string value(kValueSize, 'v');
  for (auto _ : state) {
    db->run([&](strata::Transaction& tr) { tr.set(key_of(rng() % 1'000'000), value); });
  }
  state.SetItemsProcessed(state.iterations());
  if (state.thread_index() == 0) {
    const strata::DatabaseStats stats = db->stats();
    state.counters["per_batch"] = static_cast<double>(stats.commits) /
                                  static_cast<double>(std::max<std::uint64_t>(stats.batches, 1));
    db.reset();
    std::filesystem::remove_all(dir);
  }
}
BENCHMARK(bm_strata_durable_commit)
    ->Name("BM_StrataDurableCommit")
    ->Arg(static_cast<int>(strata::Durability::fsync))
    ->Arg(static_cast<int>(strata::Durability::buffered))
    ->ArgName("durability(2=fsync,1=buffered)")
    ->Threads(1)
    ->Threads(8)
    ->Threads(64)
    ->UseRealTime();

// Slots freed by commit_async callbacks (on the pipeline's thread) for the one client
// thread that reuses them: a single-producer, single-consumer ring. The client sleeps
// only when no slot is free, and a callback takes the lock to wake it only then, so a
// batch of callbacks costs the pipeline's thread no system call per commit.
class FreedSlots {
 public:
  explicit FreedSlots(std::size_t slots) : ring_(slots) {
    for (std::size_t i = 0; i < slots; ++i) push(i);
  }
  void push(std::size_t slot) {  // the callbacks' thread
    const std::uint64_t head = head_.load(std::memory_order_relaxed);
    ring_[head % ring_.size()] = slot;
    head_.store(head + 1, std::memory_order_seq_cst);
    if (sleeping_.load(std::memory_order_seq_cst)) {
      std::lock_guard lock(mu_);
      freed_.notify_one();
    }
  }
  std::size_t pop() {  // the client's thread
    if (empty()) {
      std::unique_lock lock(mu_);
      sleeping_.store(true, std::memory_order_seq_cst);
      freed_.wait(lock, [&] { return !empty(); });
      sleeping_.store(false, std::memory_order_relaxed);
    }
    return ring_[tail_++ % ring_.size()];
  }
  // Blocks until every slot is free again.
  void wait_all() {
    std::unique_lock lock(mu_);
    sleeping_.store(true, std::memory_order_seq_cst);
    freed_.wait(lock,
                [&] { return head_.load(std::memory_order_seq_cst) - tail_ == ring_.size(); });
    sleeping_.store(false, std::memory_order_relaxed);
  }

 private:
  bool empty() const { return head_.load(std::memory_order_seq_cst) == tail_; }
  std::vector<std::size_t> ring_;
  std::atomic<std::uint64_t> head_{0};
  std::uint64_t tail_ = 0;
  std::atomic<bool> sleeping_{false};
  std::mutex mu_;
  std::condition_variable freed_;
};

// The same commits made with commit_async: one thread keeps range(1) commits in flight
// (FoundationDB's way to concurrency: futures in flight, not a thread per commit), and
// reuses a transaction as soon as its callback frees it.
void bm_strata_durable_commit_async(benchmark::State& state) {
  const std::filesystem::path dir =
      std::filesystem::temp_directory_path() / "strata-bench-durable-async";
  std::filesystem::remove_all(dir);
  strata::Options o;
  o.path = dir;
  o.durability = static_cast<strata::Durability>(state.range(0));
  auto db = std::make_unique<strata::Database>(strata::Database::open(o));
  const auto in_flight = static_cast<std::size_t>(state.range(1));
  std::vector<strata::Transaction> trs;
  trs.reserve(in_flight);
  for (std::size_t i = 0; i < in_flight; ++i) trs.push_back(db->create_transaction());
  FreedSlots slots(in_flight);
  std::atomic<bool> failed{false};
  std::mt19937_64 rng(1);
  std::string value(kValueSize, 'v');
  for (auto _ : state) {
    const std::size_t slot = slots.pop();
    strata::Transaction& tr = trs[slot];
    tr.reset();
    tr.set(key_of(rng() % 1'000'000), value);
    tr.commit_async([&, slot](const strata::Error* error) {
      if (error != nullptr) failed.store(true, std::memory_order_relaxed);  // blind: never
      slots.push(slot);
    });
  }
  slots.wait_all();
  if (failed.load()) state.SkipWithError("a blind commit failed");
  state.SetItemsProcessed(state.iterations());
  const strata::DatabaseStats stats = db->stats();
  state.counters["per_batch"] = static_cast<double>(stats.commits) /
                                static_cast<double>(std::max<std::uint64_t>(stats.batches, 1));
  trs.clear();
  db.reset();
  std::filesystem::remove_all(dir);
}
BENCHMARK(bm_strata_durable_commit_async)
    ->Name("BM_StrataDurableCommitAsync")
    ->ArgNames({"durability(2=fsync,1=buffered)", "in_flight"})
    ->Args({static_cast<int>(strata::Durability::fsync), 1})
    ->Args({static_cast<int>(strata::Durability::fsync), 64})
    ->Args({static_cast<int>(strata::Durability::buffered), 64})
    ->UseRealTime();

// The commit leader's apply of one batch of 50 new keys in no order, in a store of 500 k
// keys: each key's insert seeks the skiplist, and the last levels' nodes are cache misses.
// With prepare_writes (arg 1) the batch's seeks are walked together first, so the misses
// overlap; with arg 2 each new key is then linked along its walk's path instead of after
// a seek (what CommitPipeline does for batches of 4 or more).
void bm_store_apply_batch(benchmark::State& state) {
  constexpr std::size_t kBatch = 50;
  const bool prepared = state.range(0) != 0;
  const bool along = state.range(0) == 2;
  std::vector<strata::kv::MvccStore::List::Path> paths(kBatch);
  strata::kv::MvccStore store;
  const std::string value(kValueSize, 'v');
  std::mt19937_64 rng(5);
  strata::Version version = 0;
  for (int i = 0; i < 500; ++i) {
    ++version;
    for (int j = 0; j < 1000; ++j) store.set(key_of(rng()), value, version);
    store.publish(version);
  }
  std::vector<std::string> keys(kBatch);
  std::vector<std::string_view> views(kBatch);
  for (auto _ : state) {
    state.PauseTiming();
    for (std::size_t i = 0; i < kBatch; ++i) {
      keys[i] = key_of(rng());
      views[i] = keys[i];
    }
    state.ResumeTiming();
    ++version;
    if (along) {
      store.prepare_writes(views, paths);
      for (std::size_t i = 0; i < kBatch; ++i) {
        store.set(views[i], value, version, strata::kv::MvccStore::hash(views[i]), &paths[i]);
      }
    } else {
      if (prepared) store.prepare_writes(views);
      for (std::string_view k : views) store.set(k, value, version);
    }
    store.publish(version);
  }
  state.SetItemsProcessed(state.iterations() * static_cast<std::int64_t>(kBatch));
}
BENCHMARK(bm_store_apply_batch)
    ->Name("BM_StoreApplyBatch")
    ->Arg(0)
    ->Arg(1)
    ->Arg(2)
    ->ArgName("prepared")
    ->Iterations(4000);

#ifdef STRATA_HAVE_LMDB
// LMDB as a speed-minded user would set it up: on tmpfs, no syncs, write map.
struct Lmdb {
  MDB_env* env = nullptr;
  MDB_dbi dbi = 0;
  std::filesystem::path dir;
  explicit Lmdb(const std::string& name) {
    dir = std::filesystem::path("/dev/shm") / ("strata-bench-lmdb-" + name);
    std::filesystem::remove_all(dir);
    std::filesystem::create_directories(dir);
    mdb_env_create(&env);
    mdb_env_set_mapsize(env, std::size_t{4} << 30);
    mdb_env_set_maxreaders(env, 64);
    if (mdb_env_open(env, dir.c_str(), MDB_NOSYNC | MDB_NOMETASYNC | MDB_WRITEMAP | MDB_NOTLS,
                     0644) != 0) {
      std::abort();
    }
    MDB_txn* txn;
    mdb_txn_begin(env, nullptr, 0, &txn);
    mdb_dbi_open(txn, nullptr, 0, &dbi);
    mdb_txn_commit(txn);
  }
  ~Lmdb() {
    mdb_env_close(env);
    std::filesystem::remove_all(dir);
  }
  void put(const std::string& k, const std::string& v, MDB_txn* txn) {
    MDB_val key{k.size(), const_cast<char*>(k.data())};
    MDB_val val{v.size(), const_cast<char*>(v.data())};
    mdb_put(txn, dbi, &key, &val, 0);
  }
};

Lmdb& filled_lmdb(std::int64_t keys) {
  static std::map<std::int64_t, std::unique_ptr<Lmdb>> dbs;
  auto it = dbs.find(keys);
  if (it != dbs.end()) return *it->second;
  auto db = std::make_unique<Lmdb>("get" + std::to_string(keys));
  std::string value(kValueSize, 'v');
  for (std::int64_t i = 0; i < keys; i += 1000) {
    MDB_txn* txn;
    mdb_txn_begin(db->env, nullptr, 0, &txn);
    for (std::int64_t j = i; j < std::min(keys, i + 1000); ++j) db->put(key_of(j), value, txn);
    mdb_txn_commit(txn);
  }
  return *dbs.emplace(keys, std::move(db)).first->second;
}

void bm_lmdb_point_set(benchmark::State& state) {
  const auto keys = static_cast<std::uint64_t>(state.range(0));
  Lmdb db("set");
  std::mt19937_64 rng(1);
  std::string value(kValueSize, 'v');
  for (auto _ : state) {
    MDB_txn* txn;
    mdb_txn_begin(db.env, nullptr, 0, &txn);
    db.put(key_of(rng() % keys), value, txn);
    mdb_txn_commit(txn);
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(bm_lmdb_point_set)->Name("BM_LmdbPointSet")->Apply(point_set_shapes);

void bm_lmdb_point_get(benchmark::State& state) {
  const auto keys = static_cast<std::uint64_t>(state.range(0));
  Lmdb& db = filled_lmdb(state.range(0));
  std::mt19937_64 rng(state.thread_index() + 1);
  for (auto _ : state) {
    MDB_txn* txn;
    mdb_txn_begin(db.env, nullptr, MDB_RDONLY, &txn);
    std::string k = key_of(rng() % keys);
    MDB_val key{k.size(), k.data()}, val;
    benchmark::DoNotOptimize(mdb_get(txn, db.dbi, &key, &val));
    std::string copy(static_cast<const char*>(val.mv_data), val.mv_size);  // as strata returns
    benchmark::DoNotOptimize(copy);
    mdb_txn_abort(txn);
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(bm_lmdb_point_get)->Name("BM_LmdbPointGet")->Apply(point_get_shapes);
#endif

}  // namespace

BENCHMARK_MAIN();
