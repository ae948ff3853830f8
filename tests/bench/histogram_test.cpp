#include "stress/histogram.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <vector>

#include <gtest/gtest.h>

namespace bench {
namespace {

constexpr double kQuantiles[] = {0.0, 0.1, 0.5, 0.9, 0.95, 0.99, 0.999, 1.0};

// The nearest-rank q-quantile of `sorted`: the ceil(q n)-th smallest (the first if 0).
std::uint64_t exact_quantile(const std::vector<std::uint64_t>& sorted, double q) {
  const double rank = std::ceil(q * static_cast<double>(sorted.size()));
  const auto k = std::min(sorted.size(), static_cast<std::size_t>(std::max(rank, 1.0))) - 1;
  return sorted[k];
}

void expect_within_precision(const Histogram& h, std::vector<std::uint64_t> samples) {
  std::sort(samples.begin(), samples.end());
  for (double q : kQuantiles) {
    const auto exact = static_cast<double>(exact_quantile(samples, q));
    const auto got = static_cast<double>(h.quantile(q));
    EXPECT_LE(std::abs(got - exact), exact * Histogram::kRelativeError)
        << "q " << q << ": exact " << exact << ", histogram " << got;
  }
}

// Latency-like samples: log-uniform from 1 ns to ~17 s, so every row of buckets is used.
std::vector<std::uint64_t> log_uniform(std::size_t n, std::uint32_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> exponent(0.0, 34.0);
  std::vector<std::uint64_t> out(n);
  for (auto& v : out) v = static_cast<std::uint64_t>(std::exp2(exponent(rng)));
  return out;
}

TEST(Histogram, QuantilesAreWithinTheBucketPrecisionOfTheExactOnes) {
  for (std::uint32_t seed : {1u, 2u, 3u}) {
    const std::vector<std::uint64_t> samples = log_uniform(100'000, seed);
    Histogram h;
    for (std::uint64_t v : samples) h.add(v);
    expect_within_precision(h, samples);
  }
}

// The precision holds for narrow distributions too, where many samples share a bucket.
TEST(Histogram, NarrowNormalSamplesAreWithinPrecision) {
  std::mt19937_64 rng(7);
  std::normal_distribution<double> around_50us(50'000.0, 2'000.0);
  std::vector<std::uint64_t> samples(50'000);
  for (auto& v : samples) v = static_cast<std::uint64_t>(std::max(1.0, around_50us(rng)));
  Histogram h;
  for (std::uint64_t v : samples) h.add(v);
  expect_within_precision(h, samples);
}

// Below 256 every value has its own bucket: quantiles are exact, by nearest rank.
TEST(Histogram, SmallValuesAreExactByNearestRank) {
  Histogram hundred;
  for (std::uint64_t v = 100; v >= 1; --v) hundred.add(v);  // in no helpful order
  EXPECT_EQ(hundred.quantile(0.50), 50u);
  EXPECT_EQ(hundred.quantile(0.90), 90u);
  EXPECT_EQ(hundred.quantile(0.99), 99u);
  EXPECT_EQ(hundred.quantile(0.999), 100u);  // of 100 samples, the largest
  EXPECT_EQ(hundred.quantile(0.0), 1u);
  EXPECT_DOUBLE_EQ(hundred.mean(), 50.5);
}

TEST(Histogram, EmptyReportsZeros) {
  const Histogram h;
  EXPECT_EQ(h.count(), 0u);
  EXPECT_EQ(h.quantile(0.5), 0u);
  EXPECT_EQ(h.quantile(0.999), 0u);
  EXPECT_EQ(h.mean(), 0.0);
  EXPECT_EQ(h.min(), 0u);
  EXPECT_EQ(h.max(), 0u);
}

TEST(Histogram, OneSampleIsEveryQuantileExactly) {
  Histogram h;
  h.add(123'457);  // inside a bucket 512 wide
  for (double q : kQuantiles) EXPECT_EQ(h.quantile(q), 123'457u) << q;
  EXPECT_EQ(h.mean(), 123'457.0);
}

TEST(Histogram, MaxAndMinAreExact) {
  Histogram h;
  for (std::uint64_t v : {1'000'003u, 1'000'001u, 5'000'017u, 4'999'999u}) h.add(v);
  EXPECT_EQ(h.max(), 5'000'017u);
  EXPECT_EQ(h.min(), 1'000'001u);
  EXPECT_EQ(h.quantile(1.0), 5'000'017u);
  EXPECT_EQ(h.quantile(0.0), 1'000'001u);
  // Rank 3 of 4 shares its bucket with the max; it is reported no higher than the max.
  EXPECT_LE(h.quantile(0.75), 5'000'017u);
  EXPECT_NEAR(static_cast<double>(h.quantile(0.75)), 4'999'999.0,
              4'999'999.0 * Histogram::kRelativeError);
}

TEST(Histogram, HugeValuesLandInTheLastBuckets) {
  constexpr std::uint64_t kTop = std::numeric_limits<std::uint64_t>::max();
  EXPECT_EQ(Histogram::bucket_of(kTop), Histogram::kBuckets - 1);
  EXPECT_EQ(Histogram::bucket_of(std::uint64_t{1} << 63),
            Histogram::kBuckets - Histogram::kSubBuckets);
  Histogram h;
  h.add(kTop);
  h.add(std::uint64_t{1} << 63);
  h.add(3);
  EXPECT_EQ(h.max(), kTop);
  EXPECT_EQ(h.quantile(1.0), kTop);
  constexpr double kTwo63 = 9223372036854775808.0;
  EXPECT_NEAR(static_cast<double>(h.quantile(0.5)), kTwo63, kTwo63 * Histogram::kRelativeError);
  EXPECT_EQ(h.quantile(0.0), 3u);
}

// Every bucket starts where the one before it ends, and holds the values it claims.
TEST(Histogram, BucketsTileTheValues) {
  for (std::size_t i = 1; i < Histogram::kBuckets; ++i) {
    ASSERT_EQ(Histogram::bucket_low(i),
              Histogram::bucket_low(i - 1) + Histogram::bucket_width(i - 1))
        << i;
    ASSERT_EQ(Histogram::bucket_of(Histogram::bucket_low(i)), i);
    ASSERT_EQ(Histogram::bucket_of(Histogram::bucket_low(i) - 1), i - 1);
    // A bucket is at most 1/128 as wide as its smallest value.
    ASSERT_LE(Histogram::bucket_width(i) * Histogram::kSubBuckets,
              std::max<std::uint64_t>(Histogram::bucket_low(i), Histogram::kSubBuckets));
  }
}

// Merged per-client histograms report what one histogram of all the samples reports.
TEST(Histogram, MergeEqualsOneHistogramOfEverySample) {
  const std::vector<std::uint64_t> samples = log_uniform(30'000, 11);
  Histogram all, parts[3];
  for (std::size_t i = 0; i < samples.size(); ++i) {
    all.add(samples[i]);
    parts[i % 3].add(samples[i]);
  }
  Histogram merged;
  for (const Histogram& p : parts) merged.merge(p);
  EXPECT_EQ(merged.count(), all.count());
  EXPECT_EQ(merged.max(), all.max());
  EXPECT_EQ(merged.min(), all.min());
  EXPECT_DOUBLE_EQ(merged.mean(), all.mean());
  for (double q : kQuantiles) EXPECT_EQ(merged.quantile(q), all.quantile(q)) << q;
  expect_within_precision(merged, samples);
  Histogram with_empty = all;
  with_empty.merge(Histogram());
  EXPECT_EQ(with_empty.min(), all.min());
  EXPECT_EQ(with_empty.quantile(0.5), all.quantile(0.5));
}

// Its memory is its fixed array, however many samples it has counted.
TEST(Histogram, SizeIsFixed) {
  static_assert(sizeof(Histogram) < 64 * 1024);
  Histogram h;
  for (std::uint64_t i = 0; i < 1'000'000; ++i) h.add(i * 7919);
  EXPECT_EQ(h.count(), 1'000'000u);
}

}  // namespace
}  // namespace bench
