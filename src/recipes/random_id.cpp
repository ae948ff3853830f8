#include "recipes/random_id.hpp"

#include <array>
#include <cstdint>
#include <cstring>
#include <random>
#include <string_view>
#include <utility>

#include "tuple/tuple_codec.hpp"

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

std::array<char, kRandomIdSize> random_bytes() {
  std::mt19937_64& gen = generator();
  std::array<std::uint64_t, 3> words{gen(), gen(), gen()};
  std::array<char, kRandomIdSize> bytes;
  std::memcpy(bytes.data(), words.data(), kRandomIdSize);
  return bytes;
}

}  // namespace

Bytes random_id() {
  std::array<char, kRandomIdSize> bytes = random_bytes();
  return Bytes{std::string(bytes.data(), bytes.size())};
}

std::string numbered_item_key(const Subspace& subspace, std::int64_t position) {
  std::array<char, kRandomIdSize> id = random_bytes();
  std::string key;
  // Prefix, at most 9 bytes of integer, and the id with every byte escaped at worst.
  key.reserve(subspace.key().size() + 9 + 2 * kRandomIdSize + 2);
  key.append(subspace.key());
  tuple_detail::append_int(key, position);
  tuple_detail::append_bytes(key, std::string_view(id.data(), id.size()));
  return key;
}

}  // namespace strata::recipes_detail
