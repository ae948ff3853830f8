#include "engine/log_replay.hpp"

#include <map>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "strata/error.hpp"

#include "durability/mutation_batch.hpp"
#include "kv/atomic_op.hpp"

namespace strata::engine {
namespace {

using kv::MvccStore;

std::optional<std::string> read(const MvccStore& s, std::string_view key, Version v) {
  const kv::VersionRecord* r = s.get(key, v);
  return r ? std::optional<std::string>(std::string(r->value())) : std::nullopt;
}

// What a reader at `version` sees, in key order, through the list (not the index).
std::map<std::string, std::string> scan(const MvccStore& s, Version version) {
  std::map<std::string, std::string> seen;
  for (auto* n = s.seek_ge(""); n != nullptr; n = MvccStore::next(n)) {
    if (const kv::VersionRecord* r = MvccStore::visible(n, version)) {
      seen.emplace(std::string(n->key()), std::string(r->value()));
    }
  }
  return seen;
}

std::string key_of(std::uint64_t i) {
  std::string k = std::to_string(i);
  return "k" + std::string(4 - std::min<std::size_t>(4, k.size()), '0') + k;
}

// A random log over 300 keys (sets, clears, range clears and atomic operations; overwrites,
// keys set and cleared in one record) replayed with runs of every size lands where applying
// it record by record, mutation by mutation, does: the sort, the last-mutation rule, the
// folding of atomic operations onto what came before them, the cut at clear_range and the
// merge into keys already stored all keep the log's meaning.
TEST(LogReplay, LandsWhereApplyingEveryMutationInLogOrderLands) {
  for (std::uint64_t run_bytes :
       {std::uint64_t{1}, std::uint64_t{300}, std::uint64_t{5000}, LogReplay::kRunBytes}) {
    SCOPED_TRACE("run bytes " + std::to_string(run_bytes));
    std::mt19937_64 rng(run_bytes);
    MvccStore replayed;
    std::map<std::string, std::string> model;
    // A checkpoint's keys at version 1: every fourth key.
    for (std::uint64_t i = 0; i < 300; i += 4) {
      replayed.set(key_of(i), "ckpt", 1);
      model[key_of(i)] = "ckpt";
    }
    replayed.publish(1);
    LogReplay replay(replayed, 1 << 20, run_bytes);
    Version version = 1;
    for (int record = 0; record < 400; ++record) {
      ++version;
      durability::MutationBatchEncoder batch;
      const int ops = 1 + static_cast<int>(rng() % 12);
      for (int op = 0; op < ops; ++op) {
        const std::string key = key_of(rng() % 300);
        const auto kind = rng() % 26;
        if (kind >= 20) {
          constexpr MutationType kTypes[] = {
              MutationType::add,      MutationType::append_if_fits, MutationType::compare_and_clear,
              MutationType::byte_max, MutationType::bit_xor,        MutationType::min};
          const MutationType type = kTypes[kind - 20];
          // A compare_and_clear matches a value set by an earlier record now and then.
          const std::string param = type == MutationType::compare_and_clear
                                        ? key + "@" + std::to_string(version - 1) + ".0"
                                        : std::string(1 + rng() % 3, static_cast<char>(rng()));
          batch.atomic(key, type, param);
          const auto it = model.find(key);
          const std::optional<std::string> v = kv::apply_atomic(
              type, it == model.end() ? std::nullopt : std::optional<std::string_view>(it->second),
              param);
          if (v) {
            model[key] = *v;
          } else {
            model.erase(key);
          }
        } else if (kind < 14) {
          const std::string value = key + "@" + std::to_string(version) + "." + std::to_string(op);
          batch.set(key, value);
          model[key] = value;
        } else if (kind < 19) {
          batch.clear(key);
          model.erase(key);
        } else {
          const std::string end = key_of(rng() % 300);
          if (end < key) continue;
          batch.clear_range(key, end);
          model.erase(model.lower_bound(key), model.lower_bound(end));
        }
      }
      replay.add(version, batch.bytes());
    }
    replay.finish();
    replayed.publish(version);
    EXPECT_EQ(scan(replayed, version), model);
    for (std::uint64_t i = 0; i < 300; ++i) {
      const auto it = model.find(key_of(i));
      EXPECT_EQ(read(replayed, key_of(i), version),
                it == model.end() ? std::nullopt : std::optional<std::string>(it->second))
          << key_of(i);
    }
  }
}

// Random keys replayed in runs into a store that already holds many: the new keys go
// in by finger searches among the stored ones, and every level of the list stays in order
// (a seek finds each key, as the index does).
TEST(LogReplay, RunsOfRandomKeysMergeIntoTheStoredOnes) {
  MvccStore store;
  std::map<std::string, std::string> model;
  std::mt19937_64 rng(5);
  for (int i = 0; i < 20000; i += 2) {
    store.set(key_of(i), "old", 1);
    model[key_of(i)] = "old";
  }
  store.publish(1);
  LogReplay replay(store, 1 << 20, 4096);
  Version version = 1;
  for (int record = 0; record < 200; ++record) {
    durability::MutationBatchEncoder batch;
    ++version;
    for (int i = 0; i < 50; ++i) {
      const std::string key = key_of(rng() % 20000);
      batch.set(key, "v" + std::to_string(version));
      model[key] = "v" + std::to_string(version);
    }
    replay.add(version, batch.bytes());
  }
  replay.finish();
  store.publish(version);
  EXPECT_EQ(scan(store, version), model);
  for (const auto& [key, value] : model) {
    const MvccStore::Node* n = store.seek_ge(key);
    ASSERT_NE(n, nullptr);
    EXPECT_EQ(n->key(), key);
  }
  EXPECT_EQ(store.key_count(), model.size());
}

TEST(LogReplay, ARecordThatDoesNotDecodeIsCorruptDataNamingItsVersion) {
  MvccStore store;
  LogReplay replay(store, 1 << 20);
  durability::MutationBatchEncoder batch;
  batch.set("a", "1");
  replay.add(2, batch.bytes());
  std::string bad = batch.bytes();
  bad.back() = '\x09';
  bad.push_back('\x07');  // an unknown operation
  try {
    replay.add(3, bad);
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.error_code(), ErrorCode::corrupt_data);
    EXPECT_NE(e.detail().find("log record of version 3"), std::string::npos) << e.detail();
  }
  std::string truncated = batch.bytes();
  truncated.pop_back();  // the value runs past the end
  EXPECT_THROW(replay.add(3, truncated), Error);

