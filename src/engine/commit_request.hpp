// engine/commit_request.hpp: one writing commit, as a transaction hands it to the commit
// pipeline (engine/commit_pipeline.hpp), which runs it in a batch (engine/commit_batch.hpp).
//
// The transaction fills in the input and keeps what it points at alive until the request
// is settled; the batch fills in the output; the pipeline's fields say who waits for it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <limits>
#include <string_view>
#include <vector>

#include "strata/error.hpp"
#include "strata/types.hpp"

#include "base/arena_vector.hpp"
#include "base/wait_word.hpp"
#include "engine/write_map.hpp"
#include "kv/reader_registry.hpp"

namespace strata::engine {

struct CommitRequest {
  // Input, prepared by the transaction.
  Version read_version = -1;                 // -1: the transaction read nothing
  const ArenaRanges* read_ranges = nullptr;  // coalesced; null when none
  // Keys read with get(), each the range [k, k+00); null when none.
  const base::ArenaVector<std::string_view>* read_keys = nullptr;
  // Coalesced; null when none. The batch adds the write map's point keys (unless
  // write_ranges_only) and its stamped keys.
  const std::vector<KeyRange>* write_ranges = nullptr;
  const WriteMap* writes = nullptr;
  // The write map's point keys are not write conflicts of their own: write_ranges holds
  // those that are, and is null when none is (a transaction that made a write with no
  // write conflict range).
  bool write_ranges_only = false;
  // FoundationDB's REPORT_CONFLICTING_KEYS: when set, a conflict does not stop the check,
  // and the index of every read that conflicts is appended (read_ranges first, then
  // read_keys). Its capacity must already hold them all: the leader does not allocate.
  std::vector<std::uint32_t>* conflicting = nullptr;
  // At least the bytes of the writes' keys and values (TransactionImpl::size_bytes without
  // the conflict ranges), when known: a small transaction of plain writes is then reserved
  // for without a look at each write (engine/apply_reservation.hpp).
  std::size_t write_bytes = std::numeric_limits<std::size_t>::max();
  // The committer's reader slot, or null. Where the database keeps the versions it hands
  // out (Options::keep_mvcc_window, CommitBatch::hold_versions), the batch announces an
  // admitted commit's version in it before the version is published, taking a slot for a
  // committer with none, and sets `held`: the committer keeps the version so while it
  // keeps the slot, and can retain it when it hands it out (kv::MvccStore::retain).
  kv::ReaderRegistry::Slot* slot = nullptr;
  // Output.
  ErrorCode error = ErrorCode::success;
  Version version = -1;
  std::uint16_t batch_index = 0;
  // The batch announced the admitted version in `slot` (taking one if it was null): the
  // committer takes the slot over, and withdraws it when the commit failed after all.
  bool held = false;
  std::int64_t hold_deadline;  // when held: the hold's (base::CoarseClock nanoseconds)
  // Grouped mode with a log: the most bytes the request can add to its batch's record
  // (log_bytes_bound), set by the committer before it queues.
  std::uint64_t log_bytes = 0;

  // Grouped mode: 0 waiting, 1 leads the next batch, 2 done. Set by the leader, waited on
  // by the committer, which may destroy the request as soon as it sees 2.
  base::WaitWord state{0};
  // Grouped mode: the number of the batch the request joins (taken_ when it queued).
  std::uint32_t ticket = 0;
  // A request queued with submit() rather than commit(): called once the request is
  // settled (its output fields filled in), by the leader, outside the pipeline's lock.
  // The leader touches the request no more once it is called, so it may reuse the request
  // or submit another. Null for a committer that waits in commit().
  void (*on_done)(CommitRequest& request) noexcept = nullptr;
  void* context = nullptr;  // the submitter's, for on_done
};

}  // namespace strata::engine
