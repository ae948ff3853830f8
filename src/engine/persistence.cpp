#include "engine/persistence.hpp"

#include <algorithm>
#include <array>
#include <cstdio>
#include <new>
#include <optional>
#include <system_error>
#include <vector>

#include "durability/checkpoint_writer.hpp"
#include "durability/mutation_batch.hpp"
#include "durability/recovery.hpp"
#include "durability/wal_reader.hpp"

namespace strata::engine {
namespace {

// Recoveries that read this much log, or load a checkpoint of this many entries (at least
// 64 B of store memory each), take their slabs from a SlabSource.
constexpr std::uint64_t kSlabSourceLogBytes = std::uint64_t{64} << 20;
constexpr std::uint64_t kSlabSourceEntries = std::uint64_t{1} << 20;
// A synced log grows on disk this far ahead of its records at a time.
constexpr std::uint64_t kWalGrowAheadBytes = std::uint64_t{1} << 20;

// What a recovery of `dir` will read, in bytes.
struct RecoveryBytes {
  std::uint64_t checkpoint = 0;  // the checkpoint it loads
  std::uint64_t log = 0;         // the log segments that may hold records after it
};

RecoveryBytes recovery_bytes(base::FileSystem& fs, const std::filesystem::path& dir,
                             const durability::RecoveryPlan& plan) {
  RecoveryBytes bytes;
  if (plan.checkpoint) bytes.checkpoint = fs.file_size(*plan.checkpoint);
  // A segment holds the records from its first version up to the next segment's.
  const std::vector<durability::WalSegmentFile> segments = durability::list_wal_segments(fs, dir);
  for (std::size_t i = 0; i < segments.size(); ++i) {
    const bool after =
        i + 1 == segments.size() || segments[i + 1].first_version > plan.checkpoint_version + 1;
    if (after) bytes.log += fs.file_size(segments[i].path);
  }
  return bytes;
}

// Sizes the store's index for `keys` keys: a hint, dropped when memory is short (the
// index then grows as it fills, as it always can).
void reserve_keys(kv::MvccStore& store, std::uint64_t keys) {
  try {
    store.reserve_keys(static_cast<std::size_t>(keys));
  } catch (const std::bad_alloc&) {
  }
}

// Sizes the store's index for the keys a log replay will have made once done: index
// growth re-hashes every key, and growing step by step to 8.8 M keys was 12 % of a 1 GB
// replay. The count is estimated from the new keys the replay has made so far, at 1/16,
// 1/8, 1/4 and 1/2 of the log (and at least 4 MiB in), and each estimate reserves at
// most 4x the keys already there: a log whose first part inserts and whose rest only
// overwrites is over-reserved at most 4x, not 16x.
class KeyEstimate {
 public:
  KeyEstimate(kv::MvccStore& store, std::uint64_t log_bytes)
      : store_(store),
        log_bytes_(log_bytes),
        keys_at_start_(store.key_count()),
        next_(std::max(log_bytes / 16, kMinSample)) {}

  void replayed(std::size_t record_bytes) {
    replayed_ += record_bytes;
    if (replayed_ < next_) return;
    next_ = replayed_ * 2 <= log_bytes_ / 2 ? replayed_ * 2 : kNever;
    const std::size_t keys = store_.key_count();
    if (keys <= keys_at_start_ || replayed_ >= log_bytes_) return;
    const double per_byte =
        static_cast<double>(keys - keys_at_start_) / static_cast<double>(replayed_);
    const auto more =
        static_cast<std::size_t>(per_byte * static_cast<double>(log_bytes_ - replayed_));
    reserve_keys(store_, std::min(keys + more, 4 * keys));
  }

