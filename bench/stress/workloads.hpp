// The three workloads of strata-stress. Each runs its clients on `db`, verifies what it can
// check, and returns its measurements (violations listed in the result).
#pragma once

#include <cstdint>

#include "strata/strata.hpp"

#include "metrics.hpp"
#include "options.hpp"

namespace stress {

struct RunContext {
  strata::Database& db;
  const StressOptions& options;
  bool high_contention;
  std::uint64_t run_id;  // keeps each run in its own subspace
  LiveCounters& live;
};

RunResult run_queue(RunContext& ctx);
RunResult run_priority_queue(RunContext& ctx);
RunResult run_kv_cycle(RunContext& ctx);
// Each client alternates enqueue and dequeue (priority: push and pop_min); ops are pairs.
RunResult run_pairs(RunContext& ctx, bool priority);

// "ppppp:sssssssssss:" + padding, to `size` bytes; and its inverse.
std::string make_item(int producer, std::uint64_t seq, std::size_t size);
bool parse_item(std::string_view item, int& producer, std::uint64_t& seq);

// Runs f(tr) and commits, retrying through on_error; returns f's result. The transaction
// is left committed, so the caller can read its versions.
template <class F>
auto commit_with_retry(strata::Transaction& tr, F&& f) {
  for (;;) {
    try {
      auto r = f(tr);
      tr.commit();
      return r;
    } catch (const strata::Error& e) {
      tr.on_error(e);
    }
  }
}

// The 8-byte big-endian version and 2-byte batch order of a committed transaction.
struct CommitOrder {
  strata::Version version = -1;
  std::uint16_t order = 0;
  friend auto operator<=>(const CommitOrder&, const CommitOrder&) = default;
};
CommitOrder commit_order(const strata::Transaction& tr);

}  // namespace stress
