// Durability benchmarks: WAL group commit (one fdatasync per record versus per batch of 64
// records), WAL replay, and checkpoint write and read throughput on ~100 MB of 16-byte keys
// and 100-byte values. Files go to a fresh directory under $TMPDIR (default /tmp), which
// should be a real disk for the sync figures to mean anything.
//
// Build: strata_add_bench(strata_durability_bench durability_bench.cpp) in bench/CMakeLists.txt.
// Run:   build/<preset>/bench/strata_durability_bench --benchmark_min_time=2
//
// The benchmark functions are lower_case like every function (.clang-tidy); ->Name keeps
// the BM_ names that results and docs/benchmarks.md quote.
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <random>
#include <string>

#include <benchmark/benchmark.h>

#include "base/crc32c.hpp"
#include "base/file_system.hpp"
#include "durability/checkpoint_reader.hpp"
#include "durability/checkpoint_writer.hpp"
#include "durability/wal_reader.hpp"
#include "durability/wal_writer.hpp"

namespace {

namespace dur = strata::durability;
namespace fs = std::filesystem;

constexpr std::size_t kKeyBytes = 16;
constexpr std::size_t kValueBytes = 100;
constexpr std::uint64_t kCheckpointEntries = 100'000'000 / (kKeyBytes + kValueBytes);

class ScratchDir {
 public:
  ScratchDir() {
    const char* base = std::getenv("TMPDIR");
    std::string pattern = std::string(base != nullptr ? base : "/tmp") + "/strata-bench-XXXXXX";
    if (::mkdtemp(pattern.data()) == nullptr) std::abort();
    path_ = pattern;
  }
  ~ScratchDir() { fs::remove_all(path_); }
  const fs::path& path() const { return path_; }

 private:
  fs::path path_;
};

// A record payload like a one-transaction batch: a 16-byte key and a 100-byte value.
std::string record_payload(std::mt19937_64& rng) {
  std::string p(kKeyBytes + kValueBytes, '\0');
  for (char& c : p) c = static_cast<char>('a' + rng() % 26);
  return p;
}

void wal_append_sync(benchmark::State& state, int records_per_sync) {
  ScratchDir dir;
  auto& file_system = strata::base::default_file_system();
  dur::WalWriter writer(file_system, dir.path(), 0);
  std::mt19937_64 rng(1);
  const std::string payload = record_payload(rng);
  strata::Version v = 0;
  for (auto _ : state) {
    for (int i = 0; i < records_per_sync; ++i) writer.append(++v, payload);
    writer.flush(/*sync=*/true);
  }
  const auto records = static_cast<std::int64_t>(state.iterations()) * records_per_sync;
  state.SetItemsProcessed(records);
  state.SetBytesProcessed(records * static_cast<std::int64_t>(payload.size()));
  state.counters["syncs/s"] =
      benchmark::Counter(static_cast<double>(state.iterations()), benchmark::Counter::kIsRate);
}

void bm_wal_append_sync_per_record(benchmark::State& state) { wal_append_sync(state, 1); }
void bm_wal_append_sync_per_batch64(benchmark::State& state) { wal_append_sync(state, 64); }
BENCHMARK(bm_wal_append_sync_per_record)
    ->Name("BM_WalAppendSyncPerRecord")
    ->UseRealTime()
    ->Unit(benchmark::kMicrosecond);
BENCHMARK(bm_wal_append_sync_per_batch64)
    ->Name("BM_WalAppendSyncPerBatch64")
    ->UseRealTime()
    ->Unit(benchmark::kMicrosecond);

// Log replay: ~100 MB of 64-record batches read back through WalReader.
void bm_wal_replay(benchmark::State& state) {
  ScratchDir dir;
  auto& file_system = strata::base::default_file_system();
  std::mt19937_64 rng(2);
  std::uint64_t log_bytes = 0;
  {
    dur::WalWriter writer(file_system, dir.path(), 0);
    std::string batch;
    strata::Version v = 0;
    while (log_bytes < 100'000'000) {
      batch.clear();
      for (int i = 0; i < 64; ++i) batch += record_payload(rng);
      writer.append(++v, batch);
      log_bytes += batch.size();
      if (v % 64 == 0) writer.flush(false);
    }
    writer.close();
  }
  for (auto _ : state) {
    std::uint64_t seen = 0;
    const auto result =
        dur::WalReader(file_system, dir.path()).read(0, [&](const dur::WalRecord& r) {
          seen += r.payload.size();
        });
    benchmark::DoNotOptimize(result.records_delivered);
    if (seen != log_bytes) state.SkipWithError("replay lost bytes");
  }
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * log_bytes));
}
BENCHMARK(bm_wal_replay)->Name("BM_WalReplay")->UseRealTime()->Unit(benchmark::kMillisecond);

// Ordered 16-byte keys, 100-byte values of random lowercase letters (LZ4 gets little).
dur::CheckpointSource entry_source(std::uint64_t count) {
  auto rng = std::make_shared<std::mt19937_64>(3);
  auto i = std::make_shared<std::uint64_t>(0);
  return [=](std::string& key, std::string& value) {
    if (*i == count) return false;
    char buf[kKeyBytes + 1];
    std::snprintf(buf, sizeof buf, "k%015llu", static_cast<unsigned long long>((*i)++));
    key.assign(buf, kKeyBytes);
    value.resize(kValueBytes);
    for (char& c : value) c = static_cast<char>('a' + (*rng)() % 26);
    return true;
  };
}

void bm_checkpoint_write(benchmark::State& state) {
  ScratchDir dir;
  auto& file_system = strata::base::default_file_system();
  dur::CheckpointStats stats;
  strata::Version v = 0;
  for (auto _ : state) {
    stats = dur::write_checkpoint(file_system, dir.path(), ++v, entry_source(kCheckpointEntries));
    state.PauseTiming();
    fs::remove(stats.path);
    state.ResumeTiming();
  }
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * stats.raw_bytes));
  state.counters["file_MB"] = static_cast<double>(stats.file_bytes) / 1e6;
  state.counters["raw_MB"] = static_cast<double>(stats.raw_bytes) / 1e6;
}
BENCHMARK(bm_checkpoint_write)
    ->Name("BM_CheckpointWrite")
    ->UseRealTime()
    ->Unit(benchmark::kMillisecond);

void bm_checkpoint_read(benchmark::State& state) {
  ScratchDir dir;
  auto& file_system = strata::base::default_file_system();
  const auto stats =
      dur::write_checkpoint(file_system, dir.path(), 1, entry_source(kCheckpointEntries));
  for (auto _ : state) {
    std::uint64_t bytes = 0;
    const auto info = dur::read_checkpoint(
        file_system, stats.path,
        [&](std::string_view k, std::string_view val) { bytes += k.size() + val.size(); });
    benchmark::DoNotOptimize(bytes);
    if (info.entries != kCheckpointEntries) state.SkipWithError("lost entries");
  }
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * stats.raw_bytes));
  state.counters["entries/s"] = benchmark::Counter(
      static_cast<double>(state.iterations() * kCheckpointEntries), benchmark::Counter::kIsRate);
}
BENCHMARK(bm_checkpoint_read)
    ->Name("BM_CheckpointRead")
    ->UseRealTime()
    ->Unit(benchmark::kMillisecond);

void bm_crc32c(benchmark::State& state) {
  std::string data(1 << 20, 'x');
  for (auto _ : state) benchmark::DoNotOptimize(strata::base::crc32c::value(data));
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * data.size()));
}
BENCHMARK(bm_crc32c)->Name("BM_Crc32c");

}  // namespace

BENCHMARK_MAIN();
