// kv/version_chain.hpp: the versions of one key, newest first.
//
// A VersionRecord is immutable once published except for `older`, which garbage
// collection may cut (to nullptr) below the oldest version any reader can ask for. A
// record made with no older one (a key's first) has no room for the link at all, unless it
// is made with room on purpose (make_chained: MvccStore's replacement of a record).
//
// Invariant: a chain's versions strictly descend from its head (a record is made only over
// an older version; a second write at the same version replaces the record). Checked
// where a record is made and where a chain is walked (STRATA_INVARIANT).
//
// Thread safety: one writer pushes and cuts; readers walk with acquire loads and need a
// reclamation pin (kv::ReaderRegistry) for records cut while they walk.
#pragma once

#include <atomic>
#include <cassert>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <new>
#include <optional>
#include <string_view>

#include "strata/types.hpp"

#include "base/invariant.hpp"
#include "kv/size_class_pool.hpp"

namespace strata::kv {

class VersionRecord {
 public:
  // A record holding `value`, or a tombstone (the key is absent) when value is nullopt,
  // in memory from `pool`; destroy gives it back to the same pool.
  static VersionRecord* make(SizeClassPool& pool, Version version,
                             std::optional<std::string_view> value, VersionRecord* older) {
    return make_at(pool.allocate(bytes_for(value, older)), version, value, older);
  }
  // The same in `mem`, at least bytes_for(value, older) bytes from a pool; destroy gives it
  // to the pool it is given, which must outlive the block's slab owner or be it.
  static VersionRecord* make_at(void* mem, Version version, std::optional<std::string_view> value,
                                VersionRecord* older) {
    return build(mem, version, value, older, older != nullptr);
  }
  // A record with room for an older link even when `older` is nullptr (chained() holds).
  static VersionRecord* make_chained(SizeClassPool& pool, Version version,
                                     std::optional<std::string_view> value, VersionRecord* older) {
    return build(pool.allocate(max_bytes_for(value ? value->size() : 0)), version, value, older,
                 true);
  }
  // The most bytes_for gives for a value of `value_size` bytes.
  static constexpr std::size_t max_bytes_for(std::size_t value_size) {
    return kChainedHeader + value_size;
  }
  // The fewest: a key's first record (no older link).
  static constexpr std::size_t min_bytes_for(std::size_t value_size) {
    return kFirstHeader + value_size;
  }
  static std::size_t bytes_for(std::optional<std::string_view> value, const VersionRecord* older) {
    return (older != nullptr ? kChainedHeader : kFirstHeader) + (value ? value->size() : 0);
  }
  static void destroy(SizeClassPool& pool, VersionRecord* r) {
    const std::size_t size = r->data_at() + r->value().size();
    r->~VersionRecord();
    pool.deallocate(r, size);
  }

  Version version() const { return static_cast<Version>(word_ & ~kChainedBit); }
  bool is_tombstone() const { return (size_word() & kTombstone) != 0; }
  std::string_view value() const {
    return {reinterpret_cast<const char*>(bytes() + data_at()), size_word() & ~kTombstone};
  }

  // Acquire: pairs with the release in cut_older (and with construction).
  VersionRecord* older() const {
    return chained() ? older_slot().load(std::memory_order_acquire) : nullptr;
  }
  // Whether the record was made with room for an older link (it may have been cut since).
  bool chained() const { return (word_ & kChainedBit) != 0; }
  // Writer only. Release is enough: a reader that loads nullptr simply stops.
  void cut_older() {
    if (chained()) older_slot().store(nullptr, std::memory_order_release);
  }

 private:
  // Two layouts, told apart by the top bit of the first word (versions stay below 2^63):
  //   chained  version | older (8 B) | size (4 B) | value   a record made over an older one
  //   first    version | size (4 B) | value                 a key's first record
  // A record never gains an older link after it is made (cut_older only removes one), so a
  // key's first record, the only one most keys ever have, needs no room for it: 8 bytes
  // less per live key. The size word's top bit marks a tombstone. The value bytes follow
  // the header directly: a 100-byte value then takes a 112- or 120-byte block.
  static constexpr std::uint64_t kChainedBit = std::uint64_t{1} << 63;
  static constexpr std::uint32_t kTombstone = 0x80000000u;
  static constexpr std::size_t kOlderAt = 8;
  static constexpr std::size_t kFirstHeader = 12;
  static constexpr std::size_t kChainedHeader = 20;
  static_assert(kChainedBit >> 63 == 1 && kChainedHeader == kFirstHeader + 8);

  static VersionRecord* build(void* mem, Version version, std::optional<std::string_view> value,
                              VersionRecord* older, bool chained) {
    STRATA_INVARIANT(older == nullptr || older->version() < version);
    const std::size_t n = value ? value->size() : 0;
    auto* r = new (mem) VersionRecord(version, chained);
    std::byte* at = r->bytes();
    if (chained) new (at + kOlderAt) std::atomic<VersionRecord*>(older);
    const std::uint32_t size = value ? static_cast<std::uint32_t>(n) : kTombstone;
    std::memcpy(at + r->size_at(), &size, sizeof size);
    if (n != 0) std::memcpy(at + r->data_at(), value->data(), n);
    return r;
  }

  VersionRecord(Version v, bool chained)
      : word_(static_cast<std::uint64_t>(v) | (chained ? kChainedBit : 0)) {
    assert(v >= 0);  // commit versions count up from 0: the top bit is free
  }

  // Without a branch: the older link, when there is one, adds its 8 bytes.
  std::size_t link_bytes() const { return static_cast<std::size_t>(word_ >> 63) * 8; }
  std::size_t size_at() const { return kOlderAt + link_bytes(); }
  std::size_t data_at() const { return kFirstHeader + link_bytes(); }
  std::uint32_t size_word() const {
    std::uint32_t size = 0;
    std::memcpy(&size, bytes() + size_at(), sizeof size);
    return size;
  }
  // The header and value bytes past word_ are raw storage the record owns.
  std::byte* bytes() { return reinterpret_cast<std::byte*>(this); }
  const std::byte* bytes() const { return reinterpret_cast<const std::byte*>(this); }
  // Built in place by make_at, in chained records only.
  const std::atomic<VersionRecord*>& older_slot() const {
    return *std::launder(reinterpret_cast<const std::atomic<VersionRecord*>*>(bytes() + kOlderAt));
  }
  std::atomic<VersionRecord*>& older_slot() {
    return *std::launder(reinterpret_cast<std::atomic<VersionRecord*>*>(bytes() + kOlderAt));
  }

  std::uint64_t word_;  // the version, and kChainedBit
};

// The newest record at or below `version` in a chain starting at `head`, or nullptr.
inline const VersionRecord* visible_at(const VersionRecord* head, Version version) {
  while (head != nullptr && head->version() > version) {
    const VersionRecord* older = head->older();
    STRATA_INVARIANT(older == nullptr || older->version() < head->version());
    head = older;
  }
  return head;
}

}  // namespace strata::kv
