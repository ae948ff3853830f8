// Point-set and point-get transactions on strata, with LMDB (no sync, on tmpfs) measured
// in the same run when liblmdb is available. 16-byte keys, 100-byte values.
//
//   build/release/bench/strata_engine_bench --benchmark_min_time=3
#include <benchmark/benchmark.h>

#include <cstdio>
#include <filesystem>
#include <map>
#include <memory>
#include <random>
#include <string>

#include "strata/strata.hpp"

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

// One database per key count, filled once and shared by every benchmark that reads it.
strata::Database& filled_strata(std::int64_t keys) {
  static std::map<std::int64_t, strata::Database> dbs;
  auto it = dbs.find(keys);
  if (it != dbs.end()) return it->second;
  strata::Database db = strata::Database::open();
  std::string value(kValueSize, 'v');
  for (std::int64_t i = 0; i < keys; i += 1000) {
    db.run([&](strata::Transaction& tr) {
      for (std::int64_t j = i; j < std::min(keys, i + 1000); ++j) tr.set(key_of(j), value);
    });
  }
  return dbs.emplace(keys, db).first->second;
}

void BM_StrataPointSet(benchmark::State& state) {
  const auto keys = static_cast<std::uint64_t>(state.range(0));
  strata::Database db = strata::Database::open();
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
BENCHMARK(BM_StrataPointSet)->Arg(100'000)->Arg(1'000'000)->ArgName("keys");

void BM_StrataPointGet(benchmark::State& state) {
  const auto keys = static_cast<std::uint64_t>(state.range(0));
  strata::Database& db = filled_strata(state.range(0));
  std::mt19937_64 rng(state.thread_index() + 1);
  strata::Transaction tr = db.create_transaction();
  for (auto _ : state) {
    benchmark::DoNotOptimize(tr.get(key_of(rng() % keys)));
    tr.commit();  // read-only: no check, no version
    tr.reset();
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_StrataPointGet)->Arg(100'000)->Arg(1'000'000)->ArgName("keys")->Threads(1)->Threads(2)->UseRealTime();

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

void BM_LmdbPointSet(benchmark::State& state) {
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
BENCHMARK(BM_LmdbPointSet)->Arg(100'000)->Arg(1'000'000)->ArgName("keys");

void BM_LmdbPointGet(benchmark::State& state) {
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
BENCHMARK(BM_LmdbPointGet)->Arg(100'000)->Arg(1'000'000)->ArgName("keys")->Threads(1)->Threads(2)->UseRealTime();
#endif

}  // namespace

BENCHMARK_MAIN();
