// engine/log_replay.hpp: applies the write-ahead log's records to the store on open.
//
// Records are gathered into runs (up to kRunBytes of keys and values) and applied a run
// at a time, in key order: a run's mutations are sorted by key (stably: a key's mutations
// stay in log order), and only each key's last one is applied, at its own version.
// Nothing reads the store below the recovered version, so the versions in between are
// never looked at. In key order, neighbouring keys share the nodes their inserts walk,
// and each walk starts from the one before (a finger search): a log of random writes
// costs a few steps per key instead of a seek (docs/benchmarks.md, "Recovering 1 GB").
// A clear_range ends a run: what was logged before it is applied, then the range cleared.
// A key whose last mutations are atomic operations (logged so when their result was larger
// than they are) gets their result, computed from the mutation before them in the run or
// else from the store.
//
// Memory: a run's keys and values are copied, plus ~110 B per mutation for its entries;
// all of it is reused run after run and freed by finish(). Inserts are fastest with
// MvccStore::expect_key_order(true), as a recovery sets it.
// Thread safety: none; the opening thread's, before the store is shared.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "strata/types.hpp"

#include "durability/mutation_batch.hpp"
#include "kv/mvcc_store.hpp"

namespace strata::engine {

class LogReplay {
 public:
  // The key and value bytes a run gathers at most before it is applied.
  static constexpr std::uint64_t kRunBytes = std::uint64_t{256} << 20;

  // `log_bytes`: the log the recovery will read in all (sizes the store's index).
  // `run_bytes`: the key and value bytes a run gathers at most (tests make runs small).
  LogReplay(kv::MvccStore& store, std::uint64_t log_bytes, std::uint64_t run_bytes = kRunBytes);
  LogReplay(const LogReplay&) = delete;
  LogReplay& operator=(const LogReplay&) = delete;

  // Takes one record (copied as needed). Throws corrupt_data naming the record's version
  // when its payload does not decode; the records added before it stay applied or pending.
  void add(Version version, std::string_view payload);
  // Applies what is still pending. Call after the last record.
  void finish();

 private:
  // A mutation's place in the sort: 8 bytes of its key from where the run's keys start
  // to differ (big-endian, zero-padded), so most comparisons load no key.
  struct SortKey {
    std::uint64_t prefix;
    std::size_t index;  // in run_: log order among equal keys
  };
  struct Mutation {
    enum class Kind : std::uint8_t { set, clear, clear_range, atomic };
    std::string_view key;
    std::string_view value;  // a clear_range's end; an atomic operation's operand
    Version version;
    Kind kind;
    MutationType type = MutationType::add;  // an atomic operation's
  };

  void apply_run();
  // The set or clear that the atomic operations ending at order_[last] leave. (Out of
  // line: most logs have none, and the replay's sort and loop stay as they were.)
  [[gnu::noinline]] Mutation fold_atomics(std::size_t last);
  void apply_sorted(const std::vector<Mutation>& in_key_order);
  void reserve_for_run(std::size_t sets);

  kv::MvccStore& store_;
  const std::uint64_t log_bytes_;
  const std::uint64_t run_bytes_;
  durability::MutationSink sink_;
  std::vector<Mutation> decoded_;  // the record being added
  Version decoding_ = 0;           // its version
  std::string where_;              // its name, for errors

  // The run's keys and values, copied into blocks that are kept for the next run (fresh
  // memory would be faulted in again, run after run).
  std::string_view copy(std::string_view bytes);
  struct Block {
    std::unique_ptr<char[]> bytes;
    std::size_t size;
  };
  static constexpr std::size_t kBlockBytes = std::size_t{4} << 20;
  std::vector<Block> blocks_;
  std::size_t block_ = 0;               // the block being filled
  std::size_t block_used_ = 0;          // its bytes taken
  std::uint64_t run_size_ = 0;          // the run's key and value bytes
  std::vector<Mutation> run_;           // its point mutations, in log order
  std::string_view run_min_, run_max_;  // its smallest and largest keys
  std::vector<SortKey> order_;          // run_ in key order
  std::vector<Mutation> last_;          // each key's last mutation, in key order

  // Index sizing from the keys made so far (see reserve_for_run).
  const std::size_t keys_at_start_;
  std::uint64_t replayed_ = 0;
  std::uint64_t next_estimate_;
};

}  // namespace strata::engine
