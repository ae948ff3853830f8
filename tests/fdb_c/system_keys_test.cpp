// The system keyspace (\xff up to \xff\xff) under ACCESS_SYSTEM_KEYS or READ_SYSTEM_KEYS:
// the shard map \xff/keyServers/ as one process has it, which is what FoundationDB's
// bindings read for locality.get_boundary_keys, and nothing else; and explicit conflict
// ranges over it.
#include <string>

#include <gtest/gtest.h>

#include "fdb_c/fdb_c.h"
#include "fdb_c_test_util.hpp"

namespace fdbc_test {
namespace {

constexpr fdb_error_t kKeyOutsideLegalRange = 2004;
const std::string kShardMap("\xff/keyServers/", 13);
const std::string kFF("\xff", 1);
const std::string kSystemShards = kShardMap + kFF + kFF;  // past the system keys' shard

fdb_error_t add_conflict_range(const Tr& tr, const std::string& begin, const std::string& end,
                               FDBConflictRangeType type) {
  return fdb_transaction_add_conflict_range(tr.get(), u8(begin), len(begin), u8(end), len(end),
                                            type);
}

using SystemKeys = FdbTest;

TEST_F(SystemKeys, AreOutOfReachWithoutTheOption) {
  Tr tr = make_tr();
  EXPECT_EQ(get(tr, kShardMap).error, kKeyOutsideLegalRange);
  EXPECT_EQ(get_range(tr, kShardMap, kShardMap + kFF).error, kKeyOutsideLegalRange);
}

// How the bindings ask for the shard boundaries in [begin, end): a snapshot range read of
// \xff/keyServers/<begin> .. \xff/keyServers/<end>. One process holds one shard of user
// keys, from "", and the system keys from \xff.
TEST_F(SystemKeys, TheShardMapHasOneBoundaryForTheUserKeysAndOneForTheSystemKeys) {
  ASSERT_EQ(write(k("a"), "v"), 0);
  for (FDBTransactionOption option :
       {FDB_TR_OPTION_READ_SYSTEM_KEYS, FDB_TR_OPTION_ACCESS_SYSTEM_KEYS}) {
    Tr tr = make_tr();
    ASSERT_EQ(set_option(tr, option), 0);
    const Range user = get_range(tr, kShardMap, kShardMap + kFF, {.snapshot = true});
    ASSERT_EQ(user.error, 0);
    EXPECT_EQ(user.rows, (Rows{{kShardMap, ""}}));
    const Range all = get_range(tr, kShardMap, kSystemShards);
    ASSERT_EQ(all.error, 0);
    EXPECT_EQ(all.rows, (Rows{{kShardMap, ""}, {kShardMap + kFF, ""}}));
    // No boundary inside the user keys.
    EXPECT_TRUE(get_range(tr, kShardMap + "a", kShardMap + "z").rows.empty());
    const Range reversed = get_range(tr, kShardMap, kSystemShards, {.reverse = true});
    EXPECT_EQ(reversed.rows, (Rows{{kShardMap + kFF, ""}, {kShardMap, ""}}));
  }
}

TEST_F(SystemKeys, PointReadsAndSelectorsSeeTheShardMapAndNoOtherSystemKey) {
  Tr tr = make_tr();
  ASSERT_EQ(set_option(tr, FDB_TR_OPTION_READ_SYSTEM_KEYS), 0);
  const Value boundary = get(tr, kShardMap);
  ASSERT_EQ(boundary.error, 0);
  EXPECT_TRUE(boundary.present);
  EXPECT_EQ(boundary.value, "");
  const Value other = get(tr, kFF + "/conf/storage_engine");
  ASSERT_EQ(other.error, 0);
  EXPECT_FALSE(other.present);
  EXPECT_EQ(get_key(tr, first_greater_than(kShardMap)).key, kShardMap + kFF);
  EXPECT_EQ(get_key(tr, last_less_than(kShardMap + "m")).key, kShardMap);
  // Past the last row: the end of the system keyspace.
  EXPECT_EQ(get_key(tr, first_greater_than(kShardMap + kFF)).key, std::string("\xff\xff", 2));
  // The end of the system keyspace is a selector's largest key (the bindings' locality
  // test reads last_less_than of it): it resolves among the system keys.
  const std::string end("\xff\xff", 2);
  EXPECT_EQ(get_key(tr, last_less_than(end)).key, kShardMap + kFF);
  EXPECT_EQ(get_key(tr, last_less_or_equal(end)).key, kShardMap + kFF);
  EXPECT_EQ(get_key(tr, first_greater_or_equal(end)).key, end);
}

TEST_F(SystemKeys, StayReadOnly) {
  Tr tr = make_tr();
  ASSERT_EQ(set_option(tr, FDB_TR_OPTION_ACCESS_SYSTEM_KEYS), 0);
  set(tr, kShardMap + "x", "v");
  EXPECT_EQ(commit(tr), kKeyOutsideLegalRange);
}

// Conflict ranges in the system keyspace, as FoundationDB's client takes them
// (fdbclient/ReadYourWrites.actor.cpp: ReadYourWritesTransaction::addReadConflictRange and
// addWriteConflictRange refuse an end beyond getMaxReadKey and getMaxWriteKey, which are
// \xff\xff under READ_SYSTEM_KEYS or ACCESS_SYSTEM_KEYS for reads and under
// ACCESS_SYSTEM_KEYS alone for writes, and \xff otherwise). They conflict as any others.
TEST_F(SystemKeys, ConflictRangesOnSystemKeysConflictAsAnyOthers) {
  const std::string sys = kFF + k("");  // this test's own system keys
  const std::string nul(1, '\0');
  struct Case {
    std::string read_begin, read_end, write_begin, write_end;
    fdb_error_t reader_commit;
  };
  const Case cases[] = {
      {sys + "a", sys + "c", sys + "b", sys + "b" + nul, 1020},
      {sys + "a", sys + "c", sys + "c", sys + "d", 0},
      {sys + "b", sys + "b" + nul, sys + "a", sys + "c", 1020},  // one key: the point path
      {sys + "b", sys + "b" + nul, sys + "b" + nul, sys + "c", 0},
      {k("a"), sys + "b", sys + "a", sys + "a" + nul, 1020},  // from the user keys
      {sys + "a", std::string("\xff\xff", 2), sys + "z", std::string("\xff\xff", 2), 1020},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(hex(c.read_begin) + " .. " + hex(c.read_end) + " against " + hex(c.write_begin) +
                 " .. " + hex(c.write_end));
    Tr reader = make_tr();
    ASSERT_EQ(set_option(reader, FDB_TR_OPTION_READ_SYSTEM_KEYS), 0);
    ASSERT_GT(read_version(reader), 0);
    ASSERT_EQ(add_conflict_range(reader, c.read_begin, c.read_end, FDB_CONFLICT_RANGE_TYPE_READ),
              0);
    set(reader, k("z"), "x");

    Tr writer = make_tr();
    ASSERT_EQ(set_option(writer, FDB_TR_OPTION_ACCESS_SYSTEM_KEYS), 0);
    ASSERT_EQ(add_conflict_range(writer, c.write_begin, c.write_end, FDB_CONFLICT_RANGE_TYPE_WRITE),
              0);
    ASSERT_EQ(commit(writer), 0);
    EXPECT_GT(committed_version(writer), 0);  // a write conflict range alone is a write
    EXPECT_EQ(commit(reader), c.reader_commit);
  }
}

// Which option opens which kind of range, up to \xff\xff and not beyond (the same
// functions). Refused ends fail the commit with key_outside_legal_range, deferred.
TEST_F(SystemKeys, ReadSystemKeysOpensReadConflictsAndAccessSystemKeysBoth) {
  const std::string sys = kFF + k("");
  const std::string end("\xff\xff", 2);
  const std::string past_end = end + std::string(1, '\0');
  constexpr auto kNone = static_cast<FDBTransactionOption>(0);
  struct Case {
    FDBTransactionOption option;
    FDBConflictRangeType type;
    std::string begin, end;
    fdb_error_t commit;
  };
  const Case cases[] = {
      {kNone, FDB_CONFLICT_RANGE_TYPE_READ, sys + "a", sys + "b", kKeyOutsideLegalRange},
      {kNone, FDB_CONFLICT_RANGE_TYPE_WRITE, sys + "a", sys + "b", kKeyOutsideLegalRange},
      {FDB_TR_OPTION_READ_SYSTEM_KEYS, FDB_CONFLICT_RANGE_TYPE_READ, kFF, end, 0},
      {FDB_TR_OPTION_READ_SYSTEM_KEYS, FDB_CONFLICT_RANGE_TYPE_WRITE, sys + "a", sys + "b",
       kKeyOutsideLegalRange},
      {FDB_TR_OPTION_ACCESS_SYSTEM_KEYS, FDB_CONFLICT_RANGE_TYPE_READ, kFF, end, 0},
      {FDB_TR_OPTION_ACCESS_SYSTEM_KEYS, FDB_CONFLICT_RANGE_TYPE_WRITE, sys + "a", end, 0},
      {FDB_TR_OPTION_READ_SYSTEM_KEYS, FDB_CONFLICT_RANGE_TYPE_READ, sys + "a", past_end,
       kKeyOutsideLegalRange},
      {FDB_TR_OPTION_READ_SYSTEM_KEYS, FDB_CONFLICT_RANGE_TYPE_READ, end, past_end,
       kKeyOutsideLegalRange},
      {FDB_TR_OPTION_ACCESS_SYSTEM_KEYS, FDB_CONFLICT_RANGE_TYPE_WRITE, end, past_end,
       kKeyOutsideLegalRange},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(std::to_string(c.option) + " " + std::to_string(c.type) + " " + hex(c.begin) +
                 " .. " + hex(c.end));
    Tr tr = make_tr();
    if (c.option != kNone) {
      ASSERT_EQ(set_option(tr, c.option), 0);
    }
    EXPECT_EQ(add_conflict_range(tr, c.begin, c.end, c.type), 0);
    EXPECT_EQ(commit(tr), c.commit);
  }
}

// In the system keyspace a range's ends are cut at FoundationDB's SYSTEM_KEY_SIZE_LIMIT
// (30,000 bytes) rather than at the user keys' 10,008 (fdbclient/NativeAPI.actor.cpp:
// getMaxKeySize, getMaxWriteKeySize), and a range left empty is dropped.
TEST_F(SystemKeys, SystemKeyConflictRangeEndsAreCutAtTheSystemKeyLimit) {
  const std::string sys = kFF + k("");
  const auto long_key = [&](std::size_t size, char last) {
    std::string key = sys + std::string(size - sys.size() - 1, 'k');
    key.push_back(last);
    return key;
  };
  struct Case {
    std::string begin, end;
    bool kept;
  };
  const Case cases[] = {
      {long_key(20'000, 'a'), long_key(20'000, 'b'), true},               // over 10,008 bytes: kept
      {long_key(30'000, 'a'), long_key(30'000, 'b'), true},               // the limit itself
      {long_key(30'001, 'a') + "x", long_key(30'001, 'a') + "y", false},  // alike up to 30,001
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(std::to_string(c.begin.size()) + " bytes");
    Tr tr = make_tr();
    ASSERT_EQ(set_option(tr, FDB_TR_OPTION_ACCESS_SYSTEM_KEYS), 0);
    ASSERT_EQ(add_conflict_range(tr, c.begin, c.end, FDB_CONFLICT_RANGE_TYPE_WRITE), 0);
    ASSERT_EQ(commit(tr), 0);
    if (c.kept) {
      EXPECT_GT(committed_version(tr), 0);
    } else {
      EXPECT_EQ(committed_version(tr), -1);  // nothing left to write: read-only
    }
  }
}

// \xff/metadataVersion, as FoundationDB's client has it: read, watched and added as a read
// conflict without any option; written only by SET_VERSIONSTAMPED_VALUE with fourteen zero
// bytes, which leaves the commit's versionstamp in it. (The key is process-wide: this test
// assumes nothing of its value before it.)
TEST_F(SystemKeys, TheMetadataVersionKeyIsReadWithoutTheOptionAndWrittenOnlyByAStamp) {
  const std::string key("\xff/metadataVersion");
  const std::string operand(14, '\0');

  Tr before = make_tr();
  const Value old = get(before, key);
  ASSERT_EQ(old.error, 0);
  Future fired(fdb_transaction_watch(before.get(), u8(key), len(key)));
  ASSERT_EQ(commit(before), 0);

  Tr bump = make_tr();
  atomic(bump, key, operand, FDB_MUTATION_TYPE_SET_VERSIONSTAMPED_VALUE);
  EXPECT_EQ(get(bump, key).error, 1036);  // accessed_unreadable in its own transaction
  Future stamp_future(fdb_transaction_get_versionstamp(bump.get()));
  ASSERT_EQ(commit(bump), 0);
  ASSERT_TRUE(wait_ready_for(stamp_future));
  const Key stamp = key_of(stamp_future.get());
  ASSERT_EQ(stamp.error, 0);
  ASSERT_TRUE(wait_ready_for(fired));
  EXPECT_EQ(fdb_future_get_error(fired.get()), 0);

  for (bool with_option : {false, true}) {
    Tr tr = make_tr();
    if (with_option) {
      ASSERT_EQ(set_option(tr, FDB_TR_OPTION_READ_SYSTEM_KEYS), 0);
    }
    const Value now = get(tr, key);
    ASSERT_EQ(now.error, 0);
    ASSERT_TRUE(now.present);
    EXPECT_EQ(hex(now.value), hex(stamp.key));
  }

  // A read conflict on exactly the key needs no option either.
  const std::string key_end = key + std::string(1, '\0');
  Tr reader = make_tr();
  (void)read_version(reader);  // the conflict is checked from here
  EXPECT_EQ(fdb_transaction_add_conflict_range(reader.get(), u8(key), len(key), u8(key_end),
                                               len(key_end), FDB_CONFLICT_RANGE_TYPE_READ),
            0);
  set(reader, k("cached"), "x");
  Tr other = make_tr();
  atomic(other, key, operand, FDB_MUTATION_TYPE_SET_VERSIONSTAMPED_VALUE);
  ASSERT_EQ(commit(other), 0);
  EXPECT_EQ(commit(reader), 1020);

  Tr plain_set = make_tr();
  set(plain_set, key, "x");
  EXPECT_EQ(commit(plain_set), 2000);  // client_invalid_operation, as FoundationDB's
  Tr clear_it = make_tr();
  clear(clear_it, key);
  EXPECT_EQ(commit(clear_it), kKeyOutsideLegalRange);
}

}  // namespace
}  // namespace fdbc_test
