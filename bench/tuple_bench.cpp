// Tuple layer benchmarks: the recipe keys on the hot path of every queue operation
// (Q/(index, 20 random bytes) and P/(priority, count, 20 random bytes)) and a nested case.
// Results: docs/benchmarks.md, "Tuple layer".
//
// The benchmark functions are lower_case like every function (.clang-tidy); ->Name keeps
// the BM_ names that results and the docs quote.
#include <cstdint>
#include <random>
#include <string>

#include <benchmark/benchmark.h>

#include "strata/subspace.hpp"
#include "strata/tuple.hpp"

namespace strata {
namespace {

std::string random_bytes(std::size_t n, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::string out(n, '\0');
  for (char& c : out) c = static_cast<char>(rng());
  return out;
}

const Subspace& queue_space() {
  static const Subspace kQueueSpace(Tuple{"Q"});
  return kQueueSpace;
}
const Subspace& priority_space() {
  static const Subspace kPrioritySpace(Tuple{"P"});
  return kPrioritySpace;
}

Tuple queue_tuple() { return Tuple{std::int64_t{123456}, Bytes{random_bytes(20, 1)}}; }
Tuple priority_tuple() { return Tuple{7, std::int64_t{98765}, Bytes{random_bytes(20, 2)}}; }
Tuple nested_tuple() {
  return Tuple{
      "users",
      Element(Tuple{42, Element(Tuple{Bytes{std::string("a\0b", 3)}, nullptr, 3.5}), "name"}), true,
      -1};
}

// Subspace::pack of an already-built tuple: the encoder alone.
void bm_pack_queue_key(benchmark::State& state) {
  const Tuple t = queue_tuple();
  for (auto _ : state) benchmark::DoNotOptimize(queue_space().pack(t));
}
BENCHMARK(bm_pack_queue_key)->Name("BM_PackQueueKey");

// What the recipe does per enqueue: build the tuple from an index and a random id, pack.
void bm_build_and_pack_queue_key(benchmark::State& state) {
  const std::string id = random_bytes(20, 1);
  std::int64_t index = 1000;
  for (auto _ : state) {
    benchmark::DoNotOptimize(queue_space().pack(Tuple{index++, Bytes{id}}));
  }
}
BENCHMARK(bm_build_and_pack_queue_key)->Name("BM_BuildAndPackQueueKey");

void bm_unpack_queue_key(benchmark::State& state) {
  const std::string key = queue_space().pack(queue_tuple());
  for (auto _ : state) benchmark::DoNotOptimize(queue_space().unpack(key));
}
BENCHMARK(bm_unpack_queue_key)->Name("BM_UnpackQueueKey");

void bm_pack_priority_key(benchmark::State& state) {
  const Tuple t = priority_tuple();
  for (auto _ : state) benchmark::DoNotOptimize(priority_space().pack(t));
}
BENCHMARK(bm_pack_priority_key)->Name("BM_PackPriorityKey");

void bm_build_and_pack_priority_key(benchmark::State& state) {
  const std::string id = random_bytes(20, 2);
  std::int64_t count = 1000;
  for (auto _ : state) {
    benchmark::DoNotOptimize(priority_space().pack(Tuple{7, count++, Bytes{id}}));
  }
}
BENCHMARK(bm_build_and_pack_priority_key)->Name("BM_BuildAndPackPriorityKey");

void bm_unpack_priority_key(benchmark::State& state) {
  const std::string key = priority_space().pack(priority_tuple());
  for (auto _ : state) benchmark::DoNotOptimize(priority_space().unpack(key));
}
BENCHMARK(bm_unpack_priority_key)->Name("BM_UnpackPriorityKey");

void bm_pack_nested_tuple(benchmark::State& state) {
  const Tuple t = nested_tuple();
  for (auto _ : state) benchmark::DoNotOptimize(t.pack());
}
BENCHMARK(bm_pack_nested_tuple)->Name("BM_PackNestedTuple");

void bm_unpack_nested_tuple(benchmark::State& state) {
  const std::string bytes = nested_tuple().pack();
  for (auto _ : state) benchmark::DoNotOptimize(Tuple::unpack(bytes));
}
BENCHMARK(bm_unpack_nested_tuple)->Name("BM_UnpackNestedTuple");

void bm_compare_queue_keys(benchmark::State& state) {
  const Tuple a = queue_tuple();
  const Tuple b{std::int64_t{123456}, Bytes{random_bytes(20, 3)}};
  for (auto _ : state) benchmark::DoNotOptimize(a <=> b);
}
BENCHMARK(bm_compare_queue_keys)->Name("BM_CompareQueueKeys");

}  // namespace
}  // namespace strata

BENCHMARK_MAIN();
