// engine/persistence.hpp: what makes a database durable: its directory, lock, write-ahead
// log and checkpoints (Options::path set).
//
// On open it locks the directory, recovers the newest checkpoint and the log after it into
// the store, and opens a log writer. The commit pipeline calls log() once per batch (one
// write, and one fdatasync under Durability::fsync) before publishing. A background thread
// writes a checkpoint from an MVCC snapshot whenever the log has grown by
// checkpoint_log_bytes since the last one (no committer waits for it), or when checkpoint()
// asks, then removes the log segments and checkpoints it makes unnecessary. Closing writes a
// final checkpoint. A failed checkpoint counts in checkpoint_failures() (and checkpoint()
// throws it); the log, if any, still holds its commits. Under Durability::none a failed
// closing checkpoint loses the commits made since the last good one, reported on stderr.
//
// Thread safety: log(), write() and maybe_checkpoint() are called by the pipeline leader
// only, sync() by one thread at a time (the pipeline's syncer); the checkpoint thread
// reads the store through a reader slot like any transaction.
#pragma once

#include <atomic>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <string_view>
#include <thread>
#include <vector>

#include "strata/database.hpp"

#include "base/file_system.hpp"
#include "base/mutex.hpp"
#include "base/thread_annotations.hpp"
#include "durability/wal_writer.hpp"
#include "kv/mvcc_store.hpp"

namespace strata::engine {

class Persistence {
 public:
  // Creates the directory if needed, locks it (database_locked if another handle holds
  // it), and recovers into `store`, publishing the recovered version. Throws corrupt_data
  // or io_error naming the file.
  Persistence(const Options& options, kv::MvccStore& store,
              base::FileSystem& fs = base::default_file_system());
  ~Persistence();
  Persistence(const Persistence&) = delete;
  Persistence& operator=(const Persistence&) = delete;

  // Makes the batch at `version` as durable as the mode promises. Throws io_error or
  // database_failed: the batch's fate is then unknown (commit_unknown_result).
  void log(Version version, std::string_view payload);
  // log() in two steps, for a pipeline that syncs on another thread while it writes the
  // next batch: write() hands the batch to the file (no sync); sync() makes everything
  // written so far durable, letting write() go on meanwhile. Throw like log().
  void write(Version version, std::string_view payload);
  // Makes the next log() or write(), of `version` with `payload_bytes`, allocate nothing
  // (durability::WalWriter::reserve: a new segment's file is opened now). Throws
  // std::bad_alloc.
  void reserve(Version version, std::size_t payload_bytes);
  void sync();
  // Wakes the checkpoint thread when the log has grown enough since the last checkpoint.
  void maybe_checkpoint();
  // Has the checkpoint thread write a checkpoint of what is published now (nothing if the
  // last one holds it all) and waits for it; throws what made it fail. Any thread.
  void checkpoint();
  // Checkpoints that failed since open: background ones and checkpoint()'s.
  std::uint64_t checkpoint_failures() const {
    return checkpoint_failures_.load(std::memory_order_relaxed);
  }

  bool logging() const { return wal_ != nullptr; }
  // True when log() waits for the disk (Durability::fsync).
  bool syncs() const { return mode_ == Durability::fsync; }

 private:
  void checkpoint_loop();
  void write_checkpoint();

  base::FileSystem& fs_;
  const std::filesystem::path dir_;
  const Durability mode_;
  const std::uint64_t checkpoint_log_bytes_;
  kv::MvccStore& store_;
  std::unique_ptr<base::FileLock> lock_;
  std::unique_ptr<durability::WalWriter> wal_;  // null under Durability::none

  base::Mutex mu_;
  base::CondVar cv_;
  base::CondVar served_cv_;  // checkpoint() waits on it
  bool stop_ GUARDED_BY(mu_) = false;
  bool requested_ GUARDED_BY(mu_) = false;
  // checkpoint() calls: asked_ counts them, served_ the first asked_ the thread has
  // answered, served_error_ that answer (empty: written).
  std::uint64_t asked_ GUARDED_BY(mu_) = 0;
  std::uint64_t served_ GUARDED_BY(mu_) = 0;
  std::optional<Error> served_error_ GUARDED_BY(mu_);
  std::atomic<std::uint64_t> checkpoint_failures_{0};
  Version last_checkpoint_ = 0;               // checkpoint thread (and the constructor) only
  std::atomic<Version> checkpoint_floor_{0};  // last_checkpoint_, for maybe_checkpoint
  std::thread thread_;
};

}  // namespace strata::engine
