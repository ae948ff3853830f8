#include "engine/log_replay.hpp"

#include <algorithm>
#include <array>
#include <charconv>
#include <cstring>
#include <new>

#include "kv/atomic_op.hpp"

namespace strata::engine {
namespace {

std::uint64_t prefix_at(std::string_view key, std::size_t offset) {
  unsigned char bytes[8] = {};
  if (offset < key.size())
    std::memcpy(bytes, key.data() + offset, std::min<std::size_t>(8, key.size() - offset));
  std::uint64_t prefix = 0;
  for (unsigned char b : bytes) prefix = (prefix << 8U) | b;
  return prefix;
}

std::size_t common_prefix(std::string_view a, std::string_view b) {
  const auto [ia, ib] = std::mismatch(a.begin(), a.end(), b.begin(), b.end());
  return static_cast<std::size_t>(ia - a.begin());
}

// A hint: dropped when memory is short (the index then grows as it fills, as it can).
void reserve_keys(kv::MvccStore& store, std::uint64_t keys) {
  try {
    store.reserve_keys(static_cast<std::size_t>(keys));
  } catch (const std::bad_alloc&) {
  }
}

// Index growth re-hashes every key, so growing step by step through a large replay would
// re-hash its keys many times over. The keys the log will have made once replayed are estimated
// from those made so far, at 1/16, 1/8, 1/4 and 1/2 of the log (at least 4 MiB in, at the end of a
// run), and each estimate reserves at most 4x the keys already there: a log whose first
// part inserts and whose rest only overwrites is over-reserved at most 4x, not 16x.
constexpr std::uint64_t kMinSample = std::uint64_t{4} << 20;
constexpr std::uint64_t kNever = ~std::uint64_t{0};

}  // namespace

LogReplay::LogReplay(kv::MvccStore& store, std::uint64_t log_bytes, std::uint64_t run_bytes)
    : store_(store),
      log_bytes_(log_bytes),
      run_bytes_(run_bytes),
      keys_at_start_(store.key_count()),
      next_estimate_(std::max(log_bytes / 16, kMinSample)) {
  sink_.set = [this](std::string_view k, std::string_view v) {
    decoded_.push_back({k, v, decoding_, Mutation::Kind::set});
  };
  sink_.clear = [this](std::string_view k) {
    decoded_.push_back({k, {}, decoding_, Mutation::Kind::clear});
  };
  sink_.clear_range = [this](std::string_view b, std::string_view e) {
    decoded_.push_back({b, e, decoding_, Mutation::Kind::clear_range});
  };
  sink_.atomic = [this](std::string_view k, MutationType type, std::string_view param) {
    decoded_.push_back({k, param, decoding_, Mutation::Kind::atomic, type});
  };
}

void LogReplay::add(Version version, std::string_view payload) {
  decoded_.clear();
  decoding_ = version;
  // The record's name for errors, in a buffer kept across records.
  char digits[24];
  where_.assign("log record of version ");
  where_.append(digits, std::to_chars(digits, digits + sizeof digits, version).ptr);
  durability::decode_mutation_batch(payload, where_, sink_);
  replayed_ += payload.size();
  for (const Mutation& m : decoded_) {
    if (m.kind == Mutation::Kind::clear_range) {
      // Everything logged before it goes in first; the range then clears what it covers.
      apply_run();
      store_.clear_range(m.key, m.value, version);
      continue;
    }
    Mutation kept = m;
    kept.key = copy(m.key);
    kept.value = copy(m.value);
    if (run_.empty() || kept.key < run_min_) run_min_ = kept.key;
    if (run_.empty() || kept.key > run_max_) run_max_ = kept.key;
    run_.push_back(kept);
    run_size_ += m.key.size() + m.value.size();
  }
  if (run_size_ >= run_bytes_) apply_run();
}

void LogReplay::finish() {
  apply_run();
  std::vector<Block>().swap(blocks_);
  std::vector<Mutation>().swap(run_);
  std::vector<SortKey>().swap(order_);
  std::vector<Mutation>().swap(last_);
}

std::string_view LogReplay::copy(std::string_view bytes) {
  if (bytes.empty()) return {};
  while (block_ < blocks_.size() && blocks_[block_].size - block_used_ < bytes.size()) {
    ++block_;
    block_used_ = 0;
  }
  if (block_ == blocks_.size()) {
    const std::size_t size = std::max(kBlockBytes, bytes.size());
    blocks_.push_back({std::make_unique_for_overwrite<char[]>(size), size});
    block_used_ = 0;
  }
  char* to = blocks_[block_].bytes.get() + block_used_;
  std::memcpy(to, bytes.data(), bytes.size());
  block_used_ += bytes.size();
  return {to, bytes.size()};
}

void LogReplay::apply_run() {
  if (run_.empty()) return;
  // Sorted by key, then log order.
  const std::size_t offset = common_prefix(run_min_, run_max_);
  std::vector<SortKey>& order = order_;
  order.resize(run_.size());
  for (std::size_t i = 0; i < run_.size(); ++i) order[i] = {prefix_at(run_[i].key, offset), i};
  std::sort(order.begin(), order.end(), [&](const SortKey& a, const SortKey& b) {
    if (a.prefix != b.prefix) return a.prefix < b.prefix;
    const int c = run_[a.index].key.substr(offset).compare(run_[b.index].key.substr(offset));
    return c != 0 ? c < 0 : a.index < b.index;
  });
  // Each key's last mutation.
  last_.clear();
  std::size_t sets = 0;
  constexpr std::size_t kAhead = 16;  // sorted, the run's entries are read out of order
  for (std::size_t i = 0; i < order.size(); ++i) {
    if (i + kAhead < order.size()) __builtin_prefetch(&run_[order[i + kAhead].index]);
    const Mutation& m = run_[order[i].index];
    if (i + 1 < order.size() && order[i + 1].prefix == order[i].prefix &&
        run_[order[i + 1].index].key == m.key) {
      continue;  // a later mutation of the same key follows
    }
    if (m.kind == Mutation::Kind::atomic) [[unlikely]] {
      last_.push_back(fold_atomics(i));
    } else {
      last_.push_back(m);
    }
    sets += last_.back().kind == Mutation::Kind::set ? 1 : 0;
  }
  reserve_for_run(sets);
  apply_sorted(last_);
  run_.clear();
  block_ = 0;
  block_used_ = 0;
  run_size_ = 0;
}

LogReplay::Mutation LogReplay::fold_atomics(std::size_t last) {
  const Mutation& m = run_[order_[last].index];
  auto same_key_before = [&](std::size_t i) {
    return i > 0 && run_[order_[i - 1].index].key == m.key;
  };
  std::size_t first = last;
  while (same_key_before(first) && run_[order_[first - 1].index].kind == Mutation::Kind::atomic) {
    --first;
  }
  std::optional<std::string> value;
  if (same_key_before(first)) {
    const Mutation& before = run_[order_[first - 1].index];
    if (before.kind == Mutation::Kind::set) value.emplace(before.value);
  } else if (const std::optional<std::string_view> stored = store_.latest(m.key)) {
    value.emplace(*stored);
  }
  for (std::size_t i = first; i <= last; ++i) {
    const Mutation& op = run_[order_[i].index];
    std::optional<std::string_view> existing;
    if (value) existing = *value;
    value = kv::apply_atomic(op.type, existing, op.value);
  }
  Mutation result = m;
  result.kind = value ? Mutation::Kind::set : Mutation::Kind::clear;
  result.value = value ? copy(*value) : std::string_view();
  return result;
}

// In windows of kWindow keys. A window with no stored key from its first to its last
// (a bulk load, appending, or a run into an empty store) links each key behind the one
// before without a seek (MvccStore::expect_key_order), its index slots fetched first.
// Any other window has its keys' index slots and paths fetched together
// (MvccStore::prepare_writes), and its new keys linked along those paths; in key order,
// the window's walks share their upper levels.
void LogReplay::apply_sorted(const std::vector<Mutation>& ms) {
  constexpr std::size_t kWindow = 64;  // its paths stay cached until applied
  std::array<std::string_view, kWindow> keys;
  std::array<kv::MvccStore::List::Path, kWindow> paths;
  std::array<std::uint64_t, kWindow> hashes;
  // The keys and values lie in log order: the next window's are fetched a window ahead.
  auto fetch = [&ms](std::size_t from, std::size_t to) {
    for (std::size_t i = from; i < to; ++i) {
      __builtin_prefetch(ms[i].key.data());
      __builtin_prefetch(ms[i].value.data());
    }
  };
  fetch(0, std::min(ms.size(), kWindow));
  for (std::size_t first = 0; first < ms.size(); first += kWindow) {
    const std::size_t end = std::min(ms.size(), first + kWindow);
    fetch(end, std::min(ms.size(), end + kWindow));
    if (store_.none_between(ms[first].key, ms[end - 1].key)) {
      for (std::size_t i = first; i < end; ++i) hashes[i - first] = store_.prefetch(ms[i].key);
      for (std::size_t i = first; i < end; ++i) {
        const Mutation& m = ms[i];
        if (m.kind == Mutation::Kind::set) store_.set(m.key, m.value, m.version, hashes[i - first]);
        // A clear of a key the store does not hold does nothing.
      }
      continue;
    }
    std::size_t n = 0;
    for (std::size_t i = first; i < end; ++i) {
      if (ms[i].kind == Mutation::Kind::set) keys[n++] = ms[i].key;
    }
    store_.prepare_writes_in_order({keys.data(), n}, {paths.data(), n}, {hashes.data(), n});
    n = 0;
    for (std::size_t i = first; i < end; ++i) {
      const Mutation& m = ms[i];
      if (m.kind == Mutation::Kind::clear) {
        store_.clear(m.key, m.version);
      } else {
        // The slot is cached now; a new key is linked along its walk's path.
        store_.set(m.key, m.value, m.version, hashes[n], &paths[n]);
        ++n;
      }
    }
  }
}

void LogReplay::reserve_for_run(std::size_t sets) {
  const std::size_t now = store_.key_count();
  const std::size_t keys = now < sets ? now + sets : now;
  std::size_t target = keys;
  if (replayed_ >= next_estimate_) {
    next_estimate_ = replayed_ * 2 <= log_bytes_ / 2 ? replayed_ * 2 : kNever;
    if (keys > keys_at_start_ && replayed_ < log_bytes_) {
      const double per_byte =
          static_cast<double>(keys - keys_at_start_) / static_cast<double>(replayed_);
      const auto more =
          static_cast<std::size_t>(per_byte * static_cast<double>(log_bytes_ - replayed_));
      target = std::min(keys + more, 4 * keys);
    }
  }
  if (target > now) reserve_keys(store_, target);
}

}  // namespace strata::engine
