// tests/engine/synced_pipeline.hpp: a grouped commit pipeline logging to a FaultFileSystem
// under Durability::fsync, as a durable database has. Built again over the same files, it
// recovers what the first one logged.
#pragma once

#include "engine/commit_pipeline.hpp"
#include "engine/persistence.hpp"
#include "support/fault_file_system.hpp"

namespace strata::engine::testing {

struct SyncedPipeline {
  static Options synced_options() {
    Options options;
    options.path = "/db";
    options.durability = Durability::fsync;
    return options;
  }

  explicit SyncedPipeline(strata::testing::FaultFileSystem& fs)
      : persistence(synced_options(), store, fs) {
    pipeline.set_persistence(&persistence);
  }

  kv::MvccStore store;
  Persistence persistence;
  CommitPipeline pipeline{store};
};

}  // namespace strata::engine::testing
