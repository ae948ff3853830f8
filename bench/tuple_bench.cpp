// Tuple layer benchmarks: the recipe keys on the hot path of every queue operation
// (Q/(index, 20 random bytes) and P/(priority, count, 20 random bytes)) and a nested case.
// Results: docs/benchmarks-tuple.md.
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
  static const Subspace q(Tuple{"Q"});
  return q;
}
const Subspace& priority_space() {
  static const Subspace p(Tuple{"P"});
  return p;
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
void BM_PackQueueKey(benchmark::State& state) {
  const Tuple t = queue_tuple();
  for (auto _ : state) benchmark::DoNotOptimize(queue_space().pack(t));
}
BENCHMARK(BM_PackQueueKey);

// What the recipe does per enqueue: build the tuple from an index and a random id, pack.
void BM_BuildAndPackQueueKey(benchmark::State& state) {
  const std::string id = random_bytes(20, 1);
  std::int64_t index = 1000;
  for (auto _ : state) {
    benchmark::DoNotOptimize(queue_space().pack(Tuple{index++, Bytes{id}}));
  }
}
BENCHMARK(BM_BuildAndPackQueueKey);

void BM_UnpackQueueKey(benchmark::State& state) {
  const std::string key = queue_space().pack(queue_tuple());
  for (auto _ : state) benchmark::DoNotOptimize(queue_space().unpack(key));
}
BENCHMARK(BM_UnpackQueueKey);

void BM_PackPriorityKey(benchmark::State& state) {
  const Tuple t = priority_tuple();
  for (auto _ : state) benchmark::DoNotOptimize(priority_space().pack(t));
}
BENCHMARK(BM_PackPriorityKey);

void BM_BuildAndPackPriorityKey(benchmark::State& state) {
  const std::string id = random_bytes(20, 2);
  std::int64_t count = 1000;
  for (auto _ : state) {
    benchmark::DoNotOptimize(priority_space().pack(Tuple{7, count++, Bytes{id}}));
  }
}
BENCHMARK(BM_BuildAndPackPriorityKey);

void BM_UnpackPriorityKey(benchmark::State& state) {
  const std::string key = priority_space().pack(priority_tuple());
  for (auto _ : state) benchmark::DoNotOptimize(priority_space().unpack(key));
}
BENCHMARK(BM_UnpackPriorityKey);

void BM_PackNestedTuple(benchmark::State& state) {
  const Tuple t = nested_tuple();
  for (auto _ : state) benchmark::DoNotOptimize(t.pack());
}
BENCHMARK(BM_PackNestedTuple);

void BM_UnpackNestedTuple(benchmark::State& state) {
  const std::string bytes = nested_tuple().pack();
  for (auto _ : state) benchmark::DoNotOptimize(Tuple::unpack(bytes));
}
BENCHMARK(BM_UnpackNestedTuple);

void BM_CompareQueueKeys(benchmark::State& state) {
  const Tuple a = queue_tuple();
  const Tuple b{std::int64_t{123456}, Bytes{random_bytes(20, 3)}};
  for (auto _ : state) benchmark::DoNotOptimize(a <=> b);
}
BENCHMARK(BM_CompareQueueKeys);

}  // namespace
}  // namespace strata

BENCHMARK_MAIN();
