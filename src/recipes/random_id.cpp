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

// The tuple encoding's type code of a byte string (design/tuple.md in apple/foundationdb).
constexpr char kBytesCode = '\x01';

// wyrand (Wang Yi, the generator of wyhash): a Weyl sequence whose each step is mixed by
// one 64x64->128-bit multiply, folded. Its 8 bytes of state cost a few instructions a
// draw, where a Mersenne Twister periodically refills 2.5 KB.
class WyRand {
 public:
  explicit WyRand(std::uint64_t seed) : state_(seed) {}
  std::uint64_t operator()() {
    __extension__ using Wide = unsigned __int128;
    state_ += 0xa0761d6478bd642full;
    const Wide product = static_cast<Wide>(state_) * (state_ ^ 0xe7037ed1a0b428dbull);
    return static_cast<std::uint64_t>(product >> 64) ^ static_cast<std::uint64_t>(product);
  }

 private:
  std::uint64_t state_;
};

WyRand& generator() {
  thread_local WyRand gen = [] {
    std::random_device device;
    std::uint64_t seed = (std::uint64_t{device()} << 32) ^ device();
    return WyRand(seed);
  }();
  return gen;
}

// kRandomIdSize random bytes, as words: two draws and the low half of a third.
struct IdWords {
  std::uint64_t a;
  std::uint64_t b;
  std::uint32_t c;

  // Writes the bytes at `out` and returns their end.
  char* write(char* out) const {
    std::memcpy(out, &a, sizeof a);
    std::memcpy(out + sizeof a, &b, sizeof b);
    std::memcpy(out + sizeof a + sizeof b, &c, sizeof c);
    return out + kRandomIdSize;
  }
  // Whether any byte is 00, a word at a time: a word has a zero byte exactly when
  // subtracting 01 from each byte borrows into a byte whose top bit was clear.
  bool has_zero_byte() const {
    const std::uint64_t wide =
        ((a - 0x0101010101010101ull) & ~a) | ((b - 0x0101010101010101ull) & ~b);
    const std::uint32_t narrow = (c - 0x01010101u) & ~c;
    return ((wide & 0x8080808080808080ull) | (narrow & 0x80808080u)) != 0;
  }
};
static_assert(sizeof(IdWords::a) + sizeof(IdWords::b) + sizeof(IdWords::c) == kRandomIdSize);

IdWords draw_id() {
  WyRand& gen = generator();
  const std::uint64_t a = gen();
  const std::uint64_t b = gen();
  return {a, b, static_cast<std::uint32_t>(gen())};
}

}  // namespace

Bytes random_id() {
  std::string bytes(kRandomIdSize, '\0');
  draw_id().write(bytes.data());
  return Bytes{std::move(bytes)};
}

namespace {

// Makes `buffer` long enough for an item key after a prefix of `prefix_size` bytes. The
// buffer keeps the room of the longest key it has held: no allocation, no per-byte
// appends, no resizing per key.
void make_room(std::string& buffer, std::size_t prefix_size) {
  const std::size_t most = prefix_size + kMaxPackedIntSize + max_packed_bytes_size(kRandomIdSize);
  if (buffer.size() < most) buffer.resize(most);
}

// Writes (position, id) packed after the prefix in `buffer`'s first `prefix_size` bytes.
// REQUIRES: make_room(buffer, prefix_size).
[[gnu::always_inline]] inline std::string_view write_numbered(std::string& buffer,
                                                              std::size_t prefix_size,
                                                              std::int64_t position) {
  const IdWords id = draw_id();
  char* out = pack_int_at(buffer.data() + prefix_size, position);
  if (id.has_zero_byte()) [[unlikely]] {  // about one id in 13: 00s to escape
    std::array<char, kRandomIdSize> bytes;
    id.write(bytes.data());
    out = pack_bytes_at(out, std::string_view(bytes.data(), bytes.size()));
  } else {
    // With no 00 to escape, the tuple layer's byte string is its code, the bytes as they
    // are, and a 00 end: a copy of known size instead of a search for 00s.
    *out++ = kBytesCode;
    out = id.write(out);
    *out++ = '\0';
  }
  return {buffer.data(), static_cast<std::size_t>(out - buffer.data())};
}

}  // namespace

std::string_view numbered_item_key(std::string_view prefix, std::int64_t position) {
  thread_local std::string buffer;  // written in place
  make_room(buffer, prefix.size());
  std::copy(prefix.begin(), prefix.end(), buffer.data());
  return write_numbered(buffer, prefix.size(), position);
}

std::string_view numbered_item_key_after(std::string& buffer, std::size_t prefix_size,
                                         std::int64_t position) {
  make_room(buffer, prefix_size);
  return write_numbered(buffer, prefix_size, position);
}

std::int64_t item_position(std::string_view prefix, std::string_view key) {
  if (!key.starts_with(prefix)) {
    (void)Subspace(Tuple{}, prefix).unpack(key);  // throws key_not_in_subspace
  }
  key.remove_prefix(prefix.size());
  return unpack_first(key, prefix.size()).get<std::int64_t>();
}

}  // namespace strata::recipes_detail
