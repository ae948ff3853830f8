// A commit request that blindly writes key = value: no reads, so it cannot conflict. The
// batch step records the write map's keys as write conflicts itself. Shared by the tests
// of the batch step and of the commit queue.
#pragma once

#include <string>

#include "engine/commit_request.hpp"
#include "engine/write_map.hpp"

namespace strata::engine {

struct BlindWrite {
  WriteMap writes;
  CommitRequest request;

  BlindWrite(const std::string& key, const std::string& value) {
    writes.set(key, value);
    request.writes = &writes;
  }
};

}  // namespace strata::engine
