// base/crc32c_prefixes.hpp: a CRC-32C extended by any range of a byte string in bounded time,
// from its prefixes' CRCs sampled every kStride bytes.
//
// crc(S[a, b)) is crc(S[0, b)) with crc(S[0, a)) carried over b - a zero bytes taken away
// (crc32c::combine), so a range costs at most two strides of CRC and one carry whatever
// its length, after one pass over the string. Used where many ranges of one string are
// checked, such as every candidate record in a damaged log.
//
// Thread safety: const after construction; the string must outlive the table.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

#include "base/crc32c.hpp"

namespace strata::base::crc32c {

class PrefixChecksums {
 public:
  static constexpr std::size_t kStride = 256;

  // One pass over `data`; keeps data.size() / kStride + 1 checksums.
  explicit PrefixChecksums(std::string_view data) : data_(data) {
    samples_.reserve(data.size() / kStride + 1);
    std::uint32_t crc = 0;
    samples_.push_back(crc);
    for (std::size_t at = kStride; at <= data.size(); at += kStride) {
      crc = crc32c::extend(crc, data.data() + at - kStride, kStride);
      samples_.push_back(crc);
    }
  }

  // The CRC-32C of data[0, end). REQUIRES: end <= data.size().
  std::uint32_t prefix(std::size_t end) const {
    const std::size_t sample = end / kStride;
    return crc32c::extend(samples_[sample], data_.data() + sample * kStride,
                          end - sample * kStride);
  }

  // The CRC-32C of A + data[begin, end), where `crc` is A's (0 for none).
  // REQUIRES: begin <= end <= data.size().
  std::uint32_t extend(std::uint32_t crc, std::size_t begin, std::size_t end) const {
    // crc(A + S[b, e)) = zeros(crc(A)) ^ zeros(crc(S[0, b))) ^ crc(S[0, e)), the zeros
    // carried over e - b bytes: one carry for both.
    return combine(crc ^ prefix(begin), prefix(end), end - begin);
  }

 private:
  std::string_view data_;
  std::vector<std::uint32_t> samples_;
};

}  // namespace strata::base::crc32c
