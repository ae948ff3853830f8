#include "engine/apply_reservation.hpp"

#include <algorithm>
#include <optional>

#include "base/limits.hpp"
#include "kv/size_class_pool.hpp"
#include "kv/version_chain.hpp"

namespace strata::engine {
namespace {

static_assert(kv::VersionRecord::max_bytes_for(kPlainBytes) <= kv::SizeClassPool::kMaxPooled);
// Nor a node: a one-level node's header and link take far less than 128 bytes.
static_assert(kPlainBytes + 128 <= kv::SizeClassPool::kMaxPooled);

// Whether the operation leaves a result of its operand's length, whatever it finds.
bool sized_by_operand(MutationType type) {
  switch (type) {
    case MutationType::add:
    case MutationType::bit_and:
    case MutationType::bit_or:
    case MutationType::bit_xor:
    case MutationType::max:
    case MutationType::min:
      return true;
    default:
      return false;
  }
}

// The longest result `ops` can leave on a value of `found` bytes (nullopt: unknown), or
// nullopt when that depends on the unknown value.
std::optional<std::size_t> result_bound(const std::vector<AtomicOp>& ops,
                                        std::optional<std::size_t> found) {
  std::optional<std::size_t> n = found;
  for (const AtomicOp& op : ops) {
    const std::size_t p = op.param.size();
    if (sized_by_operand(op.type)) {
      n = p;
    } else if (n) {
      if (op.type == MutationType::append_if_fits) {
        n = std::min(*n + p, std::max(*n, base::kValueSizeLimit));
      } else if (op.type != MutationType::compare_and_clear) {
        n = std::max(*n, p);  // byte_min, byte_max
      }
    }
  }
  return n;
}

}  // namespace

std::size_t ApplyReservation::reserve_each(kv::MvccStore& store,
                                           std::span<CommitRequest* const> batch,
                                           std::vector<std::string>& stamped) {
  std::size_t most = 0;
  std::size_t keys = 0;
  std::size_t writes = 0;  // point and stamped-key writes
  std::size_t key_bytes = 0;
  std::size_t record_bytes = 0;
  std::size_t stamped_count = 0;
  std::size_t largest = 0;          // the largest value or operand the batch writes
  std::size_t longest_stamped = 0;  // the longest stamped value
  bool ranges = false;
  bool atomic = false;
  bool unknown = false;  // a result that depends on the value found
  // A write's record: a new key's first record (bytes_for(value, nullptr)) or one linked to
  // an older (max_bytes_for). Near kMaxPooled the first fits the pool and the second does
  // not, and which it is shows only when applied: both are reserved then.
  auto record = [&](std::size_t value_size) {
    const std::size_t bytes = kv::VersionRecord::max_bytes_for(value_size);
    if (bytes <= kv::SizeClassPool::kMaxPooled) [[likely]] {
      record_bytes += bytes;
      return;
    }
    const std::size_t first = kv::VersionRecord::min_bytes_for(value_size);
    if (first <= kv::SizeClassPool::kMaxPooled) record_bytes += first;
    store.reserve_large_record(value_size);
  };
  auto node = [&](std::size_t key_size) {
    key_bytes += key_size;
    if (key_size > kv::SizeClassPool::kMaxPooled / 2) [[unlikely]] {
      store.reserve_large_node(key_size);
    }
  };
  for (const CommitRequest* r : batch) {
    if (r->error != ErrorCode::success) continue;
    const WriteMap& w = *r->writes;
    for (const auto& [key, entry] : w.points()) {
      node(key.size());
      if (entry.ops.empty()) [[likely]] {  // set, clear (size 0) or stamped value
        record(entry.size);
        largest = std::max<std::size_t>(largest, entry.size);
        if (entry.kind == PointWrite::Kind::stamped) {
          longest_stamped = std::max<std::size_t>(longest_stamped, entry.size);
        }
        continue;
      }
      atomic = true;
      std::optional<std::size_t> found;
      if (entry.kind == PointWrite::Kind::stamped) {
        found = entry.size;
        longest_stamped = std::max<std::size_t>(longest_stamped, entry.size);
      }
      for (const AtomicOp& op : entry.ops) largest = std::max(largest, op.param.size());
      if (const std::optional<std::size_t> bound = result_bound(entry.ops, found)) {
        record(*bound);
        largest = std::max(largest, *bound);
      } else {
        unknown = true;  // below, once the batch's largest value is known
      }
    }
    for (const auto& [begin, end] : w.cleared_ranges()) {
      ranges = true;
      const std::size_t live = store.live_keys(begin, end);
      keys += live;
      record_bytes += live * kv::VersionRecord::max_bytes_for(0);
    }
    if (!w.stamped_keys().empty()) {
      for (const StampedKeyWrite& s : w.stamped_keys()) {
        node(s.key.size());
        record(s.value.size());
        largest = std::max(largest, s.value.size());
      }
      stamped_count += w.stamped_keys().size();
    }
    writes += w.points().size() + w.stamped_keys().size();
    most = std::max(most, w.points().size());
  }
  // A cleared range also tombstones the keys the batch's earlier writes made live, at most
  // one per write.
  keys += ranges ? 2 * writes : writes;
  if (unknown) {
    // A result that depends on the value found: that value is one stored now or one an
    // earlier request of the batch wrote, and the batch's operations that grow what they
    // find grow it by at most their operands.
    std::size_t found = largest;
    std::size_t growth = 0;
    for (const CommitRequest* r : batch) {
      if (r->error != ErrorCode::success) continue;
      for (const auto& [key, entry] : r->writes->points()) {
        if (entry.kind != PointWrite::Kind::dependent) continue;
        for (const AtomicOp& op : entry.ops) growth += op.param.size();
        if (const std::optional<std::string_view> v = store.latest(key)) {
          found = std::max(found, v->size());
        }
      }
    }
    const std::size_t bound = std::min(found + growth, std::max(found, base::kValueSizeLimit));
    for (const CommitRequest* r : batch) {
      if (r->error != ErrorCode::success) continue;
      for (const auto& [key, entry] : r->writes->points()) {
        if (entry.kind == PointWrite::Kind::dependent && !result_bound(entry.ops, std::nullopt)) {
          record(bound);
        }
      }
    }
  }
  if (atomic && result_.capacity() < base::kValueSizeLimit) result_.reserve(base::kValueSizeLimit);
  if (stamped_value_.capacity() < longest_stamped) stamped_value_.reserve(longest_stamped);
  if (stamped_count != 0) {
    stamped.reserve(stamped_count);
    stamped_keys_.resize(stamped_count);
    std::size_t i = 0;
    for (const CommitRequest* r : batch) {
      if (r->error != ErrorCode::success) continue;
      for (const StampedKeyWrite& s : r->writes->stamped_keys()) {
        stamped_keys_[i++].reserve(s.key.size());
      }
    }
  }
  next_key_ = 0;
  store.reserve_writes(keys, key_bytes, record_bytes);
  return most;
}

}  // namespace strata::engine
