// kv/version_chain.hpp: the versions of one key, newest first.
//
// A VersionRecord is immutable once published except for `older`, which garbage
// collection may cut (to nullptr) below the oldest version any reader can ask for.
//
// Thread safety: one writer pushes and cuts; readers walk with acquire loads and need a
// reclamation pin (kv::ReaderRegistry) for records cut while they walk.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <new>
#include <optional>
#include <string_view>

#include "strata/types.hpp"

#include "kv/size_class_pool.hpp"

namespace strata::kv {

class VersionRecord {
 public:
  // A record holding `value`, or a tombstone (the key is absent) when value is nullopt,
  // in memory from `pool`; destroy gives it back to the same pool.
  static VersionRecord* make(SizeClassPool& pool, Version version,
                             std::optional<std::string_view> value, VersionRecord* older) {
    return make_at(pool.allocate(bytes_for(value)), version, value, older);
  }
  // The same in `mem`, at least bytes_for(value) bytes from a pool; destroy gives it to the
  // pool it is given, which must outlive the block's slab owner or be it.
  static VersionRecord* make_at(void* mem, Version version, std::optional<std::string_view> value,
                                VersionRecord* older) {
    std::size_t n = value ? value->size() : 0;
    auto* r =
        new (mem) VersionRecord(version, value.has_value(), static_cast<std::uint32_t>(n), older);
    if (n != 0) std::memcpy(r->data(), value->data(), n);
    return r;
  }
  static std::size_t bytes_for(std::optional<std::string_view> value) {
    return kHeaderSize + (value ? value->size() : 0);
  }
  static void destroy(SizeClassPool& pool, VersionRecord* r) {
    std::size_t size = kHeaderSize + r->value().size();
    r->~VersionRecord();
    pool.deallocate(r, size);
  }

  Version version() const { return version_; }
  bool is_tombstone() const { return (size_ & kTombstone) != 0; }
  std::string_view value() const { return {data(), size_ & ~kTombstone}; }

  // Acquire: pairs with the release in cut_older (and with construction).
  VersionRecord* older() const { return older_.load(std::memory_order_acquire); }
  // Writer only. Release is enough: a reader that loads nullptr simply stops.
  void cut_older() { older_.store(nullptr, std::memory_order_release); }

 private:
  static constexpr std::uint32_t kTombstone = 0x80000000u;

  VersionRecord(Version v, bool present, std::uint32_t size, VersionRecord* older)
      : version_(v), older_(older), size_(present ? size : kTombstone) {}
  // The value bytes follow the last field directly, not sizeof(*this) (which pads to 24):
  // a 100-byte value then fits a 128-byte allocation instead of a 144-byte one.
  char* data() { return reinterpret_cast<char*>(this) + kHeaderSize; }
  const char* data() const { return reinterpret_cast<const char*>(this) + kHeaderSize; }

  Version version_;
  std::atomic<VersionRecord*> older_;
  std::uint32_t size_;  // value size; the top bit marks a tombstone
  static const std::size_t kHeaderSize;
};

inline constexpr std::size_t VersionRecord::kHeaderSize =
    offsetof(VersionRecord, size_) + sizeof(std::uint32_t);

// The newest record at or below `version` in a chain starting at `head`, or nullptr.
inline const VersionRecord* visible_at(const VersionRecord* head, Version version) {
  while (head != nullptr && head->version() > version) head = head->older();
  return head;
}

}  // namespace strata::kv
