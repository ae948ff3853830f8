#include "histogram.hpp"

#include <algorithm>
#include <bit>
#include <cmath>

namespace bench {

// A value of bit width w > kSubBits lies in row w - kSubBits, whose buckets are
// 2^(w - kSubBits - 1) wide; its top kSubBits + 1 bits (kSubBuckets to 2 * kSubBuckets - 1)
// pick the bucket. Row 0 is the exact values below 2 * kSubBuckets.
std::size_t Histogram::bucket_of(std::uint64_t value) {
  const int width = static_cast<int>(std::bit_width(value));
  if (width <= kSubBits + 1) return static_cast<std::size_t>(value);
  const int shift = width - kSubBits - 1;
  return static_cast<std::size_t>(shift) * kSubBuckets + static_cast<std::size_t>(value >> shift);
}

std::uint64_t Histogram::bucket_low(std::size_t index) {
  if (index < 2 * kSubBuckets) return index;
  const std::size_t shift = index / kSubBuckets - 1;
  return static_cast<std::uint64_t>(index - shift * kSubBuckets) << shift;
}

std::uint64_t Histogram::bucket_width(std::size_t index) {
  if (index < 2 * kSubBuckets) return 1;
  return std::uint64_t{1} << (index / kSubBuckets - 1);
}

void Histogram::add(std::uint64_t value) {
  ++counts_[bucket_of(value)];
  ++count_;
  sum_ += static_cast<double>(value);
  min_ = std::min(min_, value);
  max_ = std::max(max_, value);
}

void Histogram::merge(const Histogram& other) {
  for (std::size_t i = 0; i < kBuckets; ++i) counts_[i] += other.counts_[i];
  count_ += other.count_;
  sum_ += other.sum_;
  min_ = std::min(min_, other.min_);
  max_ = std::max(max_, other.max_);
}

double Histogram::mean() const { return count_ ? sum_ / static_cast<double>(count_) : 0.0; }

std::uint64_t Histogram::quantile(double q) const {
  if (count_ == 0) return 0;
  const double rank_q = std::ceil(q * static_cast<double>(count_));
  const std::uint64_t rank =
      std::min(count_, static_cast<std::uint64_t>(std::max(rank_q, 1.0)));  // 1-based
  if (rank == 1) return min_;
  if (rank == count_) return max_;
  std::uint64_t seen = 0;
  std::size_t i = 0;
  for (; i < kBuckets; ++i) {
    seen += counts_[i];
    if (seen >= rank) break;
  }
  const std::uint64_t middle = bucket_low(i) + (bucket_width(i) - 1) / 2;
  return std::clamp(middle, min_, max_);  // the exact ends are tighter than the bucket
}

}  // namespace bench