 private:
  static constexpr std::uint64_t kMinSample = std::uint64_t{4} << 20;
  static constexpr std::uint64_t kNever = ~std::uint64_t{0};
  kv::MvccStore& store_;
  const std::uint64_t log_bytes_;
  const std::size_t keys_at_start_;
  std::uint64_t replayed_ = 0;
  std::uint64_t next_;  // replayed bytes at which to estimate next
};

}  // namespace

Persistence::Persistence(const Options& options, kv::MvccStore& store, base::FileSystem& fs)
    : fs_(fs),
      dir_(options.path),
      mode_(options.durability),
      checkpoint_log_bytes_(options.checkpoint_log_bytes),
      store_(store) {
  fs_.create_dir(dir_);
  lock_ = fs_.lock(dir_ / "LOCK");
  durability::RecoveryPlan plan = durability::plan_recovery(fs_, dir_);
  // A log record's mutations are decoded first, then applied (views into the record).
  std::vector<Replayed> batch;
  durability::MutationSink sink;
  sink.set = [&](std::string_view k, std::string_view v) {
    batch.push_back({Replayed::Kind::set, k, v});
  };
  sink.clear = [&](std::string_view k) { batch.push_back({Replayed::Kind::clear, k, {}}); };
  sink.clear_range = [&](std::string_view b, std::string_view e) {
    batch.push_back({Replayed::Kind::clear_range, b, e});
  };
  store_.expect_key_order(true);  // checkpoints hold keys in order; logs mostly do
  // A large recovery faults its slabs in on another core (kv/slab_source.hpp).
  const RecoveryBytes input = recovery_bytes(fs_, dir_, plan);
  std::optional<kv::SlabSource> slabs;
  auto use_slab_source = [&] {
    if (slabs) return;
    try {
      slabs.emplace();
    } catch (const std::system_error&) {
      return;  // no thread to spare: the pools fault their own slabs in, as always
    }
    store_.set_slab_source(&*slabs);
  };
  if (input.log >= kSlabSourceLogBytes) use_slab_source();
  struct Reset {
    kv::MvccStore& store;
    ~Reset() { store.set_slab_source(nullptr); }
  } reset{store_};
  std::optional<KeyEstimate> estimate;
  Version recovered = durability::recover(
      fs_, dir_,
      [&](const std::string& key, const std::string& value) {
        store_.set(key, value, plan.checkpoint_version);
      },
      [&](Version version, std::string_view payload) {
        if (!estimate) estimate.emplace(store_, input.log);  // the checkpoint is loaded now
        estimate->replayed(payload.size());
        batch.clear();
        durability::decode_mutation_batch(payload,
                                          "log record of version " + std::to_string(version), sink);
        replay(batch, version);
      },
      [&](std::uint64_t entries) {
        // A checkpoint holds at least a byte per entry: a damaged count asks for no more.
        entries = std::min(entries, input.checkpoint);
        reserve_keys(store_, entries);
        if (entries >= kSlabSourceEntries) use_slab_source();
      });
  store_.expect_key_order(false);
  store_.publish(recovered);
  last_checkpoint_ = plan.checkpoint_version;
  checkpoint_floor_ = last_checkpoint_;
  if (mode_ != Durability::none) {
    durability::WalWriter::Options wal_options;
    // A log synced at every commit grows ahead of its records, 1 MiB at a time: most syncs
    // then leave the file's size alone and skip a journal commit (docs/benchmarks.md,
    // "Durable commits"). A buffered log is not synced per commit and would only write the
    // zeros for nothing.
    if (mode_ == Durability::fsync) wal_options.grow_ahead_bytes = kWalGrowAheadBytes;
    wal_ = std::make_unique<durability::WalWriter>(fs_, dir_, recovered, wal_options);
  }
  thread_ = std::thread([this] { checkpoint_loop(); });
}

// Whether the batch's sets come in ascending key order with no stored key from the first
// to the last (a gap the finger fills, one key behind the other).
// Only picks the faster way: either way applies the batch alike.
bool Persistence::appends(const std::vector<Replayed>& batch) const {
  bool any = false;
  std::string_view first;
  std::string_view last;
  for (const Replayed& m : batch) {
    if (m.kind != Replayed::Kind::set) continue;
    if (any && m.key <= last) return false;
    if (!any) first = m.key;
    any = true;
    last = m.key;
  }
  if (!any) return true;
  const kv::MvccStore::Node* stored = store_.seek_ge(first);
  return stored == nullptr || stored->key() > last;
}

// A replay inserts millions of keys, and each one's cache misses would otherwise wait for
// the one before. A batch of new keys in key order with no stored key among them (a bulk
// load, appending) links each key behind the previous without a seek
// (MvccStore::expect_key_order): only its index slot is fetched, kAhead mutations ahead.
// Any other batch (random writes, sorted or not, and overwrites) has its keys' index
// slots and paths fetched together, a window at a time, before the window is applied
// (MvccStore::prepare_writes), and its new keys linked along those paths: a 1 GB log of
// random 16-byte keys replayed at 36 MB/s without either, 91 MB/s with the fetch alone,
// 114 MB/s with both (docs/benchmarks.md, "Recovering 1 GB").
void Persistence::replay(const std::vector<Replayed>& batch, Version version) {
  auto apply = [&](const Replayed& m, std::uint64_t hash,
                   const kv::MvccStore::List::Path* path = nullptr) {
    switch (m.kind) {
      case Replayed::Kind::set:
        store_.set(m.key, m.value, version, hash, path);
        break;
      case Replayed::Kind::clear:
        store_.clear(m.key, version);
        break;
      case Replayed::Kind::clear_range:
        store_.clear_range(m.key, m.value, version);
        break;
    }
  };
  if (!appends(batch)) {
    constexpr std::size_t kWindow = 64;  // its paths stay cached until applied
    std::array<std::string_view, kWindow> keys;
    std::array<kv::MvccStore::List::Path, kWindow> paths;
    for (std::size_t first = 0; first < batch.size(); first += kWindow) {
      const std::size_t end = std::min(batch.size(), first + kWindow);
      std::size_t n = 0;
      for (std::size_t i = first; i < end; ++i) {
        if (batch[i].kind == Replayed::Kind::set) keys[n++] = batch[i].key;
      }
      store_.prepare_writes({keys.data(), n}, {paths.data(), n});
      n = 0;
      for (std::size_t i = first; i < end; ++i) {
        if (batch[i].kind != Replayed::Kind::set) {
          apply(batch[i], 0);
          continue;
        }
        // The slot is cached now; a new key is linked along its walk's path.
        apply(batch[i], kv::MvccStore::hash(batch[i].key), &paths[n++]);
      }
    }
    return;
  }
  constexpr std::size_t kAhead = 8;
  std::array<std::uint64_t, kAhead> hashes{};
  auto fetch = [&](std::size_t i) {
    if (i < batch.size() && batch[i].kind == Replayed::Kind::set) {
      hashes[i % kAhead] = store_.prefetch(batch[i].key);
    }
  };
  for (std::size_t i = 0; i < kAhead; ++i) fetch(i);
  for (std::size_t i = 0; i < batch.size(); ++i) {
    const std::uint64_t hash = hashes[i % kAhead];
    fetch(i + kAhead);
    apply(batch[i], hash);
  }
}

Persistence::~Persistence() {
  {
    std::lock_guard lock(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  thread_.join();
  // Clean close: a final checkpoint, so the next open replays nothing.
  try {
    if (store_.committed() > last_checkpoint_) write_checkpoint();
    if (wal_ && !wal_->failed()) wal_->close();
  } catch (const std::exception& e) {
    // The log still holds every committed batch; the next open recovers from it.
    std::fprintf(stderr, "strata: closing %s: %s\n", dir_.c_str(), e.what());
  }
}

void Persistence::log(Version version, std::string_view payload) {
  if (!wal_) return;
  wal_->append(version, payload);
  wal_->flush(/*sync=*/mode_ == Durability::fsync);
}

void Persistence::maybe_checkpoint() {
  if (!wal_ || wal_->bytes_since(checkpoint_floor_.load(std::memory_order_relaxed)) <
                   checkpoint_log_bytes_) {
    return;
  }
  {
    std::lock_guard lock(mu_);
    requested_ = true;
  }
  cv_.notify_one();
}

void Persistence::checkpoint_loop() {
  std::unique_lock lock(mu_);
  for (;;) {
    cv_.wait(lock, [&] { return stop_ || requested_; });
    if (stop_) return;
    requested_ = false;
    lock.unlock();
    try {
      write_checkpoint();
    } catch (const std::exception& e) {
      // Not fatal: the log keeps everything; the next trigger tries again.
      std::fprintf(stderr, "strata: checkpoint of %s failed: %s\n", dir_.c_str(), e.what());
    }
    lock.lock();
  }
}

// Streams the store as of one version (an MVCC snapshot: committers carry on meanwhile),
// publishes it, then drops what it makes unnecessary.
void Persistence::write_checkpoint() {
  kv::ReaderRegistry& registry = store_.registry();
  kv::ReaderRegistry::Slot* slot = registry.acquire();
  struct Release {
    kv::ReaderRegistry& r;
    kv::ReaderRegistry::Slot* s;
    ~Release() { r.release(s); }
  } release{registry, slot};
  const Version version = kv::ReaderRegistry::announce(slot, store_.committed_atomic());
  kv::MvccStore::Node* node = store_.seek_ge("");
  durability::write_checkpoint(fs_, dir_, version, [&](std::string& key, std::string& value) {
    for (; node != nullptr; node = kv::MvccStore::next(node)) {
      if (const kv::VersionRecord* r = kv::MvccStore::visible(node, version)) {
        key.assign(node->key());
        value.assign(r->value());
        node = kv::MvccStore::next(node);
        return true;
      }
    }
    return false;
  });
  last_checkpoint_ = version;
  checkpoint_floor_.store(version, std::memory_order_relaxed);
  if (wal_) wal_->remove_segments_before(version);
  durability::remove_checkpoints_before(fs_, dir_, version);
}

}  // namespace strata::engine
