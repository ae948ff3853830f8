// base/crc32c.cpp: CRC-32C, hardware (SSE4.2 crc32) and slicing-by-8 software versions.
#include "base/crc32c.hpp"

#include <array>
#include <cstring>

#if defined(__x86_64__) || defined(__i386__)
#include <nmmintrin.h>
#define STRATA_CRC32C_X86 1
#endif

namespace strata::base::crc32c {
namespace {

constexpr std::uint32_t kReflectedPolynomial = 0x82F63B78u;

// kTables[0] is the classic byte-at-a-time table; kTables[k][b] is the CRC contribution of
// byte b followed by k zero bytes, which lets the loop fold 8 bytes per step.
using Tables = std::array<std::array<std::uint32_t, 256>, 8>;

constexpr Tables make_tables() {
  Tables t{};
  for (std::uint32_t b = 0; b < 256; ++b) {
    std::uint32_t crc = b;
    for (int bit = 0; bit < 8; ++bit) {
      crc = (crc >> 1) ^ ((crc & 1u) ? kReflectedPolynomial : 0u);
    }
    t[0][b] = crc;
  }
  for (std::size_t k = 1; k < 8; ++k) {
    for (std::uint32_t b = 0; b < 256; ++b) {
      t[k][b] = (t[k - 1][b] >> 8) ^ t[0][t[k - 1][b] & 0xFFu];
    }
  }
  return t;
}

constexpr Tables kTables = make_tables();

// The raw register's update over n zero bytes is a linear map over GF(2): Zeros holds its
// matrix as the images of the 32 one-bit registers, and kZeros[k] is the map for 2^k bytes.
struct Zeros {
  std::array<std::uint32_t, 32> image{};

  constexpr std::uint32_t apply(std::uint32_t reg) const {
    std::uint32_t out = 0;
    for (std::size_t bit = 0; reg != 0; ++bit, reg >>= 1) {
      if ((reg & 1u) != 0) out ^= image[bit];
    }
    return out;
  }
};

constexpr std::array<Zeros, 64> make_zeros() {
  std::array<Zeros, 64> z{};
  for (std::size_t bit = 0; bit < 32; ++bit) {
    const std::uint32_t reg = std::uint32_t{1} << bit;
    z[0].image[bit] = (reg >> 8) ^ kTables[0][reg & 0xFFu];  // one zero byte
  }
  for (std::size_t k = 1; k < z.size(); ++k) {
    for (std::size_t bit = 0; bit < 32; ++bit)
      z[k].image[bit] = z[k - 1].apply(z[k - 1].image[bit]);
  }
  return z;
}

constexpr std::array<Zeros, 64> kZeros = make_zeros();

inline std::uint64_t load_le64(const unsigned char* p) {
  std::uint64_t v = 0;
  for (int i = 7; i >= 0; --i) v = (v << 8) | p[i];
  return v;
}

using ExtendFn = std::uint32_t (*)(std::uint32_t, const void*, std::size_t) noexcept;

ExtendFn choose_implementation() noexcept {
  return hardware_available() ? &extend_hardware : &extend_software;
}

}  // namespace

std::uint32_t extend_software(std::uint32_t crc, const void* data, std::size_t n) noexcept {
  const auto* p = static_cast<const unsigned char*>(data);
  std::uint32_t c = ~crc;
  while (n >= 8) {
    const std::uint64_t word = load_le64(p) ^ c;
    c = kTables[7][word & 0xFF] ^ kTables[6][(word >> 8) & 0xFF] ^ kTables[5][(word >> 16) & 0xFF] ^
        kTables[4][(word >> 24) & 0xFF] ^ kTables[3][(word >> 32) & 0xFF] ^
        kTables[2][(word >> 40) & 0xFF] ^ kTables[1][(word >> 48) & 0xFF] ^ kTables[0][word >> 56];
    p += 8;
    n -= 8;
  }
  while (n-- > 0) c = (c >> 8) ^ kTables[0][(c ^ *p++) & 0xFFu];
  return ~c;
}

#if defined(STRATA_CRC32C_X86)

bool hardware_available() noexcept { return __builtin_cpu_supports("sse4.2"); }

__attribute__((target("sse4.2"))) std::uint32_t extend_hardware(std::uint32_t crc, const void* data,
                                                                std::size_t n) noexcept {
  const auto* p = static_cast<const unsigned char*>(data);
  std::uint32_t c = ~crc;
  while (n > 0 && (reinterpret_cast<std::uintptr_t>(p) & 7u) != 0) {
    c = _mm_crc32_u8(c, *p++);
    --n;
  }
#if defined(__x86_64__)
  std::uint64_t c64 = c;
  while (n >= 8) {
    std::uint64_t word;
    std::memcpy(&word, p, sizeof word);
    c64 = _mm_crc32_u64(c64, word);
    p += 8;
    n -= 8;
  }
  c = static_cast<std::uint32_t>(c64);
#endif
  while (n-- > 0) c = _mm_crc32_u8(c, *p++);
  return ~c;
}

#else

bool hardware_available() noexcept { return false; }

std::uint32_t extend_hardware(std::uint32_t crc, const void* data, std::size_t n) noexcept {
  return extend_software(crc, data, n);
}

#endif

std::uint32_t extend(std::uint32_t crc, const void* data, std::size_t n) noexcept {
  static const ExtendFn kImplementation = choose_implementation();
  return kImplementation(crc, data, n);
}

std::uint32_t combine(std::uint32_t crc_a, std::uint32_t crc_b, std::uint64_t n_b) noexcept {
  // With pre- and post-conditioning, crc(A + B) = zeros_n(crc(A)) ^ crc(B): the
  // conditioning's terms cancel, since the zero-byte map is linear.
  for (std::size_t k = 0; n_b != 0; ++k, n_b >>= 1) {
    if ((n_b & 1u) != 0) crc_a = kZeros[k].apply(crc_a);
  }
  return crc_a ^ crc_b;
}

}  // namespace strata::base::crc32c
