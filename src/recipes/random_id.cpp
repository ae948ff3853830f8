#include "recipes/random_id.hpp"

#include <array>
#include <cstdint>
#include <cstring>
#include <random>
#include <utility>
#include <vector>

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

Tuple numbered_item(std::int64_t position) {
  std::vector<Element> elements;
  elements.reserve(2);
  elements.emplace_back(position);
  elements.emplace_back(random_id());
  return Tuple(std::move(elements));
}

}  // namespace strata::recipes_detail
