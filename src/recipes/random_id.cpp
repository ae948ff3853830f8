#include "recipes/random_id.hpp"

#include <array>
#include <cstdint>
#include <cstring>
#include <random>

namespace strata::recipes_detail {
namespace {

std::mt19937_64& generator() {
  thread_local std::mt19937_64 gen = [] {
    std::random_device device;
    std::array<std::uint32_t, 8> words{};
    for (auto& w : words) w = device();
    std::seed_seq seq(words.begin(), words.end());
    return std::mt19937_64(seq);
  }();
  return gen;
}

}  // namespace

Bytes random_id() {
  std::mt19937_64& gen = generator();
  std::array<std::uint64_t, 3> words{gen(), gen(), gen()};
  Bytes id;
  id.data.resize(kRandomIdSize);
  std::memcpy(id.data.data(), words.data(), kRandomIdSize);
  return id;
}

}  // namespace strata::recipes_detail
