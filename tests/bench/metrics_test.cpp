#include "stress/metrics.hpp"

#include <chrono>
#include <string>
#include <vector>

#include <gtest/gtest.h>

namespace stress {
namespace {

Latencies one_to(int n) {
  Latencies l;
  for (int i = n; i >= 1; --i) l.add(std::chrono::microseconds(i));  // in no helpful order
  return l;
}

// Nearest rank: the smallest sample with at least a q share of the samples at or below it,
// within the histogram's precision (1/256; neighbouring samples here are 1-2 % apart).
void expect_about(double got, double exact) {
  EXPECT_NEAR(got, exact, exact * bench::Histogram::kRelativeError);
}

TEST(Latencies, QuantilesAreByNearestRank) {
  Latencies hundred = one_to(100);
  expect_about(hundred.quantile_us(0.50), 50.0);
  expect_about(hundred.quantile_us(0.90), 90.0);
  expect_about(hundred.quantile_us(0.99), 99.0);
  EXPECT_EQ(hundred.quantile_us(0.999), 100.0);  // of 100 samples, the largest, exactly
  EXPECT_EQ(hundred.max_us(), 100.0);
  EXPECT_DOUBLE_EQ(hundred.mean_us(), 50.5);
  Latencies thousand = one_to(1000);
  expect_about(thousand.quantile_us(0.999), 999.0);
  EXPECT_EQ(thousand.quantile_us(0.0), 1.0);
  Latencies one = one_to(1);
  EXPECT_EQ(one.quantile_us(0.5), 1.0);
  EXPECT_EQ(one.quantile_us(0.999), 1.0);
  EXPECT_EQ(Latencies().quantile_us(0.5), 0.0);
}

// The report shows the first ten violations and counts them all.
TEST(Summarise, KeepsTenViolationsAndCountsEvery) {
  RunResult r;
  for (int i = 0; i < 15; ++i) r.violations.push_back("lost " + std::to_string(i));
  std::vector<Latencies> clients(2);
  clients[0].add(std::chrono::microseconds(3));
  clients[1].add(std::chrono::microseconds(5));
  summarise(clients, r);
  EXPECT_EQ(r.violations.size(), 10u);
  EXPECT_EQ(r.violations.back(), "lost 9");
  EXPECT_EQ(r.violation_count, 15u);
  EXPECT_EQ(r.ops, 2u);
  EXPECT_EQ(r.p999_us, 5.0);
  EXPECT_EQ(r.max_us, 5.0);
  EXPECT_DOUBLE_EQ(r.mean_us, 4.0);
  EXPECT_EQ(r.p50_us, 3.0);
}

}  // namespace
}  // namespace stress