  durability::MutationBatchEncoder atomic;
  atomic.atomic("a", MutationType::add, "\x01");
  std::string unknown_type = atomic.bytes();
  unknown_type[3] = '\x0e';  // set_versionstamped_key's code: never logged as an operation
  EXPECT_THROW(replay.add(3, unknown_type), Error);
  EXPECT_THROW(replay.add(3, atomic.bytes().substr(0, 3)), Error);  // ends before the type
  EXPECT_THROW(replay.add(3, atomic.bytes().substr(0, 5)), Error);  // the operand runs past
}

// The type byte is FoundationDB's code for the operation, and every atomic operation (but
// the versionstamps, logged by their results) decodes as itself.
TEST(MutationBatch, AtomicOperationsRoundTripWithFoundationDBsCodes) {
  EXPECT_EQ(durability::atomic_op_code(MutationType::add), 2);
  EXPECT_EQ(durability::atomic_op_code(MutationType::byte_max), 17);
  EXPECT_EQ(durability::atomic_op_code(MutationType::compare_and_clear), 20);
  EXPECT_EQ(durability::atomic_op_from_code(14), std::nullopt);
  EXPECT_EQ(durability::atomic_op_from_code(15), std::nullopt);
  const MutationType types[] = {MutationType::add,
                                MutationType::bit_and,
                                MutationType::bit_or,
                                MutationType::bit_xor,
                                MutationType::max,
                                MutationType::min,
                                MutationType::byte_min,
                                MutationType::byte_max,
                                MutationType::append_if_fits,
                                MutationType::compare_and_clear};
  durability::MutationBatchEncoder batch;
  for (MutationType type : types) batch.atomic("key", type, std::string(1, 'p'));
  std::vector<MutationType> decoded;
  durability::MutationSink sink;
  sink.atomic = [&](std::string_view key, MutationType type, std::string_view param) {
    EXPECT_EQ(key, "key");
    EXPECT_EQ(param, "p");
    decoded.push_back(type);
  };
  durability::decode_mutation_batch(batch.bytes(), "test", sink);
  EXPECT_EQ(decoded, std::vector<MutationType>(std::begin(types), std::end(types)));
}

}  // namespace
}  // namespace strata::engine
