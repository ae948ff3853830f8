// engine/commit_pipeline.hpp: the single path every writing commit takes.
//
// Committers are grouped: whoever finds the pipeline idle becomes the leader, takes every
// request waiting at that moment as one batch, and for the batch
//   1. resolves each request in order against the history (and earlier requests of the
//      batch), 2. assigns the batch one commit version (each request its batch index),
//   3. applies the survivors to the store, 4. publishes the version, 5. wakes the batch,
//   6. collects garbage (after the wake, so the batch does not wait for it),
// then goes on with whatever queued meanwhile; after 64 batches it hands leadership to the
// first waiting request. Steps 2-4 cannot throw: everything that can fail was checked
// before the request was submitted.
//
// Thread safety: commit() from any number of threads.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory_resource>
#include <mutex>
#include <vector>

#include "strata/database.hpp"
#include "strata/error.hpp"

#include "durability/mutation_batch.hpp"
#include "engine/resolver.hpp"
#include "engine/watch_registry.hpp"
#include "engine/write_map.hpp"
#include "kv/mvcc_store.hpp"

namespace strata::engine {

struct CommitRequest {
  // Input, prepared by the transaction.
  Version read_version = -1;                 // -1: the transaction read nothing
  const ArenaRanges* read_ranges = nullptr;  // coalesced; null when none
  // Keys read with get(), each the range [k, k+00); null when none.
  const std::pmr::vector<std::pmr::string>* read_keys = nullptr;
  // Coalesced; the pipeline adds the write map's point keys and its stamped keys.
  std::vector<KeyRange> write_ranges;
  const WriteMap* writes = nullptr;
  // Output.
  ErrorCode error = ErrorCode::success;
  Version version = -1;
  std::uint16_t batch_index = 0;

  // 0 waiting, 1 leads the next batch, 2 done.
  std::atomic<int> state{0};
};

class CommitPipeline {
 public:
  explicit CommitPipeline(kv::MvccStore& store) : store_(store) {}

  // Log batches here before publishing them (a durable database). Set before any commit.
  void set_persistence(class Persistence* persistence) { persistence_ = persistence; }

  // Resolves and (if no conflict) applies `request`; fills its output fields.
  void commit(CommitRequest& request);

  WatchRegistry& watches() { return watches_; }
  DatabaseStats stats() const {
    return {commits_.load(std::memory_order_relaxed), conflicts_.load(std::memory_order_relaxed),
            batches_.load(std::memory_order_relaxed)};
  }

 private:
  // Resolves, applies and publishes the batch; returns the units of collection it earned
  // (0 when it published nothing).
  std::size_t process(std::vector<CommitRequest*>& batch) noexcept;
  // Collects garbage and prunes the resolver's history (leader only).
  void collect(std::size_t budget) noexcept;
  bool resolve(const CommitRequest& request) const;
  void record_writes(CommitRequest& request, Version version);
  // Applies the request; appends the final keys of its versionstamped keys to `stamped`.
  void apply(const CommitRequest& request, Version version, std::vector<std::string>& stamped);
  // Logs the batch; false when the log failed (the pipeline is then failed for good).
  bool log_batch(std::vector<CommitRequest*>& batch, Version version) noexcept;

  kv::MvccStore& store_;
  WatchRegistry watches_;
  class Persistence* persistence_ = nullptr;
  std::atomic<bool> failed_{false};  // a log write failed: no further commits
  // Written by the leader only.
  std::atomic<std::uint64_t> commits_{0}, conflicts_{0}, batches_{0};
  std::mutex queue_mu_;
  std::vector<CommitRequest*> queue_;  // guarded by queue_mu_
  bool leader_active_ = false;         // guarded by queue_mu_
  // Owned by the current leader only.
  Resolver resolver_;
  std::vector<CommitRequest*> batch_;
  durability::MutationBatchEncoder log_;  // the batch's net effect, for the log
};

}  // namespace strata::engine
