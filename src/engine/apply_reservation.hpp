// engine/apply_reservation.hpp: what applying a commit batch allocates, taken before the
// batch's point of no return (docs/decisions/0032-a-commit-that-runs-out-of-memory.md).
//
// Once the first write of a batch is in the store, the batch must be applied whole. So
// before that, reserve() measures the writes of the requests that survived resolution and
// takes everything applying them allocates: in the store (MvccStore::reserve_writes) the
// nodes, records and collection entries of every point and stamped-key write, and of the
// tombstones each cleared range pushes (a walk of the range), blocks of their own for
// records and nodes over 1 KiB; here, the stamped keys' strings and room to compute atomic
// operations' results and stamped values in place. apply() then allocates nothing.
//
// Bounds: a set's record is its value's size. An atomic operation's result is known only
// when applied; add, bit_and, bit_or, bit_xor, min and max leave a result of their operand's
// length, and the others (byte_min, byte_max, append_if_fits, compare_and_clear) grow the
// value they find by at most their operand. Their results are bounded from the batch's
// largest value and the values stored now, looked up for them.
//
// Thread safety: the batch's (CommitBatch's) thread only.
#pragma once

#include <algorithm>
#include <cstddef>
#include <span>
#include <string>
#include <vector>

#include "strata/error.hpp"

#include "engine/commit_request.hpp"
#include "kv/mvcc_store.hpp"
#include "kv/version_chain.hpp"

namespace strata::engine {

// A transaction whose writes are only sets and clears (WriteMap::only_sets_and_clears) of
// at most kPlainBytes in all (CommitRequest::write_bytes) needs no look at each write: no
// key or value of it is large, and its nodes and records are bounded by those bytes.
inline constexpr std::size_t kPlainBytes = 512;

class ApplyReservation {
 public:
  // Reserves what applying the batch's requests whose error is success allocates, and
  // room in `stamped` for their stamped keys; returns the most point writes one of them
  // has. Throws std::bad_alloc: end() then frees what was taken.
  std::size_t reserve(kv::MvccStore& store, std::span<CommitRequest* const> batch,
                      std::vector<std::string>& stamped) {
    std::size_t writes = 0;
    std::size_t bytes = 0;
    std::size_t most = 0;
    for (const CommitRequest* r : batch) {
      if (r->error != ErrorCode::success) continue;
      if (r->write_bytes > kPlainBytes || !r->writes->only_sets_and_clears()) [[unlikely]] {
        return reserve_each(store, batch, stamped);
      }
      const std::size_t points = r->writes->points().size();
      writes += points;
      most = std::max(most, points);
      bytes += r->write_bytes;
    }
    reserve_plain(store, writes, bytes);
    return most;
  }
  // reserve() for `writes` sets and clears of keys, of `bytes` in all
  // (CommitRequest::write_bytes), whose requests are each within kPlainBytes and only set
  // and clear keys: a lone commit that the caller checked is so. Throws std::bad_alloc.
  static void reserve_plain(kv::MvccStore& store, std::size_t writes, std::size_t bytes) {
    store.reserve_writes(writes, bytes, bytes + writes * kv::VersionRecord::max_bytes_for(0));
  }
  // After the batch: frees what no write took.
  void end(kv::MvccStore& store) noexcept { store.end_writes(); }

  // Room for any value (base::kValueSizeLimit bytes) once the batch has an atomic
  // operation: apply computes each result here (kv::apply_atomic_in_place).
  std::string& result() { return result_; }
  // Room for the batch's largest stamped value: apply stamps each here.
  std::string& stamped_value() { return stamped_value_; }
  // The next stamped key's string, with room for it (reserve() made one per stamped key).
  std::string& next_stamped_key() { return stamped_keys_[next_key_++]; }

 private:
  // reserve() with a look at each write of the batch.
  [[gnu::noinline]] std::size_t reserve_each(kv::MvccStore& store,
                                             std::span<CommitRequest* const> batch,
                                             std::vector<std::string>& stamped);

  std::string result_;
  std::string stamped_value_;
  std::vector<std::string> stamped_keys_;
  std::size_t next_key_ = 0;
};

}  // namespace strata::engine
