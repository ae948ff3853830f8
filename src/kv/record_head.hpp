// kv/record_head.hpp: a skiplist node's pointer to its newest VersionRecord, with a hint
// that lets a range read step over a deleted key without loading its record.
//
// Without it, a reader walking a queue's head (keys deleted, but kept linked for readers
// that are behind) pays two cache misses per dead key: the node, then its tombstone record.
// The hint lives in the pointer's top bits, which user-space addresses on x86-64 and AArch64
// Linux leave zero: bit 63 marks "the newest record is a tombstone", bits 48-62 hold its version
// modulo 2^15. A record at a higher address is stored untagged (no hint; readers load it).
//
// The truncated version answers "deleted at or before v" correctly only while the
// tombstone's version is less than kWindow / 2 above v (for older tombstones a yes is right
// and a no merely unhelpful). deleted_by() is therefore a hint whose caller validates that
// bound: see MvccStore::first_visible.
//
// Thread safety: as std::atomic; stores by the single writer, loads by any reader.
#pragma once

#include <atomic>
#include <cstdint>

#include "strata/types.hpp"

#include "kv/version_chain.hpp"

namespace strata::kv {

class RecordHead {
 public:
  static constexpr Version kWindow = Version{1} << 15;

  VersionRecord* load(std::memory_order order) const { return pointer(word_.load(order)); }
  void store(VersionRecord* r, std::memory_order order) { word_.store(encode(r), order); }

  // Whether the newest record is a tombstone at or below `version`, from the hint alone;
  // false when there is none. A yes is right if the tombstone's version is below
  // version + kWindow / 2.
  bool deleted_by(Version version) const {
    const std::uint64_t w = word_.load(std::memory_order_acquire);
    if ((w & kTombstoneBit) == 0) return false;
    const auto low = static_cast<std::uint64_t>(version) & kLowMask;
    const std::uint64_t since = (low - ((w >> kTagShift) & kLowMask)) & kLowMask;
    return since < static_cast<std::uint64_t>(kWindow / 2);  // version - deleted in [0, 2^14)
  }

 private:
  static constexpr int kTagShift = 48;
  static constexpr std::uint64_t kTombstoneBit = std::uint64_t{1} << 63;
  static constexpr std::uint64_t kPointerMask = (std::uint64_t{1} << kTagShift) - 1;
  static constexpr std::uint64_t kLowMask = static_cast<std::uint64_t>(kWindow) - 1;

  static std::uint64_t encode(VersionRecord* r) {
    const auto bits = reinterpret_cast<std::uintptr_t>(r);
    if (r == nullptr || !r->is_tombstone() || (bits & ~kPointerMask) != 0) return bits;
    const auto low = static_cast<std::uint64_t>(r->version()) & kLowMask;
    return bits | kTombstoneBit | (low << kTagShift);
  }
  // Untagged words are plain pointers (user-space pointers never have bit 63 set).
  static VersionRecord* pointer(std::uint64_t w) {
    if ((w & kTombstoneBit) != 0) w &= kPointerMask;
    // The tag is the point of this class: the cast back from the word is unavoidable.
    return reinterpret_cast<VersionRecord*>(  // NOLINT(performance-no-int-to-ptr)
        static_cast<std::uintptr_t>(w));
  }

  std::atomic<std::uint64_t> word_{0};
};

}  // namespace strata::kv
