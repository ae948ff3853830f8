// base/crc32c.hpp: CRC-32C (Castagnoli, polynomial 0x1EDC6F41, reflected 0x82F63B78), the
// checksum of every strata file format (docs/format/wal.md, docs/format/checkpoint.md).
//
// On x86-64 CPUs with SSE4.2 the crc32 instruction is used; elsewhere a table-driven
// (slicing-by-8) implementation. Both give identical results; the choice is made once.
//
// Thread safety: all functions are pure and may be called from any thread.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace strata::base::crc32c {

// The CRC-32C of the concatenation A + data, where `crc` is the CRC-32C of A (0 for the
// empty string). Standard pre- and post-conditioning (init and xor with 0xFFFFFFFF) are
// applied, so value("123456789") == 0xE3069283.
std::uint32_t extend(std::uint32_t crc, const void* data, std::size_t n) noexcept;

inline std::uint32_t value(const void* data, std::size_t n) noexcept { return extend(0, data, n); }
inline std::uint32_t value(std::string_view data) noexcept {
  return extend(0, data.data(), data.size());
}
inline std::uint32_t extend(std::uint32_t crc, std::string_view data) noexcept {
  return extend(crc, data.data(), data.size());
}

// The CRC-32C of A + B from the CRC-32Cs of A and of B, where B is n_b bytes long, in
// time logarithmic in n_b: A's CRC register carried over n_b zero bytes (a linear map of
// the register), added to B's.
std::uint32_t combine(std::uint32_t crc_a, std::uint32_t crc_b, std::uint64_t n_b) noexcept;

// Stored checksums are masked (leveldb's scheme): computing the CRC of bytes that contain
// an embedded CRC of themselves is prone to degenerate results, so files store
// mask(crc) = rotate_right(crc, 15) + 0xA282EAD8 (mod 2^32), and readers compare
// unmask(stored) with the CRC they compute. unmask(mask(c)) == c for every c.
inline constexpr std::uint32_t kMaskDelta = 0xA282EAD8u;
inline constexpr std::uint32_t mask(std::uint32_t crc) noexcept {
  return ((crc >> 15) | (crc << 17)) + kMaskDelta;
}
inline constexpr std::uint32_t unmask(std::uint32_t masked) noexcept {
  const std::uint32_t rotated = masked - kMaskDelta;
  return (rotated >> 17) | (rotated << 15);
}

// The two implementations, exposed for tests and benchmarks. extend_hardware requires
// hardware_available() (it is undefined behaviour to call it otherwise).
bool hardware_available() noexcept;
std::uint32_t extend_software(std::uint32_t crc, const void* data, std::size_t n) noexcept;
std::uint32_t extend_hardware(std::uint32_t crc, const void* data, std::size_t n) noexcept;

}  // namespace strata::base::crc32c
