// engine/write_map.hpp: a transaction's buffered writes (read-your-writes).
//
// Each written key is in one of these states (FoundationDB's WriteMap):
//   set          the value is known
//   clear        reads as absent
//   dependent    atomic operations waiting for the stored value, applied in order
//   stamped      set_versionstamped_value: the value is known only at commit (unreadable);
//                atomic operations made after it apply to the stamped value
// plus a set of cleared ranges. A point entry always overrides the cleared ranges; a
// clear_range erases the point entries inside it. The net effect of the transaction is
// "clear the ranges, then apply the point entries", which is what commit applies.
//
// Memory: the point entries (engine/point_map.hpp: keys and values too) come from the memory
// resource the map is built with: a transaction passes its arena, so a small transaction's
// writes cost no heap allocation. Atomic-operation operands and cleared ranges use the heap.
//
// Thread safety: none (owned by one transaction).
#pragma once

#include <memory>
#include <memory_resource>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "strata/transaction.hpp"

#include "base/arena.hpp"
#include "base/invariant.hpp"
#include "engine/point_map.hpp"
#include "engine/range_set.hpp"

namespace strata::engine {

// set_versionstamped_key: the key is known only at commit.
struct StampedKeyWrite {
  std::string key;  // template, offset bytes already removed
  std::uint32_t offset;
  std::string value;
  // With read-your-writes, where FoundationDB's write map keeps the operation until commit:
  // the key as given (offset bytes included) with the lowest stamp it may get. A later
  // clear removes the operation when it covers this key, whatever the stamp turns out to
  // be (FoundationDB sends a transaction's clears before its other mutations). Empty
  // without read-your-writes: then a later clear removes it when it covers the stamped key,
  // the operations being applied in order.
  std::string placeholder;
  std::size_t clears_before = 0;  // WriteMap's clears made before it (set by add_stamped_key)
};

class WriteMap {
 public:
  using Points = PointMap;

  // `arena` must outlive the map; reset() returns nothing to it (its owner releases it
  // after reset()).
  explicit WriteMap(base::Arena* arena) : arena_(arena), points_(arena), later_clears_(arena) {}
  // A map with an arena of its own, released by reset().
  WriteMap()
      : own_arena_(std::make_unique<base::Arena>(nullptr, 0)),
        arena_(own_arena_.get()),
        points_(arena_),
        later_clears_(arena_) {}

  // Inline, as far as a new last key (most transactions' writes): the rest is out of line.
  void set(std::string_view key, std::string_view value) {
    if (!points_.try_append(key, value, PointWrite::Kind::set)) set_present(key, value);
  }
  void clear(std::string_view key) {
    clear_point(key);
    if (!stamped_keys_.empty()) [[unlikely]]
      note_later_clear(key);
  }
  void clear_range(std::string_view begin, std::string_view end);
  void atomic(std::string_view key, MutationType type, std::string_view param);
  void set_stamped_value(std::string_view key, std::string_view value_template,
                         std::uint32_t offset);
  void add_stamped_key(StampedKeyWrite write) {
    only_sets_and_clears_ = false;
    write.clears_before = later_clears_.size();
    stamped_keys_.push_back(std::move(write));
  }
  // Whether a clear made after `write` covers `key` (its stamped key): FoundationDB applies
  // a transaction's mutations in order, so that clear removes it.
  bool cleared_after(const StampedKeyWrite& write, std::string_view key) const;

  // The entry for `key`, or nullptr when only the cleared ranges (or nothing) apply.
  const PointWrite* find(std::string_view key) const;
  bool cleared(std::string_view key) const { return cleared_.contains(key); }
  // True when this transaction wrote the key independently of its stored value (set,
  // clear, point or range, or a versionstamped value): a read conflict on it adds nothing.
  bool overwrites(std::string_view key) const;

  const Points& points() const { return points_; }
  const RangeSet& cleared_ranges() const { return cleared_; }
  const std::vector<StampedKeyWrite>& stamped_keys() const { return stamped_keys_; }
  bool empty() const { return points_.empty() && cleared_.empty() && stamped_keys_.empty(); }
  bool has_stamped_values() const { return has_stamped_values_; }
  // No key written and no range cleared: nothing a read merges into its rows or subtracts
  // from its conflict span (a stamped key is unknown until the commit, so no read sees it).
  bool nothing_to_merge() const { return points_.empty() && cleared_.empty(); }
  // Whether every write is a set or a clear of a key (no atomic operation waiting for the
  // stored value, stamped value or key, or cleared range), as far as the map can tell
  // cheaply: false once any other write was made, even if a later one replaced it.
  bool only_sets_and_clears() const { return only_sets_and_clears_; }
  // Empties the map (every transaction's end: inline, as a map of sets and clears has
  // only its entry array to drop).
  void reset() {
    if (only_sets_and_clears_) [[likely]] {
      points_.forget();
    } else {
      drop_other_writes();
    }
    STRATA_INVARIANT(cleared_.empty() && stamped_keys_.empty() && later_clears_.empty() &&
                     !has_stamped_values_);
    if (own_arena_ != nullptr) own_arena_->release();
  }

  // Removes from [begin, end) the parts this transaction overwrote and appends the rest
  // to `out` (FoundationDB reduces read conflict ranges this way). With `end_after` the
  // range is [begin, end + 00) (a limited forward read's span); when nothing was written
  // its end is built in the range's own block, with no key+00 string.
  void append_unwritten(std::string_view begin, std::string_view end, bool end_after,
                        ArenaRanges& out) const;
  void append_unwritten(std::string_view begin, std::string_view end, ArenaRanges& out) const {
    append_unwritten(begin, end, false, out);
  }

 private:
  // reset() for a map that holds more than sets and clears (out of line: reset() is inlined
  // into every transaction's end).
  [[gnu::noinline]] void drop_other_writes();
  // set() and clear_point() when the key cannot simply be appended.
  [[gnu::noinline]] void set_present(std::string_view key, std::string_view value);
  [[gnu::noinline]] void clear_present(std::string_view key);
  void clear_point(std::string_view key) {  // clear() but for later_clears_
    if (!points_.try_append(key, {}, PointWrite::Kind::clear)) clear_present(key);
  }
  [[gnu::noinline]] void note_later_clear(std::string_view key);
  [[gnu::noinline]] void note_later_clear(std::string_view begin, std::string_view end);

  std::unique_ptr<base::Arena> own_arena_;  // or null
  base::Arena* arena_;                      // own_arena_, or the one given
  Points points_;
  RangeSet cleared_;
  std::vector<StampedKeyWrite> stamped_keys_;
  // The clears (point or range) made since the first stamped key, in order; their bytes in
  // the arena.
  ArenaRanges later_clears_;
  bool has_stamped_values_ = false;
  bool only_sets_and_clears_ = true;
};

// The value a read sees for a key with a dependent entry, given the stored value.
std::optional<std::string> resolve_dependent(const PointWrite& entry,
                                             std::optional<std::string_view> stored);
// The same in `value` (kv::apply_atomic_in_place: with base::kValueSizeLimit bytes of
// capacity nothing allocates); returns whether the result is present. `stored` must not
// point into `value`.
bool resolve_dependent_into(const PointWrite& entry, std::optional<std::string_view> stored,
                            std::string& value);

}  // namespace strata::engine
