#include "engine/persistence.hpp"

#include <cstdio>

#include "durability/checkpoint_writer.hpp"
#include "durability/mutation_batch.hpp"
#include "durability/recovery.hpp"

namespace strata::engine {

Persistence::Persistence(const Options& options, kv::MvccStore& store, base::FileSystem& fs)
    : fs_(fs),
      dir_(options.path),
      mode_(options.durability),
      checkpoint_log_bytes_(options.checkpoint_log_bytes),
      store_(store) {
  fs_.create_dir(dir_);
  lock_ = fs_.lock(dir_ / "LOCK");
  durability::RecoveryPlan plan = durability::plan_recovery(fs_, dir_);
  durability::MutationSink sink;
  Version replaying = 0;
  sink.set = [&](std::string_view k, std::string_view v) { store_.set(k, v, replaying); };
  sink.clear = [&](std::string_view k) { store_.clear(k, replaying); };
  sink.clear_range = [&](std::string_view b, std::string_view e) {
    store_.clear_range(b, e, replaying);
  };
  Version recovered = durability::recover(
      fs_, dir_,
      [&](const std::string& key, const std::string& value) {
        store_.set(key, value, plan.checkpoint_version);
      },
      [&](Version version, std::string_view payload) {
        replaying = version;
        durability::decode_mutation_batch(payload,
                                          "log record of version " + std::to_string(version), sink);
      });
  store_.publish(recovered);
  last_checkpoint_ = plan.checkpoint_version;
  checkpoint_floor_ = last_checkpoint_;
  if (mode_ != Durability::none) {
    wal_ = std::make_unique<durability::WalWriter>(fs_, dir_, recovered);
  }
  thread_ = std::thread([this] { checkpoint_loop(); });
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
