// engine/closing_databases.hpp: the durable databases of this process whose close runs on
// a thread of its own (the last handle went inside a commit_async callback, on the
// pipeline's thread, which the close stops and waits for), so that reopening one of them
// waits for its close instead of finding its directory still locked.
//
// Thread safety: every function may be called from any thread.
#pragma once

#include <filesystem>
#include <string>

namespace strata::engine::closing_databases {

// The key a directory is known by: its canonical path (or its absolute one, lexically
// normal, where it cannot be resolved), so two spellings of one directory meet.
std::string key_of(const std::filesystem::path& dir);

// Marks a close of the directory `key` as under way; end() marks it done and wakes the
// waiters. Each begin() is followed by exactly one end().
void begin(const std::string& key);
void end(const std::string& key);

// Blocks while a close of the directory `key` is under way. Must not be called by a thread
// a close waits for (a commit pipeline's, inside its callbacks): the caller checks.
void wait_for(const std::string& key);

}  // namespace strata::engine::closing_databases
