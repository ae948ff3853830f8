// The workloads of strata-stress. Each runs its clients on `db`, verifies what it can
// check, and returns its measurements (violations listed in the result). Each is a
// template over the client API (apis.hpp), instantiated in its own file for every API.
#pragma once

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <utility>

#include "strata/strata.hpp"

#include "../backlog.hpp"
#include "apis.hpp"
#include "metrics.hpp"
#include "options.hpp"

namespace stress {

template <class Api>
struct RunContext {
  typename Api::Database& db;
  const StressOptions& options;
  bool high_contention;
  std::uint64_t run_id;  // keeps each run in its own subspace
  LiveCounters& live;
  bench::Backlog& backlog;  // queue runs: producers enter() per item, consumers leave()
};

template <class Api>
RunResult run_queue(RunContext<Api>& ctx);
template <class Api>
RunResult run_priority_queue(RunContext<Api>& ctx);
template <class Api>
RunResult run_kv_cycle(RunContext<Api>& ctx);
// Each client alternates enqueue and dequeue (priority: push and pop_min); ops are pairs.
template <class Api>
RunResult run_pairs(RunContext<Api>& ctx, bool priority);

// "ppppp:sssssssssss:" + padding, to `size` bytes; and its inverse.
std::string make_item(int producer, std::uint64_t seq, std::size_t size);
bool parse_item(std::string_view item, int& producer, std::uint64_t& seq);

// A client's body, for its thread: an error it cannot retry (a database that failed, a
// full disk) ends the process with a message and exit status 3, not std::terminate.
template <class F>
auto guarded(F body) {
  return [body = std::move(body)]() mutable {
    try {
      body();
    } catch (const std::exception& e) {
      std::fflush(stdout);
      std::fprintf(stderr, "\nstrata-stress: a client failed: %s\n", e.what());
      std::_Exit(3);
    }
  };
}

// Runs f(tr) and commits, retrying through on_error; returns f's result. The transaction
// is left committed, so the caller can read its versions.
template <class Api, class F>
auto commit_with_retry(typename Api::Transaction& tr, F&& f) {
  for (;;) {
    try {
      auto r = f(tr);
      tr.commit();
      return r;
    } catch (const typename Api::Error& e) {
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
// REQUIRES: request_versionstamp(tr) before the commit.
template <class Transaction>
CommitOrder commit_order(Transaction& tr) {
  std::string stamp = tr.versionstamp();
  CommitOrder o;
  o.version = tr.committed_version();
  o.order = static_cast<std::uint16_t>((static_cast<unsigned char>(stamp[8]) << 8) |
                                       static_cast<unsigned char>(stamp[9]));
  return o;
}

}  // namespace stress
