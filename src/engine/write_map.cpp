#include "engine/write_map.hpp"

#include "base/invariant.hpp"
#include "base/limits.hpp"
#include "kv/atomic_op.hpp"

namespace strata::engine {

void WriteMap::set_present(std::string_view key, std::string_view value) {
  PointWrite& w = points_.find_or_insert(key);
  w.kind = PointWrite::Kind::set;
  points_.assign(w, value);
  w.ops.clear();
}

void WriteMap::clear_present(std::string_view key) {
  PointWrite& w = points_.find_or_insert(key);
  w.kind = PointWrite::Kind::clear;
  w.size = 0;
  w.ops.clear();
}

void WriteMap::clear_range(std::string_view begin, std::string_view end) {
  if (begin >= end) return;
  only_sets_and_clears_ = false;
  points_.erase(begin, end);
  cleared_.insert(begin, end);
  if (!stamped_keys_.empty()) [[unlikely]]
    note_later_clear(begin, end);
}

// Out of line, so that clear() stays small enough to inline: a queue's every pop clears a
// key, and no stamped key is ever pending then.
void WriteMap::note_later_clear(std::string_view key) {
  later_clears_.push_back(ArenaRange::copy(*arena_, key, key, /*end_after=*/true));
}

void WriteMap::note_later_clear(std::string_view begin, std::string_view end) {
  later_clears_.push_back(ArenaRange::copy(*arena_, begin, end));
}

void WriteMap::atomic(std::string_view key, MutationType type, std::string_view param) {
  PointWrite* existing_write = points_.find(key);
  if (existing_write == nullptr) {
    if (cleared_.contains(key)) {
      // The value is known (absent): compute now.
      std::optional<std::string> v = kv::apply_atomic(type, std::nullopt, param);
      v ? set(key, *v) : clear_point(key);
      return;
    }
    PointWrite& w = points_.find_or_insert(key);
    only_sets_and_clears_ = false;
    w.kind = PointWrite::Kind::dependent;
    w.ops.push_back({type, std::string(param)});
    return;
  }
  PointWrite& w = *existing_write;
  switch (w.kind) {
    case PointWrite::Kind::set:
    case PointWrite::Kind::clear: {
      std::optional<std::string_view> existing;
      if (w.kind == PointWrite::Kind::set) existing = w.value();
      std::optional<std::string> v = kv::apply_atomic(type, existing, param);
      w.kind = v ? PointWrite::Kind::set : PointWrite::Kind::clear;
      points_.assign(w, v ? std::string_view(*v) : std::string_view());
      return;
    }
    case PointWrite::Kind::dependent:
    case PointWrite::Kind::stamped:
      // The value is known only at commit (the stored one, or the stamped one): the
      // operation waits for it, as FoundationDB applies a transaction's mutations in order
      // (a stamped key stays unreadable).
      w.ops.push_back({type, std::string(param)});
      return;
  }
}

void WriteMap::set_stamped_value(std::string_view key, std::string_view value_template,
                                 std::uint32_t offset) {
  PointWrite& w = points_.find_or_insert(key);
  w.kind = PointWrite::Kind::stamped;
  points_.assign(w, value_template);
  w.stamp_offset = offset;
  w.ops.clear();
  has_stamped_values_ = true;
  only_sets_and_clears_ = false;
}

const PointWrite* WriteMap::find(std::string_view key) const { return points_.find(key); }

bool WriteMap::cleared_after(const StampedKeyWrite& write, std::string_view key) const {
  for (std::size_t i = write.clears_before; i < later_clears_.size(); ++i) {
    if (later_clears_[i].begin <= key && key < later_clears_[i].end) return true;
  }
  return false;
}

bool WriteMap::overwrites(std::string_view key) const {
  // A transaction that has written nothing yet (a queue's push, whose read conflict key
  // comes before its write) skips the search.
  if (points_.empty()) return cleared_.contains(key);
  // As append_unwritten: only an atomic operation on the stored value still depends on it.
  const PointWrite* w = find(key);
  if (w != nullptr && w->kind != PointWrite::Kind::dependent) return true;
  return cleared_.contains(key);
}

void WriteMap::drop_other_writes() {
  // Cleared ranges, stamped keys, the clears noted after them, and atomic operations (the
  // only memory an entry holds outside the arena) come only with writes that clear
  // only_sets_and_clears_: a map of sets and clears has none to drop, and its entries need
  // no destructor (PointMap::forget).
  points_.clear();
  later_clears_.forget();  // its room is in the arena, released next (or by its owner)
  cleared_.clear();
  stamped_keys_.clear();
  has_stamped_values_ = false;
  only_sets_and_clears_ = true;
}

void WriteMap::append_unwritten(std::string_view begin, std::string_view end, bool end_after,
                                ArenaRanges& out) const {
  if (points_.empty() && cleared_.empty()) {  // the whole range, built in one arena block
    if (end_after ? begin <= end : begin < end) append_range(out, begin, end, end_after);
    return;
  }
  std::string end_storage;
  if (end_after) {
    end_storage = base::key_after(end);
    end = end_storage;
  }
  if (begin >= end) return;
  // Walk the overwritten pieces inside [begin, end) in key order: cleared ranges and
  // set/cleared point keys, each [k, k+00). Emit the gaps between them.
  std::string cursor(begin);
  auto range_it = cleared_.lower_bound_end(begin);
  auto point_it = points_.lower_bound(begin);
  auto emit_until = [&](std::string_view stop) {
    if (std::string_view(cursor) < stop) append_range(out, cursor, stop);
  };
  for (;;) {
    // An atomic operation on the stored value still reads it, so it conflicts; a set, a
    // clear and a versionstamped value are independent writes, which a read conflict
    // leaves out (FoundationDB's OperationStack::isDependent, fdbclient/WriteMap.cpp).
    while (point_it != points_.end() && point_it->second.kind == PointWrite::Kind::dependent) {
      ++point_it;
    }
    bool have_range = range_it != cleared_.end() && std::string_view(range_it->first) < end;
    bool have_point = point_it != points_.end() && std::string_view(point_it->first) < end;
    if (!have_range && !have_point) break;
    std::string_view piece_begin, piece_end;
    std::string point_end;
    if (have_range && (!have_point || std::string_view(range_it->first) <= point_it->first)) {
      piece_begin = range_it->first;
      piece_end = range_it->second;
      ++range_it;
    } else {
      piece_begin = point_it->first;
      point_end = base::key_after(point_it->first);
      piece_end = point_end;
      ++point_it;
    }
    emit_until(std::min(piece_begin, end));
    if (std::string_view(cursor) < piece_end) cursor.assign(std::min(piece_end, end));
    if (std::string_view(cursor) >= end) return;
  }
  emit_until(end);
}

std::optional<std::string> resolve_dependent(const PointWrite& entry,
                                             std::optional<std::string_view> stored) {
  std::string value;
  if (!resolve_dependent_into(entry, stored, value)) return std::nullopt;
  return value;
}

bool resolve_dependent_into(const PointWrite& entry, std::optional<std::string_view> stored,
                            std::string& value) {
  bool present = stored.has_value();
  value.assign(stored.value_or(std::string_view()));
  for (const AtomicOp& op : entry.ops) {
    present = kv::apply_atomic_in_place(op.type, present, value, op.param);
  }
  return present;
}

}  // namespace strata::engine
