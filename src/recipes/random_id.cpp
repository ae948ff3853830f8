#include "recipes/random_id.hpp"

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <string_view>
#include <utility>

namespace strata::recipes_detail {
namespace {

// SplitMix64 (Steele, Lea and Flood, "Fast splittable pseudorandom number generators",
// 2014): a Weyl sequence through a 64-bit finalizer. Its 8 bytes of state cost a few
// instructions a draw, where a Mersenne Twister periodically refills 2.5 KB.
class SplitMix64 {
 public:
  explicit SplitMix64(std::uint64_t seed) : state_(seed) {}
  std::uint64_t operator()() {
    std::uint64_t z = (state_ += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }

 private:
  std::uint64_t state_;
};

SplitMix64& generator() {
  thread_local SplitMix64 gen = [] {
    std::random_device device;
    std::uint64_t seed = (std::uint64_t{device()} << 32) ^ device();
    return SplitMix64(seed);
  }();
  return gen;
}

std::array<char, kRandomIdSize> random_bytes() {
  SplitMix64& gen = generator();
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

std::string_view numbered_item_key(std::string_view prefix, std::int64_t position) {
  std::array<char, kRandomIdSize> id = random_bytes();
  // Written in place into the calling thread's buffer, which keeps the room of the longest
  // key it has held: no allocation, no per-byte appends, no resizing per key.
  thread_local std::string buffer;
  const std::size_t most = prefix.size() + kMaxPackedIntSize + max_packed_bytes_size(kRandomIdSize);
  if (buffer.size() < most) buffer.resize(most);
  char* out = std::copy(prefix.begin(), prefix.end(), buffer.data());
  out = pack_int_at(out, position);
  out = pack_bytes_at(out, std::string_view(id.data(), id.size()));
  return {buffer.data(), static_cast<std::size_t>(out - buffer.data())};
}

std::int64_t item_position(std::string_view prefix, std::string_view key) {
  if (!key.starts_with(prefix)) {
    (void)Subspace(Tuple{}, prefix).unpack(key);  // throws key_not_in_subspace
  }
  key.remove_prefix(prefix.size());
  return unpack_first(key, prefix.size()).get<std::int64_t>();
}

}  // namespace strata::recipes_detail
