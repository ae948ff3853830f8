// A bounded histogram of non-negative integers (latencies in nanoseconds), after
// HdrHistogram: values below 2^kSubBits are counted exactly; above, each power of two is
// split into 2^kSubBits equal buckets, so a bucket's width is at most 1/128 of its values.
// A quantile reports its bucket's middle, within kRelativeError (1/256) of the exact
// sample; the smallest and largest samples are kept exactly. Memory is fixed (58 KiB)
// whatever the number of samples, and histograms merge by adding their counts.
//
// Quantiles are by nearest rank: the smallest sample with at least a q share of the
// samples at or below it (of 100 samples, p50 is the 50th and p999 the largest).
//
// Thread safety: none; each client thread keeps its own and they are merged at the end.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>

namespace bench {

class Histogram {
 public:
  static constexpr int kSubBits = 7;
  static constexpr std::uint64_t kSubBuckets = std::uint64_t{1} << kSubBits;
  // Exact below 2 * kSubBuckets; one row of kSubBuckets per power of two above it.
  static constexpr std::size_t kBuckets = (64 - kSubBits + 1) * kSubBuckets;
  // The largest |reported - exact| / exact of a quantile.
  static constexpr double kRelativeError = 1.0 / (2.0 * kSubBuckets);

  void add(std::uint64_t value);
  void merge(const Histogram& other);

  std::uint64_t count() const { return count_; }
  double mean() const;  // of the exact sum (a double: exact to 2^53); 0 when empty
  std::uint64_t min() const { return count_ ? min_ : 0; }
  std::uint64_t max() const { return max_; }  // 0 when empty
  // The q-quantile (q in [0, 1]) by nearest rank, within kRelativeError; 0 when empty.
  std::uint64_t quantile(double q) const;

  // The bucket of `value`, and the smallest value of bucket `index` and its width.
  static std::size_t bucket_of(std::uint64_t value);
  static std::uint64_t bucket_low(std::size_t index);
  static std::uint64_t bucket_width(std::size_t index);

 private:
  std::array<std::uint64_t, kBuckets> counts_{};
  std::uint64_t count_ = 0;
  double sum_ = 0;
  std::uint64_t min_ = ~std::uint64_t{0};
  std::uint64_t max_ = 0;
};

}  // namespace bench
