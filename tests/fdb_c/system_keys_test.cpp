// The system keyspace (\xff up to \xff\xff) under ACCESS_SYSTEM_KEYS or READ_SYSTEM_KEYS:
// the shard map \xff/keyServers/ as one process has it, which is what FoundationDB's
// bindings read for locality.get_boundary_keys, and nothing else.
#include <string>

#include <gtest/gtest.h>

#include "fdb_c/fdb_c.h"
#include "fdb_c_test_util.hpp"

namespace fdbc_test {
namespace {

constexpr fdb_error_t kKeyOutsideLegalRange = 2004;
const std::string kShardMap("\xff/keyServers/", 13);
const std::string kFF("\xff", 1);

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
    const Range all = get_range(tr, kShardMap, kShardMap + kFF + kFF);
    ASSERT_EQ(all.error, 0);
    EXPECT_EQ(all.rows, (Rows{{kShardMap, ""}, {kShardMap + kFF, ""}}));
    // No boundary inside the user keys.
    EXPECT_TRUE(get_range(tr, kShardMap + "a", kShardMap + "z").rows.empty());
    const Range reversed = get_range(tr, kShardMap, kShardMap + kFF + kFF, {.reverse = true});
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
