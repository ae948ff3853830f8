#include "engine/persistence.hpp"

#include <algorithm>
#include <array>
#include <cstdio>
#include <new>
#include <optional>
#include <string>
#include <system_error>
#include <vector>

#include "durability/checkpoint_writer.hpp"
#include "durability/recovery.hpp"
#include "durability/wal_reader.hpp"
#include "engine/log_replay.hpp"

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
  std::optional<LogReplay> replay;
  Version recovered = durability::recover(
      fs_, dir_,
      [&](const std::string& key, const std::string& value) {
        store_.set(key, value, plan.checkpoint_version);
      },
      [&](Version version, std::string_view payload) {
        if (!replay) replay.emplace(store_, input.log);  // the checkpoint is loaded now
        replay->add(version, payload);
      },
      [&](std::uint64_t entries) {
        // A checkpoint holds at least a byte per entry: a damaged count asks for no more.
        entries = std::min(entries, input.checkpoint);
        reserve_keys(store_, entries);
        if (entries >= kSlabSourceEntries) use_slab_source();
      });
  if (replay) replay->finish();
  store_.expect_key_order(false);
  store_.publish(recovered);
  // Below the recovered version nothing reads exactly: a checkpoint holds one version of
  // each key and the replay each key's last (docs/decisions/0014). set_read_version
  // refuses those versions as too old.
  store_.advance_horizon();
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

Persistence::~Persistence() {
  {
    base::MutexLock lock(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  thread_.join();
  // Clean close: a final checkpoint, so the next open replays nothing.
  try {
    if (store_.committed() > last_checkpoint_) write_checkpoint();
  } catch (const std::exception& e) {
    // With a log, it still holds every committed batch: the next open recovers from it.
    // Without (Durability::none), the commits since the last checkpoint are lost, as that
    // mode's contract says; Database::checkpoint() is how a program learns of it in time.
    std::fprintf(stderr, "strata: closing %s: %s%s\n", dir_.c_str(), e.what(),
                 wal_ ? "" : " (Durability::none: the commits since the last checkpoint are lost)");
  }
  // Whether or not the checkpoint was written: a buffered log is synced only here, and
  // without the checkpoint it is all that holds the commits.
  try {
    if (wal_ && !wal_->failed()) wal_->close();
  } catch (const std::exception& e) {
    std::fprintf(stderr, "strata: closing %s: %s\n", dir_.c_str(), e.what());
  }
}

void Persistence::log(Version version, std::string_view payload) {
  if (!wal_) return;
  wal_->append(version, payload);
  wal_->flush(/*sync=*/mode_ == Durability::fsync);
}

void Persistence::write(Version version, std::string_view payload) {
  if (!wal_) return;
  wal_->append(version, payload);
  wal_->flush(/*sync=*/false);
}

void Persistence::reserve(Version version, std::size_t payload_bytes) {
  if (wal_) wal_->reserve(version, payload_bytes);
}

void Persistence::sync() {
  if (wal_) wal_->sync_written();
}

void Persistence::maybe_checkpoint() {
  if (!wal_ || wal_->bytes_since(checkpoint_floor_.load(std::memory_order_relaxed)) <
                   checkpoint_log_bytes_) {
    return;
  }
  {
    base::MutexLock lock(mu_);
    requested_ = true;
  }
  cv_.notify_one();
}

void Persistence::checkpoint() {
  base::MutexLock lock(mu_);
  const std::uint64_t ticket = ++asked_;
  cv_.notify_one();
  while (served_ < ticket) served_cv_.wait(lock);
  // A later call served with ours has the same answer: one checkpoint covered both.
  if (served_error_) throw *served_error_;
}

void Persistence::checkpoint_loop() {
  base::MutexLock lock(mu_);
  for (;;) {
    while (!stop_ && !requested_ && asked_ <= served_) cv_.wait(lock);
    if (stop_) break;
    const bool background = requested_;
    const std::uint64_t serving = asked_;
    const bool asked = serving > served_;  // served_ is written by this thread only
    requested_ = false;
    lock.unlock();
    std::optional<Error> error;
    try {
      // A background request comes with new log; an explicit one may find nothing new.
      if (background || store_.committed() > last_checkpoint_) write_checkpoint();
    } catch (const Error& e) {
      error = e;
    } catch (const std::exception& e) {  // out of memory: the same, not fatal
      error = Error(ErrorCode::io_error,
                    std::string("checkpoint of ") + dir_.string() + ": " + e.what());
    }
    if (error) {
      // Not fatal: the log keeps everything; the next trigger tries again.
      checkpoint_failures_.fetch_add(1, std::memory_order_relaxed);
      if (!asked) {  // nobody asked to hear of it
        std::fprintf(stderr, "strata: checkpoint of %s failed: %s\n", dir_.c_str(), error->what());
      }
    }
    lock.lock();
    if (asked) {
      served_ = serving;
      served_error_ = std::move(error);
      served_cv_.notify_all();
    }
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
